/* The tile mosaic (coordinator/maps/tile_mosaic.h, docs/tiles.md "Stitching") on a synthetic tiles
 * directory: a 3 x 2 lattice of 4-sample tiles over a 12 x 6 planet (the last row partial, 2
 * rows), every sample a known function of its world column and row, so that every stitched sample
 * can be checked: every rectangle position and several sizes, across the X seam and the Y join
 * between tile rows. Then the area in metres to samples (rounding by centres, wrap, refusals), an
 * unlisted tile filled and counted, a damaged file (flipped byte: TB_E_CHECKSUM naming it; missing:
 * TB_E_IO naming it), an index whose id is not its column and row, and the hillshade's light. */
#include <check.h>
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/hash.h"
#include "coordinator/maps/tile_mosaic.h"
#include "jobs/detail/lattice.h"
#include "support/tb_test.h"

enum { S_T = 4, S_COLS = 3, S_ROWS = 2, S_W = 12, S_H = 6 };

static uint16_t s_value(int64_t x, int64_t y)
{
    return (uint16_t)(x * 100 + y * 7 + 1);
}

/* Writes dir/tiles with every tile but `skip_col, skip_row` (-1: none) listed; `bad_id` lists
 * tile (0, 0) under another id. */
static void s_make(const char *dir, int skip_col, int skip_row, bool bad_id)
{
    tb_err_t err;
    char tiles[4200], path[4300];
    ck_assert_int_eq(tb_fs_join(tiles, sizeof tiles, dir, "tiles", &err), 0);
    ck_assert_int_eq(tb_fs_mkdir_p(tiles, &err), 0);
    cJSON *index = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    cJSON *lat = cJSON_AddObjectToObject(index, "lattice");
    cJSON_AddNumberToObject(lat, "cell_m", 2);
    cJSON_AddNumberToObject(lat, "tile_samples", S_T);
    cJSON_AddNumberToObject(lat, "columns", S_COLS);
    cJSON_AddNumberToObject(lat, "rows", S_ROWS);
    cJSON_AddNumberToObject(lat, "planet_samples_w", S_W);
    cJSON_AddNumberToObject(lat, "planet_samples_h", S_H);
    double el[2] = {-100, 100};
    cJSON_AddItemToObject(cJSON_AddObjectToObject(index, "encoding"), "elevation_m",
                          cJSON_CreateDoubleArray(el, 2));
    for (int r = 0; r < S_ROWS; r++)
        for (int c = 0; c < S_COLS; c++) {
            if (c == skip_col && r == skip_row)
                continue;
            int h = S_H - r * S_T < S_T ? S_H - r * S_T : S_T;
            unsigned char b[2 * S_T * S_T];
            for (int j = 0; j < h; j++)
                for (int i = 0; i < S_T; i++) {
                    uint16_t v = s_value(c * S_T + i, r * S_T + j);
                    b[2 * (j * S_T + i)] = (unsigned char)(v & 0xff);
                    b[2 * (j * S_T + i) + 1] = (unsigned char)(v >> 8);
                }
            char id[TB_TILE_ID_MAX], name[80], hex[17];
            tb_tile_id_format((tb_tile_id_t){c, r}, id);
            snprintf(name, sizeof name, "%s.r16", id);
            snprintf(path, sizeof path, "%s/%s", tiles, name);
            size_t n = (size_t)(2 * S_T * h);
            ck_assert_int_eq(tb_fs_write_atomic(path, b, n, &err), 0);
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(b, n));
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "id", bad_id && c == 0 && r == 0 ? "c001r000" : id);
            cJSON_AddNumberToObject(e, "col", c);
            cJSON_AddNumberToObject(e, "row", r);
            double samples[2] = {S_T, h};
            cJSON_AddItemToObject(e, "samples", cJSON_CreateDoubleArray(samples, 2));
            cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "files"), name, hex);
            cJSON_AddItemToArray(arr, e);
        }
    cJSON_AddItemToObject(index, "tiles", arr);
    char *text = cJSON_Print(index);
    snprintf(path, sizeof path, "%s/index.json", tiles);
    ck_assert_int_eq(tb_fs_write_atomic(path, text, strlen(text), &err), 0);
    free(text);
    cJSON_Delete(index);
}

