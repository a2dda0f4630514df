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

#define S_BACKSHORE_BIN_M TB_COAST_BACKSHORE_BIN_M
#define S_BACKSHORE_BINS TB_COAST_BACKSHORE_BINS

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

/* What the distance transform's row pass does with each row as it finishes, while the row is in
 * cache: the band's marks from the row's land mask, then the bathymetry, which rewrites the row of
 * the mask as kinds (the transform has read it for the last time). */
typedef struct {
    uint8_t *band_bits;
    const uint8_t *land;
    int64_t w;
    const tb_coast_bathy_t *bathy;
} s_row_done_t;

static void s_row_done(void *ctx, int64_t y, const uint32_t *d2_row, int thread)
{
    (void)thread;
    const s_row_done_t *c = ctx;
    tb_coast_band_mark_row(c->band_bits, c->land, c->w, y);
    tb_coast_bathymetry_row(c->bathy, y, d2_row);
}

/* The squared distance in cells past which a phase reading d2 within `metres` of the waterline
 * reads the same as "far": the distance in cells plus two, squared (every phase's own gate keeps a
 * margin of 1.5 cells). */
static uint32_t s_cap_d2(double metres, double cell_m)
{
    double cells = metres / cell_m + 2;
    return (uint32_t)fmin((double)UINT32_MAX, ceil(cells * cells));
}

void tb_coast_distance_caps(const tb_coast_params_t *p, double cell_m, uint32_t caps[2])
{
    caps[0] = s_cap_d2(fmax(fmax((p->shelf_km + p->slope_km) * 1000.0, p->carry_m),
                            p->deposit_reach_m * TB_COAST_MAX_STRETCH),
                       cell_m);
    caps[1] = s_cap_d2(fmax(p->carry_m, 2 * p->surf_reach_m), cell_m);
}

/* The distances of every cell from the waterline, sea to land and land to sea, in one transform
 * (docs/coast.md, "Distances"), with the bathymetry and the band's marks made row by row in its row
 * pass: kind[] goes in as the land mask and comes out as kinds. *band_bits (zeroed here) gets the
 * marks. */
static int s_distances(tb_pool_t *pool, const tb_coast_params_t *p, tb_coast_planet_t *pl,
                       uint8_t *kind, uint32_t *d2, uint8_t **band_bits, tb_err_t *err)
{
    /* a chunk of the transform's rows is one row of the band's blocks */
    _Static_assert(TB_EDT_CHUNK_ROWS == TB_COAST_BAND_BLOCK, "a chunk of rows is a block row");
    *band_bits = tb_calloc(tb_coast_band_bits_size(pl->w, pl->h), 1, "coast band blocks", err);
    if (!*band_bits)
        return -1;
    tb_coast_bathy_t bathy;
    tb_coast_bathymetry_init(&bathy, p, pl->cell_m, pl->w, pl->classes, pl->legend, pl->height_m,
                             kind);
    s_row_done_t c = {*band_bits, kind, pl->w, &bathy};
    uint32_t caps[2];
    tb_coast_distance_caps(p, pl->cell_m, caps);
    int rc = tb_edt_squared_both(kind, pl->w, pl->h, true, caps, pool, d2, s_row_done, &c, err);
    tb_coast_bathymetry_free(&bathy);
    return rc;
}

/* No cell past this squared distance in cells is within carry_m of the waterline: sqrt(d2) - 0.5
 * <= carry_m / cell_m < carry_m / cell_m + 1.5. */
static uint32_t s_carry_d2(const tb_coast_params_t *p, double cell_m)
{
    double cells = p->carry_m / cell_m + 1.5;
    return (uint32_t)fmin(4e9, ceil(cells * cells));
}

/* The carry (docs/coast.md, "Exposure"): each cell's box of radius r holds the waterline cells
 * whose packed (exposure << 24) | 1 it sums (the count in the low 24 bits: at most 4001^2 cells).
 * The 2r + 1 rows of the box slide down the planet; per column the sum of the waterline cells in
 * those rows within r columns is kept as a difference along the row (diff, with base the sum at
 * column 0), where each waterline cell entering or leaving the rows changes two or three numbers,
 * and a row's sums are its prefix. A band of output rows starts from the 2r + 1 rows round its
 * first, so any split of the rows gives the same exact sums. */
