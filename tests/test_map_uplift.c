/* map_uplift.png: size, rows as the painting's, the ocean colour, the ramp's ceiling, cyan traces
 * where the traces are, and refusals naming the path. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/manifest.h"
#include "common/png_io.h"
#include "coordinator/maps/map_uplift.h"
#include "jobs/uplift/uplift.h"
#include "support/tb_test.h"

static const char *S_LEGEND =
    "{\"classes\": ["
    "{\"name\": \"lowland\", \"colour\": \"#6f9a4a\", \"kind\": \"land\", \"uplift_mm_yr\": 0.06},"
    "{\"name\": \"range\", \"colour\": \"#a0522d\", \"kind\": \"land\", \"uplift_mm_yr\": 0.4},"
    "{\"name\": \"deep\", \"colour\": \"#1f4e79\", \"kind\": \"ocean\", \"depth_m\": 900}]}";

/* A rows hook that counts the rows it is given, checking they come in order. */
static int64_t s_rows_seen;
static void s_rows_done(void *user, int64_t y0, int64_t y1)
{
    (void)user;
    ck_assert_int_eq(y0, s_rows_seen % 200);
    s_rows_seen += y1 - y0;
}

START_TEST(test_ramp_ceiling_is_round)
{
    float u[3] = {0, 0.4e-3f, 0.1e-3f};
    ck_assert_double_eq_tol(tb_map_uplift_top_mm_yr(u, 3), 0.5, 1e-12);
    u[1] = 1e-3f;
    ck_assert_double_eq_tol(tb_map_uplift_top_mm_yr(u, 3), 1, 1e-9);
    u[1] = 1.5e-3f;
    ck_assert_double_eq_tol(tb_map_uplift_top_mm_yr(u, 3), 2, 1e-9);
    float zero[2] = {0, 0};
    ck_assert_double_eq(tb_map_uplift_top_mm_yr(zero, 2), 0.01);
}
END_TEST

