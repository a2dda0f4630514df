/* The statistics of a heightmap (jobs/stats): oracles for slope, relief and the slope-area fit,
 * pooled-equals-whole on a synthetic planet cut into overlapping regions, and a decoder that
 * survives any bytes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/hash.h"
#include "jobs/stats/relief.h"
#include "jobs/stats/stats.h"
#include "jobs/stats/synthetic.h"

#define DEG (3.14159265358979323846 / 180)

static double s_unit(uint64_t i, int64_t stream)
{
    return tb_hash_unit(tb_hash(99, TB_SALT_TEST, (int64_t)i, stream, 0));
}

static tb_frame_t s_frame(int64_t lw, int64_t lh, double cell, int64_t x0, int64_t y0, int64_t w,
                          int64_t h)
{
    tb_frame_t f;
    tb_err_t err;
    ck_assert_msg(tb_frame_make(&f, lw, lh, cell, x0, y0, w, h, &err) == 0, "%s", err.msg);
    return f;
}

static tb_stats_t *s_new(double cell_m)
{
    tb_stats_params_t p;
    tb_stats_params_default(&p, cell_m);
    tb_err_t err;
    tb_stats_t *s = tb_stats_new(&p, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    return s;
}

/* --- relief ------------------------------------------------------------------------------------
 */

/* The plain (2r+1)^2 window, outside the box at sea level, X wrapping when the box does. */
static float s_brute_relief(const tb_frame_t *f, const float *h, int64_t r, int64_t i, int64_t j)
{
    float mx = -INFINITY, mn = INFINITY;
    for (int64_t dy = -r; dy <= r; dy++)
        for (int64_t dx = -r; dx <= r; dx++) {
            int64_t x = i + dx, y = j + dy;
            float v = 0;
            if (y >= 0 && y < f->h) {
                if (tb_frame_wraps(f))
                    v = h[tb_idx(f->w, tb_wrap(x, f->w), y)];
                else if (x >= 0 && x < f->w)
                    v = h[tb_idx(f->w, x, y)];
            }
            mx = v > mx ? v : mx;
            mn = v < mn ? v : mn;
        }
    return mx - mn;
}

START_TEST(test_relief_matches_brute_force)
{
    const struct {
        int64_t w, h, r;
        bool wraps;
    } cases[] = {{37, 23, 1, false},  {50, 40, 3, true},  {20, 70, 5, true}, {9, 9, 7, true},
                 {64, 33, 10, false}, {3, 100, 2, false}, {1, 1, 4, false},  {41, 17, 6, false}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t w = cases[c].w, h = cases[c].h, r = cases[c].r;
        tb_frame_t f = cases[c].wraps ? s_frame(w, h + 10, 8, 0, 5, w, h)
                                      : s_frame(w + 50, h + 10, 8, 20, 5, w, h);
        float *hgt = malloc((size_t)(w * h) * sizeof(float));
        float *rel = malloc((size_t)(w * h) * sizeof(float));
        for (int64_t k = 0; k < w * h; k++) {
            double u = s_unit((uint64_t)k, (int64_t)c);
            hgt[k] = u < 0.2 ? 0.0f : (float)(-200 + 900 * s_unit((uint64_t)k, 100 + (int64_t)c));
        }
        tb_err_t err;
        ck_assert_msg(tb_relief_grid(&f, hgt, r, rel, &err) == 0, "%s", err.msg);
        /* The streaming form answers rows asked out of order, and again. */
        tb_relief_t *ws = tb_relief_new(NULL);
        ck_assert_int_eq(tb_relief_begin(ws, &f, hgt, r, &err), 0);
        int64_t k = 2 * r + 1;
        for (int64_t b = (h - 1) / k; b >= 0; b--) {
            tb_relief_block(ws, b);
            for (int64_t j = (b + 1) * k - 1; j >= b * k; j -= 1 + (j % 2))
                if (j < h)
                    for (int64_t i = 0; i < w; i++)
                        ck_assert(tb_relief_row(ws, j)[i] == s_brute_relief(&f, hgt, r, i, j));
        }
        tb_relief_destroy(&ws);
        for (int64_t j = 0; j < h; j++)
            for (int64_t i = 0; i < w; i++)
                ck_assert_msg(rel[tb_idx(w, i, j)] == s_brute_relief(&f, hgt, r, i, j),
                              "case %zu cell (%lld, %lld): %g against %g", c, (long long)i,
                              (long long)j, (double)rel[tb_idx(w, i, j)],
                              (double)s_brute_relief(&f, hgt, r, i, j));
        free(hgt);
        free(rel);
    }
    ck_assert_int_eq(tb_relief_radius_cells(500, 8), 31); /* 63 cells = 504 m */
    ck_assert_int_eq(tb_relief_radius_cells(500, 32), 7);
    ck_assert_int_eq(tb_relief_radius_cells(5, 8), 1);
}
END_TEST

/* --- planes and cones ------------------------------------------------------------------------- */

/* A box of w x h cells of a plane rising at `slope_deg` towards azimuth `az_deg`, base height
 * base_m at the box's corner; the count mask keeps cells at least `margin` from the box's edge. */
static float *s_plane(int64_t w, int64_t h, double cell, double slope_deg, double az_deg,
                      double base_m, int64_t margin, uint8_t **mask)
{
    float *z = malloc((size_t)(w * h) * sizeof(float));
    *mask = calloc((size_t)(w * h), 1);
    double g = tan(slope_deg * DEG), a = g * cos(az_deg * DEG), b = g * sin(az_deg * DEG);
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            z[tb_idx(w, i, j)] = (float)(base_m + a * (i + 0.5) * cell + b * (j + 0.5) * cell);
            (*mask)[tb_idx(w, i, j)] =
                i >= margin && j >= margin && i < w - margin && j < h - margin;
        }
    return z;
}

START_TEST(test_plane_slope_and_relief_are_exact)
{
    const double cell = 8, slope = 20.05, az = 30;
    const int64_t w = 160, h = 150;
    tb_stats_t *s = s_new(cell);
    int64_t r = tb_stats_halo_cells(tb_stats_params(s));
    uint8_t *mask;
    float *z = s_plane(w, h, cell, slope, az, 300, r + 1, &mask);
    tb_frame_t f = s_frame(1000, 1000, cell, 100, 100, w, h);
    tb_err_t err;
    ck_assert_msg(tb_stats_accumulate(s, &f, z, NULL, NULL, mask, &err) == 0, "%s", err.msg);
    int64_t counted = (w - 2 * (r + 1)) * (h - 2 * (r + 1));
    const tb_hist_t *sh = tb_stats_slope_hist(s, TB_STATS_UNCLASSIFIED);
    ck_assert_int_eq(tb_hist_count(sh), counted);
    /* Every cell of the plane in the bin of its slope, 20.0 .. 20.1 degrees. */
    ck_assert_int_eq(tb_hist_bin_count(sh, 200), counted);
    ck_assert_double_eq_tol(tb_hist_quantile(sh, 0.5), slope, 1e-3);
    ck_assert_double_eq_tol(tb_hist_min(sh), slope, 1e-3);
    ck_assert_double_eq_tol(tb_hist_max(sh), slope, 1e-3);
    /* Relief over the square window of a plane: the rise across it, (k - 1) cells each way. */
    double g = tan(slope * DEG);
    double k = (double)tb_stats_relief_window_cells(s);
    double relief = (k - 1) * cell * g * (fabs(cos(az * DEG)) + fabs(sin(az * DEG)));
    const tb_hist_t *rh = tb_stats_relief_hist(s, TB_STATS_UNCLASSIFIED);
    ck_assert_double_eq_tol(tb_hist_min(rh), relief, 1e-3);
    ck_assert_double_eq_tol(tb_hist_max(rh), relief, 1e-3);
    ck_assert_double_eq_tol(tb_hist_quantile(rh, 0.5), relief, 1e-3);

    tb_stats_summary_t sum;
    tb_stats_summarise(s, &sum);
    const tb_stats_bucket_summary_t *all = &sum.bucket[TB_STATS_ALL];
    ck_assert_double_eq(all->slope_under15, 0);
    ck_assert_double_eq(all->slope_under30, 1);
    ck_assert_double_eq(all->slope_over50, 0);
    ck_assert_double_eq(all->near_repose_share, 0); /* 20 degrees is far from 35 */
    ck_assert_double_eq_tol(sum.relief_window_m, 504, 1e-9);

    /* The slope map says the same, cell by cell. */
    float *deg = malloc((size_t)(w * h) * sizeof(float));
    ck_assert_int_eq(tb_stats_slope_grid(&f, z, deg, &err), 0);
    for (int64_t j = 1; j < h - 1; j++)
        for (int64_t i = 1; i < w - 1; i++)
            ck_assert_double_eq_tol(deg[tb_idx(w, i, j)], slope, 1e-3);
    free(deg);
    free(z);
    free(mask);
    tb_stats_destroy(&s);
}
END_TEST