typedef struct {
    const tb_coast_waterline_t *wl;
    int64_t w, h, r, bands;
    uint32_t keep_d2; /* a cell with d2 past this is farther than carry_m */
    const uint32_t *d2;
    uint16_t *exposure;
    const tb_coast_band_t *band;
    int64_t blocks; /* the carry's band: every cell of a farther block is past carry_m */
    int64_t *mem;   /* 2 w + 1 a band: diff (w + 1), then the row's sums (w) */
} s_carry_t;

/* Adds sign times waterline row y's cells to diff and base: each one's packed value over the
 * 2r + 1 columns round it, X wrapping (2r + 1 <= w, so the two pieces of a window across the seam
 * do not overlap). */
static void s_carry_row(const s_carry_t *c, int64_t *diff, int64_t *base, int64_t y, int64_t sign)
{
    int64_t w = c->w, r = c->r;
    for (int64_t j = c->wl->row[y]; j < c->wl->row[y + 1]; j++) {
        int64_t v = sign * ((int64_t)c->wl->exposure[j] << 24 | 1);
        int64_t a = c->wl->x[j] - r, b = c->wl->x[j] + r + 1;
        if (a < 0) { /* [a + w, w) and [0, b) */
            *base += v;
            diff[a + w] += v;
            diff[b] -= v;
        } else if (b > w) { /* [a, w) and [0, b - w) */
            *base += v;
            diff[a] += v;
            diff[b - w] -= v;
        } else {
            diff[a] += v;
            diff[b] -= v;
        }
    }
}

/* Output row y: the mean of the waterline cells in the box, rounded half up, where the box holds
 * one and the cell is within carry_m of the waterline, a round band (the surf and the deposition
 * read it only nearer than that); TB_COAST_NO_EXPOSURE elsewhere, and without reading the sums in
 * the blocks the band puts past carry_m. In doubles, in a loop the compiler vectorises: the count
 * (below 2^24) and the sum (below 2^34, as its bits above and below bit 32) convert exactly, and
 * (2 sum + n) / (2 n) truncates to the integer quotient (a fraction is at least 1 / (2 n) below
 * the next integer, far more than the rounding of a quotient at most 1000). */
static void s_carry_out(const s_carry_t *c, const int64_t *col, int64_t y)
{
    uint16_t *out = c->exposure + (size_t)y * (size_t)c->w;
    const uint32_t *d2 = c->d2 + (size_t)y * (size_t)c->w;
    uint32_t keep = c->keep_d2;
    for (int64_t bx = 0; bx < c->band->bw; bx++) {
        int64_t x0, x1;
        if (!tb_coast_band_in(c->band, y, bx, c->blocks, &x0, &x1)) {
            for (int64_t x = x0; x < x1; x++)
                out[x] = TB_COAST_NO_EXPOSURE;
            continue;
        }
        for (int64_t x = x0; x < x1; x++) {
            uint64_t v = (uint64_t)col[x];
            int32_t n = (int32_t)(v & 0xFFFFFF), high = (int32_t)(v >> 32);
            int32_t low = (int32_t)((v >> 24) & 0xFF);
            double sum = (double)high * 256 + (double)low;
            int32_t some = n > 0, near = d2[x] <= keep;
            int32_t e = (int32_t)((2 * sum + n) / (some ? 2.0 * n : 1));
            out[x] = (uint16_t)(some & near ? e : (int32_t)TB_COAST_NO_EXPOSURE);
        }
    }
}

