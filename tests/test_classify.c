/* Classification of paintings, a row at a time: nearest colour within the tolerance, unmatched
 * pixels dropped, counted and filled from their matched neighbours (never snapped), refusal above
 * the allowed share with the colours named, and despeckling, all across the seam; the matcher
 * records no more unmatched pixels than the legend allows. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "common/hash.h"
#include "jobs/plan/classify.h"
#include "support/plan_fixtures.h"

static void s_set_px(tb_image_t *img, int64_t x, int64_t y, uint32_t rgb)
{
    uint8_t *p = (uint8_t *)img->pixels + 3 * (y * img->w + x);
    p[0] = (uint8_t)(rgb >> 16);
    p[1] = (uint8_t)(rgb >> 8);
    p[2] = (uint8_t)rgb;
}

/* Matches img row by row into out (w * h); with fill, finishes and lays the fill in too. Returns
 * what the finish returned (0 without fill). */
static int s_classify(const tb_image_t *img, const tb_legend_t *legend, bool fill, uint8_t *out,
                      tb_classify_report_t *rep, tb_err_t *err)
{
    const int64_t w = img->w, h = img->h;
    tb_classify_t *c = tb_classify_new(legend, w, h, err);
    ck_assert_ptr_nonnull(c);
    for (int64_t y = 0; y < h; y++)
        ck_assert_int_eq(
            tb_classify_row(c, (const uint8_t *)img->pixels + 3 * y * w, out + y * w, err), 0);
    int rc = tb_classify_finish(c, "p.png", rep, err);
    if (rc == 0 && fill)
        for (int64_t y = 0; y < h; y++)
            tb_classify_fill_row(c, y, out + y * w);
    tb_classify_destroy(&c);
    return rc;
}

/* The despeckle of a whole raster, row by row from a copy of the rows either side. */
static int64_t s_despeckle(uint8_t *c, int64_t w, int64_t h, bool wrap)
{
    uint8_t *orig = malloc((size_t)(w * h));
    memcpy(orig, c, (size_t)(w * h));
    int64_t changed = 0;
    for (int64_t y = 0; y < h; y++)
        changed +=
            tb_classify_despeckle_row(y ? orig + (y - 1) * w : NULL, orig + y * w,
                                      y + 1 < h ? orig + (y + 1) * w : NULL, w, wrap, c + y * w);
    free(orig);
    return changed;
}

/* A 20 x 10 painting: deep ocean left half, lowland right half. */
static uint8_t *s_halves(tb_manifest_t *m, tb_image_t *img)
{
    fix_manifest(m, 20, 8, 4);
    uint8_t *cls = malloc(200);
    for (int k = 0; k < 200; k++)
        cls[k] = (k % 20) < 10 ? FIX_DEEP : FIX_LOW;
    fix_painting(m, cls, 20, 10, img);
    return cls;
}

START_TEST(test_nearest_within_tolerance)
{
    tb_manifest_t m;
    tb_image_t img;
    uint8_t *want = s_halves(&m, &img);
    /* Lowland #40a040 shifted by (10, -10, 5): distance 15 < 24 still matches. */
    s_set_px(&img, 15, 3, 0x4a9645);
    uint8_t got[200];
    tb_classify_report_t rep;
    ck_assert_int_eq(s_classify(&img, &m.legend, false, got, &rep, NULL), 0);
    ck_assert_int_eq(memcmp(got, want, 200), 0);
    ck_assert_int_eq(rep.unmatched_pixels, 0);
    ck_assert_int_eq(rep.pixels, 200);
    free(want);
    tb_image_free(&img);
}
END_TEST

