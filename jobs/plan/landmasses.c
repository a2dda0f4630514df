/* Landmass labelling in three passes, the minimum-size drop and circular arcs; see landmasses.h.
 *
 * The first pass keeps a record per provisional label (cells, rows, arc, first cell, ocean edge
 * counts); those are integers, so they merge in any order. The centroid sums are floating point
 * and today's answer adds them run by run in raster order for each landmass, which a merge of two
 * partial sums would not reproduce: the second pass adds them once every run's landmass is known.
 */
#include "jobs/plan/landmasses.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "jobs/plan/ccl.h"

static const double S_TWO_PI = 6.283185307179586;

/* ---- arcs ---- */

static int s_cmp_arc(const void *a, const void *b)
{
    const tb_arc_t *p = a, *q = b;
    if (p->x0 != q->x0)
        return p->x0 < q->x0 ? -1 : 1;
    return (p->w > q->w) - (p->w < q->w);
}

tb_arc_t tb_arc_cover(tb_arc_t *arcs, int64_t n, int64_t W)
{
    if (n <= 0)
        return (tb_arc_t){0, 0};
    for (int64_t k = 0; k < n; k++)
        if (arcs[k].w >= W)
            return (tb_arc_t){0, W};
    /* Sweep the arcs in order of first column, keeping the end of the covered stretch; every start
     * past it opens a gap. Arcs that wrap (end past W) also cover [0, end - W): the sweep starts
     * with that stretch covered. Otherwise the stretch before the first arc belongs to the closing
     * gap, from the last covered column round the seam to the first. */
    qsort(arcs, (size_t)n, sizeof *arcs, s_cmp_arc);
    int64_t wrap_end = 0; /* columns [0, wrap_end) are covered by arcs that wrap */
    for (int64_t k = 0; k < n; k++)
        if (arcs[k].x0 + arcs[k].w > W && arcs[k].x0 + arcs[k].w - W > wrap_end)
            wrap_end = arcs[k].x0 + arcs[k].w - W;
    int64_t best_start = 0, best_len = 0;
    int64_t cur_end = wrap_end; /* covered up to here */
    bool any = wrap_end > 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t s = arcs[k].x0, e = arcs[k].x0 + arcs[k].w;
        if (!any) {
            /* the first interval: the stretch before it is part of the closing gap */
            cur_end = e;
            any = true;
            continue;
        }
        if (s > cur_end && s - cur_end > best_len) {
            best_start = cur_end;
            best_len = s - cur_end;
        }
        if (e > cur_end)
            cur_end = e;
    }
    /* The closing gap: from the covered end round to the first covered column. */
    int64_t first = wrap_end > 0 ? 0 : arcs[0].x0;
    if (cur_end < W + first) {
        int64_t len = W + first - cur_end;
        if (len > best_len) {
            best_start = cur_end;
            best_len = len;
        }
    }
    if (best_len <= 0)
        return (tb_arc_t){0, W};
    return (tb_arc_t){tb_wrap(best_start + best_len, W), W - best_len};
}

/* The union of b with a when b starts inside a or on the column after it (in a's frame). */
static bool s_join_from(tb_arc_t a, tb_arc_t b, int64_t W, tb_arc_t *out)
{
    int64_t d = tb_wrap(b.x0 - a.x0, W);
    if (d > a.w)
        return false;
    int64_t end = d + b.w;
    if (end >= W) /* b runs on round to a's start: everything is covered */
        *out = (tb_arc_t){0, W};
    else
        *out = (tb_arc_t){a.x0, end > a.w ? end : a.w};
    return true;
}

tb_arc_t tb_arc_join(tb_arc_t a, tb_arc_t b, int64_t W)
{
    if (a.w <= 0)
        return b;
    if (b.w <= 0)
        return a;
    if (a.w >= W || b.w >= W)
        return (tb_arc_t){0, W};
    tb_arc_t out;
    if (s_join_from(a, b, W, &out) || s_join_from(b, a, W, &out))
        return out;
    tb_arc_t both[2] = {a, b};
    return tb_arc_cover(both, 2, W);
}

void tb_landmass_centroid(double sum_cos, double sum_sin, double sum_y, int64_t cells, int64_t W,
                          double *x, double *y)
{
    double angle = atan2(sum_sin, sum_cos);
    double cx = angle / S_TWO_PI * (double)W;
    if (cx < 0)
        cx += (double)W;
    if (cx >= (double)W)
        cx = 0;
    *x = cx;
    *y = cells ? sum_y / (double)cells : 0;
}