static void s_carry_band(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_carry_t *c = ctx;
    int64_t w = c->w, h = c->h, r = c->r, j0 = h * (int64_t)task / c->bands;
    int64_t j1 = h * ((int64_t)task + 1) / c->bands, base = 0;
    int64_t *diff = c->mem + task * (size_t)(2 * w + 1), *col = diff + w + 1;
    memset(diff, 0, (size_t)(w + 1) * sizeof *diff);
    for (int64_t y = j0 - r > 0 ? j0 - r : 0; y <= j0 + r && y < h; y++)
        s_carry_row(c, diff, &base, y, 1);
    bool changed = true;
    for (int64_t j = j0; j < j1; j++) {
        if (changed) {
            int64_t run = base;
            for (int64_t x = 0; x < w; x++) {
                run += diff[x];
                col[x] = run;
            }
        }
        s_carry_out(c, col, j);
        int64_t in = j + r + 1, out = j - r;
        changed = false;
        if (in < h && c->wl->row[in + 1] > c->wl->row[in]) {
            s_carry_row(c, diff, &base, in, 1);
            changed = true;
        }
        if (out >= 0 && c->wl->row[out + 1] > c->wl->row[out]) {
            s_carry_row(c, diff, &base, out, -1);
            changed = true;
        }
    }
}

/* Exposure percentiles over the waterline (histogram of thousandths) and the carry of each
 * waterline cell's exposure to the cells within carry_m: the mean of the waterline cells in the box
 * of radius carry_m round the cell (rows beyond the Y edge hold none, so they drop out of the sum
 * and the count alike). */
