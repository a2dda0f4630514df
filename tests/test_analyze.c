/* `terrain analyze` (coordinator/gate/analyze.h) and its routing (jobs/stats/route.h) on maps whose
 * answer is known: a plane's slope, relief and (D8) drainage area exactly, through raw float32 and
 * through a 16-bit PNG; a cone's slope distribution against a brute-force Horn reference; the
 * uncounted border; the refusals (a PNG without its elevation range, a raw file of the wrong size,
 * a cell size that disagrees with meta.json). The agreement with a bake's own heightmap is
 * tests/test_statsdemo.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/png_io.h"
#include "coordinator/gate/analyze.h"
#include "jobs/stats/route.h"
#include "jobs/stats/stats.h"
#include "support/tb_test.h"

#define S_DEG (180.0 / M_PI)

/* Writes w x h floats as raw little-endian float32 (this host is little-endian in CI; the bytes
 * are assembled explicitly so the test means the same on any host). */
static const char *s_write_raw(const char *dir, const char *name, const float *z, int64_t w,
                               int64_t h)
{
    size_t n = (size_t)w * (size_t)h;
    unsigned char *b = malloc(4 * n);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &z[i], 4);
        for (int k = 0; k < 4; k++)
            b[4 * i + (size_t)k] = (unsigned char)(u >> (8 * k));
    }
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(tb_fs_write_atomic(path, b, 4 * n, NULL), 0);
    free(b);
    return path;
}

static tb_analyze_result_t s_analyze(const tb_analyze_opts_t *o)
{
    tb_analyze_result_t r;
    tb_err_t err;
    ck_assert_msg(tb_analyze_run(o, &r, &err) == 0, "%s", err.msg);
    return r;
}

/* z = 100 + 2 i + 1.5 j on 8 m cells: Horn's gradient is (0.25, 0.1875), |g| = 0.3125 exactly. */
START_TEST(test_plane_exact_raw)
{
    const int64_t w = 120, h = 100, r = 31; /* r: the halo at 8 m */
    float *z = malloc((size_t)(w * h) * sizeof(float));
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++)
            z[j * w + i] = (float)(100 + 2 * i + 1.5 * j);
    const char *dir = tb_test_tmpdir("analyze_plane");
    tb_analyze_opts_t o = {.path = s_write_raw(dir, "plane.f32", z, w, h),
                           .cell_m = 8,
                           .raw_w = w,
                           .raw_h = h,
                           .out_dir = dir};
    tb_analyze_result_t res = s_analyze(&o);
    ck_assert(!res.wraps);
    ck_assert_int_eq(res.border_cells, r);
    tb_stats_summary_t s;
    tb_stats_summarise(res.stats, &s);
    const tb_stats_bucket_summary_t *a = &s.bucket[TB_STATS_ALL];
    /* every cell counted is off the border, and every one of them is land */
    ck_assert_int_eq(a->land_cells, (w - 2 * r) * (h - 2 * r));
    ck_assert_int_eq(s.edge_cells, 0);
    ck_assert_int_eq(s.bucket[TB_STATS_UNCLASSIFIED].land_cells, a->land_cells);
    /* one slope everywhere: the distribution is a single value, exactly */
    double slope = atan(0.3125) * S_DEG;
    ck_assert_double_eq_tol(a->slope_median_deg, slope, 1e-9);
    ck_assert_double_eq_tol(a->slope_p90_deg, slope, 1e-9);
    ck_assert_double_eq(a->slope_under15, 0);
    ck_assert_double_eq(a->slope_under30, 1);
    ck_assert_double_eq(a->slope_over50, 0);
    ck_assert_double_eq(a->near_repose_share, 0);
    /* relief over the 63-cell window: 62 cells of 2 m in x plus 62 of 1.5 m in y */
    ck_assert_double_eq_tol(a->relief_median_m, 62 * 2 + 62 * 1.5, 1e-9);
    /* the elevation of the counted cells, exactly: a linear ramp has a hypsometric integral 1/2 */
    ck_assert_double_eq(a->elev_min_m, 100 + 2 * r + 1.5 * r);
    ck_assert_double_eq_tol(a->hypsometric_integral, 0.5, 1e-6);
    /* the printed block says the same, and the files were written */
    ck_assert_ptr_nonnull(strstr(res.text, "0% under 15 deg, 100% under 30, 0.0% over 50, median "
                                           "17.4 deg"));
    ck_assert_ptr_nonnull(
        strstr(res.text, "a border of 31 cells (248 m) is routed but not counted"));
    char path[4200];
    snprintf(path, sizeof path, "%s/analyze.json", dir);
    ck_assert(tb_fs_exists(path));
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    ck_assert(tb_fs_exists(path));
    tb_analyze_result_free(&res);
    free(z);
}
END_TEST

