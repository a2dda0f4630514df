/* The coastal pass in order (docs/coast.md): distances, bathymetry, exposure, its carry, surf,
 * river supply, sediment, statistics. Typical size: a whole planet, 3 M (demo) to 76 M cells
 * (12500 x 6076 at 8 m); about 45 bytes a cell at the peak (the drifts' weights and room among
 * them), the two distance transforms never alive beside the two 8-byte sediment arrays. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/edt.h"
#include "jobs/coast/methods.h"

#define S_BACKSHORE_BIN_M 0.1
#define S_BACKSHORE_BINS 100001 /* 0 .. 10 km in decimetres; higher land counts in the last bin */

const char *const tb_coast_phase_names[TB_COAST_PHASES] = {
    "distances", "bathymetry", "exposure", "carry", "surf", "sediment", "statistics"};

typedef struct {
    bool (*fn)(void *user, double fraction, const char *note);
    void *user;
} s_progress_t;

static double s_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Charges the CPU time since *t0 to a phase of debug (when there is one). */
static void s_phase(tb_coast_debug_t *debug, int phase, double *t0)
{
    double t = s_cpu_s();
    if (debug)
        debug->phase_cpu_s[phase] += t - *t0;
    *t0 = t;
}

static int s_progress(const s_progress_t *p, double f, const char *note, tb_err_t *err)
{
    if (p->fn && p->fn(p->user, f, note))
        return tb_err_set(err, TB_E_INTERRUPTED, "coast: interrupted at %s", note);
    return 0;
}

static int s_check_input(const tb_coast_params_t *p, const tb_coast_planet_t *pl, tb_err_t *err)
{
    if (pl->w < 3 || pl->h < 1 || pl->h > TB_COAST_MAX_CELLS / pl->w || !(pl->cell_m > 0))
        return tb_err_set(err, TB_E_INVALID,
                          "coast: a planet of %lld x %lld cells of %g m (at "
                          "least 3 columns, at most %lld cells)",
                          (long long)pl->w, (long long)pl->h, pl->cell_m,
                          (long long)TB_COAST_MAX_CELLS);
    if (tb_coast_params_check(p, pl->cell_m, pl->w, err) != 0)
        return -1;
    size_t cells = (size_t)pl->w * (size_t)pl->h;
    for (size_t i = 0; i < cells; i++) {
        if (pl->classes[i] >= pl->legend->n)
            return tb_err_set(err, TB_E_INVALID, "coast: cell %zu has class %u of %d", i,
                              pl->classes[i], pl->legend->n);
        if (!isfinite(pl->height_m[i]))
            return tb_err_set(err, TB_E_INVALID, "coast: cell %zu has a height that is not finite",
                              i);
    }
    for (int c = 0; c < pl->legend->n; c++)
        if (pl->legend->ocean[c] && !(pl->legend->depth_m[c] > 0 && pl->legend->depth_m[c] < 2e4))
            return tb_err_set(err, TB_E_INVALID, "coast: ocean class %d has depth %g m", c,
                              pl->legend->depth_m[c]);
    for (size_t k = 0; k < pl->n_mouths; k++) {
        const tb_coast_mouth_t *m = &pl->mouths[k];
        if (m->x < 0 || m->x >= pl->w || m->y < 0 || m->y >= pl->h || !isfinite(m->eroded_m3) ||
            m->eroded_m3 < 0 || m->eroded_m3 > 1e15)
            return tb_err_set(err, TB_E_INVALID,
                              "coast: river mouth %zu at (%lld, %lld) with %g "
                              "m3 is outside the planet or its volume is not in 0..1e15",
                              k, (long long)m->x, (long long)m->y, m->eroded_m3);
    }
    return 0;
}

typedef struct {
    int64_t w;
    const uint8_t *land;
    uint8_t *sea;
    uint32_t *d2;
    const uint32_t *tmp;
    /* the carry */
    int64_t *acc;
    uint16_t *exposure;
    int64_t *hist; /* per thread, TB_COAST_EXPOSURE_ONE + 1 each */
    const tb_coast_band_t *band;
    int64_t blocks; /* the carry's band: every cell of a farther block is past carry_m */
    const tb_coast_params_t *p;
    double cell_m;
} s_rows_t;

static void s_sea_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_rows_t *c = ctx;
    for (size_t i = (size_t)y0 * (size_t)c->w; i < (size_t)y1 * (size_t)c->w; i++)
        c->sea[i] = !c->land[i];
}