START_TEST(test_cone_slope_is_its_flank)
{
    /* Horn's stencil under-reads a cone by about 6/r^2 degrees at r cells from the apex (0.016 at
     * 20), so cells from 20 cells out all sit in the flank angle's bin, 30.0 .. 30.1. */
    const double cell = 8, flank = 30.05;
    const int64_t n = 241, c = 120, r_in = 20, r_out = 110;
    double s = tan(flank * DEG), top = s * 115 * cell;
    float *z = malloc((size_t)(n * n) * sizeof(float));
    uint8_t *mask = calloc((size_t)(n * n), 1);
    int64_t counted = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            double rc = hypot((double)(i - c), (double)(j - c));
            double v = top - s * rc * cell;
            z[tb_idx(n, i, j)] = v > 0 ? (float)v : 0.0f;
            bool in = rc >= r_in && rc <= r_out;
            mask[tb_idx(n, i, j)] = in;
            counted += in;
        }
    tb_frame_t f = s_frame(n, n, cell, 0, 0, n, n);
    tb_stats_t *st = s_new(cell);
    tb_err_t err;
    ck_assert_msg(tb_stats_accumulate(st, &f, z, NULL, NULL, mask, &err) == 0, "%s", err.msg);
    const tb_hist_t *sh = tb_stats_slope_hist(st, TB_STATS_UNCLASSIFIED);
    ck_assert_int_eq(tb_hist_count(sh), counted);
    ck_assert_int_eq(tb_hist_bin_count(sh, 300), counted);
    ck_assert_double_eq_tol(tb_hist_quantile(sh, 0.5), flank, 0.02);
    ck_assert(tb_hist_max(sh) <= flank + 1e-3);
    /* Negative control: counting the apex region too puts cells below the flank bin. */
    tb_stats_t *all = s_new(cell);
    ck_assert_int_eq(tb_stats_accumulate(all, &f, z, NULL, NULL, NULL, &err), 0);
    const tb_hist_t *ah = tb_stats_slope_hist(all, TB_STATS_UNCLASSIFIED);
    ck_assert_int_lt(tb_hist_bin_count(ah, 300), tb_hist_count(ah));
    free(z);
    free(mask);
    tb_stats_destroy(&st);
    tb_stats_destroy(&all);
}
END_TEST

START_TEST(test_near_repose_share)
{
    const struct {
        double slope, expect;
    } cases[] = {{34.0, 1.0}, {36.9, 1.0}, {32.7, 0.0}, {37.5, 0.0}, {20.0, 0.0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *mask;
        float *z = s_plane(40, 40, 8, cases[c].slope, 75, 50, 2, &mask);
        tb_frame_t f = s_frame(40, 40, 8, 0, 0, 40, 40);
        tb_stats_t *s = s_new(8);
        ck_assert_int_eq(tb_stats_accumulate(s, &f, z, NULL, NULL, mask, NULL), 0);
        tb_stats_summary_t sum;
        tb_stats_summarise(s, &sum);
        ck_assert_msg(sum.bucket[TB_STATS_ALL].near_repose_share == cases[c].expect,
                      "a plane at %g degrees: near-repose share %g", cases[c].slope,
                      sum.bucket[TB_STATS_ALL].near_repose_share);
        free(z);
        free(mask);
        tb_stats_destroy(&s);
    }
}
END_TEST

START_TEST(test_slope_bins_match_degrees)
{
    /* One counted cell on a small plane of random slope: its bin is floor(slope / 0.1 degree),
     * except within float rounding of an edge. */
    tb_frame_t f = s_frame(5, 5, 8, 0, 0, 5, 5);
    uint8_t mask[25] = {0};
    mask[12] = 1;
    tb_stats_t *s = s_new(8);
    float deg[25];
    int checked = 0;
    for (uint64_t n = 0; n < 3000; n++) {
        double slope = 89.9 * s_unit(n, 20), az = 360 * s_unit(n, 21);
        uint8_t *m;
        float *z = s_plane(5, 5, 8, slope, az, 1e5, 0, &m);
        free(m);
        ck_assert_int_eq(tb_stats_slope_grid(&f, z, deg, NULL), 0);
        const tb_hist_t *h = tb_stats_slope_hist(s, TB_STATS_UNCLASSIFIED);
        double d = deg[12];
        int32_t k = (int32_t)floor(d / 0.1);
        int64_t before = tb_hist_bin_count(h, k);
        ck_assert_int_eq(tb_stats_accumulate(s, &f, z, NULL, NULL, mask, NULL), 0);
        double edge = d / 0.1 - floor(d / 0.1);
        if (edge > 1e-3 && edge < 1 - 1e-3 && d < 89.5) {
            ck_assert_msg(tb_hist_bin_count(h, k) == before + 1, "slope %.6f degrees not in bin %d",
                          d, (int)k);
            checked++;
        }
        free(z);
    }
    ck_assert_int_gt(checked, 2500);
    ck_assert_int_eq(tb_hist_count(tb_stats_slope_hist(s, TB_STATS_UNCLASSIFIED)), 3000);
    tb_stats_destroy(&s);
}
END_TEST

START_TEST(test_area_bins_match_the_histogram)
{
    /* The row pass bins areas by comparisons (s_log2_bin4_row); it must agree with the area
     * histogram's own tb_hist_bin_of, including its edges, zero and beyond its range. */
    tb_frame_t f = s_frame(5, 5, 8, 0, 0, 5, 5);
    uint8_t mask[25] = {0};
    mask[12] = 1;
    uint8_t *m;
    float *z = s_plane(5, 5, 8, 10, 0, 50, 0, &m);
    free(m);
    float a[25];
    tb_stats_t *s = s_new(8);
    const tb_hist_t *h = tb_stats_area_hist(s, TB_STATS_UNCLASSIFIED);
    for (uint64_t n = 0; n < 4000; n++) {
        float v;
        if (n < 180)
            v = (float)tb_hist_edge(h, (int32_t)n); /* every edge and a few beyond */
        else if (n < 190)
            v = n % 2 ? 0.0f : 0.3f;
        else
            v = (float)exp2(-3 + 50 * s_unit(n, 22));
        for (int k = 0; k < 25; k++)
            a[k] = v;
        int32_t bin = tb_hist_bin_of(h, v);
        int64_t before = tb_hist_bin_count(h, bin);
        ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, NULL, mask, NULL), 0);
        ck_assert_msg(tb_hist_bin_count(h, bin) == before + 1, "area %.9g not in bin %d", (double)v,
                      (int)bin);
    }
    free(z);
    tb_stats_destroy(&s);
}
END_TEST

/* --- the slope-area fit ----------------------------------------------------------------------- */

/* A channel-like field: columns x of area A(x) = 1e6 2^(x/40) m2 and a profile whose gradient is
 * exactly c A^-0.5 (the continuous integral, so the central difference is c A^-0.5 times a constant
 * factor 1 + 1e-5). Rows are identical. Optionally the areas are scrambled between cells. */
