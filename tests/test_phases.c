/* The bake's phase driver (coordinator/bake/driver.c) on tables of made-up phases over a small
 * planet: phases run in table order; the rasters a phase writes are ready (with their fill values)
 * before it runs; a phase that reads an artifact no earlier phase made is refused before it runs,
 * naming the phase and the artifact, unless its producer was skipped, which skips it too with the
 * reason; a skipped phase is recorded as skipped and its artifacts are not made; every phase is
 * recorded with its reads and writes; an error stops the table; two producers of one artifact are
 * refused. The bake's own table is checked too: one producer per artifact, each phase reads only
 * what an earlier one makes, every artifact is made by some phase. And the planet's rasters as
 * files: made, written, let go and read back, a second name without a copy, a symbolic link
 * refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/bake/phase.h"
#include "coordinator/bake/planet.h"

static char s_order[16];
static int s_n_run;

static void s_mark(char c)
{
    s_order[s_n_run++] = c;
    s_order[s_n_run] = '\0';
}

static int s_write_land(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    (void)err;
    s_mark('L');
    float *land = tb_planet_land_m(ctx->planet);
    for (size_t i = 0; i < tb_planet_cells(ctx->planet); i++)
        land[i] = (float)i;
    return 0;
}

static int s_check_fills(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    (void)err;
    s_mark('F');
    /* the driver made basin (fill -1) and height (fill 0) before this phase ran */
    const int32_t *basin = tb_planet_cbasin(ctx->planet);
    const float *height = tb_planet_cheight_m(ctx->planet);
    ck_assert_ptr_nonnull(basin);
    ck_assert_ptr_nonnull(height);
    for (size_t i = 0; i < tb_planet_cells(ctx->planet); i++) {
        ck_assert_int_eq(basin[i], -1);
        ck_assert(height[i] == 0.0f);
    }
    /* and an array nobody declared is still not there */
    ck_assert_ptr_null(tb_planet_cuplift_m_yr(ctx->planet));
    return 0;
}

static int s_fails(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    (void)ctx;
    s_mark('X');
    return tb_err_set(err, TB_E_JOB, "made-up failure");
}

static int s_never(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    (void)ctx;
    (void)err;
    s_mark('N');
    return 0;
}

static const char *s_always_skip(const tb_bake_ctx_t *ctx)
{
    (void)ctx;
    return "not wanted in this bake";
}

static const tb_phase_t s_land = {
    .name = "land", .writes = TB_ART_BIT(LAND_M), .run = s_write_land};
static const tb_phase_t s_fills = {.name = "fills",
                                   .reads = TB_ART_BIT(LAND_M),
                                   .writes = TB_ART_BIT(BASIN) | TB_ART_BIT(HEIGHT_M),
                                   .run = s_check_fills};
static const tb_phase_t s_reads_uplift = {
    .name = "wants-uplift", .reads = TB_ART_BIT(UPLIFT_M_YR), .run = s_never};
static const tb_phase_t s_skipped = {
    .name = "skipped", .writes = TB_ART_BIT(UPLIFT_M_YR), .skip = s_always_skip, .run = s_never};
static const tb_phase_t s_failing = {.name = "failing", .run = s_fails};

static tb_bake_opts_t s_opts;
static tb_bake_outcome_t s_out;

static tb_bake_ctx_t s_ctx(void)
{
    memset(&s_opts, 0, sizeof s_opts);
    s_opts.out_dir = "/nonexistent-never-written";
    s_opts.quiet = true;
    memset(&s_out, 0, sizeof s_out);
    tb_err_t err;
    tb_bake_ctx_t ctx = {.opts = &s_opts, .out = &s_out};
    ctx.planet = tb_planet_new(12, 5, NULL, &err);
    ck_assert_ptr_nonnull(ctx.planet);
    s_n_run = 0;
    s_order[0] = '\0';
    return ctx;
}