static void s_merge_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_rows_t *c = ctx;
    for (size_t i = (size_t)y0 * (size_t)c->w; i < (size_t)y1 * (size_t)c->w; i++)
        if (c->land[i])
            c->d2[i] = c->tmp[i];
}

/* The distances of every cell from the waterline: sea to land, and land to sea, in one array. */
static int s_distances(tb_pool_t *pool, const uint8_t *land, int64_t w, int64_t h, int threads,
                       uint32_t *d2, tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    if (tb_edt_squared(land, w, h, true, threads, d2, err) != 0)
        return -1;
    uint8_t *sea = tb_malloc(cells, "coast sea mask", err);
    uint32_t *tmp = sea ? tb_malloc(cells * sizeof *tmp, "coast land distances", err) : NULL;
    int rc = -1;
    if (!tmp)
        goto done;
    s_rows_t c = {.w = w, .land = land, .sea = sea, .d2 = d2, .tmp = tmp};
    tb_coast_par_rows(pool, h, s_sea_rows, &c);
    if (tb_edt_squared(sea, w, h, true, threads, tmp, err) != 0)
        goto done;
    tb_coast_par_rows(pool, h, s_merge_rows, &c);
    rc = 0;
done:
    free(sea);
    free(tmp);
    return rc;
}

/* No cell past this squared distance in cells is within carry_m of the waterline: sqrt(d2) - 0.5
 * <= carry_m / cell_m < carry_m / cell_m + 1.5. */
static uint32_t s_carry_d2(const tb_coast_params_t *p, double cell_m)
{
    double cells = p->carry_m / cell_m + 1.5;
    return (uint32_t)fmin(4e9, ceil(cells * cells));
}

static void s_hist_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_rows_t *c = ctx;
    int64_t *hist = c->hist + (size_t)thread * (TB_COAST_EXPOSURE_ONE + 1);
    for (size_t i = (size_t)y0 * (size_t)c->w; i < (size_t)y1 * (size_t)c->w; i++)
        if (c->acc[i])
            hist[c->acc[i] >> 24]++;
}

/* The carried exposure: the mean of the waterline cells in the box, kept within carry_m of the
 * waterline, a round band (the surf and the deposition read it only nearer than that). carry_d2:
 * no cell past this squared distance is within carry_m. */
static void s_mean_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_rows_t *c = ctx;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < c->band->bw; bx++) {
            int64_t x0, x1;
            size_t row = (size_t)y * (size_t)c->w;
            if (!tb_coast_band_in(c->band, y, bx, c->blocks, &x0, &x1)) {
                /* every cell there is past carry_m, where the trim below clears any mean */
                for (size_t i = row + (size_t)x0; i < row + (size_t)x1; i++)
                    c->exposure[i] = TB_COAST_NO_EXPOSURE;
                continue;
            }
            for (size_t i = row + (size_t)x0; i < row + (size_t)x1; i++) {
                int64_t count = c->acc[i] & 0xFFFFFF, sum = c->acc[i] >> 24;
                uint16_t e =
                    count ? (uint16_t)((2 * sum + count) / (2 * count)) : TB_COAST_NO_EXPOSURE;
                /* the box carried the exposure to its square; keep it within carry_m of the
                 * waterline, a round band (the surf and the deposition read it only nearer) */
                if (e != TB_COAST_NO_EXPOSURE &&
                    tb_coast_waterline_m(c->d2[i], c->cell_m) > c->p->carry_m)
                    e = TB_COAST_NO_EXPOSURE;
                c->exposure[i] = e;
            }
        }
}

/* Exposure percentiles over the waterline (histogram of thousandths) and the carry of each
 * waterline cell's exposure to the cells within carry_m: normalised box sum of the packed
 * (exposure << 24 | 1), so the carried value is the mean of the waterline cells in the box. */