static void s_channel_field(int64_t w, int64_t h, double cell, bool scramble, float **z_out,
                            float **a_out, uint8_t **mask_out)
{
    float *z = malloc((size_t)(w * h) * sizeof(float)),
          *a = malloc((size_t)(w * h) * sizeof(float));
    uint8_t *mask = calloc((size_t)(w * h), 1);
    const double c = 100, a0 = 1e6, per = 40;
    double s0 = c / sqrt(a0), k = log(2) / (2 * per); /* S(x) = s0 exp(-k x) */
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            double x = (double)i;
            z[tb_idx(w, i, j)] = (float)(200 - s0 * cell / k * (1 - exp(-k * x)));
            a[tb_idx(w, i, j)] = (float)(a0 * exp2(x / per));
            mask[tb_idx(w, i, j)] = i > 0 && j > 0 && i < w - 1 && j < h - 1;
        }
    if (scramble)
        for (int64_t n = w * h - 1; n > 0; n--) {
            int64_t m = (int64_t)(s_unit((uint64_t)n, 30) * (double)(n + 1));
            float t = a[n];
            a[n] = a[m];
            a[m] = t;
        }
    *z_out = z;
    *a_out = a;
    *mask_out = mask;
}

START_TEST(test_slope_area_fit_recovers_exponent)
{
    const int64_t w = 540, h = 40;
    tb_frame_t f = s_frame(2000, 100, 8, 0, 10, w, h);
    float *z, *a;
    uint8_t *mask;
    s_channel_field(w, h, 8, false, &z, &a, &mask);
    tb_stats_t *s = s_new(8);
    tb_err_t err;
    ck_assert_msg(tb_stats_accumulate(s, &f, z, a, NULL, mask, &err) == 0, "%s", err.msg);
    tb_stats_fit_t fit;
    tb_stats_fit_slope_area(s, TB_STATS_ALL, &fit);
    ck_assert_int_ge(fit.bins, 40);
    ck_assert_msg(fabs(fit.exponent + 0.5) < 0.01, "exponent %g", fit.exponent);
    ck_assert_msg(fit.r2 > 0.999, "R2 %g", fit.r2);
    ck_assert_double_eq(fit.expect, -0.5);
    /* log10 S = log10 c - 0.5 log10 A, c = 100. */
    ck_assert_double_eq_tol(fit.intercept, 2.0, 0.05);
    /* The fit starts at the first area bin whose lower edge is at or above fit_min_area_m2 (1e4
     * m2 by default; the field starts at 1 km2, so here its first bin), and honours a higher
     * floor: at 8 km2 the points start there. */
    ck_assert(fit.area_m2[0] >= tb_stats_params(s)->fit_min_area_m2 && fit.area_m2[0] < 1.2e6);
    {
        tb_stats_params_t p8 = *tb_stats_params(s);
        p8.fit_min_area_m2 = 8e6;
        tb_stats_t *s8 = tb_stats_new(&p8, &err);
        ck_assert_int_eq(tb_stats_accumulate(s8, &f, z, a, NULL, mask, &err), 0);
        tb_stats_fit_t fit8;
        tb_stats_fit_slope_area(s8, TB_STATS_ALL, &fit8);
        ck_assert(fit8.area_m2[0] >= 8e6 && fit8.bins < fit.bins && fit8.bins >= 10);
        ck_assert_msg(fabs(fit8.exponent + 0.5) < 0.01, "exponent %g", fit8.exponent);
        tb_stats_destroy(&s8);
    }
    char *text = tb_stats_report_text(s, NULL, NULL);
    ck_assert_ptr_nonnull(strstr(text, "slope-area: exponent -0.50"));
    ck_assert_ptr_nonnull(strstr(text, "(expect -0.500), R2 1.000 over"));
    free(text);
    free(z);
    free(a);
    free(mask);
    tb_stats_destroy(&s);

    /* Negative control: the same slopes with their areas scrambled carry no relation. */
    s_channel_field(w, h, 8, true, &z, &a, &mask);
    s = s_new(8);
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, NULL, mask, &err), 0);
    tb_stats_fit_slope_area(s, TB_STATS_ALL, &fit);
    ck_assert_int_ge(fit.bins, 20);
    ck_assert_msg(fit.r2 < 0.3, "scrambled field fit R2 %g (exponent %g)", fit.r2, fit.exponent);
    ck_assert_msg(fabs(fit.exponent) < 0.1, "scrambled field exponent %g", fit.exponent);
    free(z);
    free(a);
    free(mask);
    tb_stats_destroy(&s);
}
END_TEST

/* A steady-state river profile with a hillslope regime (docs/statistics.md, the channel fit):
 * every row is the same profile, flowing east, its drainage area doubling every 8 columns from one
 * cell (64 m2 at 8 m), so the steepest descent of a cell is its own slope S(A): k A^-theta above
 * a_c (channels), k a_c^-theta (A / a_c)^0.5 below it (hillslopes, where slope rises with area),
 * times a per-column noise of up to +-`noise` in log10. The border ring is not counted (its
 * neighbours outside the box are sea level). */
static void s_profile_field(int64_t w, int64_t h, double theta, double a_c, double noise,
                            float **z_out, float **a_out, uint8_t **mask_out)
{
    float *z = malloc((size_t)(w * h) * sizeof(float)),
          *a = malloc((size_t)(w * h) * sizeof(float));
    uint8_t *mask = calloc((size_t)(w * h), 1);
    double *col_z = malloc((size_t)w * sizeof(double));
    const double cell = 8, k = 0.3 * pow(a_c, theta);
    double zz = 0;
    for (int64_t i = w - 1; i >= 0; i--) {
        double area = cell * cell * exp2((double)i / 8);
        double slope =
            area >= a_c ? k * pow(area, -theta) : k * pow(a_c, -theta) * pow(area / a_c, 0.5);
        slope *= pow(10, noise * (2 * s_unit((uint64_t)i, 31) - 1));
        zz += slope * cell; /* the drop to the next column east */
        col_z[i] = zz;
    }
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            z[tb_idx(w, i, j)] = (float)col_z[i];
            a[tb_idx(w, i, j)] = (float)(cell * cell * exp2((double)i / 8));
            mask[tb_idx(w, i, j)] = i > 0 && j > 0 && i < w - 1 && j < h - 1;
        }
    free(col_z);
    *z_out = z;
    *a_out = a;
    *mask_out = mask;
}