START_TEST(test_every_rectangle_is_the_world_function)
{
    const char *dir = tb_test_tmpdir("mosaic_all");
    s_make(dir, -1, -1, false);
    tb_err_t err;
    tb_mosaic_t *m;
    ck_assert_msg(tb_mosaic_open(dir, &m, &err) == 0, "%s", err.msg);
    tb_mosaic_info_t I;
    tb_mosaic_info(m, &I);
    ck_assert_int_eq(I.n_tiles, 6);
    const int64_t widths[] = {1, 3, 5, 12};
    int64_t checked = 0, crossed_seam = 0, crossed_rows = 0;
    for (int64_t x0 = 0; x0 < S_W; x0++)
        for (int wi = 0; wi < 4; wi++)
            for (int64_t y0 = 0; y0 < S_H; y0++)
                for (int64_t h = 1; y0 + h <= S_H; h += 2) {
                    tb_mosaic_rect_t r = {x0, y0, widths[wi], h};
                    uint16_t out[S_W * S_H];
                    int64_t filled = -1;
                    ck_assert_msg(tb_mosaic_stitch(m, TB_MOSAIC_HEIGHT, r, 9, out, &filled, &err) ==
                                      0,
                                  "%s", err.msg);
                    ck_assert_int_eq(filled, 0);
                    for (int64_t j = 0; j < h; j++)
                        for (int64_t i = 0; i < r.w; i++)
                            ck_assert_uint_eq(out[j * r.w + i], s_value((x0 + i) % S_W, y0 + j));
                    checked++;
                    crossed_seam += x0 + r.w > S_W;
                    crossed_rows += y0 < S_T && y0 + h > S_T;
                }
    ck_assert_int_gt(crossed_seam, 0);
    ck_assert_int_gt(crossed_rows, 0);
    ck_assert_int_gt(checked, 100);
    /* outside the lattice */
    uint16_t out[S_W * S_H];
    ck_assert_int_eq(
        tb_mosaic_stitch(m, TB_MOSAIC_HEIGHT, (tb_mosaic_rect_t){0, 4, 2, 3}, 0, out, NULL, &err),
        -1);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    tb_mosaic_close(&m);
}
END_TEST

START_TEST(test_area_in_metres)
{
    tb_mosaic_info_t I = {.cell_m = 2,
                          .tile_samples = 4,
                          .cols = 3,
                          .rows = 2,
                          .planet_w = 12,
                          .planet_h = 6,
                          .elev_lo = -100,
                          .elev_hi = 100};
    tb_mosaic_rect_t r;
    tb_err_t err;
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 0, 0, 24, 12, 1000, &r, &err), 0);
    ck_assert(r.x0 == 0 && r.y0 == 0 && r.w == 12 && r.h == 6);
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 20, 2, 8, 4, 1000, &r, &err), 0);
    ck_assert(r.x0 == 10 && r.y0 == 1 && r.w == 4 && r.h == 2);
    ck_assert_int_eq(tb_mosaic_area_samples(&I, -4, 2, 8, 4, 1000, &r, &err), 0);
    ck_assert(r.x0 == 10 && r.w == 4);
    /* by centres: [1, 3) holds the centre of sample 0 (1 m) only */
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 1, 0, 2, 2, 1000, &r, &err), 0);
    ck_assert(r.x0 == 0 && r.w == 1 && r.h == 1);
    /* refusals */
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 0, 0, 26, 2, 1000, &r, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 0, 10, 2, 4, 1000, &r, &err), -1);
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 0, 0, 0, 2, 1000, &r, &err), -1);
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 0, 0, 0.5, 2, 1000, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no sample centre"));
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 0, 0, 24, 12, 71, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "budget of 71"));
    ck_assert_int_eq(tb_mosaic_area_samples(&I, 0, 0, 24, 12, 72, &r, &err), 0);
    /* the encoding */
    ck_assert_uint_eq(tb_mosaic_encode_m(&I, 0), 32768); /* 32767.5 rounds up */
    ck_assert_uint_eq(tb_mosaic_encode_m(&I, -500), 0);
    ck_assert_uint_eq(tb_mosaic_encode_m(&I, 500), 65535);
}
END_TEST

