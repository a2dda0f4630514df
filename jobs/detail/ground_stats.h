/* Statistics that say whether 2 m ground reads as ground (docs/tiles.md, "Ground at 2 m"): the
 * droplets' deposit mounds, where the deposit lies, the roughness spectrum of a height grid and a
 * second-derivative statistic of a surface. Pure functions of the grids they are handed, used by
 * bench/bench_tile.c, tests/test_detail*.c and tests/tools/tb_ground.c (which reads a bake's tiles
 * and real DEMs); nothing in a tile job reads them, so they decide nothing about a planet.
 *
 * Sizes: a tile's interior (2500 x 2500) or a 1024 x 1024 crop; every function is O(cells) but the
 * spectrum, O(n^2 log n) over a square power-of-two crop.
 */
#ifndef TB_DETAIL_GROUND_STATS_H
#define TB_DETAIL_GROUND_STATS_H

#include <stdint.h>

#include "common/error.h"

/* The mounds of a byte deposit map: its regional maxima, plateaus of one value above 0
 * (8-connected) whose every neighbour is lower, counted once each, inside the border row and
 * column. mask (may be NULL) limits the count to plateaus that start on a cell where it is
 * non-zero. -1 when out of memory. */
int64_t tb_ground_deposit_maxima_u8(const uint8_t *dep, int64_t w, int64_t h, const uint8_t *mask);

/* Where a deposit lies: of the deposited depth (dep_m, metres, w x h), the share on cells that are
 * hollows (the Laplacian of the heights over the 8-neighbour ring, 2 cells across, above
 * +hollow_per_m, 1/m) or channels (channel[i] non-zero; may be NULL); and the share on cells
 * that are convex (Laplacian below -hollow_per_m). Over [2, w - 2) x [2, h - 2). */
void tb_ground_deposit_where(const float *height_m, const double *dep_m, const uint8_t *channel,
                             int64_t w, int64_t h, double cell_m, double hollow_per_m,
                             double *share_hollow_or_channel, double *share_convex);

/* Octave bands of the roughness spectrum: band k holds wavelengths [lo_k, 2 lo_k) with
 * lo_k = TB_GROUND_BAND0_M 2^k. */
#define TB_GROUND_BANDS 7
#define TB_GROUND_BAND0_M 2.82842712474619 /* so band k is centred (geometrically) on 4 x 2^k m */

/* The roughness spectrum of an n x n crop (n a power of two, 16..4096) of heights at cell_m: the
 * plane of least squares removed, a Hann window applied (its power loss divided back out), a 2-D
 * FFT, and the power summed over each octave band of wavelength, divided by n^2: var_m2[k] is the
 * height variance in band k (their sum is about the detrended variance). Bands no wavelength of the
 * crop falls in get NAN. Returns 0, or -1 with *err (n not a power of two, memory). */
int tb_ground_spectrum(const float *height_m, int64_t stride, int64_t n, double cell_m,
                       double var_m2[TB_GROUND_BANDS], tb_err_t *err);

/* A second-derivative statistic of a surface over [1, w - 1) x [1, h - 1) where mask (may be NULL)
 * is non-zero: the mean and the 99th percentile of |d2h/dx2| + |d2h/dy2| + 2 |d2h/dxdy| (1/m
 * times metres: per metre), the roughness of the slope. A facet's edge or a ray is a line of large
 * second derivative on a surface that is otherwise smooth, so the 99th percentile over a smooth
 * floor reads it. Percentile from a histogram of 4096 log-spaced bins over 1e-7..10. */
void tb_ground_curvature(const float *height_m, int64_t w, int64_t h, double cell_m,
                         const uint8_t *mask, double *mean, double *p99, int64_t *cells);

/* A cliff face on the grid itself near (x, y) (cells): the largest rise of a run of steps steeper
 * than 45 degrees between neighbours (along one row, column or diagonal, one sign, each step
 * rising more than its length), over the runs that start within r cells of the point. A
 * transect's samples, bilinear along a line oblique to the grid, spread a face that rises within
 * one or two cells over three or four samples and read it as 40-odd degrees; the grid's own
 * neighbours keep it. NAN heights end a run. */
double tb_ground_face_rise(const float *height_m, int64_t w, int64_t h, double cell_m, int64_t x,
                           int64_t y, int64_t r);
#endif
