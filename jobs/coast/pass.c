/* The coastal pass in order (docs/coast.md): distances, bathymetry, exposure, its carry, surf,
 * river supply, sediment, statistics. Typical size: a whole planet, 3 M (demo) to 76 M cells
 * (12500 x 6076 at 8 m); about 36 bytes a cell of workspace at the peak, the two distance
 * transforms never alive beside the two 8-byte sediment arrays. */
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

/* The distances of every cell from the waterline: sea to land, and land to sea, in one array. */
static int s_distances(const uint8_t *land, int64_t w, int64_t h, int threads, uint32_t *d2,
                       tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    if (tb_edt_squared(land, w, h, true, threads, d2, err) != 0)
        return -1;
    uint8_t *sea = tb_malloc(cells, "coast sea mask", err);
    uint32_t *tmp = sea ? tb_malloc(cells * sizeof *tmp, "coast land distances", err) : NULL;
    int rc = -1;
    if (!tmp)
        goto done;
    for (size_t i = 0; i < cells; i++)
        sea[i] = !land[i];
    if (tb_edt_squared(sea, w, h, true, threads, tmp, err) != 0)
        goto done;
    for (size_t i = 0; i < cells; i++)
        if (land[i])
            d2[i] = tmp[i];
    rc = 0;
done:
    free(sea);
    free(tmp);
    return rc;
}

/* Exposure percentiles over the waterline (histogram of thousandths) and the carry of each
 * waterline cell's exposure to the cells within carry_m: normalised box sum of the packed
 * (exposure << 24 | 1), so the carried value is the mean of the waterline cells in the box. */
