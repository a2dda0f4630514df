/* The report's pieces (docs/report.md): the histograms meta.json gains count every land cell once
 * per class and once in "all land"; numbers print tagged with their path, null as n/a; the page
 * escapes what it quotes and has one bar per bin; the maps carry their legend strip and keep the
 * sea dark; the reduced heightmap is the block mean; the erodibility field is built on each
 * region's own land and its uplift check counts a cell that differs (a negative control); a
 * meta.json with a coast block prints every coast number tagged, the coast map among the maps, and
 * a "tiles" object its section; a null coast prints "skipped (--no-coast)" (the tagged-coast check
 * fails on that page: its negative control); no "tiles", no section. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "coordinator/bake/planet_input.h"
#include "coordinator/report/html.h"
#include "coordinator/report/maps.h"
#include "coordinator/report/page.h"
#include "coordinator/report/progress.h"
#include "coordinator/report/report.h"
#include "coordinator/report/progress.h"
#include "jobs/plan/plan.h"
#include "jobs/stats/stats.h"
#include "jobs/uplift/uplift.h"
#include "support/tb_test.h"

/* A cone of land (up to 60 m) in a 96 x 64 box with an uplift field of three rates. */
static tb_stats_t *s_cone_stats(void)
{
    const int64_t w = 96, h = 64;
    tb_err_t err;
    tb_frame_t f;
    ck_assert_int_eq(tb_frame_make(&f, w, h, 8, 0, 0, w, h, &err), 0);
    float *z = calloc((size_t)(w * h), sizeof(float)), *a = calloc((size_t)(w * h), sizeof(float));
    float *u = calloc((size_t)(w * h), sizeof(float));
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            double r = hypot((double)i - 48, (double)j - 32);
            size_t k = tb_idx(w, i, j);
            z[k] = r < 28 ? (float)(60 * (1 - r / 28)) + 0.5f : 0;
            a[k] = (float)(64 * (1 + (i * 7 + j * 3) % 50));
            u[k] = (float)((i < 40 ? 0.05 : i < 60 ? 0.3 : 0.8) * 1e-3);
        }
    tb_stats_params_t p;
    tb_stats_params_default(&p, 8);
    p.relief_window_m = 40;
    tb_stats_t *s = tb_stats_new(&p, &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(tb_stats_accumulate(s, &f, z, a, u, NULL, &err), 0);
    free(z);
    free(a);
    free(u);
    return s;
}

START_TEST(test_histograms_count_every_land_cell)
{
    tb_stats_t *s = s_cone_stats();
    cJSON *h = tb_report_histograms_json(s);
    ck_assert_ptr_nonnull(h);
    static const char *fam[] = {"slope_deg", "relief_m", "elevation_m"};
    for (int f = 0; f < 3; f++) {
        const cJSON *fj = cJSON_GetObjectItem(h, fam[f]);
        const cJSON *classes = cJSON_GetObjectItem(fj, "classes");
        int bars = (int)tb_json_num(fj, "bars");
        if (f == 0)
            ck_assert_int_eq(bars, 90);
        else
            ck_assert_int_le(bars, 49);
        double sum_classes = 0, all = -1;
        int c = 0;
        const cJSON *cl;
        cJSON_ArrayForEach(cl, classes)
        {
            ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cl, "counts")), bars);
            double n = tb_json_num(cl, "beyond");
            const cJSON *v;
            cJSON_ArrayForEach(v, cJSON_GetObjectItem(cl, "counts")) n += v->valuedouble;
            tb_stats_counts_t cnt;
            bool is_all = strcmp(tb_json_str(cl, "name", ""), "all land") == 0;
            tb_stats_counts(s, is_all ? TB_STATS_ALL : c, &cnt);
            ck_assert_msg(n == (double)cnt.land_cells, "%s %s: %g of %lld cells", fam[f],
                          tb_json_str(cl, "name", ""), n, (long long)cnt.land_cells);
            if (is_all)
                all = n;
            else
                sum_classes += n;
            c++;
        }
        ck_assert_double_eq(all, sum_classes);
        ck_assert_int_eq(c, 4); /* plain, rolling, mountain, all land: no unclassified land */
        if (f > 0)              /* round widths: 1, 2 or 5 x 10^k */
        {
            double wd = tb_json_num(fj, "width"), m = wd / pow(10, floor(log10(wd)));
            ck_assert_msg(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9, "%g", wd);
        }
    }
    cJSON_Delete(h);
    tb_stats_destroy(&s);
}
END_TEST