/* The same kind of plane as a 16-bit PNG over 0..65535 m (one metre a sample, so the integers are
 * exact): z = 200 + 4 i + 3 j, |g| = 0.625, and a sea level that drowns the low corner. */
START_TEST(test_plane_exact_png)
{
    const int64_t w = 110, h = 90;
    tb_image_t img = {0};
    ck_assert_int_eq(tb_image_alloc(&img, (uint32_t)w, (uint32_t)h, TB_PNG_GRAY16, NULL), 0);
    uint16_t *px = img.pixels;
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++)
            px[j * w + i] = (uint16_t)(200 + 4 * i + 3 * j);
    const char *dir = tb_test_tmpdir("analyze_png");
    char path[4200];
    snprintf(path, sizeof path, "%s/plane.png", dir);
    ck_assert_int_eq(tb_png_write(path, &img, 6, NULL), 0);
    tb_image_free(&img);
    /* without a range it is refused, naming the option */
    tb_analyze_opts_t o = {.path = path, .cell_m = 8};
    tb_analyze_result_t res;
    tb_err_t err;
    ck_assert_int_eq(tb_analyze_run(&o, &res, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--elevation-m"));
    tb_analyze_result_free(&res);
    o.has_elevation = true;
    o.elevation_lo_m = 0;
    o.elevation_hi_m = 65535;
    res = s_analyze(&o);
    tb_stats_summary_t s;
    tb_stats_summarise(res.stats, &s);
    const tb_stats_bucket_summary_t *a = &s.bucket[TB_STATS_ALL];
    ck_assert_int_eq(a->land_cells, (w - 62) * (h - 62));
    double slope = atan(0.625) * S_DEG;
    ck_assert_double_eq_tol(a->slope_median_deg, slope, 1e-9);
    ck_assert_double_eq(a->slope_under30, 0);
    ck_assert_double_eq(a->near_repose_share, 0); /* 32.0 degrees: not within 2 of the talus */
    tb_analyze_result_free(&res);
    /* a sea level of 300 m drowns the low corner, z <= 300, which no counted cell touches */
    o.has_sea_level = true;
    o.sea_level_m = 300;
    res = s_analyze(&o);
    int64_t drowned = 0;
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++)
            drowned += 200 + 4 * i + 3 * j <= 300;
    ck_assert_int_eq(res.sea_cells, drowned);
    tb_stats_summarise(res.stats, &s);
    ck_assert_int_eq(s.bucket[TB_STATS_ALL].land_cells, (w - 62) * (h - 62));
    ck_assert_double_eq_tol(s.bucket[TB_STATS_ALL].slope_median_deg, slope, 1e-9);
    ck_assert_double_eq(s.bucket[TB_STATS_ALL].elev_min_m, 200 + 4 * 31 + 3 * 31 - 300);
    tb_analyze_result_free(&res);
}
END_TEST

/* D8 on a plane tilted along -x. The ring is held at 0 m (the geology's convention: it is the
 * outlet), so the cells next to it drain into it; every other cell drains west, and its area is
 * its own cell plus every cell east of it in its row short of the last solved column: (w - 2 - i)
 * cells. MFD conserves the same row totals, and far from the north and south rings every row is
 * alike; the last solved column sends a few per cent of a cell west (its drop east to the ring is
 * sixty times steeper). */
