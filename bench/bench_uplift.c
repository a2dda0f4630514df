/* `scripts/bench uplift`: the cost of tb_uplift_build per cell on a 2048 x 1536 box (3.1 M cells,
 * the size of a mid-sized region at 8 m) of a painted landmass with three land classes and faults
 * at the manifest default and at ten times it; plus the planet probe. One run, per-cell figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/manifest.h"
#include "jobs/uplift/uplift.h"

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *S_LEGEND =
    "{\"classes\": ["
    "{\"name\": \"lowland\", \"colour\": \"#6f9a4a\", \"kind\": \"land\", \"uplift_mm_yr\": 0.06,"
    " \"massif\": {\"floor_mm_yr\": 0.012, \"fraction\": 0.18}},"
    "{\"name\": \"highland\", \"colour\": \"#c0a060\", \"kind\": \"land\", \"uplift_mm_yr\": 0.25,"
    " \"k_mult\": 0.8, \"massif\": {\"floor_mm_yr\": 0.1, \"fraction\": 0.5}},"
    "{\"name\": \"range\", \"colour\": \"#a0522d\", \"kind\": \"land\", \"uplift_mm_yr\": 0.4, "
    "\"k_mult\": 0.6},"
    "{\"name\": \"shelf\", \"colour\": \"#7fb2d9\", \"kind\": \"ocean\", \"depth_m\": 60}]}";

int main(void)
{
    tb_manifest_t m;
    tb_manifest_defaults(&m);
    tb_err_t err;
    if (tb_legend_parse(S_LEGEND, "bench legend", &m.legend, &err) != 0 ||
        tb_manifest_finish(&m, &err) != 0) {
        fprintf(stderr, "bench uplift: %s\n", err.msg);
        return 1;
    }
    const int64_t w = 2048, h = 1536;
    tb_frame_t f;
    if (tb_frame_make(&f, m.planet_w, 2000, m.cell_m, m.planet_w - 500, 200, w, h, &err) != 0) {
        fprintf(stderr, "bench uplift: %s\n", err.msg);
        return 1;
    }
    size_t n = (size_t)(w * h), land = 0;
    uint8_t *c = malloc(n);
    float *u = malloc(n * sizeof *u), *k = malloc(n * sizeof *k);
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            double dx = (i - w / 2.0) / (0.45 * w), dy = (j - h / 2.0) / (0.45 * h);
            double r2 = dx * dx + dy * dy;
            uint8_t v = r2 >= 1 ? 3 : (r2 < 0.1 ? 2 : (dx + 0.3 * dy > 0.1 ? 1 : 0));
            c[j * w + i] = v;
            land += v < 3;
        }
    double t0 = s_now();
    tb_uplift_probes_t p;
    if (tb_uplift_probes_compute(&m, &p, &err) != 0) {
        fprintf(stderr, "bench uplift: %s\n", err.msg);
        return 1;
    }
    double t_probe = s_now() - t0;
    printf("probes: %.3f s (%d points, once per planet)\n", t_probe,
           TB_UPLIFT_PROBE_NX * TB_UPLIFT_PROBE_NY);
    printf("box %lld x %lld = %.2f M cells, %.0f %% land, blend R %lld cells\n", (long long)w,
           (long long)h, n / 1e6, 100.0 * land / n,
           (long long)tb_uplift_blend_radius_cells(m.cell_m));
    const double density[2] = {m.faults.per_1000_km2, 10 * m.faults.per_1000_km2};
    for (int d = 0; d < 2; d++) {
        m.faults.per_1000_km2 = density[d];
        t0 = s_now();
        if (tb_uplift_fault_rate(&m, &f, u, &err) != 0) {
            fprintf(stderr, "bench uplift: %s\n", err.msg);
            return 1;
        }
        double t_fault = s_now() - t0;
        t0 = s_now();
        if (tb_uplift_build(&m, &p, &f, c, u, k, &err) != 0) {
            fprintf(stderr, "bench uplift: %s\n", err.msg);
            return 1;
        }
        double t_build = s_now() - t0;
        tb_polyline_t *tr;
        size_t ntr;
        tb_uplift_fault_traces(&m, &f, &tr, &ntr, &err);
        tb_uplift_traces_destroy(&tr, ntr);
        printf("faults %g per 1000 km2 (%zu traces meet the box): build %.3f s = %.1f ns/cell "
               "(faults alone %.1f ns/cell, %.0f %%)\n",
               density[d], ntr, t_build, 1e9 * t_build / n, 1e9 * t_fault / n,
               100 * t_fault / t_build);
    }
    free(c);
    free(u);
    free(k);
    return 0;
}