START_TEST(test_numbers_are_tagged_and_null_is_na)
{
    cJSON *doc = cJSON_Parse("{\"a\": {\"b\": [1.23456, null, {\"c\": 0.5}]}}");
    tb_html_t h = {0};
    tb_html_meta_num(&h, doc, "a.b.0", 1, 2, "m");
    tb_html_meta_num(&h, doc, "a.b.1", 1, 2, NULL);
    tb_html_meta_num(&h, doc, "a.b.2.c", 100, 1, "%");
    tb_html_meta_num(&h, doc, "a.x", 1, 0, NULL);
    tb_html_text(&h, "<script>&\"'");
    char *t = tb_html_take(&h, NULL);
    ck_assert_ptr_nonnull(strstr(t, "data-meta=\"a.b.0\">1.23</span>&nbsp;m"));
    ck_assert_ptr_nonnull(strstr(t, "data-meta=\"a.b.1\">n/a</span>"));
    ck_assert_ptr_nonnull(strstr(t, "data-meta=\"a.b.2.c\" data-scale=\"100\">50.0</span>%"));
    ck_assert_ptr_nonnull(strstr(t, "data-meta=\"a.x\">n/a</span>"));
    ck_assert_ptr_nonnull(strstr(t, "&lt;script&gt;&amp;&quot;&#39;"));
    ck_assert_ptr_null(strstr(t, "<script>"));
    free(t);
    cJSON_Delete(doc);
}
END_TEST

static int s_count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

START_TEST(test_page_has_a_bar_per_bin_and_escapes_errors)
{
    tb_stats_t *s = s_cone_stats();
    cJSON *doc = cJSON_CreateObject();
    cJSON *bake = cJSON_AddObjectToObject(doc, "bake");
    cJSON_AddNumberToObject(bake, "steps", 10);
    cJSON_AddItemToObject(doc, "statistics", tb_stats_report_json(s, NULL, NULL));
    cJSON *hist = tb_report_histograms_json(s);
    int bars = 0;
    static const char *fam[] = {"slope_deg", "relief_m", "elevation_m"};
    for (int f = 0; f < 3; f++)
        bars += (int)tb_json_num(cJSON_GetObjectItem(hist, fam[f]), "bars") * (f == 0 ? 4 : 1);
    cJSON_AddItemToObject(doc, "histograms", hist);
    tb_report_page_t pg = {.state = "failed",
                           .error = "region 2 failed 3 times: <b>bad</b>",
                           .written_unix = 1e9,
                           .interval_s = 2};
    char *page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(page);
    ck_assert_int_eq(s_count(page, "<rect class=\"bar\""), bars);
    ck_assert_ptr_nonnull(strstr(page, "region 2 failed 3 times: &lt;b&gt;bad&lt;/b&gt;"));
    ck_assert_ptr_nonnull(strstr(page, "data-state=\"failed\""));
    ck_assert_ptr_null(strstr(page, "http-equiv=\"refresh\"")); /* a failed page does not reload */
    free(page);
    pg.state = "running";
    pg.error = NULL;
    page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(strstr(page, "http-equiv=\"refresh\" content=\"2\""));
    free(page);
    cJSON_Delete(doc);
    tb_stats_destroy(&s);
}
END_TEST

/* The running page's tile lattice: a running job whose result has arrived ("received") is drawn as
 * on the coordinator, not as running on a worker; the control is the same job without the flag. */
