/* PNG round trips (8- and 16-bit grey, RGB, RGBA) and refusals of broken files. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/fs.h"
#include "common/png_io.h"
#include "support/tb_test.h"

static void s_fill(tb_image_t *img)
{
    size_t n = (size_t)img->w * img->h * tb_png_format_bytes(img->format);
    unsigned char *p = img->pixels;
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131 + (i >> 7));
}

static void s_round_trip(tb_png_format_t format)
{
    const char *dir = tb_test_tmpdir("png");
    char path[4200];
    snprintf(path, sizeof path, "%s/img.png", dir);
    tb_image_t img, back;
    ck_assert_int_eq(tb_image_alloc(&img, 37, 23, format, NULL), 0);
    s_fill(&img);
    tb_err_t err;
    ck_assert_msg(tb_png_write(path, &img, 6, &err) == 0, "%s", err.msg);
    ck_assert_msg(tb_png_read(path, format, 1 << 20, &back, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(back.w, 37);
    ck_assert_uint_eq(back.h, 23);
    ck_assert_int_eq(memcmp(img.pixels, back.pixels, 37 * 23 * tb_png_format_bytes(format)), 0);
    tb_image_free(&img);
    tb_image_free(&back);
}

START_TEST(test_round_trip_gray8)
{
    s_round_trip(TB_PNG_GRAY8);
}
END_TEST
START_TEST(test_round_trip_gray16)
{
    s_round_trip(TB_PNG_GRAY16);
}
END_TEST
START_TEST(test_round_trip_rgb8)
{
    s_round_trip(TB_PNG_RGB8);
}
END_TEST
START_TEST(test_round_trip_rgba8)
{
    s_round_trip(TB_PNG_RGBA8);
}
END_TEST

START_TEST(test_gray16_values_survive_exactly)
{
    /* Every 16-bit value, in host order, including the byte-swapped pairs a wrong swap confuses. */
    tb_image_t img, back;
    ck_assert_int_eq(tb_image_alloc(&img, 256, 256, TB_PNG_GRAY16, NULL), 0);
    uint16_t *v = img.pixels;
    for (int i = 0; i < 65536; i++)
        v[i] = (uint16_t)i;
    unsigned char *bytes;
    size_t n;
    ck_assert_int_eq(tb_png_encode(&img, 1, &bytes, &n, NULL), 0);
    ck_assert_int_eq(tb_png_read_mem(bytes, n, "mem", TB_PNG_GRAY16, 1 << 20, &back, NULL), 0);
    ck_assert_int_eq(memcmp(img.pixels, back.pixels, 65536 * 2), 0);
    /* 8-bit grey read as 16-bit scales by 257 and RGB read as grey is refused. */
    tb_image_t g8, up, rgb;
    ck_assert_int_eq(tb_image_alloc(&g8, 2, 1, TB_PNG_GRAY8, NULL), 0);
    ((uint8_t *)g8.pixels)[0] = 3;
    ((uint8_t *)g8.pixels)[1] = 255;
    free(bytes);
    ck_assert_int_eq(tb_png_encode(&g8, 1, &bytes, &n, NULL), 0);
    ck_assert_int_eq(tb_png_read_mem(bytes, n, "g8", TB_PNG_GRAY16, 100, &up, NULL), 0);
    ck_assert_uint_eq(((uint16_t *)up.pixels)[0], 3 * 257);
    ck_assert_uint_eq(((uint16_t *)up.pixels)[1], 65535);
    tb_image_free(&up);
    free(bytes);
    ck_assert_int_eq(tb_image_alloc(&rgb, 2, 2, TB_PNG_RGB8, NULL), 0);
    ck_assert_int_eq(tb_png_encode(&rgb, 1, &bytes, &n, NULL), 0);
    tb_err_t err;
    ck_assert_int_eq(tb_png_read_mem(bytes, n, "colour.png", TB_PNG_GRAY16, 100, &up, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "colour.png"));
    ck_assert_ptr_nonnull(strstr(err.msg, "greyscale"));
    free(bytes);
    tb_image_free(&img);
    tb_image_free(&back);
    tb_image_free(&g8);
    tb_image_free(&rgb);
}
END_TEST

/* The filter byte that starts each of the h rows of an encoded PNG: its IDAT chunks inflated. */
static void s_row_filters(const unsigned char *png, size_t n, size_t rowbytes, uint32_t h,
                          unsigned char *filters)
{
    unsigned char *z = malloc(n), *raw = malloc((rowbytes + 1) * h);
    size_t zn = 0;
    for (size_t at = 8; at + 12 <= n;) {
        uint32_t len = (uint32_t)png[at] << 24 | (uint32_t)png[at + 1] << 16 |
                       (uint32_t)png[at + 2] << 8 | png[at + 3];
        if (memcmp(png + at + 4, "IDAT", 4) == 0) {
            memcpy(z + zn, png + at + 8, len);
            zn += len;
        }
        at += 12 + len;
    }
    uLongf rn = (uLongf)((rowbytes + 1) * h);
    ck_assert_int_eq(uncompress(raw, &rn, z, (uLong)zn), Z_OK);
    ck_assert_uint_eq(rn, (rowbytes + 1) * h);
    for (uint32_t y = 0; y < h; y++)
        filters[y] = raw[y * (rowbytes + 1)];
    free(z);
    free(raw);
}