START_TEST(test_map_rows_are_box_rows_with_cyan_traces)
{
    tb_manifest_t m;
    tb_manifest_defaults(&m);
    m.circumference_km = 16;
    m.tiles.size_km = 8;
    m.faults.per_1000_km2 = 400;
    tb_err_t err;
    ck_assert(tb_legend_parse(S_LEGEND, "legend", &m.legend, &err) == 0);
    ck_assert_msg(tb_manifest_finish(&m, &err) == 0, "%s", err.msg);
    tb_frame_t f;
    ck_assert(tb_frame_make(&f, m.planet_w, 800, m.cell_m, m.planet_w - 150, 100, 300, 200, &err) ==
              0);
    size_t n = 300 * 200;
    uint8_t *c = malloc(n);
    float *u = malloc(n * sizeof *u), *k = malloc(n * sizeof *k);
    /* Ocean round the edge, the range in rows j >= 100, lowland in rows 50..99. */
    for (int64_t j = 0; j < 200; j++)
        for (int64_t i = 0; i < 300; i++)
            c[j * 300 + i] = (i < 60 || i >= 240 || j < 50 || j >= 150) ? 2 : (j >= 100 ? 1 : 0);
    tb_uplift_probes_t p;
    ck_assert(tb_uplift_probes_compute(&m, &p, &err) == 0);
    ck_assert_msg(tb_uplift_build(&m, &p, &f, c, u, k, &err) == 0, "%s", err.msg);
    tb_polyline_t *tr;
    size_t nt;
    ck_assert(tb_uplift_fault_traces(&m, &f, &tr, &nt, &err) == 0);
    ck_assert_msg(nt > 0, "no trace meets the box; the test would not see cyan");
    char path[4200];
    snprintf(path, sizeof path, "%s/map_uplift.png", tb_test_tmpdir("map_uplift"));
    ck_assert_msg(tb_map_uplift_write(path, &f, u, tr, nt, &err) == 0, "%s", err.msg);
    /* Written in bands of 1, 3 and 7 rows (the traces cross band edges): the same bytes as in one
     * piece, and every row of the field handed back to the hook, in order, after it was read. */
    char *whole = NULL;
    size_t whole_n = 0;
    ck_assert(tb_fs_read_all(path, 1u << 24, &whole, &whole_n, &err) == 0);
    const int64_t bands[3] = {1, 3, 7};
    for (int b = 0; b < 3; b++) {
        char bpath[4300];
        snprintf(bpath, sizeof bpath, "%s.band%lld.png", path, (long long)bands[b]);
        s_rows_seen = 0;
        tb_rows_hook_t hook = {.fn = s_rows_done, .user = NULL};
        ck_assert_msg(tb_map_uplift_write_rows(bpath, &f, u, tr, nt, bands[b], &hook, &err) == 0,
                      "%s", err.msg);
        ck_assert_int_eq(s_rows_seen, 2 * 200); /* the ramp's top, then the picture */
        char *banded = NULL;
        size_t banded_n = 0;
        ck_assert(tb_fs_read_all(bpath, 1u << 24, &banded, &banded_n, &err) == 0);
        ck_assert_msg(banded_n == whole_n && memcmp(banded, whole, whole_n) == 0,
                      "bands of %lld rows wrote other bytes than the whole image",
                      (long long)bands[b]);
        free(banded);
    }
    free(whole);
    tb_image_t img;
    ck_assert_msg(tb_png_read(path, TB_PNG_RGB8, 1u << 24, &img, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(img.w, 300);
    ck_assert_int_eq(img.h, 200);
    const uint8_t *px = img.pixels;
    /* Corner: ocean, not cyan and not on the ramp. */
    size_t cyan = 0, near = 0;
    for (uint32_t r = 0; r < img.h; r++)
        for (uint32_t q = 0; q < img.w; q++) {
            const uint8_t *v = px + 3 * (r * img.w + q);
            if (!(v[0] == 0 && v[1] == 255 && v[2] == 255))
                continue;
            cyan++;
            /* Every cyan pixel lies within two pixels of a trace vertex chain. */
            double cx = q + 0.5 + (double)f.x0, cy = (double)r + 0.5 + (double)f.y0;
            int hit = 0;
            for (size_t t = 0; t < nt && !hit; t++)
                for (size_t s = 0; s + 1 < tr[t].n && !hit; s++) {
                    double ax = tr[t].xy[2 * s], ay = tr[t].xy[2 * s + 1];
                    double dx = tr[t].xy[2 * s + 2] - ax, dy = tr[t].xy[2 * s + 3] - ay;
                    double l2 = dx * dx + dy * dy, a = ((cx - ax) * dx + (cy - ay) * dy) / l2;
                    a = a < 0 ? 0 : (a > 1 ? 1 : a);
                    hit = hypot(cx - ax - a * dx, cy - ay - a * dy) < 2;
                }
            near += hit;
        }
    ck_assert_msg(cyan > 20, "only %zu cyan pixels", cyan);
    ck_assert_msg(near == cyan, "%zu of %zu cyan pixels lie off every trace", cyan - near, cyan);
    /* Image row j is box row j, as in the painting: row 139 is the range, row 59 lowland. A
     * monotone ramp, so the range is brighter. Sum a row of land away from the traces' pixels. */
    long range = 0, lowland = 0;
    for (uint32_t q = 80; q < 220; q++) {
        const uint8_t *a = px + 3 * (139 * img.w + q), *b = px + 3 * (59 * img.w + q);
        range += a[0] + a[1] + a[2];
        lowland += b[0] + b[1] + b[2];
    }
    ck_assert_msg(range > lowland, "range row %ld not brighter than lowland row %ld", range,
                  lowland);
    const uint8_t *corner = px;
    ck_assert(corner[0] == 18 && corner[1] == 22 && corner[2] == 30);
    tb_image_free(&img);
    /* Refusals name the path. */
    ck_assert_int_eq(tb_map_uplift_write("/nonexistent-dir/map_uplift.png", &f, u, tr, nt, &err),
                     -1);
    ck_assert_msg(strstr(err.msg, "/nonexistent-dir") != NULL, "%s", err.msg);
    tb_frame_t bad = {0};
    ck_assert_int_eq(tb_map_uplift_write(path, &bad, u, NULL, 0, &err), -1);
    tb_uplift_traces_destroy(&tr, nt);
    free(c);
    free(u);
    free(k);
}
END_TEST

Suite *map_uplift_suite(void)
{
    Suite *s = suite_create("map_uplift");
    TCase *t = tcase_create("map_uplift");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_ramp_ceiling_is_round);
    tcase_add_test(t, test_map_rows_are_box_rows_with_cyan_traces);
    suite_add_tcase(s, t);
    return s;
}
