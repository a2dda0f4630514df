/* `terrain plan` and `terrain init` end to end, through the built binary: the demo plans with no
 * arguments and writes its three files; init writes a planet that plans back to the same regions;
 * every broken input exits non-zero naming the problem and leaves no file under a final name. */
#include <check.h>
#include <cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/png_io.h"
#include "support/tb_test.h"

static char s_terrain[4096];

static void s_setup(void)
{
    snprintf(s_terrain, sizeof s_terrain, "%s", tb_test_build_path("terrain"));
}

/* Runs `terrain ARGS` in directory dir; returns the exit status and the output (caller frees). */
static int s_run(const char *dir, const char *args, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "cd '%s' && TB_NO_PROGRESS=1 '%s' %s", dir, s_terrain, args);
    return tb_test_run(cmd, out);
}

static char *s_read(const char *dir, const char *name)
{
    char path[4200], *data;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (tb_fs_read_all(path, 1 << 26, &data, &n, NULL) != 0)
        return NULL;
    return data;
}

static void s_write(const char *dir, const char *name, const void *data, size_t n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(tb_fs_write_atomic(path, data, n, NULL), 0);
}

/* Entries in dir, dotfiles too (0 when it does not exist): the plan's mapped rasters are unlinked
 * files whose names start with a dot, and none may be left. */
static int s_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Files in dir (0 when it does not exist). */
static int s_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static cJSON *s_json(const char *dir, const char *name)
{
    char *text = s_read(dir, name);
    ck_assert_msg(text != NULL, "%s/%s missing", dir, name);
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "%s/%s is not JSON", dir, name);
    free(text);
    return j;
}

START_TEST(test_plan_with_no_arguments_writes_four_files)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tb_test_tmpdir("cli-plan"));
    char *out;
    int rc = s_run(dir, "plan", &out);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert_ptr_nonnull(strstr(out, "regions:"));
    ck_assert_ptr_nonnull(strstr(out, "divide deg"));
    ck_assert_ptr_nonnull(strstr(out, "seam disagreement"));
    ck_assert_ptr_nonnull(strstr(out, "FLOOR"));
    ck_assert_ptr_nonnull(strstr(out, "snapped wavelengths"));
    /* the demo's 25 x 8 km: 5 x 2 tiles of 5 km, the last row partial, every one with land */
    ck_assert_ptr_nonnull(strstr(out, "tiles: 10 of 5 km at 2 m"));
    ck_assert_ptr_nonnull(strstr(out, "the last row partial"));
    free(out);
    char plan_dir[4200];
    snprintf(plan_dir, sizeof plan_dir, "%s/out/plan", dir);
    ck_assert_int_eq(s_count_files(plan_dir), 4);
    ck_assert_int_eq(s_count_entries(plan_dir), 4);
    cJSON *plan = s_json(plan_dir, "plan.json");
    ck_assert_int_ge(cJSON_GetArraySize(cJSON_GetObjectItem(plan, "regions")), 4);
    cJSON_Delete(plan);
    tb_image_t img;
    char path[4300];
    snprintf(path, sizeof path, "%s/map_regions.png", plan_dir);
    ck_assert_int_eq(tb_png_read(path, TB_PNG_RGB8, 1 << 24, &img, NULL), 0);
    ck_assert_uint_eq(img.w, 3125);
    tb_image_free(&img);
    snprintf(path, sizeof path, "%s/map_class.png", plan_dir);
    ck_assert_int_eq(tb_png_read(path, TB_PNG_RGB8, 1 << 24, &img, NULL), 0);
    tb_image_free(&img);
    snprintf(path, sizeof path, "%s/map_tiles.png", plan_dir);
    ck_assert_int_eq(tb_png_read(path, TB_PNG_RGB8, 1 << 24, &img, NULL), 0);
    ck_assert_uint_eq(img.w, 3125);
    tb_image_free(&img);
}
END_TEST

