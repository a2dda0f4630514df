/* The statistics of the demo planet, end to end (docs/statistics.md): pooled from its regions
 * they equal one pass over the composited planet; the order of the merge changes nothing; and
 * `terrain analyze` of the bake's own planet_height.png agrees with the bake's summary within the
 * 16-bit quantisation.
 *
 * One short bake of the 25 km demo planet (seed 7, 30 steps, in-process) through tb_bake_run, and
 * beside it the same regions solved here one by one through the region job (spec as bake.c makes
 * it, result through the wire encoding), composited as the bake composites: each region writes the
 * cells of its own land, the sea stays at 0 m (the solve's sea level, not the painted depth). The
 * fixture runs once, before the tests fork. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "coordinator/gate/analyze.h"
#include "coordinator/bake/bake.h"
#include "coordinator/maps/bake_maps.h"
#include "coordinator/bake/planet_input.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "jobs/stats/stats.h"
#include "jobs/uplift/uplift.h"
#include "support/tb_test.h"

#define S_STEPS 30
#define S_MAX_REGIONS 64

static char s_dir[4096];
static tb_bake_outcome_t s_bake;
static int s_bake_rc;
static tb_err_t s_bake_err;
static int64_t s_w, s_h;
static double s_cell_m, s_lo_m, s_hi_m;
static float *s_height, *s_area, *s_uplift, *s_painted; /* the composite; painted: ocean at depth */
static uint8_t *s_classes;                              /* the planet's painted classes */
static int s_n_names;
static char s_names[TB_MAX_CLASSES][TB_NAME_MAX];
static tb_stats_t *s_region[S_MAX_REGIONS]; /* decoded, in region-id order */
static int s_n_regions;
static tb_stats_params_t s_params;
static char s_setup_err[TB_ERR_MSG_MAX];

/* Solves every region of the plan in-process and composites it; fills the statics above. */
static int s_regions(tb_err_t *err)
{
    tb_planet_input_t in = {0};
    tb_plan_t *plan = NULL;
    int rc = -1;
    if (tb_planet_input_load(NULL, NULL, &in, err) != 0)
        return -1;
    plan = tb_plan_new(&in.manifest, tb_planet_input_rows(&in), NULL, NULL, 1, err);
    if (!plan)
        goto done;
    const tb_manifest_t *m = tb_plan_manifest(plan);
    tb_uplift_probes_t probes;
    if (tb_uplift_probes_compute(m, &probes, err) != 0)
        goto done;
    s_w = in.planet_w;
    s_h = in.planet_h;
    s_cell_m = m->cell_m;
    s_lo_m = m->elevation_min_m;
    s_hi_m = m->elevation_max_m;
    tb_stats_params_default(&s_params, m->cell_m);
    s_params.talus_deg = m->solve.talus_deg;
    s_params.m = m->solve.m;
    s_params.n = m->solve.n;
    size_t cells = (size_t)s_w * (size_t)s_h;
    s_height = calloc(cells, sizeof(float));
    s_area = calloc(cells, sizeof(float));
    s_uplift = calloc(cells, sizeof(float));
    s_painted = calloc(cells, sizeof(float));
    if (!s_height || !s_area || !s_uplift || !s_painted)
        goto done;
    s_n_regions = tb_plan_region_count(plan);
    ck_assert_int_le(s_n_regions, S_MAX_REGIONS);
    for (int ri = 0; ri < s_n_regions; ri++) {
        const tb_plan_region_t *reg = tb_plan_region(plan, ri);
        tb_grid_t *classes = NULL, *mask = NULL;
        if (tb_plan_region_grids(plan, ri, &classes, &mask, err) != 0)
            goto done;
        tb_region_spec_t spec = {.region_id = reg->id,
                                 .box = reg->box,
                                 .steps = S_STEPS,
                                 .manifest = m,
                                 .probes = &probes,
                                 .classes = tb_grid_cu8(classes),
                                 .solve_mask = tb_grid_cu8(mask)};
        tb_region_result_t solved, r;
        void *bytes = NULL;
        size_t n = 0;
        int ok = tb_region_solve(&spec, NULL, NULL, NULL, &solved, err) == 0 &&
                 tb_region_result_encode(&solved, &bytes, &n, err) == 0 &&
                 tb_region_result_decode(bytes, n, &r, err) == 0;
        tb_region_result_free(&solved);
        free(bytes);
        if (!ok) {
            tb_grid_destroy(&classes);
            tb_grid_destroy(&mask);
            goto done;
        }
        const uint8_t *mk = tb_grid_cu8(mask);
        for (int64_t j = 0; j < r.box.h; j++)
            for (int64_t i = 0; i < r.box.w; i++) {
                size_t bi = tb_idx(r.box.w, i, j);
                if (!mk[bi])
                    continue;
                size_t pi = tb_idx(s_w, tb_frame_lattice_x(&r.box, i), r.box.y0 + j);
                s_height[pi] = r.height_m[bi];
                s_area[pi] = r.area_m2[bi];
                s_uplift[pi] = r.uplift_m_yr[bi];
            }
        s_region[ri] = tb_stats_decode(r.stats, r.stats_bytes, err);
        tb_region_result_free(&r);
        tb_grid_destroy(&classes);
        tb_grid_destroy(&mask);
        if (!s_region[ri])
            goto done;
    }
    const uint8_t *cls = (const uint8_t *)tb_plan_class_raster(plan)->data;
    s_classes = malloc(cells);
    if (!s_classes)
        goto done;
    memcpy(s_classes, cls, cells);
    s_n_names = m->legend.n_classes;
    for (int c = 0; c < s_n_names; c++)
        snprintf(s_names[c], sizeof s_names[c], "%s", m->legend.classes[c].name);
    for (size_t i = 0; i < cells; i++) {
        const tb_class_t *k = &m->legend.classes[cls[i]];
        s_painted[i] = k->kind == TB_CLASS_OCEAN ? (float)-k->depth_m : s_height[i];
    }
    rc = 0;
done:
    tb_plan_destroy(&plan);
    tb_planet_input_free(&in);
    return rc;
}