START_TEST(test_the_lattice_tells_a_result_on_the_coordinator_from_a_running_job)
{
    cJSON *doc =
        cJSON_Parse("{\"bake\": {\"steps\": 10}, \"live\": {\"records\": {\"tiles\": {\"jobs\": ["
                    "{\"label\": \"tile c000r000\", \"state\": \"done\", \"weight\": 1},"
                    "{\"label\": \"tile c001r000\", \"state\": \"running\", \"received\": true,"
                    " \"weight\": 1},"
                    "{\"label\": \"tile c002r000\", \"state\": \"running\", \"weight\": 1},"
                    "{\"label\": \"tile c000r001\", \"state\": \"queued\", \"weight\": 1}]}}}}");
    ck_assert_ptr_nonnull(doc);
    tb_tile_lattice_t L = {.cols = 3, .rows = 2, .tile_cells = 2500, .cell_m = 2};
    tb_report_page_t pg = {.state = "running",
                           .phase = "tiles",
                           .trail = "plan,tiles",
                           .written_unix = 1e9,
                           .interval_s = 2,
                           .lattice = &L};
    char *page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(page);
    ck_assert_ptr_nonnull(strstr(page, "class=\"tile t-done\" data-tile=\"c000r000\""));
    ck_assert_ptr_nonnull(strstr(page, "class=\"tile t-coord\" data-tile=\"c001r000\""));
    ck_assert_ptr_nonnull(strstr(page, "class=\"tile t-running\" data-tile=\"c002r000\""));
    ck_assert_ptr_nonnull(strstr(page, "class=\"tile t-queued\" data-tile=\"c000r001\""));
    ck_assert_ptr_nonnull(strstr(page, "on the coordinator 1 <span class=\"sw t-running\"></span>"
                                       " running 1 "));
    free(page);
    cJSON *jobs = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "live"), "records"),
                            "tiles"),
        "jobs");
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(jobs, 1), "received");
    page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(strstr(page, "class=\"tile t-running\" data-tile=\"c001r000\""));
    ck_assert_ptr_null(strstr(page, "class=\"tile t-coord\""));
    free(page);
    cJSON_Delete(doc);
}
END_TEST

/* The verdict's gates on a painted class ("painted.CLASS.STAT") read the class's element of
 * "painted_classes", as `terrain gate` does: the page once looked them up as whole-planet metrics
 * and said every one of them had no value (docs/report.md). */
START_TEST(test_painted_class_gates_have_their_values)
{
    tb_stats_t *s = s_cone_stats();
    cJSON *doc = cJSON_CreateObject();
    cJSON *bake = cJSON_AddObjectToObject(doc, "bake");
    cJSON_AddNumberToObject(bake, "steps", 10);
    cJSON *st = tb_stats_report_json(s, NULL, NULL);
    cJSON_DeleteItemFromObjectCaseSensitive(st, "painted_classes"); /* none without a legend */
    cJSON *painted = cJSON_AddArrayToObject(st, "painted_classes");
    cJSON *range = cJSON_CreateObject();
    cJSON_AddStringToObject(range, "name", "range");
    cJSON_AddNumberToObject(range, "land_cells", 1000);
    cJSON_AddNumberToObject(range, "land_share", 0.1);
    cJSON_AddNumberToObject(range, "slope_median_deg", 47.5); /* above the default band */
    cJSON_AddItemToArray(painted, range);
    cJSON_AddItemToObject(doc, "statistics", st);
    tb_report_page_t pg = {.state = "finished", .written_unix = 1e9, .interval_s = 2};
    char *page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(page);
    ck_assert_ptr_nonnull(strstr(page, "painted.range.slope_median_deg"));
    ck_assert_msg(!strstr(page, "painted.range.slope_median_deg has no value"),
                  "the page does not read the painted class's median slope");
    ck_assert_ptr_nonnull(strstr(page, "47.5"));
    /* control: a class the statistics do not have has no value */
    ck_assert_ptr_nonnull(strstr(page, "painted.range.relief_median_m has no value"));
    free(page);
    cJSON_Delete(doc);
    tb_stats_destroy(&s);
}
END_TEST

