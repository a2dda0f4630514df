/* Painting classification a row at a time; see classify.h.
 *
 * The lookup table holds one byte per 24-bit colour: 0 not yet decided, 1 + class for a match, 0xff
 * for unmatched. calloc hands back zero pages that cost nothing until touched, and a painting has
 * few distinct colours, so the table costs a handful of pages. A one-entry cache in front of it
 * catches the runs of identical pixels a painting is made of.
 *
 * An unmatched pixel is recorded with what its eight neighbours matched (a class, or another
 * recorded pixel), so the fill needs nothing but the records: a pixel's neighbours are known once
 * the row below it is matched, and the matcher keeps three rows of matches for that.
 */
#include "jobs/plan/classify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"

#define S_LUT_UNMATCHED 0xffu
#define S_HIST_MAX_LOG2 20       /* distinct unmatched colours tracked exactly */
#define S_NB_ABSENT INT64_MIN    /* a neighbour past a Y edge */
#define S_NB_CLASS(c) (-1 - (c)) /* a matched neighbour of class c */
#define S_NB_IS_CLASS(v) ((v) < 0 && (v) != S_NB_ABSENT)

/* Nearest legend colour within the tolerance, or TB_CLASS_NONE. Ties go to the lower index. */
static uint8_t s_nearest(const tb_legend_t *legend, double tol2, uint8_t r, uint8_t g, uint8_t b)
{
    int best = -1;
    double best_d2 = 0;
    for (int c = 0; c < legend->n_classes; c++) {
        const uint8_t *k = legend->classes[c].rgb;
        double dr = (double)r - k[0], dg = (double)g - k[1], db = (double)b - k[2];
        double d2 = dr * dr + dg * dg + db * db;
        if (best < 0 || d2 < best_d2) {
            best = c;
            best_d2 = d2;
        }
    }
    return (best >= 0 && best_d2 <= tol2) ? (uint8_t)best : TB_CLASS_NONE;
}

/* ---- histogram of unmatched colours (open addressing on the packed colour) ---- */

typedef struct {
    uint32_t key; /* colour + 1; 0 is empty */
    int64_t count;
    int64_t first; /* pixel index of the first occurrence */
} s_slot_t;

typedef struct {
    s_slot_t *slots;
    size_t cap, used;
    int64_t overflow_colours; /* colours seen after the table was full */
} s_hist_t;

static uint64_t s_mix(uint32_t v)
{
    uint64_t x = v * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
}

static int s_hist_grow(s_hist_t *h)
{
    size_t cap = h->cap ? h->cap * 2 : 1024;
    s_slot_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < h->cap; i++) {
        if (!h->slots[i].key)
            continue;
        size_t k = s_mix(h->slots[i].key) & (cap - 1);
        while (slots[k].key)
            k = (k + 1) & (cap - 1);
        slots[k] = h->slots[i];
    }
    free(h->slots);
    h->slots = slots;
    h->cap = cap;
    return 0;
}

/* Counts one unmatched pixel; returns -1 when memory runs out. */
static int s_hist_add(s_hist_t *h, uint32_t colour, int64_t index)
{
    if (h->used * 2 >= h->cap && h->cap < ((size_t)1 << (S_HIST_MAX_LOG2 + 1)))
        if (s_hist_grow(h) != 0)
            return -1;
    uint32_t key = colour + 1;
    size_t k = s_mix(key) & (h->cap - 1);
    while (h->slots[k].key && h->slots[k].key != key)
        k = (k + 1) & (h->cap - 1);
    if (!h->slots[k].key) {
        if (h->used >= ((size_t)1 << S_HIST_MAX_LOG2)) {
            h->overflow_colours++; /* counted as a colour, not tracked */
            return 0;
        }
        h->slots[k] = (s_slot_t){key, 0, index};
        h->used++;
    }
    h->slots[k].count++;
    return 0;
}

/* Most pixels first, then the earlier first occurrence: a total order, so the top list is fixed. */
static bool s_before(const s_slot_t *a, const s_slot_t *b)
{
    return a->count != b->count ? a->count > b->count : a->first < b->first;
}

