/* The two pictures of a plan: map_class.png (every cell in its legend colour) and map_regions.png
 * (every region's land in its own colour, ocean dark, each box outlined and each id written at the
 * circular centroid of its land, docs/plan.md). Big planets are point-sampled down
 * by a whole factor so the map is at most max_width pixels wide; ids are drawn at the map's scale,
 * so they stay legible whatever the factor. The maps read the plan's rasters a row at a time (only
 * the rows they sample) and release each row once drawn: a map costs its own pixels, never the
 * planet (docs/plan.md, "The streamed plan").
 */
#ifndef TB_PLAN_MAPS_H
#define TB_PLAN_MAPS_H

#include <stdint.h>

#include "common/error.h"
#include "common/png_io.h"
#include "jobs/detail/lattice.h"
#include "jobs/plan/overlay.h"
#include "jobs/plan/plan.h"

#define TB_PLAN_MAP_MAX_WIDTH 4096

/* The colour of region `id` (1-based): hues walk by the golden angle (137.5 degrees), saturation
 * cycles over three levels and value over two, so neighbouring ids are far apart in colour. */
void tb_region_colour(int id, uint8_t rgb[3]);

/* The whole factor a planet w cells wide is sampled down by to fit max_width pixels. */
int64_t tb_plan_map_factor(int64_t planet_w, int64_t max_width);

/* Renders map_class into *out (RGB8, allocated; free with tb_image_free). Returns 0 or -1. */
int tb_plan_map_class(const tb_plan_t *plan, int64_t max_width, tb_image_t *out, tb_err_t *err);

/* Renders map_overlay.png into *out (RGB8, allocated): map_class dimmed to a third, with every
 * pixel of a mark in the mark's colour (a mark means nothing on its own and everything against the
 * coastline it was drawn along). `marks` is the overlay's reduced copy made for this map's factor
 * (tb_overlay_features_keep_map), mw x mh. Returns 0 or -1. */
int tb_plan_map_overlay(const tb_plan_t *plan, const tb_overlay_legend_t *legend,
                        const uint8_t *marks, int64_t mw, int64_t mh, int64_t max_width,
                        tb_image_t *out, tb_err_t *err);

/* Renders map_regions into *out (RGB8, allocated). Returns 0 or -1. */
int tb_plan_map_regions(const tb_plan_t *plan, int64_t max_width, tb_image_t *out, tb_err_t *err);

/* The content (tb_tile_content_t) of every tile of lattice L, in tile order (row by row), from the
 * plan's class raster read a row at a time (what tb_tile_content finds on the whole land mask);
 * content has tb_tile_count(L) bytes. Returns the number of land and coast tiles, or -1 when memory
 * runs out or L is not the plan's planet. */
int tb_plan_tile_census(const tb_plan_t *plan, const tb_tile_lattice_t *L, uint8_t *content);

/* Renders map_tiles.png: map_class with the detail tile lattice drawn over it and the id of every
 * land (white) and coast (grey) tile written in it (docs/tiles.md). RGB8, allocated. 0 or -1. */
int tb_plan_map_tiles(const tb_plan_t *plan, const tb_tile_lattice_t *L, const uint8_t *content,
                      int64_t max_width, tb_image_t *out, tb_err_t *err);

#endif