START_TEST(test_channel_fit_finds_the_turn)
{
    const int64_t w = 170, h = 40; /* area 64 m2 .. 1.6e8 m2 */
    tb_frame_t f = s_frame(2000, 100, 8, 0, 10, w, h);
    const double thetas[3] = {0.5, 0.35, 0.65};
    for (int t = 0; t < 3; t++) {
        float *z, *a;
        uint8_t *mask;
        s_profile_field(w, h, thetas[t], 1e5, 0.05, &z, &a, &mask);
        tb_stats_t *s = s_new(8);
        tb_err_t err;
        ck_assert_msg(tb_stats_accumulate(s, &f, z, a, NULL, mask, &err) == 0, "%s", err.msg);
        tb_stats_fit_t ch, all;
        tb_stats_fit_slope_area_channels(s, TB_STATS_ALL, &ch);
        tb_stats_fit_slope_area(s, TB_STATS_ALL, &all);
        /* The break is found at the hillslope-channel transition (1e5 m2, within a bin either
         * way), the channel fit starts there and recovers theta within 0.04 (the noise is +-0.05
         * in log10 per column). */
        ck_assert_msg(ch.turn_area_m2 > 0.7e5 && ch.turn_area_m2 < 1.5e5, "break %g",
                      ch.turn_area_m2);
        ck_assert_double_eq(ch.min_area_m2, ch.turn_area_m2);
        ck_assert_int_ge(ch.bins, 25);
        ck_assert_msg(fabs(ch.exponent + thetas[t]) < 0.04, "theta %g: channel fit %g", thetas[t],
                      ch.exponent);
        ck_assert_msg(ch.r2 > 0.95, "theta %g: channel R2 %g", thetas[t], ch.r2);
        /* Negative control: the all-cells fit from its fixed 1e4 m2 takes in the hillslope
         * regime (1e4 .. 1e5 m2, slope rising with area) and misses theta by more than 0.1. */
        ck_assert_msg(fabs(all.exponent + thetas[t]) > 0.1, "theta %g: all-cells fit %g", thetas[t],
                      all.exponent);
        free(z);
        free(a);
        free(mask);
        tb_stats_destroy(&s);
    }
    /* And a fixed channel floor at the demo's old 1e5 m2 cannot be told apart from the turn
     * here; move the transition to 1e6 m2 and only the data's turn keeps the fit on the channels:
     * a floor at 1e5 would start inside the hillslope regime. */
    {
        float *z, *a;
        uint8_t *mask;
        s_profile_field(w, h, 0.5, 1e6, 0.05, &z, &a, &mask);
        tb_stats_t *s = s_new(8);
        ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, NULL, mask, NULL), 0);
        tb_stats_fit_t ch;
        tb_stats_fit_slope_area_channels(s, TB_STATS_ALL, &ch);
        ck_assert_msg(ch.turn_area_m2 > 0.7e6 && ch.turn_area_m2 < 1.5e6, "break %g",
                      ch.turn_area_m2);
        ck_assert_msg(fabs(ch.exponent + 0.5) < 0.04, "channel fit %g", ch.exponent);
        tb_stats_params_t p = *tb_stats_params(s);
        p.channel_fit_min_area_m2 = 1e5; /* a floor under the turn changes nothing */
        tb_stats_t *s5 = tb_stats_new(&p, NULL);
        ck_assert_int_eq(tb_stats_accumulate(s5, &f, z, a, NULL, mask, NULL), 0);
        tb_stats_fit_t ch5;
        tb_stats_fit_slope_area_channels(s5, TB_STATS_ALL, &ch5);
        ck_assert_double_eq(ch5.exponent, ch.exponent);
        tb_stats_destroy(&s5);
        free(z);
        free(a);
        free(mask);
        tb_stats_destroy(&s);
    }
}
END_TEST

/* A flat-topped profile like the demo range's on seed 67914 (docs/statistics.md, "Where the
 * channels start"): the same river as s_profile_field without noise, but between a_c / 2 and a_c
 * its slope stays flat, tilted by A^tilt (a fraction of a percent over the octave), so the top of
 * its slope-area curve is a plateau whose highest bin is decided by the tilt's sign alone. */
static void s_flat_top_field(int64_t w, int64_t h, double theta, double a_c, double tilt,
                             float **z_out, float **a_out, uint8_t **mask_out)
{
    float *z = malloc((size_t)(w * h) * sizeof(float)),
          *a = malloc((size_t)(w * h) * sizeof(float));
    uint8_t *mask = calloc((size_t)(w * h), 1);
    double *col_z = malloc((size_t)w * sizeof(double));
    const double cell = 8, k = 0.3 * pow(a_c, theta), a_p = a_c / 2;
    const double s_p = k * pow(a_c, -theta) * pow(a_p / a_c, tilt);
    double zz = 0;
    for (int64_t i = w - 1; i >= 0; i--) {
        double area = cell * cell * exp2((double)i / 8), slope;
        if (area >= a_c)
            slope = k * pow(area, -theta);
        else if (area >= a_p)
            slope = k * pow(a_c, -theta) * pow(area / a_c, tilt);
        else
            slope = s_p * pow(area / a_p, 0.5);
        zz += slope * cell;
        col_z[i] = zz;
    }
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            z[tb_idx(w, i, j)] = (float)col_z[i];
            a[tb_idx(w, i, j)] = (float)(cell * cell * exp2((double)i / 8));
            mask[tb_idx(w, i, j)] = i > 0 && j > 0 && i < w - 1 && j < h - 1;
        }
    free(col_z);
    *z_out = z;
    *a_out = a;
    *mask_out = mask;
}

/* The single-peak turn the channel fit used before the break (docs/statistics.md): the lower edge
 * of the quarter-octave area bin whose median steepest descent is the highest, computed here
 * straight from the field (every counted cell of a column has the same slope, the drop to its
 * east neighbour, so a bin's median is the middle of its columns' slopes). */
static double s_single_peak_turn(int64_t w, const float *z, const float *a)
{
    double best = 0, turn = NAN;
    int64_t i = 1;
    while (i < w - 2) {
        int bin = (int)floor(log2(a[i]) * 4);
        double s[16];
        int n = 0;
        for (; i < w - 2 && (int)floor(log2(a[i]) * 4) == bin && n < 16; i++)
            s[n++] = ((double)z[i] - (double)z[i + 1]) / 8;
        for (int p = 1; p < n; p++) /* insertion sort: a handful of columns */
            for (int q = p; q > 0 && s[q] < s[q - 1]; q--) {
                double t = s[q];
                s[q] = s[q - 1];
                s[q - 1] = t;
            }
        double med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
        if (med > best) {
            best = med;
            turn = exp2(bin / 4.0);
        }
    }
    return turn;
}

START_TEST(test_channel_break_on_a_flat_top)
{
    const int64_t w = 170, h = 40;
    tb_frame_t f = s_frame(2000, 100, 8, 0, 10, w, h);
    const double a_c = 1e5, tilts[2] = {-0.01, 0.01};
    double turn[2], brk[2], expo[2];
    for (int t = 0; t < 2; t++) {
        float *z, *a;
        uint8_t *mask;
        s_flat_top_field(w, h, 0.5, a_c, tilts[t], &z, &a, &mask);
        turn[t] = s_single_peak_turn(w, z, a);
        tb_stats_t *s = s_new(8);
        tb_err_t err;
        ck_assert_msg(tb_stats_accumulate(s, &f, z, a, NULL, mask, &err) == 0, "%s", err.msg);
        tb_stats_fit_t ch;
        tb_stats_fit_slope_area_channels(s, TB_STATS_ALL, &ch);
        brk[t] = ch.turn_area_m2;
        expo[t] = ch.exponent;
        ck_assert_msg(fabs(ch.exponent + 0.5) < 0.04, "tilt %g: channel fit %g from %g", tilts[t],
                      ch.exponent, ch.min_area_m2);
        ck_assert_msg(ch.r2 > 0.95, "tilt %g: R2 %g", tilts[t], ch.r2);
        free(z);
        free(a);
        free(mask);
        tb_stats_destroy(&s);
    }
    /* Negative control: a tilt of 0.7 % over the plateau's octave moves the single-peak turn from
     * one end of the plateau to the other (a factor 1.7, and a fit from 4 x the turn with it). */
    ck_assert_msg(turn[0] < 0.6 * a_c && turn[1] > 0.7 * a_c, "single-peak turns %g, %g", turn[0],
                  turn[1]);
    /* The break does not move with the tilt: the same bin edge either way, in the plateau's upper
     * half (the bin that straddles a_c is half plateau, so the least-squares edge is the one
     * below it), and the same exponent. */
    ck_assert_double_eq(brk[0], brk[1]);
    ck_assert_msg(brk[0] > 0.7 * a_c && brk[0] < 1.2 * a_c, "break %g", brk[0]);
    ck_assert_double_eq(expo[0], expo[1]);
}
END_TEST

/* --- pooled equals whole ---------------------------------------------------------------------- */

typedef struct {
    tb_frame_t box;
    float *h, *a, *u;
    uint8_t *mask;
    uint8_t *cls; /* painted class raster, in this region's own (rotated) legend */
} s_region_t;

/* Painted classes of the synthetic planet: patches of four legend entries, the fourth unnamed
 * (land of no class). Each region job holds the legend rotated by its id, as region jobs hold
 * reduced legends in their own order, so pooling must go by name. s_class_mode: 0 no classes, 1
 * classes, 2 classes with region 3 given the planet's unrotated legend (a wrong one). */
static const char *const s_class_names[4] = {"ridge", "basin", "alpine steep", NULL};
static int s_class_mode;

static uint8_t s_class_of(int64_t x, int64_t y)
{
    return (uint8_t)((x / 37 + y / 23 + x / 11) % 4);
}

/* Region id of planet cell (x, y): six stripes of columns, the first straddling the seam, each
 * cut in two across Y at a stripe-dependent row. */