START_TEST(test_unmatched_are_dropped_counted_and_filled_not_snapped)
{
    tb_manifest_t m;
    tb_image_t img;
    uint8_t *want = s_halves(&m, &img);
    /* #58b858 is nearest to lowland (distance 41.6) but beyond the tolerance. Placed inside the
     * deep ocean it must become deep (its neighbours), not lowland (its nearest colour). */
    s_set_px(&img, 4, 4, 0x58b858);
    s_set_px(&img, 5, 4, 0x58b858);
    uint8_t got[200];
    tb_classify_report_t rep;
    tb_err_t err;
    m.legend.max_unmatched_fraction = 0.02;
    ck_assert_msg(s_classify(&img, &m.legend, true, got, &rep, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(rep.unmatched_pixels, 2);
    ck_assert_int_eq(rep.unmatched_colours, 1);
    ck_assert_int_eq(rep.n_top, 1);
    ck_assert_int_eq(rep.top[0].pixels, 2);
    ck_assert_int_eq(rep.top[0].example_x, 4);
    ck_assert_int_eq(rep.top[0].example_y, 4);
    ck_assert_int_eq(rep.fill_rounds, 1);
    ck_assert_int_eq(got[4 * 20 + 4], FIX_DEEP);
    ck_assert_int_eq(got[4 * 20 + 5], FIX_DEEP);
    ck_assert_int_eq(memcmp(got, want, 200), 0);
    free(want);
    tb_image_free(&img);
}
END_TEST

START_TEST(test_fill_takes_several_rounds_and_crosses_the_seam)
{
    /* A 3-wide unmatched band over the seam (columns 19, 0, 1) between lowland (2..9) and deep
     * (10..18): the middle column has no matched neighbour in round one. */
    tb_manifest_t m;
    fix_manifest(&m, 20, 8, 4);
    m.legend.max_unmatched_fraction = 0.5;
    uint8_t cls[200];
    for (int k = 0; k < 200; k++)
        cls[k] = (k % 20) < 10 ? FIX_LOW : FIX_DEEP;
    tb_image_t img;
    fix_painting(&m, cls, 20, 10, &img);
    for (int j = 0; j < 10; j++)
        for (int x = -1; x <= 1; x++)
            s_set_px(&img, (x + 20) % 20, j, 0xff00ff);
    tb_classify_report_t rep;
    tb_err_t err;
    ck_assert_int_eq(s_classify(&img, &m.legend, true, cls, &rep, &err), 0);
    ck_assert_int_eq(rep.fill_rounds, 2);
    for (int j = 0; j < 10; j++) {
        ck_assert_int_eq(cls[j * 20 + 1], FIX_LOW);
        ck_assert_int_eq(cls[j * 20 + 19], FIX_DEEP); /* its matched neighbours are across 18 */
        ck_assert_int_ne(cls[j * 20 + 0], TB_CLASS_NONE);
    }
    /* Nothing to fill from is an error, not a loop. */
    m.legend.max_unmatched_fraction = 1;
    for (int k = 0; k < 200; k++)
        s_set_px(&img, k % 20, k / 20, 0xff00ff);
    ck_assert_int_eq(s_classify(&img, &m.legend, true, cls, &rep, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no pixel matches"));
    tb_image_free(&img);
}
END_TEST

START_TEST(test_only_the_allowed_unmatched_are_recorded)
{
    /* The fill's memory is the unmatched pixels the legend allows: 2 of 200 at 1 %. A third is
     * counted, not recorded, and the painting is refused. */
    tb_manifest_t m;
    tb_image_t img;
    uint8_t *want = s_halves(&m, &img);
    m.legend.max_unmatched_fraction = 0.01;
    uint8_t got[200];
    tb_classify_report_t rep;
    tb_err_t err;
    for (int n = 1; n <= 3; n++) {
        s_set_px(&img, 12 + n, 7, 0xff00ff);
        tb_classify_t *c = tb_classify_new(&m.legend, 20, 10, &err);
        for (int y = 0; y < 10; y++)
            tb_classify_row(c, (const uint8_t *)img.pixels + 60 * y, got + 20 * y, &err);
        ck_assert_int_eq(tb_classify_recorded(c), n < 3 ? n : 2);
        ck_assert_int_eq(tb_classify_finish(c, "p.png", &rep, &err), n < 3 ? 0 : -1);
        ck_assert_int_eq(rep.unmatched_pixels, n);
        tb_classify_destroy(&c);
    }
    free(want);
    tb_image_free(&img);
}
END_TEST

START_TEST(test_refused_above_the_fraction_with_colours_named)
{
    tb_manifest_t m;
    tb_image_t img;
    uint8_t *want = s_halves(&m, &img);
    m.legend.max_unmatched_fraction = 0.01; /* 2 pixels of 200 allowed */
    for (int x = 0; x < 3; x++)
        s_set_px(&img, 12 + x, 7, 0xff00ff);
    s_set_px(&img, 2, 9, 0x00ffff);
    uint8_t got[200];
    tb_classify_report_t rep;
    tb_err_t err;
    tb_classify_t *c = tb_classify_new(&m.legend, 20, 10, &err);
    for (int y = 0; y < 10; y++)
        ck_assert_int_eq(
            tb_classify_row(c, (const uint8_t *)img.pixels + 60 * y, got + 20 * y, &err), 0);
    ck_assert_int_eq(tb_classify_finish(c, "world/painting.png", &rep, &err), -1);
    tb_classify_destroy(&c);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "world/painting.png"));
    ck_assert_msg(strstr(err.msg, "4 of 200 pixels") != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "#ff00ff 3 px (e.g. x 12, y 7)"));
    ck_assert_ptr_nonnull(strstr(err.msg, "#00ffff 1 px (e.g. x 2, y 9)"));
    ck_assert_int_eq(rep.unmatched_pixels, 4);
    ck_assert_int_eq(rep.n_top, 2);
    /* The same painting passes when the legend allows 2 %. */
    m.legend.max_unmatched_fraction = 0.02;
    ck_assert_int_eq(s_classify(&img, &m.legend, true, got, &rep, &err), 0);
    free(want);
    tb_image_free(&img);
}
END_TEST

START_TEST(test_top_colours_are_the_most_common)
{
    tb_manifest_t m;
    fix_manifest(&m, 40, 8, 4);
    tb_image_t img;
    ck_assert_int_eq(tb_image_alloc(&img, 40, 10, TB_PNG_RGB8, NULL), 0);
    /* Seven unmatched colours with 1..7 pixels each; the top five are 7, 6, 5, 4, 3. */
    int k = 0;
    for (int c = 1; c <= 7; c++)
        for (int n = 0; n < c; n++, k++)
            s_set_px(&img, k % 40, k / 40, 0xff0000u + (uint32_t)c * 0x10);
    for (; k < 400; k++)
        s_set_px(&img, k % 40, k / 40, 0x203060);
    uint8_t got[400];
    tb_classify_report_t rep;
    /* 28 of 400 is more than the fixture's 1 %: refused, with the report filled */
    ck_assert_int_eq(s_classify(&img, &m.legend, false, got, &rep, NULL), -1);
    ck_assert_int_eq(rep.unmatched_pixels, 28);
    ck_assert_int_eq(rep.unmatched_colours, 7);
    ck_assert_int_eq(rep.n_top, 5);
    for (int t = 0; t < 5; t++) {
        ck_assert_int_eq(rep.top[t].pixels, 7 - t);
        ck_assert_int_eq(rep.top[t].rgb[2], (7 - t) * 0x10);
    }
    char text[512];
    tb_classify_describe_unmatched(&rep, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "and 2 more colours"));
    tb_image_free(&img);
}
END_TEST