START_TEST(test_phases_run_in_order_with_their_arrays_ready)
{
    tb_bake_ctx_t ctx = s_ctx();
    const tb_phase_t *table[] = {&s_land, &s_skipped, &s_fills};
    tb_err_t err;
    ck_assert_msg(tb_bake_run_phases(&ctx, table, 3, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(s_order, "LF");
    ck_assert_int_eq(ctx.n_records, 3);
    ck_assert_str_eq(ctx.records[0].name, "land");
    ck_assert(ctx.records[0].ran && !ctx.records[0].skipped);
    ck_assert_uint_eq(ctx.records[0].writes, TB_ART_BIT(LAND_M));
    ck_assert_str_eq(ctx.records[1].name, "skipped");
    ck_assert(!ctx.records[1].ran);
    ck_assert_str_eq(ctx.records[1].skipped, "not wanted in this bake");
    ck_assert_uint_eq(ctx.records[2].reads, TB_ART_BIT(LAND_M));
    ck_assert(ctx.records[2].seconds >= 0);
    /* the skipped phase's array was never made */
    ck_assert_uint_eq(tb_planet_present(ctx.planet, TB_PLANET_BIT(UPLIFT_M_YR)), 0);
    ck_assert(tb_planet_cland_m(ctx.planet)[59] == 59.0f);
    tb_planet_destroy(&ctx.planet);
}
END_TEST

START_TEST(test_a_read_no_earlier_phase_made_is_refused)
{
    tb_bake_ctx_t ctx = s_ctx();
    /* nobody in the table makes uplift: refused before the reader runs, naming both */
    const tb_phase_t *table[] = {&s_land, &s_reads_uplift, &s_fills};
    tb_err_t err;
    ck_assert_int_eq(tb_bake_run_phases(&ctx, table, 3, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INTERNAL);
    ck_assert_msg(strstr(err.msg, "wants-uplift") && strstr(err.msg, "uplift_m_yr"), "%s", err.msg);
    ck_assert_str_eq(s_order, "L"); /* refused before it ran, and nothing after it ran */
    tb_planet_destroy(&ctx.planet);

    /* its producer was skipped: the reader is skipped too, saying why, and the table goes on */
    ctx = s_ctx();
    const tb_phase_t *skipping[] = {&s_land, &s_skipped, &s_reads_uplift, &s_fills};
    ck_assert_msg(tb_bake_run_phases(&ctx, skipping, 4, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(s_order, "LF");
    ck_assert_msg(ctx.records[2].skipped && strstr(ctx.records[2].skipped, "uplift_m_yr") &&
                      strstr(ctx.records[2].skipped, "not made") &&
                      strstr(ctx.records[2].skipped, "not wanted in this bake"),
                  "%s", ctx.records[2].skipped ? ctx.records[2].skipped : "(ran)");
    tb_planet_destroy(&ctx.planet);

    /* the control: the same reader after a phase that writes uplift runs */
    static const tb_phase_t writes_uplift = {
        .name = "uplift", .writes = TB_ART_BIT(UPLIFT_M_YR), .run = s_never};
    ctx = s_ctx();
    const tb_phase_t *fixed[] = {&s_land, &writes_uplift, &s_reads_uplift};
    ck_assert_msg(tb_bake_run_phases(&ctx, fixed, 3, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(s_order, "LNN");
    tb_planet_destroy(&ctx.planet);
}
END_TEST

START_TEST(test_two_producers_of_one_artifact_are_refused)
{
    static const tb_phase_t land_again = {
        .name = "land-again", .writes_maybe = TB_ART_BIT(LAND_M), .run = s_never};
    tb_bake_ctx_t ctx = s_ctx();
    const tb_phase_t *table[] = {&s_land, &land_again};
    tb_err_t err;
    ck_assert_int_eq(tb_bake_run_phases(&ctx, table, 2, &err), -1);
    ck_assert_msg(strstr(err.msg, "land and land-again both make land_m"), "%s", err.msg);
    ck_assert_str_eq(s_order, ""); /* before anything ran */
    tb_planet_destroy(&ctx.planet);
}
END_TEST

START_TEST(test_an_error_stops_the_table)
{
    tb_bake_ctx_t ctx = s_ctx();
    const tb_phase_t *table[] = {&s_land, &s_failing, &s_fills};
    tb_err_t err;
    ck_assert_int_eq(tb_bake_run_phases(&ctx, table, 3, &err), -1);
    ck_assert_int_eq(err.code, TB_E_JOB);
    ck_assert_str_eq(err.msg, "made-up failure");
    ck_assert_str_eq(s_order, "LX");
    ck_assert_int_eq(ctx.n_records, 2);
    tb_planet_destroy(&ctx.planet);
}
END_TEST

START_TEST(test_the_bake_table_reads_only_what_was_made)
{
    ck_assert_int_ge(tb_bake_n_phases, 4);
    ck_assert_str_eq(tb_bake_phases[0]->name, "plan");
    tb_err_t err;
    ck_assert_msg(tb_bake_check_producers(tb_bake_phases, tb_bake_n_phases, &err) == 0, "%s",
                  err.msg);
    uint64_t made = 0;
    for (int i = 0; i < tb_bake_n_phases; i++) {
        const tb_phase_t *p = tb_bake_phases[i];
        ck_assert_msg((p->reads & ~made) == 0, "phase %s reads an artifact no earlier phase makes",
                      p->name);
        ck_assert_msg((p->reads_maybe & ~made) == 0, "phase %s may read what nothing before makes",
                      p->name);
        made |= p->writes | p->writes_maybe;
    }
    /* every artifact is made by some phase of the bake */
    ck_assert_uint_eq(made, ((uint64_t)1 << TB_ART_N) - 1);
}
END_TEST

START_TEST(test_planet_arrays)
{
    tb_err_t err;
    ck_assert_ptr_null(tb_planet_new(0, 5, NULL, &err));
    ck_assert_int_eq(err.code, TB_E_INVALID);
    tb_planet_t *p = tb_planet_new(7, 3, NULL, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(tb_planet_cells(p), 21);
    ck_assert_ptr_null(tb_planet_basin(p));
    ck_assert_int_eq(tb_planet_provide(p, TB_PLANET_BIT(BASIN) | TB_PLANET_BIT(SOLVED), &err), 0);
    ck_assert_int_eq(tb_planet_basin(p)[20], -1);
    ck_assert_int_eq(tb_planet_solved(p)[20], 0);
    tb_planet_basin(p)[3] = 9;
    /* providing again keeps what is there */
    ck_assert_int_eq(tb_planet_provide(p, TB_PLANET_BIT(BASIN), &err), 0);
    ck_assert_int_eq(tb_planet_basin(p)[3], 9);
    ck_assert_str_eq(tb_planet_array_name(TB_PLANET_HEIGHT_M), "height_m");
    tb_planet_destroy(&p);
    ck_assert_ptr_null(p);
}
END_TEST

/* The resident size of the calling process's mappings of `path`, in KiB (from /proc/self/smaps). */
static long s_resident_kib(const char *path)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    ck_assert_ptr_nonnull(f);
    char line[4600];
    long total = 0;
    bool in = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        long kb;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's header line */
            in = strstr(line, path) != NULL;
        else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
            total += kb;
    }
    fclose(f);
    return total;
}

START_TEST(test_planet_arrays_in_files)
{
    char dir[] = "/tmp/tb_planet_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char sub[64], path[128];
    snprintf(sub, sizeof sub, "%s/.planet", dir);
    tb_err_t err;
    int64_t w = 1024, h = 512; /* 2 MB of f32 */
    tb_planet_t *p = tb_planet_new(w, h, sub, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(tb_planet_provide(p, TB_PLANET_BIT(COMPOSITE_M) | TB_PLANET_BIT(BASIN), &err),
                     0);
    ck_assert_int_eq(tb_planet_path(p, TB_PLANET_COMPOSITE_M, path, sizeof path, &err), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, w * h * 4);
    ck_assert_int_eq(tb_planet_cbasin(p)[w * h - 1], -1); /* its fill, in the file */
    float *c = tb_planet_composite_m(p);
    for (int64_t i = 0; i < w * h; i++)
        c[i] = (float)i;
    ck_assert_int_gt(s_resident_kib(path), 1500);
    /* let go: no longer resident, and what was written is still there, from the file */
    tb_planet_release(p, TB_PLANET_COMPOSITE_M, 0, h);
    ck_assert_int_lt(s_resident_kib(path), 16);
    ck_assert(c[12345] == 12345.0f && c[w * h - 1] == (float)(w * h - 1));
    uint64_t hash = tb_planet_hash(p, TB_PLANET_COMPOSITE_M);
    /* a second name, no copy: the same cells */
    ck_assert_int_eq(tb_planet_provide(p, TB_PLANET_BIT(HEIGHT_M), &err), 0);
    ck_assert_int_eq(tb_planet_alias(p, TB_PLANET_HEIGHT_M, TB_PLANET_COMPOSITE_M, &err), 0);
    ck_assert(tb_planet_cheight_m(p)[777] == 777.0f);
    ck_assert_uint_eq(tb_planet_hash(p, TB_PLANET_HEIGHT_M), hash);
    tb_planet_destroy(&p);
    /* the files stay; a new planet over them makes fresh arrays, and a height_m that was a second
     * name of the composite is replaced, not written through (the composite keeps its cells) */
    p = tb_planet_new(w, h, sub, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tb_planet_provide(p, TB_PLANET_BIT(HEIGHT_M), &err), 0);
    ck_assert(tb_planet_cheight_m(p)[777] == 0.0f);
    tb_planet_height_m(p)[0] = 5.0f;
    FILE *f = fopen(path, "rb");
    float first = -1;
    ck_assert_int_eq(fread(&first, sizeof first, 1, f), 1);
    fclose(f);
    ck_assert(first == 0.0f); /* composite_m.f32's first cell, untouched */
    tb_planet_destroy(&p);
    /* a symbolic link where an array's file goes is refused, naming it */
    char link_path[160];
    snprintf(link_path, sizeof link_path, "%s/solved.u8", sub);
    ck_assert_int_eq(symlink("/tmp/elsewhere-never-written", link_path), 0);
    p = tb_planet_new(w, h, sub, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tb_planet_provide(p, TB_PLANET_BIT(SOLVED), &err), -1);
    ck_assert_msg(strstr(err.msg, "solved.u8") != NULL, "%s", err.msg);
    tb_planet_destroy(&p);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_a_phase_adds_its_own_meta_section)
{
    tb_bake_ctx_t ctx = s_ctx();
    tb_err_t err;
    ck_assert_int_eq(tb_bake_meta_add(&ctx, "coast", cJSON_CreateNumber(3), &err), 0);
    /* the bake's own sections and a second "coast" are refused */
    ck_assert_int_eq(tb_bake_meta_add(&ctx, "outputs", cJSON_CreateNumber(1), &err), -1);
    ck_assert_int_eq(err.code, TB_E_INTERNAL);
    ck_assert_int_eq(tb_bake_meta_add(&ctx, "coast", cJSON_CreateNumber(4), &err), -1);
    ck_assert_int_eq(cJSON_GetArraySize(ctx.meta_sections), 1);
    ck_assert(cJSON_GetObjectItem(ctx.meta_sections, "coast")->valuedouble == 3);
    cJSON_Delete(ctx.meta_sections);
    tb_planet_destroy(&ctx.planet);
}
END_TEST

Suite *phases_suite(void)
{
    Suite *s = suite_create("phases");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_phases_run_in_order_with_their_arrays_ready);
    tcase_add_test(tc, test_a_read_no_earlier_phase_made_is_refused);
    tcase_add_test(tc, test_two_producers_of_one_artifact_are_refused);
    tcase_add_test(tc, test_an_error_stops_the_table);
    tcase_add_test(tc, test_the_bake_table_reads_only_what_was_made);
    tcase_add_test(tc, test_planet_arrays);
    tcase_add_test(tc, test_planet_arrays_in_files);
    tcase_add_test(tc, test_a_phase_adds_its_own_meta_section);
    suite_add_tcase(s, tc);
    return s;
}
