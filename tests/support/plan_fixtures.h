/* Small planets for the plan's suites: a manifest with a two-land, two-ocean legend, and paintings
 * drawn from class rasters or ASCII art. */
#ifndef TB_TEST_PLAN_FIXTURES_H
#define TB_TEST_PLAN_FIXTURES_H

#include <stdint.h>

#include "common/manifest.h"
#include "common/png_io.h"

/* Classes of the fixture legend, in legend order. */
enum { FIX_LOW = 0, FIX_HIGH = 1, FIX_SHELF = 2, FIX_DEEP = 3 };

/* A finished manifest for a planet w cells round at cell_m (one tile round), minimum landmass 0,
 * ocean margin margin_cells cells, and the fixture legend (lowland #40a040, highland #c0a060, shelf
 * #80b0e0, deep #203060, tolerance 24, max_unmatched_fraction 0.01). Aborts the test on failure. */
void fix_manifest(tb_manifest_t *m, int64_t w, double cell_m, double margin_cells);

/* An RGB8 painting whose pixel k is the legend colour of classes[k]. */
void fix_painting(const tb_manifest_t *m, const uint8_t *classes, int64_t w, int64_t h,
                  tb_image_t *out);

/* A class raster from ASCII rows ('.' deep, ',' shelf, '#' lowland, '^' highland), all rows the
 * same width; returns a malloc'd w * h array. */
uint8_t *fix_ascii(const char *const *rows, int64_t *w, int64_t *h);

/* Fills the rectangle [x0, x0 + rw) x [y0, y0 + rh) of a w-wide raster with value v; x wraps. */
void fix_rect(uint8_t *classes, int64_t w, int64_t x0, int64_t y0, int64_t rw, int64_t rh,
              uint8_t v);

#endif
