/* Landmasses: the 8-connected components of land on the cylinder, and arcs round it.
 *
 * Land is every cell whose legend class is of kind land. Components are found by runs (ccl.h) with
 * X wrapping, so a landmass across the seam is one landmass. Those under the minimum area are
 * dropped: their cells take the ocean class most common along their edge, and they are counted. The
 * rest are numbered 1.. in order of their circular centroid (row, then column), so an edit far away
 * does not renumber them.
 *
 * A landmass's X extent is an arc of the circle, not an interval: the shortest arc covering its
 * columns (the complement of the largest gap between them). tb_arc_cover is that rule for any set
 * of arcs, and regions use it for the union of their landmasses.
 */
#ifndef TB_PLAN_LANDMASSES_H
#define TB_PLAN_LANDMASSES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "jobs/plan/ccl.h"

/* Columns x0 .. x0 + w - 1, taken modulo the circumference W; w == W is the full ring, w == 0 none.
 */
typedef struct {
    int64_t x0, w;
} tb_arc_t;

/* The shortest arc covering every arc in arcs[0..n) on a circle of W columns: the complement of the
 * largest gap, the first one in column order on a tie. Returns {0, W} when there is no gap and
 * {0, 0} when n is 0. Reorders arcs. */
tb_arc_t tb_arc_cover(tb_arc_t *arcs, int64_t n, int64_t W);

/* Whether an arc crosses the seam between column W - 1 and column 0 (the full ring does). */
static inline bool tb_arc_crosses_seam(tb_arc_t a, int64_t W)
{
    return a.w >= W || a.x0 + a.w > W;
}

typedef struct {
    int comp; /* component in the land labelling */
    int64_t cells;
    int64_t y0, y1;                 /* first and last row, inclusive */
    tb_arc_t arc;                   /* shortest arc covering the columns */
    double sum_cos, sum_sin, sum_y; /* over cells, of the angle 2 pi (x + 0.5) / W and y + 0.5 */
    double centroid_x, centroid_y;  /* circular centroid in cells, x in [0, W) */
    int64_t first_index;            /* raster index of the first cell */
} tb_landmass_t;

typedef struct {
    tb_ccl_t ccl;    /* land components before the drop */
    int64_t found;   /* components before the drop */
    int64_t dropped; /* components under the minimum area */
    int64_t dropped_cells;
    double dropped_area_km2;
    int n; /* landmasses kept; landmass id k is kept[k - 1] */
    tb_landmass_t *kept;
    int32_t *comp_id; /* per component: its landmass id, 0 when dropped */
} tb_landmasses_t;

/* Finds the landmasses of a w x h class raster (row-major, X wraps): components of land classes,
 * those with cells * cell_m^2 under min_area_km2 dropped and written back into `classes` as the
 * ocean class most common along their edge (the first ocean class when they touch none). Fills
 * *out, freed with tb_landmasses_free. Returns 0, or -1 with *err when memory runs out or the
 * legend has no ocean class. */
int tb_landmasses_find(uint8_t *classes, int64_t w, int64_t h, const tb_legend_t *legend,
                       double cell_m, double min_area_km2, tb_landmasses_t *out, tb_err_t *err);

void tb_landmasses_free(tb_landmasses_t *lm);

/* The circular centroid of the sums of a set of cells: x in [0, W), y in cells. */
void tb_landmass_centroid(double sum_cos, double sum_sin, double sum_y, int64_t cells, int64_t W,
                          double *x, double *y);

#endif