static void s_hist_top(s_hist_t *h, int64_t w, tb_classify_report_t *rep)
{
    rep->n_top = 0;
    rep->unmatched_colours = (int64_t)h->used + h->overflow_colours;
    /* Pick the best remaining slot five times; a picked slot is marked by a zero count. */
    for (int t = 0; t < TB_CLASSIFY_TOP_COLOURS; t++) {
        s_slot_t *best = NULL;
        for (size_t i = 0; i < h->cap; i++) {
            s_slot_t *s = &h->slots[i];
            if (s->key && s->count > 0 && (!best || s_before(s, best)))
                best = s;
        }
        if (!best)
            break;
        uint32_t c = best->key - 1;
        rep->top[rep->n_top++] =
            (tb_classify_colour_t){{(uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c},
                                   best->count,
                                   best->first % w,
                                   best->first / w};
        best->count = 0;
    }
}

/* ---- the matcher ---- */

typedef struct {
    int64_t index; /* pixel index in the painting */
    int64_t nb[8]; /* a recorded pixel, S_NB_CLASS(c) or S_NB_ABSENT, in tb_nb_dx/dy order */
    uint8_t value; /* the fill's class; TB_CLASS_NONE until filled */
} s_entry_t;

struct tb_classify_t {
    tb_legend_t legend;
    double tol2;
    int64_t w, h;
    uint8_t *lut;
    uint32_t last_colour;
    uint8_t last_class;
    int64_t rows_in, unmatched;
    s_hist_t hist;
    int64_t cap; /* most unmatched pixels the legend allows: recorded up to this */
    s_entry_t *entries;
    int64_t n_entries, cap_entries;
    int64_t row_first[3]; /* first entry of each of the last three rows (ring by row) */
    uint8_t *match[3];    /* the last three rows' matches */
    int64_t *entry_at[3]; /* entry of each of their unmatched pixels, -1 elsewhere */
    bool finished;
    int fill_rounds;
};

tb_classify_t *tb_classify_new(const tb_legend_t *legend, int64_t w, int64_t h, tb_err_t *err)
{
    tb_classify_t *c = tb_calloc(1, sizeof *c, "classifier", err);
    if (!c)
        return NULL;
    c->legend = *legend;
    c->tol2 = legend->tolerance * legend->tolerance;
    c->w = w;
    c->h = h;
    c->last_colour = 0xffffffffu;
    c->lut = tb_calloc((size_t)1 << 24, 1, "the colour lookup table", err);
    if (!c->lut)
        goto fail;
    for (int k = 0; k < 3; k++) {
        c->match[k] = tb_malloc((size_t)w, "classifier rows", err);
        c->entry_at[k] = tb_malloc(sizeof *c->entry_at[k] * (size_t)w, "classifier rows", err);
        if (!c->match[k] || !c->entry_at[k])
            goto fail;
    }
    /* The refusal is unmatched / pixels > max_unmatched_fraction: the largest count that passes. */
    const double n = (double)w * (double)h, f = legend->max_unmatched_fraction;
    int64_t cap = (int64_t)(f * n);
    while (cap > 0 && (double)cap / n > f)
        cap--;
    while ((double)(cap + 1) / n <= f && cap + 1 <= w * h)
        cap++;
    c->cap = cap;
    return c;
fail:
    tb_classify_destroy(&c);
    return NULL;
}

void tb_classify_destroy(tb_classify_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_classify_t *c = *self_p;
    free(c->lut);
    free(c->hist.slots);
    free(c->entries);
    for (int k = 0; k < 3; k++) {
        free(c->match[k]);
        free(c->entry_at[k]);
    }
    free(c);
    *self_p = NULL;
}

int64_t tb_classify_recorded(const tb_classify_t *c)
{
    return c->n_entries;
}

/* The neighbours of the recorded pixels of row y, whose rows y - 1 .. y + 1 are matched (row
 * y + 1 absent at the bottom edge). X wraps. */
static void s_link_row(tb_classify_t *c, int64_t y)
{
    if (y < 0 || c->unmatched > c->cap)
        return; /* refused anyway: nothing more is recorded */
    int64_t end = y + 1 < c->rows_in ? c->row_first[(y + 1) % 3] : c->n_entries;
    for (int64_t e = c->row_first[y % 3]; e < end; e++) {
        s_entry_t *en = &c->entries[e];
        int64_t x = en->index - y * c->w;
        for (int k = 0; k < 8; k++) {
            int64_t yy = y + tb_nb_dy[k];
            if (yy < 0 || yy >= c->h) {
                en->nb[k] = S_NB_ABSENT;
                continue;
            }
            int64_t xx = tb_wrap(x + tb_nb_dx[k], c->w);
            uint8_t v = c->match[yy % 3][xx];
            en->nb[k] = v == TB_CLASS_NONE ? c->entry_at[yy % 3][xx] : S_NB_CLASS((int64_t)v);
        }
    }
}

int tb_classify_row(tb_classify_t *c, const uint8_t *rgb, uint8_t *classes, tb_err_t *err)
{
    if (c->rows_in >= c->h || c->finished)
        return tb_err_set(err, TB_E_INTERNAL, "classify: row %lld of %lld", (long long)c->rows_in,
                          (long long)c->h);
    const int64_t y = c->rows_in, w = c->w;
    uint8_t *m = c->match[y % 3];
    int64_t *at = c->entry_at[y % 3];
    c->row_first[y % 3] = c->n_entries;
    const uint8_t *px = rgb;
    for (int64_t i = 0; i < w; i++, px += 3) {
        uint32_t colour = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
        if (colour != c->last_colour) {
            uint8_t v = c->lut[colour];
            if (!v) {
                uint8_t k = s_nearest(&c->legend, c->tol2, px[0], px[1], px[2]);
                v = k == TB_CLASS_NONE ? S_LUT_UNMATCHED : (uint8_t)(k + 1);
                c->lut[colour] = v;
            }
            c->last_colour = colour;
            c->last_class = v == S_LUT_UNMATCHED ? TB_CLASS_NONE : (uint8_t)(v - 1);
        }
        classes[i] = m[i] = c->last_class;
        at[i] = -1;
        if (c->last_class != TB_CLASS_NONE)
            continue;
        int64_t index = y * w + i;
        if (s_hist_add(&c->hist, colour, index) != 0)
            return tb_err_set(err, TB_E_NOMEM,
                              "classify: out of memory counting unmatched colours");
        if (++c->unmatched > c->cap)
            continue;
        if (c->n_entries == c->cap_entries) {
            int64_t cap = c->cap_entries ? c->cap_entries * 2 : 1024;
            s_entry_t *e = realloc(c->entries, sizeof *e * (size_t)cap);
            if (!e)
                return tb_err_set(err, TB_E_NOMEM,
                                  "classify: out of memory for %lld unmatched "
                                  "pixels",
                                  (long long)cap);
            c->entries = e;
            c->cap_entries = cap;
        }
        at[i] = c->n_entries;
        c->entries[c->n_entries++] = (s_entry_t){.index = index, .value = TB_CLASS_NONE};
    }
    c->rows_in++;
    s_link_row(c, y - 1);
    return 0;
}

/* Most common class among the given neighbour values, ignoring TB_CLASS_NONE; TB_CLASS_NONE when
 * there is none. Ties go to the lower class index. */
static uint8_t s_mode(const uint8_t *vals, int n)
{
    int counts[TB_MAX_CLASSES] = {0};
    int best = -1;
    for (int k = 0; k < n; k++)
        if (vals[k] < TB_MAX_CLASSES)
            counts[vals[k]]++;
    for (int k = 0; k < TB_MAX_CLASSES; k++)
        if (counts[k] && (best < 0 || counts[k] > counts[best]))
            best = k;
    return best < 0 ? TB_CLASS_NONE : (uint8_t)best;
}

/* The fill: every round decides each pending pixel on the state before the round, then writes. */
static int s_fill(tb_classify_t *c, tb_err_t *err)
{
    int64_t n = c->n_entries, pending = n;
    int64_t *todo = tb_malloc(sizeof *todo * (size_t)(n ? n : 1), "unmatched pixels", err);
    uint8_t *value = todo ? tb_malloc((size_t)(n ? n : 1), "unmatched pixels", err) : NULL;
    if (!value) {
        free(todo);
        return -1;
    }
    for (int64_t k = 0; k < n; k++)
        todo[k] = k;
    while (pending) {
        int64_t filled = 0;
        for (int64_t t = 0; t < pending; t++) {
            const s_entry_t *e = &c->entries[todo[t]];
            uint8_t vals[8];
            int nv = 0;
            for (int k = 0; k < 8; k++) {
                int64_t v = e->nb[k];
                if (v == S_NB_ABSENT)
                    continue;
                vals[nv++] = S_NB_IS_CLASS(v) ? (uint8_t)(-1 - v) : c->entries[v].value;
            }
            value[t] = s_mode(vals, nv);
            filled += value[t] != TB_CLASS_NONE;
        }
        if (!filled) {
            free(todo);
            free(value);
            return tb_err_set(err, TB_E_INVALID,
                              "classify: no pixel matches the legend, nothing to fill from");
        }
        int64_t keep = 0;
        for (int64_t t = 0; t < pending; t++) {
            if (value[t] != TB_CLASS_NONE)
                c->entries[todo[t]].value = value[t];
            else
                todo[keep++] = todo[t];
        }
        pending = keep;
        c->fill_rounds++;
    }
    free(todo);
    free(value);
    return 0;
}

int tb_classify_finish(tb_classify_t *c, const char *painting_name, tb_classify_report_t *report,
                       tb_err_t *err)
{
    memset(report, 0, sizeof *report);
    if (c->rows_in != c->h || c->finished)
        return tb_err_set(err, TB_E_INTERNAL, "classify: finished after %lld of %lld rows",
                          (long long)c->rows_in, (long long)c->h);
    c->finished = true;
    s_link_row(c, c->h - 1);
    const int64_t n = c->w * c->h;
    report->pixels = n;
    report->unmatched_pixels = c->unmatched;
    report->unmatched_fraction = n ? (double)c->unmatched / (double)n : 0;
    if (c->unmatched)
        s_hist_top(&c->hist, c->w, report);
    if (report->unmatched_fraction > c->legend.max_unmatched_fraction) {
        char colours[700];
        tb_classify_describe_unmatched(report, colours, sizeof colours);
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %lld of %lld pixels (%.3f %%) match no legend colour within "
                          "tolerance %g, more than max_unmatched_fraction %g allows; most common: "
                          "%s. Add these colours to the legend or repaint them",
                          painting_name, (long long)report->unmatched_pixels,
                          (long long)report->pixels, 100.0 * report->unmatched_fraction,
                          c->legend.tolerance, c->legend.max_unmatched_fraction, colours);
    }
    if (c->unmatched > c->n_entries)
        return tb_err_set(err, TB_E_INTERNAL, "%s: %lld unmatched pixels, %lld recorded",
                          painting_name, (long long)c->unmatched, (long long)c->n_entries);
    if (s_fill(c, err) != 0)
        return tb_err_prefix(err, "%s", painting_name);
    report->fill_rounds = c->fill_rounds;
    return 0;
}

