/* Detail relief; see relief_fbm.h. The noise goes through jobs/uplift/fbm_window.h, which gives
 * tb_noise_fbm's bits at a few table lookups per octave. */
#include "jobs/detail/relief_fbm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/noise.h"
#include "jobs/uplift/fbm_window.h"

double tb_detail_slope(const double *h, int64_t w, int64_t hgt, double cell_m, int64_t i, int64_t j)
{
    int64_t il = i > 0 ? i - 1 : i, ir = i < w - 1 ? i + 1 : i;
    int64_t jd = j > 0 ? j - 1 : j, ju = j < hgt - 1 ? j + 1 : j;
    double gx =
        ir > il ? (h[tb_idx(w, ir, j)] - h[tb_idx(w, il, j)]) / ((double)(ir - il) * cell_m) : 0;
    double gy =
        ju > jd ? (h[tb_idx(w, i, ju)] - h[tb_idx(w, i, jd)]) / ((double)(ju - jd) * cell_m) : 0;
    return sqrt(gx * gx + gy * gy);
}

int tb_relief_fbm(const tb_detail_params_t *p, uint64_t seed, const tb_frame_t *win,
                  const double *factor, const double *log10_area, double *h, tb_err_t *err)
{
    if (p->relief_amplitude_m <= 0)
        return 0;
    tb_noise_t n;
    double circ = (double)win->lattice_w * win->cell_m;
    if (tb_noise_init(&n, seed, TB_SALT_TILE_RELIEF, circ, p->relief_wavelength_m, err) != 0)
        return tb_err_prefix(err, "relief");
    tb_fbm_window_t fw;
    if (tb_fbm_window_init(&fw, &n, p->relief_octaves, p->relief_gain, win, 0, win->w, 0, win->h,
                           err) != 0)
        return tb_err_prefix(err, "relief");
    /* the relief of each row is added once rows j - 1 .. j + 1 have had their slopes read, so keep
     * the original of the row above and of this row */
    int64_t w = win->w, H = win->h;
    double *prev = malloc((size_t)w * sizeof *prev), *cur = malloc((size_t)w * sizeof *cur);
    double *win3 = malloc((size_t)w * 3 * sizeof *win3);
    if (!prev || !cur || !win3) {
        free(prev);
        free(cur);
        free(win3);
        tb_fbm_window_free(&fw);
        return tb_err_set(err, TB_E_NOMEM, "relief: out of memory");
    }
    double inv_full = 1.0 / tan(p->relief_slope_full_deg * M_PI / 180.0);
    double la1 = log10(p->relief_channel_area_m2), la0 = la1 - 1.0;
    for (int64_t j = 0; j < H; j++) {
        memcpy(cur, h + tb_idx(w, 0, j), (size_t)w * sizeof *cur);
        /* a 3-row view of the original heights: rows j - 1 (or j), j, j + 1 (or j) */
        int64_t jd = j > 0 ? j - 1 : j, ju = j < H - 1 ? j + 1 : j;
        memcpy(win3, jd == j ? cur : prev, (size_t)w * sizeof *win3);
        memcpy(win3 + w, cur, (size_t)w * sizeof *win3);
        memcpy(win3 + 2 * w, h + tb_idx(w, 0, ju), (size_t)w * sizeof *win3);
        /* the 3-row view stands for rows jd, j, ju: slope over it at row 1 with the true spacing */
        for (int64_t i = 0; i < w; i++) {
            size_t at = tb_idx(w, i, j);
            double la = log10_area[at];
            double chan = la <= la0 ? 1.0 : (la >= la1 ? 0.0 : (la1 - la) / (la1 - la0));
            if (chan <= 0 || factor[at] <= 0)
                continue;
            int64_t il = i > 0 ? i - 1 : i, ir = i < w - 1 ? i + 1 : i;
            double gx =
                ir > il ? (win3[w + ir] - win3[w + il]) / ((double)(ir - il) * win->cell_m) : 0;
            double gy =
                ju > jd ? (win3[2 * w + i] - win3[i]) / ((double)(ju - jd) * win->cell_m) : 0;
            double s = sqrt(gx * gx + gy * gy) * inv_full;
            s = s > 1 ? 1 : s;
            double a = p->relief_amplitude_m * factor[at] *
                       (p->relief_flat_fraction + (1 - p->relief_flat_fraction) * s) * chan;
            h[at] = cur[i] + a * tb_fbm_window_eval(&fw, i, j);
        }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    free(prev);
    free(cur);
    free(win3);
    tb_fbm_window_free(&fw);
    return 0;
}
