/* Nonlinear hillslope diffusion (jobs/geology/hillslope.h): a 1-D ridge under uniform uplift
 * converges to the analytic steady profile of q = D S / (1 - (S/Sc)^2) within 1 %, whichever
 * sub-step bound; 2000 steps on rough ground grow no checkerboard, where a single unlimited
 * sub-step does; the per-cell rates cost less than the box-wide bound on mixed ground; the firings
 * above the first, which compute only the columns their cells span, give the same bits as
 * computing every column. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/geology/geology.h"
#include "jobs/geology/hillslope.h"
#include "jobs/geology/topology.h"
#include "support/tb_geo_test.h"

/* ---- the ridge ---- */

#define S_RIDGE_ROWS 43 /* rows 0 and 42 are the fixed ring; the divide is row 21 */

/* Slope of the analytic steady state at distance x (m) from the divide: the root of
 * (U x / Sc^2) S^2 + D S - U x = 0. */
static double s_slope(double x, double U, double D, double sc)
{
    if (x <= 0)
        return 0;
    double a = U * x / (sc * sc);
    return (-D + sqrt(D * D + 4 * a * U * x)) / (2 * a);
}

/* Height at distance x from the divide, the base (h = 0) at distance half: Simpson's rule. */
static double s_height(double x, double half, double U, double D, double sc)
{
    const int n = 20000;
    double step = (half - x) / n, sum = s_slope(x, U, D, sc) + s_slope(half, U, D, sc);
    for (int i = 1; i < n; i++)
        sum += (i % 2 ? 4 : 2) * s_slope(x + i * step, U, D, sc);
    return sum * step / 3;
}

/* Runs the ridge to steady state under the given law; returns the largest error of the interior
 * rows (every solved cell) against the analytic profile for (U, D, sc_ref), over the ridge's
 * analytic height. */
static double s_ridge(double talus_deg, double sc_ref, tb_hillslope_bound_t bound, double *cost)
{
    const double U = 1e-5, D = 0.01;
    tb_frame_t box = tb_geo_box(4, S_RIDGE_ROWS, 0, 0, 4, S_RIDGE_ROWS); /* wraps: X-invariant */
    tb_solve_params_t p = tb_geo_default_params();
    p.diffusion_m2_yr = D;
    p.dt_yr = 2e3; /* the uplift/diffusion splitting error at the base is O(U dt) */
    p.talus_deg = talus_deg;
    p.max_hillslope_substeps = 64;
    tb_err_t err;
    tb_geology_t *g = tb_geology_new(&box, &p, 1, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    tb_geology_options_t o;
    tb_geology_options_defaults(&o);
    o.stream_power = false;
    o.clamp = false;
    o.hillslope_bound = bound;
    tb_geology_set_options(g, &o, NULL);
    size_t n = (size_t)(4 * S_RIDGE_ROWS);
    uint8_t *mask = tb_geo_bytes(&box);
    float *u = tb_geo_floats(&box), *k = tb_geo_floats(&box), *h = tb_geo_floats(&box);
    float *before = tb_geo_floats(&box);
    for (size_t c = 0; c < n; c++) {
        mask[c] = 1;
        u[c] = (float)U;
        k[c] = (float)p.k;
    }
    int64_t step = 0;
    for (;;) {
        memcpy(before, h, n * sizeof(float));
        ck_assert_int_eq(tb_geology_run(g, mask, u, k, h, step, 200, NULL, NULL, &err), 0);
        step += 200;
        double dmax = 0;
        for (size_t c = 0; c < n; c++)
            dmax = fmax(dmax, fabs((double)h[c] - before[c]) / (fabs(h[c]) + 1e-30));
        if (dmax < 1e-6)
            break;
        ck_assert_msg(step < 100000, "no steady state after %lld steps", (long long)step);
    }
    double half = (S_RIDGE_ROWS - 1) / 2.0 * box.cell_m, worst = 0,
           top = s_height(0, half, U, D, sc_ref);
    for (int64_t j = 1; j < S_RIDGE_ROWS - 1; j++) {
        double x = fabs((double)j * box.cell_m - half);
        double want = s_height(x, half, U, D, sc_ref);
        for (int64_t i = 0; i < 4; i++) /* X-invariant: every column */
            worst = fmax(worst, fabs(h[tb_idx(4, i, j)] - want) / top);
    }
    tb_geology_phases_t ph;
    tb_geology_phase_times(g, &ph);
    if (cost)
        *cost = (double)ph.hillslope_updates / (double)ph.cell_steps;
    tb_geology_destroy(&g);
    free(mask);
    free(u);
    free(k);
    free(h);
    free(before);
    return worst;
}

START_TEST(test_ridge_reaches_the_analytic_profile)
{
    double sc = tan(35 * M_PI / 180), cost_cell, cost_box;
    double cell = s_ridge(35, sc, TB_HILLSLOPE_BOUND_CELL, &cost_cell);
    double box = s_ridge(35, sc, TB_HILLSLOPE_BOUND_BOX, &cost_box);
    /* Negative control: the linear law (talus near 90 degrees) misses the nonlinear profile. */
    double linear = s_ridge(89.9, sc, TB_HILLSLOPE_BOUND_CELL, NULL);
    fprintf(stderr,
            "ridge: worst error per-cell %.4f (%.2f updates/cell-step), box bound %.4f "
            "(%.2f), linear law against the nonlinear profile %.4f\n",
            cell, cost_cell, box, cost_box, linear);
    ck_assert_double_lt(cell, 0.01);
    ck_assert_double_lt(box, 0.01);
    ck_assert_double_gt(linear, 0.01);
}
END_TEST

/* ---- the checkerboard ---- */

/* The checkerboard (pi, pi) amplitude of the interior, over the interior's relief. */
static double s_checker(const float *h, int64_t w, int64_t hh)
{
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    size_t n = 0;
    for (int64_t j = 3; j < hh - 3; j++)
        for (int64_t i = 3; i < w - 3; i++) {
            double v = h[tb_idx(w, i, j)];
            if (!isfinite(v))
                return INFINITY;
            /* The residual against the 3 x 3 mean removes the smooth part. */
            double m = 0;
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++)
                    m += h[tb_idx(w, i + di, j + dj)];
            sum += ((i + j) % 2 ? -1 : 1) * (v - m / 9);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
            n++;
        }
    return fabs(sum) / (double)n / (hi - lo);
}

