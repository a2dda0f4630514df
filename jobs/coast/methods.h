/* The methods of the coastal pass, one file each, for jobs/coast/pass.c and the tests
 * (docs/coast.md). Not part of the job's interface: jobs/coast/coast.h is.
 *
 * Shared conventions. The planet is w x h cells of cell_m, row-major, X wraps, Y does not.
 * `kind` classifies cells: TB_COAST_LAND, TB_COAST_SHALLOW (sea shallower than shoal_depth_m after
 * the bathymetry) and TB_COAST_OPEN (deeper sea). `d2` is the squared distance in cells from a sea
 * cell to the nearest land cell and from a land cell to the nearest sea cell (common/edt.h, X
 * wraps); a cell's distance from the waterline is sqrt(d2) - 0.5 cells, the waterline lying half
 * way between the centres of a land cell and its sea neighbour. Sediment is counted in exact
 * integer units of one millimetre over one cell (TB_COAST_UNIT_M).
 */
#ifndef TB_JOBS_COAST_METHODS_H
#define TB_JOBS_COAST_METHODS_H

#include <math.h>
#include <stdint.h>

#include "common/grid.h"
#include "jobs/coast/coast.h"

enum { TB_COAST_LAND = 0, TB_COAST_SHALLOW = 1, TB_COAST_OPEN = 2 };

/* One sediment unit is this many metres of height over one cell. */
#define TB_COAST_UNIT_M 0.001

/* Distance of a cell from the waterline, metres, from its squared distance in cells. Inline: every
 * phase asks it of most cells (the build never contracts floating point, so inlining changes no
 * bit). */
static inline double tb_coast_waterline_m(uint32_t d2, double cell_m)
{
    return (sqrt((double)d2) - 0.5) * cell_m;
}

/* bathymetry.c: depth below sea level (metres, >= 0) at dist_m from the waterline over a sea whose
 * painted depth is painted_m. */
double tb_coast_shelf_slope_depth_m(const tb_coast_params_t *p, double dist_m, double painted_m);

/* bathymetry.c: rewrites every sea cell's height as minus tb_coast_shelf_slope_depth_m and sets
 * kind[] for every cell. */
void tb_coast_bathymetry_shelf_slope(const tb_coast_params_t *p, double cell_m, size_t cells,
                                     const uint8_t *land, const uint32_t *d2,
                                     const uint8_t *classes, const tb_coast_classes_t *legend,
                                     float *height_m, uint8_t *kind);

/* exposure.c: whether sea cell i (column x, row y) touches land among its eight neighbours. */
bool tb_coast_is_waterline(const uint8_t *kind, int64_t w, int64_t h, int64_t x, int64_t y);

/* exposure.c: the exposure of every waterline cell, in thousandths, written as
 * acc[i] = (exposure << 24) | 1 on waterline cells and 0 elsewhere (the packing the carry kernel
 * sums). acc is w x h, caller owned. Returns 0 or -1 with *err (out of memory). */
int tb_coast_exposure_fetch_sweeps(const tb_coast_params_t *p, double cell_m, int64_t w, int64_t h,
                                   const uint8_t *kind, int64_t *acc, tb_err_t *err);

/* boxsum.c: v[i] = sum of v over the (2r+1) x (2r+1) box round cell i, X wrapping, rows beyond the
 * Y edges counting zero, in place, exactly (wrapping unsigned arithmetic: a sum that fits in int64
 * is exact whatever the intermediate values did). Requires
 * 2r + 1 <= w. Returns 0 or -1 with *err (out of memory). */
int tb_coast_boxsum_i64(int64_t *v, int64_t w, int64_t h, int64_t r, tb_err_t *err);

/* boxsum.c: the tent of radius r (the box of radius ceil(r/2) twice), the same way. */
int tb_coast_tentsum_i64(int64_t *v, int64_t w, int64_t h, int64_t r, tb_err_t *err);

/* The most a river's supply stretches the deposit reach (sediment.c). */
#define TB_COAST_MAX_STRETCH 4.0

/* The carry radius, drift radius, surf reach, deposit reach in cells, as the pass uses them. */
int64_t tb_coast_radius_cells(double metres, double cell_m);

/* surf.c: plans the land within exposure x surf_reach_m of the waterline down towards the platform,
 * writes the cut (negative) into moved_m and the cut units into src, and accumulates planed_m2 and
 * cut_m3 into *s. exposure is the carried map. */
void tb_coast_surf_platform_cut(const tb_coast_params_t *p, double cell_m, size_t cells,
                                const uint8_t *kind, const uint32_t *d2, const uint16_t *exposure,
                                float *height_m, float *moved_m, int64_t *src, tb_coast_stats_t *s);

/* sediment.c: the delta stretch of every cell, 1 .. TB_COAST_MAX_STRETCH: 1 + the river units
 * (river, w x h; destroyed) within the drift tent, in m3, over delta_ref_m3. */
int tb_coast_delta_stretch(const tb_coast_params_t *p, double cell_m, int64_t w, int64_t h,
                           int64_t *river, float *stretch, tb_err_t *err);

/* sediment.c: redistributes the units in src over the sheltered shallows with the drift kernel,
 * lays what fits, and fills the budget of *s (river_m3 must already hold the river units' volume).
 * stretch (may be NULL: 1 everywhere) widens the deposit reach near river mouths. src and work are
 * w x h scratch (src destroyed). Returns 0 or -1 with *err. */
int tb_coast_sediment_drift_deposit(const tb_coast_params_t *p, double cell_m, int64_t w, int64_t h,
                                    const uint8_t *kind, const uint32_t *d2,
                                    const uint16_t *exposure, const float *stretch, int64_t *src,
                                    int64_t *work, float *height_m, float *moved_m,
                                    tb_coast_stats_t *s, const tb_coast_debug_t *debug,
                                    tb_err_t *err);

#endif
