/* The methods of the coastal pass, one file each, for jobs/coast/pass.c and the tests
 * (docs/coast.md). Not part of the job's interface: jobs/coast/coast.h is.
 *
 * Shared conventions. The planet is w x h cells of cell_m, row-major, X wraps, Y does not.
 * `kind` classifies cells: TB_COAST_LAND, TB_COAST_SHALLOW (sea shallower than shoal_depth_m after
 * the bathymetry) and TB_COAST_OPEN (deeper sea). `d2` is the squared distance in cells from a sea
 * cell to the nearest land cell and from a land cell to the nearest sea cell (common/edt.h, X
 * wraps); a cell's distance from the waterline is sqrt(d2) - 0.5 cells, the waterline lying half
 * way between the centres of a land cell and its sea neighbour. d2 is exact only within the reach
 * the phases read (pass.c, s_distances: at sea the widest of the bathymetry, carry and stretched
 * deposit reaches, on land of the carry and two surf reaches, each plus two cells); beyond it a
 * cell has TB_EDT_FAR, which every gate reads as "farther": a phase reading farther must widen it.
 * Sediment is counted in exact integer units of one millimetre over one cell (TB_COAST_UNIT_M).
 */
#ifndef TB_JOBS_COAST_METHODS_H
#define TB_JOBS_COAST_METHODS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/grid.h"
#include "common/pool.h"
#include "jobs/coast/coast.h"

enum { TB_COAST_LAND = 0, TB_COAST_SHALLOW = 1, TB_COAST_OPEN = 2 };

/* Threads. Every phase runs over the pool the pass was given (NULL: the calling thread only) with
 * the same bits on any number of threads (docs/coast.md, "Threads"): the pointwise phases over
 * chunks of TB_COAST_CHUNK_ROWS rows, whose double reductions are kept per chunk and summed in
 * chunk order (integer ones in any order), the box sums and the fetch sweeps over bands of rows,
 * each exact. */
#define TB_COAST_CHUNK_ROWS 16
#define TB_COAST_MAX_THREADS 64

/* boxsum.c: the number of row chunks of a planet h rows high. */
size_t tb_coast_chunks(int64_t h);

/* boxsum.c: fn(ctx, y0, y1, chunk, thread) for every chunk of rows [y0, y1), on the pool's threads
 * (in any order; thread < tb_pool_threads(pool) names the thread for per-thread scratch). */
void tb_coast_par_rows(tb_pool_t *pool, int64_t h,
                       void (*fn)(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread),
                       void *ctx);

/* boxsum.c: zeroes the h rows of row_bytes bytes at p over the pool's threads (a planet-sized
 * array: a memset on one thread would leave the others idle, and on a fresh array the threads
 * share its first touch). */
void tb_coast_par_zero(tb_pool_t *pool, void *p, size_t row_bytes, int64_t h);

/* band.c: the coastal band (docs/coast.md, "The coastal band"). The planet in blocks of
 * TB_COAST_BAND_BLOCK cells square (the last column and row of blocks may be narrower); dist[] is
 * each block's Chebyshev distance in blocks (X wraps) from the nearest block that holds, or touches
 * a block that holds, both land and sea (UINT16_MAX when the planet has no such block). */
#define TB_COAST_BAND_BLOCK 16
typedef struct {
    int64_t w, h, bw, bh;
    uint16_t *dist;
    float *stretch_max; /* per block, the largest delta stretch of its cells (sediment.c) */
} tb_coast_band_t;

int tb_coast_band_make(tb_pool_t *pool, const uint8_t *kind, int64_t w, int64_t h,
                       tb_coast_band_t *band, tb_err_t *err);
/* The same in two steps, for pass.c to mark the rows in the distance transform's row pass: bits
 * (tb_coast_band_bits_size bytes, zeroed) gets bit 1 for a block holding land and bit 2 for one
 * holding sea from row y of the land mask (non-zero: land; the rows of one block row on one
 * thread); tb_coast_band_from_bits takes bits (freed, also on failure) and makes the band. */
size_t tb_coast_band_bits_size(int64_t w, int64_t h);
void tb_coast_band_mark_row(uint8_t *bits, const uint8_t *land, int64_t w, int64_t y);
int tb_coast_band_from_bits(uint8_t *bits, int64_t w, int64_t h, tb_coast_band_t *band,
                            tb_err_t *err);
