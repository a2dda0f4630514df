/* Regions: landmasses grouped into the jobs of the geology solve.
 *
 * The land mask is dilated with the wrap-aware distance transform (common/edt.h) by half the ocean
 * margin, and every 8-connected component of the dilated mask (X wraps) is one region: landmasses
 * whose nearest cells are within about one margin of each other share a region, and nothing else
 * does. Boxes are never merged by overlap (docs/traps.md: one long thin landmass has a
 * box the size of the planet). A region's box is the shortest X arc and the row range of its LAND,
 * grown by the full margin and clipped to the planet in Y; when the grown arc would reach round the
 * planet the box is the full ring (x0 0, w = W), which the solve runs as a wrapping frame.
 *
 * Region ids are 1-based, in order of the circular centroid of each region's land (row, then
 * column), so an edit far away does not renumber a region.
 *
 * The grouper takes the kept land mask a row at a time. A dilation by radius r only looks r rows
 * up and down, so it dilates bands of band_rows rows with r rows of halo either side (the exact
 * transform of those rows: tb_edt_dilate of the band with its halo is the planet's dilation there,
 * since nothing further than r rows away can reach in) and labels the dilated rows as they come
 * (ccl.h). It holds band_rows + 2 r rows of mask and of dilation, and a label per provisional
 * region component.
 */
#ifndef TB_PLAN_REGIONS_H
#define TB_PLAN_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"
#include "jobs/plan/landmasses.h"

typedef struct {
    int id;         /* 1-based; what `bake --only` takes */
    tb_frame_t box; /* on the geology lattice: the land grown by the ocean margin */
    int n_landmasses;
    int *landmass_ids; /* ascending landmass ids; owned by the regions table */
    int64_t land_cells;
    int64_t box_cells;                   /* box.w * box.h: what the solve pays for */
    int64_t class_cells[TB_MAX_CLASSES]; /* land cells of each legend class (ocean classes 0) */
    tb_arc_t land_arc;                   /* shortest X arc covering the land */
    int64_t land_y0, land_y1;            /* rows of the land, inclusive */
    bool straddles_seam;           /* the land's arc crosses x = W-1 -> 0 (or rings the planet) */
    bool box_wraps;                /* the box crosses the seam or is the full ring */
    double centroid_x, centroid_y; /* circular centroid of the land in cells, x in [0, W) */
} tb_plan_region_t;

typedef struct {
    int n;
    tb_plan_region_t *regions; /* regions[id - 1] */
    int32_t *landmass_region;  /* landmass_region[landmass id] = region id (entry 0 unused) */
    int64_t margin_cells;      /* the ocean margin in cells (rounded up) */
    int64_t dilation_radius2;  /* squared dilation radius in cells: (margin / 2)^2, rounded down */
} tb_regions_t;

typedef struct tb_region_grouper_t tb_region_grouper_t;

/* A grouper for a w x h planet of cell_m cells (X wraps) and an ocean margin in km. firsts[0..n)
 * are the raster indices of the first cells of the kept landmasses in raster order (the finder's,
 * landmasses.h); band_rows >= 1 rows are dilated at a time; threads >= 1 split the transform (the
 * result does not depend on them). NULL with *err when memory runs out or a band with its halo
 * would exceed the transform's 65000 rows. */
tb_region_grouper_t *tb_region_grouper_new(int64_t w, int64_t h, double cell_m,
                                           double ocean_margin_km, const int64_t *firsts, int n,
                                           int64_t band_rows, int threads, tb_err_t *err);

/* The next row (in order, 0 first) of the kept land mask: w bytes, non-zero on kept land. */
int tb_region_grouper_row(tb_region_grouper_t *self, const uint8_t *mask_row, tb_err_t *err);

/* After the h rows: the regions of the landmasses lm (numbered, with their sums and class cells),
 * where id_of_first[k] is the landmass id of firsts[k]. Fills *out, freed with tb_regions_free.
 * 0 or -1 with *err. */
int tb_region_grouper_finish(tb_region_grouper_t *self, const tb_landmasses_t *lm,
                             const int *id_of_first, tb_regions_t *out, tb_err_t *err);

/* Frees the grouper and sets *self_p to NULL; accepts NULL. */
void tb_region_grouper_destroy(tb_region_grouper_t **self_p);

void tb_regions_free(tb_regions_t *regions);

#endif