static int s_carry(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m, int64_t w, int64_t h,
                   const tb_coast_waterline_t *wl, uint16_t *exposure, const tb_coast_band_t *band,
                   const uint32_t *d2, const tb_coast_region_t *count, tb_coast_tally_t *t,
                   tb_err_t *err)
{
    /* the counted waterline cells by exposure (the percentiles are taken from the sum) */
    for (int64_t y = count->y0; y < count->y1; y++)
        for (int64_t j = wl->row[y]; j < wl->row[y + 1]; j++)
            if (wl->x[j] >= count->x0 && wl->x[j] < count->x1) {
                t->exposure_hist[wl->exposure[j]]++;
                t->waterline_cells++;
            }
    int64_t r = tb_coast_radius_cells(p->carry_m, cell_m);
    if (tb_coast_box_check(r, w, err) != 0)
        return -1;
    int64_t bands = tb_coast_band_count(pool, h, 1);
    int64_t *mem =
        tb_malloc((size_t)bands * (size_t)(2 * w + 1) * sizeof *mem, "coast carry rows", err);
    if (!mem)
        return -1;
    /* the trim: the first d2 past carry_m is at least 1 (d2 0 is half a cell inside) */
    uint32_t keep = (uint32_t)(tb_coast_d2_from(p->carry_m, cell_m, false) - 1);
    int64_t blocks = tb_coast_band_blocks(s_carry_d2(p, cell_m));
    s_carry_t c = {wl, w, h, r, bands, keep, d2, exposure, band, blocks, mem};
    tb_pool_run(pool, (size_t)bands, s_carry_band, &c);
    free(mem);
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

/* River supply: river_share of each mouth's eroded volume, in whole units, at the mouth's cell;
 * the counted mouths' units and number into the tally. */
static void s_rivers(const tb_coast_params_t *p, const tb_coast_planet_t *pl, int64_t *src,
                     const tb_coast_region_t *count, tb_coast_tally_t *t)
{
    for (size_t k = 0; k < pl->n_mouths; k++) {
        int64_t u = s_mouth_units(p, pl, &pl->mouths[k]);
        if (u <= 0 || !tb_coast_region_has(count, pl->mouths[k].x, pl->mouths[k].y))
            continue;
        t->river_units += u;
        t->mouths++;
    }
    s_river_units(p, pl, src);
}

typedef struct {
    const tb_coast_planet_t *pl;
    const uint8_t *kind;
    const uint32_t *d2;
    const float *moved;
    float shelf_z;             /* a sea cell is on the shelf when its height is at least this */
    uint64_t back_lo, back_hi; /* a land cell is backshore when back_lo <= d2 < back_hi */
    const tb_coast_band_t *band;
    int64_t back_blocks;            /* no backshore cell lies in a farther block of the band */
    const tb_coast_region_t *count; /* the cells counted */
    int64_t *hist;                  /* per thread, S_BACKSHORE_BINS each */
    int64_t (*counts)[5];           /* per thread: edges, drowned, sea, shelf, backshore cells */
} s_ground_t;

/* Row y's counts over its columns [a, b) of land-sea edges (each cell's edge to x + 1, wrapping,
 * and to y + 1 when there is such a row), land cells and shelf cells, and whether it holds land at
 * or below sea level, in loops the compiler vectorises: the byte tallies in chunks of 255 cells, so
 * that a byte holds the chunk's tally. */
static bool s_ground_counts(const s_ground_t *c, int64_t y, int64_t a, int64_t b, int64_t *n)
{
    int64_t w = c->pl->w;
    const uint8_t *k = c->kind + (size_t)y * (size_t)w;
    const uint8_t *kn = y + 1 < c->pl->h ? k + w : NULL;
    const float *z = c->pl->height_m + (size_t)y * (size_t)w;
    float shelf_z = c->shelf_z;
    int64_t edges = b == w ? (k[w - 1] == TB_COAST_LAND) ^ (k[0] == TB_COAST_LAND) : 0, land = 0;
    for (int64_t x0 = a; x0 < b; x0 += 255) {
        int64_t x1 = x0 + 255 < b ? x0 + 255 : b, xe = x1 < w - 1 ? x1 : w - 1;
        uint8_t e = 0, l = 0;
        for (int64_t x = x0; x < xe; x++)
            e += (k[x] == TB_COAST_LAND) ^ (k[x + 1] == TB_COAST_LAND);
        for (int64_t x = x0; kn && x < x1; x++)
            e += (k[x] == TB_COAST_LAND) ^ (kn[x] == TB_COAST_LAND);
        for (int64_t x = x0; x < x1; x++)
            l += k[x] == TB_COAST_LAND;
        edges += e;
        land += l;
    }
    uint32_t shelf = 0, low = 0;
    for (int64_t x = a; x < b; x++) {
        uint32_t is_land = k[x] == TB_COAST_LAND;
        shelf += (is_land ^ 1) & (z[x] >= shelf_z);
        low += is_land & (z[x] <= 0);
    }
    n[0] += edges;
    n[2] += b - a - land;
    n[3] += shelf;
    return low > 0;
}

static void s_ground_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_ground_t *c = ctx;
    const tb_coast_planet_t *pl = c->pl;
    int64_t w = pl->w;
    int64_t *hist = c->hist + (size_t)thread * S_BACKSHORE_BINS, *n = c->counts[thread];
    uint32_t lo = (uint32_t)c->back_lo, span = (uint32_t)(c->back_hi - c->back_lo);
    for (int64_t y = y0; y < y1; y++) {
        if (y < c->count->y0 || y >= c->count->y1)
            continue;
        int64_t a = c->count->x0, b = c->count->x1;
        size_t row = (size_t)y * (size_t)w;
        const uint8_t *k = c->kind + row;
        const float *z = pl->height_m + row;
        const uint32_t *d2 = c->d2 + row;
        if (s_ground_counts(c, y, a, b, n))
            for (int64_t x = a; x < b; x++)
                if (k[x] == TB_COAST_LAND && z[x] <= 0 &&
                    (double)z[x] - (double)c->moved[row + x] > 0)
                    n[1]++;
        /* the backshore: land one to two surf reaches inland, only in the band's blocks that
         * can hold it, and there only the land cells, found eight at a time */
        for (int64_t bx = 0; span > 0 && bx < c->band->bw; bx++) {
            int64_t x0, x1;
            if (!tb_coast_band_in(c->band, y, bx, c->back_blocks, &x0, &x1))
                continue;
            x0 = x0 > a ? x0 : a;
            x1 = x1 < b ? x1 : b;
            for (int64_t x8 = x0; x8 < x1; x8 += 8)
                for (uint64_t land = tb_coast_land8(k + x8, x1 - x8 < 8 ? x1 - x8 : 8); land;
                     land &= land - 1) {
                    int64_t x = x8 + __builtin_ctzll(land) / 8;
                    if (d2[x] - lo >= span)
                        continue;
                    double bin = floor((double)z[x] / S_BACKSHORE_BIN_M);
                    hist[bin < 0                   ? 0
                         : bin >= S_BACKSHORE_BINS ? S_BACKSHORE_BINS - 1
                                                   : (int64_t)bin]++;
                    n[4]++;
                }
        }
    }
}

