/* The built-in demo planet keeps its structural promises on every seed: landmasses of clearly
 * different sizes, one across the seam, two islands sharing a region, dropped islets, three land
 * and two ocean classes with the shelf along the coasts, land about a third of the planet and clear
 * of the Y edges, regions sized for a 2-core machine; and it is a pure function of its inputs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "jobs/plan/demo.h"
#include "jobs/plan/plan.h"

static const uint64_t s_seeds[] = {7, 1, 2, 3, 9342, 67914};

static void s_check_planet(uint64_t seed, double km)
{
    tb_manifest_t m;
    tb_image_t img;
    tb_err_t err;
    ck_assert_msg(tb_demo_planet(seed, km, &m, &img, &err) == 0, "%s", err.msg);
    /* The manifest. */
    ck_assert(m.is_demo);
    ck_assert_uint_eq(m.seed, seed);
    char want[64];
    snprintf(want, sizeof want, "(demo planet, seed %llu)", (unsigned long long)seed);
    ck_assert_str_eq(m.source, want);
    ck_assert_str_eq(m.painting_path, "");
    ck_assert_int_eq(m.solve.steps, 400);
    ck_assert_double_eq(m.regions.ocean_margin_km, 0.4);
    ck_assert_int_eq(m.legend.n_classes, 5);
    int64_t W = m.planet_w, H = llround(0.32 * (double)W);
    ck_assert_int_eq(W, llround(km * 1000 / 8));
    ck_assert_uint_eq(img.w, W);
    ck_assert_uint_eq(img.h, H);
    /* The plan of it. */
    tb_plan_t *p = tb_plan_new_image(&m, &img, 2, &err);
    ck_assert_msg(p != NULL, "seed %llu: %s", (unsigned long long)seed, err.msg);
    const tb_plan_summary_t *s = tb_plan_summary(p);
    ck_assert_int_eq(s->classify.unmatched_pixels, 0);
    ck_assert_int_eq(s->planet_h, H);
    /* Landmasses of clearly different sizes: the largest over 50 times the smallest. */
    int n = tb_plan_landmass_count(p);
    ck_assert_int_ge(n, 5);
    int64_t lo = INT64_MAX, hi = 0;
    for (int k = 0; k < n; k++) {
        int64_t cells = tb_plan_landmass(p, k)->cells;
        lo = cells < lo ? cells : lo;
        hi = cells > hi ? cells : hi;
    }
    ck_assert_msg(hi > 50 * lo, "seed %llu: landmasses %lld..%lld cells", (unsigned long long)seed,
                  (long long)lo, (long long)hi);
    /* Islets under the minimum size, dropped. */
    ck_assert_int_ge(s->dropped, 3);
    /* One region's land across the seam, one region with two landmasses. */
    int seam = 0, shared = 0;
    for (int k = 0; k < tb_plan_region_count(p); k++) {
        const tb_plan_region_t *r = tb_plan_region(p, k);
        seam += r->straddles_seam;
        /* the close pair sits near 0.70 W: a region there holds both */
        int near = 0;
        for (int q = 0; q < r->n_landmasses; q++) {
            double x = tb_plan_landmass(p, r->landmass_ids[q] - 1)->centroid_x / (double)W;
            near += x > 0.6 && x < 0.8;
        }
        shared += near >= 2;
        ck_assert_msg(!tb_frame_wraps(&r->box), "seed %llu: region %d rings the planet",
                      (unsigned long long)seed, r->id);
    }
    ck_assert_int_ge(tb_plan_region_count(p), 4);
    ck_assert_int_ge(seam, 1);
    ck_assert_int_ge(shared, 1);
    /* Classes: three land classes present, shelf and deep present, shelf along every coast. */
    for (int k = 0; k < tb_plan_class_count(p); k++)
        ck_assert_msg(tb_plan_class_row(p, k)->cells > 0, "seed %llu: land class %d is absent",
                      (unsigned long long)seed, k);
    ck_assert_int_eq(tb_plan_class_count(p), 3);
    const uint8_t *c = (const uint8_t *)tb_plan_class_raster(p)->data;
    int64_t counts[5] = {0}, coast_ocean = 0, coast_shelf = 0, edge_land = 0;
    for (int64_t j = 0; j < H; j++)
        for (int64_t i = 0; i < W; i++) {
            uint8_t v = c[tb_idx(W, i, j)];
            counts[v]++;
            bool land = m.legend.classes[v].kind == TB_CLASS_LAND;
            if (land && (j < 8 || j >= H - 8))
                edge_land++;
            if (land)
                continue;
            bool by_land = false;
            for (int d = 0; d < 8; d++) {
                int64_t y = j + tb_nb_dy[d];
                if (y >= 0 && y < H)
                    by_land |=
                        m.legend.classes[c[tb_idx(W, tb_wrap(i + tb_nb_dx[d], W), y)]].kind ==
                        TB_CLASS_LAND;
            }
            coast_ocean += by_land;
            coast_shelf += by_land && v == 3;
        }
    ck_assert_int_gt(counts[3], 0);
    ck_assert_int_gt(counts[4], counts[3]);
    ck_assert_int_gt(coast_ocean, 0);
    ck_assert_int_eq(coast_shelf, coast_ocean);
    ck_assert_int_eq(edge_land, 0);
    double land = (double)s->land_cells / (double)(W * H);
    ck_assert_msg(land > 0.25 && land < 0.40, "seed %llu at %g km: land %.3f",
                  (unsigned long long)seed, km, land);
    /* Sized for two cores: about 1.5 M region cells at 25 km; elsewhere well under the planet (the
     * margins do not scale with it). */
    double budget = km == 25 ? 1.6e6 : 0.7 * (double)(W * H);
    ck_assert_msg((double)s->region_cells < budget, "seed %llu at %g km: %lld region cells",
                  (unsigned long long)seed, km, (long long)s->region_cells);
    tb_plan_destroy(&p);
    tb_image_free(&img);
}

