/* The geology step on threads (docs/solve.md): heights and drainage area after 200 steps are the
 * one-thread bytes at 2, 3 and 4 threads - on a small copy of the benchmark grid (MFD and D8), on
 * a landmass where one drainage basin holds most of the land, and on a box that wraps the whole
 * circumference (its edge columns take the kernels' slow paths); a landmass solved in its own box
 * on one thread and in a larger box on three threads is the same land (two frames agree at every
 * thread count). The negative control raises one input height by a millimetre on the same thread
 * count and sees the bytes change, so equal bytes mean something.
 *
 * The case "full" runs the same comparison on the full 2048 x 2048 benchmark grid and on the demo
 * planet's largest region (a few minutes on two cores; left out of sanitizer builds, where the
 * small copies carry the check). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/pool.h"
#include "jobs/geology/geology.h"
#include "jobs/plan/demo.h"
#include "jobs/plan/plan.h"
#include "jobs/uplift/uplift.h"
#include "support/tb_geo_test.h"

/* One landmass to solve. */
typedef struct {
    tb_frame_t box;
    uint8_t *mask;
    float *u, *k, *h0;
    double mfd_exponent;
} s_land_t;

/* What a run leaves: heights, areas, and the largest basin's share of the land. */
typedef struct {
    float *h, *area;
    double largest_share;
    int bands;
} s_out_t;

static void s_land_free(s_land_t *l)
{
    free(l->mask);
    free(l->u);
    free(l->k);
    free(l->h0);
}

static void s_out_free(s_out_t *o)
{
    free(o->h);
    free(o->area);
}

/* A land over `box` with its arrays allocated (mask and fields zero, heights filled by the caller).
 */
static s_land_t s_land_new(const tb_frame_t *box, double mfd_exponent)
{
    return (s_land_t){
        *box,        tb_geo_bytes(box), tb_geo_floats(box), tb_geo_floats(box), tb_geo_floats(box),
        mfd_exponent};
}

/* The benchmark grid, small: every cell solved but the ring, uniform uplift, 0..1 m of noise. */
static s_land_t s_grid(int64_t n, double mfd_exponent)
{
    tb_frame_t box = tb_geo_box(2 * n, 2 * n, n / 2, n / 2, n, n);
    s_land_t l = s_land_new(&box, mfd_exponent);
    tb_geo_noise(&l.box, 7, 1.0, l.h0);
    tb_solve_params_t p = tb_geo_default_params();
    for (size_t c = 0; c < (size_t)(n * n); c++) {
        l.mask[c] = 1;
        l.u[c] = 2e-4f;
        l.k[c] = (float)p.k;
    }
    return l;
}

/* A horseshoe island: a fast-rising rim round a slow interior, broken by a gap on its east side,
 * so the interior and the rim's inner slopes drain through the gap - one basin. */
static s_land_t s_horseshoe(void)
{
    const int64_t n = 160;
    tb_frame_t box = tb_geo_box(1000, 1000, 300, 300, n, n);
    s_land_t l = s_land_new(&box, 1.0);
    tb_geo_noise(&l.box, 11, 0.5, l.h0);
    tb_solve_params_t p = tb_geo_default_params();
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            size_t c = tb_idx(n, i, j);
            double dx = (double)i - 80, dy = (double)j - 80, r = sqrt(dx * dx + dy * dy);
            bool gap = dx > 0 && fabs(dy) < 7;
            l.mask[c] = r < 72;
            l.u[c] = (float)(r > 52 && !gap ? 6e-4 : 4e-5);
            l.k[c] = (float)p.k;
        }
    return l;
}

/* Island A of tests/test_geology.c (across the seam, gentle), alone or beside the steep B. */
static s_land_t s_island(const tb_frame_t *box, bool with_b)
{
    s_land_t l = s_land_new(box, 1.0);
    tb_geo_ellipse_u8(box, 10, 60, 25, 30, 1, l.mask);
    tb_geo_noise(box, 17, 2.0, l.h0);
    tb_solve_params_t p = tb_geo_default_params();
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++) {
            size_t c = tb_idx(box->w, i, j);
            l.u[c] = (float)(2e-4 * (1 + 0.5 * sin((double)tb_frame_lattice_x(box, i) / 7.0)));
            l.k[c] = (float)p.k;
        }
    if (with_b) {
        float *rough = tb_geo_floats(box);
        uint8_t *mb = tb_geo_bytes(box);
        tb_geo_noise(box, 18, 40.0, rough);
        tb_geo_ellipse_u8(box, 120, 60, 30, 40, 1, mb);
        for (size_t c = 0; c < (size_t)(box->w * box->h); c++)
            if (mb[c]) {
                l.mask[c] = 1;
                l.u[c] = 3e-3f;
                l.h0[c] = rough[c] + 20;
            }
        free(rough);
        free(mb);
    }
    return l;
}

