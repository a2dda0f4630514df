/* The coastal pass in blocks (jobs/coast/blocks.h, docs/coast.md "Blocks"): the halo from the
 * pass's reaches, the planner, the coordinator's cut and scatter, the rounds that find the planet's
 * fixed-point bits, and the in-process driver. Typical sizes: a few to a few tens of blocks of
 * 50 to 200 M cells of window each; the planner tries up to 1024 x 1024 grids. The invariant: a
 * block's interior is exact wherever its window holds the halo round it (or the planet's edge), so
 * the blocks' interiors are the whole pass's cells. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/blocks.h"
#include "jobs/job.h"
#include "jobs/coast/methods.h"

/* block_job.c */
int tb_coast_block_spec_from_view(const tb_coast_block_spec_t *spec, const tb_coast_view_t *view,
                                  void **out, size_t *bytes, tb_err_t *err);
int tb_coast_block_result_peek(const void *data, size_t bytes, tb_coast_block_result_t *out,
                               size_t *maps_at, tb_err_t *err);

#define S_MAX_SPLIT 1024

/* ---- the halo ---- */

/* A tent of radius r is the box of radius ceil(r / 2) twice: its support. */
static int64_t s_tent_support(int64_t r)
{
    return 2 * ((r + 1) / 2);
}

void tb_coast_halo(const tb_coast_params_t *p, double cell_m, tb_coast_halo_t *out)
{
    memset(out, 0, sizeof *out);
    /* the drifts (sediment.c: the second reaches S_SECOND_REACH = 3 times the first) */
    int64_t r1 = tb_coast_radius_cells(p->drift_km * 1000.0, cell_m), r2 = 3 * r1;
    out->first_drift = 2 * s_tent_support(r1);
    out->second_drift = 2 * s_tent_support(r2);
    /* the bell: two tents of half its radius (three drift radii), four boxes of radius `box` */
    int64_t half_r = (r2 + 1) / 2, box = (half_r + 1) / 2;
    out->stretch = 4 * box;
    out->carry = tb_coast_radius_cells(p->carry_m, cell_m);
    out->waterline = 1;
    /* the fetch: the most steps of any wave direction's cap, plus the sweeps' two (exposure.c) */
    unsigned mask = tb_coast_wave_mask(p);
    int64_t steps = 0;
    for (int d = 0; d < TB_COAST_DIRECTIONS; d++) {
        if (!(mask & (1u << d)))
            continue;
        double step_m = cell_m * (d % 2 ? sqrt(2.0) : 1.0); /* odd points are the diagonals */
        double cap = ceil(p->ref_fetch_km * 1000.0 / step_m);
        int64_t c = cap > 4e9 ? 4000000000 : (int64_t)cap;
        steps = c > steps ? c : steps;
    }
    out->fetch = steps + 2;
    uint32_t caps[2];
    tb_coast_distance_caps(p, cell_m, caps);
    uint32_t cap = caps[0] > caps[1] ? caps[0] : caps[1];
    out->distances = (int64_t)ceil(sqrt((double)cap));
    int64_t exposure = out->carry + out->waterline + out->fetch + out->distances;
    int64_t at_cell = exposure > out->stretch ? exposure : out->stretch;
    at_cell = at_cell > out->distances ? at_cell : out->distances;
    out->total = out->second_drift + out->first_drift + at_cell;
}

/* ---- the layout ---- */

size_t tb_coast_block_peak_bytes(int64_t window_cells, int64_t interior_cells)
{
    /* measured (docs/coast.md, "Memory per job"): the spec's bytes and their decoded copy (10 a
     * cell), the pass's work memory and maps over the window (about 35), the result's 10 a cell of
     * interior while the window's maps are alive, and about 96 MB of the process and tables; 56
     * rather than 46 a window cell since the workers of the 300 km bake reported up to 53.2 (the
     * compressed spec and result beside the job, and a spread of 30 % between blocks of the same
     * window with other coasts) */
    return (size_t)(56.0 * (double)window_cells + 10.0 * (double)interior_cells) +
           ((size_t)96 << 20);
}

/* The interior [*a, *b) of part k of n over len, and its window's [*wa, *wb) with the halo (not
 * clipped). */
static void s_part(int64_t len, int64_t n, int64_t k, int64_t *a, int64_t *b)
{
    *a = len * k / n;
    *b = len * (k + 1) / n;
}

/* Column k of nx: the interior's columns, the window's first column and width, and whether it
 * wraps (every column). */