void tb_coast_band_free(tb_coast_band_t *band);
/* The band distance, in blocks, within which every cell with d2 <= reach_d2 lies. */
int64_t tb_coast_band_blocks(uint32_t reach_d2);
/* Whether block column bx of the block row holding row y is within `blocks` of the waterline;
 * [*x0, *x1) its columns. */
static inline bool tb_coast_band_in(const tb_coast_band_t *band, int64_t y, int64_t bx,
                                    int64_t blocks, int64_t *x0, int64_t *x1)
{
    *x0 = bx * TB_COAST_BAND_BLOCK;
    *x1 = *x0 + TB_COAST_BAND_BLOCK < band->w ? *x0 + TB_COAST_BAND_BLOCK : band->w;
    return band->dist[(size_t)(y / TB_COAST_BAND_BLOCK) * (size_t)band->bw + (size_t)bx] <= blocks;
}

/* Eight cells' kinds at a time, for the phases that look at few cells. tb_coast_word8: eight bytes
 * as a word, byte i in bits 8 i .. 8 i + 7 whatever the machine's byte order (one load);
 * tb_coast_nonzero8: bit 8 i + 7 set where byte i of v is not 0, and no other bit. */
static inline uint64_t tb_coast_word8(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t tb_coast_nonzero8(uint64_t v)
{
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7Full;
    return (((v & low7) + low7) | v) & ~low7;
}

/* Bit 8 i + 7 set where cell i of the n <= 8 at k is land. */
static inline uint64_t tb_coast_land8(const uint8_t *k, int64_t n)
{
    uint64_t high = 0x8080808080808080ull;
    if (n == 8)
        return ~tb_coast_nonzero8(tb_coast_word8(k)) & high;
    uint64_t bits = 0;
    for (int64_t i = 0; i < n; i++)
        bits |= (uint64_t)(k[i] == TB_COAST_LAND) << (8 * i + 7);
    return bits;
}

/* One sediment unit is this many metres of height over one cell. */
#define TB_COAST_UNIT_M 0.001

/* The cells the tallies count, in the pass's own coordinates: [x0, x1) x [y0, y1) (the whole
 * planet, or a block's interior within its window: docs/coast.md, "Blocks"). */
typedef struct {
    int64_t x0, x1, y0, y1;
} tb_coast_region_t;

static inline bool tb_coast_region_has(const tb_coast_region_t *r, int64_t x, int64_t y)
{
    return x >= r->x0 && x < r->x1 && y >= r->y0 && y < r->y1;
}

/* The columns [*c0, *c1) of [x0, x1) that row y of region r counts (an empty span at x1 when
 * none). */
static inline void tb_coast_region_span(const tb_coast_region_t *r, int64_t y, int64_t x0,
                                        int64_t x1, int64_t *c0, int64_t *c1)
{
    if (y < r->y0 || y >= r->y1 || r->x1 <= x0 || r->x0 >= x1) {
        *c0 = *c1 = x1;
        return;
    }
    *c0 = r->x0 > x0 ? r->x0 : x0;
    *c1 = r->x1 < x1 ? r->x1 : x1;
}

/* Adds v (0 <= v < 2^63 units) to f: its whole units exactly, its fraction rounded to 2^-32 (the
 * subtraction of a double's integer part is exact, and so is the scaling by 2^32). */
static inline void tb_coast_fx_add(tb_coast_fx_t *f, double v)
{
    uint64_t whole = (uint64_t)v;
    f->units += whole;
    f->frac += (uint64_t)((v - (double)whole) * 4294967296.0 + 0.5);
}

/* Distance of a cell from the waterline, metres, from its squared distance in cells. Inline: every
 * phase asks it of most cells (the build never contracts floating point, so inlining changes no
 * bit). */
static inline double tb_coast_waterline_m(uint32_t d2, double cell_m)
{
    return (sqrt((double)d2) - 0.5) * cell_m;
}

/* pass.c: the squared distances (cells) up to which the distance transform is exact, at sea
 * (caps[0]) and on land (caps[1]): the widest reach any phase reads d2 at, plus two cells; past
 * them a cell has TB_EDT_FAR. The blocks' halo holds them (blocks.h). */
void tb_coast_distance_caps(const tb_coast_params_t *p, double cell_m, uint32_t caps[2]);

/* surf.c: the least squared distance d2 (cells) whose tb_coast_waterline_m(d2, cell_m) is above
 * `metres` (at least `metres` when or_equal), 2^32 when none is: the distance never falls as d2
 * grows, so a phase's test of it on every cell is the integer test d2 >= this, the same bits
 * without a square root. */
uint64_t tb_coast_d2_from(double metres, double cell_m, bool or_equal);

/* bathymetry.c: depth below sea level (metres, >= 0) at dist_m from the waterline over a sea whose
 * painted depth is painted_m. */
double tb_coast_shelf_slope_depth_m(const tb_coast_params_t *p, double dist_m, double painted_m);

/* bathymetry.c: the bathymetry one row at a time, for pass.c to run in the distance transform's row
 * pass (common/edt.h, tb_edt_row_fn) while the row is in cache. init never fails (without memory
 * for its table every cell computes its depth: the same bits). */
typedef struct {
    const tb_coast_params_t *p;
    double cell_m;
    int64_t w;
    uint32_t far_d2;  /* past it, every sea is at its painted depth */
    uint32_t table_n; /* the profile's distance part is tabulated for d2 < table_n */
    double *table;
    float *height_table; /* on the shelf: the height and kind by d2 alone */
    uint8_t *kind_table;
    uint32_t fast_d2[TB_MAX_CLASSES]; /* per class: those hold for every d2 below it */
    double painted_m[TB_MAX_CLASSES], below_m[TB_MAX_CLASSES]; /* per class: depth, below break */
    const uint8_t *classes;
    float *height_m;
    uint8_t *kind;
} tb_coast_bathy_t;
void tb_coast_bathymetry_init(tb_coast_bathy_t *b, const tb_coast_params_t *p, double cell_m,
                              int64_t w, const uint8_t *classes, const tb_coast_classes_t *legend,
                              float *height_m, uint8_t *kind);
/* Row y: kind[] holds the land mask (non-zero: land) on entry and the kinds on return; sea cells'
 * heights are rewritten. d2 is the row's distances. */
void tb_coast_bathymetry_row(const tb_coast_bathy_t *b, int64_t y, const uint32_t *d2);
void tb_coast_bathymetry_free(tb_coast_bathy_t *b);

/* bathymetry.c: rewrites every sea cell's height as minus tb_coast_shelf_slope_depth_m and sets
 * kind[] for every cell (the same rows as above, over the pool). */
void tb_coast_bathymetry_shelf_slope(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                     int64_t w, int64_t h, const uint8_t *land, const uint32_t *d2,
                                     const uint8_t *classes, const tb_coast_classes_t *legend,
                                     float *height_m, uint8_t *kind);

/* exposure.c: the waterline cells (sea cells with land among their eight neighbours), row by row,
 * and the exposure of each, in thousandths. */
typedef struct {
    int64_t w, h, n;
    int64_t *row;       /* h + 1: the cells of row y are [row[y], row[y + 1]) */
    int32_t *x;         /* n: their columns, ascending within a row */
    uint16_t *exposure; /* n: their exposures */
} tb_coast_waterline_t;

/* exposure.c: fills *out (owned by the caller, free with tb_coast_waterline_free). Returns 0 or -1
 * with *err (out of memory; *out is then empty). */
int tb_coast_exposure_fetch_sweeps(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                   int64_t w, int64_t h, const uint8_t *kind,
                                   tb_coast_waterline_t *out, const tb_coast_debug_t *debug,
                                   tb_err_t *err);
void tb_coast_waterline_free(tb_coast_waterline_t *wl);

/* boxsum.c: 0, or -1 with *err (TB_E_INVALID naming both) when a box of radius r is wider than
 * the planet's w columns (2r + 1 > w): a window would meet itself round the cylinder. */
int tb_coast_box_check(int64_t r, int64_t w, tb_err_t *err);

/* boxsum.c: how many bands of rows a kernel over h rows splits into on the pool: one a thread (at
 * most TB_COAST_MAX_THREADS), each at least min_rows rows, at least one. */
int64_t tb_coast_band_count(tb_pool_t *pool, int64_t h, int64_t min_rows);

/* boxsum.c: v[i] = sum of v over the (2r+1) x (2r+1) box round cell i, X wrapping, rows beyond the
 * Y edges counting zero, in place, exactly (wrapping unsigned arithmetic: a sum that fits in int64
 * is exact whatever the intermediate values did). Requires
 * 2r + 1 <= w. Returns 0 or -1 with *err (out of memory). */
int tb_coast_boxsum_i64(tb_pool_t *pool, int64_t *v, int64_t w, int64_t h, int64_t r,
                        tb_err_t *err);

/* boxsum.c: the tent of radius r (the box of radius ceil(r/2) twice), the same way. */
int tb_coast_tentsum_i64(tb_pool_t *pool, int64_t *v, int64_t w, int64_t h, int64_t r,
                         tb_err_t *err);

/* The most a river's supply stretches the deposit reach (sediment.c). */
#define TB_COAST_MAX_STRETCH 4.0

/* The carry radius, drift radius, surf reach, deposit reach in cells, as the pass uses them. */
int64_t tb_coast_radius_cells(double metres, double cell_m);

/* surf.c: plans the land within exposure x surf_reach_m of the waterline down towards the platform,
 * zeroes moved_m and src (w x h) and writes the cut (negative) into moved_m and the cut units into
 * src, and adds the cells planed and the units cut within `count` to *t. exposure is the carried
 * map. */
void tb_coast_surf_platform_cut(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                int64_t w, int64_t h, const uint8_t *kind, const uint32_t *d2,
                                const uint16_t *exposure, float *height_m, float *moved_m,
                                int64_t *src, const tb_coast_band_t *band,
                                const tb_coast_region_t *count, tb_coast_tally_t *t);

/* sediment.c: the delta stretch, 1 .. TB_COAST_MAX_STRETCH: 1 + the river units (mouths: n pairs
 * of a cell's index and its units, in any order, a cell may repeat) within the drift tent, in m3,
 * over delta_ref_m3; and each block's largest in band->stretch_max. stretch is written only in the
 * blocks whose largest is over 1 (elsewhere it is 1). scratch is w x h, overwritten. */
int tb_coast_delta_stretch(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m, int64_t w,
                           int64_t h, const int64_t *mouths, size_t n_mouths, int64_t *scratch,
                           float *stretch, tb_coast_band_t *band, tb_err_t *err);

/* sediment.c: redistributes the units in src over the sheltered shallows with the drift kernel,
 * lays what fits, and adds the budget's parts of the cells within `count` to *t (laid, unplaced,
 * beach cells, the second drift's sources). share: the drifts' fixed-point bits (-1: from the
 * totals of src here, the pass being the planet). totals_only: stop after the first drift.
 * stretch (may be NULL: 1 everywhere) widens the deposit reach near river mouths. src and work are
 * w x h scratch (src destroyed). Returns 0 or -1 with *err. */
int tb_coast_sediment_drift_deposit(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                    int64_t w, int64_t h, const uint8_t *kind, const uint32_t *d2,
                                    const uint16_t *exposure, const float *stretch, int64_t *src,
                                    int64_t *work, float *height_m, float *moved_m,
                                    const tb_coast_band_t *band, const tb_coast_region_t *count,
                                    const tb_coast_share_t *share, bool totals_only,
                                    tb_coast_tally_t *t, const tb_coast_debug_t *debug,
                                    tb_err_t *err);

/* The results' checks (check.c; docs/distribution.md, "Verifying results"). No honest height or
 * moved depth is 1000 km from sea level; an honest budget closes to 2e-15 (docs/coast.md). */
#define TB_COAST_CHECK_MAX_M 1e6f
#define TB_COAST_CHECK_BUDGET 1e-9
/* A result's maps of w x h cells from (x0, y0) (height f32, moved f32, exposure u16, one plane
 * after the other): finite, within TB_COAST_CHECK_MAX_M, exposures in 0..TB_COAST_EXPOSURE_ONE or
 * none. A mapped result is let go as it is read. `what` names the result in the error. */
int tb_coast_check_maps(const uint8_t *maps, int64_t x0, int64_t y0, int64_t w, int64_t h,
                        const char *what, tb_err_t *err);
/* A whole-planet result's statistics: its cells, counts within them, no more mouths than its spec
 * sent, areas within the planet, volumes finite and not negative, the sediment's budget closed,
 * the percentiles in order. */
int tb_coast_check_stats(const tb_coast_stats_t *s, int64_t w, int64_t h, double cell_m,
                         uint64_t n_mouths, tb_err_t *err);

#endif