#if (!defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)) || defined(TB_TEST_FULL)
#define S_FULL 1 /* the full-size cases: minutes in a release build, too slow under a sanitizer */

/* Region `id` of the built-in demo planet as a region job builds it: the plan's box and mask,
 * jobs/uplift's U and K, a flat start. */
static s_land_t s_demo_region(int id)
{
    tb_manifest_t m;
    tb_image_t painting = {0};
    tb_err_t err;
    ck_assert_msg(tb_demo_planet(TB_DEMO_SEED, TB_DEMO_CIRCUMFERENCE_KM, &m, &painting, &err) == 0,
                  "%s", err.msg);
    tb_plan_t *plan = tb_plan_new_image(&m, &painting, 2, &err);
    tb_image_free(&painting);
    ck_assert_msg(plan != NULL, "%s", err.msg);
    const tb_manifest_t *pm = tb_plan_manifest(plan);
    const tb_plan_region_t *reg = tb_plan_region(plan, id - 1);
    tb_grid_t *classes = NULL, *mask = NULL;
    tb_uplift_probes_t probes;
    ck_assert_msg(tb_uplift_probes_compute(pm, &probes, &err) == 0 &&
                      tb_plan_region_grids(plan, id - 1, &classes, &mask, &err) == 0,
                  "%s", err.msg);
    s_land_t l = s_land_new(&reg->box, pm->solve.mfd_exponent);
    size_t n = (size_t)(l.box.w * l.box.h);
    memcpy(l.mask, tb_grid_cu8(mask), n);
    ck_assert_msg(tb_uplift_build(pm, &probes, &l.box, tb_grid_cu8(classes), l.u, l.k, &err) == 0,
                  "%s", err.msg);
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    tb_plan_destroy(&plan);
    return l;
}
#endif