START_TEST(test_maps_have_a_legend_and_a_dark_sea)
{
    const int64_t w = 40, h = 20;
    float v[40 * 20];
    uint8_t land[40 * 20];
    for (int64_t i = 0; i < w * h; i++) {
        v[i] = (float)(i % w);
        land[i] = i % w >= 20;
    }
    tb_image_t img;
    tb_err_t err;
    ck_assert_int_eq(tb_map_slope(v, land, w, h, 4096, &img, &err), 0);
    ck_assert_int_eq(img.w, 40);
    ck_assert_int_eq(img.h, 20 + TB_REPORT_LEGEND_ROWS);
    const uint8_t *px = img.pixels;
    ck_assert(px[0] == 8 && px[1] == 12 && px[2] == 24);   /* sea */
    ck_assert(!(px[3 * 30] == 8 && px[3 * 30 + 1] == 12)); /* land */
    size_t bar = 3 * tb_idx(40, 20, 20 + 18);              /* inside the legend bar */
    ck_assert(!(px[bar] == 8 && px[bar + 1] == 12 && px[bar + 2] == 24));
    tb_image_free(&img);
    /* reduced by 2: the block's largest value */
    ck_assert_int_eq(tb_map_relief(v, land, w, h, 504, 20, &img, &err), 0);
    ck_assert_int_eq(img.w, 20);
    ck_assert_int_eq(img.h, 10 + TB_REPORT_LEGEND_ROWS);
    tb_image_free(&img);
    ck_assert_int_eq(tb_map_erodibility(v, land, w, h, 0.5, 4096, &img, &err), 0);
    tb_image_free(&img);
    /* the reduced heightmap is the block mean */
    ck_assert_int_eq(tb_map_height16_low(v, w, h, 0, 65.535, 20, &img, &err), 0);
    ck_assert_int_eq(img.w, 20);
    ck_assert_int_eq(img.format, TB_PNG_GRAY16);
    const uint16_t *g = img.pixels;
    ck_assert_int_eq(g[3], 6500); /* columns 6 and 7: a mean of 6.5 m, in steps of 1 mm */
    tb_image_free(&img);
}
END_TEST

START_TEST(test_erodibility_on_own_land_and_uplift_check)
{
    tb_planet_input_t in = {0};
    tb_input_options_t opt = {.has_circumference = true, .circumference_km = 10};
    tb_err_t err;
    ck_assert_int_eq(tb_planet_input_load(NULL, &opt, &in, &err), 0);
    tb_plan_t *plan = tb_plan_new(&in.manifest, tb_planet_input_rows(&in), NULL, NULL, 2, &err);
    ck_assert_ptr_nonnull(plan);
    const tb_manifest_t *m = tb_plan_manifest(plan);
    tb_uplift_probes_t probes;
    ck_assert_int_eq(tb_uplift_probes_compute(m, &probes, &err), 0);
    size_t cells = (size_t)in.planet_w * (size_t)in.planet_h;
    float *k = malloc(cells * sizeof(float)), *u = calloc(cells, sizeof(float));
    int64_t mism = -1;
    ck_assert_int_eq(tb_report_erodibility_field(plan, &probes, NULL, k, NULL, &mism, &err), 0);
    /* K on land only, between the class multipliers and rock range times solve.k */
    const uint8_t *cls = (const uint8_t *)tb_plan_class_raster(plan)->data;
    size_t land = 0;
    for (size_t i = 0; i < cells; i++) {
        bool is_land = m->legend.classes[cls[i]].kind == TB_CLASS_LAND;
        if (!is_land) {
            ck_assert(k[i] == 0);
            continue;
        }
        land += k[i] > 0;
        ck_assert(k[i] < m->solve.k * 10 && k[i] > m->solve.k * 0.05);
    }
    ck_assert_uint_eq(land, (size_t)tb_plan_summary(plan)->land_cells);
    /* the uplift check: the field the regions would return gives 0, one changed land cell 1 */
    for (int ri = 0; ri < tb_plan_region_count(plan); ri++) {
        const tb_plan_region_t *reg = tb_plan_region(plan, ri);
        tb_grid_t *c = NULL, *mask = NULL;
        ck_assert_int_eq(tb_plan_region_grids(plan, ri, &c, &mask, &err), 0);
        size_t bc = (size_t)reg->box.w * (size_t)reg->box.h;
        float *bu = malloc(bc * sizeof(float)), *bk = malloc(bc * sizeof(float));
        ck_assert_int_eq(tb_uplift_build(m, &probes, &reg->box, tb_grid_cu8(c), bu, bk, &err), 0);
        for (int64_t j = 0; j < reg->box.h; j++)
            for (int64_t i = 0; i < reg->box.w; i++)
                if (tb_grid_cu8(mask)[tb_idx(reg->box.w, i, j)])
                    u[tb_idx(in.planet_w, tb_frame_lattice_x(&reg->box, i), reg->box.y0 + j)] =
                        bu[tb_idx(reg->box.w, i, j)];
        free(bu);
        free(bk);
        tb_grid_destroy(&c);
        tb_grid_destroy(&mask);
    }
    ck_assert_int_eq(tb_report_erodibility_field(plan, &probes, NULL, k, u, &mism, &err), 0);
    ck_assert_int_eq(mism, 0);
    for (size_t i = 0; i < cells; i++)
        if (k[i] > 0) {
            u[i] += 1e-6f;
            break;
        }
    ck_assert_int_eq(tb_report_erodibility_field(plan, &probes, NULL, k, u, &mism, &err), 0);
    ck_assert_int_eq(mism, 1);
    free(k);
    free(u);
    tb_plan_destroy(&plan);
    tb_planet_input_free(&in);
}
END_TEST

