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

/* ---- tb_edt_squared_both ---- */

/* The brute-force answer of tb_edt_squared_both without caps: every cell's squared distance to the
 * nearest cell of the other kind, TB_EDT_FAR when there is none. */
static uint32_t *s_brute_both(const uint8_t *mask, int w, int h, bool wrap)
{
    uint8_t *inv = calloc((size_t)w * h, 1);
    for (int i = 0; i < w * h; i++)
        inv[i] = !mask[i];
    uint32_t *to_set = s_brute(mask, w, h, wrap), *to_zero = s_brute(inv, w, h, wrap);
    for (int i = 0; i < w * h; i++)
        if (mask[i])
            to_set[i] = to_zero[i];
    free(inv);
    free(to_zero);
    return to_set;
}

typedef struct {
    uint8_t *mask;
    int64_t w;
    int *calls; /* per row */
    bool rewrite;
} s_rows_seen_t;

/* The row callback: counts the calls per row and, when asked, overwrites the row of the mask (the
 * transform must have read it for the last time). */
static void s_row_seen(void *ctx, int64_t y, const uint32_t *d2_row, int thread)
{
    (void)d2_row;
    (void)thread;
    s_rows_seen_t *c = ctx;
    c->calls[y]++;
    if (c->rewrite)
        memset(c->mask + y * c->w, 7, (size_t)c->w);
}

/* tb_edt_squared_both against brute force on one mask, with and without caps, on 1 and 3 threads,
 * with a callback that rewrites the mask as it goes. */
static void s_compare_both_mask(const uint8_t *mask, int w, int h, bool wrap, const char *what)
{
    static const uint32_t caps[][2] = {
        {UINT32_MAX, UINT32_MAX}, {0, 0}, {1, 4}, {9, 2}, {50, 50}, {200, 13}};
    uint32_t *got = malloc(sizeof *got * (size_t)w * h);
    uint8_t *copy = malloc((size_t)w * h);
    int *calls = malloc(sizeof *calls * (size_t)h);
    uint32_t *exact = s_brute_both(mask, w, h, wrap), *want = malloc(sizeof *want * (size_t)w * h);
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        for (int i = 0; i < w * h; i++) /* past its kind's cap a cell is far */
            want[i] = exact[i] <= caps[c][mask[i] != 0] ? exact[i] : TB_EDT_FAR;
        for (int threads = 1; threads <= 3; threads += 2) {
            tb_err_t err;
            tb_pool_t *pool = threads > 1 ? tb_pool_new(threads, &err) : NULL;
            ck_assert(threads == 1 || pool);
            memcpy(copy, mask, (size_t)w * h);
            memset(calls, 0, sizeof *calls * (size_t)h);
            s_rows_seen_t seen = {copy, w, calls, c % 2 == 1};
            ck_assert_msg(tb_edt_squared_both(copy, w, h, wrap, caps[c], pool, got, s_row_seen,
                                              &seen, &err) == 0,
                          "%s", err.msg);
            tb_pool_destroy(&pool);
            int k = 0;
            while (k < w * h && got[k] == want[k])
                k++;
            ck_assert_msg(k == w * h,
                          "%s %dx%d wrap %d caps %u/%u threads %d cell (%d,%d): both %u, brute "
                          "force %u",
                          what, w, h, wrap, caps[c][0], caps[c][1], threads, k % w, k / w,
                          got[k % (w * h)], want[k % (w * h)]);
            for (int y = 0; y < h; y++)
                ck_assert_int_eq(calls[y], 1);
        }
    }
    free(exact);
    free(want);
    free(got);
    free(copy);
    free(calls);
}

static void s_compare_both(int w, int h, int per_mille, uint64_t seed, bool wrap)
{
    uint8_t *mask = s_mask(w, h, per_mille, seed);
    s_compare_both_mask(mask, w, h, wrap, "random");
    free(mask);
}