void tb_classify_fill_row(const tb_classify_t *c, int64_t y, uint8_t *row)
{
    /* the first entry of row y: entries are in raster order */
    int64_t lo = 0, hi = c->n_entries, start = y * c->w, end = start + c->w;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (c->entries[mid].index < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int64_t e = lo; e < c->n_entries && c->entries[e].index < end; e++)
        row[c->entries[e].index - start] = c->entries[e].value;
}

/* ---- despeckle ---- */

/* 0x80 in every byte of v that is zero, 0 elsewhere (exact, no carries between bytes). */
static inline uint64_t s_zero_bytes(uint64_t v)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    return ~(((v & low7) + low7) | v | low7);
}

int64_t tb_classify_despeckle_row(const uint8_t *above, const uint8_t *row, const uint8_t *below,
                                  int64_t w, bool wrap_x, uint8_t *out)
{
    memcpy(out, row, (size_t)w);
    const uint8_t *rows[3] = {above, row, below};
    int64_t changed = 0;
    for (int64_t i = 0; i < w; i++) {
        /* Eight cells at once when each equals its left or its right neighbour. */
        if (i >= 1 && i + 9 <= w) {
            uint64_t cur, left, right;
            memcpy(&cur, row + i, 8);
            memcpy(&left, row + i - 1, 8);
            memcpy(&right, row + i + 1, 8);
            if ((s_zero_bytes(cur ^ left) | s_zero_bytes(cur ^ right)) == 0x8080808080808080ull) {
                i += 7;
                continue;
            }
        }
        uint8_t c = row[i];
        /* Nearly every cell shares a class with the cell beside it: test that first. */
        if (i > 0 && row[i - 1] == c)
            continue;
        if (i + 1 < w && row[i + 1] == c)
            continue;
        uint8_t vals[8];
        int nv = 0, same = 0;
        for (int k = 0; k < 8; k++) {
            const uint8_t *r = rows[1 + tb_nb_dy[k]];
            int64_t x = i + tb_nb_dx[k];
            if (!r)
                continue;
            if (x < 0 || x >= w) {
                if (!wrap_x)
                    continue;
                x = tb_wrap(x, w);
            }
            vals[nv] = r[x];
            same |= vals[nv++] == c;
        }
        if (same || nv == 0)
            continue;
        out[i] = s_mode(vals, nv);
        changed++;
    }
    return changed;
}

void tb_classify_describe_unmatched(const tb_classify_report_t *report, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < report->n_top && len < n; k++) {
        const tb_classify_colour_t *c = &report->top[k];
        int wrote = snprintf(out + len, n - len, "%s#%02x%02x%02x %lld px (e.g. x %lld, y %lld)",
                             k ? ", " : "", c->rgb[0], c->rgb[1], c->rgb[2], (long long)c->pixels,
                             (long long)c->example_x, (long long)c->example_y);
        if (wrote < 0)
            break;
        len += (size_t)wrote;
    }
    if (report->unmatched_colours > report->n_top && len < n)
        snprintf(out + len, n - len, " and %lld more colour%s",
                 (long long)(report->unmatched_colours - report->n_top),
                 report->unmatched_colours - report->n_top == 1 ? "" : "s");
}
