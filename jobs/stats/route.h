/* Drainage area of a finished heightmap, for `terrain analyze` (a DEM or a bake's own heightmap has
 * no solve to hand its statistics an area).
 *
 * The geology solve's own kernels, called once on a fixed surface (jobs/geology): land (height
 * above 0 m, the caller's sea level subtracted) is "solved", everything else - the sea and the
 * ring of the box (the whole outer ring of a box that does not wrap, rows 0 and h-1 of one that
 * does) - is held at 0 m and drains nothing (or, with an open border, the ring stands at its own
 * height: tb_stats_route_area_border). Then:
 *   1. D8 receivers (O'Callaghan & Mark 1984) with no tie-break jitter (ties go to the first
 *      neighbour in tb_nb order), receivers.h;
 *   2. sink resolution by priority-flood + epsilon (Barnes, Lehman & Mulla 2014) on a copy of the
 *      heights, sinks.h: every depression of the map becomes a flat with a ladder to its pour
 * point;
 *   3. drainage area by MFD in Kahn order (Freeman 1991, Quinn et al. 1991) at the given exponent,
 *      or D8 along the Braun & Willett stack at exponent 0, accumulation.h and spl.h.
 * The area is taken on the filled copy; the heights the caller passes are not changed, so the
 * statistics read the map's own slopes. The geology API fits as it is: it takes a box, a solve
 * mask and heights, and the surface is routed exactly as a solve step routes it (only without the
 * per-step jitter, which has no meaning on a single surface).
 *
 * Typical sizes: the 25 km demo planet (3.1 M cells) is routed and measured by `terrain analyze` in
 * 0.3 s at a peak of 27 bytes a cell (workspaces of the sinks and the accumulation, the filled
 * copy, receivers; they grow with the depressions). Boxes are refused from 2^31 cells (the
 * geology workspaces index cells with int32).
 */
#ifndef TB_STATS_ROUTE_H
#define TB_STATS_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"

typedef struct {
    size_t land_cells;     /* routed cells (land off the ring) */
    size_t pits;           /* cells with no lower neighbour before the sink resolution */
    int64_t flooded_cells; /* cells the sink resolution raised */
} tb_route_info_t;

/* Drainage area in m2 of every cell of box (w x h, row-major) into area_m2: a land cell's own cell
 * included; 0 on the sea and the ring (they receive, but the statistics never read them).
 * height_m is metres above sea level (land > 0; finite), not modified. mfd_exponent >= 0 (0: D8).
 * info may be NULL. Returns 0, or -1 with *err set (a box the geology refuses, a height that is not
 * finite, an exponent out of range, no memory). */
int tb_stats_route_area(const tb_frame_t *box, const float *height_m, double mfd_exponent,
                        float *area_m2, tb_route_info_t *info, tb_err_t *err);

/* How the ring of the box is treated. */
typedef enum {
    TB_ROUTE_BORDER_SEA = 0, /* held at 0 m, as the solve holds it: a cliff at a DEM's edge */
    TB_ROUTE_BORDER_OPEN = 1 /* an outlet at its own height: flow leaves through the edge as if
                                the ground went on, no cliff (a DEM cut out of a larger world) */
} tb_route_border_t;

/* tb_stats_route_area with the ring's treatment chosen (tb_stats_route_area is SEA). With OPEN,
 * the map is routed inside a box one cell larger on every side that has a ring, held at 0 m: the
 * map's own edge cells are routed land at their own heights, so the land inside drains into them
 * only where the ground falls towards the edge, and the routing inside a crop of a larger map
 * equals the larger map's wherever no flow enters the crop through its edge
 * (tests/test_analyze.c). The edge cells themselves then drain over the added ring's cliff. */
int tb_stats_route_area_border(const tb_frame_t *box, const float *height_m, double mfd_exponent,
                               tb_route_border_t border, float *area_m2, tb_route_info_t *info,
                               tb_err_t *err);

#endif
