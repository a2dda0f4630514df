/* The world-position hash (docs/determinism.md, rule 1). */
#include <check.h>
#include <math.h>

#include "common/grid.h"
#include "common/hash.h"

START_TEST(test_hash_is_a_function_of_its_arguments)
{
    uint64_t a = tb_hash(7, TB_SALT_TEST, 10, 20, 3);
    ck_assert_uint_eq(a, tb_hash(7, TB_SALT_TEST, 10, 20, 3));
    ck_assert_uint_eq(a, tb_hash_cell(tb_hash_key(7, TB_SALT_TEST, 3), 10, 20));
    /* Every argument matters. */
    ck_assert_uint_ne(a, tb_hash(8, TB_SALT_TEST, 10, 20, 3));
    ck_assert_uint_ne(a, tb_hash(7, TB_SALT_TEST + 1, 10, 20, 3));
    ck_assert_uint_ne(a, tb_hash(7, TB_SALT_TEST, 11, 20, 3));
    ck_assert_uint_ne(a, tb_hash(7, TB_SALT_TEST, 10, 21, 3));
    ck_assert_uint_ne(a, tb_hash(7, TB_SALT_TEST, 10, 20, 4));
    /* x and y are not interchangeable. */
    ck_assert_uint_ne(tb_hash(7, 1, 3, 5, 0), tb_hash(7, 1, 5, 3, 0));
}
END_TEST

START_TEST(test_hash_pinned_value)
{
    /* Pins the packing (little-endian 64-bit integers, key then cell): a change here changes every
     * planet ever baked, so it must be deliberate. Values from the first implementation. */
    ck_assert_uint_eq(tb_hash(7, 1, 1, 2, 3), 0x08e2293f2baefbcaULL);
    ck_assert_uint_eq(tb_hash(7, 1, -5, 2, 0), 0x62a92c3ccb6f3080ULL);
}
END_TEST

START_TEST(test_same_cell_same_number_through_any_window)
{
    /* The point of hashing lattice coordinates: two windows that see one cell draw one number. */
    tb_frame_t a, b;
    ck_assert_int_eq(tb_frame_make(&a, 1000, 100, 8, 990, 10, 30, 5, NULL), 0);
    ck_assert_int_eq(tb_frame_make(&b, 1000, 100, 8, 0, 8, 40, 10, NULL), 0);
    uint64_t key = tb_hash_key(42, TB_SALT_ROUTER_JITTER, 17);
    for (int j = 0; j < 5; j++)
        for (int i = 10; i < 30; i++) { /* lattice x 0..19 in a */
            int64_t lx = tb_frame_lattice_x(&a, i), ly = tb_frame_lattice_y(&a, j);
            int64_t bi = tb_frame_local_x(&b, lx), bj = ly - b.y0;
            ck_assert_int_ge(bi, 0);
            ck_assert_uint_eq(
                tb_hash_cell(key, lx, ly),
                tb_hash_cell(key, tb_frame_lattice_x(&b, bi), tb_frame_lattice_y(&b, bj)));
        }
}
END_TEST

START_TEST(test_unit_values_are_uniform)
{
    /* Mean and variance of 100k draws against U(0,1): 1/2 and 1/12. */
    double sum = 0, sum2 = 0;
    const int n = 100000;
    uint64_t key = tb_hash_key(1, TB_SALT_TEST, 0);
    for (int i = 0; i < n; i++) {
        double u = tb_hash_unit(tb_hash_cell(key, i % 317, i / 317));
        ck_assert(u >= 0 && u < 1);
        sum += u;
        sum2 += u * u;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    ck_assert_double_eq_tol(mean, 0.5, 0.005);
    ck_assert_double_eq_tol(var, 1.0 / 12, 0.002);
}
END_TEST

Suite *hash_suite(void)
{
    Suite *s = suite_create("hash");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_hash_is_a_function_of_its_arguments);
    tcase_add_test(tc, test_hash_pinned_value);
    tcase_add_test(tc, test_same_cell_same_number_through_any_window);
    tcase_add_test(tc, test_unit_values_are_uniform);
    suite_add_tcase(s, tc);
    return s;
}
