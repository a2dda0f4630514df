/* The gates of `terrain gate` (coordinator/gate/gate.h): the built-in defaults parse; a gates
 * file's errors are named by the key's path; statistics are read from the statistics JSON as the
 * block prints them; the check passes, fails and fails on a missing value; XML escaping. The bakes
 * themselves are tests/test_gate.sh. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/gate/gate.h"
#include "jobs/stats/stats.h"
#include "jobs/stats/synthetic.h"

START_TEST(test_defaults_parse)
{
    tb_gates_t g;
    tb_err_t err;
    ck_assert_msg(tb_gates_load(NULL, &g, &err) == 0, "%s", err.msg);
    ck_assert_int_ge(g.n, 6);
    const char *must[] = {"slope_area_exponent",
                          "slope_area_r2",
                          "clip_fraction",
                          "drainage_density_per_km",
                          "plain_slope_median_deg",
                          "painted.range.slope_area_channels_exponent",
                          "painted.range.slope_area_channels_r2"};
    for (size_t k = 0; k < sizeof must / sizeof must[0]; k++) {
        bool found = false;
        for (int i = 0; i < g.n; i++)
            found |= strcmp(g.gate[i].name, must[k]) == 0;
        ck_assert_msg(found, "default gates lack %s", must[k]);
    }
    /* the exponent band holds the stream-power -m/n, and the clip gate is the bake's own 0.1 % */
    for (int i = 0; i < g.n; i++) {
        if (strcmp(g.gate[i].name, "slope_area_exponent") == 0)
            ck_assert(g.gate[i].has_min && g.gate[i].has_max && g.gate[i].min < -0.5 &&
                      g.gate[i].max > -0.5);
        if (strcmp(g.gate[i].name, "painted.range.slope_area_channels_exponent") == 0)
            ck_assert(g.gate[i].has_min && g.gate[i].has_max && g.gate[i].min < -0.5 &&
                      g.gate[i].max > -0.5);
        if (strcmp(g.gate[i].name, "clip_fraction") == 0)
            ck_assert(g.gate[i].has_max && g.gate[i].max == 0.001);
    }
    /* metric names are unique and found */
    for (int i = 0; i < tb_gate_metric_count(); i++)
        ck_assert_int_eq(tb_gate_metric_find(tb_gate_metric_name(i)), i);
    ck_assert_int_eq(tb_gate_metric_find("no_such_statistic"), -1);
}
END_TEST

/* Parses text and expects failure with `code` and a message containing `needle`. */
static void s_refused(const char *text, tb_errcode_t code, const char *needle)
{
    tb_gates_t g;
    tb_err_t err;
    ck_assert_msg(tb_gates_parse(text, "g.json", &g, &err) == -1, "accepted: %s", text);
    ck_assert_msg(err.code == code, "code %d for %s: %s", (int)err.code, text, err.msg);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message \"%s\" lacks \"%s\"", err.msg, needle);
    ck_assert_msg(strncmp(err.msg, "g.json: ", 8) == 0, "message does not name the file: %s",
                  err.msg);
}

