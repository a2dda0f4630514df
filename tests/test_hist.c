/* Fixed-bin histograms (common/hist.h): bins against a brute-force edge search, quantiles against
 * known distributions, exact merging in any order, and a decoder that survives any bytes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/hist.h"

/* A deterministic unit random number for test data (the project's hash, never rand()). */
static double s_unit(uint64_t i, int64_t stream)
{
    return tb_hash_unit(tb_hash(42, TB_SALT_TEST, (int64_t)i, stream, 0));
}

/* The bin of v by a plain walk over the edges: the oracle for tb_hist_bin_of. */
static int32_t s_brute_bin(const tb_hist_t *h, double v)
{
    int32_t n = tb_hist_spec(h)->nbins;
    if (isnan(v) || !(v < tb_hist_edge(h, n)))
        return n;
    if (!(v >= tb_hist_edge(h, 0)))
        return -1;
    int32_t k = 0;
    while (k + 1 < n && v >= tb_hist_edge(h, k + 1))
        k++;
    return k;
}

START_TEST(test_linear_bins_match_edges)
{
    tb_hist_t *h = tb_hist_new_linear(-3.7, 12.1, 237, 0, NULL);
    ck_assert_ptr_nonnull(h);
    for (int32_t k = 0; k <= 237; k++) {
        double e = tb_hist_edge(h, k);
        ck_assert_int_eq(tb_hist_bin_of(h, e), k); /* an edge opens its bin */
        ck_assert_int_eq(tb_hist_bin_of(h, nextafter(e, -INFINITY)), k - 1);
    }
    for (uint64_t i = 0; i < 20000; i++) {
        double v = -5 + 20 * s_unit(i, 1);
        ck_assert_int_eq(tb_hist_bin_of(h, v), s_brute_bin(h, v));
    }
    ck_assert_int_eq(tb_hist_bin_of(h, NAN), 237);
    ck_assert_int_eq(tb_hist_bin_of(h, INFINITY), 237);
    ck_assert_int_eq(tb_hist_bin_of(h, -INFINITY), -1);
    tb_hist_destroy(&h);
    ck_assert_ptr_null(h);
}
END_TEST

START_TEST(test_log2_bins_and_fast_path)
{
    tb_hist_t *h = tb_hist_new_log2(-20, 8, 200, 0, NULL);
    ck_assert_ptr_nonnull(h);
    ck_assert_double_eq(tb_hist_edge(h, 0), ldexp(1, -20));
    ck_assert_double_eq(tb_hist_edge(h, 8), ldexp(1, -19));
    ck_assert_double_eq(tb_hist_edge(h, 200), ldexp(1, 5));
    tb_hist_log2_lut_t lut;
    ck_assert_int_eq(tb_hist_log2_lut(h, &lut, NULL), 0);
    for (int32_t k = 0; k <= 200; k++) {
        float e = (float)tb_hist_edge(h, k); /* LOG2 edges are floats by construction */
        ck_assert_double_eq((double)e, tb_hist_edge(h, k));
        ck_assert_int_eq(tb_hist_log2_bin_f32(&lut, e), k);
        ck_assert_int_eq(tb_hist_log2_bin_f32(&lut, nextafterf(e, 0)), k - 1);
    }
    for (uint64_t i = 0; i < 50000; i++) {
        float v = (float)exp2(-24 + 32 * s_unit(i, 2));
        int32_t b = tb_hist_bin_of(h, v);
        ck_assert_int_eq(b, s_brute_bin(h, v));
        ck_assert_int_eq(tb_hist_log2_bin_f32(&lut, v), b);
    }
    const float odd[] = {0.0f, -0.0f, -1.0f, 1e-40f, INFINITY, -INFINITY, NAN, 3e38f};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        ck_assert_int_eq(tb_hist_log2_bin_f32(&lut, odd[i]), tb_hist_bin_of(h, odd[i]));
    tb_hist_destroy(&h);

    /* The comparison-only row form for 4 bins an octave agrees too. */
    tb_hist_t *h4 = tb_hist_new_log2(-40, 4, 200, 0, NULL);
    tb_hist_log2_lut_t lut4;
    ck_assert_int_eq(tb_hist_log2_lut(h4, &lut4, NULL), 0);
    enum { N = 4096 };
    float vals[N];
    int32_t bins[N];
    for (int i = 0; i < N; i++)
        vals[i] = i < 201   ? (float)tb_hist_edge(h4, i)
                  : i < 402 ? nextafterf((float)tb_hist_edge(h4, i - 201), 0)
                  : i < 410 ? odd[i - 402]
                            : (float)exp2(-45 + 60 * s_unit((uint64_t)i, 12));
    tb_hist_log2_bins4_f32(&lut4, vals, N, bins);
    for (int i = 0; i < N; i++)
        ck_assert_msg(bins[i] == tb_hist_bin_of(h4, vals[i]), "%.9g: %d against %d",
                      (double)vals[i], (int)bins[i], (int)tb_hist_bin_of(h4, vals[i]));
    tb_hist_destroy(&h4);
    /* A linear histogram has no fast log2 table; an edge past 2^128 is refused. */
    tb_hist_t *lin = tb_hist_new_linear(0, 1, 4, 0, NULL);
    tb_err_t err;
    ck_assert_int_eq(tb_hist_log2_lut(lin, &lut, &err), -1);
    tb_hist_destroy(&lin);
    ck_assert_ptr_null(tb_hist_new_log2(120, 4, 100, 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "2^128"));
}
END_TEST

