/* Landmasses: the 8-connected components of land on the cylinder, found a row at a time, and arcs
 * round it.
 *
 * Land is every cell whose legend class is of kind land. Components are found by runs with X
 * wrapping (ccl.h), so a landmass across the seam is one landmass. Those under the minimum area are
 * dropped: their cells take the ocean class most common along their edge, and they are counted. The
 * rest are numbered 1.. in order of their circular centroid (row, then column), so an edit far away
 * does not renumber them.
 *
 * The finder reads the class raster three times, row by row, holding three rows and a record per
 * provisional label, never the raster (docs/plan.md, "The streamed plan"):
 *   1. scan: components, their cells, rows, arcs and first cells, and the ocean classes along the
 *      edge of every component that may still be dropped (integers: any merge order gives them);
 *   2. measure (after resolve): the same rows again, each run now known by its final component, so
 *      the centroid sums of every kept landmass are added in raster order (floating point: the
 *      order is part of the answer) with its cells per class; the kept land mask for the regions;
 *   3. label (after number): the same rows again, the drop written into them and the landmass id of
 *      every cell into a row of the label raster.
 *
 * A landmass's X extent is an arc of the circle, not an interval: a connected set's columns form
 * one arc (the full ring when it goes round). tb_arc_cover is the shortest arc covering any set of
 * arcs, which regions use for the union of their landmasses.
 */
#ifndef TB_PLAN_LANDMASSES_H
#define TB_PLAN_LANDMASSES_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"

/* Columns x0 .. x0 + w - 1, taken modulo the circumference W; w == W is the full ring, w == 0 none.
 */
typedef struct {
    int64_t x0, w;
} tb_arc_t;

/* The shortest arc covering every arc in arcs[0..n) on a circle of W columns: the complement of the
 * largest gap, the first one in column order on a tie. Returns {0, W} when there is no gap and
 * {0, 0} when n is 0. Reorders arcs. */
tb_arc_t tb_arc_cover(tb_arc_t *arcs, int64_t n, int64_t W);

/* The union of two arcs that share or neighbour a column (what two touching runs' sets are); for
 * arcs that do not touch, tb_arc_cover of the two. */
tb_arc_t tb_arc_join(tb_arc_t a, tb_arc_t b, int64_t W);

/* Whether an arc crosses the seam between column W - 1 and column 0 (the full ring does). */
static inline bool tb_arc_crosses_seam(tb_arc_t a, int64_t W)
{
    return a.w >= W || a.x0 + a.w > W;
}

typedef struct {
    int comp; /* component of the land labelling, 0.. in raster order of first cells */
    int64_t cells;
    int64_t y0, y1;                 /* first and last row, inclusive */
    tb_arc_t arc;                   /* shortest arc covering the columns */
    double sum_cos, sum_sin, sum_y; /* over cells, of the angle 2 pi (x + 0.5) / W and y + 0.5 */
    double centroid_x, centroid_y;  /* circular centroid in cells, x in [0, W) */
    int64_t first_index;            /* raster index of the first cell */
    int64_t class_cells[TB_MAX_CLASSES]; /* cells of each legend class */
} tb_landmass_t;

typedef struct {
    int64_t found;   /* components before the drop */
    int64_t dropped; /* components under the minimum area */
    int64_t dropped_cells;
    double dropped_area_km2;
    int n; /* landmasses kept; landmass id k is kept[k - 1] */
    tb_landmass_t *kept;
} tb_landmasses_t;

typedef struct tb_landmass_finder_t tb_landmass_finder_t;

/* A finder for a w x h class raster (X wraps) with the legend's land classes: components with
 * cells * cell_m^2 under min_area_km2 are dropped to the ocean class most common along their edge
 * (the first ocean class when they touch none). NULL with *err when memory runs out or the legend
 * has no ocean class. */
tb_landmass_finder_t *tb_landmass_finder_new(int64_t w, int64_t h, const tb_legend_t *legend,
                                             double cell_m, double min_area_km2, tb_err_t *err);

/* Pass 1: row y (the rows in order, 0 first) of the class raster before the drop. 0 or -1. */
int tb_landmass_finder_scan(tb_landmass_finder_t *self, const uint8_t *row, tb_err_t *err);

/* After the h rows of pass 1: the components and which are dropped. 0 or -1 with *err. */
int tb_landmass_finder_resolve(tb_landmass_finder_t *self, tb_err_t *err);

/* Pass 2: the same rows again, in order. kept_mask (w bytes, may be NULL) gets 1 on the cells of
 * kept landmasses, 0 elsewhere. 0 or -1. */
int tb_landmass_finder_measure(tb_landmass_finder_t *self, const uint8_t *row, uint8_t *kept_mask,
                               tb_err_t *err);

/* After pass 2: centroids, and the ids by centroid. 0 or -1 with *err. */
int tb_landmass_finder_number(tb_landmass_finder_t *self, tb_err_t *err);

/* Pass 3: the same rows again, in order: the drop is written into `row` (after it is read), and
 * labels (w values, may be NULL) gets the landmass id of each cell of a kept landmass; its other
 * cells are not touched, so a row of zeros ends as the label row (0 for ocean and dropped land).
 * 0 or -1. */
int tb_landmass_finder_label(tb_landmass_finder_t *self, uint8_t *row, int32_t *labels,
                             tb_err_t *err);

/* The landmasses: counts after resolve, kept[] (with sums and centroids) after number. Owned by
 * the finder. */
const tb_landmasses_t *tb_landmass_finder_result(const tb_landmass_finder_t *self);

/* After resolve: the raster index of the first cell of every kept landmass in raster order (the
 * order of their components), and their count. Owned by the finder. */
const int64_t *tb_landmass_finder_firsts(const tb_landmass_finder_t *self, int *n);

/* After number: the landmass id of the k-th kept landmass in raster order of first cells. */
int tb_landmass_finder_id(const tb_landmass_finder_t *self, int k);

/* Labels the finder's first pass opened: what its memory grows with. */
int64_t tb_landmass_finder_labels(const tb_landmass_finder_t *self);

/* Frees the finder and sets *self_p to NULL; accepts NULL. */
void tb_landmass_finder_destroy(tb_landmass_finder_t **self_p);

/* The numbering order of landmasses, and of the regions made of them: the cell row of the
 * centroid, then its cell column, then the first cell's index (a qsort-style -1, 0 or 1). */
static inline int tb_landmass_order(double cy_a, double cx_a, int64_t first_a, double cy_b,
                                    double cx_b, int64_t first_b)
{
    int64_t ya = (int64_t)floor(cy_a), yb = (int64_t)floor(cy_b);
    if (ya != yb)
        return ya < yb ? -1 : 1;
    int64_t xa = (int64_t)floor(cx_a), xb = (int64_t)floor(cx_b);
    if (xa != xb)
        return xa < xb ? -1 : 1;
    return (first_a > first_b) - (first_a < first_b);
}

/* The circular centroid of the sums of a set of cells: x in [0, W), y in cells. */
void tb_landmass_centroid(double sum_cos, double sum_sin, double sum_y, int64_t cells, int64_t W,
                          double *x, double *y);

#endif