/* The least float whose double is at least `metres` (heights are floats, compared as doubles). */
static float s_float_from(double metres)
{
    float f = (float)metres;
    while ((double)f < metres)
        f = nextafterf(f, INFINITY);
    while ((double)nextafterf(f, -INFINITY) >= metres)
        f = nextafterf(f, -INFINITY);
    return f;
}

/* The ground statistics of the block after the pass: shoreline, sea and shelf shares, the
 * backshore (the land one to two surf reaches inland, not the drop to the next cell: the
 * predecessor's E1), drowned land. Integer counts per thread, summed in any order. */
static int s_ground_stats(tb_pool_t *pool, const tb_coast_params_t *p, const tb_coast_planet_t *pl,
                          const uint8_t *kind, const uint32_t *d2, const float *moved,
                          const tb_coast_band_t *band, const tb_coast_region_t *count,
                          tb_coast_tally_t *t, tb_err_t *err)
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
    /* a backshore cell's distance is in [surf_reach_m, 2 surf_reach_m] and it has one */
    uint64_t lo = tb_coast_d2_from(p->surf_reach_m, pl->cell_m, true);
    uint64_t hi = tb_coast_d2_from(2 * p->surf_reach_m, pl->cell_m, false);
    hi = hi < UINT32_MAX ? hi : UINT32_MAX; /* d2 UINT32_MAX: no sea at all */
    lo = lo < hi ? lo : hi;
    s_ground_t c = {pl,
                    kind,
                    d2,
                    moved,
                    s_float_from(-p->break_depth_m),
                    lo,
                    hi,
                    band,
                    tb_coast_band_blocks((uint32_t)(hi > 0 ? hi - 1 : 0)),
                    count,
                    hist,
                    counts};
    tb_coast_par_rows(pool, pl->h, s_ground_rows, &c);
    int64_t n[5] = {0};
    for (int th = 0; th < threads; th++) {
        for (int k = 0; k < 5; k++)
            n[k] += counts[th][k];
        if (th > 0)
            for (int64_t b = 0; b < S_BACKSHORE_BINS; b++)
                hist[b] += hist[(size_t)th * S_BACKSHORE_BINS + (size_t)b];
    }
    free(counts);
    t->cells += (count->x1 - count->x0) * (count->y1 - count->y0);
    t->edges += n[0];
    t->drowned_cells += n[1];
    t->sea_cells += n[2];
    t->shelf_cells += n[3];
    t->backshore_cells += n[4];
    for (int64_t b = 0; b < S_BACKSHORE_BINS; b++)
        t->backshore_hist[b] += hist[b];
    free(hist);
    return 0;
}

/* The land mask the distances start from: 1 on land, 0 at sea (a byte table per class, so the loop
 * does not reread the legend through pointers a byte store might alias). */
static void s_kind_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const tb_coast_planet_t *pl = ((void **)ctx)[0];
    uint8_t *restrict kind = ((void **)ctx)[1];
    const uint8_t *restrict classes = pl->classes;
    uint8_t land[256] = {0};
    for (int c = 0; c < pl->legend->n && c < TB_MAX_CLASSES; c++)
        land[c] = !pl->legend->ocean[c];
    size_t i = (size_t)y0 * (size_t)pl->w, end = (size_t)y1 * (size_t)pl->w;
    for (; i + 4 <= end; i += 4) { /* four at a time: a third of the loop's own instructions */
        kind[i] = land[classes[i]];
        kind[i + 1] = land[classes[i + 1]];
        kind[i + 2] = land[classes[i + 2]];
        kind[i + 3] = land[classes[i + 3]];
    }
    for (; i < end; i++)
        kind[i] = land[classes[i]];
}