/* ---- the finder ---- */

/* A provisional label's record in pass 1; edge[] has one count per ocean class. */
typedef struct {
    int64_t cells;
    int64_t y0, y1;
    int64_t first_index;
    tb_arc_t arc;
    int64_t edge[];
} s_rec_t;

struct tb_landmass_finder_t {
    int64_t w, h;
    tb_legend_t legend;
    double cell_km2, min_area_km2;
    uint8_t is_land[256];
    int n_ocean;
    int ocean_class[TB_MAX_CLASSES]; /* ocean slot -> legend class, in legend order */
    int ocean_slot[256];             /* legend class -> ocean slot, -1 for land */
    tb_ccl_stream_t *scan;           /* pass 1 */
    tb_ccl_stream_t *replay;         /* passes 2 and 3 */
    int pass;                        /* 1, 2, 3 */
    int64_t rows_in;                 /* rows of the current pass */
    /* pass 1: the last three rows (the edge of row y - 1 is counted once row y is in) and the runs
     * of the row before the last */
    uint8_t *ring[3];
    tb_ccl_run_t *saved;
    int64_t n_saved;
    /* after resolve */
    int32_t *comp_of_label;
    int64_t n_labels; /* labels pass 1 opened */
    int64_t n_comps;
    int32_t *kept_of_comp;  /* kept index in raster order, -1 when dropped */
    uint8_t *ocean_of_comp; /* for dropped ones */
    int n_kept;
    int64_t *firsts;        /* per kept: first cell */
    tb_landmass_t *by_comp; /* per kept, in raster order; kept[] is the same sorted by centroid */
    int32_t *id_of_kept;    /* after number */
    double *cos_sum, *sin_sum;
    tb_landmasses_t out;
};

static void s_rec_add(void *ctx, void *rec_, int64_t y, int32_t x0, int32_t x1)
{
    const tb_landmass_finder_t *f = ctx;
    s_rec_t *r = rec_;
    tb_arc_t run = {x0, (int64_t)x1 - x0 + 1};
    if (r->cells == 0) {
        r->y0 = y;
        r->first_index = y * f->w + x0;
        r->arc = run;
    } else {
        r->arc = tb_arc_join(r->arc, run, f->w);
    }
    r->cells += run.w;
    r->y1 = y;
}

static void s_rec_merge(void *ctx, void *into_, const void *from_)
{
    const tb_landmass_finder_t *f = ctx;
    s_rec_t *into = into_;
    const s_rec_t *from = from_;
    into->cells += from->cells;
    into->y0 = from->y0 < into->y0 ? from->y0 : into->y0;
    into->y1 = from->y1 > into->y1 ? from->y1 : into->y1;
    into->first_index =
        from->first_index < into->first_index ? from->first_index : into->first_index;
    into->arc = tb_arc_join(into->arc, from->arc, f->w);
    for (int k = 0; k < f->n_ocean; k++)
        into->edge[k] += from->edge[k];
}

tb_landmass_finder_t *tb_landmass_finder_new(int64_t w, int64_t h, const tb_legend_t *legend,
                                             double cell_m, double min_area_km2, tb_err_t *err)
{
    tb_landmass_finder_t *f = tb_calloc(1, sizeof *f, "landmass finder", err);
    if (!f)
        return NULL;
    f->w = w;
    f->h = h;
    f->legend = *legend;
    f->cell_km2 = cell_m * cell_m * 1e-6;
    f->min_area_km2 = min_area_km2;
    f->pass = 1;
    for (int c = 0; c < 256; c++)
        f->ocean_slot[c] = -1;
    for (int c = 0; c < legend->n_classes; c++) {
        f->is_land[c] = legend->classes[c].kind == TB_CLASS_LAND;
        if (!f->is_land[c]) {
            f->ocean_slot[c] = f->n_ocean;
            f->ocean_class[f->n_ocean++] = c;
        }
    }
    if (!f->n_ocean) {
        tb_err_set(err, TB_E_INVALID, "landmasses: the legend has no ocean class");
        goto fail;
    }
    tb_ccl_records_t rec = {sizeof(s_rec_t) + sizeof(int64_t) * (size_t)f->n_ocean, s_rec_add,
                            s_rec_merge, f};
    f->scan = tb_ccl_stream_new(w, true, f->is_land, &rec, err);
    if (!f->scan)
        goto fail;
    for (int k = 0; k < 3; k++)
        if (!(f->ring[k] = tb_malloc((size_t)w, "landmass rows", err)))
            goto fail;
    f->saved = tb_malloc(sizeof *f->saved * (size_t)((w + 1) / 2 + 1), "landmass runs", err);
    if (!f->saved)
        goto fail;
    return f;
fail:
    tb_landmass_finder_destroy(&f);
    return NULL;
}

