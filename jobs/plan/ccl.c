/* Connected components a row at a time; see ccl.h. Union-find with path halving and union by the
 * smaller label, so a set's root is its earliest run's label and components follow raster order.
 */
#include "jobs/plan/ccl.h"

#include <stdlib.h>
#include <string.h>

struct tb_ccl_stream_t {
    int64_t w;
    bool wrap_x;
    uint8_t select[256];
    tb_ccl_records_t rec; /* rec_bytes 0: none */
    int64_t *parent;      /* per label */
    uint8_t *records;     /* rec_bytes per label */
    int64_t n_labels, cap_labels;
    tb_ccl_run_t *prev, *cur; /* the previous row's runs and the last row's */
    int64_t n_prev, n_cur, cap_runs;
    int64_t rows;
};

tb_ccl_stream_t *tb_ccl_stream_new(int64_t w, bool wrap_x, const uint8_t select[256],
                                   const tb_ccl_records_t *records, tb_err_t *err)
{
    if (w <= 0 || w > INT32_MAX) {
        tb_err_set(err, TB_E_INVALID, "components: rows of %lld cells", (long long)w);
        return NULL;
    }
    tb_ccl_stream_t *s = tb_calloc(1, sizeof *s, "component stream", err);
    if (!s)
        return NULL;
    s->w = w;
    s->wrap_x = wrap_x;
    memcpy(s->select, select, 256);
    if (records)
        s->rec = *records;
    /* a row holds at most (w + 1) / 2 runs */
    s->cap_runs = (w + 1) / 2 + 1;
    s->prev = tb_malloc(sizeof *s->prev * (size_t)s->cap_runs, "component runs", err);
    s->cur =
        s->prev ? tb_malloc(sizeof *s->cur * (size_t)s->cap_runs, "component runs", err) : NULL;
    if (!s->cur)
        tb_ccl_stream_destroy(&s);
    return s;
}

void tb_ccl_stream_destroy(tb_ccl_stream_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_ccl_stream_t *s = *self_p;
    free(s->parent);
    free(s->records);
    free(s->prev);
    free(s->cur);
    free(s);
    *self_p = NULL;
}