static int s_carry(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m, int64_t w, int64_t h,
                   int64_t *acc, uint16_t *exposure, const tb_coast_band_t *band, uint32_t *d2,
                   tb_coast_stats_t *s, tb_err_t *err)
{
    int64_t hist[TB_COAST_EXPOSURE_ONE + 1] = {0}, n = 0;
    int threads = tb_pool_threads(pool);
    int64_t *per = tb_calloc((size_t)threads * (TB_COAST_EXPOSURE_ONE + 1), sizeof *per,
                             "coast exposure histogram", err);
    if (!per)
        return -1;
    s_rows_t c = {.w = w,
                  .acc = acc,
                  .exposure = exposure,
                  .hist = per,
                  .band = band,
                  .blocks = tb_coast_band_blocks(s_carry_d2(p, cell_m)),
                  .p = p,
                  .cell_m = cell_m,
                  .d2 = d2};
    tb_coast_par_rows(pool, h, s_hist_rows, &c);
    for (int t = 0; t < threads; t++)
        for (int e = 0; e <= TB_COAST_EXPOSURE_ONE; e++)
            hist[e] += per[(size_t)t * (TB_COAST_EXPOSURE_ONE + 1) + (size_t)e];
    free(per);
    for (int e = 0; e <= TB_COAST_EXPOSURE_ONE; e++)
        n += hist[e];
    s->waterline_cells = n;
    double *pct[3] = {&s->exposure_p10, &s->exposure_p50, &s->exposure_p90};
    const double at[3] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        int64_t need = (int64_t)ceil(at[k] * (double)n), seen = 0;
        int e = 0;
        while (n > 0 && e < TB_COAST_EXPOSURE_ONE && seen + hist[e] < (need > 0 ? need : 1))
            seen += hist[e++];
        *pct[k] = n > 0 ? e / (double)TB_COAST_EXPOSURE_ONE : 0;
    }
    if (tb_coast_boxsum_i64(pool, acc, w, h, tb_coast_radius_cells(p->carry_m, cell_m), err) != 0)
        return -1;
    tb_coast_par_rows(pool, h, s_mean_rows, &c);
    return 0;
}

/* A mouth's share of its eroded volume, river_share, in whole units. */
static int64_t s_mouth_units(const tb_coast_params_t *p, const tb_coast_planet_t *pl,
                             const tb_coast_mouth_t *m)
{
    double unit_m3 = TB_COAST_UNIT_M * pl->cell_m * pl->cell_m;
    return (int64_t)floor(m->eroded_m3 * p->river_share / unit_m3 + 0.5);
}

/* Adds every mouth's units to units[] at its cell. */
static void s_river_units(const tb_coast_params_t *p, const tb_coast_planet_t *pl, int64_t *units)
{
    for (size_t k = 0; k < pl->n_mouths; k++) {
        const tb_coast_mouth_t *m = &pl->mouths[k];
        int64_t u = s_mouth_units(p, pl, m);
        if (u > 0)
            units[(size_t)m->y * (size_t)pl->w + (size_t)m->x] += u;
    }
}

/* Every mouth with units: its cell and units, in pairs; returns how many. */
static size_t s_river_cells(const tb_coast_params_t *p, const tb_coast_planet_t *pl, int64_t *pairs)
{
    size_t n = 0;
    for (size_t k = 0; k < pl->n_mouths; k++) {
        const tb_coast_mouth_t *m = &pl->mouths[k];
        int64_t u = s_mouth_units(p, pl, m);
        if (u <= 0)
            continue;
        pairs[2 * n] = m->y * pl->w + m->x;
        pairs[2 * n + 1] = u;
        n++;
    }
    return n;
}

/* River supply: river_share of each mouth's eroded volume, in whole units, at the mouth's cell. */
static void s_rivers(const tb_coast_params_t *p, const tb_coast_planet_t *pl, int64_t *src,
                     tb_coast_stats_t *s)
{
    double unit_m3 = TB_COAST_UNIT_M * pl->cell_m * pl->cell_m;
    int64_t units = 0;
    for (size_t k = 0; k < pl->n_mouths; k++) {
        int64_t u = s_mouth_units(p, pl, &pl->mouths[k]);
        if (u <= 0)
            continue;
        units += u;
        s->mouths++;
    }
    s_river_units(p, pl, src);
    s->river_m3 = (double)units * unit_m3;
}

typedef struct {
    const tb_coast_params_t *p;
    const tb_coast_planet_t *pl;
    const uint8_t *kind;
    const uint32_t *d2;
    const float *moved;
    int64_t *hist;        /* per thread, S_BACKSHORE_BINS each */
    int64_t (*counts)[5]; /* per thread: edges, drowned, sea, shelf, backshore cells */
} s_ground_t;