static void s_setup(void)
{
    snprintf(s_dir, sizeof s_dir, "%s", tb_test_tmpdir("statsdemo"));
    tb_bake_opts_t o = {0};
    o.out_dir = s_dir;
    o.steps = S_STEPS;
    o.quiet = true;
    o.dispatch.workers = 0;
    o.dispatch.workers_given = true;
    o.dispatch.threads = 1;
    /* the statistics describe the solved ground, pooled from the regions; the coastal pass cuts
     * and builds the shore after them and has its own block (docs/coast.md), so the heightmap
     * `terrain analyze` must agree with is the one before it */
    o.no_coast = true;
    s_bake_rc = tb_bake_run(&o, &s_bake, &s_bake_err);
    tb_err_t err;
    if (s_regions(&err) != 0)
        snprintf(s_setup_err, sizeof s_setup_err, "%s", err.msg);
}

static void s_teardown(void)
{
    tb_bake_outcome_free(&s_bake);
    for (int i = 0; i < s_n_regions; i++)
        tb_stats_destroy(&s_region[i]);
    free(s_height);
    free(s_area);
    free(s_uplift);
    free(s_painted);
    free(s_classes);
}

static void s_ready(void)
{
    ck_assert_msg(s_bake_rc == 0, "bake failed: %s", s_bake_err.msg);
    ck_assert_msg(!s_setup_err[0], "solving the regions failed: %s", s_setup_err);
}