START_TEST(test_demo_structure_at_25_km)
{
    for (size_t k = 0; k < sizeof s_seeds / sizeof s_seeds[0]; k++)
        s_check_planet(s_seeds[k], 25);
}
END_TEST

START_TEST(test_demo_structure_at_10_and_50_km)
{
    for (size_t k = 0; k < sizeof s_seeds / sizeof s_seeds[0]; k++)
        s_check_planet(s_seeds[k], 10);
    s_check_planet(7, 50);
}
END_TEST

START_TEST(test_demo_is_a_function_of_seed_and_size)
{
    tb_manifest_t m1, m2;
    tb_image_t a, b;
    ck_assert_int_eq(tb_demo_planet(7, 10, &m1, &a, NULL), 0);
    ck_assert_int_eq(tb_demo_planet(7, 10, &m2, &b, NULL), 0);
    ck_assert_int_eq(memcmp(a.pixels, b.pixels, (size_t)a.w * a.h * 3), 0);
    tb_image_free(&b);
    ck_assert_int_eq(tb_demo_planet(8, 10, &m2, &b, NULL), 0);
    size_t differ = 0, n = (size_t)a.w * a.h * 3;
    for (size_t k = 0; k < n; k++)
        differ += ((uint8_t *)a.pixels)[k] != ((uint8_t *)b.pixels)[k];
    ck_assert_msg(differ > n / 100, "seeds 7 and 8 differ in only %zu bytes", differ);
    tb_image_free(&a);
    tb_image_free(&b);
}
END_TEST

START_TEST(test_demo_wraps_cleanly)
{
    /* Columns W - 1 and 0 are neighbours: across the seam the painting changes no more than between
     * two interior columns (the noise wraps, nothing is cut). */
    tb_manifest_t m;
    tb_image_t img;
    ck_assert_int_eq(tb_demo_planet(7, 25, &m, &img, NULL), 0);
    const uint8_t *px = img.pixels;
    int64_t W = img.w, seam = 0, inside = 0;
    for (int64_t j = 0; j < img.h; j++) {
        seam += memcmp(px + 3 * (j * W + W - 1), px + 3 * (j * W), 3) != 0;
        inside += memcmp(px + 3 * (j * W + 1499), px + 3 * (j * W + 1500), 3) != 0;
    }
    ck_assert_msg(seam <= inside + 10, "seam changes %lld rows, column 1500 %lld", (long long)seam,
                  (long long)inside);
    tb_image_free(&img);
}
END_TEST

