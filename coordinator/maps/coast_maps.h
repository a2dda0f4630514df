/* The coastal pass's maps (docs/coast.md, "The maps"): what the pass moved and how exposed the
 * shore is. Same conventions as coordinator/bake_maps.h: planet row j at image row j, reduced by a
 * whole factor past max_width, each pixel keeping the most telling cell of its block.
 */
#ifndef TB_COAST_MAPS_H
#define TB_COAST_MAPS_H

#include <stdint.h>

#include "common/error.h"
#include "common/png_io.h"
#include "common/raster.h"

/* map_coast.png: moved metres (negative: the surf cut, positive: sediment laid) in cool and warm on
 * a grey ground (land light, sea dark, sea deeper than deep_m darkest), on a fixed logarithmic ramp
 * from 1 cm to top_m (a round number at or above the largest move). The sea floor's reshaping is
 * not in moved_m, so it never swamps the few metres the processes move. A reduced pixel shows the
 * largest move of its block. Fills *out (RGB8); the caller frees it. */
int tb_map_coast(const float *moved_m, const float *height_m, const uint8_t *land_mask, int64_t w,
                 int64_t h, double deep_m, int64_t max_width, tb_image_t *out, double *top_m,
                 tb_err_t *err);

/* map_exposure.png: the carried exposure (thousandths; 0xFFFF where none was carried, which is
 * beyond carry_m of the waterline) from dark violet (sheltered) to yellow (open); land light grey,
 * sea without a value dark grey. A reduced pixel shows the most sheltered carried value of its
 * block. Fills *out (RGB8). */
int tb_map_exposure(const uint16_t *exposure, const uint8_t *land_mask, int64_t w, int64_t h,
                    int64_t max_width, tb_image_t *out, tb_err_t *err);

/* The same two maps with the land read through a class raster: land_of[class] nonzero for a land
 * class (no planet-sized mask), and `done` (common/raster.h; may be NULL) told which rows of the
 * rasters they are done with as they go down the planet. */
int tb_map_coast_classes(const float *moved_m, const float *height_m, const uint8_t *classes,
                         const uint8_t land_of[256], int64_t w, int64_t h, double deep_m,
                         int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out,
                         double *top_m, tb_err_t *err);
int tb_map_exposure_classes(const uint16_t *exposure, const uint8_t *classes,
                            const uint8_t land_of[256], int64_t w, int64_t h, int64_t max_width,
                            const tb_rows_hook_t *done, tb_image_t *out, tb_err_t *err);

#endif
