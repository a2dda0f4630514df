/* The maps the report adds to a bake (docs/report.md, docs/bake.md "The outputs"):
 *   map_slope.png        Horn slope of the land in degrees (the statistics' slope,
 * docs/statistics.md) map_relief.png       local relief of the land over the statistics' window,
 * metres map_erodibility.png  the stream-power erodibility K of the land (docs/uplift.md)
 *   planet_height_low.png a reduced 16-bit heightmap, same encoding as planet_height.png
 * The three colour maps carry a legend strip below the planet naming the quantity, its units and
 * its range; planet row j is image row j above it, as in every map. Maps of planets wider than
 * max_width are reduced by a whole factor (the block's largest value, so a one-cell cliff or a
 * narrow ridge survives); planet_height_low.png is the block mean, at most 1024 pixels wide.
 */
#ifndef TB_REPORT_MAPS_H
#define TB_REPORT_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/error.h"
#include "common/png_io.h"
#include "common/raster.h"
#include "jobs/plan/plan.h"
#include "jobs/uplift/uplift.h"

#define TB_REPORT_LOW_MAX_WIDTH 1024
/* Rows of the legend strip at font scale 1; maps 2400 pixels wide or more draw it at scale 2. */
#define TB_REPORT_LEGEND_ROWS 40

/* Slope (degrees) over land (mask 1), dark elsewhere, on a fixed scale: stops at 0, 2, 5, 10, 20,
 * 35 and 60 degrees (60 and above saturate), so plains, hills and cliffs are apart in every bake.
 */
int tb_map_slope(const float *slope_deg, const uint8_t *land, int64_t w, int64_t h,
                 int64_t max_width, tb_image_t *out, tb_err_t *err);

/* Relief (metres) over land, on sqrt(relief / top), top the smallest 1, 2 or 5 x 10^k at or above
 * the land's largest relief; window_m names the window in the legend. */
int tb_map_relief(const float *relief_m, const uint8_t *land, int64_t w, int64_t h, double window_m,
                  int64_t max_width, tb_image_t *out, tb_err_t *err);

/* Erodibility K over land, linear between the land's smallest and largest K; m is the stream-power
 * area exponent, which decides K's units (per year at m 0.5). */
int tb_map_erodibility(const float *k, const uint8_t *land, int64_t w, int64_t h, double m,
                       int64_t max_width, tb_image_t *out, tb_err_t *err);

/* The heightmap reduced by a whole factor to at most max_width pixels wide, each pixel the mean of
 * its block, encoded like tb_map_height16 over [lo_m, hi_m]. */
int tb_map_height16_low(const float *height_m, int64_t w, int64_t h, double lo_m, double hi_m,
                        int64_t max_width, tb_image_t *out, tb_err_t *err);

/* K over the planet from the plan, as each region job builds it (tb_uplift_build over the
 * region's box, kept on the region's own land): k_out (w x h) gets K on the land of the selected
 * regions (selected[i] for region index i; NULL: all) and 0 elsewhere. When uplift_check is not
 * NULL (the composited U the regions returned), *mismatches counts land cells whose U built here
 * differs from it: 0 shows K was derived from the same field the solve used. */
int tb_report_erodibility_field(const tb_plan_t *plan, const tb_uplift_probes_t *probes,
                                const bool *selected, float *k_out, const float *uplift_check,
                                int64_t *mismatches, tb_err_t *err);

/* What the four maps are made of: planet rasters w x h (row-major; typically memory-mapped files,
 * read in increasing rows, `done` told which rows each pass is finished with, common/raster.h; may
 * be NULL). land_m is what the statistics saw (solved land, 0 elsewhere), planet_m the final
 * heights, uplift_m_yr the solve's U, solved the land mask, classes the plan's class raster. */
typedef struct {
    const tb_plan_t *plan;
    const tb_uplift_probes_t *probes;
    const float *land_m, *planet_m, *uplift_m_yr;
    const uint8_t *solved, *classes;
    int64_t w, h;
    double cell_m;
    const tb_rows_hook_t *done;
} tb_report_maps_in_t;

/* Writes the four maps into dir (atomically) and records each file's XXH3 in hashes, a band of
 * rows at a time: what it holds is the reduced pictures and a few bands of fields (about 24 MB at
 * 37500 cells a row), whatever the planet. K is built from the class raster by bands of the planet
 * (tb_uplift_build with the blend radius either side) and its U checked against the solve's at
 * every solved cell: a difference fails it (TB_E_INTERNAL). Returns 0, or -1 with *err naming the
 * file. */
int tb_report_maps_write(const char *dir, const tb_report_maps_in_t *in, int64_t max_width,
                         cJSON *hashes, tb_err_t *err);

#endif