START_TEST(test_refuses_bad_specs)
{
    tb_err_t err;
    ck_assert_ptr_null(tb_hist_new_linear(1, 1, 10, 0, &err));
    ck_assert_ptr_null(tb_hist_new_linear(0, INFINITY, 10, 0, &err));
    ck_assert_ptr_null(tb_hist_new_linear(0, 1, 0, 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "0 bins"));
    ck_assert_ptr_null(tb_hist_new_linear(0, 1, 10, -1, &err));
    ck_assert_ptr_null(tb_hist_new_log2(0, 0, 10, 0, &err));
    ck_assert_ptr_null(tb_hist_new_log2(-200, 4, 10, 0, &err));
}
END_TEST

START_TEST(test_quantiles)
{
    /* Values 0.5, 1.5, ..., 99.5 in unit bins: every quantile interpolates to q * 100. */
    tb_hist_t *h = tb_hist_new_linear(0, 100, 100, 0.001, NULL);
    for (int i = 0; i < 100; i++)
        tb_hist_add(h, i + 0.5);
    ck_assert_int_eq(tb_hist_count(h), 100);
    ck_assert_double_eq_tol(tb_hist_quantile(h, 0.5), 50.0, 1e-12);
    ck_assert_double_eq_tol(tb_hist_quantile(h, 0.9), 90.0, 1e-12);
    ck_assert_double_eq(tb_hist_quantile(h, 0), 0.5); /* clamped to the exact minimum */
    ck_assert_double_eq(tb_hist_quantile(h, 1), 99.5);
    ck_assert_double_eq_tol(tb_hist_mean(h), 50.0, 1e-12);
    ck_assert_double_eq_tol(tb_hist_fraction_below(h, 30), 0.30, 1e-12);
    ck_assert_double_eq_tol(tb_hist_fraction_below(h, 30.25), 0.3025, 1e-12);
    tb_hist_destroy(&h);

    /* One value many times: the quantiles are that value exactly, whatever the bin width. */
    h = tb_hist_new_linear(0, 90, 900, 0, NULL);
    tb_hist_add_n(h, 20.0537, 1000);
    ck_assert_double_eq(tb_hist_quantile(h, 0.5), 20.0537);
    ck_assert_double_eq(tb_hist_quantile(h, 0.9), 20.0537);
    tb_hist_destroy(&h);

    /* A uniform sample of 100000 values: quantiles within a bin width of the truth. */
    h = tb_hist_new_linear(-10, 10, 400, 0, NULL);
    tb_hist_t *g = tb_hist_new_log2(-10, 16, 16 * 20, 0, NULL);
    for (uint64_t i = 0; i < 100000; i++) {
        tb_hist_add(h, -10 + 20 * s_unit(i, 3));
        tb_hist_add(g, exp2(-5 + 10 * s_unit(i, 4))); /* log-uniform over 2^-5 .. 2^5 */
    }
    for (double q = 0.05; q < 1; q += 0.05) {
        ck_assert_double_eq_tol(tb_hist_quantile(h, q), -10 + 20 * q, 0.05 + 0.1);
        ck_assert_double_eq_tol(log2(tb_hist_quantile(g, q)), -5 + 10 * q, 0.0625 + 0.05);
    }
    tb_hist_destroy(&h);
    tb_hist_destroy(&g);

    /* Underflow and overflow interpolate towards the exact extremes. */
    h = tb_hist_new_linear(0, 10, 10, 0, NULL);
    tb_hist_add(h, -4);
    tb_hist_add(h, 25);
    ck_assert_int_eq(tb_hist_bin_count(h, -1), 1);
    ck_assert_int_eq(tb_hist_bin_count(h, 10), 1);
    ck_assert_double_eq(tb_hist_quantile(h, 0), -4);
    ck_assert_double_eq(tb_hist_quantile(h, 1), 25);
    tb_hist_clear(h);
    ck_assert(isnan(tb_hist_quantile(h, 0.5)));
    ck_assert(!tb_hist_add(h, NAN));
    ck_assert_int_eq(tb_hist_count(h), 0);
    tb_hist_destroy(&h);
}
END_TEST