static void s_ground_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_ground_t *c = ctx;
    const tb_coast_planet_t *pl = c->pl;
    const uint8_t *kind = c->kind;
    int64_t w = pl->w, h = pl->h;
    int64_t *hist = c->hist + (size_t)thread * S_BACKSHORE_BINS;
    int64_t edges = 0, drowned = 0, sea = 0, shelf = 0, backshore = 0;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t x = 0; x < w; x++) {
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            bool is_land = kind[i] == TB_COAST_LAND;
            bool east = kind[(size_t)y * (size_t)w + (size_t)tb_wrap(x + 1, w)] == TB_COAST_LAND;
            edges += is_land != east;
            if (y + 1 < h)
                edges += is_land != (kind[i + (size_t)w] == TB_COAST_LAND);
            float z = pl->height_m[i];
            if (!is_land) {
                sea++;
                shelf += (double)z >= -c->p->break_depth_m;
                continue;
            }
            if (z <= 0 && (double)z - (double)c->moved[i] > 0)
                drowned++;
            double dist = tb_coast_waterline_m(c->d2[i], pl->cell_m);
            if (c->d2[i] == UINT32_MAX || dist < c->p->surf_reach_m ||
                dist > 2 * c->p->surf_reach_m)
                continue;
            double b = floor((double)z / S_BACKSHORE_BIN_M);
            hist[b < 0 ? 0 : b >= S_BACKSHORE_BINS ? S_BACKSHORE_BINS - 1 : (int64_t)b]++;
            backshore++;
        }
    int64_t *n = c->counts[thread];
    n[0] += edges;
    n[1] += drowned;
    n[2] += sea;
    n[3] += shelf;
    n[4] += backshore;
}

/* The ground statistics of the block after the pass: shoreline, sea and shelf shares, the
 * backshore (the land one to two surf reaches inland, not the drop to the next cell: the
 * predecessor's E1), drowned land. Integer counts per thread, summed in any order. */
static int s_ground_stats(tb_pool_t *pool, const tb_coast_params_t *p, const tb_coast_planet_t *pl,
                          const uint8_t *kind, const uint32_t *d2, const float *moved,
                          tb_coast_stats_t *s, tb_err_t *err)
{
    int threads = tb_pool_threads(pool);
    int64_t *hist = tb_calloc((size_t)threads * S_BACKSHORE_BINS, sizeof *hist,
                              "coast backshore histogram", err);
    int64_t(*counts)[5] =
        hist ? tb_calloc((size_t)threads, sizeof *counts, "coast ground counts", err) : NULL;
    if (!counts) {
        free(hist);
        return -1;
    }
    s_ground_t c = {p, pl, kind, d2, moved, hist, counts};
    tb_coast_par_rows(pool, pl->h, s_ground_rows, &c);
    int64_t n[5] = {0};
    for (int t = 0; t < threads; t++) {
        for (int k = 0; k < 5; k++)
            n[k] += counts[t][k];
        if (t > 0)
            for (int64_t b = 0; b < S_BACKSHORE_BINS; b++)
                hist[b] += hist[(size_t)t * S_BACKSHORE_BINS + (size_t)b];
    }
    free(counts);
    s->cells = pl->w * pl->h;
    s->sea_cells = n[2];
    s->shelf_cells = n[3];
    s->backshore_cells = n[4];
    s->shore_km = (double)n[0] * pl->cell_m / 1000.0;
    s->drowned_m2 = (double)n[1] * pl->cell_m * pl->cell_m;
    double *out[2] = {&s->backshore_median_m, &s->backshore_p90_m};
    const double at[2] = {0.5, 0.9};
    for (int k = 0; k < 2; k++) {
        int64_t need = (int64_t)ceil(at[k] * (double)s->backshore_cells), seen = 0, b = 0;
        while (s->backshore_cells > 0 && b < S_BACKSHORE_BINS - 1 &&
               seen + hist[b] < (need > 0 ? need : 1))
            seen += hist[b++];
        *out[k] = s->backshore_cells > 0 ? ((double)b + 0.5) * S_BACKSHORE_BIN_M : 0;
    }
    free(hist);
    return 0;
}

static void s_kind_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const tb_coast_planet_t *pl = ((void **)ctx)[0];
    uint8_t *kind = ((void **)ctx)[1];
    for (size_t i = (size_t)y0 * (size_t)pl->w; i < (size_t)y1 * (size_t)pl->w; i++)
        kind[i] = !pl->legend->ocean[pl->classes[i]];
}