static int s_owner(int64_t x, int64_t y, int64_t W, int64_t H)
{
    int64_t stripe = tb_wrap(x + 25, W) / (W / 6);
    stripe = stripe > 5 ? 5 : stripe;
    return (int)(2 * stripe + (y >= H / 3 + stripe * 9 ? 1 : 0));
}

/* Cuts region `id` out of the planet: the bounding box of its cells grown by `halo` (clamped to
 * the planet in Y; the whole circumference when it would wrap onto itself), the count mask its own
 * cells (and also the next region's when double_count). */
static void s_cut_region(const tb_frame_t *planet, const tb_synth_t *syn, int id, int64_t halo,
                         bool double_count, s_region_t *out)
{
    int64_t W = planet->w, H = planet->h;
    int64_t xs = 0, ys = H, ye = -1;
    int64_t stripe = id / 2, sw = W / 6;
    int64_t x0 = tb_wrap(stripe * sw - 25, W), xw = stripe == 5 ? W - 5 * sw : sw;
    for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W; x++)
            if (s_owner(x, y, W, H) == id) {
                ys = y < ys ? y : ys;
                ye = y > ye ? y : ye;
            }
    ck_assert_int_ge(ye, ys);
    xs = x0 - halo;
    int64_t bw = xw + 2 * halo;
    if (double_count)
        bw += sw;
    if (bw >= W) {
        xs = 0;
        bw = W;
    }
    int64_t by0 = ys - halo < 0 ? 0 : ys - halo, by1 = ye + halo >= H ? H - 1 : ye + halo;
    out->box = s_frame(W, planet->lattice_h, planet->cell_m, xs, by0, bw, by1 - by0 + 1);
    size_t n = (size_t)(out->box.w * out->box.h);
    out->h = malloc(n * sizeof(float));
    out->a = malloc(n * sizeof(float));
    out->u = malloc(n * sizeof(float));
    out->mask = malloc(n);
    out->cls = malloc(n);
    for (int64_t j = 0; j < out->box.h; j++)
        for (int64_t i = 0; i < out->box.w; i++) {
            int64_t x = tb_frame_lattice_x(&out->box, i), y = out->box.y0 + j;
            size_t src = tb_idx(W, x, y), dst = tb_idx(out->box.w, i, j);
            out->h[dst] = syn->height_m[src];
            out->a[dst] = syn->area_m2[src];
            out->u[dst] = syn->uplift_m_yr[src];
            out->cls[dst] = (uint8_t)((s_class_of(x, y) + 4 - id % 4) % 4);
            int own = s_owner(x, y, W, H);
            out->mask[dst] = own == id || (double_count && own == id + 2 && y < H / 3);
        }
}

static void s_free_region(s_region_t *r)
{
    free(r->h);
    free(r->a);
    free(r->u);
    free(r->mask);
    free(r->cls);
}

/* Accumulates the twelve regions and merges them in the order given. */
static tb_stats_t *s_pooled(const tb_frame_t *planet, const tb_synth_t *syn, const int *order,
                            int64_t halo, bool double_count, uint8_t ***enc_out, size_t **len_out)
{
    tb_stats_t *pooled = s_new(planet->cell_m);
    tb_stats_t *parts[12];
    tb_err_t err;
    for (int id = 0; id < 12; id++) {
        s_region_t r;
        s_cut_region(planet, syn, id, halo, double_count && id == 4, &r);
        parts[id] = s_new(planet->cell_m);
        const char *names[4];
        for (int v = 0; v < 4; v++) /* raster value v of region id is planet class v + id */
            names[v] = s_class_names[(v + (s_class_mode == 2 && id == 3 ? 0 : id)) % 4];
        ck_assert_msg(tb_stats_accumulate_classes(parts[id], &r.box, r.h, r.a, r.u, r.mask,
                                                  s_class_mode ? r.cls : NULL, 4, names, &err) == 0,
                      "region %d: %s", id, err.msg);
        s_free_region(&r);
    }
    for (int k = 0; k < 12; k++)
        ck_assert_int_eq(tb_stats_merge(pooled, parts[order[k]], &err), 0);
    if (enc_out) {
        *enc_out = malloc(12 * sizeof **enc_out);
        *len_out = malloc(12 * sizeof **len_out);
        for (int id = 0; id < 12; id++)
            (*enc_out)[id] = tb_stats_encode(parts[id], &(*len_out)[id], &err);
    }
    for (int id = 0; id < 12; id++)
        tb_stats_destroy(&parts[id]);
    return pooled;
}

static tb_frame_t s_planet;
static tb_synth_t s_syn;

static void s_planet_setup(void)
{
    s_planet = s_frame(360, 200, 32, 0, 0, 360, 200);
    tb_err_t err;
    ck_assert_msg(tb_synth_planet(&s_planet, 11, 500, &s_syn, &err) == 0, "%s", err.msg);
}

static void s_planet_teardown(void)
{
    tb_synth_free(&s_syn);
}

static bool s_same_bytes(const tb_stats_t *a, const tb_stats_t *b)
{
    size_t la, lb;
    uint8_t *ea = tb_stats_encode(a, &la, NULL), *eb = tb_stats_encode(b, &lb, NULL);
    bool same = la == lb && memcmp(ea, eb, la) == 0;
    free(ea);
    free(eb);
    return same;
}

/* The planet's class raster in its own legend order. */
static uint8_t *s_planet_classes(void)
{
    uint8_t *c = malloc(s_syn.cells);
    for (int64_t y = 0; y < s_planet.h; y++)
        for (int64_t x = 0; x < s_planet.w; x++)
            c[tb_idx(s_planet.w, x, y)] = s_class_of(x, y);
    return c;
}

