/* The coastal detail pass: the shore at 2 m, from what the coastal pass decided at 8 m
 * (docs/tiles.md, "6. The shore"). The coastal pass (jobs/coast) cut a platform where the waves
 * reach (exposure x surf_reach_m from the waterline), left a cliff behind it and laid sediment in
 * the sheltered shallows; at 8 m those are a ramp, a step and a wedge. This pass draws them at the
 * detail cell:
 *
 * - the waterline: a signed distance y (metres, positive inland) to the zero contour of the
 *   resampled 8 m heights (an exact distance transform within TB_DETAIL_SHORE_REACH_CELLS, smoothed
 *   over a tent of 3 cells twice, so the 8 m staircase's octagons round off), plus a wander of
 *   shore.outline_m of fBm in world metres;
 * - a beach where the shore is sheltered or fed (exposure below about 0.6, or sediment laid): the
 *   equilibrium profile of Dean (1991, "Equilibrium beach profiles: characteristics and
 *   applications", J. Coastal Research 7), depth = A x^(2/3) offshore with A = 0.21 D^0.48 (Moore
 *   1982's fit, D the grain size in mm), out to the closure depth, where it joins the shelf; a
 *   beach face rising at shore.foreshore_slope to a berm of shore.berm_m, its flat top
 *   shore.berm_width_m wide, and the land behind it at most 30 degrees above it;
 * - on exposed coast the surf cut (exposure above about 0.45, the land it cut more than a metre
 *   above the platform) the wave-cut platform of the coastal pass, the cliff face at
 *   shore.cliff_deg whose top stands where the surf's reach ended, and at its foot either a notch
 *   (the most exposed: the waves clear the debris and cut a groove shore.notch_m deep) or a scree
 *   apron at shore.scree_deg climbing shore.apron_share of the cliff (Sunamura 1992, "Geomorphology
 *   of rocky coasts", for the platform, notch and talus at the foot);
 * - elsewhere (low exposed coast) the platform as the coastal pass left it, with the waterline
 *   moved onto y = 0.
 *
 * The backshore a cliff stands on is the land before the surf cut it: the current height plus the
 * coastal pass's cut (moved_m < 0) at the cell, so nothing is read beyond the cell but the
 * distance. Everything is a function of world position: the inputs are resampled from the spec's
 * geology window, the distance is exact for every cell at least TB_DETAIL_SHORE_REACH_CELLS inside
 * the window (the margin is never smaller), the noise is sampled at world metres, and each height
 * is a function of its own cell's values. Pre: h is the window's heights after thermal weathering.
 * Post: h reshaped within the reach of the waterline, sand (if not NULL) the share of beach sand a
 * cell holds, 0..255, for the splat. Units: metres.
 */
#ifndef TB_DETAIL_SHORE_H
#define TB_DETAIL_SHORE_H

#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/pool.h"
#include "jobs/detail/params.h"

/* The pass's inputs over the window: all win->w x win->h, borrowed. */
typedef struct {
    const tb_detail_params_t *p;
    uint64_t seed;
    const tb_frame_t *win;
    const uint8_t *land8;   /* 1 where the resampled 8 m height is above sea level */
    const double *exposure; /* resampled carried exposure, 0 sheltered .. 1 open */
    const double *cut_m;    /* resampled surf cut, metres (>= 0) */
    const double *laid_m;   /* resampled sediment laid, metres (>= 0) */
} tb_shore_in_t;

/* What the pass did, over the window (diagnostics, not encoded). */
typedef struct {
    int64_t beach_cells, cliff_cells, shore_cells; /* weight over 1/2 within the reach */
} tb_shore_stats_t;

/* Reshapes h (doubles, in place). sand may be NULL. pool may be NULL; any pool gives the same
 * bits. Returns 0 or -1 with *err (memory). A window without both land and sea is left alone. */
int tb_shore_dean_sunamura(const tb_shore_in_t *in, double *h, uint8_t *sand,
                           tb_shore_stats_t *stats, tb_pool_t *pool, tb_err_t *err);

/* The Dean profile's A (m^(1/3)) for sand of grain_mm: 0.21 D^0.48. */
double tb_shore_dean_a(double grain_mm);

#endif