static double s_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The late window (tb_coast_window_t's late_margin, docs/coast.md "Blocks"): the rows [y0, y1) and
 * columns [x0, x1) of the run the phases after the carry run over, its first row and column on the
 * band's lattice of blocks, so its blocks are the run's and their distances hold. false: the whole
 * run (no margin, or the margin reaches every edge). */
typedef struct {
    int64_t x0, x1, y0, y1;
} s_late_t;

static bool s_late_rect(const tb_coast_params_t *p, double cell_m, int64_t w, int64_t h,
                        const tb_coast_region_t *count, const tb_coast_window_t *win, s_late_t *r)
{
    const int64_t m = win->late_margin, b = TB_COAST_BAND_BLOCK;
    if (m <= 0)
        return false;
    int64_t x0 = count->x0 - m, x1 = count->x1 + m, y0 = count->y0 - m, y1 = count->y1 + m;
    x0 = x0 > 0 ? x0 / b * b : 0;
    y0 = y0 > 0 ? y0 / b * b : 0;
    x1 = x1 < w ? x1 : w;
    y1 = y1 < h ? y1 : h;
    /* a window that is the planet's width keeps its true wrap; every kernel's reach fits the
     * late window's width (it holds twice the margin) */
    if (win->keep_x || x1 - x0 < 3 || tb_coast_params_check(p, cell_m, x1 - x0, NULL) != 0) {
        x0 = 0;
        x1 = w;
    }
    *r = (s_late_t){x0, x1, y0, y1};
    return x0 > 0 || x1 < w || y0 > 0 || y1 < h;
}

/* A run-sized array of `size`-byte cells rewritten in place as the late window's rows (each row
 * moves to a lower address, in order: no row is overwritten before it has moved) ... */
static void s_late_pack(void *a, size_t size, int64_t w, const s_late_t *r)
{
    uint8_t *b = a;
    size_t row = (size_t)(r->x1 - r->x0) * size;
    for (int64_t y = r->y0; y < r->y1; y++)
        memmove(b + (size_t)(y - r->y0) * row, b + ((size_t)y * (size_t)w + (size_t)r->x0) * size,
                row);
}

/* ... and back to the run's rows (the last row first); the cells outside the late window are
 * left holding what nobody reads. */
static void s_late_unpack(void *a, size_t size, int64_t w, const s_late_t *r)
{
    uint8_t *b = a;
    size_t row = (size_t)(r->x1 - r->x0) * size;
    for (int64_t y = r->y1 - 1; y >= r->y0; y--)
        memmove(b + ((size_t)y * (size_t)w + (size_t)r->x0) * size, b + (size_t)(y - r->y0) * row,
                row);
}

/* The band of the late window: the run's block distances over its blocks (the late window starts
 * on a block corner, and a narrower last block holds a subset of the run's block's cells, so every
 * cell's d2 - the run's - keeps the band's invariant), the stretch's maxima not yet made. */
static int s_late_band(tb_coast_band_t *band, const s_late_t *r, tb_err_t *err)
{
    const int64_t b = TB_COAST_BAND_BLOCK, w = r->x1 - r->x0, h = r->y1 - r->y0;
    int64_t bw = (w + b - 1) / b, bh = (h + b - 1) / b;
    size_t n = (size_t)bw * (size_t)bh;
    uint16_t *dist = tb_malloc(n * sizeof *dist, "coast late band distances", err);
    float *stretch_max =
        dist ? tb_malloc(n * sizeof *stretch_max, "coast late band stretch", err) : NULL;
    if (!stretch_max) {
        free(dist);
        return -1;
    }
    for (int64_t by = 0; by < bh; by++)
        memcpy(dist + (size_t)by * (size_t)bw,
               band->dist + (size_t)(r->y0 / b + by) * (size_t)band->bw + (size_t)(r->x0 / b),
               (size_t)bw * sizeof *dist);
    for (size_t i = 0; i < n; i++)
        stretch_max[i] = TB_COAST_MAX_STRETCH;
    tb_coast_band_free(band);
    *band = (tb_coast_band_t){w, h, bw, bh, dist, stretch_max};
    return 0;
}

/* The mouths inside the late window, in its cells (in their order). */
static tb_coast_mouth_t *s_late_mouths(const tb_coast_planet_t *pl, const s_late_t *r, size_t *n,
                                       tb_err_t *err)
{
    tb_coast_mouth_t *m =
        tb_malloc((pl->n_mouths ? pl->n_mouths : 1) * sizeof *m, "coast late mouths", err);
    *n = 0;
    for (size_t k = 0; m && k < pl->n_mouths; k++) {
        const tb_coast_mouth_t *o = &pl->mouths[k];
        if (o->x >= r->x0 && o->x < r->x1 && o->y >= r->y0 && o->y < r->y1)
            m[(*n)++] = (tb_coast_mouth_t){o->x - r->x0, o->y - r->y0, o->eroded_m3};
    }
    return m;
}

int tb_coast_run(const tb_coast_params_t *p, tb_coast_planet_t *pl, tb_coast_maps_t *maps,
                 int threads, tb_coast_debug_t *debug,
                 bool (*progress)(void *user, double fraction, const char *note), void *user,
                 tb_err_t *err)
{
    tb_coast_tally_t t;
    memset(&maps->stats, 0, sizeof maps->stats);
    if (tb_coast_tally_init(&t, err) != 0)
        return -1;
    int rc = tb_coast_run_window(p, pl, maps, threads, debug, progress, user, NULL, &t, err);
    tb_coast_tally_free(&t);
    return rc;
}

int tb_coast_run_window(const tb_coast_params_t *p, tb_coast_planet_t *pl, tb_coast_maps_t *maps,
                        int threads, tb_coast_debug_t *debug,
                        bool (*progress)(void *user, double fraction, const char *note), void *user,
                        const tb_coast_window_t *win, tb_coast_tally_t *tally, tb_err_t *err)
{
    memset(&maps->stats, 0, sizeof maps->stats);
    if (s_check_input(p, pl, err) != 0)
        return -1;
    s_progress_t prog = {progress, user};
    int64_t w = pl->w, h = pl->h;
    size_t cells = (size_t)w * (size_t)h;
    tb_coast_window_t whole = {0, 0, w, h, {{-1, -1}}, false, 0, true};
    if (!win)
        win = &whole;
    if (win->x0 < 0 || win->y0 < 0 || win->w < 0 || win->h < 0 || win->x0 + win->w > w ||
        win->y0 + win->h > h)
        return tb_err_set(err, TB_E_INVALID,
                          "coast: the counted cells [%lld, %lld) x [%lld, %lld) are not inside the "
                          "%lld x %lld cells run",
                          (long long)win->x0, (long long)(win->x0 + win->w), (long long)win->y0,
                          (long long)(win->y0 + win->h), (long long)w, (long long)h);
    tb_coast_region_t count = {win->x0, win->x0 + win->w, win->y0, win->y0 + win->h};
    /* the late window's rectangle, its planet and mouths (pl points there once it is taken) */
    tb_coast_planet_t *const run_pl = pl;
    tb_coast_planet_t late;
    const int64_t run_w = w;
    s_late_t late_r = {0};
    tb_coast_mouth_t *late_mouths = NULL;
    bool late_packed = false;
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
    tb_coast_waterline_t wl = {0};
    int rc = -1;
    if (!d2)
        goto done;
    void *kind_ctx[2] = {pl, kind};
    tb_coast_par_rows(pool, h, s_kind_rows, kind_ctx);
    /* the bathymetry and the band's marks are made in the distances' row pass: its time is theirs
     */
    uint8_t *band_bits = NULL;
    if (s_progress(&prog, 0.0, "distances", err) != 0 ||
        s_distances(pool, p, pl, kind, d2, &band_bits, err) != 0) {
        free(band_bits);
        goto done;
    }
    S_PHASE(TB_COAST_PHASE_DISTANCES);
    if (tb_coast_band_from_bits(band_bits, w, h, &band, err) != 0)
        goto done;
    S_PHASE(TB_COAST_PHASE_BATHYMETRY);
    if (s_progress(&prog, 0.3, "exposure", err) != 0 ||
        tb_coast_exposure_fetch_sweeps(pool, p, pl->cell_m, w, h, kind, &wl, debug, err) != 0)
        goto done;
    S_PHASE(TB_COAST_PHASE_EXPOSURE);
    rc = s_carry(pool, p, pl->cell_m, w, h, &wl, maps->exposure, &band, d2, &count, tally, err);
    tb_coast_waterline_free(&wl);
    if (rc != 0)
        goto done;
    rc = -1;
    S_PHASE(TB_COAST_PHASE_CARRY);
    /* the late window: what the surf, the stretch and the drifts read at a counted cell is within
     * the margin, and exact there (the distances, the kinds and the carried exposure hold within
     * the window's halo less their own reaches), so the rest runs over it alone */
    if (s_late_rect(p, pl->cell_m, w, h, &count, win, &late_r)) {
        s_late_pack(kind, 1, w, &late_r);
        s_late_pack(d2, sizeof *d2, w, &late_r);
        s_late_pack(pl->height_m, sizeof *pl->height_m, w, &late_r);
        s_late_pack(maps->moved_m, sizeof *maps->moved_m, w, &late_r);
        s_late_pack(maps->exposure, sizeof *maps->exposure, w, &late_r);
        late_packed = true;
        late = *pl;
        late.w = late_r.x1 - late_r.x0;
        late.h = late_r.y1 - late_r.y0;
        late.classes = NULL; /* read only by the kinds, made above */
        if (!(late_mouths = s_late_mouths(pl, &late_r, &late.n_mouths, err)) ||
            s_late_band(&band, &late_r, err) != 0)
            goto done;
        late.mouths = late_mouths;
        pl = &late;
        w = late.w;
        h = late.h;
        cells = (size_t)w * (size_t)h;
        count = (tb_coast_region_t){count.x0 - late_r.x0, count.x1 - late_r.x0,
                                    count.y0 - late_r.y0, count.y1 - late_r.y0};
    }
    acc = tb_malloc(cells * sizeof *acc, "coast sediment work", err);
    src = acc ? tb_malloc(cells * sizeof *src, "coast sediment", err) : NULL;
    if (!src || s_progress(&prog, 0.6, "surf", err) != 0)
        goto done;
    tb_coast_surf_platform_cut(pool, p, pl->cell_m, w, h, kind, d2, maps->exposure, pl->height_m,
                               maps->moved_m, src, &band, &count, tally);
    s_rivers(p, pl, src, &count, tally);
    /* the first drift's sources: the cut and the rivers' units (src holds nothing else) */
    tally->sources[0] = tally->cut_units + tally->river_units;
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
        tb_coast_sediment_drift_deposit(
            pool, p, pl->cell_m, w, h, kind, d2, maps->exposure, stretch, src, acc, pl->height_m,
            maps->moved_m, &band, &count, &win->share, win->totals_only, tally, debug, err) != 0)
        goto done;
    free(acc);
    free(src);
    free(stretch);
    acc = src = NULL;
    stretch = NULL;
    S_PHASE(TB_COAST_PHASE_SEDIMENT);
    if (!win->totals_only &&
        s_ground_stats(pool, p, pl, kind, d2, maps->moved_m, &band, &count, tally, err) != 0)
        goto done;
    tb_coast_stats_from_tally(tally, pl->cell_m, &maps->stats);
    S_PHASE(TB_COAST_PHASE_STATS);
#undef S_PHASE
    rc = s_progress(&prog, 1.0, "done", err);
done:
    if (late_packed) {
        s_late_unpack(run_pl->height_m, sizeof *run_pl->height_m, run_w, &late_r);
        s_late_unpack(maps->moved_m, sizeof *maps->moved_m, run_w, &late_r);
        s_late_unpack(maps->exposure, sizeof *maps->exposure, run_w, &late_r);
    }
    free(late_mouths);
    tb_coast_band_free(&band);
    tb_coast_waterline_free(&wl);
    free(kind);
    free(d2);
    free(acc);
    free(src);
    free(stretch);
    free(mouths);
    tb_pool_destroy(&pool);
    return rc;
}