START_TEST(test_pooled_equals_whole)
{
    tb_err_t err;
    tb_stats_t *whole = s_new(s_planet.cell_m);
    uint8_t *classes = s_planet_classes();
    s_class_mode = 1;
    ck_assert_msg(tb_stats_accumulate_classes(whole, &s_planet, s_syn.height_m, s_syn.area_m2,
                                              s_syn.uplift_m_yr, NULL, classes, 4, s_class_names,
                                              &err) == 0,
                  "%s", err.msg);
    free(classes);
    /* three named classes, sorted by name, each with land; the unnamed fourth is in none */
    ck_assert_int_eq(tb_stats_class_count(whole), 3);
    ck_assert_str_eq(tb_stats_class_name(whole, 0), "alpine steep");
    ck_assert_str_eq(tb_stats_class_name(whole, 1), "basin");
    ck_assert_str_eq(tb_stats_class_name(whole, 2), "ridge");
    int64_t classed = 0;
    for (int k = 0; k < 3; k++) {
        int64_t n = tb_hist_count(tb_stats_class_slope_hist(whole, k));
        ck_assert_int_gt(n, 1000);
        classed += n;
    }
    {
        tb_stats_counts_t all;
        tb_stats_counts(whole, TB_STATS_ALL, &all);
        ck_assert_int_lt(classed, all.land_cells); /* the unnamed class's land is in none */
        ck_assert_int_gt(classed, all.land_cells / 2);
    }
    /* The planet exercises everything: every class, channels, a fit. */
    tb_stats_counts_t c;
    for (int b = TB_STATS_PLAIN; b <= TB_STATS_MOUNTAIN; b++) {
        tb_stats_counts(whole, b, &c);
        ck_assert_int_gt(c.land_cells, 1000);
    }
    tb_stats_counts(whole, TB_STATS_ALL, &c);
    ck_assert_int_gt(c.channel_cells, 100);
    ck_assert_int_gt(c.channel_diagonal, 10);
    tb_stats_fit_t fit;
    tb_stats_fit_slope_area(whole, TB_STATS_ALL, &fit);
    ck_assert_int_ge(fit.bins, 3);

    int64_t halo = tb_stats_halo_cells(tb_stats_params(whole));
    const int forward[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    const int backward[12] = {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    const int shuffled[12] = {7, 2, 11, 0, 5, 9, 1, 4, 10, 3, 8, 6};
    uint8_t **enc;
    size_t *len;
    tb_stats_t *pooled = s_pooled(&s_planet, &s_syn, forward, halo, false, &enc, &len);
    ck_assert_int_eq(tb_stats_edge_cells(pooled), 0); /* every box held its halo */
    ck_assert(tb_stats_equal(pooled, whole));
    ck_assert(s_same_bytes(pooled, whole)); /* every count, sum and extreme, to the last bit */
    tb_stats_t *back = s_pooled(&s_planet, &s_syn, backward, halo, false, NULL, NULL);
    tb_stats_t *mixed = s_pooled(&s_planet, &s_syn, shuffled, halo, false, NULL, NULL);
    ck_assert(tb_stats_equal(back, whole));
    ck_assert(tb_stats_equal(mixed, whole));

    /* Through the wire: decode each region's bytes, merge in region order. */
    tb_stats_t *wire = s_new(s_planet.cell_m);
    for (int id = 0; id < 12; id++) {
        tb_stats_t *part = tb_stats_decode(enc[id], len[id], &err);
        ck_assert_msg(part != NULL, "%s", err.msg);
        ck_assert_int_eq(tb_stats_merge(wire, part, &err), 0);
        tb_stats_destroy(&part);
        free(enc[id]);
    }
    free(enc);
    free(len);
    ck_assert(tb_stats_equal(wire, whole));

    /* The printed block agrees too. */
    tb_stats_extent_t ext;
    ck_assert_int_eq(tb_stats_extent_measure(s_syn.height_m, s_syn.cells, -1024, 1024, &ext, NULL),
                     0);
    char *tw = tb_stats_report_text(whole, &ext, NULL),
         *tp = tb_stats_report_text(pooled, &ext, NULL);
    ck_assert_str_eq(tw, tp);
    ck_assert_ptr_nonnull(strstr(tw, "\nby painted class:\nalpine steep "));
    ck_assert_ptr_nonnull(strstr(tw, "\nslope-area, channel cells (steepest descent, A >= "));
    /* Each painted class line carries its own channel fit, from its own break. */
    int with_channels = 0;
    for (int ci = 0; ci < tb_stats_class_count(whole); ci++) {
        tb_stats_bucket_summary_t cs;
        tb_stats_summarise_class(whole, ci, &cs);
        if (cs.channel_fit.bins < 2)
            continue;
        ck_assert_double_eq(
            cs.channel_fit.min_area_m2,
            fmax(cs.channel_fit.turn_area_m2, tb_stats_params(whole)->channel_fit_min_area_m2));
        char want[160];
        snprintf(want, sizeof want,
                 "; channels %.3f R2 %.3f over %d bins from %.0f m2 (break %.0f m2)",
                 cs.channel_fit.exponent, cs.channel_fit.r2, (int)cs.channel_fit.bins,
                 cs.channel_fit.min_area_m2, cs.channel_fit.turn_area_m2);
        ck_assert_msg(strstr(tw, want) != NULL, "class %s: no \"%s\" in\n%s",
                      tb_stats_class_name(whole, ci), want, tw);
        with_channels++;
    }
    ck_assert_int_ge(with_channels, 1);
    free(tw);
    free(tp);

    /* Negative control: region 3 reads its raster with the wrong legend. The uplift buckets
     * still agree; the painted classes do not. */
    s_class_mode = 2;
    tb_stats_t *wrong = s_pooled(&s_planet, &s_syn, forward, halo, false, NULL, NULL);
    ck_assert(!tb_stats_equal(wrong, whole));
    for (int b = 0; b < TB_STATS_NBUCKETS; b++)
        ck_assert(tb_hist_equal(tb_stats_slope_hist(wrong, b), tb_stats_slope_hist(whole, b)));
    ck_assert(
        !tb_hist_equal(tb_stats_class_slope_hist(wrong, 0), tb_stats_class_slope_hist(whole, 0)));
    s_class_mode = 0;

    tb_stats_destroy(&wrong);
    tb_stats_destroy(&pooled);
    tb_stats_destroy(&back);
    tb_stats_destroy(&mixed);
    tb_stats_destroy(&wire);
    tb_stats_destroy(&whole);
}
END_TEST

START_TEST(test_pooled_negative_controls)
{
    /* A test that could not fail would prove nothing: boxes without the relief halo, and masks
     * that count a strip twice, both break the equality. */
    tb_stats_t *whole = s_new(s_planet.cell_m);
    ck_assert_int_eq(tb_stats_accumulate(whole, &s_planet, s_syn.height_m, s_syn.area_m2,
                                         s_syn.uplift_m_yr, NULL, NULL),
                     0);
    const int forward[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    int64_t halo = tb_stats_halo_cells(tb_stats_params(whole));
    tb_stats_t *thin = s_pooled(&s_planet, &s_syn, forward, 1, false, NULL, NULL);
    ck_assert(!tb_stats_equal(thin, whole));
    ck_assert_int_gt(tb_stats_edge_cells(thin), 0); /* and the statistics say so */
    char *text = tb_stats_report_text(thin, NULL, NULL);
    ck_assert_ptr_nonnull(strstr(text, "\nWARNING "));
    ck_assert_ptr_nonnull(strstr(text, " land cells lie within 224 m of an inner box edge"));
    free(text);
    /* ... and only the relief differs: the 3x3 stencil needs a halo of one. */
    ck_assert(tb_hist_equal(tb_stats_slope_hist(thin, TB_STATS_ROLLING),
                            tb_stats_slope_hist(whole, TB_STATS_ROLLING)));
    ck_assert(!tb_hist_equal(tb_stats_relief_hist(thin, TB_STATS_ROLLING),
                             tb_stats_relief_hist(whole, TB_STATS_ROLLING)) ||
              !tb_hist_equal(tb_stats_relief_hist(thin, TB_STATS_MOUNTAIN),
                             tb_stats_relief_hist(whole, TB_STATS_MOUNTAIN)) ||
              !tb_hist_equal(tb_stats_relief_hist(thin, TB_STATS_PLAIN),
                             tb_stats_relief_hist(whole, TB_STATS_PLAIN)));
    tb_stats_t *twice = s_pooled(&s_planet, &s_syn, forward, halo, true, NULL, NULL);
    tb_stats_counts_t a, b;
    tb_stats_counts(twice, TB_STATS_ALL, &a);
    tb_stats_counts(whole, TB_STATS_ALL, &b);
    ck_assert_int_gt(a.land_cells, b.land_cells);
    ck_assert(!tb_stats_equal(twice, whole));
    tb_stats_destroy(&thin);
    tb_stats_destroy(&twice);
    tb_stats_destroy(&whole);
}
END_TEST

/* --- encoding -----------------------------------------------------------------------------------
 */

START_TEST(test_encode_roundtrip_and_bad_bytes)
{
    tb_stats_t *s = s_new(s_planet.cell_m);
    ck_assert_int_eq(tb_stats_accumulate(s, &s_planet, s_syn.height_m, s_syn.area_m2,
                                         s_syn.uplift_m_yr, NULL, NULL),
                     0);
    tb_err_t err;
    size_t len;
    uint8_t *enc = tb_stats_encode(s, &len, &err);
    ck_assert_ptr_nonnull(enc);
    tb_stats_t *d = tb_stats_decode(enc, len, &err);
    ck_assert_msg(d != NULL, "%s", err.msg);
    ck_assert(tb_stats_equal(s, d));
    tb_stats_destroy(&d);

    /* Truncations fail cleanly: every length up to 512 bytes, then a spread to the end. */
    for (size_t n = 0; n < len; n += n < 512 ? 1 : 1 + len / 400) {
        d = tb_stats_decode(enc, n, &err);
        ck_assert_msg(d == NULL, "decoded statistics from %zu of %zu bytes", n, len);
        ck_assert_int_eq(err.code, TB_E_FORMAT);
    }
    /* A trailing byte is refused too. */
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, enc, len);
    longer[len] = 0;
    ck_assert_ptr_null(tb_stats_decode(longer, len + 1, &err));
    free(longer);

    /* Corrupted bytes: refused, or decoded into statistics that report without crashing. */
    uint8_t *copy = malloc(len);
    int decoded = 0;
    for (uint64_t n = 0; n < 1500; n++) {
        memcpy(copy, enc, len);
        for (int k = 0; k < 1 + (int)(n % 3); k++) {
            size_t at = (size_t)(s_unit(n * 4 + (uint64_t)k, 40) * (double)len);
            copy[at] ^= (uint8_t)(1 + 254 * s_unit(n * 4 + (uint64_t)k, 41));
        }
        d = tb_stats_decode(copy, len, &err);
        if (d) {
            decoded++;
            char *text = tb_stats_report_text(d, NULL, NULL);
            cJSON *json = tb_stats_report_json(d, NULL, NULL);
            ck_assert_ptr_nonnull(text);
            free(text);
            cJSON_Delete(json);
        }
        tb_stats_destroy(&d);
    }
    /* Random bytes, some behind a valid header. */
    for (uint64_t n = 0; n < 1500; n++) {
        size_t m = (size_t)(s_unit(n, 42) * 600);
        for (size_t k = 0; k < m; k++)
            copy[k] = (uint8_t)(256 * s_unit(n * 1000 + k, 43));
        if (n % 2)
            memcpy(copy, enc, m < 200 ? m : 200);
        d = tb_stats_decode(copy, m, &err);
        tb_stats_destroy(&d);
    }
    ck_assert_ptr_null(tb_stats_decode(NULL, 0, &err));
    free(copy);
    free(enc);
    tb_stats_destroy(&s);
}
END_TEST

/* --- the report --------------------------------------------------------------------------------
 */

static int s_count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

START_TEST(test_report_block)
{
    tb_stats_t *s = s_new(s_planet.cell_m);
    ck_assert_int_eq(tb_stats_accumulate(s, &s_planet, s_syn.height_m, s_syn.area_m2,
                                         s_syn.uplift_m_yr, NULL, NULL),
                     0);
    tb_stats_extent_t ext;
    ck_assert_int_eq(tb_stats_extent_measure(s_syn.height_m, s_syn.cells, -1024, 1024, &ext, NULL),
                     0);
    char *text = tb_stats_report_text(s, &ext, NULL);
    const char *expect[] = {"slopes: ",
                            "% under 15 deg, ",
                            "% under 30, ",
                            "% over 50, median ",
                            "\nslope-area: exponent ",
                            " (expect -0.500), R2 ",
                            "\nhypsometric integral ",
                            "; drainage density ",
                            " /km\n",
                            "by uplift class:\n",
                            "\nplain 0.00..0.10 mm/yr ",
                            "\nrolling 0.10..0.50 mm/yr ",
                            "\nmountain 0.50.. up mm/yr ",
                            "% of land slope ",
                            " deg median, ",
                            " P90 relief ",
                            " m/480 m at talus ",
                            "\nall land 100% of land",
                            "\nelevation: 0 .. ",
                            " m, clip 0.000% of cells outside elevation_m [-1024, 1024]\n"};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        ck_assert_msg(strstr(text, expect[i]) != NULL, "no \"%s\" in:\n%s", expect[i], text);
    ck_assert_ptr_null(strstr(text, "unclassified"));
    ck_assert_ptr_null(strstr(text, "PARTIAL"));
    ck_assert_int_eq(s_count_lines(text), 10); /* with the channel-cell fit; no painted class */
    ck_assert_ptr_null(strstr(text, "by painted class"));

    /* A partial bake says so on every line. */
    char *partial = tb_stats_report_text(s, &ext, "regions 2,3 of 14");
    int lines = 0;
    for (char *line = partial; *line; lines++) {
        ck_assert_msg(strncmp(line, "PARTIAL ", 8) == 0, "line without PARTIAL: %s", line);
        line = strchr(line, '\n') + 1;
    }
    ck_assert_int_eq(lines, 11);
    ck_assert_ptr_nonnull(strstr(partial, "regions 2,3 of 14"));

    /* The JSON carries the same numbers. */
    cJSON *json = tb_stats_report_json(s, &ext, NULL);
    tb_stats_summary_t sum;
    tb_stats_summarise(s, &sum);
    cJSON *slopes = cJSON_GetObjectItem(json, "slopes");
    ck_assert_double_eq(cJSON_GetObjectItem(slopes, "median_deg")->valuedouble,
                        sum.bucket[TB_STATS_ALL].slope_median_deg);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(json, "classes")), 3);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(json, "partial")));
    cJSON *elev = cJSON_GetObjectItem(json, "elevation");
    ck_assert_double_eq(cJSON_GetObjectItem(elev, "clip_fraction")->valuedouble, 0);
    cJSON *fit = cJSON_GetObjectItem(json, "slope_area");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(fit, "points")),
                     sum.bucket[TB_STATS_ALL].fit.bins);
    char *printed = cJSON_PrintUnformatted(json);
    ck_assert_ptr_null(strstr(printed, "nan"));
    free(printed);
    cJSON_Delete(json);
    json = tb_stats_report_json(s, NULL, "regions 2,3 of 14");
    ck_assert_str_eq(cJSON_GetObjectItem(json, "partial")->valuestring, "regions 2,3 of 14");
    cJSON_Delete(json);
    free(text);
    free(partial);
    tb_stats_destroy(&s);
}
END_TEST

