/* The plan's maps: region colours far apart, ids drawn legibly at each region's centroid (read
 * back from the pixels), map_class in legend colours, downsampling of big planets. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "coordinator/bake/planet_input.h"
#include "coordinator/maps/font.h"
#include "coordinator/maps/plan_maps.h"
#include "support/plan_fixtures.h"
#include "support/tb_test.h"

/* Entries in a directory, but . and .. */
static int s_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

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
    tb_plan_t *p = tb_plan_new_image(&m, &painting, 1, &err);
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

START_TEST(test_tile_census_reads_the_class_raster)
{
    /* The census, a row of tiles at a time from the class raster, against tb_tile_content on the
     * whole land mask: ocean, land and coast tiles, a partial last row, land across the seam. */
    const int64_t w = 400, h = 230;
    uint8_t *c = malloc((size_t)(w * h));
    memset(c, FIX_DEEP, (size_t)(w * h));
    fix_rect(c, w, 100, 100, 100, 100, FIX_LOW); /* tile (1, 1) all land */
    fix_rect(c, w, 390, 10, 20, 20, FIX_HIGH);   /* across the seam */
    fix_rect(c, w, 250, 225, 10, 5, FIX_LOW);    /* in the partial last row */
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 10);
    tb_image_t painting;
    fix_painting(&m, c, w, h, &painting);
    tb_err_t err;
    tb_plan_t *p = tb_plan_new_image(&m, &painting, 1, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    tb_tile_lattice_t L;
    ck_assert_int_eq(tb_tile_lattice_make(&L, w, h, 8, 0.8, 2, &err), 0);
    ck_assert_int_eq(L.cols, 4);
    uint8_t *land = malloc((size_t)(w * h)), *content = malloc((size_t)tb_tile_count(&L));
    for (int64_t k = 0; k < w * h; k++)
        land[k] = c[k] == FIX_LOW || c[k] == FIX_HIGH;
    int n = tb_plan_tile_census(p, &L, content), want = 0;
    for (int64_t k = 0; k < tb_tile_count(&L); k++) {
        tb_tile_content_t t = tb_tile_content(&L, (tb_tile_id_t){k % L.cols, k / L.cols}, land);
        ck_assert_int_eq(content[k], t);
        want += t != TB_TILE_OCEAN;
    }
    ck_assert_int_eq(n, want);
    ck_assert_int_eq(content[1 * 4 + 1], TB_TILE_LAND);
    ck_assert_int_eq(content[0], TB_TILE_COAST);
    ck_assert_int_eq(content[3], TB_TILE_COAST);
    ck_assert_int_eq(content[2 * 4 + 2], TB_TILE_COAST);
    free(land);
    free(content);
    tb_plan_destroy(&p);
    tb_image_free(&painting);
    free(c);
}
END_TEST

START_TEST(test_mapped_rasters_keep_released_rows)
{
    /* The rasters terrain plan maps (coordinator/bake/planet_input.h): cells start at zero, rows
     * released leave the process and come back from the file with what was written, and the file
     * is gone from its directory from the start. */
    const char *dir = tb_test_tmpdir("plan-maps-raster");
    tb_raster_t r;
    tb_err_t err;
    ck_assert_msg(tb_raster_map_temp(&r, dir, ".raster", 3000, 50, 4, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(s_count_entries(dir), 0);
    for (int64_t y = 0; y < 50; y++) {
        int32_t *row = tb_raster_row(&r, y);
        ck_assert_int_eq(row[y], 0);
        for (int64_t x = 0; x < 3000; x++)
            row[x] = (int32_t)(y * 3000 + x);
        if (y % 7 == 6)
            tb_raster_release(&r, y - 6, y + 1);
    }
    tb_raster_release(&r, 0, 50);
    for (int64_t y = 0; y < 50; y++) {
        const int32_t *row = tb_raster_row(&r, y);
        for (int64_t x = 0; x < 3000; x += 7)
            ck_assert_int_eq(row[x], (int32_t)(y * 3000 + x));
    }
    tb_raster_unmap(&r);
    ck_assert_ptr_null(r.data);
    /* a directory that is not there: refused, naming it */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/none", dir);
    ck_assert_int_eq(tb_raster_map_temp(&r, missing, ".raster", 10, 10, 1, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "none/.raster"));
}
END_TEST

Suite *plan_maps_suite(void)
{
    Suite *s = suite_create("plan_maps");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_region_colours_are_far_apart);
    tcase_add_test(tc, test_font_reads_back);
    tcase_add_test(tc, test_region_map_has_ids_at_the_centroids);
    tcase_add_test(tc, test_tile_census_reads_the_class_raster);
    tcase_add_test(tc, test_mapped_rasters_keep_released_rows);
    suite_add_tcase(s, tc);
    return s;
}