void tb_landmass_finder_destroy(tb_landmass_finder_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_landmass_finder_t *f = *self_p;
    tb_ccl_stream_destroy(&f->scan);
    tb_ccl_stream_destroy(&f->replay);
    for (int k = 0; k < 3; k++)
        free(f->ring[k]);
    free(f->saved);
    free(f->comp_of_label);
    free(f->kept_of_comp);
    free(f->ocean_of_comp);
    free(f->firsts);
    free(f->by_comp);
    free(f->id_of_kept);
    free(f->cos_sum);
    free(f->sin_sum);
    free(f->out.kept);
    free(f);
    *self_p = NULL;
}

/* Counts the ocean cells round the saved runs of a row (the rows above and below may be absent)
 * into their sets' records, skipping sets already too large to be dropped. A cell next to two runs
 * is counted for each, as the edge of every run. */
static void s_count_edges(tb_landmass_finder_t *f, const uint8_t *above, const uint8_t *row,
                          const uint8_t *below)
{
    const int64_t w = f->w;
    const uint8_t *rows[3] = {above, row, below};
    for (int64_t k = 0; k < f->n_saved; k++) {
        const tb_ccl_run_t *run = &f->saved[k];
        int64_t root = tb_ccl_stream_find(f->scan, run->label);
        s_rec_t *r = tb_ccl_stream_record(f->scan, root);
        if ((double)r->cells * f->cell_km2 >= f->min_area_km2)
            continue; /* cells only grow: this set is kept whatever comes */
        for (int dy = 0; dy < 3; dy++) {
            const uint8_t *c = rows[dy];
            if (!c)
                continue;
            for (int64_t x = (int64_t)run->x0 - 1; x <= (int64_t)run->x1 + 1; x++) {
                if (dy == 1 && x >= run->x0 && x <= run->x1)
                    continue;
                int slot = f->ocean_slot[c[tb_wrap(x, w)]];
                if (slot >= 0)
                    r->edge[slot]++;
            }
        }
    }
}

int tb_landmass_finder_scan(tb_landmass_finder_t *f, const uint8_t *row, tb_err_t *err)
{
    if (f->pass != 1 || f->rows_in >= f->h)
        return tb_err_set(err, TB_E_INTERNAL, "landmasses: a scan row out of turn");
    const int64_t y = f->rows_in++;
    memcpy(f->ring[y % 3], row, (size_t)f->w);
    if (tb_ccl_stream_row(f->scan, row, err) != 0)
        return -1;
    if (y >= 1)
        s_count_edges(f, y >= 2 ? f->ring[(y - 2) % 3] : NULL, f->ring[(y - 1) % 3],
                      f->ring[y % 3]);
    int64_t n;
    const tb_ccl_run_t *runs = tb_ccl_stream_runs(f->scan, &n);
    memcpy(f->saved, runs, sizeof *runs * (size_t)n);
    f->n_saved = n;
    return 0;
}

