/* Painting classification; see classify.h.
 *
 * The lookup table holds one byte per 24-bit colour: 0 not yet decided, 1 + class for a match, 0xff
 * for unmatched. calloc hands back zero pages that cost nothing until touched, and a painting has
 * few distinct colours, so the table costs a handful of pages. A one-entry cache in front of it
 * catches the runs of identical pixels a painting is made of.
 */
#include "jobs/plan/classify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"

#define S_LUT_UNMATCHED 0xffu
#define S_HIST_MAX_LOG2 20 /* distinct unmatched colours tracked exactly */

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

int tb_classify_match(const tb_image_t *painting, const tb_legend_t *legend, uint8_t *classes_out,
                      tb_classify_report_t *report, tb_err_t *err)
{
    memset(report, 0, sizeof *report);
    if (painting->format != TB_PNG_RGB8)
        return tb_err_set(err, TB_E_INTERNAL,
                          "classify: the painting must be decoded as 8-bit RGB");
    uint8_t *lut = tb_calloc((size_t)1 << 24, 1, "the colour lookup table", err);
    if (!lut)
        return -1;
    const double tol2 = legend->tolerance * legend->tolerance;
    const int64_t n = (int64_t)painting->w * painting->h;
    const uint8_t *px = painting->pixels;
    uint32_t last_colour = 0xffffffffu;
    uint8_t last_class = 0;
    int64_t unmatched = 0;
    for (int64_t i = 0; i < n; i++, px += 3) {
        uint32_t colour = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
        if (colour != last_colour) {
            uint8_t v = lut[colour];
            if (!v) {
                uint8_t c = s_nearest(legend, tol2, px[0], px[1], px[2]);
                v = c == TB_CLASS_NONE ? S_LUT_UNMATCHED : (uint8_t)(c + 1);
                lut[colour] = v;
            }
            last_colour = colour;
            last_class = v == S_LUT_UNMATCHED ? TB_CLASS_NONE : (uint8_t)(v - 1);
        }
        classes_out[i] = last_class;
        unmatched += last_class == TB_CLASS_NONE;
    }
    free(lut);
    report->pixels = n;
    report->unmatched_pixels = unmatched;
    report->unmatched_fraction = n ? (double)unmatched / (double)n : 0;
    if (!unmatched)
        return 0;
    /* Second pass over the few unmatched pixels only. */
    s_hist_t hist = {0};
    int rc = 0;
    px = painting->pixels;
    for (int64_t i = 0; i < n && rc == 0; i++)
        if (classes_out[i] == TB_CLASS_NONE) {
            const uint8_t *p = px + 3 * i;
            rc = s_hist_add(&hist, (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2], i);
        }
    if (rc == 0)
        s_hist_top(&hist, painting->w, report);
    free(hist.slots);
    if (rc != 0)
        return tb_err_set(err, TB_E_NOMEM, "classify: out of memory counting unmatched colours");
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
    for (int c = 0; c < TB_MAX_CLASSES; c++)
        if (counts[c] && (best < 0 || counts[c] > counts[best]))
            best = c;
    return best < 0 ? TB_CLASS_NONE : (uint8_t)best;
}

/* The values of the (up to 8) neighbours of cell (i, j) that exist: X wraps when asked, Y does not.
 * Returns how many were written to vals. */
static int s_neighbours(const uint8_t *classes, int64_t w, int64_t h, bool wrap, int64_t i,
                        int64_t j, uint8_t vals[8])
{
    int n = 0;
    for (int k = 0; k < 8; k++) {
        int64_t x = i + tb_nb_dx[k], y = j + tb_nb_dy[k];
        if (y < 0 || y >= h)
            continue;
        if (x < 0 || x >= w) {
            if (!wrap)
                continue;
            x = tb_wrap(x, w);
        }
        vals[n++] = classes[tb_idx(w, x, y)];
    }
    return n;
}

typedef struct {
    int64_t index;
    uint8_t value;
} s_change_t;

