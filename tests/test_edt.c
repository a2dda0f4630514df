/* The distance transform against a brute-force reference on small grids, with and without X wrap,
 * and the dilation against a threshold of the exact transform. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/edt.h"
#include "common/hash.h"

/* Squared distance by trying every feature (and, with wrap, the short way round). */
static uint32_t *s_brute(const uint8_t *mask, int w, int h, bool wrap)
{
    uint32_t *d2 = malloc(sizeof *d2 * (size_t)w * h);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            int64_t best = -1;
            for (int q = 0; q < h; q++)
                for (int p = 0; p < w; p++) {
                    if (!mask[q * w + p])
                        continue;
                    int64_t dx = abs(i - p);
                    if (wrap && w - dx < dx)
                        dx = w - dx;
                    int64_t d = dx * dx + (int64_t)(j - q) * (j - q);
                    if (best < 0 || d < best)
                        best = d;
                }
            d2[j * w + i] = best < 0 ? TB_EDT_FAR : (uint32_t)best;
        }
    return d2;
}

/* A mask with about `per_mille` features in 1000, from the test salt; a negative per_mille makes
 * blocks of 13 x 5 cells instead (long stretches of land and of open water, as on a planet). */
static uint8_t *s_mask(int w, int h, int per_mille, uint64_t seed)
{
    uint8_t *m = malloc((size_t)w * h);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++)
            m[j * w + i] =
                per_mille >= 0
                    ? tb_hash(seed, TB_SALT_TEST, i, j, 0) % 1000 < (uint64_t)per_mille
                    : tb_hash(seed, TB_SALT_TEST, i / 13, j / 5, 1) % 1000 < (uint64_t)-per_mille;
    return m;
}

static void s_compare(int w, int h, int per_mille, uint64_t seed, bool wrap)
{
    uint8_t *mask = s_mask(w, h, per_mille, seed);
    uint32_t *want = s_brute(mask, w, h, wrap);
    uint32_t *got = malloc(sizeof *got * (size_t)w * h);
    uint8_t *dil = malloc((size_t)w * h);
    for (int threads = 1; threads <= 2; threads++) {
        tb_err_t err;
        ck_assert_msg(tb_edt_squared(mask, w, h, wrap, threads, got, &err) == 0, "%s", err.msg);
        int k = 0; /* ck_assert costs a syscall, so find the first disagreement first */
        while (k < w * h && got[k] == want[k])
            k++;
        ck_assert_msg(k == w * h, "%dx%d wrap %d seed %llu cell (%d,%d): edt %u, brute force %u", w,
                      h, wrap, (unsigned long long)seed, k % w, k / w, got[k % (w * h)],
                      want[k % (w * h)]);
        /* 70000 and 100000 pass 255 cells, the wide (16-bit) path, on grids that tall */
        static const int64_t radii2[] = {0, 1, 2, 4, 5, 8, 13, 25, 50, 200, 5000, 70000, 100000};
        for (size_t r = 0; r < sizeof radii2 / sizeof radii2[0]; r++) {
            ck_assert_int_eq(tb_edt_dilate(mask, w, h, wrap, radii2[r], threads, dil, &err), 0);
            k = 0;
            while (k < w * h && dil[k] == (want[k] <= (uint64_t)radii2[r]))
                k++;
            ck_assert_msg(k == w * h, "%dx%d wrap %d r2 %lld cell (%d,%d): dilate %d, d2 %u", w, h,
                          wrap, (long long)radii2[r], k % w, k / w, dil[k % (w * h)],
                          want[k % (w * h)]);
        }
    }
    free(mask);
    free(want);
    free(got);
    free(dil);
}

START_TEST(test_matches_brute_force)
{
    static const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {7, 5}, {33, 21}, {64, 17}, {40, 40}};
    static const int densities[] = {0, 1, 10, 100, 500, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t d = 0; d < sizeof densities / sizeof densities[0]; d++)
            for (int wrap = 0; wrap <= 1; wrap++)
                s_compare(sizes[s][0], sizes[s][1], densities[d], 11 + s * 7 + d, wrap);
}
END_TEST

START_TEST(test_wrap_reaches_across_the_seam)
{
    /* One feature at column 1 of a 100-wide row: column 98 is 3 away round the seam, 97 without. */
    const int w = 100, h = 3;
    uint8_t mask[300] = {0};
    mask[1 * w + 1] = 1;
    uint32_t d2[300];
    ck_assert_int_eq(tb_edt_squared(mask, w, h, true, 1, d2, NULL), 0);
    ck_assert_uint_eq(d2[1 * w + 98], 9);
    ck_assert_uint_eq(d2[0 * w + 99], 5); /* 2 across, 1 down */
    ck_assert_uint_eq(d2[1 * w + 51], 50 * 50);
    ck_assert_uint_eq(d2[1 * w + 52], 49 * 49); /* the short way is round the seam */
    /* Negative control: without wrap the same cells are far. */
    ck_assert_int_eq(tb_edt_squared(mask, w, h, false, 1, d2, NULL), 0);
    ck_assert_uint_eq(d2[1 * w + 98], 97 * 97);
    uint8_t dil[300];
    ck_assert_int_eq(tb_edt_dilate(mask, w, h, true, 9, 1, dil, NULL), 0);
    ck_assert_int_eq(dil[1 * w + 98], 1);
    ck_assert_int_eq(dil[1 * w + 97], 0);
    ck_assert_int_eq(tb_edt_dilate(mask, w, h, false, 9, 1, dil, NULL), 0);
    ck_assert_int_eq(dil[1 * w + 98], 0);
}
END_TEST

START_TEST(test_larger_grid_and_threads_agree)
{
    /* A sparse 300 x 200 grid (long distances, envelope with many pops) against brute force. */
    s_compare(300, 120, 2, 99, true);
    s_compare(300, 120, 2, 99, false);
    /* Blocks: the dilation's eight-at-a-time stretches of water and land. */
    s_compare(300, 120, -100, 7, true);
    s_compare(301, 60, -400, 8, true);
    s_compare(301, 60, -400, 8, false);
    /* Tall and sparse: column distances past 255 cells. */
    s_compare(24, 420, 1, 5, true);
    s_compare(24, 420, 1, 5, false);
}
END_TEST

START_TEST(test_dilate_in_place_and_refusals)
{
    const int w = 50, h = 30;
    uint8_t *mask = s_mask(w, h, 5, 3), *copy = malloc(w * h), *dil = malloc(w * h);
    memcpy(copy, mask, w * h);
    ck_assert_int_eq(tb_edt_dilate(mask, w, h, true, 20, 2, dil, NULL), 0);
    ck_assert_int_eq(tb_edt_dilate(copy, w, h, true, 20, 2, copy, NULL), 0);
    ck_assert_int_eq(memcmp(copy, dil, w * h), 0);
    tb_err_t err;
    ck_assert_int_eq(tb_edt_dilate(mask, w, h, true, -1, 1, dil, &err), -1);
    ck_assert_int_eq(tb_edt_squared(mask, 0, h, true, 1, NULL, &err), -1);
    free(mask);
    free(copy);
    free(dil);
}
END_TEST

Suite *edt_suite(void)
{
    Suite *s = suite_create("edt");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_matches_brute_force);
    tcase_add_test(tc, test_wrap_reaches_across_the_seam);
    tcase_add_test(tc, test_larger_grid_and_threads_agree);
    tcase_add_test(tc, test_dilate_in_place_and_refusals);
    suite_add_tcase(s, tc);
    return s;
}