START_TEST(test_unlisted_tile_is_filled_and_counted)
{
    const char *dir = tb_test_tmpdir("mosaic_fill");
    s_make(dir, 1, 1, false); /* tile (1, 1): columns 4..7, rows 4..5 */
    tb_err_t err;
    tb_mosaic_t *m;
    ck_assert_msg(tb_mosaic_open(dir, &m, &err) == 0, "%s", err.msg);
    ck_assert(!tb_mosaic_has_tile(m, 1, 1) && tb_mosaic_has_tile(m, 0, 1));
    uint16_t out[S_W * S_H];
    int64_t filled = 0;
    tb_mosaic_rect_t r = {2, 3, 8, 3};
    ck_assert_msg(tb_mosaic_stitch(m, TB_MOSAIC_HEIGHT, r, 777, out, &filled, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(filled, 4 * 2);
    for (int64_t j = 0; j < r.h; j++)
        for (int64_t i = 0; i < r.w; i++) {
            int64_t x = r.x0 + i, y = r.y0 + j;
            bool gone = x >= 4 && x < 8 && y >= 4;
            ck_assert_uint_eq(out[j * r.w + i], gone ? 777 : s_value(x, y));
        }
    tb_mosaic_close(&m);
}
END_TEST

START_TEST(test_damaged_files_are_refused_naming_them)
{
    const char *dir = tb_test_tmpdir("mosaic_bad");
    s_make(dir, -1, -1, false);
    tb_err_t err;
    tb_mosaic_t *m;
    ck_assert_int_eq(tb_mosaic_open(dir, &m, &err), 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/tiles/c002r000.r16", dir);
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 5, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    uint16_t out[S_W * S_H];
    /* the damaged tile's columns are 8..11: a rectangle that misses them still stitches */
    ck_assert_int_eq(
        tb_mosaic_stitch(m, TB_MOSAIC_HEIGHT, (tb_mosaic_rect_t){0, 0, 8, 4}, 0, out, NULL, &err),
        0);
    ck_assert_int_eq(
        tb_mosaic_stitch(m, TB_MOSAIC_HEIGHT, (tb_mosaic_rect_t){10, 0, 4, 4}, 0, out, NULL, &err),
        -1);
    ck_assert_int_eq(err.code, TB_E_CHECKSUM);
    ck_assert_ptr_nonnull(strstr(err.msg, "c002r000.r16"));
    ck_assert(remove(path) == 0);
    ck_assert_int_eq(
        tb_mosaic_stitch(m, TB_MOSAIC_HEIGHT, (tb_mosaic_rect_t){10, 0, 4, 4}, 0, out, NULL, &err),
        -1);
    ck_assert_int_eq(err.code, TB_E_IO);
    ck_assert_ptr_nonnull(strstr(err.msg, "c002r000.r16"));
    tb_mosaic_close(&m);
    /* an index whose id is not its column and row (an id is a file name) */
    const char *dir2 = tb_test_tmpdir("mosaic_badid");
    s_make(dir2, -1, -1, true);
    ck_assert_int_eq(tb_mosaic_open(dir2, &m, &err), -1);
    ck_assert_int_eq(err.code, TB_E_FORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "is not c000r000"));
    /* no index at all */
    ck_assert_int_eq(tb_mosaic_open("/nonexistent-dir-of-tiles", &m, &err), -1);
    ck_assert_int_eq(err.code, TB_E_IO);
}
END_TEST

START_TEST(test_hillshade_light_from_the_north_west)
{
    tb_mosaic_info_t I = {.cell_m = 2, .elev_lo = 0, .elev_hi = 65535}; /* 1 m a step */
    uint16_t in[5 * 5];
    float out[3 * 3];
    for (int k = 0; k < 25; k++)
        in[k] = 1000;
    tb_mosaic_hillshade(&I, in, 3, 3, 1, out);
    ck_assert_double_eq_tol(out[4], sqrt(0.5), 1e-6);
    /* rising to the east: the slope faces west, towards the light, so brighter than flat */
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            in[j * 5 + i] = (uint16_t)(1000 + 2 * i);
    tb_mosaic_hillshade(&I, in, 3, 3, 1, out);
    ck_assert_double_gt(out[4], sqrt(0.5) + 0.1);
    /* rising to the south: faces north, towards the light too; rising to the west: darker */
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            in[j * 5 + i] = (uint16_t)(1000 + 2 * (4 - i));
    tb_mosaic_hillshade(&I, in, 3, 3, 1, out);
    ck_assert_double_lt(out[4], sqrt(0.5) - 0.1);
    /* the same ramp exaggerated 5 times is darker still */
    float dark = out[4];
    tb_mosaic_hillshade(&I, in, 3, 3, 5, out);
    ck_assert_double_lt(out[4], dark);
}
END_TEST

Suite *tile_mosaic_suite(void)
{
    Suite *s = suite_create("tile_mosaic");
    TCase *t = tcase_create("tile_mosaic");
    tcase_add_test(t, test_every_rectangle_is_the_world_function);
    tcase_add_test(t, test_area_in_metres);
    tcase_add_test(t, test_unlisted_tile_is_filled_and_counted);
    tcase_add_test(t, test_damaged_files_are_refused_naming_them);
    tcase_add_test(t, test_hillshade_light_from_the_north_west);
    suite_add_tcase(s, t);
    return s;
}