static void s_column(int64_t w, int64_t halo, int64_t nx, int64_t k, int64_t *ix, int64_t *iw,
                     int64_t *wx, int64_t *ww, bool *wraps)
{
    int64_t a, b;
    s_part(w, nx, k, &a, &b);
    *ix = a;
    *iw = b - a;
    *wraps = nx == 1 || *iw + 2 * halo >= w;
    *wx = *wraps ? 0 : tb_wrap(a - halo, w);
    *ww = *wraps ? w : *iw + 2 * halo;
}

/* Row k of ny: the interior's rows, the window's, clipped at the Y edges. */
static void s_row(int64_t h, int64_t halo, int64_t ny, int64_t k, int64_t *iy, int64_t *ih,
                  int64_t *wy, int64_t *wh)
{
    int64_t a, b;
    s_part(h, ny, k, &a, &b);
    *iy = a;
    *ih = b - a;
    *wy = a - halo > 0 ? a - halo : 0;
    *wh = (b + halo < h ? b + halo : h) - *wy;
}

int tb_coast_layout_grid(int64_t w, int64_t h, double cell_m, int64_t halo, int64_t nx, int64_t ny,
                         tb_coast_layout_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (w < 3 || h < 1 || halo < 0 || nx < 1 || ny < 1 || nx > w || ny > h ||
        nx > S_MAX_SPLIT * 64 || ny > S_MAX_SPLIT * 64)
        return tb_err_set(err, TB_E_INVALID,
                          "coast blocks: %lld x %lld blocks of a %lld x %lld planet with a halo of "
                          "%lld cells",
                          (long long)nx, (long long)ny, (long long)w, (long long)h,
                          (long long)halo);
    out->blocks = calloc((size_t)(nx * ny), sizeof *out->blocks);
    if (!out->blocks)
        return tb_err_set(err, TB_E_NOMEM, "coast blocks: out of memory for %lld blocks",
                          (long long)(nx * ny));
    out->w = w;
    out->h = h;
    out->cell_m = cell_m;
    out->halo = halo;
    out->probe_halo = halo;
    out->nx = nx;
    out->ny = ny;
    out->n = (size_t)(nx * ny);
    for (int64_t by = 0; by < ny; by++)
        for (int64_t bx = 0; bx < nx; bx++) {
            tb_coast_block_t *b = &out->blocks[by * nx + bx];
            s_column(w, halo, nx, bx, &b->interior.x0, &b->interior.w, &b->window.x0, &b->window.w,
                     &b->wraps);
            s_row(h, halo, ny, by, &b->interior.y0, &b->interior.h, &b->window.y0, &b->window.h);
            b->peak_bytes =
                tb_coast_block_peak_bytes(b->window.w * b->window.h, b->interior.w * b->interior.h);
            out->peak_bytes = b->peak_bytes > out->peak_bytes ? b->peak_bytes : out->peak_bytes;
            out->window_cells += (double)b->window.w * (double)b->window.h;
        }
    return 0;
}

void tb_coast_layout_free(tb_coast_layout_t *l)
{
    if (!l)
        return;
    free(l->blocks);
    memset(l, 0, sizeof *l);
}

bool tb_coast_layout_is_whole(const tb_coast_layout_t *l)
{
    return l->n == 1 && l->blocks[0].wraps && l->blocks[0].window.h == l->h;
}

/* For a split of len into n parts: the widest part, the widest window, and all windows' sum. */
typedef struct {
    int64_t inner, window;
    double sum;
} s_split_t;

