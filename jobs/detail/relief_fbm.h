/* Detail relief: fBm of gradient noise sampled in world metres, with an amplitude that follows the
 * slope, the class and the rock, and is zero in channels (docs/tiles.md, "Detail relief").
 *
 * Method: h += A(x) fbm(x), where fbm is tb_noise_fbm (common/noise.h) of `relief.octaves` octaves
 * from a first wavelength of relief.wavelength_m snapped to divide the circumference, seeded with
 * (seed, TB_SALT_TILE_RELIEF), evaluated at the detail cell's world centre (so it wraps and is the
 * same in every window), and
 *   A = amplitude_m x factor x (flat_fraction + (1 - flat_fraction) min(1, S /
 * tan(slope_full_deg))) x channel, with S the slope of the resampled surface (central differences
 * over 2 cells, one-sided at the window's edge), factor the resampled per-geology-cell product
 * (class relief multiplier) x k_mult^- rock_exponent, and channel = 1 below a tenth of
 * channel_area_m2, 0 from channel_area_m2 up, linear in log10(area) between: the relief never fills
 * a channel the solve cut.
 *
 * Units: metres. Pre: h, factor and log10_area are the window's w x h resampled fields. Post: h
 * holds the relief. Determinism: pointwise in world position except the slope stencil (1 cell).
 */
#ifndef TB_DETAIL_RELIEF_FBM_H
#define TB_DETAIL_RELIEF_FBM_H

#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "jobs/detail/params.h"

/* Adds the relief to h (win->w x win->h doubles) in place. Returns 0 or -1 with *err (memory, a
 * bad wavelength). */
int tb_relief_fbm(const tb_detail_params_t *p, uint64_t seed, const tb_frame_t *win,
                  const double *factor, const double *log10_area, double *h, tb_err_t *err);

/* The slope (rise over run) at cell (i, j) of a w x hgt grid: central differences, one-sided at the
 * grid's edge. */
double tb_detail_slope(const double *h, int64_t w, int64_t hgt, double cell_m, int64_t i,
                       int64_t j);

#endif
