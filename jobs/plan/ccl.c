/* Run-based connected components with X wrap; see ccl.h. Union-find with path halving and union by
 * smaller index, so the root of a set is its earliest run and component ids follow raster order. */
#include "jobs/plan/ccl.h"

#include <stdlib.h>
#include <string.h>

static int64_t s_find(int64_t *parent, int64_t a)
{
    while (parent[a] != a) {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    return a;
}

static void s_union(int64_t *parent, int64_t a, int64_t b)
{
    a = s_find(parent, a);
    b = s_find(parent, b);
    if (a < b)
        parent[b] = a;
    else if (b < a)
        parent[a] = b;
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

/* Appends the runs of one row; returns -1 when memory runs out. */
static int s_row_runs(const uint8_t *row, int64_t w, int32_t y, const uint8_t *select, tb_ccl_t *c,
                      int64_t *cap)
{
    int64_t i = 0;
    while (i < w) {
        i = s_span_end(row, w, i, select, 0);
        if (i >= w)
            break;
        int64_t start = i;
        i = s_span_end(row, w, i, select, 1);
        if (c->n_runs == *cap) {
            int64_t ncap = *cap ? *cap * 2 : 4096;
            tb_run_t *p = realloc(c->runs, sizeof *p * (size_t)ncap);
            if (!p)
                return -1;
            c->runs = p;
            *cap = ncap;
        }
        c->runs[c->n_runs++] = (tb_run_t){y, (int32_t)start, (int32_t)(i - 1), -1};
    }
    return 0;
}

/* Joins the runs of two consecutive rows that touch 8-connectedly, and across the seam. */
static void s_join_rows(tb_ccl_t *c, int64_t *parent, int64_t a0, int64_t a1, int64_t b0,
                        int64_t b1)
{
    const tb_run_t *r = c->runs;
    int64_t a = a0, b = b0;
    while (a < a1 && b < b1) {
        if (r[a].x0 <= r[b].x1 + 1 && r[b].x0 <= r[a].x1 + 1)
            s_union(parent, a, b);
        /* advance whichever run ends first */
        if (r[a].x1 < r[b].x1)
            a++;
        else
            b++;
    }
    if (!c->wrap_x || a0 == a1 || b0 == b1)
        return;
    int64_t last_w = c->w - 1;
    if (r[a0].x0 == 0 && r[b1 - 1].x1 == last_w)
        s_union(parent, a0, b1 - 1);
    if (r[b0].x0 == 0 && r[a1 - 1].x1 == last_w)
        s_union(parent, b0, a1 - 1);
}

int tb_ccl_label(const uint8_t *values, int64_t w, int64_t h, bool wrap_x,
                 const uint8_t select[256], tb_ccl_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (w <= 0 || h <= 0 || w > INT32_MAX || h > INT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "components: grid of %lld x %lld cells", (long long)w,
                          (long long)h);
    out->w = w;
    out->h = h;
    out->wrap_x = wrap_x;
    out->row_start = tb_malloc(sizeof *out->row_start * (size_t)(h + 1), "run rows", err);
    if (!out->row_start)
        return -1;
    int64_t cap = 0;
    for (int64_t y = 0; y < h; y++) {
        out->row_start[y] = out->n_runs;
        if (s_row_runs(values + (size_t)y * (size_t)w, w, (int32_t)y, select, out, &cap) != 0)
            goto nomem;
    }
    out->row_start[h] = out->n_runs;
    int64_t n = out->n_runs;
    int64_t *parent = malloc(sizeof *parent * (size_t)(n ? n : 1));
    if (!parent)
        goto nomem;
    for (int64_t k = 0; k < n; k++)
        parent[k] = k;
    for (int64_t y = 0; y < h; y++) {
        int64_t b0 = out->row_start[y], b1 = out->row_start[y + 1];
        /* same row across the seam: a run ending at w - 1 touches one starting at 0 */
        if (wrap_x && b1 - b0 >= 2 && out->runs[b0].x0 == 0 && out->runs[b1 - 1].x1 == w - 1)
            s_union(parent, b0, b1 - 1);
        if (y > 0)
            s_join_rows(out, parent, out->row_start[y - 1], b0, b0, b1);
    }
    /* Number the roots in order of first run; the root of a set is its earliest run. */
    int64_t comps = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t root = s_find(parent, k);
        if (root == k)
            out->runs[k].comp = (int32_t)comps++;
        else
            out->runs[k].comp = out->runs[root].comp;
    }
    free(parent);
    out->n_components = comps;
    out->comp_start = calloc((size_t)comps + 1, sizeof *out->comp_start);
    out->comp_runs = malloc(sizeof *out->comp_runs * (size_t)(n ? n : 1));
    if (!out->comp_start || !out->comp_runs)
        goto nomem;
    for (int64_t k = 0; k < n; k++)
        out->comp_start[out->runs[k].comp + 1]++;
    for (int64_t c = 0; c < comps; c++)
        out->comp_start[c + 1] += out->comp_start[c];
    int64_t *fill = malloc(sizeof *fill * (size_t)(comps ? comps : 1));
    if (!fill)
        goto nomem;
    memcpy(fill, out->comp_start, sizeof *fill * (size_t)comps);
    for (int64_t k = 0; k < n; k++)
        out->comp_runs[fill[out->runs[k].comp]++] = k;
    free(fill);
    return 0;
nomem:
    tb_ccl_free(out);
    return tb_err_set(err, TB_E_NOMEM, "components: out of memory labelling %lld x %lld cells",
                      (long long)w, (long long)h);
}

void tb_ccl_free(tb_ccl_t *ccl)
{
    if (!ccl)
        return;
    free(ccl->runs);
    free(ccl->row_start);
    free(ccl->comp_start);
    free(ccl->comp_runs);
    memset(ccl, 0, sizeof *ccl);
}

int64_t tb_ccl_find(const tb_ccl_t *ccl, int64_t x, int64_t y)
{
    if (y < 0 || y >= ccl->h)
        return -1;
    int64_t lo = ccl->row_start[y], hi = ccl->row_start[y + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ccl->runs[mid].x1 < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ccl->row_start[y + 1] && ccl->runs[lo].x0 <= x)
        return lo;
    return -1;
}