START_TEST(test_init_then_plan_gives_the_demo_regions)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tb_test_tmpdir("cli-init"));
    char *out;
    int rc = s_run(dir, "init world --seed 11 --circumference-km 10", &out);
    ck_assert_msg(rc == 0, "init exit %d: %s", rc, out);
    free(out);
    rc = s_run(dir, "plan --seed 11 --circumference-km 10 --out demo", &out);
    ck_assert_msg(rc == 0, "plan demo exit %d: %s", rc, out);
    free(out);
    rc = s_run(dir, "plan world/planet.json --out mine", &out);
    ck_assert_msg(rc == 0, "plan manifest exit %d: %s", rc, out);
    free(out);
    char a[4200], b[4200];
    snprintf(a, sizeof a, "%s/demo", dir);
    snprintf(b, sizeof b, "%s/mine", dir);
    cJSON *ja = s_json(a, "plan.json"), *jb = s_json(b, "plan.json");
    static const char *same[] = {"regions", "landmasses", "classes", "summary", "estimate"};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++)
        ck_assert_msg(
            cJSON_Compare(cJSON_GetObjectItem(ja, same[k]), cJSON_GetObjectItem(jb, same[k]), 1),
            "%s differs between the demo and its init files", same[k]);
    cJSON *ma = cJSON_GetObjectItem(ja, "manifest"), *mb = cJSON_GetObjectItem(jb, "manifest");
    ck_assert(
        cJSON_Compare(cJSON_GetObjectItem(ma, "legend"), cJSON_GetObjectItem(mb, "legend"), 1));
    ck_assert(cJSON_Compare(cJSON_GetObjectItem(ma, "solve"), cJSON_GetObjectItem(mb, "solve"), 1));
    ck_assert_int_eq(cJSON_GetObjectItem(mb, "seed")->valueint, 11);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    /* --seed overrides a manifest's seed; init refuses to overwrite without --force. */
    rc = s_run(dir, "plan world/planet.json --seed 99 --out reseeded", &out);
    ck_assert_int_eq(rc, 0);
    free(out);
    snprintf(a, sizeof a, "%s/reseeded", dir);
    ja = s_json(a, "plan.json");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(ja, "manifest"), "seed")->valueint,
                     99);
    cJSON_Delete(ja);
    rc = s_run(dir, "init world", &out);
    ck_assert_int_eq(rc, 2);
    ck_assert_ptr_nonnull(strstr(out, "--force"));
    free(out);
    rc = s_run(dir, "init world --force", &out);
    ck_assert_int_eq(rc, 0);
    free(out);
}
END_TEST

/* A fresh directory holding the demo planet's files (10 km), for a broken variant to be made in. */
static void s_init_world(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "%s", tb_test_tmpdir(tag));
    char *out;
    int rc = s_run(dir, "init . --circumference-km 10", &out);
    ck_assert_msg(rc == 0, "init: %s", out);
    free(out);
}

/* Plans dir/planet.json into dir/out and expects failure naming `want`, with nothing written. */
static void s_expect_refusal(const char *dir, const char *extra, const char *want)
{
    char *out, args[512];
    snprintf(args, sizeof args, "plan planet.json --out out %s", extra);
    int rc = s_run(dir, args, &out);
    ck_assert_msg(rc == 2, "expected exit 2, got %d: %s", rc, out);
    ck_assert_msg(strstr(out, want) != NULL, "message lacks \"%s\": %s", want, out);
    free(out);
    char out_dir[4200];
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    ck_assert_int_eq(s_count_entries(out_dir), 0);
    /* the plan made the directory for its rasters, and took it away again */
    ck_assert_msg(!tb_fs_exists(out_dir), "%s was left behind", out_dir);
}

START_TEST(test_colours_not_in_the_legend)
{
    char dir[4096];
    s_init_world(dir, sizeof dir, "cli-colours");
    char path[4200];
    snprintf(path, sizeof path, "%s/painting.png", dir);
    tb_image_t img;
    ck_assert_int_eq(tb_png_read(path, TB_PNG_RGB8, 1 << 24, &img, NULL), 0);
    uint8_t *px = img.pixels;
    for (uint32_t y = 100; y < 130; y++)
        for (uint32_t x = 200; x < 240; x++)
            memcpy(px + 3 * (y * img.w + x), "\xff\x00\xff", 3);
    ck_assert_int_eq(tb_png_write(path, &img, 1, NULL), 0);
    tb_image_free(&img);
    s_expect_refusal(dir, "", "match no legend colour");
    s_expect_refusal(dir, "", "#ff00ff 1200 px (e.g. x 200, y 100)");
    s_expect_refusal(dir, "", "painting.png");
}
END_TEST

