/* Images a row at a time (common/png_rows.h): a PNG read row by row gives tb_png_read's pixels in
 * every format and from every colour type, in reads of any size; a broken or truncated file fails
 * the read that meets it, naming the file; a FIFO is refused without blocking; the header's size is
 * read alone; an interlaced file is refused up front; the row writer
 * makes tb_png_encode's bytes; the image source hands out its rows once. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/png_io.h"
#include "common/png_rows.h"
#include "support/tb_test.h"

static void s_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tb_test_tmpdir("png-rows"), name);
}

/* A w x h image of `format` with hashed pixels. */
static void s_image(tb_image_t *img, uint32_t w, uint32_t h, tb_png_format_t format)
{
    ck_assert_int_eq(tb_image_alloc(img, w, h, format, NULL), 0);
    size_t n = (size_t)w * h * tb_png_format_bytes(format);
    uint8_t *p = img->pixels;
    for (size_t k = 0; k < n; k++)
        p[k] = (uint8_t)(tb_hash(1, TB_SALT_TEST, (int64_t)k, 0, 0) % 7 * 37);
}

/* Reads every row of path with reads of `step` rows into a new image. */
static int s_read_rows(const char *path, tb_png_format_t want, int64_t step, tb_image_t *out,
                       tb_err_t *err)
{
    tb_png_rows_t *r = tb_png_rows_open(path, want, 1u << 24, err);
    if (!r)
        return -1;
    const tb_row_source_t *src = tb_png_rows_source(r);
    ck_assert_int_eq(tb_image_alloc(out, (uint32_t)src->w, (uint32_t)src->h, want, NULL), 0);
    size_t row = (size_t)src->w * tb_png_format_bytes(want);
    int rc = 0;
    for (int64_t y = 0; y < src->h && rc == 0; y += step) {
        int64_t n = src->h - y < step ? src->h - y : step;
        rc = tb_row_source_read(src, n, (uint8_t *)out->pixels + (size_t)y * row, err);
    }
    tb_png_rows_destroy(&r);
    if (rc != 0)
        tb_image_free(out);
    return rc;
}

START_TEST(test_rows_are_the_whole_read)
{
    static const tb_png_format_t formats[] = {TB_PNG_GRAY8, TB_PNG_GRAY16, TB_PNG_RGB8,
                                              TB_PNG_RGBA8};
    for (int f = 0; f < 4; f++) {
        tb_image_t img;
        s_image(&img, 37, 23, formats[f]);
        char path[4200];
        s_path(path, sizeof path, "formats.png");
        ck_assert_int_eq(tb_png_write(path, &img, 6, NULL), 0);
        /* read back as the same format and as RGB8 (grey expands to colour) */
        for (int as = 0; as < 2; as++) {
            tb_png_format_t want = as ? TB_PNG_RGB8 : formats[f];
            if (as && formats[f] == TB_PNG_GRAY16)
                continue;
            tb_image_t whole, rows;
            tb_err_t err;
            ck_assert_int_eq(tb_png_read(path, want, 1u << 24, &whole, &err), 0);
            for (int64_t step = 1; step <= 23; step += 11) {
                ck_assert_msg(s_read_rows(path, want, step, &rows, &err) == 0, "%s", err.msg);
                size_t n = (size_t)whole.w * whole.h * tb_png_format_bytes(want);
                ck_assert_int_eq(memcmp(whole.pixels, rows.pixels, n), 0);
                tb_image_free(&rows);
            }
            tb_image_free(&whole);
        }
        tb_image_free(&img);
    }
}
END_TEST