int tb_landmass_finder_resolve(tb_landmass_finder_t *f, tb_err_t *err)
{
    if (f->pass != 1 || f->rows_in != f->h)
        return tb_err_set(err, TB_E_INTERNAL, "landmasses: resolved after %lld of %lld rows",
                          (long long)f->rows_in, (long long)f->h);
    const int64_t h = f->h;
    s_count_edges(f, h >= 2 ? f->ring[(h - 2) % 3] : NULL, f->ring[(h - 1) % 3], NULL);
    if (tb_ccl_stream_resolve(f->scan, &f->comp_of_label, &f->n_comps, err) != 0)
        return -1;
    const int64_t nc = f->n_comps;
    const int64_t labels = tb_ccl_stream_labels(f->scan);
    /* the landmasses kept: a full record each (by_comp), only for those */
    int64_t n_kept = 0;
    for (int64_t l = 0; l < labels; l++)
        if (tb_ccl_stream_find(f->scan, l) == l) {
            const s_rec_t *r = tb_ccl_stream_record(f->scan, l);
            n_kept += (double)r->cells * f->cell_km2 >= f->min_area_km2;
        }
    if (n_kept > INT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "landmasses: %lld, more than %d", (long long)n_kept,
                          INT32_MAX);
    f->kept_of_comp = tb_malloc(sizeof *f->kept_of_comp * (size_t)(nc ? nc : 1), "landmasses", err);
    f->ocean_of_comp = tb_malloc((size_t)(nc ? nc : 1), "landmass drops", err);
    f->firsts = tb_malloc(sizeof *f->firsts * (size_t)(n_kept ? n_kept : 1), "landmass cells", err);
    f->by_comp = tb_calloc((size_t)(n_kept ? n_kept : 1), sizeof *f->by_comp, "landmasses", err);
    if (!f->kept_of_comp || !f->ocean_of_comp || !f->firsts || !f->by_comp)
        return -1;
    f->out.found = nc;
    int kept = 0;
    for (int64_t l = 0; l < labels; l++) {
        if (tb_ccl_stream_find(f->scan, l) != l)
            continue;
        /* roots in label order are the components in order */
        int32_t c = f->comp_of_label[l];
        const s_rec_t *r = tb_ccl_stream_record(f->scan, l);
        if ((double)r->cells * f->cell_km2 < f->min_area_km2) {
            int best = -1;
            for (int k = 0; k < f->n_ocean; k++)
                if (best < 0 || r->edge[k] > r->edge[best])
                    best = k;
            f->ocean_of_comp[c] = (uint8_t)f->ocean_class[best];
            f->kept_of_comp[c] = -1;
            f->out.dropped++;
            f->out.dropped_cells += r->cells;
            continue;
        }
        f->kept_of_comp[c] = kept;
        tb_landmass_t *lm = &f->by_comp[kept];
        lm->comp = c;
        lm->cells = r->cells;
        lm->y0 = r->y0;
        lm->y1 = r->y1;
        lm->arc = r->arc;
        lm->first_index = r->first_index;
        f->firsts[kept] = r->first_index;
        kept++;
    }
    f->out.dropped_area_km2 = (double)f->out.dropped_cells * f->cell_km2;
    f->n_kept = kept;
    f->n_labels = labels;
    tb_ccl_stream_destroy(&f->scan); /* its records are spent; its labels live in comp_of_label */
    /* Sums of cos and sin of the column angle over columns [0, x): prefix tables of w + 1. */
    f->cos_sum = tb_malloc(sizeof *f->cos_sum * (size_t)(f->w + 1), "angle table", err);
    f->sin_sum = tb_malloc(sizeof *f->sin_sum * (size_t)(f->w + 1), "angle table", err);
    if (!f->cos_sum || !f->sin_sum)
        return -1;
    f->cos_sum[0] = f->sin_sum[0] = 0;
    for (int64_t x = 0; x < f->w; x++) {
        double a = S_TWO_PI * ((double)x + 0.5) / (double)f->w;
        f->cos_sum[x + 1] = f->cos_sum[x] + cos(a);
        f->sin_sum[x + 1] = f->sin_sum[x] + sin(a);
    }
    f->pass = 2;
    f->rows_in = 0;
    return 0;
}

/* Starts a replay of the scanned rows (passes 2 and 3) when row 0 comes. */
static int s_replay_row(tb_landmass_finder_t *f, int pass, const uint8_t *row, tb_err_t *err)
{
    if (f->pass != pass || f->rows_in >= f->h)
        return tb_err_set(err, TB_E_INTERNAL, "landmasses: a pass %d row out of turn", pass);
    if (f->rows_in == 0) {
        tb_ccl_stream_destroy(&f->replay);
        f->replay = tb_ccl_stream_new(f->w, true, f->is_land, NULL, err);
        if (!f->replay)
            return -1;
    }
    f->rows_in++;
    return tb_ccl_stream_row(f->replay, row, err);
}