START_TEST(test_report_without_area_or_uplift)
{
    uint8_t *mask;
    float *z = s_plane(60, 60, 8, 12, 10, 5, 2, &mask);
    tb_frame_t f = s_frame(60, 60, 8, 0, 0, 60, 60);
    tb_stats_t *s = s_new(8);
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, NULL, NULL, mask, NULL), 0);
    char *text = tb_stats_report_text(s, NULL, NULL);
    ck_assert_ptr_nonnull(strstr(text, "slopes: 100% under 15 deg"));
    ck_assert_ptr_nonnull(strstr(text, "median 12.0 deg"));
    ck_assert_ptr_nonnull(strstr(text, "slope-area: no drainage area given"));
    ck_assert_ptr_nonnull(strstr(text, "drainage density n/a"));
    ck_assert_ptr_nonnull(strstr(text, "\nunclassified (no uplift field) 100% of land"));
    ck_assert_ptr_null(strstr(text, "plain"));
    ck_assert_ptr_null(strstr(text, "elevation:"));
    free(text);
    tb_stats_destroy(&s);
    /* No land at all. */
    s = s_new(8);
    memset(z, 0, 60 * 60 * sizeof(float));
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, NULL, NULL, NULL, NULL), 0);
    text = tb_stats_report_text(s, NULL, NULL);
    ck_assert_str_eq(text, "slopes: no land counted\n");
    free(text);
    cJSON *json = tb_stats_report_json(s, NULL, NULL);
    ck_assert_ptr_nonnull(json);
    cJSON_Delete(json);
    free(z);
    free(mask);
    tb_stats_destroy(&s);
}
END_TEST

START_TEST(test_hypsometric_and_density)
{
    /* A ramp 1 .. 100 m over the columns: uniform elevations, so the integral is a half. */
    const int64_t w = 100, h = 30;
    float *z = malloc((size_t)(w * h) * sizeof(float));
    float *a = malloc((size_t)(w * h) * sizeof(float));
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            z[tb_idx(w, i, j)] = (float)(1 + i);
            /* one channel along row 15, flowing west (down the ramp): a cardinal step a cell */
            a[tb_idx(w, i, j)] = j == 15 ? 2e6f : 64.0f;
        }
    tb_frame_t f = s_frame(500, 100, 8, 0, 10, w, h);
    tb_stats_t *s = s_new(8);
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, NULL, NULL, NULL), 0);
    tb_stats_summary_t sum;
    tb_stats_summarise(s, &sum);
    const tb_stats_bucket_summary_t *all = &sum.bucket[TB_STATS_ALL];
    ck_assert_double_eq_tol(all->hypsometric_integral, 0.5, 1e-3);
    ck_assert_double_eq(all->elev_min_m, 1);
    ck_assert_double_eq(all->elev_max_m, 100);
    ck_assert_double_eq_tol(all->elev_mean_m, 50.5, 1e-3);
    tb_stats_counts_t c;
    tb_stats_counts(s, TB_STATS_ALL, &c);
    ck_assert_int_eq(c.channel_cells, w);
    ck_assert_int_eq(c.channel_cardinal, w); /* the west-most cell drains to the sea beyond */
    /* One channel cell-length per column over h cells of land per column: 1 / (h * 8 m). */
    ck_assert_double_eq_tol(all->drainage_density_per_km, 1000.0 / (h * 8.0), 1e-9);
    free(z);
    free(a);
    tb_stats_destroy(&s);
}
END_TEST