START_TEST(test_duplicate_legend_colours)
{
    char dir[4096];
    s_init_world(dir, sizeof dir, "cli-dup");
    cJSON *legend = s_json(dir, "legend.json");
    cJSON *classes = cJSON_GetObjectItem(legend, "classes");
    cJSON *first = cJSON_GetArrayItem(classes, 0), *last = cJSON_GetArrayItem(classes, 4);
    cJSON_ReplaceItemInObject(
        last, "colour", cJSON_CreateString(cJSON_GetObjectItem(first, "colour")->valuestring));
    char *text = cJSON_Print(legend);
    s_write(dir, "legend.json", text, strlen(text));
    free(text);
    cJSON_Delete(legend);
    s_expect_refusal(dir, "", "share the colour");
}
END_TEST

START_TEST(test_truncated_and_missing_painting)
{
    char dir[4096];
    s_init_world(dir, sizeof dir, "cli-png");
    char path[4200], *data;
    size_t n;
    snprintf(path, sizeof path, "%s/painting.png", dir);
    ck_assert_int_eq(tb_fs_read_all(path, 1 << 26, &data, &n, NULL), 0);
    s_write(dir, "painting.png", data, n / 2);
    free(data);
    s_expect_refusal(dir, "", "painting.png: invalid PNG");
    unlink(path);
    s_expect_refusal(dir, "", "painting.png: cannot open");
}
END_TEST

START_TEST(test_circumference_not_a_whole_number_of_cells)
{
    char dir[4096];
    s_init_world(dir, sizeof dir, "cli-circ");
    cJSON *m = s_json(dir, "planet.json");
    cJSON_ReplaceItemInObject(m, "circumference_km", cJSON_CreateNumber(10.004));
    char *text = cJSON_Print(m);
    s_write(dir, "planet.json", text, strlen(text));
    free(text);
    cJSON_Delete(m);
    s_expect_refusal(dir, "", "not a whole number");
    /* A painting width that does not divide the planet (1250 cells, painting 1250 px wide): make
     * the planet 15 km round, 1875 cells, which 1250 does not divide. */
    m = s_json(dir, "planet.json");
    cJSON_ReplaceItemInObject(m, "circumference_km", cJSON_CreateNumber(15));
    text = cJSON_Print(m);
    s_write(dir, "planet.json", text, strlen(text));
    free(text);
    cJSON_Delete(m);
    s_expect_refusal(dir, "", "does not divide the planet's 1875 cells");
}
END_TEST

START_TEST(test_bad_usage)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tb_test_tmpdir("cli-usage"));
    char *out;
    ck_assert_int_eq(s_run(dir, "plan --bogus", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--bogus"));
    free(out);
    ck_assert_int_eq(s_run(dir, "plan --circumference-km 12 --out o", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "tiles"));
    free(out);
    ck_assert_int_eq(s_run(dir, "plan missing.json --out o", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "missing.json"));
    free(out);
    ck_assert_int_eq(s_count_files(dir), 0);
    ck_assert_int_eq(s_run(dir, "plan --help", &out), 0);
    free(out);
    ck_assert_int_eq(s_run(dir, "init", &out), 2);
    free(out);
}
END_TEST

Suite *plan_cli_suite(void)
{
    Suite *s = suite_create("plan_cli");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, s_setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_plan_with_no_arguments_writes_four_files);
    tcase_add_test(tc, test_init_then_plan_gives_the_demo_regions);
    tcase_add_test(tc, test_colours_not_in_the_legend);
    tcase_add_test(tc, test_duplicate_legend_colours);
    tcase_add_test(tc, test_truncated_and_missing_painting);
    tcase_add_test(tc, test_circumference_not_a_whole_number_of_cells);
    tcase_add_test(tc, test_bad_usage);
    suite_add_tcase(s, tc);
    return s;
}