static double s_rough(tb_hillslope_bound_t bound, int steps)
{
    const int64_t E = 48;
    tb_frame_t box = tb_geo_box(1000, 100, 990, 20, E, E);
    tb_solve_params_t p = tb_geo_default_params();
    tb_err_t err;
    tb_geology_t *g = tb_geology_new(&box, &p, 1, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    tb_geology_options_t o;
    tb_geology_options_defaults(&o);
    o.stream_power = false;
    o.clamp = false;
    o.hillslope_bound = bound;
    tb_geology_set_options(g, &o, NULL);
    uint8_t *mask = tb_geo_bytes(&box);
    float *u = tb_geo_floats(&box), *k = tb_geo_floats(&box), *h = tb_geo_floats(&box);
    tb_geo_noise(&box, 8, 12, h); /* 12 m of noise on 8 m cells: far over repose */
    for (int64_t j = 0; j < E; j++)
        for (int64_t i = 0; i < E; i++) {
            size_t c = tb_idx(E, i, j);
            mask[c] = 1;
            u[c] = 2e-4f;
            k[c] = (float)p.k;
            h[c] += (float)(0.05 * 8 * (double)(i < E - i ? i : E - i)); /* and a ridge */
        }
    int rc = tb_geology_run(g, mask, u, k, h, 0, steps, NULL, NULL, &err);
    /* Only the unlimited control may diverge (and then the solve refuses to route NaNs). */
    ck_assert_msg(rc == 0 || bound == TB_HILLSLOPE_BOUND_ONE, "%s", err.msg);
    double cb = rc == 0 ? s_checker(h, E, E) : INFINITY;
    tb_geology_destroy(&g);
    free(mask);
    free(u);
    free(k);
    free(h);
    return cb;
}

START_TEST(test_no_checkerboard_in_2000_steps)
{
    double start = s_rough(TB_HILLSLOPE_BOUND_CELL, 0);
    double cell = s_rough(TB_HILLSLOPE_BOUND_CELL, 2000);
    double one = s_rough(TB_HILLSLOPE_BOUND_ONE, 200); /* the control: one unlimited sub-step */
    fprintf(stderr,
            "checkerboard amplitude / relief: noise %.2e, per-cell 2000 steps %.2e, one "
            "sub-step 200 steps %.2e\n",
            start, cell, one);
    ck_assert_double_lt(cell, 1e-4);
    ck_assert(!(one < 1e-2)); /* grows (or blows up) without the rates */
}
END_TEST

/* ---- the spans ---- */

/* `steps` steps of diffusion on a gentle island with steep spikes scattered over it and one rough
 * corner, split into `nbands` bands on a pool of two threads; *rate_excess gets the updates per
 * solved cell-step less one (the sub-steps beyond the first), *max_rate the highest rate. */
static float *s_spiked(int nbands, bool full, int steps, double *rate_excess, int *max_rate)
{
    const int64_t W = 150, H = 90;
    tb_frame_t box = tb_geo_box(1000, 200, 990, 20, W, H);
    tb_topo_t t;
    ck_assert_int_eq(tb_topo_init(&t, &box, NULL), 0);
    uint8_t *mask = tb_geo_bytes(&box), *node = malloc(t.n);
    tb_geo_ellipse_u8(&box, 990 + 75, 20 + 45, 70, 42, 1, mask);
    float *h = tb_geo_floats(&box), *rough = tb_geo_floats(&box);
    tb_geo_noise(&box, 5, 12, rough);
    size_t solved = tb_topo_classify(&t, mask, node);
    for (int64_t j = 0; j < H; j++)
        for (int64_t i = 0; i < W; i++) {
            size_t c = tb_idx(W, i, j);
            double ex = ((double)i - 75) / 70, ey = ((double)j - 45) / 42;
            double v = 30 * (1 - ex * ex - ey * ey); /* a dome, far under repose */
            if (i > 105 && j > 50)
                v += rough[c]; /* a rough corner: many cells over their rate at once */
            /* spikes a row or two wide at scattered columns, so a row's cells above the first
             * rate lie between columns that change from row to row */
            if ((i * 37 + j * 11) % 97 == 0)
                v += 8;
            h[c] = (node[c] & TB_NODE_SOLVED) ? (float)v : 0;
        }
    tb_solve_params_t sp = tb_geo_default_params();
    tb_hillslope_params_t hp = {sp.diffusion_m2_yr,
                                sp.dt_yr,
                                tan(sp.talus_deg * M_PI / 180),
                                sp.max_hillslope_substeps,
                                TB_HILLSLOPE_BOUND_CELL,
                                full};
    tb_band_t bands[4];
    ck_assert_int_eq(tb_topo_bands(&t, node, nbands, true, bands), nbands);
    tb_pool_t *pool = tb_pool_new(2, NULL);
    tb_hillslope_t *hs = tb_hillslope_new(t.n, W, NULL);
    ck_assert(pool && hs);
    tb_hillslope_stats_t st = {0};
    for (int s = 0; s < steps; s++)
        ck_assert_int_eq(
            tb_hillslope_diffuse_bands(hs, &t, node, &hp, h, &st, pool, bands, nbands, NULL), 0);
    *rate_excess = (double)st.cell_updates / ((double)solved * steps) - 1;
    *max_rate = st.max_rate;
    tb_hillslope_destroy(&hs);
    tb_pool_destroy(&pool);
    free(mask);
    free(node);
    free(rough);
    return h;
}

/* A firing above the first computes only the columns between the first and last cell whose
 * touch level reaches it, and clears what its row buffer held outside them: the same bits as
 * computing every column, in one band and in three. Control: leaving a partial span's old
 * fluxes in the buffer (not clearing outside it) fails this test. */
START_TEST(test_partial_spans_give_the_same_bits)
{
    for (int nbands = 1; nbands <= 3; nbands += 2) {
        double ex_span, ex_full;
        int rate, rate_full;
        float *span = s_spiked(nbands, false, 12, &ex_span, &rate);
        float *full = s_spiked(nbands, true, 12, &ex_full, &rate_full);
        fprintf(stderr,
                "partial spans, %d band(s): %.3f sub-steps beyond the first a cell-step, highest "
                "rate %d\n",
                nbands, ex_span, rate);
        /* some cells, far from all, take more than one sub-step: the firings above the first
         * are partial */
        ck_assert(rate >= 4 && ex_span > 0.005 && ex_span < 0.25 * (rate - 1));
        ck_assert(ex_span == ex_full);
        ck_assert_msg(memcmp(span, full, 150 * 90 * sizeof(float)) == 0,
                      "%d band(s): the partial spans changed the heights", nbands);
        free(span);
        free(full);
    }
}
END_TEST

Suite *hillslope_suite(void)
{
    Suite *s = suite_create("hillslope");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ridge_reaches_the_analytic_profile);
    tcase_add_test(tc, test_no_checkerboard_in_2000_steps);
    tcase_add_test(tc, test_partial_spans_give_the_same_bits);
    suite_add_tcase(s, tc);
    return s;
}