int tb_coast_layout_plan(int64_t w, int64_t h, double cell_m, const tb_coast_params_t *p,
                         size_t budget_bytes, tb_coast_layout_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (w < 3 || h < 1 || !(cell_m > 0))
        return tb_err_set(err, TB_E_INVALID, "coast blocks: a planet of %lld x %lld cells of %g m",
                          (long long)w, (long long)h, cell_m);
    if (tb_coast_params_check(p, cell_m, w, err) != 0)
        return -1;
    tb_coast_halo_t halo;
    tb_coast_halo(p, cell_m, &halo);
    int64_t H = halo.total, mx = w < S_MAX_SPLIT ? w : S_MAX_SPLIT;
    int64_t my = h < S_MAX_SPLIT ? h : S_MAX_SPLIT;
    s_split_t *cols = calloc((size_t)mx + 1, sizeof *cols);
    s_split_t *rows = calloc((size_t)my + 1, sizeof *rows);
    if (!cols || !rows) {
        free(cols);
        free(rows);
        return tb_err_set(err, TB_E_NOMEM, "coast blocks: out of memory planning");
    }
    for (int64_t n = 1; n <= mx; n++)
        for (int64_t k = 0; k < n; k++) {
            int64_t ix, iw, wx, ww;
            bool wraps;
            s_column(w, H, n, k, &ix, &iw, &wx, &ww, &wraps);
            cols[n].inner = iw > cols[n].inner ? iw : cols[n].inner;
            cols[n].window = ww > cols[n].window ? ww : cols[n].window;
            cols[n].sum += (double)ww;
        }
    for (int64_t n = 1; n <= my; n++)
        for (int64_t k = 0; k < n; k++) {
            int64_t iy, ih, wy, wh;
            s_row(h, H, n, k, &iy, &ih, &wy, &wh);
            rows[n].inner = ih > rows[n].inner ? ih : rows[n].inner;
            rows[n].window = wh > rows[n].window ? wh : rows[n].window;
            rows[n].sum += (double)wh;
        }
    /* for each number of rows the fewest columns that fit (more columns only add windows' cells),
     * then the grid with the fewest windows' cells, and of those the fewest blocks */
    int64_t best_nx = 0, best_ny = 0;
    double best_cells = INFINITY;
    for (int64_t ny = 1; ny <= my; ny++)
        for (int64_t nx = 1; nx <= mx; nx++) {
            size_t peak = tb_coast_block_peak_bytes(cols[nx].window * rows[ny].window,
                                                    cols[nx].inner * rows[ny].inner);
            if (peak > budget_bytes)
                continue;
            double cells = cols[nx].sum * rows[ny].sum;
            if (cells < best_cells || (cells == best_cells && nx * ny < best_nx * best_ny)) {
                best_cells = cells;
                best_nx = nx;
                best_ny = ny;
            }
            break;
        }
    free(cols);
    free(rows);
    if (!best_nx)
        return tb_err_set(
            err, TB_E_INVALID,
            "coast blocks: no block of the %lld x %lld planet fits a job of %zu "
            "bytes: the halo is %lld cells, and the smallest window of %lld x %lld "
            "cells needs about %zu bytes",
            (long long)w, (long long)h, budget_bytes, (long long)H,
            (long long)(w < 2 * H + 1 ? w : 2 * H + 1), (long long)(h < 2 * H + 1 ? h : 2 * H + 1),
            tb_coast_block_peak_bytes(
                (w < 2 * H + 1 ? w : 2 * H + 1) * (h < 2 * H + 1 ? h : 2 * H + 1), 1));
    if (tb_coast_layout_grid(w, h, cell_m, H, best_nx, best_ny, out, err) != 0)
        return -1;
    out->probe_halo = H - halo.second_drift;
    return 0;
}

/* ---- cut and scatter ---- */

static int64_t s_col_in(const tb_coast_rect_t *r, int64_t x, int64_t w)
{
    int64_t d = tb_wrap(x - r->x0, w);
    return d < r->w ? d : -1;
}

int tb_coast_block_cut(const tb_coast_layout_t *l, size_t block, const tb_coast_view_t *view,
                       const tb_coast_mouth_t *mouths, size_t n_mouths, const tb_coast_params_t *p,
                       const tb_coast_classes_t *legend, const tb_coast_share_t *share,
                       bool totals_only, void **spec, size_t *bytes, tb_err_t *err)
{
    *spec = NULL;
    *bytes = 0;
    if (block >= l->n)
        return tb_err_set(err, TB_E_INVALID, "coast blocks: block %zu of %zu", block, l->n);
    const tb_coast_block_t *b = &l->blocks[block];
    bool whole = tb_coast_layout_is_whole(l), probe = !whole && totals_only;
    tb_coast_rect_t window = b->window;
    bool wraps = b->wraps;
    if (probe) { /* the interior and the probe's halo round it, as s_column and s_row make them */
        int64_t ph = l->probe_halo, y1 = b->interior.y0 + b->interior.h + ph;
        wraps = l->nx == 1 || b->interior.w + 2 * ph >= l->w;
        window.x0 = wraps ? 0 : tb_wrap(b->interior.x0 - ph, l->w);
        window.w = wraps ? l->w : b->interior.w + 2 * ph;
        window.y0 = b->interior.y0 - ph > 0 ? b->interior.y0 - ph : 0;
        window.h = (y1 < l->h ? y1 : l->h) - window.y0;
    }
    tb_coast_block_spec_t s = {.planet_w = l->w,
                               .planet_h = l->h,
                               .cell_m = l->cell_m,
                               .window = window,
                               .interior = b->interior,
                               .wraps = wraps,
                               .share = whole ? (tb_coast_share_t){{-1, -1}} : *share,
                               .totals_only = probe,
                               .params = *p,
                               .legend = *legend};
    /* the mouths inside the window */
    tb_coast_mouth_t *m =
        tb_malloc((n_mouths ? n_mouths : 1) * sizeof *m, "coast block mouths", err);
    if (!m)
        return -1;
    size_t n = 0;
    for (size_t k = 0; k < n_mouths; k++)
        if (mouths[k].x >= 0 && mouths[k].x < l->w && s_col_in(&window, mouths[k].x, l->w) >= 0 &&
            mouths[k].y >= window.y0 && mouths[k].y < window.y0 + window.h)
            m[n++] = mouths[k];
    s.mouths = m;
    s.n_mouths = n;
    int rc = tb_coast_block_spec_from_view(&s, view, spec, bytes, err);
    free(m);
    return rc;
}