START_TEST(test_route_plane_area)
{
    const int64_t w = 40, h = 140;
    tb_frame_t f;
    ck_assert_int_eq(tb_frame_make(&f, w + 1, h, 8, 0, 0, w, h, NULL), 0);
    float *z = malloc((size_t)(w * h) * sizeof(float)),
          *a = malloc((size_t)(w * h) * sizeof(float));
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++)
            z[j * w + i] = (float)(10 + 0.5 * i);
    tb_route_info_t info;
    tb_err_t err;
    ck_assert_msg(tb_stats_route_area(&f, z, 0, a, &info, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(info.land_cells, (size_t)((w - 2) * (h - 2)));
    ck_assert_int_eq(info.pits, 0);
    for (int64_t j = 2; j < h - 2; j++)
        for (int64_t i = 1; i < w - 2; i++)
            ck_assert_msg(a[j * w + i] == (float)(64 * (w - 2 - i)), "D8 area at (%lld, %lld) %g",
                          (long long)i, (long long)j, (double)a[j * w + i]);
    ck_assert_double_eq(a[0], 0); /* the ring: not land */
    ck_assert_msg(tb_stats_route_area(&f, z, 1, a, &info, &err) == 0, "%s", err.msg);
    for (int64_t j = w; j < h - w; j++)
        for (int64_t i = 1; i < w - 2; i++)
            ck_assert_msg(fabsf(a[j * w + i] - (float)(64 * (w - 2 - i))) <= 0.05f * 64,
                          "MFD area at (%lld, %lld) %g", (long long)i, (long long)j,
                          (double)a[j * w + i]);
    /* a pit: one cell dug 5 m into the plane is filled and passes its area on */
    z[70 * w + 20] -= 5;
    ck_assert_msg(tb_stats_route_area(&f, z, 0, a, &info, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(info.pits, 1);
    ck_assert_int_ge(info.flooded_cells, 1);
    ck_assert(a[70 * w + 19] >= (float)(64 * (w - 2 - 19)));
    free(z);
    free(a);
}
END_TEST

/* A tilted plane cut by a V valley, z = 5 + 0.6 (H - 1 - j) + 0.3 |i - 30|, routed whole and
 * cropped to its upper rows. The plane falls faster along the valley than across it, so no flow
 * turns back upstream (with the slopes the other way round, MFD sends some flow diagonally up the
 * valley towards its axis, and the cut-off end rightly changes the areas above it). Nothing then
 * enters the crop through its edges, and with the open border the crop's interior drains exactly
 * as the uncropped grid's, bit for bit, for MFD and D8; with the sea border the crop's edge is a
 * cliff to 0 m that steals flow along its sides and its cut end (the negative control). */
START_TEST(test_route_open_border_crop)
{
    const int64_t w = 61, H = 200, hc = 120;
    float *z = malloc((size_t)(w * H) * sizeof(float));
    float *big = malloc((size_t)(w * H) * sizeof(float)),
          *crop = malloc((size_t)(w * hc) * sizeof(float));
    for (int64_t j = 0; j < H; j++)
        for (int64_t i = 0; i < w; i++)
            z[j * w + i] = (float)(5 + 0.6 * (double)(H - 1 - j) + 0.3 * fabs((double)i - 30));
    tb_frame_t fb, fc;
    ck_assert_int_eq(tb_frame_make(&fb, w + 1, H, 8, 0, 0, w, H, NULL), 0);
    ck_assert_int_eq(tb_frame_make(&fc, w + 1, hc, 8, 0, 0, w, hc, NULL), 0);
    tb_err_t err;
    const double exps[2] = {1, 0};
    for (int e = 0; e < 2; e++) {
        ck_assert_msg(
            tb_stats_route_area_border(&fb, z, exps[e], TB_ROUTE_BORDER_OPEN, big, NULL, &err) == 0,
            "%s", err.msg);
        ck_assert_msg(tb_stats_route_area_border(&fc, z, exps[e], TB_ROUTE_BORDER_OPEN, crop, NULL,
                                                 &err) == 0,
                      "%s", err.msg);
        int64_t differ = 0;
        for (int64_t j = 1; j < hc - 1; j++)
            for (int64_t i = 1; i < w - 1; i++)
                differ += crop[j * w + i] != big[j * w + i];
        ck_assert_msg(differ == 0, "exponent %g: %lld interior cells drain differently in the crop",
                      exps[e], (long long)differ);
        /* the valley is there: the axis gathers the area of many cells */
        ck_assert_float_gt(crop[(hc - 2) * w + 30], 64.0f * 200);
        /* negative control: the sea border's cliff changes the crop's areas */
        ck_assert_msg(
            tb_stats_route_area_border(&fc, z, exps[e], TB_ROUTE_BORDER_SEA, crop, NULL, &err) == 0,
            "%s", err.msg);
        differ = 0;
        for (int64_t j = 1; j < hc - 1; j++)
            for (int64_t i = 1; i < w - 1; i++)
                differ += fabsf(crop[j * w + i] - big[j * w + i]) > 0.01f * big[j * w + i];
        ck_assert_msg(differ > 100, "exponent %g: the sea border changed only %lld cells", exps[e],
                      (long long)differ);
    }
    /* analyze says which border it used */
    const char *dir = tb_test_tmpdir("analyze_border");
    tb_analyze_opts_t o = {
        .path = s_write_raw(dir, "valley.f32", z, w, hc), .cell_m = 8, .raw_w = w, .raw_h = hc};
    tb_analyze_result_t res = s_analyze(&o);
    ck_assert_ptr_nonnull(strstr(res.text, ", open border;"));
    tb_analyze_result_free(&res);
    o.border_sea = true;
    res = s_analyze(&o);
    ck_assert_ptr_nonnull(strstr(res.text, ", sea (0 m) border;"));
    tb_analyze_result_free(&res);
    free(z);
    free(big);
    free(crop);
}
END_TEST

/* Horn's slope in degrees at (i, j) of a grid, in double: the reference. */
static double s_horn_deg(const float *z, int64_t w, int64_t i, int64_t j, double dx)
{
#define Z(a, b) ((double)z[(j + (b)) * w + (i) + (a)])
    double gx =
        ((Z(1, 1) + 2 * Z(1, 0) + Z(1, -1)) - (Z(-1, 1) + 2 * Z(-1, 0) + Z(-1, -1))) / (8 * dx);
    double gy =
        ((Z(-1, 1) + 2 * Z(0, 1) + Z(1, 1)) - (Z(-1, -1) + 2 * Z(0, -1) + Z(1, -1))) / (8 * dx);
#undef Z
    return atan(sqrt(gx * gx + gy * gy)) * S_DEG;
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A cone of slope 0.365 (20.05 degrees) on 8 m cells, every cell land: the counted cells' slope
 * shares equal a brute-force reference exactly, the median and P90 lie within the 0.1 degree bin
 * of the reference's, and both are the cone's own slope away from the apex. */
START_TEST(test_cone)
{
    const int64_t w = 301, h = 301, r = 31;
    const double s = 0.365, dx = 8;
    float *z = malloc((size_t)(w * h) * sizeof(float));
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            double d = hypot((double)(i - 150), (double)(j - 150)) * dx;
            z[j * w + i] = (float)(2000 - s * d);
        }
    const char *dir = tb_test_tmpdir("analyze_cone");
    tb_analyze_opts_t o = {
        .path = s_write_raw(dir, "cone.f32", z, w, h), .cell_m = dx, .raw_w = w, .raw_h = h};
    tb_analyze_result_t res = s_analyze(&o);
    size_t n = 0;
    double *ref = malloc((size_t)(w * h) * sizeof(double));
    int64_t under15 = 0, under30 = 0, over50 = 0;
    for (int64_t j = r; j < h - r; j++)
        for (int64_t i = r; i < w - r; i++) {
            double v = s_horn_deg(z, w, i, j, dx);
            ref[n++] = v;
            under15 += v < 15;
            under30 += v < 30;
            over50 += v >= 50;
        }
    qsort(ref, n, sizeof *ref, s_cmp);
    tb_stats_summary_t sum;
    tb_stats_summarise(res.stats, &sum);
    const tb_stats_bucket_summary_t *a = &sum.bucket[TB_STATS_ALL];
    ck_assert_int_eq(a->land_cells, (int64_t)n);
    ck_assert_double_eq(a->slope_under15, (double)under15 / (double)n);
    ck_assert_double_eq(a->slope_under30, (double)under30 / (double)n);
    ck_assert_double_eq(a->slope_over50, (double)over50 / (double)n);
    ck_assert_int_gt(under15, 0); /* the apex: Horn reads it flat */
    double med = ref[n / 2], p90 = ref[(size_t)(0.9 * (double)n)], cone = atan(s) * S_DEG;
    ck_assert_msg(fabs(a->slope_median_deg - med) <= 0.1, "median %g, reference %g",
                  a->slope_median_deg, med);
    ck_assert_msg(fabs(a->slope_p90_deg - p90) <= 0.1, "P90 %g, reference %g", a->slope_p90_deg,
                  p90);
    ck_assert_msg(fabs(med - cone) < 0.01, "the reference median %g is not the cone's %g", med,
                  cone);
    ck_assert_msg(fabs(a->slope_median_deg - cone) < 0.05, "median %g, cone %g",
                  a->slope_median_deg, cone);
    /* the apex drains nowhere and the flanks radially: D8 areas reach the ring, none are lost */
    ck_assert_int_eq(res.route.pits, 0);
    tb_analyze_result_free(&res);
    free(ref);
    free(z);
}
END_TEST

START_TEST(test_refusals)
{
    const char *dir = tb_test_tmpdir("analyze_refuse");
    float z[16] = {0};
    tb_analyze_opts_t o = {
        .path = s_write_raw(dir, "small.f32", z, 4, 4), .cell_m = 8, .raw_w = 5, .raw_h = 4};
    tb_analyze_result_t r;
    tb_err_t err;
    ck_assert_int_eq(tb_analyze_run(&o, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "64 bytes, but --raw-float32 5x4 needs exactly 80"));
    tb_analyze_result_free(&r);
    /* no cell size and no meta.json */
    o.raw_w = 4;
    o.cell_m = 0;
    ck_assert_int_eq(tb_analyze_run(&o, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--cell-m"));
    tb_analyze_result_free(&r);
    /* a meta.json whose cell size disagrees */
    tb_test_write_file(dir, "meta.json",
                       "{\"manifest\": {\"cell_m\": 8, \"elevation_m\": [-10, 10], "
                       "\"derived\": {\"planet_w\": 4}, \"solve\": {\"talus_deg\": 35, \"m\": 0.5, "
                       "\"n\": 1, \"mfd_exponent\": 1}}}");
    o.cell_m = 10;
    ck_assert_int_eq(tb_analyze_run(&o, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--cell-m 10 disagrees with"));
    tb_analyze_result_free(&r);
    /* a meta.json that is not a bake's */
    tb_test_write_file(dir, "meta.json", "{\"something\": 1}");
    o.cell_m = 8;
    ck_assert_int_eq(tb_analyze_run(&o, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a bake's meta.json"));
    tb_analyze_result_free(&r);
    o.ignore_meta = true; /* --no-meta */
    ck_assert_int_eq(tb_analyze_run(&o, &r, &err), 0);
    ck_assert_ptr_nonnull(strstr(r.text, "slopes: no land counted"));
    tb_analyze_result_free(&r);
}
END_TEST

Suite *analyze_suite(void)
{
    Suite *s = suite_create("analyze");
    TCase *tc = tcase_create("analyze");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_plane_exact_raw);
    tcase_add_test(tc, test_plane_exact_png);
    tcase_add_test(tc, test_route_plane_area);
    tcase_add_test(tc, test_route_open_border_crop);
    tcase_add_test(tc, test_cone);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}
