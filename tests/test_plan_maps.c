/* The plan's maps: region colours far apart, ids drawn legibly at each region's centroid (read
 * back from the pixels), map_class in legend colours, downsampling of big planets. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "coordinator/maps/font.h"
#include "coordinator/maps/plan_maps.h"
#include "support/plan_fixtures.h"

static double s_dist(const uint8_t a[3], const uint8_t b[3])
{
    double d = 0;
    for (int k = 0; k < 3; k++)
        d += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
    return sqrt(d);
}

START_TEST(test_region_colours_are_far_apart)
{
    double closest = 1e9, consecutive = 1e9;
    for (int i = 1; i <= 40; i++) {
        uint8_t a[3], b[3];
        tb_region_colour(i, a);
        for (int j = i + 1; j <= 40; j++) {
            tb_region_colour(j, b);
            closest = fmin(closest, s_dist(a, b));
            if (j == i + 1)
                consecutive = fmin(consecutive, s_dist(a, b));
        }
    }
    /* The predecessor's colour walk managed 37.7 at forty regions. */
    ck_assert_msg(closest > 45, "closest pair of 40 region colours %.1f apart", closest);
    ck_assert_msg(consecutive > 120, "consecutive ids only %.1f apart", consecutive);
}
END_TEST

/* Reads the text drawn by tb_font_draw_centred back from an image by sampling the middle of every
 * font pixel and matching the glyphs; returns the characters recognised ('?' for no match). */
static void s_read_text(const tb_image_t *img, int64_t cx, int64_t cy, int scale, int n, char *out)
{
    int64_t gw = (int64_t)n * (TB_FONT_W + 1) - 1;
    int64_t x0 = cx - gw * scale / 2, y0 = cy - TB_FONT_H * scale / 2;
    const uint8_t *px = img->pixels;
    for (int c = 0; c < n; c++) {
        uint8_t rows[TB_FONT_H] = {0};
        for (int gy = 0; gy < TB_FONT_H; gy++)
            for (int gx = 0; gx < TB_FONT_W; gx++) {
                int64_t x = tb_wrap(x0 + (c * (TB_FONT_W + 1) + gx) * scale + scale / 2, img->w);
                int64_t y = y0 + gy * scale + scale / 2;
                const uint8_t *p = px + 3 * (y * img->w + x);
                if (p[0] == 255 && p[1] == 255 && p[2] == 255)
                    rows[gy] |= (uint8_t)(1 << (TB_FONT_W - 1 - gx));
            }
        out[c] = '?';
        for (const char *k = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"; *k;
             k++)
            if (memcmp(tb_font_glyph(*k), rows, TB_FONT_H) == 0)
                out[c] = *k;
    }
    out[n] = '\0';
}

START_TEST(test_font_reads_back)
{
    tb_image_t img;
    ck_assert_int_eq(tb_image_alloc(&img, 200, 60, TB_PNG_RGB8, NULL), 0);
    const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
    tb_font_draw_centred(&img, "0123456789", 100, 30, 3, white, black, false);
    char got[16];
    s_read_text(&img, 100, 30, 3, 10, got);
    ck_assert_str_eq(got, "0123456789");
    /* Every glyph differs from every other, lower case from capitals included. */
    const char *all = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-.:/%#";
    for (const char *a = all; *a; a++) {
        ck_assert_ptr_nonnull(tb_font_glyph(*a));
        for (const char *b = a + 1; *b; b++)
            ck_assert_msg(memcmp(tb_font_glyph(*a), tb_font_glyph(*b), TB_FONT_H) != 0,
                          "'%c' and '%c' share a glyph", *a, *b);
    }
    /* A tile id reads back as printed, in lower case (map_tiles.png). */
    memset(img.pixels, 0, 200 * 60 * 3);
    tb_font_draw_centred(&img, "c012r003", 100, 30, 3, white, black, false);
    s_read_text(&img, 100, 30, 3, 8, got);
    ck_assert_str_eq(got, "c012r003");
    ck_assert_ptr_null(tb_font_glyph('@'));
    ck_assert_int_eq(tb_font_text_width("12", 2), 22);
    /* Text across the right edge continues on the left when X wraps. */
    memset(img.pixels, 0, 200 * 60 * 3);
    tb_font_draw_centred(&img, "48", 199, 30, 2, white, black, true);
    s_read_text(&img, 199, 30, 2, 2, got);
    ck_assert_str_eq(got, "48");
    tb_image_free(&img);
}
END_TEST

START_TEST(test_region_map_has_ids_at_the_centroids)
{
    /* Twelve islands; every id reads back from map_regions at its centroid. */
    const int64_t w = 900, h = 300;
    uint8_t *c = malloc((size_t)(w * h));
    memset(c, FIX_DEEP, (size_t)(w * h));
    for (int k = 0; k < 12; k++)
        fix_rect(c, w, 20 + (k % 6) * 150, 40 + (k / 6) * 140, 70, 70, FIX_LOW);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 10);
    tb_image_t painting, map;
    fix_painting(&m, c, w, h, &painting);
    tb_err_t err;
    tb_plan_t *p = tb_plan_new(&m, &painting, 1, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(tb_plan_region_count(p), 12);
    ck_assert_int_eq(tb_plan_map_regions(p, 4096, &map, &err), 0);
    int scale = (int)(map.h / 140) < 2 ? 2 : (int)(map.h / 140);
    for (int r = 0; r < 12; r++) {
        const tb_plan_region_t *reg = tb_plan_region(p, r);
        char want[8], got[8];
        snprintf(want, sizeof want, "%d", reg->id);
        s_read_text(&map, (int64_t)floor(reg->centroid_x), (int64_t)floor(reg->centroid_y), scale,
                    (int)strlen(want), got);
        ck_assert_str_eq(got, want);
        /* and the land round it is in the region's colour */
        uint8_t rgb[3];
        tb_region_colour(reg->id, rgb);
        int64_t x = reg->land_arc.x0 + 2, y = reg->land_y0 + 2;
        ck_assert_int_eq(memcmp((uint8_t *)map.pixels + 3 * (y * map.w + x), rgb, 3), 0);
    }
    tb_image_free(&map);
    /* map_class: legend colours, point-sampled down by a whole factor. */
    ck_assert_int_eq(tb_plan_map_class(p, 300, &map, &err), 0);
    ck_assert_uint_eq(map.w, 300);
    ck_assert_uint_eq(map.h, 100);
    const uint8_t *px = map.pixels;
    ck_assert_int_eq(memcmp(px + 3 * (30 * 300 + 10), m.legend.classes[FIX_LOW].rgb, 3), 0);
    ck_assert_int_eq(memcmp(px, m.legend.classes[FIX_DEEP].rgb, 3), 0);
    ck_assert_int_eq(tb_plan_map_factor(12500, 4096), 4);
    tb_image_free(&map);
    tb_image_free(&painting);
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

Suite *plan_maps_suite(void)
{
    Suite *s = suite_create("plan_maps");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_region_colours_are_far_apart);
    tcase_add_test(tc, test_font_reads_back);
    tcase_add_test(tc, test_region_map_has_ids_at_the_centroids);
    suite_add_tcase(s, tc);
    return s;
}