START_TEST(test_despeckle)
{
    static const char *const rows[] = {
        "........", "..#.....", /* an isolated lowland pixel: becomes deep */
        "........", "....##..", /* a pair: kept */
        "#.......", /* isolated at x = 0, but column 7 of the rows round it is deep: becomes deep */
        ".......#", /* touches the x = 0 pixel across the seam (diagonal): ... */
        NULL};
    int64_t w, h;
    uint8_t *c = fix_ascii(rows, &w, &h);
    /* Rows 4 and 5 hold a diagonal pair across the seam, so neither is isolated with wrap on. */
    int64_t changed = s_despeckle(c, w, h, true);
    ck_assert_int_eq(changed, 1);
    ck_assert_int_eq(c[1 * w + 2], FIX_DEEP);
    ck_assert_int_eq(c[3 * w + 4], FIX_LOW);
    ck_assert_int_eq(c[4 * w + 0], FIX_LOW);
    ck_assert_int_eq(c[5 * w + 7], FIX_LOW);
    free(c);
    /* Negative control: without wrap the seam pair is two isolated pixels. */
    c = fix_ascii(rows, &w, &h);
    ck_assert_int_eq(s_despeckle(c, w, h, false), 3);
    ck_assert_int_eq(c[4 * w + 0], FIX_DEEP);
    free(c);
}
END_TEST

