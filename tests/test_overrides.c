/* `--set KEY=VALUE` (common/manifest/override.c): good values of every kind reach the manifest and
 * replace the file's (the control loads the same file without them), each bad shape is refused
 * with a message naming the argument, the legend's keys are checked like the file's, the sections'
 * cross-key checks run after the overrides, and a path is the current directory's. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/manifest.h"
#include "support/tb_test.h"

static const char *LEGEND =
    "{\"classes\": ["
    " {\"name\": \"lowland\", \"colour\": \"#5a8a3c\", \"kind\": \"land\", \"uplift_mm_yr\": 0.05,"
    "  \"massif\": {\"floor_mm_yr\": 0.01, \"fraction\": 0.2}},"
    " {\"name\": \"range\", \"colour\": [200, 120, 60], \"kind\": \"land\", \"uplift_mm_yr\": "
    "0.25},"
    " {\"name\": \"shelf\", \"colour\": \"#7fb2d9\", \"kind\": \"ocean\", \"depth_m\": 60}]}";

static const char *MANIFEST = "{\"seed\": 3, \"template\": {\"painting\": \"p.png\", \"legend\": "
                              "\"l.json\"}, \"solve\": {\"k\": 2e-5, \"steps\": 50}}";

/* Writes the manifest and legend into a fresh directory; the manifest's path goes to path. */
static void s_planet(char *path, size_t n)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tb_test_tmpdir("overrides"));
    tb_test_write_file(dir, "l.json", LEGEND);
    tb_test_write_file(dir, "alt.json", LEGEND);
    snprintf(path, n, "%s", tb_test_write_file(dir, "planet.json", MANIFEST));
}

/* A set of the given arguments, each of which must be accepted. */
static tb_overrides_t *s_set(const char *const *args)
{
    tb_overrides_t *o = tb_overrides_new();
    ck_assert_ptr_nonnull(o);
    tb_err_t err;
    for (const char *const *a = args; *a; a++)
        ck_assert_msg(tb_overrides_add(o, *a, &err) == 0, "%s: %s", *a, err.msg);
    return o;
}

