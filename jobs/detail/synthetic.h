/* A synthetic planet for the detail tests and bench: fBm mountains in world metres, D8 drainage
 * area and a land/ocean class raster on a geology lattice, with no solve behind it. Not used by a
 * bake. Heights: base_m + relief_m x fbm (first wavelength wavelength_m, 6 octaves, gain 0.5), with
 * the sea where that is below 0 and the land's pits filled by a priority-flood from the sea and the
 * planet's edge rows (Barnes et al. 2014, float epsilon), as a solve leaves them. Area: D8
 * accumulation of cell areas down the steepest descent, processed from the highest cell down (ties
 * by index), X wrapping. Class 0 is land, 1 ocean. Typical size: a few million cells, a second or
 * two. */
#ifndef TB_DETAIL_SYNTHETIC_H
#define TB_DETAIL_SYNTHETIC_H

#include <stdint.h>

#include "common/error.h"
#include "jobs/detail/tile.h"

typedef struct {
    tb_tile_planet_t planet;
    float *height_m, *area_m2, *rock_k;
    uint8_t *class_idx, *land;
    uint16_t *exposure; /* after tb_detail_synthetic_coast, else NULL */
    float *moved_m;
} tb_detail_synthetic_t;

int tb_detail_synthetic_make(tb_detail_synthetic_t *out, int64_t geo_w, int64_t geo_h,
                             double cell_m, uint64_t seed, double base_m, double relief_m,
                             double wavelength_m, tb_err_t *err);
/* Runs the coastal pass (jobs/coast, the `coast` section's defaults with drift_km, which must be
 * narrower than the planet, as given) over the synthetic planet, its sea painted depth_m deep:
 * the heights become the pass's and planet.exposure / planet.moved_m its maps, as a bake's tiles
 * read them. Returns 0 or -1 with *err. */
int tb_detail_synthetic_coast(tb_detail_synthetic_t *s, double depth_m, double drift_km,
                              int threads, tb_err_t *err);
void tb_detail_synthetic_free(tb_detail_synthetic_t *s);

#endif