START_TEST(test_despeckle_takes_the_mode_and_is_order_free)
{
    /* A highland pixel among 5 lowland and 3 shelf neighbours becomes lowland; a checkerboard is
     * never isolated: its diagonal neighbours match. */
    static const char *const rows[] = {"##,", "#^,", "##,", NULL};
    int64_t w, h;
    uint8_t *c = fix_ascii(rows, &w, &h);
    ck_assert_int_eq(s_despeckle(c, w, h, false), 1);
    ck_assert_int_eq(c[1 * w + 1], FIX_LOW);
    free(c);
    uint8_t board[64];
    for (int k = 0; k < 64; k++)
        board[k] = ((k % 8) + (k / 8)) % 2 ? FIX_LOW : FIX_DEEP;
    /* With wrap on an 8-wide board, each cell's 8 neighbours: 4 diagonal (same) - not isolated. */
    ck_assert_int_eq(s_despeckle(board, 8, 8, true), 0);
}
END_TEST

/* The plain rule on a copy, for comparison with the fast one. */
static int64_t s_reference_despeckle(uint8_t *c, int64_t w, int64_t h)
{
    uint8_t *orig = malloc((size_t)(w * h));
    memcpy(orig, c, (size_t)(w * h));
    int64_t changed = 0;
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            int counts[TB_MAX_CLASSES] = {0}, n = 0, same = 0;
            for (int d = 0; d < 8; d++) {
                int64_t y = j + tb_nb_dy[d];
                if (y < 0 || y >= h)
                    continue;
                uint8_t v = orig[tb_idx(w, tb_wrap(i + tb_nb_dx[d], w), y)];
                same |= v == orig[tb_idx(w, i, j)];
                counts[v]++;
                n++;
            }
            if (same || !n)
                continue;
            int best = 0;
            for (int k = 1; k < TB_MAX_CLASSES; k++)
                if (counts[k] > counts[best])
                    best = k;
            c[tb_idx(w, i, j)] = (uint8_t)best;
            changed++;
        }
    free(orig);
    return changed;
}

START_TEST(test_despeckle_matches_the_plain_rule)
{
    /* Wide flat stretches (the fast path steps over eight cells) with speckle sprinkled in. */
    const int64_t w = 203, h = 41;
    uint8_t *a = malloc(w * h), *b = malloc(w * h);
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            uint8_t v = (uint8_t)(((i / 37) + (j / 13)) % 3);
            uint64_t r = tb_hash(5, TB_SALT_TEST, i, j, 0) % 100;
            a[j * w + i] = r < 4 ? (uint8_t)(r % 4) : v;
        }
    memcpy(b, a, w * h);
    int64_t want = s_reference_despeckle(b, w, h);
    int64_t got = s_despeckle(a, w, h, true);
    ck_assert_int_gt(want, 20);
    ck_assert_int_eq(got, want);
    ck_assert_int_eq(memcmp(a, b, w * h), 0);
    free(a);
    free(b);
}
END_TEST

Suite *classify_suite(void)
{
    Suite *s = suite_create("classify");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_nearest_within_tolerance);
    tcase_add_test(tc, test_unmatched_are_dropped_counted_and_filled_not_snapped);
    tcase_add_test(tc, test_fill_takes_several_rounds_and_crosses_the_seam);
    tcase_add_test(tc, test_only_the_allowed_unmatched_are_recorded);
    tcase_add_test(tc, test_refused_above_the_fraction_with_colours_named);
    tcase_add_test(tc, test_top_colours_are_the_most_common);
    tcase_add_test(tc, test_despeckle);
    tcase_add_test(tc, test_despeckle_takes_the_mode_and_is_order_free);
    tcase_add_test(tc, test_despeckle_matches_the_plain_rule);
    suite_add_tcase(s, tc);
    return s;
}