int tb_coast_block_scatter(const tb_coast_layout_t *l, size_t block, const void *result,
                           size_t bytes, bool totals_only, const tb_coast_out_view_t *out,
                           tb_coast_tally_t *sum, tb_err_t *err)
{
    if (block >= l->n)
        return tb_err_set(err, TB_E_INVALID, "coast blocks: block %zu of %zu", block, l->n);
    const tb_coast_block_t *b = &l->blocks[block];
    bool probe = !tb_coast_layout_is_whole(l) && totals_only;
    tb_coast_block_result_t r;
    size_t at;
    if (tb_coast_block_result_peek(result, bytes, &r, &at, err) != 0)
        return -1;
    if (memcmp(&r.interior, &b->interior, sizeof r.interior) != 0 || r.totals_only != probe) {
        tb_err_set(err, TB_E_FORMAT,
                   "coast blocks: the result of block %zu is for [%lld, %lld, %lld x "
                   "%lld]%s, not its interior [%lld, %lld, %lld x %lld]%s",
                   block, (long long)r.interior.x0, (long long)r.interior.y0,
                   (long long)r.interior.w, (long long)r.interior.h,
                   r.totals_only ? " (probe)" : "", (long long)b->interior.x0,
                   (long long)b->interior.y0, (long long)b->interior.w, (long long)b->interior.h,
                   probe ? " (probe)" : "");
        tb_coast_block_result_free(&r); /* after the message, which reads it */
        return -1;
    }
    if (!probe && out) {
        const uint8_t *maps = (const uint8_t *)result + at;
        size_t iw = (size_t)b->interior.w, ih = (size_t)b->interior.h;
        int64_t x0 = b->interior.x0, first = b->interior.w < l->w - x0 ? b->interior.w : l->w - x0;
        void *dst[3] = {out->height_m, out->moved_m, out->exposure};
        const size_t size[3] = {4, 4, 2};
        size_t base = 0;
        for (int a = 0; a < 3; a++) {
            for (size_t y = 0; y < ih; y++) {
                uint8_t *row =
                    (uint8_t *)dst[a] +
                    (size_t)(b->interior.y0 + (int64_t)y - out->row0) * out->stride * size[a];
                const uint8_t *src = maps + base + y * iw * size[a];
                /* up to the seam, then from column 0 */
                memcpy(row + (size_t)x0 * size[a], src, (size_t)first * size[a]);
                if ((size_t)first < iw)
                    memcpy(row, src + (size_t)first * size[a], (iw - (size_t)first) * size[a]);
                /* every 64 rows, those rows of a mapped result and of the planet may leave memory
                 * (a call a row would drop and fault back the page the next row starts in) */
                if ((y + 1) % 64 == 0 || y + 1 == ih) {
                    size_t y0 = y - y % 64;
                    tb_job_result_done(maps + base + y0 * iw * size[a],
                                       (y + 1 - y0) * iw * size[a]);
                    tb_rows_done(&out->done, b->interior.y0 + (int64_t)y0,
                                 b->interior.y0 + (int64_t)y + 1);
                }
            }
            base += iw * ih * size[a];
        }
    }
    if (sum)
        tb_coast_tally_add(sum, &r.tally);
    tb_coast_block_result_free(&r);
    return 0;
}

/* ---- the rounds ---- */

