/* Resampling from the geology lattice to the detail lattice by Catmull-Rom cubic convolution
 * (Keys 1981, "Cubic convolution interpolation for digital image processing", a = -1/2), the tensor
 * product of the 1-D kernel in world coordinates.
 *
 * Method: both lattices are centre-aligned (common/grid.h): detail cell I has its centre at
 * (I + 0.5) cell_m, which is geology coordinate u = (I + 0.5) cell_m / geo_cell_m - 0.5, between
 * geology centres floor(u) and floor(u) + 1. The value is the sum over the 4 x 4 geology cells
 * floor(u) - 1 .. floor(u) + 2 (and the same in v) of w(t) times the cell, with the Catmull-Rom
 * weights of t = u - floor(u). The interpolant is C1 across every geology cell boundary (no 8 m
 * lattice in a hillshade), passes through every geology value, and reproduces any polynomial of
 * degree <= 2 in each axis, so a bilinear ramp a + b x + c y + d x y comes back exactly (bit for
 * bit when the coefficients and cell sizes are dyadic, as 8 m and 2 m are: the weights at t = 1/8,
 * 3/8, 5/8, 7/8 are dyadic rationals). It can overshoot by a few per cent of a step next to a
 * cliff.
 *
 * Units: whatever the source holds (metres of height, log10 of m2). X wraps through lattice
 * columns; Y rows beyond the planet are clamped to its first or last row (a world rule, the same in
 * every window). Precondition: `geo` covers tb_tile_geo_window(detail) (lattice.h). Determinism:
 * each output is a fixed-order sum of double products of values and weights that depend only on
 * world position, so any window gives the same bits for the same cell.
 */
#ifndef TB_DETAIL_RESAMPLE_CATMULL_ROM_H
#define TB_DETAIL_RESAMPLE_CATMULL_ROM_H

#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"

/* Resamples src (geo->w x geo->h, row-major, on the geology lattice) into out (det->w x det->h
 * doubles) on the detail lattice. Returns 0, or -1 with *err when the frames are not the same
 * planet or geo does not cover det's stencil. */
int tb_resample_catmull_rom(const tb_frame_t *geo, const float *src, const tb_frame_t *det,
                            double *out, tb_err_t *err);

/* The geology value under each detail cell's centre (nearest; for classes). Same preconditions. */
int tb_resample_nearest_u8(const tb_frame_t *geo, const uint8_t *src, const tb_frame_t *det,
                           uint8_t *out, tb_err_t *err);

#endif