START_TEST(test_both_matches_brute_force)
{
    static const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 3}, {7, 5}, {33, 21}, {64, 17}};
    static const int densities[] = {0, 1, 10, 100, 500, 900, 1000, -300};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t d = 0; d < sizeof densities / sizeof densities[0]; d++)
            for (int wrap = 0; wrap <= 1; wrap++)
                s_compare_both(sizes[s][0], sizes[s][1], densities[d], 31 + s * 7 + d, wrap);
    /* long runs, rows of one kind, runs across the seam */
    s_compare_both(300, 40, -500, 5, true);
    s_compare_both(300, 40, -500, 5, false);
    s_compare_both(120, 90, 3, 6, true);
    s_compare_both(24, 300, 2, 8, true);
}
END_TEST

START_TEST(test_both_shapes)
{
    const int w = 41, h = 23;
    uint8_t *m = calloc((size_t)w * h, 1);
    for (int wrap = 0; wrap <= 1; wrap++) {
        /* a one-column-wide wall at column 0 (it touches the seam), and one at column 20 */
        memset(m, 0, (size_t)w * h);
        for (int y = 0; y < h; y++)
            m[y * w] = m[y * w + 20] = 1;
        s_compare_both_mask(m, w, h, wrap, "walls");
        /* a one-row-wide strip along the first row (the Y edge), a one-cell feature at the last */
        memset(m, 0, (size_t)w * h);
        memset(m, 1, (size_t)w);
        m[(h - 1) * w + 40] = 1;
        s_compare_both_mask(m, w, h, wrap, "edges");
        /* a run crossing the seam in every row but one, which is all of one kind */
        memset(m, 0, (size_t)w * h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                m[y * w + x] = y != 11 && (x < 3 || x > 37);
        s_compare_both_mask(m, w, h, wrap, "seam");
        /* mask values other than 1 are the same kind */
        for (int i = 0; i < w * h; i++)
            m[i] *= (uint8_t)(1 + i % 5);
        s_compare_both_mask(m, w, h, wrap, "values");
    }
    free(m);
}
END_TEST

START_TEST(test_both_is_the_two_transforms)
{
    /* On a planet-like mask, each kind's distances are tb_edt_squared's of the mask and of its
     * inverse; a cap changes only the cells beyond it. */
    const int w = 257, h = 130;
    uint8_t *m = s_mask(w, h, -350, 12), *inv = malloc((size_t)w * h);
    uint32_t *a = malloc(sizeof *a * (size_t)w * h), *b = malloc(sizeof *b * (size_t)w * h),
             *both = malloc(sizeof *both * (size_t)w * h);
    for (int i = 0; i < w * h; i++)
        inv[i] = !m[i];
    ck_assert_int_eq(tb_edt_squared(m, w, h, true, 1, a, NULL), 0);
    ck_assert_int_eq(tb_edt_squared(inv, w, h, true, 1, b, NULL), 0);
    ck_assert_int_eq(tb_edt_squared_both(m, w, h, true, NULL, NULL, both, NULL, NULL, NULL), 0);
    int over = 0;
    for (int i = 0; i < w * h; i++) {
        ck_assert_uint_eq(both[i], m[i] ? b[i] : a[i]);
        over += both[i] > 40;
    }
    ck_assert_int_gt(over, 0); /* the cap below has something to cut */
    const uint32_t cap[2] = {40, 40};
    ck_assert_int_eq(tb_edt_squared_both(m, w, h, true, cap, NULL, a, NULL, NULL, NULL), 0);
    for (int i = 0; i < w * h; i++)
        ck_assert_uint_eq(a[i], both[i] <= 40 ? both[i] : TB_EDT_FAR);
    /* refusals */
    tb_err_t err;
    ck_assert_int_eq(tb_edt_squared_both(m, 0, h, true, NULL, NULL, a, NULL, NULL, &err), -1);
    ck_assert_int_eq(tb_edt_squared_both(m, 70000, 70000, true, NULL, NULL, a, NULL, NULL, &err),
                     -1);
    free(m);
    free(inv);
    free(a);
    free(b);
    free(both);
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
    tcase_add_test(tc, test_both_matches_brute_force);
    tcase_add_test(tc, test_both_shapes);
    tcase_add_test(tc, test_both_is_the_two_transforms);
    suite_add_tcase(s, tc);
    return s;
}