/* The coast block of a finished page's verdict: every number of meta.json's "coast" (and the coast
 * job's seconds) is printed tagged with its path. Returns the first key with no tagged number on
 * the page, or NULL when all are there. */
static const char *s_untagged_coast_key(const char *page, const cJSON *coast)
{
    static char missing[128];
    const cJSON *k;
    cJSON_ArrayForEach(k, coast)
    {
        if (!cJSON_IsNumber(k))
            continue;
        snprintf(missing, sizeof missing, "data-meta=\"coast.%s\"", k->string);
        if (!strstr(page, missing))
            return missing;
    }
    return NULL;
}

static cJSON *s_coast_doc(tb_stats_t *s)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *bake = cJSON_AddObjectToObject(doc, "bake");
    cJSON_AddNumberToObject(bake, "steps", 10);
    cJSON_AddItemToObject(doc, "statistics", tb_stats_report_json(s, NULL, NULL));
    cJSON_AddItemToObject(
        doc, "coast",
        cJSON_Parse("{\"shoreline_km\": 267.25, \"sea_share\": 0.7412, \"shelf_share\": 1,"
                    " \"waterline_cells\": 4321, \"planed_km2\": 6.87, \"cut_mm3\": 15.03,"
                    " \"river_mouths\": 256, \"river_mm3\": 3.5, \"laid_mm3\": 18.51,"
                    " \"unplaced_mm3\": 0.0187, \"unplaced_share\": 0.001,"
                    " \"unplaced_no_shallows_mm3\": 0.01, \"unplaced_full_mm3\": 0.008,"
                    " \"unplaced_rounding_mm3\": 0.0007, \"budget_relative_error\": 1.5e-7,"
                    " \"beach_km2\": 1.93, \"backshore_median_m\": 17.2, \"backshore_p90_m\": 36.1,"
                    " \"drowned_km2\": 0, \"exposure_p10\": 0.09, \"exposure_p50\": 0.26,"
                    " \"exposure_p90\": 0.59, \"seconds\": 4.25, \"dispatch\": {\"mode\": "
                    "\"local\", \"seconds\": 4.0, \"stats\": {\"jobs\": 1, \"from_store\": 0, "
                    "\"ran\": 1, \"attempts\": 1, \"failed\": 0, \"lost\": 0}, \"jobs\": "
                    "[{\"label\": \"coast\", \"worker\": \"w<1>\", \"seconds\": 3.5, "
                    "\"attempts\": []}]}}"));
    return doc;
}

