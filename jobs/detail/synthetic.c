/* The synthetic planet; see synthetic.h. */
#include "jobs/detail/synthetic.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/noise.h"
#include "jobs/coast/coast.h"
#include "jobs/stats/synthetic.h"
#include "jobs/uplift/fbm_window.h"

static const float *s_sort_h;

static int s_cmp_desc(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    float hi = s_sort_h[i], hj = s_sort_h[j];
    if (hi != hj)
        return hi > hj ? -1 : 1;
    return i < j ? -1 : (i > j);
}

void tb_detail_synthetic_free(tb_detail_synthetic_t *s)
{
    if (!s)
        return;
    free(s->height_m);
    free(s->area_m2);
    free(s->rock_k);
    free(s->class_idx);
    free(s->land);
    free(s->exposure);
    free(s->moved_m);
    memset(s, 0, sizeof *s);
}

int tb_detail_synthetic_coast(tb_detail_synthetic_t *s, double depth_m, double drift_km,
                              int threads, tb_err_t *err)
{
    int64_t w = s->planet.geo_w, h = s->planet.geo_h;
    size_t n = (size_t)w * (size_t)h;
    tb_coast_params_t p;
    tb_coast_params_defaults(&p);
    p.drift_km = drift_km;
    if (tb_coast_params_check(&p, s->planet.geo_cell_m, w, err) != 0)
        return tb_err_prefix(err, "synthetic planet's coast");
    tb_coast_classes_t legend = {.n = 2, .ocean = {false, true}, .depth_m = {0, depth_m}};
    tb_coast_planet_t planet = {.w = w,
                                .h = h,
                                .cell_m = s->planet.geo_cell_m,
                                .height_m = s->height_m,
                                .classes = s->class_idx,
                                .legend = &legend};
    free(s->exposure);
    free(s->moved_m);
    s->exposure = malloc(n * sizeof *s->exposure);
    s->moved_m = malloc(n * sizeof *s->moved_m);
    if (!s->exposure || !s->moved_m)
        return tb_err_set(err, TB_E_NOMEM, "synthetic planet's coast: out of memory");
    tb_coast_maps_t maps = {.moved_m = s->moved_m, .exposure = s->exposure};
    if (tb_coast_run(&p, &planet, &maps, threads, NULL, NULL, NULL, err) != 0)
        return tb_err_prefix(err, "synthetic planet's coast");
    s->planet.exposure = s->exposure;
    s->planet.moved_m = s->moved_m;
    return 0;
}

int tb_detail_synthetic_make(tb_detail_synthetic_t *out, int64_t geo_w, int64_t geo_h,
                             double cell_m, uint64_t seed, double base_m, double relief_m,
                             double wavelength_m, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    size_t n = (size_t)geo_w * (size_t)geo_h;
    out->height_m = malloc(n * sizeof(float));
    out->area_m2 = malloc(n * sizeof(float));
    out->rock_k = malloc(n * sizeof(float));
    out->class_idx = malloc(n);
    out->land = malloc(n);
    size_t *order = malloc(n * sizeof *order);
    tb_frame_t f;
    tb_noise_t noise;
    tb_fbm_window_t fw;
    if (!out->height_m || !out->area_m2 || !out->rock_k || !out->class_idx || !out->land ||
        !order) {
        free(order);
        tb_detail_synthetic_free(out);
        return tb_err_set(err, TB_E_NOMEM, "synthetic planet: out of memory");
    }
    if (tb_frame_make(&f, geo_w, geo_h, cell_m, 0, 0, geo_w, geo_h, err) != 0 ||
        tb_noise_init(&noise, seed, TB_SALT_TEST_NOISE, (double)geo_w * cell_m, wavelength_m,
                      err) != 0 ||
        tb_fbm_window_init(&fw, &noise, 6, 0.5, &f, 0, geo_w, 0, geo_h, err) != 0) {
        free(order);
        tb_detail_synthetic_free(out);
        return -1;
    }
    for (int64_t j = 0; j < geo_h; j++)
        for (int64_t i = 0; i < geo_w; i++) {
            size_t at = tb_idx(geo_w, i, j);
            double v = tb_fbm_window_eval(&fw, i, j);
            out->height_m[at] = (float)(base_m + relief_m * v);
            out->land[at] = out->height_m[at] >= 0;
            out->class_idx[at] = out->land[at] ? 0 : 1;
            out->rock_k[at] = (float)(1.0 + 0.5 * v);
            out->area_m2[at] = (float)(cell_m * cell_m);
            order[at] = at;
        }
    tb_fbm_window_free(&fw);
    /* the sea is below 0 m (a cell at exactly 0 is land) */
    if (tb_synth_fill(out->height_m, geo_w, geo_h, true, -FLT_TRUE_MIN, NULL, err) != 0) {
        free(order);
        tb_detail_synthetic_free(out);
        return -1;
    }
    s_sort_h = out->height_m;
    qsort(order, n, sizeof *order, s_cmp_desc);
    for (size_t k = 0; k < n; k++) {
        size_t at = order[k];
        int64_t i = (int64_t)(at % (size_t)geo_w), j = (int64_t)(at / (size_t)geo_w);
        double best = 0;
        size_t to = at;
        for (int d = 0; d < 8; d++) {
            int64_t y = j + tb_nb_dy[d];
            if (y < 0 || y >= geo_h)
                continue;
            size_t nb = tb_idx(geo_w, tb_wrap(i + tb_nb_dx[d], geo_w), y);
            double s = ((double)out->height_m[at] - out->height_m[nb]) / tb_nb_dist[d];
            if (s > best) {
                best = s;
                to = nb;
            }
        }
        if (to != at)
            out->area_m2[to] += out->area_m2[at];
    }
    free(order);
    out->planet.geo_w = geo_w;
    out->planet.geo_h = geo_h;
    out->planet.geo_cell_m = cell_m;
    out->planet.height_m = out->height_m;
    out->planet.area_m2 = out->area_m2;
    out->planet.rock_k = out->rock_k;
    out->planet.class_idx = out->class_idx;
    return 0;
}