int tb_landmass_finder_measure(tb_landmass_finder_t *f, const uint8_t *row, uint8_t *kept_mask,
                               tb_err_t *err)
{
    const int64_t y = f->rows_in;
    if (s_replay_row(f, 2, row, err) != 0)
        return -1;
    if (kept_mask)
        memset(kept_mask, 0, (size_t)f->w);
    int64_t n;
    const tb_ccl_run_t *runs = tb_ccl_stream_runs(f->replay, &n);
    for (int64_t k = 0; k < n; k++) {
        const tb_ccl_run_t *run = &runs[k];
        int32_t kept = f->kept_of_comp[f->comp_of_label[run->label]];
        if (kept < 0)
            continue;
        tb_landmass_t *lm = &f->by_comp[kept];
        int64_t len = (int64_t)run->x1 - run->x0 + 1;
        lm->sum_cos += f->cos_sum[run->x1 + 1] - f->cos_sum[run->x0];
        lm->sum_sin += f->sin_sum[run->x1 + 1] - f->sin_sum[run->x0];
        lm->sum_y += (double)len * ((double)y + 0.5);
        for (int64_t x = run->x0; x <= run->x1; x++)
            lm->class_cells[row[x] < TB_MAX_CLASSES ? row[x] : 0]++;
        if (kept_mask)
            memset(kept_mask + run->x0, 1, (size_t)len);
    }
    return 0;
}

static int s_cmp_landmass(const void *a, const void *b)
{
    const tb_landmass_t *p = a, *q = b;
    return tb_landmass_order(p->centroid_y, p->centroid_x, p->first_index, q->centroid_y,
                             q->centroid_x, q->first_index);
}

int tb_landmass_finder_number(tb_landmass_finder_t *f, tb_err_t *err)
{
    if (f->pass != 2 || f->rows_in != f->h)
        return tb_err_set(err, TB_E_INTERNAL, "landmasses: numbered after %lld of %lld rows",
                          (long long)f->rows_in, (long long)f->h);
    const int n = f->n_kept;
    f->out.kept = tb_malloc(sizeof *f->out.kept * (size_t)(n ? n : 1), "landmasses", err);
    f->id_of_kept = tb_malloc(sizeof *f->id_of_kept * (size_t)(n ? n : 1), "landmass ids", err);
    if (!f->out.kept || !f->id_of_kept)
        return -1;
    for (int k = 0; k < n; k++) {
        tb_landmass_t *lm = &f->by_comp[k];
        tb_landmass_centroid(lm->sum_cos, lm->sum_sin, lm->sum_y, lm->cells, f->w, &lm->centroid_x,
                             &lm->centroid_y);
        f->out.kept[k] = *lm;
    }
    /* first_index is unique, so the order is total and qsort's instability does not matter */
    qsort(f->out.kept, (size_t)n, sizeof *f->out.kept, s_cmp_landmass);
    for (int id = 1; id <= n; id++)
        f->id_of_kept[f->kept_of_comp[f->out.kept[id - 1].comp]] = id;
    f->out.n = n;
    free(f->by_comp);
    f->by_comp = NULL;
    f->pass = 3;
    f->rows_in = 0;
    return 0;
}

int tb_landmass_finder_label(tb_landmass_finder_t *f, uint8_t *row, int32_t *labels, tb_err_t *err)
{
    if (s_replay_row(f, 3, row, err) != 0)
        return -1;
    int64_t n;
    const tb_ccl_run_t *runs = tb_ccl_stream_runs(f->replay, &n);
    for (int64_t k = 0; k < n; k++) {
        const tb_ccl_run_t *run = &runs[k];
        int32_t c = f->comp_of_label[run->label], kept = f->kept_of_comp[c];
        size_t len = (size_t)((int64_t)run->x1 - run->x0 + 1);
        if (kept < 0) {
            memset(row + run->x0, f->ocean_of_comp[c], len);
            continue;
        }
        if (labels) {
            int32_t id = f->id_of_kept[kept], *l = labels + run->x0;
            for (size_t x = 0; x < len; x++)
                l[x] = id;
        }
    }
    if (f->rows_in == f->h)
        tb_ccl_stream_destroy(&f->replay);
    return 0;
}

const tb_landmasses_t *tb_landmass_finder_result(const tb_landmass_finder_t *f)
{
    return &f->out;
}

const int64_t *tb_landmass_finder_firsts(const tb_landmass_finder_t *f, int *n)
{
    *n = f->n_kept;
    return f->firsts;
}

int tb_landmass_finder_id(const tb_landmass_finder_t *f, int k)
{
    return f->id_of_kept && k >= 0 && k < f->n_kept ? f->id_of_kept[k] : 0;
}

int64_t tb_landmass_finder_labels(const tb_landmass_finder_t *f)
{
    return f->scan ? tb_ccl_stream_labels(f->scan) : f->n_labels;
}