int64_t tb_ccl_stream_find(tb_ccl_stream_t *s, int64_t a)
{
    int64_t *parent = s->parent;
    while (parent[a] != a) {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    return a;
}

void *tb_ccl_stream_record(tb_ccl_stream_t *s, int64_t root)
{
    return s->rec.rec_bytes ? s->records + (size_t)root * s->rec.rec_bytes : NULL;
}

int64_t tb_ccl_stream_labels(const tb_ccl_stream_t *s)
{
    return s->n_labels;
}

const tb_ccl_run_t *tb_ccl_stream_runs(const tb_ccl_stream_t *s, int64_t *n)
{
    *n = s->n_cur;
    return s->cur;
}

/* Opens a label (its record zeroed); -1 when memory runs out. */
static int64_t s_open(tb_ccl_stream_t *s)
{
    if (s->n_labels == s->cap_labels) {
        int64_t cap = s->cap_labels ? s->cap_labels * 2 : 1024;
        int64_t *p = realloc(s->parent, sizeof *p * (size_t)cap);
        if (!p)
            return -1;
        s->parent = p;
        if (s->rec.rec_bytes) {
            uint8_t *r = realloc(s->records, s->rec.rec_bytes * (size_t)cap);
            if (!r)
                return -1;
            s->records = r;
        }
        s->cap_labels = cap;
    }
    int64_t l = s->n_labels++;
    s->parent[l] = l;
    if (s->rec.rec_bytes)
        memset(s->records + (size_t)l * s->rec.rec_bytes, 0, s->rec.rec_bytes);
    return l;
}

static void s_union(tb_ccl_stream_t *s, int64_t a, int64_t b)
{
    a = tb_ccl_stream_find(s, a);
    b = tb_ccl_stream_find(s, b);
    if (a == b)
        return;
    int64_t into = a < b ? a : b, from = a < b ? b : a;
    s->parent[from] = into;
    if (s->rec.merge)
        s->rec.merge(s->rec.ctx, tb_ccl_stream_record(s, into), tb_ccl_stream_record(s, from));
}

/* The first column at or after i whose selection is not `want`. Paintings are long stretches of
 * one value, so eight equal bytes are stepped over at once. */
static inline int64_t s_span_end(const uint8_t *row, int64_t w, int64_t i, const uint8_t *select,
                                 uint8_t want)
{
    while (i < w && (select[row[i]] != 0) == want) {
        if (i + 8 <= w) {
            uint64_t v;
            memcpy(&v, row + i, 8);
            if (v == row[i] * 0x0101010101010101ull) {
                i += 8;
                continue;
            }
        }
        i++;
    }
    return i;
}

/* Joins run b (its label just set) to the set of prev run a. */
static void s_join(tb_ccl_stream_t *s, int64_t *label, int64_t a)
{
    int64_t root = tb_ccl_stream_find(s, s->prev[a].label);
    if (*label < 0) {
        *label = root;
        return;
    }
    s_union(s, *label, root);
}

int tb_ccl_stream_row(tb_ccl_stream_t *s, const uint8_t *values, tb_err_t *err)
{
    tb_ccl_run_t *t = s->prev;
    s->prev = s->cur;
    s->n_prev = s->n_cur;
    s->cur = t;
    s->n_cur = 0;
    const int64_t w = s->w, last = w - 1;
    for (int64_t i = 0; i < w;) {
        i = s_span_end(values, w, i, s->select, 0);
        if (i >= w)
            break;
        int64_t start = i;
        i = s_span_end(values, w, i, s->select, 1);
        s->cur[s->n_cur++] = (tb_ccl_run_t){(int32_t)start, (int32_t)(i - 1), -1};
    }
    const tb_ccl_run_t *p = s->prev;
    const int64_t np = s->n_prev;
    int64_t a = 0; /* the first previous run that does not end left of the current one */
    for (int64_t k = 0; k < s->n_cur; k++) {
        tb_ccl_run_t *b = &s->cur[k];
        /* The previous runs this one touches: those overlapping columns x0 - 1 .. x1 + 1, and
         * across the seam the last (first) run when this one starts at 0 (ends at w - 1). */
        int64_t touch[2] = {-1, -1}, n_touch = 0;
        while (a < np && p[a].x1 + 1 < b->x0)
            a++;
        int64_t first_in = a;
        int64_t end_in = a;
        while (end_in < np && p[end_in].x0 <= b->x1 + 1)
            end_in++;
        if (s->wrap_x && np > 0) {
            if (b->x0 == 0 && p[np - 1].x1 == last)
                touch[n_touch++] = np - 1;
            if (b->x1 == last && p[0].x0 == 0)
                touch[n_touch++] = 0;
        }
        /* The run joins the set of its first contact, or opens a label; it is added to that
         * set's record before the set meets the run's other contacts (ccl.h). */
        int64_t label = -1;
        if (end_in > first_in)
            label = tb_ccl_stream_find(s, p[first_in].label);
        else if (n_touch)
            label = tb_ccl_stream_find(s, p[touch[0]].label);
        else if ((label = s_open(s)) < 0)
            return tb_err_set(err, TB_E_NOMEM, "components: out of memory for %lld labels",
                              (long long)s->n_labels + 1);
        if (s->rec.add)
            s->rec.add(s->rec.ctx, tb_ccl_stream_record(s, label), s->rows, b->x0, b->x1);
        for (int64_t q = first_in; q < end_in; q++)
            s_join(s, &label, q);
        for (int64_t q = 0; q < n_touch; q++)
            s_join(s, &label, touch[q]);
        b->label = label;
    }
    /* the same row across the seam: a run ending at w - 1 touches one starting at 0 */
    if (s->wrap_x && s->n_cur >= 2 && s->cur[0].x0 == 0 && s->cur[s->n_cur - 1].x1 == last)
        s_union(s, s->cur[0].label, s->cur[s->n_cur - 1].label);
    s->rows++;
    return 0;
}

int tb_ccl_stream_resolve(tb_ccl_stream_t *s, int32_t **comp_out, int64_t *n_comps, tb_err_t *err)
{
    *comp_out = NULL;
    *n_comps = 0;
    int32_t *comp =
        tb_malloc(sizeof *comp * (size_t)(s->n_labels ? s->n_labels : 1), "component ids", err);
    if (!comp)
        return -1;
    int64_t n = 0;
    for (int64_t l = 0; l < s->n_labels; l++) {
        int64_t root = tb_ccl_stream_find(s, l);
        /* roots precede their sets: union by the smaller label */
        comp[l] = root == l ? (int32_t)n++ : comp[root];
    }
    if (n > INT32_MAX) {
        free(comp);
        return tb_err_set(err, TB_E_INVALID, "components: %lld components", (long long)n);
    }
    *comp_out = comp;
    *n_comps = n;
    return 0;
}

int64_t tb_ccl_run_at(const tb_ccl_run_t *runs, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (runs[mid].x1 < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && runs[lo].x0 <= x ? lo : -1;
}