int tb_classify_fill_unmatched(uint8_t *classes, int64_t w, int64_t h, bool wrap_x, int *rounds,
                               tb_err_t *err)
{
    *rounds = 0;
    int64_t n = w * h, pending = 0;
    for (int64_t i = 0; i < n; i++)
        pending += classes[i] == TB_CLASS_NONE;
    if (!pending)
        return 0;
    s_change_t *todo = tb_malloc(sizeof *todo * (size_t)pending, "unmatched pixels", err);
    if (!todo)
        return -1;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (classes[i] == TB_CLASS_NONE)
            todo[k++] = (s_change_t){i, TB_CLASS_NONE};
    while (pending) {
        /* Decide every pending cell on the state before the round, then write. */
        int64_t filled = 0;
        for (int64_t t = 0; t < pending; t++) {
            uint8_t vals[8];
            int64_t i = todo[t].index;
            int nv = s_neighbours(classes, w, h, wrap_x, i % w, i / w, vals);
            todo[t].value = s_mode(vals, nv);
            filled += todo[t].value != TB_CLASS_NONE;
        }
        if (!filled) {
            free(todo);
            return tb_err_set(err, TB_E_INVALID,
                              "classify: no pixel matches the legend, nothing to fill from");
        }
        int64_t keep = 0;
        for (int64_t t = 0; t < pending; t++) {
            if (todo[t].value != TB_CLASS_NONE)
                classes[todo[t].index] = todo[t].value;
            else
                todo[keep++] = todo[t];
        }
        pending = keep;
        (*rounds)++;
    }
    free(todo);
    return 0;
}

/* 0x80 in every byte of v that is zero, 0 elsewhere (exact, no carries between bytes). */
static inline uint64_t s_zero_bytes(uint64_t v)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    return ~(((v & low7) + low7) | v | low7);
}

int64_t tb_classify_despeckle(uint8_t *classes, int64_t w, int64_t h, bool wrap_x, tb_err_t *err)
{
    size_t cap = 1024, used = 0;
    s_change_t *changes = tb_malloc(sizeof *changes * cap, "speckle list", err);
    if (!changes)
        return -1;
    for (int64_t j = 0; j < h; j++) {
        const uint8_t *row = classes + (size_t)j * (size_t)w;
        for (int64_t i = 0; i < w; i++) {
            /* Eight cells at once when each equals its left or its right neighbour. */
            if (i >= 1 && i + 9 <= w) {
                uint64_t cur, left, right;
                memcpy(&cur, row + i, 8);
                memcpy(&left, row + i - 1, 8);
                memcpy(&right, row + i + 1, 8);
                if ((s_zero_bytes(cur ^ left) | s_zero_bytes(cur ^ right)) ==
                    0x8080808080808080ull) {
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
            int nv = s_neighbours(classes, w, h, wrap_x, i, j, vals), same = 0;
            for (int k = 0; k < nv; k++)
                same |= vals[k] == c;
            if (same || nv == 0)
                continue;
            if (used == cap) {
                s_change_t *p = realloc(changes, sizeof *changes * cap * 2);
                if (!p) {
                    free(changes);
                    return tb_err_set(err, TB_E_NOMEM, "classify: out of memory for speckle");
                }
                changes = p;
                cap *= 2;
            }
            changes[used++] = (s_change_t){(int64_t)tb_idx(w, i, j), s_mode(vals, nv)};
        }
    }
    for (size_t t = 0; t < used; t++)
        classes[changes[t].index] = changes[t].value;
    free(changes);
    return (int64_t)used;
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

int tb_classify_painting(const tb_image_t *painting, const char *painting_name,
                         const tb_legend_t *legend, uint8_t *classes_out,
                         tb_classify_report_t *report, tb_err_t *err)
{
    if (tb_classify_match(painting, legend, classes_out, report, err) != 0)
        return tb_err_prefix(err, "%s", painting_name);
    if (report->unmatched_fraction > legend->max_unmatched_fraction) {
        char colours[700];
        tb_classify_describe_unmatched(report, colours, sizeof colours);
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %lld of %lld pixels (%.3f %%) match no legend colour within "
                          "tolerance %g, more than max_unmatched_fraction %g allows; most common: "
                          "%s. Add these colours to the legend or repaint them",
                          painting_name, (long long)report->unmatched_pixels,
                          (long long)report->pixels, 100.0 * report->unmatched_fraction,
                          legend->tolerance, legend->max_unmatched_fraction, colours);
    }
    int64_t w = painting->w, h = painting->h;
    if (tb_classify_fill_unmatched(classes_out, w, h, true, &report->fill_rounds, err) != 0)
        return tb_err_prefix(err, "%s", painting_name);
    report->speckle_pixels = tb_classify_despeckle(classes_out, w, h, true, err);
    if (report->speckle_pixels < 0)
        return tb_err_prefix(err, "%s", painting_name);
    return 0;
}