START_TEST(test_broken_files_fail_naming_the_file)
{
    tb_image_t img;
    s_image(&img, 64, 64, TB_PNG_RGB8);
    char path[4200];
    s_path(path, sizeof path, "broken.png");
    unsigned char *png;
    size_t bytes;
    ck_assert_int_eq(tb_png_encode(&img, 0, &png, &bytes, NULL), 0);
    tb_err_t err;
    /* truncated halfway: the header opens, the read that reaches the cut fails */
    ck_assert_int_eq(tb_fs_write_atomic(path, png, bytes / 2, NULL), 0);
    tb_image_t rows;
    ck_assert_int_eq(s_read_rows(path, TB_PNG_RGB8, 8, &rows, &err), -1);
    ck_assert_int_eq(err.code, TB_E_FORMAT);
    ck_assert_msg(strstr(err.msg, "broken.png: invalid PNG at row") != NULL, "%s", err.msg);
    /* a byte flipped in the pixels: the zlib stream or its checksum fails */
    png[bytes / 2] ^= 0x5a;
    ck_assert_int_eq(tb_fs_write_atomic(path, png, bytes, NULL), 0);
    ck_assert_int_eq(s_read_rows(path, TB_PNG_RGB8, 64, &rows, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "broken.png"));
    /* not a PNG at all, and no file */
    ck_assert_int_eq(tb_fs_write_atomic(path, "hello, world", 12, NULL), 0);
    ck_assert_ptr_null(tb_png_rows_open(path, TB_PNG_RGB8, 1u << 24, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a PNG"));
    unlink(path);
    ck_assert_ptr_null(tb_png_rows_open(path, TB_PNG_RGB8, 1u << 24, &err));
    ck_assert_int_eq(err.code, TB_E_IO);
    /* too many pixels, refused before any is decoded; colour asked as grey */
    ck_assert_int_eq(tb_fs_write_atomic(path, png, bytes, NULL), 0);
    ck_assert_ptr_null(tb_png_rows_open(path, TB_PNG_RGB8, 4095, &err));
    ck_assert_int_eq(err.code, TB_E_INVALID);
    ck_assert_ptr_null(tb_png_rows_open(path, TB_PNG_GRAY8, 1u << 24, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "colour image"));
    /* a FIFO is refused without blocking on it, as tb_fs_read_all refuses one */
    char fifo[4200];
    s_path(fifo, sizeof fifo, "fifo.png");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    uint32_t pw, ph;
    ck_assert_int_eq(tb_png_rows_peek(fifo, &pw, &ph, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file (a FIFO)"));
    ck_assert_ptr_null(tb_png_rows_open(fifo, TB_PNG_RGB8, 1u << 24, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "a FIFO"));
    unlink(fifo);
    /* the peek reads the header's size alone: here of a file whose pixels are missing */
    ck_assert_int_eq(tb_fs_write_atomic(path, png, 33, NULL), 0);
    ck_assert_int_eq(tb_png_rows_peek(path, &pw, &ph, &err), 0);
    ck_assert_uint_eq(pw, 64);
    ck_assert_uint_eq(ph, 64);
    ck_assert_ptr_null(tb_png_rows_open(path, TB_PNG_RGB8, 1u << 24, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "invalid PNG"));
    /* reading past the last row is an error, not a crash */
    png[bytes / 2] ^= 0x5a;
    ck_assert_int_eq(tb_fs_write_atomic(path, png, bytes, NULL), 0);
    tb_png_rows_t *r = tb_png_rows_open(path, TB_PNG_RGB8, 1u << 24, &err);
    ck_assert_ptr_nonnull(r);
    uint8_t *buf = malloc(64 * 3 * 65);
    ck_assert_int_eq(tb_row_source_read(tb_png_rows_source(r), 65, buf, &err), -1);
    ck_assert_int_eq(tb_row_source_read(tb_png_rows_source(r), 64, buf, &err), 0);
    ck_assert_int_eq(memcmp(buf, img.pixels, 64 * 64 * 3), 0);
    free(buf);
    tb_png_rows_destroy(&r);
    free(png);
    tb_image_free(&img);
}
END_TEST

/* A 2 x 2 interlaced RGB PNG (Adam7), written by hand: IHDR with interlace 1, one IDAT. */
static size_t s_interlaced(unsigned char *out)
{
    /* Adam7 on 2 x 2: pass 1 is pixel (0,0), pass 6 pixel (1,0), pass 7 row 1: filter bytes and
     * RGB samples in pass order. */
    static const unsigned char raw[] = {0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 10, 11, 12};
    unsigned char z[64];
    size_t zn = 0;
    z[zn++] = 0x78; /* a stored deflate block: no compression */
    z[zn++] = 0x01;
    z[zn++] = 0x01;
    z[zn++] = sizeof raw;
    z[zn++] = 0;
    z[zn++] = (unsigned char)~sizeof raw;
    z[zn++] = 0xff;
    memcpy(z + zn, raw, sizeof raw);
    zn += sizeof raw;
    uint32_t a = 1, b = 0;
    for (size_t k = 0; k < sizeof raw; k++) {
        a = (a + raw[k]) % 65521;
        b = (b + a) % 65521;
    }
    uint32_t adler = b << 16 | a;
    for (int k = 3; k >= 0; k--)
        z[zn++] = (unsigned char)(adler >> (8 * k));
    size_t n = 0;
    memcpy(out, "\x89PNG\r\n\x1a\n", 8);
    n = 8;
    static const unsigned char ihdr[] = {0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 1};
    const unsigned char *data[3] = {ihdr, z, NULL};
    const size_t lens[3] = {sizeof ihdr, zn, 0};
    const char *types[3] = {"IHDR", "IDAT", "IEND"};
    for (int c = 0; c < 3; c++) {
        for (int k = 3; k >= 0; k--)
            out[n++] = (unsigned char)(lens[c] >> (8 * k));
        size_t start = n;
        memcpy(out + n, types[c], 4);
        n += 4;
        if (lens[c])
            memcpy(out + n, data[c], lens[c]);
        n += lens[c];
        /* CRC-32 of type and data */
        uint32_t crc = 0xffffffffu;
        for (size_t k = start; k < n; k++) {
            crc ^= out[k];
            for (int bit = 0; bit < 8; bit++)
                crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
        }
        crc ^= 0xffffffffu;
        for (int k = 3; k >= 0; k--)
            out[n++] = (unsigned char)(crc >> (8 * k));
    }
    return n;
}

START_TEST(test_interlaced_is_refused_up_front)
{
    unsigned char png[256];
    size_t n = s_interlaced(png);
    char path[4200];
    s_path(path, sizeof path, "interlaced.png");
    ck_assert_int_eq(tb_fs_write_atomic(path, png, n, NULL), 0);
    /* the file is a good PNG: the whole-image reader decodes it (the control) */
    tb_image_t img;
    tb_err_t err;
    ck_assert_msg(tb_png_read(path, TB_PNG_RGB8, 16, &img, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(((uint8_t *)img.pixels)[3], 4); /* pixel (1, 0) came from pass 6 */
    tb_image_free(&img);
    ck_assert_ptr_null(tb_png_rows_open(path, TB_PNG_RGB8, 16, &err));
    ck_assert_int_eq(err.code, TB_E_FORMAT);
    ck_assert_msg(strstr(err.msg, "interlaced.png: an interlaced") != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "without interlacing"));
}
END_TEST

START_TEST(test_the_row_writer_makes_the_encoders_bytes)
{
    static const tb_png_format_t formats[] = {TB_PNG_GRAY8, TB_PNG_GRAY16, TB_PNG_RGB8,
                                              TB_PNG_RGBA8};
    static const int levels[] = {6, TB_PNG_FAST};
    for (int f = 0; f < 8; f++) {
        const int level = levels[f / 4];
        tb_image_t img;
        s_image(&img, 50, 31, formats[f % 4]);
        unsigned char *want;
        size_t want_n;
        ck_assert_int_eq(tb_png_encode(&img, level, &want, &want_n, NULL), 0);
        char path[4200];
        s_path(path, sizeof path, "written.png");
        tb_err_t err;
        tb_png_writer_t *wr = tb_png_writer_open(path, 50, 31, formats[f % 4], level, &err);
        ck_assert_msg(wr != NULL, "%s", err.msg);
        size_t row = 50 * tb_png_format_bytes(formats[f % 4]);
        for (uint32_t y = 0; y < 31; y += 4)
            ck_assert_int_eq(tb_png_writer_rows(wr, (uint8_t *)img.pixels + y * row,
                                                31 - y < 4 ? 31 - y : 4, &err),
                             0);
        ck_assert(!tb_fs_exists(path)); /* only the temporary until committed */
        ck_assert_int_eq(tb_png_writer_close(&wr, NULL, &err), 0);
        ck_assert_ptr_null(wr);
        char *got;
        size_t got_n;
        ck_assert_int_eq(tb_fs_read_all(path, 1 << 20, &got, &got_n, NULL), 0);
        ck_assert_uint_eq(got_n, want_n);
        ck_assert_int_eq(memcmp(got, want, want_n), 0);
        free(got);
        free(want);
        /* too few rows: the commit fails and leaves nothing */
        unlink(path);
        wr = tb_png_writer_open(path, 50, 31, formats[f % 4], 6, &err);
        ck_assert_int_eq(tb_png_writer_rows(wr, img.pixels, 3, &err), 0);
        ck_assert_int_eq(tb_png_writer_rows(wr, img.pixels, 29, &err), -1); /* too many */
        ck_assert_int_eq(tb_png_writer_close(&wr, NULL, &err), -1);
        ck_assert(!tb_fs_exists(path));
        tb_image_free(&img);
    }
}
END_TEST

START_TEST(test_image_rows_once_in_order)
{
    tb_image_t img, copy;
    s_image(&img, 9, 5, TB_PNG_RGB8);
    tb_image_rows_t rows;
    const tb_row_source_t *src = tb_image_rows(&rows, &img, NULL);
    ck_assert_str_eq(src->name, "the image");
    tb_err_t err;
    ck_assert_int_eq(tb_row_source_to_image(src, &copy, &err), 0);
    ck_assert_int_eq(memcmp(copy.pixels, img.pixels, 9 * 5 * 3), 0);
    uint8_t row[27];
    ck_assert_int_eq(tb_row_source_read(src, 1, row, &err), -1); /* all handed out */
    tb_image_free(&copy);
    tb_image_free(&img);
}
END_TEST

Suite *png_rows_suite(void)
{
    Suite *s = suite_create("png_rows");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_rows_are_the_whole_read);
    tcase_add_test(tc, test_broken_files_fail_naming_the_file);
    tcase_add_test(tc, test_interlaced_is_refused_up_front);
    tcase_add_test(tc, test_the_row_writer_makes_the_encoders_bytes);
    tcase_add_test(tc, test_image_rows_once_in_order);
    suite_add_tcase(s, tc);
    return s;
}