static double s_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int tb_coast_run(const tb_coast_params_t *p, tb_coast_planet_t *pl, tb_coast_maps_t *maps,
                 int threads, tb_coast_debug_t *debug,
                 bool (*progress)(void *user, double fraction, const char *note), void *user,
                 tb_err_t *err)
{
    memset(&maps->stats, 0, sizeof maps->stats);
    if (s_check_input(p, pl, err) != 0)
        return -1;
    s_progress_t prog = {progress, user};
    int64_t w = pl->w, h = pl->h;
    size_t cells = (size_t)w * (size_t)h;
    tb_coast_stats_t *s = &maps->stats;
    /* the pass's own pool (docs/coast.md, "Threads"): the same bits on any number of threads */
    if (threads > TB_COAST_MAX_THREADS)
        threads = TB_COAST_MAX_THREADS;
    tb_pool_t *pool = threads > 1 ? tb_pool_new(threads, err) : NULL;
    if (threads > 1 && !pool)
        return -1;
    double t0 = s_cpu_s(), wall0 = s_wall_s();
#define S_PHASE(ph)                                                                                \
    do {                                                                                           \
        s_phase(debug, ph, &t0);                                                                   \
        double wall1_ = s_wall_s();                                                                \
        if (debug)                                                                                 \
            debug->phase_wall_s[ph] += wall1_ - wall0;                                             \
        wall0 = wall1_;                                                                            \
    } while (0)
    uint8_t *kind = tb_malloc(cells, "coast cell kinds", err);
    uint32_t *d2 = kind ? tb_malloc(cells * sizeof *d2, "coast distances", err) : NULL;
    int64_t *acc = NULL, *src = NULL, *mouths = NULL;
    float *stretch = NULL;
    tb_coast_band_t band = {0};
    int rc = -1;
    if (!d2)
        goto done;
    void *kind_ctx[2] = {pl, kind};
    tb_coast_par_rows(pool, h, s_kind_rows, kind_ctx);
    if (s_progress(&prog, 0.0, "distances", err) != 0 ||
        s_distances(pool, kind, w, h, threads, d2, err) != 0)
        goto done;
    S_PHASE(TB_COAST_PHASE_DISTANCES);
    tb_coast_bathymetry_shelf_slope(pool, p, pl->cell_m, w, h, kind, d2, pl->classes, pl->legend,
                                    pl->height_m, kind);
    if (tb_coast_band_make(pool, kind, w, h, &band, err) != 0)
        goto done;
    S_PHASE(TB_COAST_PHASE_BATHYMETRY);
    acc = tb_malloc(cells * sizeof *acc, "coast exposure", err);
    if (!acc || s_progress(&prog, 0.3, "exposure", err) != 0 ||
        tb_coast_exposure_fetch_sweeps(pool, p, pl->cell_m, w, h, kind, acc, debug, err) != 0)
        goto done;
    S_PHASE(TB_COAST_PHASE_EXPOSURE);
    if (s_carry(pool, p, pl->cell_m, w, h, acc, maps->exposure, &band, d2, s, err) != 0)
        goto done;
    S_PHASE(TB_COAST_PHASE_CARRY);
    src = tb_calloc(cells, sizeof *src, "coast sediment", err);
    if (!src || s_progress(&prog, 0.6, "surf", err) != 0)
        goto done;
    memset(maps->moved_m, 0, cells * sizeof *maps->moved_m);
    tb_coast_surf_platform_cut(pool, p, pl->cell_m, w, h, kind, d2, maps->exposure, pl->height_m,
                               maps->moved_m, src, &band, s);
    s_rivers(p, pl, src, s);
    /* the delta stretch from the rivers alone (their cells and units), acc as scratch */
    stretch = tb_malloc(cells * sizeof *stretch, "coast delta stretch", err);
    if (!stretch || !(mouths = tb_malloc((pl->n_mouths ? pl->n_mouths : 1) * 2 * sizeof *mouths,
                                         "coast river mouths", err)))
        goto done;
    size_t n_mouths = s_river_cells(p, pl, mouths);
    if (tb_coast_delta_stretch(pool, p, pl->cell_m, w, h, mouths, n_mouths, acc, stretch, &band,
                               err) != 0)
        goto done;
    free(mouths);
    mouths = NULL;
    S_PHASE(TB_COAST_PHASE_SURF);
    if (s_progress(&prog, 0.7, "sediment", err) != 0 ||
        tb_coast_sediment_drift_deposit(pool, p, pl->cell_m, w, h, kind, d2, maps->exposure,
                                        stretch, src, acc, pl->height_m, maps->moved_m, &band, s,
                                        debug, err) != 0)
        goto done;
    free(acc);
    free(src);
    free(stretch);
    acc = src = NULL;
    stretch = NULL;
    S_PHASE(TB_COAST_PHASE_SEDIMENT);
    if (s_ground_stats(pool, p, pl, kind, d2, maps->moved_m, s, err) != 0)
        goto done;
    S_PHASE(TB_COAST_PHASE_STATS);
#undef S_PHASE
    rc = s_progress(&prog, 1.0, "done", err);
done:
    tb_coast_band_free(&band);
    free(kind);
    free(d2);
    free(acc);
    free(src);
    free(stretch);
    free(mouths);
    tb_pool_destroy(&pool);
    return rc;
}