START_TEST(test_errors_named_by_key)
{
    s_refused("{\"gates\": {\"clip_fraction\": {\"maxx\": 0.1}}}", TB_E_UNKNOWN_KEY,
              "gates.clip_fraction.maxx: unknown key");
    s_refused("{\"gates\": {\"no_such\": {\"max\": 1}}}", TB_E_UNKNOWN_KEY,
              "gates.no_such: unknown statistic");
    s_refused("{\"gate\": {}}", TB_E_UNKNOWN_KEY, "gate: unknown key");
    s_refused("{\"gates\": {\"clip_fraction\": {\"max\": \"0.1\"}}}", TB_E_INVALID,
              "gates.clip_fraction.max: expected a finite number");
    s_refused("{\"gates\": {\"slope_area_r2\": {\"why\": \"no bound\"}}}", TB_E_INVALID,
              "gates.slope_area_r2: a gate needs");
    s_refused("{\"gates\": {\"slope_area_exponent\": {\"min\": 0, \"max\": -1}}}", TB_E_INVALID,
              "gates.slope_area_exponent: min 0 is above max -1");
    s_refused("{\"gates\": {\"clip_fraction\": {\"max\": 1, \"max\": 2}}}", TB_E_INVALID,
              "gates.clip_fraction.max: given twice");
    s_refused("{\"gates\": {\"clip_fraction\": {\"max\": 1}, \"clip_fraction\": {\"max\": 2}}}",
              TB_E_INVALID, "gates.clip_fraction: given twice");
    s_refused("{\"gates\": {\"land_cells\": {\"min\": 1, \"max_change\": -1}}}", TB_E_INVALID,
              "gates.land_cells.max_change");
    s_refused("{\"gates\": {}}", TB_E_INVALID, "gates: expected a non-empty object");
    s_refused("{\"gates\": {\"land_cells\": {\"min\": 1}}, \"description\": 3}", TB_E_INVALID,
              "description: expected a string");
    s_refused("{\"gates\": [1]}", TB_E_INVALID, "gates: expected");
    s_refused("{\"gates\": {\"land_cells\": {\"min\": 1}", TB_E_FORMAT, "not valid JSON");
    s_refused("[]", TB_E_INVALID, "expected a JSON object");
    /* and a good file with every key */
    tb_gates_t g;
    tb_err_t err;
    ck_assert_msg(tb_gates_parse("{\"description\": \"x\", \"gates\": {\"plain_slope_median_deg\": "
                                 "{\"max\": 1.5, \"max_change\": 0.2, \"why\": \"plains\"}, "
                                 "\"land_cells\": {\"min\": 10}}}",
                                 "g.json", &g, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(g.n, 2);
    ck_assert(g.gate[0].has_max && !g.gate[0].has_min && g.gate[0].has_max_change);
    ck_assert_double_eq(g.gate[0].max_change, 0.2);
}
END_TEST

START_TEST(test_values_as_the_block_prints_them)
{
    /* A synthetic planet's statistics, through the report JSON, read back by name. */
    tb_err_t err;
    tb_frame_t f;
    ck_assert_int_eq(tb_frame_make(&f, 256, 192, 8, 0, 0, 256, 192, &err), 0);
    tb_synth_t syn;
    ck_assert_msg(tb_synth_planet(&f, 3, 300, &syn, &err) == 0, "%s", err.msg);
    tb_stats_params_t p;
    tb_stats_params_default(&p, 8);
    tb_stats_t *s = tb_stats_new(&p, &err);
    /* two painted classes: the west half "range", the east "low land" (a space in a name) */
    uint8_t *cls = malloc(syn.cells);
    for (size_t i = 0; i < syn.cells; i++)
        cls[i] = (uint8_t)((int64_t)(i % 256) >= 128);
    const char *names[2] = {"range", "low land"};
    ck_assert_int_eq(tb_stats_accumulate_classes(s, &f, syn.height_m, syn.area_m2, syn.uplift_m_yr,
                                                 NULL, cls, 2, names, &err),
                     0);
    free(cls);
    tb_stats_extent_t ext;
    ck_assert_int_eq(tb_stats_extent_measure(syn.height_m, syn.cells, -1024, 1024, &ext, &err), 0);
    cJSON *st = tb_stats_report_json(s, &ext, NULL);
    tb_stats_summary_t sum;
    tb_stats_summarise(s, &sum);
    const tb_stats_bucket_summary_t *all = &sum.bucket[TB_STATS_ALL],
                                    *plain = &sum.bucket[TB_STATS_PLAIN];
    ck_assert_double_eq(tb_gate_metric_value(st, tb_gate_metric_find("slope_median_deg")),
                        all->slope_median_deg);
    ck_assert_double_eq(tb_gate_metric_value(st, tb_gate_metric_find("plain_slope_median_deg")),
                        plain->slope_median_deg);
    ck_assert_double_eq(tb_gate_metric_value(st, tb_gate_metric_find("drainage_density_per_km")),
                        all->drainage_density_per_km);
    ck_assert_double_eq(tb_gate_metric_value(st, tb_gate_metric_find("slope_area_bins")),
                        all->fit.bins);
    ck_assert_double_eq(tb_gate_metric_value(st, tb_gate_metric_find("land_cells")),
                        (double)all->land_cells);
    ck_assert_double_eq(tb_gate_metric_value(st, tb_gate_metric_find("clip_fraction")),
                        (double)ext.clipped / (double)ext.cells);
    ck_assert_double_eq(tb_gate_metric_value(st, tb_gate_metric_find("all_land_relief_median_m")),
                        all->relief_median_m);
    /* painted classes by name, through tb_gate_value */
    tb_gates_t gates;
    ck_assert_msg(tb_gates_parse("{\"gates\": {\"painted.range.slope_median_deg\": {\"min\": 0},"
                                 "\"painted.low land.near_repose_share\": {\"max\": 1},"
                                 "\"painted.range.slope_area_channels_r2\": {\"min\": 0},"
                                 "\"painted.alps.relief_median_m\": {\"min\": 0},"
                                 "\"slope_area_channels_exponent\": {\"max\": 0}}}",
                                 "t.json", &gates, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(gates.n, 5);
    tb_stats_bucket_summary_t cs;
    tb_stats_summarise_class(s, tb_stats_class_find(s, "range"), &cs);
    ck_assert_int_gt(cs.land_cells, 1000);
    ck_assert_double_eq(tb_gate_value(st, &gates.gate[0]), cs.slope_median_deg);
    double r2 = tb_gate_value(st, &gates.gate[2]); /* NaN both when the fit has too few bins */
    ck_assert(r2 == cs.channel_fit.r2 || (isnan(r2) && isnan(cs.channel_fit.r2)));
    tb_stats_summarise_class(s, tb_stats_class_find(s, "low land"), &cs);
    ck_assert_double_eq(tb_gate_value(st, &gates.gate[1]), cs.near_repose_share);
    ck_assert(isnan(tb_gate_value(st, &gates.gate[3]))); /* no class of that name: no value */
    double ce = tb_gate_value(st, &gates.gate[4]);
    ck_assert(ce == all->channel_fit.exponent || (isnan(ce) && isnan(all->channel_fit.exponent)));
    /* a painted statistic that does not exist is refused by name */
    ck_assert_int_eq(tb_gates_parse("{\"gates\": {\"painted.range.slope_mean\": {\"min\": 0}}}",
                                    "t.json", &gates, &err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "gates.painted.range.slope_mean: unknown statistic"));
    /* null in the JSON (a fit of too few bins) is no value */
    cJSON *fit = cJSON_GetObjectItemCaseSensitive(st, "slope_area");
    cJSON_ReplaceItemInObjectCaseSensitive(fit, "exponent", cJSON_CreateNull());
    ck_assert(isnan(tb_gate_metric_value(st, tb_gate_metric_find("slope_area_exponent"))));
    ck_assert(isnan(tb_gate_metric_value(NULL, 0)));
    cJSON_Delete(st);
    tb_stats_destroy(&s);
    tb_synth_free(&syn);
}
END_TEST

START_TEST(test_check)
{
    tb_gates_t g;
    tb_err_t err;
    ck_assert_int_eq(tb_gates_parse("{\"gates\": {\"slope_area_exponent\": {\"min\": -0.7, "
                                    "\"max\": -0.15, \"max_change\": 0.05}}}",
                                    "g", &g, &err),
                     0);
    tb_gate_check_t c;
    tb_gate_check(&g.gate[0], -0.4, NAN, &c);
    ck_assert_int_eq(c.status, TB_GATE_PASS);
    tb_gate_check(&g.gate[0], -0.7, NAN, &c); /* inclusive */
    ck_assert_int_eq(c.status, TB_GATE_PASS);
    tb_gate_check(&g.gate[0], -0.1, NAN, &c);
    ck_assert_int_eq(c.status, TB_GATE_FAIL);
    ck_assert_ptr_nonnull(strstr(c.message, "slope_area_exponent = -0.1, outside the bound -0.7 .. "
                                            "-0.15"));
    tb_gate_check(&g.gate[0], NAN, NAN, &c);
    ck_assert_int_eq(c.status, TB_GATE_FAIL);
    ck_assert_ptr_nonnull(strstr(c.message, "no value"));
    /* the change against a baseline */
    tb_gate_check(&g.gate[0], -0.4, -0.42, &c);
    ck_assert_int_eq(c.status, TB_GATE_PASS);
    tb_gate_check(&g.gate[0], -0.4, -0.5, &c);
    ck_assert_int_eq(c.status, TB_GATE_FAIL);
    ck_assert_ptr_nonnull(strstr(c.message, "changed by +0.1 from the baseline -0.5"));
    char b[64];
    tb_gate_bound_text(&g.gate[0], b, sizeof b);
    ck_assert_str_eq(b, "-0.7 .. -0.15");
}
END_TEST

START_TEST(test_xml_escape)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    tb_gate_xml_escape(f, "a<b & \"c\" 'd'>\x01\te");
    fclose(f);
    ck_assert_str_eq(buf, "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\te");
    free(buf);
}
END_TEST

Suite *gate_suite(void)
{
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("gates");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_defaults_parse);
    tcase_add_test(tc, test_errors_named_by_key);
    tcase_add_test(tc, test_values_as_the_block_prints_them);
    tcase_add_test(tc, test_check);
    tcase_add_test(tc, test_xml_escape);
    suite_add_tcase(s, tc);
    return s;
}