int tb_coast_share_next(const tb_coast_tally_t *sum, const tb_coast_share_t *used, bool totals_only,
                        tb_coast_share_t *next, bool *final, tb_err_t *err)
{
    const int64_t limit = (int64_t)1 << 61;
    *final = false;
    if (used->bits[0] < 0) { /* a whole layout: its job took its own bits */
        *next = *used;
        *final = !totals_only;
        return 0;
    }
    int64_t t1 = sum->sources[0], t2 = sum->sources[1];
    if (t1 < 0 || t1 >= limit)
        return tb_err_set(err, TB_E_INVALID,
                          "coast: the planet's sediment sources (%lld units) exceed 2^61 units",
                          (long long)t1);
    next->bits[0] = tb_coast_share_bits(t1);
    /* t2 is the planet's own only when the round shared the first drift with its bits; otherwise
     * it is the second drift's sources at slightly other rounding, near enough to guess from */
    bool first_right = used->bits[0] == next->bits[0];
    if (t2 < 0 || t2 >= limit) {
        if (first_right)
            return tb_err_set(err, TB_E_INVALID,
                              "coast: the planet's second drift (%lld units) exceeds 2^61 units",
                              (long long)t2);
        t2 = t2 < 0 ? 0 : limit - 1;
    }
    next->bits[1] = tb_coast_share_bits(t2);
    *final = !totals_only && first_right && used->bits[1] == next->bits[1];
    return 0;
}

/* ---- in-process ---- */

int tb_coast_blocks_run(const tb_coast_params_t *p, tb_coast_planet_t *pl, tb_coast_maps_t *maps,
                        const tb_coast_layout_t *l, const tb_coast_share_t *known, int threads,
                        tb_coast_blocks_report_t *report, tb_err_t *err)
{
    memset(report, 0, sizeof *report);
    memset(&maps->stats, 0, sizeof maps->stats);
    if (l->w != pl->w || l->h != pl->h || l->cell_m != pl->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "coast blocks: a layout of a %lld x %lld planet for one of %lld x %lld",
                          (long long)l->w, (long long)l->h, (long long)pl->w, (long long)pl->h);
    size_t cells = (size_t)pl->w * (size_t)pl->h;
    /* the outputs' heights apart from the inputs, which every round's cuts read */
    float *height = tb_malloc(cells * sizeof *height, "coast blocks heights", err);
    tb_pool_t *pool = height ? tb_pool_new(1, err) : NULL;
    tb_coast_tally_t sum = {0};
    if (!pool || tb_coast_tally_init(&sum, err) != 0) {
        free(height);
        tb_pool_destroy(&pool);
        return -1;
    }
    tb_job_ctx_t ctx = {threads, pool, NULL, NULL};
    const tb_job_kind_t *kind = tb_job_find("coast_block");
    tb_coast_view_t view = {pl->height_m, pl->classes, (size_t)pl->w, 0};
    tb_coast_out_view_t out = {height, maps->moved_m, maps->exposure, (size_t)pl->w, 0};
    bool whole = tb_coast_layout_is_whole(l);
    /* a probe first unless the bits are known (a probe takes its windows' own: share unread) */
    tb_coast_share_t share = known ? *known : (tb_coast_share_t){{0, 0}};
    bool probe = !known && !whole, final = false;
    report->probed = probe;
    int rc = 0;
    while (rc == 0 && !final) {
        if (report->rounds == 4) {
            rc = tb_err_set(err, TB_E_INTERNAL, "coast blocks: the share bits did not settle");
            break;
        }
        report->rounds++;
        tb_coast_tally_free(&sum);
        if (tb_coast_tally_init(&sum, err) != 0) {
            rc = -1;
            break;
        }
        for (size_t b = 0; rc == 0 && b < l->n; b++) {
            void *spec = NULL;
            size_t n = 0;
            tb_job_output_t res = {0};
            rc = tb_coast_block_cut(l, b, &view, pl->mouths, pl->n_mouths, p, pl->legend, &share,
                                    probe, &spec, &n, err);
            if (rc == 0)
                rc = tb_job_run(kind->name, spec, n, &ctx, &res, err);
            if (rc == 0)
                rc = tb_job_check_result(kind, spec, n, res.data, res.bytes, err);
            if (rc == 0)
                rc = tb_coast_block_scatter(l, b, res.data, res.bytes, probe, &out, &sum, err);
            report->largest_spec_bytes =
                n > report->largest_spec_bytes ? n : report->largest_spec_bytes;
            report->largest_result_bytes =
                res.bytes > report->largest_result_bytes ? res.bytes : report->largest_result_bytes;
            free(spec);
            tb_job_output_free(&res);
        }
        if (rc != 0)
            break;
        tb_coast_share_t next;
        rc = tb_coast_share_next(&sum, whole ? &(tb_coast_share_t){{-1, -1}} : &share, probe, &next,
                                 &final, err);
        report->share = whole ? (tb_coast_share_t){{-1, -1}} : share;
        share = next;
        probe = false;
    }
    if (rc == 0) {
        memcpy(pl->height_m, height, cells * sizeof *height);
        tb_coast_stats_from_tally(&sum, pl->cell_m, &maps->stats);
    }
    tb_coast_tally_free(&sum);
    free(height);
    tb_pool_destroy(&pool);
    return rc;
}
