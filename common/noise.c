/* Periodic lattice noise; see noise.h. The octave index doubles as the hash's step argument, so the
 * octaves of one fBm are independent draws from one salt. */
#include "common/noise.h"

#include <math.h>

#include "common/grid.h"
#include "common/hash.h"

double tb_snap_wavelength(double circumference, double wavelength)
{
    double periods = round(circumference / wavelength);
    if (periods < 1)
        periods = 1;
    return circumference / periods;
}

int tb_noise_init(tb_noise_t *n, uint64_t seed, uint32_t salt, double circumference_m,
                  double wavelength_m, tb_err_t *err)
{
    if (!(circumference_m > 0) || !isfinite(circumference_m) || !(wavelength_m > 0) ||
        !isfinite(wavelength_m))
        return tb_err_set(err, TB_E_INVALID,
                          "noise: circumference %g m and wavelength %g m must be positive",
                          circumference_m, wavelength_m);
    double snapped = tb_snap_wavelength(circumference_m, wavelength_m);
    n->seed = seed;
    n->salt = salt;
    n->circumference_m = circumference_m;
    n->periods = (int64_t)llround(circumference_m / snapped);
    n->spacing_m = circumference_m / (double)n->periods;
    return 0;
}

void tb_noise_init_unsnapped(tb_noise_t *n, uint64_t seed, uint32_t salt, double circumference_m,
                             double spacing_m)
{
    n->seed = seed;
    n->salt = salt;
    n->circumference_m = circumference_m;
    n->periods = (int64_t)ceil(circumference_m / spacing_m);
    n->spacing_m = spacing_m;
}

static inline double s_fade(double t)
{
    return t * t * t * (t * (t * 6 - 15) + 10);
}

/* Lattice coordinates of a world point at an octave: cell indices and fractions. */
static inline void s_locate(const tb_noise_t *n, double x_m, double y_m, int octave, int64_t *ix,
                            int64_t *iy, double *fx, double *fy, int64_t *periods)
{
    double scale = ldexp(1.0, octave);
    double u = x_m / n->spacing_m * scale, v = y_m / n->spacing_m * scale;
    double fu = floor(u), fv = floor(v);
    *ix = (int64_t)fu;
    *iy = (int64_t)fv;
    *fx = u - fu;
    *fy = v - fv;
    *periods = n->periods << octave;
}

double tb_noise_value(const tb_noise_t *n, double x_m, double y_m, int octave)
{
    int64_t ix, iy, p;
    double fx, fy;
    s_locate(n, x_m, y_m, octave, &ix, &iy, &fx, &fy, &p);
    uint64_t key = tb_hash_key(n->seed, n->salt, octave);
    int64_t x0 = tb_wrap(ix, p), x1 = tb_wrap(ix + 1, p);
    double v00 = tb_hash_unit(tb_hash_cell(key, x0, iy)) * 2 - 1;
    double v10 = tb_hash_unit(tb_hash_cell(key, x1, iy)) * 2 - 1;
    double v01 = tb_hash_unit(tb_hash_cell(key, x0, iy + 1)) * 2 - 1;
    double v11 = tb_hash_unit(tb_hash_cell(key, x1, iy + 1)) * 2 - 1;
    double sx = s_fade(fx), sy = s_fade(fy);
    double a = v00 + (v10 - v00) * sx, b = v01 + (v11 - v01) * sx;
    return a + (b - a) * sy;
}

static inline double s_grad(uint64_t key, int64_t x, int64_t y, double dx, double dy)
{
    double angle = tb_hash_unit(tb_hash_cell(key, x, y)) * 6.283185307179586;
    return cos(angle) * dx + sin(angle) * dy;
}

double tb_noise_gradient(const tb_noise_t *n, double x_m, double y_m, int octave)
{
    int64_t ix, iy, p;
    double fx, fy;
    s_locate(n, x_m, y_m, octave, &ix, &iy, &fx, &fy, &p);
    uint64_t key = tb_hash_key(n->seed, n->salt, octave);
    int64_t x0 = tb_wrap(ix, p), x1 = tb_wrap(ix + 1, p);
    double g00 = s_grad(key, x0, iy, fx, fy), g10 = s_grad(key, x1, iy, fx - 1, fy);
    double g01 = s_grad(key, x0, iy + 1, fx, fy - 1), g11 = s_grad(key, x1, iy + 1, fx - 1, fy - 1);
    double sx = s_fade(fx), sy = s_fade(fy);
    double a = g00 + (g10 - g00) * sx, b = g01 + (g11 - g01) * sx;
    return (a + (b - a) * sy) * 1.4142135623730951;
}

double tb_noise_fbm(const tb_noise_t *n, double x_m, double y_m, int octaves, double gain)
{
    double sum = 0, amp = 1, norm = 0;
    for (int k = 0; k < octaves; k++) {
        sum += amp * tb_noise_gradient(n, x_m, y_m, k);
        norm += amp;
        amp *= gain;
    }
    return sum / norm;
}
