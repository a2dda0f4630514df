/* Periodic value and gradient noise, and fBm, sampled in world metres (docs/determinism.md).
 *
 * A noise has a lattice of `periods` cells around the circumference; node (ix, iy) draws its value
 * from tb_hash(seed, salt, ix mod periods, iy, octave), so the field is a pure function of world
 * position and wraps exactly at the seam. The lattice spacing is circumference / periods: a
 * requested wavelength is snapped to the nearest one that divides the circumference
 * (tb_snap_wavelength), and every octave of an fBm doubles `periods`, so it divides too. Y does not
 * wrap.
 *
 * Values are in [-1, 1] (value noise exactly, gradient noise to within rounding); fBm is normalised
 * by the sum of its octave amplitudes.
 */
#ifndef TB_NOISE_H
#define TB_NOISE_H

#include <stdint.h>

#include "common/error.h"

typedef struct {
    uint64_t seed;
    uint32_t salt;
    double circumference_m;
    int64_t periods;  /* lattice cells around the circumference */
    double spacing_m; /* lattice spacing = the wavelength */
} tb_noise_t;

/* Snaps a requested wavelength to circumference / round(circumference / wavelength), at least one
 * period around; returns the snapped value in the same units. */
double tb_snap_wavelength(double circumference, double wavelength);

/* A noise whose wavelength is `wavelength_m` snapped to divide `circumference_m`. Returns 0, or -1
 * with *err naming a non-positive or non-finite argument. */
int tb_noise_init(tb_noise_t *n, uint64_t seed, uint32_t salt, double circumference_m,
                  double wavelength_m, tb_err_t *err);

/* A noise with the spacing taken as given, NOT snapped: its lattice wraps after ceil(C / spacing)
 * cells, so the field breaks at the seam unless the spacing divides the circumference. Exists for
 * the negative control in tests; nothing else may use it. */
void tb_noise_init_unsnapped(tb_noise_t *n, uint64_t seed, uint32_t salt, double circumference_m,
                             double spacing_m);

/* Value noise (hashed node values, quintic interpolation) at world metres (x, y); in [-1, 1]. */
double tb_noise_value(const tb_noise_t *n, double x_m, double y_m, int octave);

/* Gradient (Perlin) noise at (x, y); in about [-1, 1]. */
double tb_noise_gradient(const tb_noise_t *n, double x_m, double y_m, int octave);

/* fBm of gradient noise: octave k has 2^k times the periods and gain^k the amplitude; normalised to
 * about [-1, 1]. octaves >= 1. */
double tb_noise_fbm(const tb_noise_t *n, double x_m, double y_m, int octaves, double gain);

#endif
