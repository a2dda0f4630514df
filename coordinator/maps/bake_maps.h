/* The maps of a bake: the 16-bit heightmap and the diagnostic pictures (docs/bake.md).
 *
 * Every image has planet row j at image row j and lattice column i at image column i, like the
 * painting. Diagnostic maps wider than max_width are reduced by a whole factor; the flow map keeps
 * the largest drainage area of each block, so a one-cell channel survives the reduction (the
 * predecessor's map_flow point-sampled and drew its rivers as broken stubs: docs/traps.md).
 *
 * The maps read the planet's rasters in increasing rows and say through `done` (common/raster.h;
 * may be NULL) which rows they are done with, so a planet that lives in memory-mapped files is
 * never resident whole; only the reduced picture is held.
 */
#ifndef TB_BAKE_MAPS_H
#define TB_BAKE_MAPS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/png_io.h"
#include "common/raster.h"

/* Encodes heights as 16-bit grey over [lo_m, hi_m]: v = round((h - lo) / (hi - lo) * 65535),
 * clipped to 0..65535. Fills *out (TB_PNG_GRAY16, w x h); the caller frees it. *clipped (may be
 * NULL) gets the number of cells outside the range. */
int tb_map_height16(const float *height_m, int64_t w, int64_t h, double lo_m, double hi_m,
                    tb_image_t *out, int64_t *clipped, tb_err_t *err);

/* The same encoding of n heights into px (n samples), for a heightmap written a band of rows at a
 * time; returns the number clipped. The range must not be empty. */
int64_t tb_map_height16_rows(const float *height_m, size_t n, double lo_m, double hi_m,
                             uint16_t *px);

/* Log drainage area over land (land_mask 1), dark sea elsewhere: the rivers. area_min_m2 is one
 * cell (the ramp's foot). */
int tb_map_flow(const float *area_m2, const uint8_t *land_mask, int64_t w, int64_t h,
                double area_min_m2, int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out,
                tb_err_t *err);

/* One colour per drainage basin, hashed from the basin's outlet (a lattice index, -1 for none), so
 * neighbouring basins differ and the same basin has the same colour in every bake. */
int tb_map_basins(const int32_t *basin, const uint8_t *land_mask, int64_t w, int64_t h,
                  int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out, tb_err_t *err);

/* A hillshaded hypsometric preview: sea in blues by depth, land green to brown to grey by height
 * over [0, land_top_m], lit from the north-west. */
int tb_map_preview(const float *height_m, int64_t w, int64_t h, double cell_m, double land_top_m,
                   int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out, tb_err_t *err);

#endif