/* Solves l for `steps` steps on `threads` threads. */
static s_out_t s_solve(const s_land_t *l, int threads, int steps)
{
    size_t n = (size_t)(l->box.w * l->box.h);
    tb_solve_params_t p = tb_geo_default_params();
    p.mfd_exponent = l->mfd_exponent;
    tb_err_t err;
    tb_pool_t *pool = tb_pool_new(threads, &err);
    ck_assert_msg(pool != NULL, "%s", err.msg);
    tb_geology_t *g = tb_geology_new(&l->box, &p, 77, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    tb_geology_set_pool(g, pool);
    s_out_t o = {tb_geo_floats(&l->box), tb_geo_floats(&l->box), 0, 0};
    memcpy(o.h, l->h0, n * sizeof(float));
    ck_assert_msg(tb_geology_run(g, l->mask, l->u, l->k, o.h, 0, steps, NULL, NULL, &err) == 0,
                  "%s", err.msg);
    memcpy(o.area, tb_geology_area_m2(g), n * sizeof(float));
    tb_geology_phases_t ph;
    tb_geology_phase_times(g, &ph);
    o.bands = ph.bands;
    /* the largest basin: cells sharing an outlet */
    const int32_t *basin = tb_geology_basin(g);
    int32_t *count = calloc(n, sizeof(int32_t));
    size_t land = 0, best = 0;
    for (size_t c = 0; c < n; c++)
        if (basin[c] >= 0) {
            land++;
            if ((size_t)++count[basin[c]] > best)
                best = (size_t)count[basin[c]];
        }
    o.largest_share = land ? (double)best / (double)land : 0;
    free(count);
    tb_geology_destroy(&g);
    tb_pool_destroy(&pool);
    return o;
}

/* Bytes of heights and areas over the whole box that differ between two runs of one land. */
static size_t s_differ(const s_land_t *l, const s_out_t *a, const s_out_t *b)
{
    size_t n = (size_t)(l->box.w * l->box.h), d = 0;
    for (size_t c = 0; c < n; c++)
        d += memcmp(&a->h[c], &b->h[c], sizeof(float)) != 0 ||
             memcmp(&a->area[c], &b->area[c], sizeof(float)) != 0;
    return d;
}

/* `steps` steps on 1 thread, then on 2, 3 and 4: the same bytes everywhere, and the step really was
 * split (one band per thread). */
static void s_same_after(const s_land_t *l, const char *what, int steps)
{
    s_out_t one = s_solve(l, 1, steps);
    ck_assert_int_eq(one.bands, 1);
    for (int threads = 2; threads <= 4; threads++) {
        s_out_t many = s_solve(l, threads, steps);
        ck_assert_int_eq(many.bands, threads);
        size_t d = s_differ(l, &one, &many);
        ck_assert_msg(d == 0, "%s: %zu cells differ between 1 and %d threads", what, d, threads);
        s_out_free(&many);
    }
    fprintf(stderr,
            "%s: 1, 2, 3 and 4 threads give the same bits after %d steps (largest basin "
            "%.0f %% of the land)\n",
            what, steps, 100 * one.largest_share);
    s_out_free(&one);
}

static void s_same_at_every_thread_count(const s_land_t *l, const char *what)
{
    s_same_after(l, what, 200);
}

START_TEST(test_grid_mfd)
{
    s_land_t l = s_grid(160, 1.0);
    s_same_at_every_thread_count(&l, "grid 160 x 160, MFD");
    s_land_free(&l);
}
END_TEST

START_TEST(test_grid_d8)
{
    s_land_t l = s_grid(160, 0.0);
    s_same_at_every_thread_count(&l, "grid 160 x 160, D8 by basin");
    s_land_free(&l);
}
END_TEST

START_TEST(test_grid_mfd_exponent_below_the_sea)
{
    /* The general MFD weight (exponent 1.1, not the linear fast path), and half the land starting
     * below 0 m, so fixed cells are higher neighbours of solved ones at band boundaries. */
    s_land_t l = s_grid(96, 1.1);
    for (size_t c = 0; c < 96 * 96; c++)
        l.h0[c] -= 0.5f;
    s_same_at_every_thread_count(&l, "grid 96 x 96, MFD exponent 1.1, starting below the sea");
    s_land_free(&l);
}
END_TEST

START_TEST(test_one_basin_holds_most_of_the_land)
{
    s_land_t l = s_horseshoe();
    s_out_t one = s_solve(&l, 1, 200);
    /* the landmass is what the test says it is */
    ck_assert_msg(one.largest_share > 0.5, "largest basin holds only %.0f %% of the land",
                  100 * one.largest_share);
    s_out_free(&one);
    s_same_at_every_thread_count(&l, "horseshoe island");
    s_land_free(&l);
}
END_TEST

/* Land all the way round: the box wraps, so its first and last columns are land whose neighbours
 * sit across the seam. */
static s_land_t s_round_the_planet(int64_t lw, int64_t lh)
{
    tb_frame_t box = tb_geo_box(lw, lh, 0, 0, lw, lh);
    s_land_t l = s_land_new(&box, 1.0);
    tb_geo_noise(&l.box, 5, 1.0, l.h0);
    tb_solve_params_t p = tb_geo_default_params();
    for (int64_t j = 0; j < lh; j++)
        for (int64_t i = 0; i < lw; i++) {
            size_t c = tb_idx(lw, i, j);
            l.mask[c] = j >= lh / 12 && j < lh - lh / 12;
            l.u[c] = (float)(3e-4 * (1 + 0.5 * cos(2 * M_PI * (double)i / (double)lw)));
            l.k[c] = (float)p.k;
        }
    return l;
}

START_TEST(test_a_box_round_the_planet)
{
    s_land_t l = s_round_the_planet(120, 72);
    s_same_at_every_thread_count(&l, "box round the planet");
    s_land_free(&l);
}
END_TEST

/* The case "race": the same comparisons on small grids for a few steps, quick enough to run under
 * ThreadSanitizer (scripts/test runs CK_RUN_CASE=race in build-tsan), where every cross-band read
 * and write of a step is checked; the bytes are compared as above. */
START_TEST(test_race_grids)
{
    s_land_t mfd = s_grid(64, 1.0), d8 = s_grid(64, 0.0), general = s_grid(64, 1.1);
    for (size_t c = 0; c < 64 * 64; c++)
        general.h0[c] -= 0.5f;
    s_same_after(&mfd, "race: grid 64 x 64, MFD", 12);
    s_same_after(&d8, "race: grid 64 x 64, D8 by basin", 12);
    s_same_after(&general, "race: grid 64 x 64, MFD exponent 1.1, below the sea", 12);
    s_land_free(&mfd);
    s_land_free(&d8);
    s_land_free(&general);
}
END_TEST

START_TEST(test_race_round_the_planet)
{
    s_land_t l = s_round_the_planet(96, 48);
    s_same_after(&l, "race: box round the planet", 12);
    s_land_free(&l);
}
END_TEST

START_TEST(test_two_frames_agree_at_every_thread_count)
{
    /* A in its own box on one thread, and beside B in a larger box on three: the same land. */
    tb_frame_t own = tb_geo_box(1000, 120, 980, 25, 60, 72);
    tb_frame_t beside = tb_geo_box(1000, 120, 950, 10, 220, 100);
    s_land_t a = s_island(&own, false), b = s_island(&beside, true);
    s_out_t ra = s_solve(&a, 1, 60), rb = s_solve(&b, 3, 60);
    size_t cells = 0, differ = 0;
    for (int64_t j = 0; j < own.h; j++)
        for (int64_t i = 0; i < own.w; i++) {
            size_t c = tb_idx(own.w, i, j);
            if (!a.mask[c])
                continue;
            int64_t d = tb_geo_map(&own, i, j, &beside);
            ck_assert_int_ge(d, 0);
            cells++;
            differ += memcmp(&ra.h[c], &rb.h[d], sizeof(float)) != 0 ||
                      memcmp(&ra.area[c], &rb.area[d], sizeof(float)) != 0;
        }
    ck_assert_uint_gt(cells, 1500);
    ck_assert_uint_eq(differ, 0);
    ck_assert_int_eq(rb.bands, 3);
    s_out_free(&ra);
    s_out_free(&rb);
    s_land_free(&a);
    s_land_free(&b);
}
END_TEST

#ifdef S_FULL
START_TEST(test_full_benchmark_grid)
{
    s_land_t l = s_grid(2048, 1.0);
    s_same_at_every_thread_count(&l, "benchmark grid 2048 x 2048, MFD");
    s_land_free(&l);
}
END_TEST

START_TEST(test_largest_demo_region)
{
    s_land_t l = s_demo_region(2);
    ck_assert_uint_gt(l.box.w * l.box.h, 1000000); /* docs/solve.md's speedup region */
    s_same_at_every_thread_count(&l, "demo planet region 2");
    s_land_free(&l);
}
END_TEST
#endif

START_TEST(test_one_float_step_changes_the_bytes)
{
    /* The negative control: the comparison sees one input height a millimetre higher. (One float
     * step is not enough: a lake fill or a hillslope sum can absorb it.) */
    s_land_t l = s_grid(96, 1.0);
    s_out_t a = s_solve(&l, 2, 60);
    size_t c = tb_idx(96, 40, 50);
    l.h0[c] += 1e-3f;
    s_out_t b = s_solve(&l, 2, 60);
    ck_assert_uint_gt(s_differ(&l, &a, &b), 0);
    s_out_free(&a);
    s_out_free(&b);
    s_land_free(&l);
}
END_TEST

Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_grid_mfd);
    tcase_add_test(tc, test_grid_d8);
    tcase_add_test(tc, test_grid_mfd_exponent_below_the_sea);
    tcase_add_test(tc, test_one_basin_holds_most_of_the_land);
    tcase_add_test(tc, test_a_box_round_the_planet);
    tcase_add_test(tc, test_two_frames_agree_at_every_thread_count);
    tcase_add_test(tc, test_one_float_step_changes_the_bytes);
    suite_add_tcase(s, tc);
    TCase *race = tcase_create("race");
    tcase_set_timeout(race, 300);
    tcase_add_test(race, test_race_grids);
    tcase_add_test(race, test_race_round_the_planet);
    suite_add_tcase(s, race);
#ifdef S_FULL
    TCase *full = tcase_create("full");
    tcase_set_timeout(full, 1700);
    tcase_add_test(full, test_full_benchmark_grid);
    suite_add_tcase(s, full);
    TCase *demo = tcase_create("demo");
    tcase_set_timeout(demo, 1700);
    tcase_add_test(demo, test_largest_demo_region);
    suite_add_tcase(s, demo);
#endif
    return s;
}