static int s_carry(const tb_coast_params_t *p, double cell_m, int64_t w, int64_t h, int64_t *acc,
                   uint16_t *exposure, tb_coast_stats_t *s, tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    int64_t hist[TB_COAST_EXPOSURE_ONE + 1] = {0}, n = 0;
    for (size_t i = 0; i < cells; i++)
        if (acc[i]) {
            hist[acc[i] >> 24]++;
            n++;
        }
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
    if (tb_coast_boxsum_i64(acc, w, h, tb_coast_radius_cells(p->carry_m, cell_m), err) != 0)
        return -1;
    for (size_t i = 0; i < cells; i++) {
        int64_t count = acc[i] & 0xFFFFFF, sum = acc[i] >> 24;
        exposure[i] = count ? (uint16_t)((2 * sum + count) / (2 * count)) : TB_COAST_NO_EXPOSURE;
    }
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

/* The ground statistics of the block after the pass: shoreline, sea and shelf shares, the
 * backshore (the land one to two surf reaches inland, not the drop to the next cell: the
 * predecessor's E1), drowned land. */
static int s_ground_stats(const tb_coast_params_t *p, const tb_coast_planet_t *pl,
                          const uint8_t *kind, const uint32_t *d2, const float *moved,
                          tb_coast_stats_t *s, tb_err_t *err)
{
    int64_t w = pl->w, h = pl->h;
    size_t cells = (size_t)w * (size_t)h;
    int64_t *hist = tb_calloc(S_BACKSHORE_BINS, sizeof *hist, "coast backshore histogram", err);
    if (!hist)
        return -1;
    int64_t edges = 0, drowned = 0;
    s->cells = (int64_t)cells;
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            bool is_land = kind[i] == TB_COAST_LAND;
            bool east = kind[(size_t)y * (size_t)w + (size_t)tb_wrap(x + 1, w)] == TB_COAST_LAND;
            edges += is_land != east;
            if (y + 1 < h)
                edges += is_land != (kind[i + (size_t)w] == TB_COAST_LAND);
            float z = pl->height_m[i];
            if (!is_land) {
                s->sea_cells++;
                s->shelf_cells += (double)z >= -p->break_depth_m;
                continue;
            }
            if (z <= 0 && (double)z - (double)moved[i] > 0)
                drowned++;
            double dist = tb_coast_waterline_m(d2[i], pl->cell_m);
            if (d2[i] == UINT32_MAX || dist < p->surf_reach_m || dist > 2 * p->surf_reach_m)
                continue;
            double b = floor((double)z / S_BACKSHORE_BIN_M);
            hist[b < 0 ? 0 : b >= S_BACKSHORE_BINS ? S_BACKSHORE_BINS - 1 : (int64_t)b]++;
            s->backshore_cells++;
        }
    s->shore_km = (double)edges * pl->cell_m / 1000.0;
    s->drowned_m2 = (double)drowned * pl->cell_m * pl->cell_m;
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

int tb_coast_run(const tb_coast_params_t *p, tb_coast_planet_t *pl, tb_coast_maps_t *maps,
                 int threads, tb_coast_debug_t *debug,
                 bool (*progress)(void *user, double fraction, const char *note), void *user,
                 tb_err_t *err)
{
    memset(&maps->stats, 0, sizeof maps->stats);
    if (s_check_input(p, pl, err) != 0)
        return -1;
    s_progress_t prog = {progress, user};
    double t0 = s_cpu_s();
    int64_t w = pl->w, h = pl->h;
    size_t cells = (size_t)w * (size_t)h;
    tb_coast_stats_t *s = &maps->stats;
    uint8_t *kind = tb_malloc(cells, "coast cell kinds", err);
    uint32_t *d2 = kind ? tb_malloc(cells * sizeof *d2, "coast distances", err) : NULL;
    int64_t *acc = NULL, *src = NULL;
    float *stretch = NULL;
    int rc = -1;
    if (!d2)
        goto done;
    for (size_t i = 0; i < cells; i++)
        kind[i] = !pl->legend->ocean[pl->classes[i]];
    if (s_progress(&prog, 0.0, "distances", err) != 0 ||
        s_distances(kind, w, h, threads, d2, err) != 0)
        goto done;
    s_phase(debug, TB_COAST_PHASE_DISTANCES, &t0);
    tb_coast_bathymetry_shelf_slope(p, pl->cell_m, cells, kind, d2, pl->classes, pl->legend,
                                    pl->height_m, kind);
    s_phase(debug, TB_COAST_PHASE_BATHYMETRY, &t0);
    acc = tb_malloc(cells * sizeof *acc, "coast exposure", err);
    if (!acc || s_progress(&prog, 0.3, "exposure", err) != 0 ||
        tb_coast_exposure_fetch_sweeps(p, pl->cell_m, w, h, kind, acc, err) != 0)
        goto done;
    s_phase(debug, TB_COAST_PHASE_EXPOSURE, &t0);
    if (s_carry(p, pl->cell_m, w, h, acc, maps->exposure, s, err) != 0)
        goto done;
    /* the box carried the exposure to its square; keep it within carry_m of the waterline, a round
     * band (the surf and the deposition read it only nearer than that) */
    for (size_t i = 0; i < cells; i++)
        if (maps->exposure[i] != TB_COAST_NO_EXPOSURE &&
            tb_coast_waterline_m(d2[i], pl->cell_m) > p->carry_m)
            maps->exposure[i] = TB_COAST_NO_EXPOSURE;
    s_phase(debug, TB_COAST_PHASE_CARRY, &t0);
    src = tb_calloc(cells, sizeof *src, "coast sediment", err);
    if (!src || s_progress(&prog, 0.6, "surf", err) != 0)
        goto done;
    memset(maps->moved_m, 0, cells * sizeof *maps->moved_m);
    tb_coast_surf_platform_cut(p, pl->cell_m, cells, kind, d2, maps->exposure, pl->height_m,
                               maps->moved_m, src, s);
    s_rivers(p, pl, src, s);
    /* the delta stretch from the rivers alone, acc as scratch */
    stretch = tb_malloc(cells * sizeof *stretch, "coast delta stretch", err);
    if (!stretch)
        goto done;
    memset(acc, 0, cells * sizeof *acc);
    s_river_units(p, pl, acc);
    if (tb_coast_delta_stretch(p, pl->cell_m, w, h, acc, stretch, err) != 0)
        goto done;
    s_phase(debug, TB_COAST_PHASE_SURF, &t0);
    if (s_progress(&prog, 0.7, "sediment", err) != 0 ||
        tb_coast_sediment_drift_deposit(p, pl->cell_m, w, h, kind, d2, maps->exposure, stretch, src,
                                        acc, pl->height_m, maps->moved_m, s, debug, err) != 0)
        goto done;
    free(acc);
    free(src);
    free(stretch);
    acc = src = NULL;
    stretch = NULL;
    s_phase(debug, TB_COAST_PHASE_SEDIMENT, &t0);
    if (s_ground_stats(p, pl, kind, d2, maps->moved_m, s, err) != 0)
        goto done;
    s_phase(debug, TB_COAST_PHASE_STATS, &t0);
    rc = s_progress(&prog, 1.0, "done", err);
done:
    free(kind);
    free(d2);
    free(acc);
    free(src);
    free(stretch);
    return rc;
}
