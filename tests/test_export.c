/* The export's rules (coordinator/export/export.h, docs/export.md): every preset's sizes are the
 * engine's (2^n - 1 quads of components for Unreal, 2^n + 1 for Unity and raw, 2^n for Terrain3D);
 * the grid covers the area with the engine's stride (shared edges: size - 1), wraps in X, moves
 * north to end on the planet's edge and refuses what cannot fit, naming the numbers; file names
 * follow each engine's pattern (Unity's Z counted from the south); the 16-bit scale decodes every
 * height within half a step (negative control: a scale one step off does not). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "coordinator/export/export.h"
#include "support/tb_test.h"

static tb_mosaic_info_t s_info(int64_t w, int64_t h)
{
    return (tb_mosaic_info_t){.cell_m = 2,
                              .tile_samples = 2500,
                              .cols = w / 2500,
                              .rows = (h + 2499) / 2500,
                              .planet_w = w,
                              .planet_h = h,
                              .elev_lo = -1024,
                              .elev_hi = 1024,
                              .n_tiles = 1};
}

START_TEST(test_presets_are_the_engines_sizes)
{
    const tb_export_preset_t *u = tb_export_preset(TB_EXPORT_UNREAL);
    for (int k = 0; k < u->n_sizes; k++) {
        int64_t q = u->sizes[k] - 1; /* components x sections x (2^n - 1) quads */
        ck_assert_msg(q % 63 == 0 || q % 127 == 0, "%lld", (long long)u->sizes[k]);
    }
    ck_assert(tb_export_size_valid(u, 2017) && !tb_export_size_valid(u, 2048));
    const tb_export_engine_t pow2p1[] = {TB_EXPORT_UNITY, TB_EXPORT_RAW};
    for (int e = 0; e < 2; e++) {
        const tb_export_preset_t *p = tb_export_preset(pow2p1[e]);
        for (int k = 0; k < p->n_sizes; k++) {
            int64_t q = p->sizes[k] - 1;
            ck_assert_msg(q > 0 && (q & (q - 1)) == 0, "%s %lld", p->name, (long long)p->sizes[k]);
        }
        ck_assert(p->shared_edge);
    }
    const tb_export_preset_t *g = tb_export_preset(TB_EXPORT_GODOT);
    for (int k = 0; k < g->n_sizes; k++)
        ck_assert((g->sizes[k] & (g->sizes[k] - 1)) == 0);
    ck_assert(!g->shared_edge);
    tb_export_engine_t e;
    tb_err_t err;
    ck_assert_int_eq(tb_export_engine_parse("unity", &e, &err), 0);
    ck_assert_int_eq(e, TB_EXPORT_UNITY);
    ck_assert_int_eq(tb_export_engine_parse("cryengine", &e, &err), -1);
    ck_assert_msg(strstr(err.msg, "expected unreal, unity, godot or raw") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(test_grid_covers_wraps_and_moves_north)
{
    tb_mosaic_info_t I = s_info(5000, 1600);
    tb_export_grid_t g;
    tb_err_t err;
    /* 750 samples from x = 4500: two Unreal tiles of 505 sharing a column, running past x = 5000 */
    ck_assert_int_eq(tb_export_grid_make(&I, tb_export_preset(TB_EXPORT_UNREAL),
                                         (tb_mosaic_rect_t){4500, 200, 750, 750}, 505, &g, &err),
                     0);
    ck_assert(g.nx == 2 && g.ny == 2 && g.stride == 504 && g.covered_w == 1009);
    ck_assert(g.x0 == 4500 && g.y0 == 200 && g.shifted_north == 0);
    /* Terrain3D regions do not share: stride = size */
    ck_assert_int_eq(tb_export_grid_make(&I, tb_export_preset(TB_EXPORT_GODOT),
                                         (tb_mosaic_rect_t){0, 0, 1024, 512}, 512, &g, &err),
                     0);
    ck_assert(g.nx == 2 && g.ny == 1 && g.stride == 512 && g.covered_w == 1024);
    /* past the south edge: moved north by what it overruns */
    ck_assert_int_eq(tb_export_grid_make(&I, tb_export_preset(TB_EXPORT_UNITY),
                                         (tb_mosaic_rect_t){0, 1500, 10, 100}, 513, &g, &err),
                     0);
    ck_assert(g.y0 == 1600 - 513 && g.shifted_north == 1500 + 513 - 1600);
    /* taller than the planet: refused with the numbers */
    ck_assert_int_eq(tb_export_grid_make(&I, tb_export_preset(TB_EXPORT_UNITY),
                                         (tb_mosaic_rect_t){0, 0, 10, 1600}, 2049, &g, &err),
                     -1);
    ck_assert_msg(strstr(err.msg, "more than the planet's 1600") != NULL, "%s", err.msg);
    /* a size not in the set */
    ck_assert_int_eq(tb_export_grid_make(&I, tb_export_preset(TB_EXPORT_UNREAL),
                                         (tb_mosaic_rect_t){0, 0, 10, 10}, 512, &g, &err),
                     -1);
    ck_assert_msg(strstr(err.msg, "unreal takes tiles of 127, 253, 505") != NULL, "%s", err.msg);
    /* the default is lowered to what the planet's height holds: 2017 > 1600, so 1009 */
    ck_assert_int_eq(tb_export_grid_make(&I, tb_export_preset(TB_EXPORT_UNREAL),
                                         (tb_mosaic_rect_t){0, 0, 10, 10}, 0, &g, &err),
                     0);
    ck_assert_int_eq(g.size, 1009);
}
END_TEST

START_TEST(test_names_follow_each_engine)
{
    tb_export_grid_t g = {.nx = 3, .ny = 2};
    char n[128];
    tb_export_tile_name(tb_export_preset(TB_EXPORT_UNREAL), &g, "t", "_rock", 2, 1, ".png", n,
                        sizeof n);
    ck_assert_str_eq(n, "t_rock_x2_y1.png");
    tb_export_tile_name(tb_export_preset(TB_EXPORT_UNITY), &g, "t", "", 2, 0, ".raw", n, sizeof n);
    ck_assert_str_eq(n, "t_2_1.raw"); /* the northern row is Z = 1 */
    tb_export_tile_name(tb_export_preset(TB_EXPORT_GODOT), &g, "t", "_splat", 0, 1, ".png", n,
                        sizeof n);
    ck_assert_str_eq(n, "t_splat_0_1.png");
}
END_TEST

START_TEST(test_scale_decodes_within_half_a_step)
{
    tb_export_scale_t s = tb_export_scale_of(-98.3163, 16.9981);
    ck_assert(s.lo_m == -98.32 && fabs(s.hi_m - 17.0) < 1e-9);
    tb_export_scale_t off = s;
    off.lo_m += s.step_m; /* the negative control */
    double worst = 0, worst_off = 0;
    for (int k = 0; k <= 100000; k++) {
        float h = (float)(-98.3163 + (16.9981 + 98.3163) * k / 100000.0);
        double d = fabs(s.lo_m + tb_export_encode(&s, h) * s.step_m - h);
        double d_off = fabs(off.lo_m + tb_export_encode(&s, h) * s.step_m - h);
        worst = d > worst ? d : worst;
        worst_off = d_off > worst_off ? d_off : worst_off;
    }
    ck_assert_msg(worst <= s.step_m / 2 * (1 + 1e-9), "%g > %g", worst, s.step_m / 2);
    ck_assert(worst_off > s.step_m / 2);
    ck_assert_int_eq(tb_export_encode(&s, -1000.0f), 0);
    ck_assert_int_eq(tb_export_encode(&s, 1000.0f), 65535);
    tb_export_scale_t flat = tb_export_scale_of(5.0, 5.0);
    ck_assert(flat.step_m > 0);
}
END_TEST

Suite *export_suite(void)
{
    Suite *s = suite_create("export");
    TCase *t = tcase_create("export");
    tcase_add_test(t, test_presets_are_the_engines_sizes);
    tcase_add_test(t, test_grid_covers_wraps_and_moves_north);
    tcase_add_test(t, test_names_follow_each_engine);
    tcase_add_test(t, test_scale_decodes_within_half_a_step);
    suite_add_tcase(s, t);
    return s;
}