START_TEST(test_demo_other_circumferences)
{
    /* 5 km is the smallest whole number of tiles; it plans (the layout is cramped there). */
    tb_manifest_t m;
    tb_image_t img;
    tb_err_t err;
    ck_assert_msg(tb_demo_planet(7, 5, &m, &img, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.planet_w, 625);
    tb_plan_t *p = tb_plan_new_image(&m, &img, 1, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_ge(tb_plan_region_count(p), 1);
    tb_plan_destroy(&p);
    tb_image_free(&img);
    /* Not a whole number of tiles (or cells): refused with the numbers. */
    ck_assert_int_eq(tb_demo_planet(7, 12, &m, &img, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "12"));
    ck_assert_int_eq(tb_demo_planet(7, 25.004, &m, &img, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "cell"));
}
END_TEST

START_TEST(test_demo_painting_is_the_same_in_any_band)
{
    /* The painter's bands, halos and threads change nothing: a band of the whole planet on one
     * thread (one window, the whole-planet distance transform) is the reference, and bands of 1,
     * 3 and 50 rows (many windows, each shelf decided within its halo) on 1 to 3 threads give the
     * same pixels, across the seam and the Y edges. */
    static const struct {
        double km;
        int64_t band;
    } cases[] = {{5, 1}, {5, 3}, {10, 50}, {10, 3}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tb_manifest_t m;
        tb_image_t whole, banded;
        tb_err_t err;
        ck_assert_int_eq(tb_demo_manifest(7, cases[k].km, &m, NULL), 0);
        int64_t w = m.planet_w, h = tb_demo_painting_h(w);
        tb_demo_painter_t *p = tb_demo_painter_new(7, &m, w, h, h, 1, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        ck_assert_int_eq(tb_row_source_to_image(tb_demo_painter_rows(p), &whole, &err), 0);
        tb_demo_painter_destroy(&p);
        p = tb_demo_painter_new(7, &m, w, h, cases[k].band, 1 + (int)k % 3, &err);
        /* read in pieces that straddle the painter's bands */
        ck_assert_int_eq(tb_image_alloc(&banded, (uint32_t)w, (uint32_t)h, TB_PNG_RGB8, NULL), 0);
        for (int64_t y = 0; y < h; y += 7) {
            int64_t n = h - y < 7 ? h - y : 7;
            ck_assert_int_eq(tb_row_source_read(tb_demo_painter_rows(p), n,
                                                (uint8_t *)banded.pixels + (size_t)(y * w * 3),
                                                &err),
                             0);
        }
        ck_assert_int_eq(tb_row_source_read(tb_demo_painter_rows(p), 1, banded.pixels, &err), -1);
        ck_assert_msg(memcmp(whole.pixels, banded.pixels, (size_t)(w * h * 3)) == 0,
                      "%g km, band %lld differs from the whole planet", cases[k].km,
                      (long long)cases[k].band);
        tb_demo_painter_destroy(&p);
        /* and tb_demo_planet is the same painting */
        tb_image_t planet;
        ck_assert_int_eq(tb_demo_planet(7, cases[k].km, &m, &planet, NULL), 0);
        ck_assert_int_eq(memcmp(whole.pixels, planet.pixels, (size_t)(w * h * 3)), 0);
        tb_image_free(&planet);
        tb_image_free(&whole);
        tb_image_free(&banded);
    }
}
END_TEST

START_TEST(test_demo_class_table)
{
    /* The reference clamp ceiling: 0.280 mm/yr at 35 degrees, K 5e-5, 8 m cells (k_mult 1). */
    tb_manifest_t m;
    ck_assert_int_eq(tb_demo_manifest(7, 25, &m, NULL), 0);
    tb_plan_class_row_t lowland, range;
    tb_plan_class_angles(&m, 0, &lowland);
    ck_assert_double_eq_tol(lowland.u_max_mm_yr, 0.280, 0.0005);
    ck_assert(!lowland.clamped);
    /* divide = atan(U / (K A^m)) = atan(0.06e-3 / (5e-5 * 8)) = atan(0.15) */
    ck_assert_double_eq_tol(lowland.divide_deg, 8.5308, 1e-3);
    ck_assert_double_eq_tol(lowland.typical_deg, 2.8624, 1e-3);      /* atan(0.05) */
    ck_assert_double_eq_tol(lowland.floor_divide_deg, 1.7184, 1e-3); /* atan(0.03) */
    tb_plan_class_angles(&m, 2, &range);
    ck_assert_double_eq_tol(range.u_max_mm_yr, 0.280, 0.0005);
    /* the range's massifs are above the one-cell ceiling, its floor below: "massifs only" (the
     * hillslope, not the clamp, carries most of it: docs/solve.md) */
    ck_assert(range.clamped);
    ck_assert(!range.floor_clamped);
    ck_assert_double_gt(range.typical_deg, 25); /* mountain ground on its massifs */
    ck_assert_double_lt(range.floor_divide_deg, 35);
    /* Negative control: harden the range's rock fourfold and no rate of it is clamped. */
    m.legend.classes[2].k_mult = 4.0;
    tb_plan_class_angles(&m, 2, &range);
    ck_assert(!range.clamped);
}
END_TEST

Suite *demo_suite(void)
{
    Suite *s = suite_create("demo");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_demo_structure_at_25_km);
    tcase_add_test(tc, test_demo_structure_at_10_and_50_km);
    tcase_add_test(tc, test_demo_is_a_function_of_seed_and_size);
    tcase_add_test(tc, test_demo_wraps_cleanly);
    tcase_add_test(tc, test_demo_painting_is_the_same_in_any_band);
    tcase_add_test(tc, test_demo_other_circumferences);
    tcase_add_test(tc, test_demo_class_table);
    suite_add_tcase(s, tc);
    return s;
}
