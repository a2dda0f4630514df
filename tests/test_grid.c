/* Frames, located grids and wrap-aware indexing (docs/determinism.md). */
#include <check.h>
#include <string.h>

#include "common/grid.h"

START_TEST(test_frame_refuses_garbage)
{
    tb_frame_t f;
    tb_err_t err;
    ck_assert_int_eq(tb_frame_make(&f, 100, 50, 8, 0, 0, 101, 10, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "101"));
    ck_assert_int_eq(tb_frame_make(&f, 100, 50, 8, 0, 45, 10, 10, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "Y does not wrap"));
    ck_assert_int_eq(tb_frame_make(&f, 100, 50, 0, 0, 0, 10, 10, &err), -1);
    ck_assert_int_eq(tb_frame_make(&f, 0, 50, 8, 0, 0, 10, 10, &err), -1);
}
END_TEST

START_TEST(test_no_default_origin)
{
    /* A zeroed frame is what a forgotten origin looks like; a grid must refuse it loudly. */
    tb_frame_t zero;
    memset(&zero, 0, sizeof zero);
    tb_err_t err;
    ck_assert(!tb_frame_valid(&zero));
    ck_assert_ptr_null(tb_grid_new(&zero, TB_F32, &err));
    ck_assert_int_eq(err.code, TB_E_INTERNAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "origin"));
}
END_TEST

START_TEST(test_wrap_and_lattice_coordinates)
{
    tb_frame_t f;
    ck_assert_int_eq(tb_frame_make(&f, 100, 50, 8, -3, 5, 10, 4, NULL), 0);
    ck_assert_int_eq(f.x0, 97); /* x0 is taken modulo the circumference */
    ck_assert_int_eq(tb_frame_lattice_x(&f, 0), 97);
    ck_assert_int_eq(tb_frame_lattice_x(&f, 2), 99);
    ck_assert_int_eq(tb_frame_lattice_x(&f, 3), 0); /* across the seam */
    ck_assert_int_eq(tb_frame_lattice_x(&f, 9), 6);
    ck_assert_int_eq(tb_frame_local_x(&f, 98), 1);
    ck_assert_int_eq(tb_frame_local_x(&f, 6), 9);
    ck_assert_int_eq(tb_frame_local_x(&f, 7), -1);
    ck_assert_int_eq(tb_frame_local_x(&f, 50), -1);
    /* Cell centres: (i + 0.5) * cell_m in world metres. */
    ck_assert_double_eq(tb_frame_world_x_m(&f, 0), 97.5 * 8);
    ck_assert_double_eq(tb_frame_world_x_m(&f, 3), 0.5 * 8);
    ck_assert_double_eq(tb_frame_world_y_m(&f, 1), 6.5 * 8);
    ck_assert(!tb_frame_wraps(&f));
    tb_frame_t whole;
    ck_assert_int_eq(tb_frame_make(&whole, 100, 50, 8, 40, 0, 100, 50, NULL), 0);
    ck_assert(tb_frame_wraps(&whole));
    ck_assert_int_eq(tb_wrap(-1, 100), 99);
    ck_assert_int_eq(tb_wrap(-201, 100), 99);
    ck_assert_int_eq(tb_wrap(200, 100), 0);
}
END_TEST

START_TEST(test_blit_across_the_seam)
{
    /* A window straddling the seam copied into a planet-wide grid lands on both edges. */
    tb_frame_t planet_f, win_f;
    ck_assert_int_eq(tb_frame_make(&planet_f, 20, 6, 8, 0, 0, 20, 6, NULL), 0);
    ck_assert_int_eq(tb_frame_make(&win_f, 20, 6, 8, 18, 1, 5, 3, NULL), 0);
    tb_grid_t *planet = tb_grid_new(&planet_f, TB_I32, NULL);
    tb_grid_t *win = tb_grid_new(&win_f, TB_I32, NULL);
    int32_t *w = tb_grid_i32(win);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 5; i++)
            w[tb_idx(5, i, j)] = (int32_t)(100 * (j + 1) + tb_frame_lattice_x(&win_f, i));
    ck_assert_uint_eq(tb_grid_blit(planet, win), 15);
    const int32_t *p = tb_grid_ci32(planet);
    ck_assert_int_eq(p[tb_idx(20, 18, 1)], 118);
    ck_assert_int_eq(p[tb_idx(20, 19, 2)], 219);
    ck_assert_int_eq(p[tb_idx(20, 0, 1)], 100);
    ck_assert_int_eq(p[tb_idx(20, 2, 3)], 302);
    ck_assert_int_eq(p[tb_idx(20, 3, 1)], 0); /* outside the window: untouched */
    ck_assert_int_eq(p[tb_idx(20, 18, 0)], 0);
    tb_grid_destroy(&planet);
    tb_grid_destroy(&win);
    ck_assert_ptr_null(win);
    tb_grid_destroy(NULL);
}
END_TEST

START_TEST(test_neighbour_table)
{
    /* k and 7 - k are opposite; four cardinals at distance 1, four diagonals at sqrt 2. */
    int diag = 0;
    for (int k = 0; k < 8; k++) {
        ck_assert_int_eq(tb_nb_dx[k], -tb_nb_dx[7 - k]);
        ck_assert_int_eq(tb_nb_dy[k], -tb_nb_dy[7 - k]);
        ck_assert(tb_nb_dx[k] != 0 || tb_nb_dy[k] != 0);
        diag += tb_nb_is_diagonal(k);
        ck_assert_int_eq(tb_nb_is_diagonal(k), tb_nb_dx[k] != 0 && tb_nb_dy[k] != 0);
        ck_assert_double_eq_tol(tb_nb_dist[k], tb_nb_is_diagonal(k) ? 1.41421356 : 1.0, 1e-8);
    }
    ck_assert_int_eq(diag, 4);
}
END_TEST

Suite *grid_suite(void)
{
    Suite *s = suite_create("grid");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_frame_refuses_garbage);
    tcase_add_test(tc, test_no_default_origin);
    tcase_add_test(tc, test_wrap_and_lattice_coordinates);
    tcase_add_test(tc, test_blit_across_the_seam);
    tcase_add_test(tc, test_neighbour_table);
    suite_add_tcase(s, tc);
    return s;
}
