/* Windowed fBm, the same bits as tb_noise_fbm; see fbm_window.h. Every expression below mirrors one
 * in common/noise.c (s_locate, s_fade, s_grad, tb_noise_gradient, tb_noise_fbm); change them
 * together. */
#include "jobs/uplift/fbm_window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

static inline double s_fade(double t)
{
    return t * t * t * (t * (t * 6 - 15) + 10);
}

/* noise.c's s_locate for one axis: node index and fraction of coordinate c at an octave. */
static inline void s_axis(const tb_noise_t *n, double c_m, int octave, int64_t *idx, double *frac)
{
    double scale = ldexp(1.0, octave);
    double u = c_m / n->spacing_m * scale;
    double fu = floor(u);
    *idx = (int64_t)fu;
    *frac = u - fu;
}

static void s_octave_free(tb_fbm_octave_t *o)
{
    free(o->gx);
    free(o->gy);
    free(o->col_slot);
    free(o->col_slot1);
    free(o->col_f);
    free(o->col_s);
    free(o->row_slot);
    free(o->row_f);
    free(o->row_s);
    memset(o, 0, sizeof *o);
}

static int s_octave_init(tb_fbm_octave_t *o, const tb_noise_t *n, int octave, const tb_frame_t *f,
                         int64_t i0, int64_t w, int64_t j0, int64_t h, tb_err_t *err)
{
    o->periods = n->periods << octave;
    int64_t p = o->periods;
    o->col_slot = tb_malloc((size_t)w * sizeof *o->col_slot, "fbm columns", err);
    o->col_slot1 = tb_malloc((size_t)w * sizeof *o->col_slot1, "fbm columns", err);
    o->col_f = tb_malloc((size_t)w * sizeof *o->col_f, "fbm columns", err);
    o->col_s = tb_malloc((size_t)w * sizeof *o->col_s, "fbm columns", err);
    o->row_slot = tb_malloc((size_t)h * sizeof *o->row_slot, "fbm rows", err);
    o->row_f = tb_malloc((size_t)h * sizeof *o->row_f, "fbm rows", err);
    o->row_s = tb_malloc((size_t)h * sizeof *o->row_s, "fbm rows", err);
    if (!o->col_slot || !o->col_slot1 || !o->col_f || !o->col_s || !o->row_slot || !o->row_f ||
        !o->row_s)
        return -1;
    /* Columns: slot = (wrapped node - wrapped node of column 0) mod p, so a window straddling the
     * seam indexes one contiguous table. */
    int64_t ix_start = 0, max_slot = 0;
    for (int64_t i = 0; i < w; i++) {
        int64_t ix;
        s_axis(n, tb_frame_world_x_m(f, i0 + i), octave, &ix, &o->col_f[i]);
        int64_t wrapped = tb_wrap(ix, p);
        if (i == 0)
            ix_start = wrapped;
        int64_t slot = tb_wrap(wrapped - ix_start, p);
        o->col_slot[i] = (int32_t)slot;
        o->col_s[i] = s_fade(o->col_f[i]);
        max_slot = slot > max_slot ? slot : max_slot;
    }
    o->nx = max_slot + 2 < p ? max_slot + 2 : p;
    for (int64_t i = 0; i < w; i++)
        o->col_slot1[i] = (int32_t)((o->col_slot[i] + 1) % p); /* < nx: nx is max+2 or p */
    /* Rows do not wrap. */
    int64_t iy_min = 0, iy_max = 0;
    for (int64_t j = 0; j < h; j++) {
        int64_t iy;
        s_axis(n, tb_frame_world_y_m(f, j0 + j), octave, &iy, &o->row_f[j]);
        o->row_s[j] = s_fade(o->row_f[j]);
        if (j == 0 || iy < iy_min)
            iy_min = iy;
        if (j == 0 || iy > iy_max)
            iy_max = iy;
        o->row_slot[j] = (int32_t)iy; /* made relative below */
    }
    o->iy_start = iy_min;
    o->ny = iy_max - iy_min + 2;
    for (int64_t j = 0; j < h; j++)
        o->row_slot[j] -= (int32_t)iy_min;
    size_t nodes = (size_t)o->nx * (size_t)o->ny;
    o->gx = tb_malloc(nodes * sizeof *o->gx, "fbm gradients", err);
    o->gy = tb_malloc(nodes * sizeof *o->gy, "fbm gradients", err);
    if (!o->gx || !o->gy)
        return -1;
    uint64_t key = tb_hash_key(n->seed, n->salt, octave);
    for (int64_t ty = 0; ty < o->ny; ty++)
        for (int64_t tx = 0; tx < o->nx; tx++) {
            int64_t x = tb_wrap(ix_start + tx, p), y = o->iy_start + ty;
            double angle = tb_hash_unit(tb_hash_cell(key, x, y)) * 6.283185307179586;
            o->gx[ty * o->nx + tx] = cos(angle);
            o->gy[ty * o->nx + tx] = sin(angle);
        }
    return 0;
}

int tb_fbm_window_init(tb_fbm_window_t *win, const tb_noise_t *n, int octaves, double gain,
                       const tb_frame_t *frame, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                       tb_err_t *err)
{
    memset(win, 0, sizeof *win);
    if (octaves < 1 || octaves > TB_FBM_WINDOW_MAX_OCTAVES || i1 <= i0 || j1 <= j0)
        return tb_err_set(err, TB_E_INTERNAL, "fbm window: %d octaves over %lld x %lld cells",
                          octaves, (long long)(i1 - i0), (long long)(j1 - j0));
    win->octaves = octaves;
    win->gain = gain;
    win->w = i1 - i0;
    win->h = j1 - j0;
    for (int k = 0; k < octaves; k++)
        if (s_octave_init(&win->oct[k], n, k, frame, i0, win->w, j0, win->h, err) != 0) {
            tb_fbm_window_free(win);
            return -1;
        }
    return 0;
}

void tb_fbm_window_free(tb_fbm_window_t *win)
{
    if (!win)
        return;
    for (int k = 0; k < TB_FBM_WINDOW_MAX_OCTAVES; k++)
        s_octave_free(&win->oct[k]);
    win->octaves = 0;
}

/* tb_noise_gradient at one cell from the tables. */
static inline double s_gradient(const tb_fbm_octave_t *o, int64_t i, int64_t j)
{
    double fx = o->col_f[i], fy = o->row_f[j];
    const double *gx0 = o->gx + (size_t)o->row_slot[j] * (size_t)o->nx;
    const double *gy0 = o->gy + (size_t)o->row_slot[j] * (size_t)o->nx;
    const double *gx1 = gx0 + o->nx, *gy1 = gy0 + o->nx;
    int32_t s0 = o->col_slot[i], s1 = o->col_slot1[i];
    double g00 = gx0[s0] * fx + gy0[s0] * fy, g10 = gx0[s1] * (fx - 1) + gy0[s1] * fy;
    double g01 = gx1[s0] * fx + gy1[s0] * (fy - 1), g11 = gx1[s1] * (fx - 1) + gy1[s1] * (fy - 1);
    double sx = o->col_s[i], sy = o->row_s[j];
    double a = g00 + (g10 - g00) * sx, b = g01 + (g11 - g01) * sx;
    return (a + (b - a) * sy) * 1.4142135623730951;
}

double tb_fbm_window_eval(const tb_fbm_window_t *win, int64_t i, int64_t j)
{
    double sum = 0, amp = 1, norm = 0;
    for (int k = 0; k < win->octaves; k++) {
        sum += amp * s_gradient(&win->oct[k], i, j);
        norm += amp;
        amp *= win->gain;
    }
    return sum / norm;
}
