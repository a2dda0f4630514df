/* map_uplift.png: the rock uplift rate of a box in mm/yr with fault traces stroked in cyan.
 *
 * The predecessor's most useful diagnostic (docs/bake.md, "The outputs"): U is the
 * field everything else is a consequence of, and map_slope should be recognisably the same picture.
 * One pixel per cell, box row j at image row j like the painting and all maps (docs/determinism.md:
 * one convention for every PNG), so it lies over map_class and planet_height without a flip. Cells
 * with U = 0 - the ocean - are near black; land runs through viridis (monotone in luminance) in
 * sqrt(U / top) from 0 to a round ceiling at or above the box's largest rate (1, 2 or 5 times a
 * power of ten mm/yr; tb_map_uplift_top_mm_yr says which); the square root keeps a 0.012 mm/yr
 * plain and a 0.06 mm/yr massif apart. Traces are drawn as lines rather than as the rate they add,
 * because a fault is a couple of kilometres wide and the map is tens of kilometres across.
 */
#ifndef TB_MAP_UPLIFT_H
#define TB_MAP_UPLIFT_H

#include <stddef.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/raster.h"
#include "jobs/uplift/uplift.h"

/* The ramp's ceiling for these rates, mm/yr: the smallest 1, 2 or 5 x 10^k at or above the
 * largest rate (0.01 when every rate is 0). */
double tb_map_uplift_top_mm_yr(const float *uplift_m_yr, size_t n);

/* Writes map_uplift.png of `box` to `path` atomically: uplift_m_yr is box-sized (m/yr), traces are
 * tb_uplift_fault_traces polylines (lattice cell coordinates; may be NULL with n 0). Returns 0, or
 * -1 with *err naming the path or the bad frame. */
int tb_map_uplift_write(const char *path, const tb_frame_t *box, const float *uplift_m_yr,
                        const tb_polyline_t *traces, size_t n, tb_err_t *err);

/* The same file, painted and encoded band_rows rows at a time (0: about 4 M pixels a band; never
 * the whole image in memory, and the same bytes whatever the band), calling `done` (may be NULL)
 * with each band of uplift_m_yr's rows once it is read: for a planet's mapped raster, whose rows
 * may then leave memory. tb_map_uplift_write is this with band_rows 0. */
int tb_map_uplift_write_rows(const char *path, const tb_frame_t *box, const float *uplift_m_yr,
                             const tb_polyline_t *traces, size_t n, int64_t band_rows,
                             const tb_rows_hook_t *done, tb_err_t *err);

#endif