START_TEST(test_the_fast_encoding_round_trips_with_one_filter)
{
    /* TB_PNG_FAST (the tiles' encoding) decodes to the same samples in every format and filters
     * every row with Up; the control is level 1 with libpng's adaptive filters, which on this
     * image picks other filters for some rows (else the check could not tell the two apart). */
    static const tb_png_format_t formats[] = {TB_PNG_GRAY8, TB_PNG_GRAY16, TB_PNG_RGB8,
                                              TB_PNG_RGBA8};
    for (int f = 0; f < 4; f++) {
        tb_image_t img, back;
        ck_assert_int_eq(tb_image_alloc(&img, 70, 40, formats[f], NULL), 0);
        s_fill(&img);
        size_t rowbytes = 70 * tb_png_format_bytes(formats[f]);
        unsigned char filters[40];
        unsigned char *bytes;
        size_t n;
        ck_assert_int_eq(tb_png_encode(&img, TB_PNG_FAST, &bytes, &n, NULL), 0);
        ck_assert_int_eq(tb_png_read_mem(bytes, n, "fast", formats[f], 1 << 20, &back, NULL), 0);
        ck_assert_int_eq(memcmp(img.pixels, back.pixels, rowbytes * 40), 0);
        s_row_filters(bytes, n, rowbytes, 40, filters);
        for (int y = 0; y < 40; y++)
            ck_assert_msg(filters[y] == 2, "format %d row %d: filter %d, expected 2 (Up)", f, y,
                          filters[y]);
        free(bytes);
        ck_assert_int_eq(tb_png_encode(&img, 1, &bytes, &n, NULL), 0);
        s_row_filters(bytes, n, rowbytes, 40, filters);
        int other = 0;
        for (int y = 0; y < 40; y++)
            other += filters[y] != 2;
        ck_assert_msg(other > 0, "format %d: adaptive filters chose Up on every row", f);
        free(bytes);
        tb_image_free(&img);
        tb_image_free(&back);
    }
}
END_TEST

START_TEST(test_truncated_and_garbage_files_are_refused)
{
    tb_image_t img, back;
    ck_assert_int_eq(tb_image_alloc(&img, 64, 64, TB_PNG_RGB8, NULL), 0);
    s_fill(&img);
    unsigned char *bytes;
    size_t n;
    ck_assert_int_eq(tb_png_encode(&img, 6, &bytes, &n, NULL), 0);
    tb_err_t err;
    /* Every truncation point fails cleanly and names the file. */
    for (size_t cut = 0; cut < n; cut += (cut < 100 ? 1 : 97)) {
        ck_assert_int_eq(tb_png_read_mem(bytes, cut, "cut.png", TB_PNG_RGB8, 1 << 20, &back, &err),
                         -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "cut.png"));
    }
    ck_assert_int_eq(tb_png_read_mem("hello world", 11, "text.png", TB_PNG_RGB8, 100, &back, &err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a PNG"));
    /* Too many pixels is refused before decoding. */
    ck_assert_int_eq(tb_png_read_mem(bytes, n, "big.png", TB_PNG_RGB8, 100, &back, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "64 x 64"));
    /* A missing file names itself. */
    ck_assert_int_eq(tb_png_read("/nonexistent/painting.png", TB_PNG_RGB8, 100, &back, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/painting.png"));
    free(bytes);
    tb_image_free(&img);
}
END_TEST

START_TEST(test_write_is_atomic)
{
    /* A failed write leaves neither the final name nor a temporary behind. */
    const char *dir = tb_test_tmpdir("pngatomic");
    char path[4200];
    snprintf(path, sizeof path, "%s/missing-subdir/out.png", dir);
    tb_image_t img;
    ck_assert_int_eq(tb_image_alloc(&img, 4, 4, TB_PNG_GRAY8, NULL), 0);
    tb_err_t err;
    ck_assert_int_eq(tb_png_write(path, &img, 6, &err), -1);
    ck_assert(!tb_fs_exists(path));
    snprintf(path, sizeof path, "%s/out.png", dir);
    ck_assert_int_eq(tb_png_write(path, &img, 6, &err), 0);
    char cmd[4400], *out;
    snprintf(cmd, sizeof cmd, "ls %s", dir);
    tb_test_run(cmd, &out);
    ck_assert_str_eq(out, "out.png\n");
    free(out);
    tb_image_free(&img);
}
END_TEST

Suite *png_suite(void)
{
    Suite *s = suite_create("png");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_round_trip_gray8);
    tcase_add_test(tc, test_round_trip_gray16);
    tcase_add_test(tc, test_round_trip_rgb8);
    tcase_add_test(tc, test_round_trip_rgba8);
    tcase_add_test(tc, test_gray16_values_survive_exactly);
    tcase_add_test(tc, test_the_fast_encoding_round_trips_with_one_filter);
    tcase_add_test(tc, test_truncated_and_garbage_files_are_refused);
    tcase_add_test(tc, test_write_is_atomic);
    suite_add_tcase(s, tc);
    return s;
}
