/* Periodic noise in world metres: wraps exactly at the seam when its period divides the
 * circumference, and visibly breaks when it does not (the negative control). */
#include <check.h>
#include <math.h>

#include "common/hash.h"
#include "common/noise.h"

static const double C_M = 25000.0; /* the demo planet's circumference */

START_TEST(test_snap_divides_the_circumference)
{
    double s = tb_snap_wavelength(C_M, 2400);
    ck_assert_double_eq_tol(C_M / s, round(C_M / s), 1e-12);
    ck_assert_double_eq_tol(s, 25000.0 / 10, 1e-9);         /* 10.4 periods rounds to 10 */
    ck_assert_double_eq(tb_snap_wavelength(C_M, 1e9), C_M); /* at least one period */
    tb_noise_t n;
    ck_assert_int_eq(tb_noise_init(&n, 7, 1, C_M, 2400, NULL), 0);
    ck_assert_int_eq(n.periods, 10);
    tb_err_t err;
    ck_assert_int_eq(tb_noise_init(&n, 7, 1, C_M, -1, &err), -1);
}
END_TEST

/* The largest jump across the seam (x -> C - d vs x -> d) against the largest jump between two
 * interior samples the same distance apart. */
static void s_seam_vs_interior(const tb_noise_t *n, double *seam, double *interior)
{
    const double d = 0.5;
    *seam = 0;
    *interior = 0;
    for (int k = 0; k < 400; k++) {
        double y = 37.0 * k + 3.1;
        double s = fabs(tb_noise_fbm(n, C_M - d, y, 3, 0.5) - tb_noise_fbm(n, d, y, 3, 0.5));
        double i =
            fabs(tb_noise_fbm(n, 5000 - d, y, 3, 0.5) - tb_noise_fbm(n, 5000 + d, y, 3, 0.5));
        *seam = fmax(*seam, s);
        *interior = fmax(*interior, i);
    }
}

START_TEST(test_noise_is_continuous_across_the_seam)
{
    tb_noise_t n;
    ck_assert_int_eq(tb_noise_init(&n, 9342, TB_SALT_TEST_NOISE, C_M, 2400, NULL), 0);
    double seam, interior;
    s_seam_vs_interior(&n, &seam, &interior);
    ck_assert_msg(seam < 3 * interior + 1e-12, "seam jump %g vs interior %g", seam, interior);
    /* Periodic: x and x + C agree to rounding (frames only ever pass x in [0, C), so the bits a
     * cell gets never depend on this rounding). */
    for (int k = 0; k < 100; k++) {
        double x = 123.25 * k, y = 77.5 * k;
        ck_assert_double_eq_tol(tb_noise_value(&n, x, y, 0), tb_noise_value(&n, x + C_M, y, 0),
                                1e-9);
        ck_assert_double_eq_tol(tb_noise_gradient(&n, x, y, 2),
                                tb_noise_gradient(&n, x + C_M, y, 2), 1e-9);
    }
}
END_TEST

START_TEST(test_noise_breaks_when_the_period_does_not_divide)
{
    /* Negative control: the same noise with an unsnapped 2400 m spacing (10.42 periods) steps at
     * the seam far more than anywhere inside. */
    tb_noise_t n;
    tb_noise_init_unsnapped(&n, 9342, TB_SALT_TEST_NOISE, C_M, 2400);
    double seam, interior;
    s_seam_vs_interior(&n, &seam, &interior);
    ck_assert_msg(seam > 10 * interior, "seam jump %g vs interior %g", seam, interior);
}
END_TEST

START_TEST(test_noise_range_and_spread)
{
    tb_noise_t n;
    ck_assert_int_eq(tb_noise_init(&n, 1, TB_SALT_TEST_NOISE, C_M, 1000, NULL), 0);
    double lo = 1, hi = -1, sum = 0;
    int count = 0;
    for (int j = 0; j < 200; j++)
        for (int i = 0; i < 200; i++) {
            double v = tb_noise_value(&n, i * 61.0, j * 61.0, 0);
            double g = tb_noise_gradient(&n, i * 61.0, j * 61.0, 0);
            ck_assert(v >= -1 && v <= 1);
            ck_assert(g >= -1.0000001 && g <= 1.0000001);
            lo = fmin(lo, g);
            hi = fmax(hi, g);
            sum += g;
            count++;
        }
    ck_assert_msg(hi - lo > 1.0, "gradient noise spans only %g..%g", lo, hi);
    ck_assert_double_eq_tol(sum / count, 0, 0.1);
}
END_TEST

START_TEST(test_salt_and_seed_change_the_field)
{
    tb_noise_t a, b, c;
    tb_noise_init(&a, 1, TB_SALT_TEST_NOISE, C_M, 1000, NULL);
    tb_noise_init(&b, 2, TB_SALT_TEST_NOISE, C_M, 1000, NULL);
    tb_noise_init(&c, 1, TB_SALT_TEST_NOISE + 1, C_M, 1000, NULL);
    int differ_b = 0, differ_c = 0;
    for (int k = 0; k < 50; k++) {
        double x = 311.0 * k + 17, y = 97.0 * k + 5;
        differ_b += tb_noise_fbm(&a, x, y, 4, 0.5) != tb_noise_fbm(&b, x, y, 4, 0.5);
        differ_c += tb_noise_fbm(&a, x, y, 4, 0.5) != tb_noise_fbm(&c, x, y, 4, 0.5);
    }
    ck_assert_int_ge(differ_b, 45);
    ck_assert_int_ge(differ_c, 45);
}
END_TEST

Suite *noise_suite(void)
{
    Suite *s = suite_create("noise");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_snap_divides_the_circumference);
    tcase_add_test(tc, test_noise_is_continuous_across_the_seam);
    tcase_add_test(tc, test_noise_breaks_when_the_period_does_not_divide);
    tcase_add_test(tc, test_noise_range_and_spread);
    tcase_add_test(tc, test_salt_and_seed_change_the_field);
    suite_add_tcase(s, tc);
    return s;
}
