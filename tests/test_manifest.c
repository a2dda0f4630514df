/* The manifest and legend: defaults, strict checking with messages naming the key, cross-key
 * refusals with the numbers, snapping, and docs/manifest.md in step with the schema. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/manifest.h"
#include "support/tb_test.h"

static const char *GOOD_LEGEND =
    "{\"classes\": ["
    " {\"name\": \"lowland\", \"colour\": \"#5a8a3c\", \"kind\": \"land\", \"uplift_mm_yr\": 0.05,"
    "  \"massif\": {\"floor_mm_yr\": 0.01, \"fraction\": 0.2}},"
    " {\"name\": \"range\", \"colour\": [200, 120, 60], \"kind\": \"land\", \"uplift_mm_yr\": 0.25,"
    "  \"k_mult\": 0.8},"
    " {\"name\": \"shelf\", \"colour\": \"#7fb2d9\", \"kind\": \"ocean\", \"depth_m\": 60}]}";

START_TEST(test_defaults_and_a_good_manifest)
{
    tb_manifest_t m;
    tb_err_t err;
    const char *json =
        "{\"seed\": 11, \"template\": {\"painting\": \"p.png\", \"legend\": \"l.json\"},"
        " \"solve\": {\"steps\": 200}, \"elevation_m\": [-100, 400]}";
    ck_assert_msg(tb_manifest_parse(json, "m.json", "/base", &m, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(m.seed, 11);
    ck_assert_int_eq(m.solve.steps, 200);
    ck_assert_double_eq(m.solve.k, 5e-5); /* default */
    ck_assert_double_eq(m.cell_m, 8);
    ck_assert_double_eq(m.elevation_min_m, -100);
    ck_assert_double_eq(m.elevation_max_m, 400);
    ck_assert_str_eq(m.painting_path, "/base/p.png");
    ck_assert_msg(tb_legend_parse(GOOD_LEGEND, "l.json", &m.legend, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.legend.n_classes, 3);
    ck_assert_double_eq(m.legend.classes[0].massif_fraction, 0.2);
    ck_assert_double_eq(m.legend.classes[1].massif_fraction, 1); /* no massif: uniform */
    ck_assert_double_eq(m.legend.classes[1].massif_floor_mm_yr, 0.25);
    ck_assert_int_eq(m.legend.classes[1].rgb[0], 200);
    ck_assert_int_eq(m.legend.classes[2].kind, TB_CLASS_OCEAN);
    ck_assert_msg(tb_manifest_finish(&m, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.planet_w, 3125);
    ck_assert_int_eq(m.tiles_around, 5);
    /* 2.5 km massifs divide 25 km exactly; 3.3 km rock does not and is snapped to 25/8. */
    ck_assert_double_eq_tol(m.massif.wavelength_snapped_km, 2.5, 1e-12);
}
END_TEST

typedef struct {
    const char *json;
    const char *expect[3]; /* substrings the message must contain */
} s_bad_t;

#define TPL "\"template\": {\"painting\": \"p.png\", \"legend\": \"l.json\"}"

static const s_bad_t s_bad_manifests[] = {
    {"{" TPL ", \"sead\": 3}", {"m.json", "sead", "unknown key"}},
    {"{" TPL ", \"solve\": {\"stpes\": 3}}", {"solve.stpes", "unknown key"}},
    {"{" TPL ", \"solve\": {\"steps\": 0}}", {"solve.steps", "integer in 1..1000000", "got 0"}},
    {"{" TPL ", \"solve\": {\"steps\": 2.5}}", {"solve.steps", "integer", "2.5"}},
    {"{" TPL ", \"solve\": {\"steps\": \"100\"}}", {"solve.steps", "\"100\""}},
    {"{" TPL ", \"solve\": {\"k\": -1}}", {"solve.k", "number in"}},
    {"{" TPL ", \"solve\": 5}", {"solve", "expected an object"}},
    {"{" TPL ", \"seed\": -1}", {"seed", "integer"}},
    {"{" TPL ", \"cell_m\": 0}", {"cell_m", "0.5..1000"}},
    {"{" TPL ", \"elevation_m\": [100, -100]}", {"elevation_m", "low < high"}},
    {"{" TPL ", \"elevation_m\": 100}", {"elevation_m", "[low, high]"}},
    {"{\"template\": {\"legend\": \"l.json\"}}", {"template.painting", "missing"}},
    {"{\"template\": {\"painting\": \"p.png\"}}", {"template.legend", "missing"}},
    {"{\"template\": {\"painting\": \"\", \"legend\": \"l.json\"}}",
     {"template.painting", "non-empty"}},
    {"{" TPL ", \"seed\": 1, \"seed\": 2}", {"seed", "given twice"}},
    {"[1, 2]", {"m.json", "JSON object"}},
    {"{" TPL ", \"solve\": {\"steps\": 10,}}", {"m.json", "not valid JSON", "line 1"}},
    {"{" TPL ", \"regions\": {\"ocean_margin_km\": \"wide\"}}", {"regions.ocean_margin_km"}},
    {"{" TPL ", \"faults\": {\"length_km\": [5]}}", {"faults.length_km"}},
};

START_TEST(test_bad_manifests)
{
    const s_bad_t *b = &s_bad_manifests[_i];
    tb_manifest_t m;
    tb_err_t err;
    ck_assert_msg(tb_manifest_parse(b->json, "m.json", ".", &m, &err) == -1, "accepted: %s",
                  b->json);
    for (int k = 0; k < 3 && b->expect[k]; k++)
        ck_assert_msg(strstr(err.msg, b->expect[k]) != NULL, "message \"%s\" lacks \"%s\"", err.msg,
                      b->expect[k]);
}
END_TEST

static const s_bad_t s_bad_finishes[] = {
    /* 25.001 km / 8 m = 3125.125 cells */
    {"{" TPL ", \"circumference_km\": 25.001}", {"25.001", "3125.125000 cells", "cell_m 8"}},
    {"{" TPL ", \"circumference_km\": 24}", {"24", "4.800000 tiles", "size_km 5"}},
    {"{" TPL ", \"cell_m\": 7}", {"cell_m 7", "not a whole"}},
    {"{" TPL ", \"tiles\": {\"cell_m\": 10}}", {"tiles.cell_m 10", "coarser"}},
    {"{" TPL ", \"tiles\": {\"cell_m\": 3}}", {"tiles.size_km 5", "detail cells", "3"}},
};

START_TEST(test_bad_cross_key_values)
{
    const s_bad_t *b = &s_bad_finishes[_i];
    tb_manifest_t m;
    tb_err_t err;
    ck_assert_msg(tb_manifest_parse(b->json, "m.json", ".", &m, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(tb_legend_parse(GOOD_LEGEND, "l.json", &m.legend, &err), 0);
    ck_assert_msg(tb_manifest_finish(&m, &err) == -1, "accepted: %s", b->json);
    for (int k = 0; k < 3 && b->expect[k]; k++)
        ck_assert_msg(strstr(err.msg, b->expect[k]) != NULL, "message \"%s\" lacks \"%s\"", err.msg,
                      b->expect[k]);
}
END_TEST

static const s_bad_t s_bad_legends[] = {
    {"{\"classes\": [{\"name\": \"a\", \"colour\": \"#010203\", \"kind\": \"land\", "
     "\"uplift_mm_yr\": 1},"
     " {\"name\": \"b\", \"colour\": \"#010203\", \"kind\": \"ocean\", \"depth_m\": 5}]}",
     {"l.json", "share the colour", "#010203"}},
    {"{\"classes\": [{\"name\": \"a\", \"colour\": \"#010203\", \"kind\": \"land\"},"
     " {\"name\": \"o\", \"colour\": \"#0000ff\", \"kind\": \"ocean\", \"depth_m\": 5}]}",
     {"classes[0] (a).uplift_mm_yr", "missing"}},
    {"{\"classes\": [{\"name\": \"o\", \"colour\": \"#0000ff\", \"kind\": \"ocean\"}]}",
     {"classes[0] (o).depth_m", "missing"}},
    {"{\"classes\": [{\"name\": \"a\", \"colour\": \"#01020\", \"kind\": \"land\", "
     "\"uplift_mm_yr\": 1}]}",
     {"classes[0] (a).colour", "#rrggbb"}},
    {"{\"classes\": [{\"name\": \"a\", \"colour\": \"#010203\", \"kind\": \"hill\", "
     "\"uplift_mm_yr\": 1}]}",
     {"classes[0] (a).kind", "\"land\" or \"ocean\""}},
    {"{\"classes\": [{\"name\": \"a\", \"colour\": \"#010203\", \"kind\": \"land\", "
     "\"uplift_mm_yr\": 1}]}",
     {"no ocean class"}},
    {"{\"classes\": [{\"name\": \"a\", \"colour\": \"#010203\", \"kind\": \"land\", "
     "\"uplift_mm_yr\": 1,"
     " \"massif\": {\"floor_mm_yr\": 2, \"fraction\": 0.5}},"
     " {\"name\": \"o\", \"colour\": \"#0000ff\", \"kind\": \"ocean\", \"depth_m\": 5}]}",
     {"massif.floor_mm_yr", "above"}},
    {"{\"classes\": [{\"name\": \"o\", \"colour\": \"#0000ff\", \"kind\": \"ocean\", \"depth_m\": "
     "5,"
     " \"uplift_mm_yr\": 1}]}",
     {"ocean class takes depth_m only"}},
    {"{\"classes\": [{\"name\": \"o\", \"colour\": \"#0000ff\", \"kind\": \"ocean\", \"depht_m\": "
     "5}]}",
     {"depht_m", "unknown key"}},
    {"{\"clases\": []}", {"clases", "unknown key"}},
    {"{\"classes\": []}", {"classes", "non-empty"}},
};

START_TEST(test_bad_legends)
{
    const s_bad_t *b = &s_bad_legends[_i];
    tb_legend_t legend;
    tb_err_t err;
    ck_assert_msg(tb_legend_parse(b->json, "l.json", &legend, &err) == -1, "accepted: %s", b->json);
    for (int k = 0; k < 3 && b->expect[k]; k++)
        ck_assert_msg(strstr(err.msg, b->expect[k]) != NULL, "message \"%s\" lacks \"%s\"", err.msg,
                      b->expect[k]);
}
END_TEST

START_TEST(test_load_names_the_missing_legend_file)
{
    const char *dir = tb_test_tmpdir("manifest");
    char dircopy[4096];
    snprintf(dircopy, sizeof dircopy, "%s", dir);
    const char *path = tb_test_write_file(dircopy, "planet.json", "{" TPL "}");
    char pathcopy[4096];
    snprintf(pathcopy, sizeof pathcopy, "%s", path);
    tb_manifest_t m;
    tb_err_t err;
    ck_assert_int_eq(tb_manifest_load(pathcopy, &m, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "l.json"));
    ck_assert_ptr_nonnull(strstr(err.msg, "template.legend"));
    tb_test_write_file(dircopy, "l.json", GOOD_LEGEND);
    ck_assert_msg(tb_manifest_load(pathcopy, &m, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.legend.n_classes, 3);
}
END_TEST

START_TEST(test_serialised_manifest_parses_back)
{
    tb_manifest_t m, back;
    tb_err_t err;
    ck_assert_int_eq(tb_manifest_parse("{\"seed\": 99, " TPL ", \"solve\": {\"m\": 0.45}}",
                                       "m.json", ".", &m, &err),
                     0);
    char *file = tb_manifest_to_file_json(&m, "p.png", "l.json");
    ck_assert_msg(tb_manifest_parse(file, "again.json", ".", &back, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(back.seed, 99);
    ck_assert_double_eq(back.solve.m, 0.45);
    free(file);
    ck_assert_int_eq(tb_legend_parse(GOOD_LEGEND, "l.json", &m.legend, &err), 0);
    char *leg = tb_legend_to_json(&m.legend);
    tb_legend_t l2;
    ck_assert_msg(tb_legend_parse(leg, "again", &l2, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(memcmp(&l2, &m.legend, sizeof l2), 0);
    free(leg);
}
END_TEST

START_TEST(test_docs_list_every_key)
{
    /* docs/manifest.md embeds the schema table; a key added without documenting it fails here. */
    char *doc;
    size_t n;
    tb_err_t err;
    ck_assert_msg(
        tb_fs_read_all(tb_test_source_path("docs/manifest.md"), 1 << 20, &doc, &n, &err) == 0, "%s",
        err.msg);
    char *table = tb_manifest_schema_markdown();
    for (char *line = strtok(table, "\n"); line; line = strtok(NULL, "\n"))
        ck_assert_msg(strstr(doc, line) != NULL, "docs/manifest.md lacks the row: %s", line);
    free(table);
    free(doc);
}
END_TEST

Suite *manifest_suite(void)
{
    Suite *s = suite_create("manifest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_defaults_and_a_good_manifest);
    tcase_add_loop_test(tc, test_bad_manifests, 0,
                        sizeof s_bad_manifests / sizeof s_bad_manifests[0]);
    tcase_add_loop_test(tc, test_bad_cross_key_values, 0,
                        sizeof s_bad_finishes / sizeof s_bad_finishes[0]);
    tcase_add_loop_test(tc, test_bad_legends, 0, sizeof s_bad_legends / sizeof s_bad_legends[0]);
    tcase_add_test(tc, test_load_names_the_missing_legend_file);
    tcase_add_test(tc, test_serialised_manifest_parses_back);
    tcase_add_test(tc, test_docs_list_every_key);
    suite_add_tcase(s, tc);
    return s;
}