START_TEST(test_edge_cells)
{
    /* A box in the middle of a planet, all land: the cells within r of each side are edge cells
     * (no side of it is the planet's edge); a box spanning the planet has none. */
    const int64_t w = 100, h = 80, r = 31;
    uint8_t *mask;
    float *z = s_plane(w, h, 8, 5, 0, 10, 0, &mask);
    tb_frame_t inner = s_frame(1000, 1000, 8, 300, 300, w, h);
    tb_stats_t *s = s_new(8);
    ck_assert_int_eq(tb_stats_accumulate(s, &inner, z, NULL, NULL, NULL, NULL), 0);
    ck_assert_int_eq(tb_stats_edge_cells(s), w * h - (w - 2 * r) * (h - 2 * r));
    tb_stats_destroy(&s);
    /* At the planet's south edge, the south side is the planet's own: not an edge. */
    tb_frame_t south = s_frame(1000, 1000, 8, 300, 0, w, h);
    s = s_new(8);
    ck_assert_int_eq(tb_stats_accumulate(s, &south, z, NULL, NULL, NULL, NULL), 0);
    ck_assert_int_eq(tb_stats_edge_cells(s), w * h - (w - 2 * r) * (h - r));
    tb_stats_destroy(&s);
    /* Wrapping and spanning the whole planet: no edge at all. */
    tb_frame_t whole = s_frame(w, h, 8, 0, 0, w, h);
    s = s_new(8);
    ck_assert_int_eq(tb_stats_accumulate(s, &whole, z, NULL, NULL, NULL, NULL), 0);
    ck_assert_int_eq(tb_stats_edge_cells(s), 0);
    tb_stats_destroy(&s);
    free(z);
    free(mask);
}
END_TEST

START_TEST(test_extent)
{
    const float h[] = {-5, 0, 12.5f, 2000, -1500, NAN, 3};
    tb_stats_extent_t e;
    tb_err_t err;
    ck_assert_int_eq(tb_stats_extent_measure(h, 7, -1024, 1024, &e, &err), 0);
    ck_assert_double_eq(e.min_m, -1500);
    ck_assert_double_eq(e.max_m, 2000);
    ck_assert_int_eq(e.clipped, 3); /* 2000, -1500 and the NaN */
    ck_assert_int_eq(e.cells, 7);
    ck_assert_int_eq(tb_stats_extent_measure(h, 7, 10, 10, &e, &err), -1);
    ck_assert_int_eq(tb_stats_extent_measure(h, 0, -1, 1, &e, &err), -1);
}
END_TEST

/* --- refusals ----------------------------------------------------------------------------------
 */

START_TEST(test_refuses_bad_input)
{
    tb_err_t err;
    tb_stats_params_t p;
    tb_stats_params_default(&p, 8);
    p.slope_bin_deg = 0.7;
    ck_assert_ptr_null(tb_stats_new(&p, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "slope_bin_deg"));
    tb_stats_params_default(&p, 8);
    p.relief_bin_m = 0.3;
    ck_assert_ptr_null(tb_stats_new(&p, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "power-of-two"));
    tb_stats_params_default(&p, 8);
    p.uplift_edges_mm_yr[1] = 0.05;
    ck_assert_ptr_null(tb_stats_new(&p, &err));

    uint8_t *mask;
    float *z = s_plane(30, 30, 8, 10, 0, 20, 2, &mask);
    float *a = malloc(900 * sizeof(float));
    for (int i = 0; i < 900; i++)
        a[i] = 100;
    tb_frame_t f = s_frame(30, 30, 8, 0, 0, 30, 30);
    tb_stats_t *s = s_new(8), *fresh = s_new(8);
    z[tb_idx(30, 7, 9)] = NAN;
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, NULL, mask, &err), -1);
    ck_assert_msg(strstr(err.msg, "height_m") && strstr(err.msg, "(7, 9)"), "%s", err.msg);
    ck_assert(tb_stats_equal(s, fresh)); /* unchanged */
    z[tb_idx(30, 7, 9)] = 20;
    a[tb_idx(30, 0, 0)] = -1; /* not counted: fine */
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, NULL, mask, &err), 0);
    tb_stats_destroy(&s);
    s = s_new(8);
    a[tb_idx(30, 10, 12)] = -1; /* counted land: refused */
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, NULL, mask, &err), -1);
    ck_assert_msg(strstr(err.msg, "area_m2") && strstr(err.msg, "(10, 12)"), "%s", err.msg);
    ck_assert(tb_stats_equal(s, fresh));
    a[tb_idx(30, 10, 12)] = 100;
    float *u = calloc(900, sizeof(float));
    u[tb_idx(30, 5, 5)] = INFINITY;
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, u, mask, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "uplift_m_yr"));
    z[0] = 2e6f;
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, NULL, NULL, mask, &err), -1);
    z[0] = 20;
    tb_frame_t other = s_frame(30, 30, 16, 0, 0, 30, 30);
    ck_assert_int_eq(tb_stats_accumulate(s, &other, z, NULL, NULL, mask, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "16 m cells"));
    tb_frame_t zero;
    memset(&zero, 0, sizeof zero);
    ck_assert_int_eq(tb_stats_accumulate(s, &zero, z, NULL, NULL, mask, &err), -1);
    ck_assert(tb_stats_equal(s, fresh));

    /* Statistics of different parameters do not merge. */
    tb_stats_params_default(&p, 8);
    p.talus_deg = 30;
    tb_stats_t *hot = tb_stats_new(&p, NULL);
    ck_assert_int_eq(tb_stats_merge(s, hot, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "different parameters"));
    tb_stats_destroy(&hot);
    free(u);
    free(a);
    free(z);
    free(mask);
    tb_stats_destroy(&s);
    tb_stats_destroy(&fresh);
}
END_TEST

Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *kernels = tcase_create("kernels");
    tcase_set_timeout(kernels, 120);
    tcase_add_test(kernels, test_relief_matches_brute_force);
    tcase_add_test(kernels, test_plane_slope_and_relief_are_exact);
    tcase_add_test(kernels, test_cone_slope_is_its_flank);
    tcase_add_test(kernels, test_near_repose_share);
    tcase_add_test(kernels, test_slope_bins_match_degrees);
    tcase_add_test(kernels, test_area_bins_match_the_histogram);
    tcase_add_test(kernels, test_slope_area_fit_recovers_exponent);
    tcase_add_test(kernels, test_channel_fit_finds_the_turn);
    tcase_add_test(kernels, test_channel_break_on_a_flat_top);
    tcase_add_test(kernels, test_hypsometric_and_density);
    tcase_add_test(kernels, test_extent);
    tcase_add_test(kernels, test_edge_cells);
    tcase_add_test(kernels, test_refuses_bad_input);
    tcase_add_test(kernels, test_report_without_area_or_uplift);
    suite_add_tcase(s, kernels);
    TCase *planet = tcase_create("planet");
    tcase_set_timeout(planet, 300);
    tcase_add_checked_fixture(planet, s_planet_setup, s_planet_teardown);
    tcase_add_test(planet, test_pooled_equals_whole);
    tcase_add_test(planet, test_pooled_negative_controls);
    tcase_add_test(planet, test_encode_roundtrip_and_bad_bytes);
    tcase_add_test(planet, test_report_block);
    suite_add_tcase(s, planet);
    return s;
}