START_TEST(test_coast_and_tiles_render_tagged)
{
    tb_stats_t *s = s_cone_stats();
    cJSON *doc = s_coast_doc(s);
    ck_assert_ptr_nonnull(tb_json_path(doc, "coast.dispatch"));
    const char *dir = tb_test_tmpdir("report_coast");
    tb_test_write_file(dir, "map_coast.png", "");
    tb_report_page_t pg = {.state = "finished", .written_unix = 1e9, .out_dir = dir};
    char *page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(page);
    const char *missing = s_untagged_coast_key(page, tb_json_path(doc, "coast"));
    ck_assert_msg(missing == NULL, "no %s on the page", missing);
    ck_assert_ptr_nonnull(strstr(page, "data-meta=\"coast.shoreline_km\">267.2</span>"));
    ck_assert_ptr_nonnull(
        strstr(page, "data-meta=\"coast.sea_share\" data-scale=\"100\">74.1</span>%"));
    ck_assert_ptr_nonnull(strstr(page, "data-meta=\"coast.river_mouths\">256</span>"));
    ck_assert_ptr_nonnull(strstr(page, "data-meta=\"coast.dispatch.jobs.0.seconds\">3.50</span>"));
    ck_assert_ptr_nonnull(strstr(page, "w&lt;1&gt;")); /* the worker's name, escaped */
    ck_assert_ptr_null(strstr(page, "skipped (--no-coast)"));
    ck_assert_ptr_null(strstr(page, "Coast (PARTIAL)"));
    /* the coast map is on disk, the exposure map is not */
    ck_assert_ptr_nonnull(strstr(page, "src=\"map_coast.png\""));
    ck_assert_ptr_null(strstr(page, "map_exposure.png"));
    /* no "tiles" object: no tiles section */
    ck_assert_ptr_null(strstr(page, "id=\"tiles\""));
    ck_assert_ptr_null(strstr(page, "tiles/index.json"));
    free(page);

    /* a partial bake marks the block */
    cJSON_AddItemToObject(cJSON_GetObjectItem(doc, "bake"), "partial", cJSON_CreateTrue());
    page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(strstr(page, "Coast (PARTIAL)"));
    free(page);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "bake"), "partial");

    /* tiles present: counts, margin, detail statistics tagged, the index linked */
    cJSON_AddItemToObject(
        doc, "tiles",
        cJSON_Parse("{\"tiles\": 7, \"land\": 5, \"coast\": 2, \"lattice_tiles\": 9,"
                    " \"margin_cells\": 72, \"margin_measured_cells\": 72, \"margin_forced\": 0,"
                    " \"margin_bound_cells\": 180, \"from_store\": 3, \"seconds\": 12.5,"
                    " \"parameters\": {\"size_km\": 5, \"droplet\": {\"rounds\": 4}},"
                    " \"detail_statistics\": {\"cells\": 1000, \"land_cells\": 800,"
                    " \"eroded_m3\": 1234.4, \"deposited_m3\": 1000.25,"
                    " \"channel_share_of_land\": 0.0125, \"slope_deg_histogram\": {\"plain\":"
                    " [10, 20, 30, 40]}}, \"dispatch\": {\"seconds\": 11, \"stats\": {\"jobs\": 7,"
                    " \"from_store\": 3, \"ran\": 4, \"attempts\": 4, \"failed\": 0, \"lost\": 0},"
                    " \"jobs\": []}}"));
    page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(strstr(page, "id=\"tiles\""));
    ck_assert_ptr_nonnull(strstr(page, "href=\"tiles/index.json\""));
    static const char *tagged[] = {
        "data-meta=\"tiles.land\">5</span>",
        "data-meta=\"tiles.coast\">2</span>",
        "data-meta=\"tiles.from_store\">3</span>",
        "data-meta=\"tiles.margin_cells\">72</span>",
        "data-meta=\"tiles.detail_statistics.eroded_m3\">1234</span>",
        "data-meta=\"tiles.detail_statistics.channel_share_of_land\" "
        "data-scale=\"100\">1.25</span>",
        "data-meta=\"tiles.parameters.droplet.rounds\">4</span>",
        "data-meta=\"tiles.dispatch.stats.ran\">4</span>",
    };
    for (size_t i = 0; i < sizeof tagged / sizeof tagged[0]; i++)
        ck_assert_msg(strstr(page, tagged[i]), "no %s", tagged[i]);
    /* the histogram read off: 100 cells, half passed in the third 1-degree bin, all under 15 */
    ck_assert_ptr_nonnull(strstr(page, "<td>100</td><td>&le;3&nbsp;deg</td><td>&le;4&nbsp;deg</td>"
                                       "<td>100.0%</td>"));
    free(page);

    /* --no-coast: null renders "skipped" and no coast number. Negative control: the check that
     * every coast number is tagged fails on this page. */
    cJSON_ReplaceItemInObject(doc, "coast", cJSON_CreateNull());
    page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_nonnull(strstr(page, "skipped (--no-coast)"));
    ck_assert_ptr_null(strstr(page, "data-meta=\"coast."));
    cJSON *other = s_coast_doc(s);
    ck_assert_ptr_nonnull(s_untagged_coast_key(page, cJSON_GetObjectItem(other, "coast")));
    cJSON_Delete(other);
    free(page);
    /* a meta.json from before the pass: no coast heading at all */
    cJSON_DeleteItemFromObject(doc, "coast");
    page = tb_report_page(doc, &pg, NULL);
    ck_assert_ptr_null(strstr(page, "id=\"coast\""));
    ck_assert_ptr_null(strstr(page, "skipped (--no-coast)"));
    free(page);
    cJSON_Delete(doc);
    tb_stats_destroy(&s);
}
END_TEST