static tb_hist_t *s_fill(int part, int parts, int n, bool neg_zero_first)
{
    tb_hist_t *h = tb_hist_new_linear(-50, 50, 1000, 0.001, NULL);
    for (int i = 0; i < n; i++) {
        if (i % parts != part)
            continue;
        double v = -70 + 140 * s_unit((uint64_t)i, 5);
        tb_hist_add(h, v);
    }
    /* The only values on which min/max could depend on order. */
    tb_hist_add(h, neg_zero_first ? -0.0 : 0.0);
    tb_hist_add(h, neg_zero_first ? 0.0 : -0.0);
    return h;
}

START_TEST(test_merge_is_exact_in_any_order)
{
    const int parts = 7, n = 30001;
    tb_hist_t *whole = tb_hist_new_linear(-50, 50, 1000, 0.001, NULL);
    for (int p = 0; p < parts; p++) {
        tb_hist_t *h = s_fill(p, parts, n, p % 2);
        ck_assert_int_eq(tb_hist_merge(whole, h, NULL), 0);
        tb_hist_destroy(&h);
    }
    tb_hist_t *backward = tb_hist_new_linear(-50, 50, 1000, 0.001, NULL);
    for (int p = parts - 1; p >= 0; p--) {
        tb_hist_t *h = s_fill(p, parts, n, p % 2 == 0);
        ck_assert_int_eq(tb_hist_merge(backward, h, NULL), 0);
        tb_hist_destroy(&h);
    }
    ck_assert(tb_hist_equal(whole, backward));
    ck_assert_int_eq(tb_hist_sum_q(whole), tb_hist_sum_q(backward));
    ck_assert_int_eq(tb_hist_count(whole), n + 2 * parts);
    /* -0.0 and +0.0 seen in either order leave the same bits. */
    tb_hist_t *z1 = tb_hist_new_linear(-1, 1, 2, 0, NULL),
              *z2 = tb_hist_new_linear(-1, 1, 2, 0, NULL);
    tb_hist_add(z1, -0.0);
    tb_hist_add(z1, 0.0);
    tb_hist_add(z2, 0.0);
    tb_hist_add(z2, -0.0);
    ck_assert(tb_hist_equal(z1, z2));
    ck_assert(!signbit(tb_hist_max(z1)));
    tb_hist_destroy(&z1);
    tb_hist_destroy(&z2);
    /* The quantised sum is exact: compare with the integer sum taken directly. */
    int64_t direct = 0;
    for (int i = 0; i < n; i++)
        direct += tb_hist_quantise(-70 + 140 * s_unit((uint64_t)i, 5), 0.001, NULL);
    ck_assert_int_eq(tb_hist_sum_q(whole), direct);
    /* Negative control: a histogram missing one value is not equal. */
    tb_hist_add(backward, 1.0);
    ck_assert(!tb_hist_equal(whole, backward));
    tb_hist_destroy(&whole);
    tb_hist_destroy(&backward);
}
END_TEST

START_TEST(test_merge_refuses_mismatch_and_overflow)
{
    tb_err_t err;
    tb_hist_t *a = tb_hist_new_linear(0, 10, 10, 0, NULL);
    tb_hist_t *b = tb_hist_new_linear(0, 10, 20, 0, NULL);
    ck_assert_int_eq(tb_hist_merge(a, b, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "bins differ"));
    tb_hist_destroy(&b);
    b = tb_hist_new_linear(0, 10, 10, 0, NULL);
    tb_hist_add_n(a, 5, INT64_MAX - 1);
    tb_hist_add_n(b, 5, 2);
    tb_hist_add(b, 1);
    ck_assert_int_eq(tb_hist_merge(a, b, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "overflow"));
    ck_assert_int_eq(tb_hist_bin_count(a, 1), 0); /* unchanged on failure */
    ck_assert_int_eq(tb_hist_count(a), INT64_MAX - 1);
    tb_hist_destroy(&a);
    tb_hist_destroy(&b);
}
END_TEST

START_TEST(test_sum_clamps_huge_values)
{
    tb_hist_t *h = tb_hist_new_linear(0, 1, 1, 1.0, NULL);
    tb_hist_add(h, 1e30);
    tb_hist_add(h, -1e30);
    tb_hist_add(h, 3);
    ck_assert_int_eq(tb_hist_sum_clamped(h), 2);
    ck_assert_int_eq(tb_hist_sum_q(h), 3);
    tb_hist_destroy(&h);
}
END_TEST

static tb_hist_t *s_roundtrip(const tb_hist_t *h)
{
    tb_bytes_t b;
    tb_bytes_init(&b);
    tb_hist_encode(h, &b);
    ck_assert(!b.failed);
    tb_reader_t r;
    tb_reader_init(&r, b.data, b.len);
    tb_err_t err;
    tb_hist_t *d = tb_hist_decode(&r, &err);
    ck_assert_msg(d != NULL, "%s", err.msg);
    ck_assert_uint_eq(tb_reader_left(&r), 0);
    tb_bytes_free(&b);
    return d;
}