/* The regions merged in the given order (indices into s_region). */
static tb_stats_t *s_merge(const int *order, int n)
{
    tb_err_t err;
    tb_stats_t *s = tb_stats_new(&s_params, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    for (int i = 0; i < n; i++)
        ck_assert_msg(tb_stats_merge(s, s_region[order[i]], &err) == 0, "%s", err.msg);
    return s;
}

/* One pass over a planet-sized grid of heights (every cell counted; land is what is above 0 m). */
static tb_stats_t *s_whole(const float *height)
{
    tb_err_t err;
    tb_frame_t f;
    ck_assert_int_eq(tb_frame_make(&f, s_w, s_h, s_cell_m, 0, 0, s_w, s_h, &err), 0);
    tb_stats_t *s = tb_stats_new(&s_params, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    const char *names[TB_MAX_CLASSES];
    for (int c = 0; c < s_n_names; c++)
        names[c] = s_names[c];
    ck_assert_msg(tb_stats_accumulate_classes(s, &f, height, s_area, s_uplift, NULL, s_classes,
                                              s_n_names, names, &err) == 0,
                  "%s", err.msg);
    return s;
}

START_TEST(test_pooled_equals_whole)
{
    s_ready();
    ck_assert_int_ge(s_n_regions, 4); /* the demo: a continent, a seam island, a pair, an island */
    int order[S_MAX_REGIONS];
    for (int i = 0; i < s_n_regions; i++)
        order[i] = i;
    tb_stats_t *pooled = s_merge(order, s_n_regions), *whole = s_whole(s_height);
    tb_stats_counts_t pc, wc;
    tb_stats_counts(pooled, TB_STATS_ALL, &pc);
    tb_stats_counts(whole, TB_STATS_ALL, &wc);
    ck_assert_int_gt(pc.land_cells, 500000);
    ck_assert_int_gt(pc.channel_cells, 0);
    ck_assert_int_eq(pc.land_cells, wc.land_cells);
    ck_assert_int_eq(pc.channel_cells, wc.channel_cells);
    ck_assert_int_eq(tb_stats_edge_cells(pooled), 0);
    /* every count, every exact sum and extreme, bit for bit */
    ck_assert_msg(tb_stats_equal(pooled, whole), "pooled statistics differ from the one pass");
    /* and they are what tb_bake_run merged */
    ck_assert_msg(tb_stats_equal(pooled, s_bake.stats), "the bake's statistics differ");
    char *a = tb_stats_report_text(pooled, NULL, NULL),
         *b = tb_stats_report_text(whole, NULL, NULL);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    tb_stats_destroy(&whole);

    /* Negative control 1: the painted ocean depth instead of the solve's sea level changes the
     * slope and relief of every coastal cell, so the one pass no longer equals the pool. */
    whole = s_whole(s_painted);
    tb_stats_counts(whole, TB_STATS_ALL, &wc);
    ck_assert_int_eq(wc.land_cells, pc.land_cells);
    ck_assert_msg(!tb_stats_equal(pooled, whole), "the painted-depth composite should differ");
    tb_stats_destroy(&whole);
    /* Negative control 2: a region merged twice is counted twice. */
    order[s_n_regions] = 0;
    tb_stats_t *twice = s_merge(order, s_n_regions + 1);
    ck_assert(!tb_stats_equal(pooled, twice));
    tb_stats_destroy(&twice);
    tb_stats_destroy(&pooled);
}
END_TEST

START_TEST(test_merge_order_changes_nothing)
{
    s_ready();
    int fwd[S_MAX_REGIONS], rev[S_MAX_REGIONS], odd[S_MAX_REGIONS];
    int n = s_n_regions, k = 0;
    for (int i = 0; i < n; i++) {
        fwd[i] = i;
        rev[i] = n - 1 - i;
    }
    for (int i = 1; i < n; i += 2) /* odd ids first, then even */
        odd[k++] = i;
    for (int i = 0; i < n; i += 2)
        odd[k++] = i;
    tb_stats_t *a = s_merge(fwd, n), *b = s_merge(rev, n), *c = s_merge(odd, n);
    for (int bucket = 0; bucket <= TB_STATS_ALL; bucket++) {
        tb_stats_counts_t ca, cb, cc;
        tb_stats_counts(a, bucket, &ca);
        tb_stats_counts(b, bucket, &cb);
        tb_stats_counts(c, bucket, &cc);
        ck_assert(memcmp(&ca, &cb, sizeof ca) == 0 && memcmp(&ca, &cc, sizeof ca) == 0);
    }
    /* every quantity is an integer or an extreme, so more than the counts agree */
    ck_assert(tb_stats_equal(a, b));
    ck_assert(tb_stats_equal(a, c));
    tb_stats_destroy(&a);
    tb_stats_destroy(&b);
    tb_stats_destroy(&c);
}
END_TEST

/* The largest slope error one 16-bit quantum q can make at a cell: Horn's gradient weighs eight
 * heights by 1, 2, 1 over 8 dx in each direction, so each component is off by at most q / (2 dx),
 * the magnitude by at most q / (sqrt 2 dx); in degrees at slope s, that times 1 / (1 + s^2). */
static double s_slope_error_deg(double q, double dx)
{
    return atan(q / (sqrt(2.0) * dx)) * 180 / M_PI;
}

START_TEST(test_analyze_agrees_with_the_bake)
{
    s_ready();
    char png[4200];
    snprintf(png, sizeof png, "%s/planet_height.png", s_dir);
    tb_analyze_opts_t o = {0};
    o.path = png;
    tb_analyze_result_t r;
    tb_err_t err;
    ck_assert_msg(tb_analyze_run(&o, &r, &err) == 0, "%s", err.msg);
    ck_assert(r.wraps);                      /* from meta.json: the whole circumference */
    ck_assert_double_eq(r.cell_m, s_cell_m); /* from meta.json */
    ck_assert_int_eq(r.w, s_w);
    ck_assert_int_eq(r.h, s_h);
    const double q = (s_hi_m - s_lo_m) / 65535; /* one quantum, metres */
    tb_stats_summary_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    tb_stats_summarise(r.stats, a);
    tb_stats_summarise(s_bake.stats, b);
    const tb_stats_bucket_summary_t *x = &a->bucket[TB_STATS_ALL], *y = &b->bucket[TB_STATS_ALL];
    /* Land: a bake cell that is land can read as sea only when it lies within half a quantum of
     * sea level (it rounds to the sea level's sample or below). */
    int64_t near_sea = 0;
    for (size_t i = 0; i < (size_t)s_w * (size_t)s_h; i++)
        near_sea += s_height[i] > 0 && s_height[i] < q;
    fprintf(stderr, "analyze vs bake: land %lld vs %lld (cells under one quantum %lld)\n",
            (long long)x->land_cells, (long long)y->land_cells, (long long)near_sea);
    ck_assert_int_le(llabs(x->land_cells - y->land_cells), near_sea);
    ck_assert_int_le(x->land_cells, y->land_cells);
    /* Slopes: each cell's slope moves by at most the error of one quantum; the median and P90
     * by no more than that, the shares by at most the cells that lie that close to 15, 30, 50
     * degrees (bounded here by 1 % of land, measured below 0.1 %). */
    double es = s_slope_error_deg(q, s_cell_m);
    fprintf(stderr, "  slope median %.4f vs %.4f, P90 %.4f vs %.4f (one quantum: %.4f deg)\n",
            x->slope_median_deg, y->slope_median_deg, x->slope_p90_deg, y->slope_p90_deg, es);
    ck_assert(fabs(x->slope_median_deg - y->slope_median_deg) <= es);
    ck_assert(fabs(x->slope_p90_deg - y->slope_p90_deg) <= es);
    fprintf(stderr, "  under 15 %.6f vs %.6f, under 30 %.6f vs %.6f, over 50 %.6f vs %.6f\n",
            x->slope_under15, y->slope_under15, x->slope_under30, y->slope_under30, x->slope_over50,
            y->slope_over50);
    ck_assert(fabs(x->slope_under15 - y->slope_under15) <= 0.01);
    ck_assert(fabs(x->slope_under30 - y->slope_under30) <= 0.01);
    ck_assert(fabs(x->slope_over50 - y->slope_over50) <= 0.01);
    /* Relief: max - min moves by at most one quantum, the median by that plus a relief bin. */
    fprintf(stderr, "  relief median %.4f vs %.4f m, P90 %.4f vs %.4f m\n", x->relief_median_m,
            y->relief_median_m, x->relief_p90_m, y->relief_p90_m);
    double rb = s_params.relief_bin_m;
    ck_assert(fabs(x->relief_median_m - y->relief_median_m) <= q + rb);
    ck_assert(fabs(x->relief_p90_m - y->relief_p90_m) <= q + rb);
    /* Elevation: extremes within half a quantum; the hypsometric integral within what half a
     * quantum on min, max and mean can move it. */
    fprintf(stderr, "  elevation %.4f .. %.4f vs %.4f .. %.4f, HI %.6f vs %.6f\n", x->elev_min_m,
            x->elev_max_m, y->elev_min_m, y->elev_max_m, x->hypsometric_integral,
            y->hypsometric_integral);
    ck_assert(fabs(x->elev_max_m - y->elev_max_m) <= q / 2 + 1e-6);
    double range = y->elev_max_m - y->elev_min_m;
    ck_assert(fabs(x->hypsometric_integral - y->hypsometric_integral) <= 2 * q / range);
    /* Drainage: not a quantisation bound. analyze routes the map once, with no jitter, where the
     * bake's areas are the solve's own from its last step; and the 16 bits cannot hold a river's
     * gradient - a trunk falls 2 to 3 cm over an 8 m cell, under one quantum of 3.1 cm - so the
     * re-routed PNG has flats along its rivers, MFD spreads the water across them and fewer cells
     * reach 1 km2. Measured on the demo: density 8 to 15 % low, the exponent 0.02 to 0.05
     * shallower (30 to 400 steps); the float heights (test_analyze_of_the_float_planet) agree
     * within 3 %. Bounds: density within 20 %, exponent within 0.1. */
    fprintf(stderr,
            "  drainage density %.4f vs %.4f /km; slope-area %.4f (R2 %.3f, %d bins) vs "
            "%.4f (R2 %.3f, %d bins)\n",
            x->drainage_density_per_km, y->drainage_density_per_km, x->fit.exponent, x->fit.r2,
            (int)x->fit.bins, y->fit.exponent, y->fit.r2, (int)y->fit.bins);
    ck_assert(fabs(x->drainage_density_per_km - y->drainage_density_per_km) <=
              0.2 * y->drainage_density_per_km);
    ck_assert(fabs(x->fit.exponent - y->fit.exponent) <= 0.1);
    ck_assert_int_ge(x->fit.bins, y->fit.bins - 2);
    /* The extent: the PNG's own range, the painted ocean floor and the top within a quantum. */
    ck_assert(fabs(r.extent.min_m - s_bake.extent.min_m) <= q / 2 + 1e-6);
    ck_assert(fabs(r.extent.max_m - s_bake.extent.max_m) <= q / 2 + 1e-6);
    free(a);
    free(b);
    tb_analyze_result_free(&r);
}
END_TEST

/* The same planet as raw float32 (the composite's own heights, sea at 0 m) beside the bake's
 * meta.json, which says X wraps: every statistic that reads heights is the bake's exactly (the
 * pooled statistics equal one pass, and analyze is that one pass); the drainage lines differ only
 * by the routing (one pass over the final heights, no jitter, against the solve's last step). */
START_TEST(test_analyze_of_the_float_planet)
{
    s_ready();
    char raw[4200];
    snprintf(raw, sizeof raw, "%s/planet_height.f32", s_dir);
    FILE *f = fopen(raw, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(s_height, sizeof(float), (size_t)s_w * (size_t)s_h, f),
                     (size_t)s_w * (size_t)s_h);
    fclose(f);
    tb_analyze_opts_t o = {.path = raw, .raw_w = s_w, .raw_h = s_h};
    tb_analyze_result_t r;
    tb_err_t err;
    ck_assert_msg(tb_analyze_run(&o, &r, &err) == 0, "%s", err.msg);
    ck_assert(r.wraps);
    tb_stats_summary_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    tb_stats_summarise(r.stats, a);
    tb_stats_summarise(s_bake.stats, b);
    const tb_stats_bucket_summary_t *x = &a->bucket[TB_STATS_ALL], *y = &b->bucket[TB_STATS_ALL];
    ck_assert_int_eq(x->land_cells, y->land_cells);
    ck_assert_double_eq(x->slope_median_deg, y->slope_median_deg);
    ck_assert_double_eq(x->slope_p90_deg, y->slope_p90_deg);
    ck_assert_double_eq(x->slope_under15, y->slope_under15);
    ck_assert_double_eq(x->slope_over50, y->slope_over50);
    ck_assert_double_eq(x->relief_median_m, y->relief_median_m);
    ck_assert_double_eq(x->relief_p90_m, y->relief_p90_m);
    ck_assert_double_eq(x->elev_min_m, y->elev_min_m);
    ck_assert_double_eq(x->elev_max_m, y->elev_max_m);
    ck_assert_double_eq(x->hypsometric_integral, y->hypsometric_integral);
    ck_assert_double_eq(x->near_repose_share, y->near_repose_share);
    fprintf(stderr,
            "float planet: drainage density %.4f vs %.4f /km; slope-area %.4f (R2 %.3f) vs "
            "%.4f (R2 %.3f)\n",
            x->drainage_density_per_km, y->drainage_density_per_km, x->fit.exponent, x->fit.r2,
            y->fit.exponent, y->fit.r2);
    ck_assert(fabs(x->drainage_density_per_km - y->drainage_density_per_km) <=
              0.05 * y->drainage_density_per_km);
    ck_assert(fabs(x->fit.exponent - y->fit.exponent) <= 0.05);
    free(a);
    free(b);
    tb_analyze_result_free(&r);
}
END_TEST

Suite *statsdemo_suite(void)
{
    Suite *s = suite_create("statsdemo");
    TCase *tc = tcase_create("demo");
    tcase_add_unchecked_fixture(tc, s_setup, s_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_pooled_equals_whole);
    tcase_add_test(tc, test_merge_order_changes_nothing);
    tcase_add_test(tc, test_analyze_agrees_with_the_bake);
    tcase_add_test(tc, test_analyze_of_the_float_planet);
    suite_add_tcase(s, tc);
    return s;
}