/* The ETA's list schedule (coordinator/report/progress.h) on a hand-made record: two workers,
 * jobs of weight 10 costing 1 s per unit (measured by a done job: 10 s), one running job half done
 * after 5 s (5 s left), four queued: the workers end at 5 + 10 + 10 = 25 s and 10 + 10 = 20 s, so
 * the ETA is 25 s; with one worker alive the queued jobs run one after another: 5 + 40 = 45 s. No
 * job measured: no ETA. */
static cJSON *s_record(int alive)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "seconds", 15);
    cJSON *ws = cJSON_AddArrayToObject(r, "workers");
    for (int k = 0; k < 2; k++) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddBoolToObject(w, "alive", k < alive);
        cJSON_AddItemToArray(ws, w);
    }
    cJSON *jobs = cJSON_AddArrayToObject(r, "jobs");
    for (int k = 0; k < 6; k++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "weight", 10);
        cJSON *as = cJSON_AddArrayToObject(j, "attempts");
        cJSON *a = cJSON_CreateObject();
        if (k == 0) {
            cJSON_AddStringToObject(j, "state", "done");
            cJSON_AddStringToObject(a, "outcome", "ok");
            cJSON_AddNumberToObject(a, "start_s", 0);
            cJSON_AddNumberToObject(a, "seconds", 10);
            cJSON_AddItemToArray(as, a);
        } else if (k == 1) {
            cJSON_AddStringToObject(j, "state", "running");
            cJSON_AddNumberToObject(j, "progress", 0.5);
            cJSON_AddStringToObject(a, "outcome", "running");
            cJSON_AddNumberToObject(a, "start_s", 10);
            cJSON_AddNumberToObject(a, "seconds", 5);
            cJSON_AddItemToArray(as, a);
        } else {
            cJSON_AddStringToObject(j, "state", "queued");
            cJSON_Delete(a);
        }
        cJSON_AddItemToArray(jobs, j);
    }
    return r;
}

START_TEST(test_eta_is_a_list_schedule_at_the_measured_cost)
{
    cJSON *r = s_record(2);
    tb_report_progress_t p;
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert_int_eq(p.done, 1);
    ck_assert_int_eq(p.running, 1);
    ck_assert_int_eq(p.queued, 4);
    ck_assert_int_eq(p.workers, 2);
    ck_assert(p.measured);
    ck_assert_double_eq_tol(p.eta_s, 25, 1e-9);
    cJSON_Delete(r);
    r = s_record(1);
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert_double_eq_tol(p.eta_s, 45, 1e-9);
    /* nothing measured: the done job's attempt removed, the running one at no progress */
    cJSON *jobs = cJSON_GetObjectItem(r, "jobs");
    cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetArrayItem(jobs, 0), "state"), "queued");
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(jobs, 0), "attempts");
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(jobs, 1), "progress", cJSON_CreateNumber(0));
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert(!p.measured);
    ck_assert(isnan(p.eta_s));
    cJSON_Delete(r);
}
END_TEST

/* The same record (two workers, 25 s), changed one way at a time:
 * - the running job's rate since its first progress report (0.25 -> 0.5 in 1 s: 2 s left, where its
 *   whole attempt says 5 s): the workers end at 2 + 10 + 10 = 22 s; less the time since its latest
 *   report;
 * - its result arrived ("received": on the coordinator): it holds no worker, its weight is done,
 * the four queued take 20 s on the two workers, and the workers are still two (three "running" and
 * a third worker never counted);
 * - the coordinator measured at 30 s for the one result it wrote (3 s a unit) and 1 s of take-in:
 *   the five results left (50 units) take it 151 s, which bounds the ETA; without the block, the
 *   workers' 25 s and the last result's 1 s of take-in: 26 s. */