START_TEST(test_encode_roundtrip)
{
    tb_hist_t *h = tb_hist_new_log2(-6, 4, 80, 0.5, NULL);
    for (uint64_t i = 0; i < 5000; i++)
        tb_hist_add(h, exp2(-8 + 24 * s_unit(i, 6)));
    tb_hist_t *d = s_roundtrip(h);
    ck_assert(tb_hist_equal(h, d));
    tb_hist_destroy(&d);
    tb_hist_clear(h);
    d = s_roundtrip(h); /* empty */
    ck_assert(tb_hist_equal(h, d));
    tb_hist_destroy(&d);
    tb_hist_destroy(&h);
}
END_TEST

START_TEST(test_decoder_survives_bad_bytes)
{
    tb_hist_t *h = tb_hist_new_linear(0, 100, 300, 0.01, NULL);
    for (uint64_t i = 0; i < 3000; i++)
        tb_hist_add(h, -20 + 140 * s_unit(i, 7));
    tb_bytes_t b;
    tb_bytes_init(&b);
    tb_hist_encode(h, &b);
    tb_err_t err;
    /* Every truncation fails cleanly. */
    for (size_t n = 0; n < b.len; n++) {
        tb_reader_t r;
        tb_reader_init(&r, b.data, n);
        tb_hist_t *d = tb_hist_decode(&r, &err);
        ck_assert_msg(d == NULL, "decoded a histogram from %zu of %zu bytes", n, b.len);
        ck_assert_int_eq(err.code, TB_E_FORMAT);
    }
    /* Flipped bytes decode to a valid histogram or fail; never crash (run under ASan too). */
    uint8_t *copy = malloc(b.len);
    for (uint64_t i = 0; i < 20000; i++) {
        memcpy(copy, b.data, b.len);
        size_t at = (size_t)(s_unit(i, 8) * (double)b.len);
        copy[at] ^= (uint8_t)(1 + 254 * s_unit(i, 9));
        tb_reader_t r;
        tb_reader_init(&r, copy, b.len);
        tb_hist_t *d = tb_hist_decode(&r, &err);
        if (d) {
            ck_assert(tb_hist_count(d) >= 0);
            (void)tb_hist_quantile(d, 0.5);
        }
        tb_hist_destroy(&d);
    }
    /* Random bytes, with and without a valid magic. */
    for (uint64_t i = 0; i < 20000; i++) {
        size_t n = (size_t)(s_unit(i, 10) * 200);
        for (size_t k = 0; k < n; k++)
            copy[k % b.len] = (uint8_t)(256 * s_unit(i * 256 + k, 11));
        if (i % 2 && n >= 6)
            memcpy(copy, b.data, 6);
        tb_reader_t r;
        tb_reader_init(&r, copy, n < b.len ? n : b.len);
        tb_hist_t *d = tb_hist_decode(&r, &err);
        tb_hist_destroy(&d);
    }
    free(copy);
    tb_bytes_free(&b);
    tb_hist_destroy(&h);
}
END_TEST

START_TEST(test_varint_reader_bounds)
{
    const uint8_t too_long[11] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    tb_reader_t r;
    tb_reader_init(&r, too_long, sizeof too_long);
    (void)tb_reader_varint(&r);
    ck_assert(r.failed);
    const uint8_t max[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    tb_reader_init(&r, max, sizeof max);
    ck_assert(tb_reader_varint(&r) == UINT64_MAX);
    ck_assert(!r.failed);
    tb_bytes_t b;
    tb_bytes_init(&b);
    tb_bytes_put_varint(&b, UINT64_MAX);
    ck_assert_uint_eq(b.len, 10);
    ck_assert_int_eq(memcmp(b.data, max, 10), 0);
    tb_bytes_free(&b);
}
END_TEST

Suite *hist_suite(void)
{
    Suite *s = suite_create("hist");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_linear_bins_match_edges);
    tcase_add_test(tc, test_log2_bins_and_fast_path);
    tcase_add_test(tc, test_refuses_bad_specs);
    tcase_add_test(tc, test_quantiles);
    tcase_add_test(tc, test_merge_is_exact_in_any_order);
    tcase_add_test(tc, test_merge_refuses_mismatch_and_overflow);
    tcase_add_test(tc, test_sum_clamps_huge_values);
    tcase_add_test(tc, test_encode_roundtrip);
    tcase_add_test(tc, test_decoder_survives_bad_bytes);
    tcase_add_test(tc, test_varint_reader_bounds);
    suite_add_tcase(s, tc);
    return s;
}