START_TEST(test_good_values_replace_the_files)
{
    char path[4096];
    s_planet(path, sizeof path);
    tb_manifest_t *m = malloc(sizeof *m);
    tb_err_t err;
    /* the control: the file's own values */
    ck_assert_msg(tb_manifest_load_overridden(path, NULL, m, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(m->solve.k, 2e-5);
    ck_assert_int_eq(m->solve.steps, 50);
    ck_assert_uint_eq(m->seed, 3);
    ck_assert_double_eq(m->legend.classes[1].uplift_mm_yr, 0.25);
    ck_assert_double_eq(m->legend.tolerance, 24);
    ck_assert_ptr_nonnull(strstr(m->painting_path, "/p.png"));
    ck_assert_int_ne(m->painting_path[0], '.');

    const char *args[] = {"solve.k=6e-5",
                          "solve.steps=300",
                          "seed=11",
                          "elevation_m=[-100, 400]",
                          "template.painting=other.png", /* a bare word: a path key takes it */
                          "legend.tolerance=30",
                          "legend.classes.range.uplift_mm_yr=0.5",
                          "legend.classes.lowland.massif.fraction=0.5",
                          "legend.classes.shelf.depth_m=80",
                          NULL};
    tb_overrides_t *o = s_set(args);
    ck_assert_int_eq(tb_overrides_count(o), 9);
    ck_assert_msg(tb_manifest_load_overridden(path, o, m, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(m->solve.k, 6e-5);
    ck_assert_int_eq(m->solve.steps, 300);
    ck_assert_uint_eq(m->seed, 11);
    ck_assert_double_eq(m->elevation_min_m, -100);
    ck_assert_double_eq(m->elevation_max_m, 400);
    /* from the command line: the current directory's, not the manifest's folder */
    ck_assert_str_eq(m->painting_path, "./other.png");
    ck_assert_double_eq(m->legend.tolerance, 30);
    ck_assert_double_eq(m->legend.classes[1].uplift_mm_yr, 0.5);
    /* range had no massif: its floor follows the rate, as the file would have it */
    ck_assert_double_eq(m->legend.classes[1].massif_floor_mm_yr, 0.5);
    ck_assert_double_eq(m->legend.classes[0].massif_fraction, 0.5);
    ck_assert_double_eq(m->legend.classes[0].massif_floor_mm_yr, 0.01); /* untouched */
    ck_assert_double_eq(m->legend.classes[2].depth_m, 80);
    ck_assert_double_eq(m->solve.m, 0.5); /* a key not given keeps the file's (default) */

    char *json = tb_overrides_to_json(o);
    ck_assert_ptr_nonnull(strstr(json, "\"solve.k\":6e-05"));
    ck_assert_ptr_nonnull(strstr(json, "\"template.painting\":\"other.png\""));
    ck_assert_ptr_nonnull(strstr(json, "\"elevation_m\":[-100,400]"));
    free(json);
    tb_overrides_destroy(&o);
    ck_assert_ptr_null(o);
    free(m);
}
END_TEST

START_TEST(test_an_overridden_legend_is_read_from_its_path)
{
    char path[4096];
    s_planet(path, sizeof path);
    tb_manifest_t *m = malloc(sizeof *m);
    tb_err_t err;
    const char *missing[] = {"template.legend=\"no-such-legend.json\"", NULL};
    tb_overrides_t *o = s_set(missing);
    ck_assert_int_eq(tb_manifest_load_overridden(path, o, m, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--set template.legend=\"no-such-legend.json\""));
    ck_assert_ptr_nonnull(strstr(err.msg, "./no-such-legend.json"));
    tb_overrides_destroy(&o);
    free(m);
}
END_TEST

typedef struct {
    const char *arg;
    const char *expect[3]; /* substrings the message must hold */
} s_bad_t;

/* Refused when added: the shape, the key, the type and the range. */
static const s_bad_t s_bad_args[] = {
    {"solve.k", {"--set solve.k:", "expected KEY=VALUE"}},
    {"=6e-5", {"--set =6e-5:", "key before '=' is empty"}},
    {"solve.k=0", {"--set solve.k=0: solve.k: expected a number in 1e-12..1, got 0"}},
    {"solve.k=abc", {"--set solve.k=abc:", "expected a number", "got \"abc\""}},
    {"solve.k=", {"--set solve.k=:", "expected a number"}},
    {"solve.steps=2.5", {"--set solve.steps=2.5:", "integer in 1..1000000", "2.5"}},
    {"solve.kk=1", {"--set solve.kk=1:", "unknown key", "did you mean solve.k?"}},
    {"slove.dt_yr=10", {"unknown key", "did you mean solve.dt_yr?"}},
    {"nothing.like.this.at.all=1", {"unknown key", "terrain schema"}},
    {"solve=1", {"--set solve=1:", "unknown key"}},
    {"elevation_m=[400, -100]", {"elevation_m", "low < high"}},
    {"elevation_m=5", {"elevation_m", "[low, high]"}},
    {"template.painting=\"\"", {"template.painting", "non-empty file path"}},
    {"legend.tolerance=300", {"legend.tolerance", "0..255", "300"}},
    {"legend.classes.range.uplift_mm_yr=500", {"legend.classes.range.uplift_mm_yr", "0..100"}},
    {"legend.classes.range.upflit_mm_yr=1", {"did you mean legend.classes.range.uplift_mm_yr?"}},
    {"legend.classes..k_mult=1", {"unknown key"}},
};

START_TEST(test_bad_arguments)
{
    const s_bad_t *b = &s_bad_args[_i];
    tb_overrides_t *o = tb_overrides_new();
    tb_err_t err;
    ck_assert_msg(tb_overrides_add(o, b->arg, &err) == -1, "%s was accepted", b->arg);
    for (int k = 0; k < 3 && b->expect[k]; k++)
        ck_assert_msg(strstr(err.msg, b->expect[k]) != NULL, "%s: message \"%s\" lacks \"%s\"",
                      b->arg, err.msg, b->expect[k]);
    ck_assert_int_eq(tb_overrides_count(o), 0);
    tb_overrides_destroy(&o);
}
END_TEST

START_TEST(test_a_key_given_twice_is_refused)
{
    tb_overrides_t *o = tb_overrides_new();
    tb_err_t err;
    ck_assert_int_eq(tb_overrides_add(o, "solve.k=6e-5", &err), 0);
    ck_assert_int_eq(tb_overrides_add(o, "solve.k=7e-5", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--set solve.k=7e-5"));
    ck_assert_ptr_nonnull(strstr(err.msg, "set twice (first by --set solve.k=6e-5)"));
    ck_assert_int_eq(tb_overrides_count(o), 1);
    tb_overrides_destroy(&o);
}
END_TEST

/* Refused when applied to the planet: what needs the legend, and the sections' cross-key checks. */
static const s_bad_t s_bad_applied[] = {
    {"legend.classes.rnage.uplift_mm_yr=1",
     {"--set legend.classes.rnage.uplift_mm_yr=1:", "no class \"rnage\"", "lowland, range, shelf"}},
    {"legend.classes.range.depth_m=10", {"range is a land class", "depth_m"}},
    {"legend.classes.shelf.k_mult=2", {"shelf is an ocean class", "k_mult"}},
    {"legend.classes.lowland.massif.floor_mm_yr=0.08",
     {"with --set legend.classes.lowland.massif.floor_mm_yr=0.08",
      "floor_mm_yr: 0.08 is above the class's uplift_mm_yr 0.05"}},
    {"tiles.splat.scree_deg=80",
     {"with --set tiles.splat.scree_deg=80:", "planet.json",
      "tiles.splat.scree_deg 80 must be below tiles.splat.rock_deg"}},
    {"cell_m=7", {"with --set cell_m=7:", "circumference_km 25", "not a whole number"}},
};

START_TEST(test_bad_when_applied)
{
    const s_bad_t *b = &s_bad_applied[_i];
    char path[4096];
    s_planet(path, sizeof path);
    const char *args[] = {b->arg, NULL};
    tb_overrides_t *o = s_set(args);
    tb_manifest_t *m = malloc(sizeof *m);
    tb_err_t err;
    ck_assert_msg(tb_manifest_load_overridden(path, o, m, &err) == -1, "%s was applied", b->arg);
    for (int k = 0; k < 3 && b->expect[k]; k++)
        ck_assert_msg(strstr(err.msg, b->expect[k]) != NULL, "%s: message \"%s\" lacks \"%s\"",
                      b->arg, err.msg, b->expect[k]);
    /* the control: the same file loads without the override */
    ck_assert_msg(tb_manifest_load_overridden(path, NULL, m, &err) == 0, "%s", err.msg);
    tb_overrides_destroy(&o);
    free(m);
}
END_TEST

Suite *overrides_suite(void)
{
    Suite *s = suite_create("overrides");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_good_values_replace_the_files);
    tcase_add_test(tc, test_an_overridden_legend_is_read_from_its_path);
    tcase_add_loop_test(tc, test_bad_arguments, 0, sizeof s_bad_args / sizeof s_bad_args[0]);
    tcase_add_test(tc, test_a_key_given_twice_is_refused);
    tcase_add_loop_test(tc, test_bad_when_applied, 0,
                        sizeof s_bad_applied / sizeof s_bad_applied[0]);
    suite_add_tcase(s, tc);
    return s;
}