START_TEST(test_eta_reads_the_job_rate_a_received_result_and_the_coordinator)
{
    tb_report_progress_t p;
    cJSON *r = s_record(2);
    cJSON *running = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "jobs"), 1);
    cJSON *rate = cJSON_AddObjectToObject(running, "progress_rate");
    cJSON_AddNumberToObject(rate, "from", 0.25);
    cJSON_AddNumberToObject(rate, "since_s", 1);
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert_double_eq_tol(p.eta_s, 22, 1e-9);
    /* that rate ran to its latest report, 0.75 s before the record: the running job has 1.25 s
     * left, and its worker's second queued job ends at 21.25 s */
    cJSON_AddNumberToObject(rate, "age_s", 0.75);
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert_double_eq_tol(p.eta_s, 21.25, 1e-9);
    cJSON_DeleteItemFromObject(running, "progress_rate");

    cJSON_AddBoolToObject(running, "received", true);
    cJSON *extra = cJSON_CreateObject(); /* a third job running on a worker */
    cJSON_AddNumberToObject(extra, "weight", 10);
    cJSON_AddStringToObject(extra, "state", "running");
    cJSON_AddNumberToObject(extra, "progress", 0.5);
    cJSON *as = cJSON_AddArrayToObject(extra, "attempts");
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "outcome", "running");
    cJSON_AddNumberToObject(a, "start_s", 10);
    cJSON_AddNumberToObject(a, "seconds", 5);
    cJSON_AddItemToArray(as, a);
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert_int_eq(p.running, 1);
    ck_assert_double_eq_tol(p.eta_s, 20, 1e-9);
    cJSON_AddItemToArray(cJSON_GetObjectItem(r, "jobs"), extra);
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert_int_eq(p.running, 2);
    ck_assert_int_eq(p.workers, 2);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(r, "jobs"), 6);
    cJSON_DeleteItemFromObject(running, "received");

    cJSON_AddNumberToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "jobs"), 0), "take_in_s", 1);
    cJSON *co = cJSON_AddObjectToObject(r, "coordinator");
    cJSON_AddNumberToObject(co, "results", 1);
    cJSON_AddNumberToObject(co, "seconds", 30);
    cJSON_AddNumberToObject(co, "outstanding", 0);
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert(p.coordinator_bound);
    ck_assert_double_eq_tol(p.coordinator_s, 31, 1e-9);
    ck_assert_double_eq_tol(p.eta_s, 151, 1e-9);
    char text[512];
    tb_report_progress_text(&p, "tiles", "tiles", text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "the coordinator's 31.00 s a result"));
    cJSON_DeleteItemFromObject(r, "coordinator");
    ck_assert_int_eq(tb_report_progress_of(r, 0, &p), 0);
    ck_assert(!p.coordinator_bound);
    ck_assert_double_eq_tol(p.eta_s, 26, 1e-9);
    cJSON_Delete(r);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *t = tcase_create("report");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_histograms_count_every_land_cell);
    tcase_add_test(t, test_numbers_are_tagged_and_null_is_na);
    tcase_add_test(t, test_page_has_a_bar_per_bin_and_escapes_errors);
    tcase_add_test(t, test_maps_have_a_legend_and_a_dark_sea);
    tcase_add_test(t, test_erodibility_on_own_land_and_uplift_check);
    tcase_add_test(t, test_coast_and_tiles_render_tagged);
    tcase_add_test(t, test_painted_class_gates_have_their_values);
    tcase_add_test(t, test_eta_is_a_list_schedule_at_the_measured_cost);
    tcase_add_test(t, test_eta_reads_the_job_rate_a_received_result_and_the_coordinator);
    tcase_add_test(t, test_the_lattice_tells_a_result_on_the_coordinator_from_a_running_job);
    suite_add_tcase(s, t);
    return s;
}
