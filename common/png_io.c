/* PNG I/O through libpng's classic API; see png_io.h. libpng reports errors by longjmp; every
 * setjmp frame here owns only what it frees on the way out. */
#include "common/png_io.h"
#include "common/png_libpng.h"

#include <png.h>
#include <stdbool.h>
#include <xxhash.h>
#include <zlib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"

typedef struct {
    const unsigned char *data;
    size_t bytes, pos;
} s_membuf_t;

void tb_png_on_error(png_structp png, png_const_charp msg)
{
    tb_png_errctx_t *ctx = png_get_error_ptr(png);
    snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
    png_longjmp(png, 1);
}

void tb_png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void s_mem_read(png_structp png, png_bytep out, png_size_t n)
{
    s_membuf_t *m = png_get_io_ptr(png);
    if (n > m->bytes - m->pos)
        png_error(png, "file is truncated");
    memcpy(out, m->data + m->pos, n);
    m->pos += n;
}

const char *tb_png_format_name(tb_png_format_t f)
{
    static const char *names[] = {"8-bit grey", "16-bit grey", "8-bit RGB", "8-bit RGBA"};
    return names[f];
}

const char *tb_png_set_transforms(png_structp png, png_infop info, tb_png_format_t want)
{
    int ct = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    int is_colour = (ct & PNG_COLOR_MASK_COLOR) != 0;
    if (ct == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (ct == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    switch (want) {
    case TB_PNG_GRAY8:
    case TB_PNG_GRAY16:
        if (is_colour)
            return "is a colour image, expected a greyscale one";
        if (png_get_valid(png, info, PNG_INFO_tRNS))
            png_set_tRNS_to_alpha(png);
        png_set_strip_alpha(png);
        if (want == TB_PNG_GRAY8 && depth == 16)
            return "is 16-bit, expected 8-bit greyscale";
        if (want == TB_PNG_GRAY16 && depth < 16)
            png_set_expand_16(png); /* replicates the byte: v * 257 */
        if (want == TB_PNG_GRAY16)
            png_set_swap(png); /* PNG is big-endian; hand back host order (x86, ARM: little) */
        break;
    case TB_PNG_RGB8:
    case TB_PNG_RGBA8:
        if (depth == 16)
            png_set_strip_16(png);
        if (!is_colour)
            png_set_gray_to_rgb(png);
        if (png_get_valid(png, info, PNG_INFO_tRNS))
            png_set_tRNS_to_alpha(png);
        if (want == TB_PNG_RGB8)
            png_set_strip_alpha(png);
        else
            png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
        break;
    }
    return NULL;
}

int tb_png_read_mem(const void *data, size_t bytes, const char *name, tb_png_format_t want,
                    uint64_t max_pixels, tb_image_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (bytes < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0)
        return tb_err_set(err, TB_E_FORMAT, "%s: not a PNG file (bad signature)", name);
    tb_png_errctx_t ctx = {.name = name};
    s_membuf_t mem = {.data = data, .bytes = bytes, .pos = 0};
    png_structp png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, tb_png_on_error, tb_png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, NULL);
        return tb_err_set(err, TB_E_NOMEM, "%s: cannot allocate a PNG decoder", name);
    }
    /* volatile: assigned between setjmp and a possible longjmp */
    unsigned char *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return tb_err_set(err, TB_E_FORMAT, "%s: invalid PNG: %s", name, ctx.msg);
    }
    png_set_read_fn(png, &mem, s_mem_read);
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    if ((uint64_t)w * h > max_pixels) {
        png_destroy_read_struct(&png, &info, NULL);
        return tb_err_set(err, TB_E_INVALID, "%s: %u x %u pixels, more than the %llu allowed", name,
                          (unsigned)w, (unsigned)h, (unsigned long long)max_pixels);
    }
    const char *complaint = tb_png_set_transforms(png, info, want);
    if (complaint) {
        png_destroy_read_struct(&png, &info, NULL);
        return tb_err_set(err, TB_E_FORMAT, "%s: %s (asked for %s)", name, complaint,
                          tb_png_format_name(want));
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    size_t want_row = (size_t)w * tb_png_format_bytes(want);
    if (rowbytes != want_row) {
        png_destroy_read_struct(&png, &info, NULL);
        return tb_err_set(err, TB_E_FORMAT, "%s: decodes to %zu bytes a row, expected %zu for %s",
                          name, rowbytes, want_row, tb_png_format_name(want));
    }
    pixels = malloc(rowbytes * h);
    rows = malloc(sizeof(png_bytep) * h);
    if (!pixels || !rows) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return tb_err_set(err, TB_E_NOMEM, "%s: out of memory for %u x %u pixels", name,
                          (unsigned)w, (unsigned)h);
    }
    for (png_uint_32 y = 0; y < h; y++)
        rows[y] = pixels + y * rowbytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    out->w = w;
    out->h = h;
    out->format = want;
    out->pixels = pixels;
    return 0;
}

int tb_png_peek(const void *data_, size_t bytes, const char *name, uint32_t *w, uint32_t *h,
                tb_err_t *err)
{
    const unsigned char *d = data_;
    /* signature (8), IHDR length (4) and type (4), width and height (4 + 4, big-endian) */
    if (bytes < 24 || png_sig_cmp((png_const_bytep)d, 0, 8) != 0 || memcmp(d + 12, "IHDR", 4) != 0)
        return tb_err_set(err, TB_E_FORMAT, "%s: not a PNG file (bad signature or no IHDR)", name);
    *w = (uint32_t)d[16] << 24 | (uint32_t)d[17] << 16 | (uint32_t)d[18] << 8 | d[19];
    *h = (uint32_t)d[20] << 24 | (uint32_t)d[21] << 16 | (uint32_t)d[22] << 8 | d[23];
    if (*w == 0 || *h == 0 || *w > 0x7fffffffu || *h > 0x7fffffffu)
        return tb_err_set(err, TB_E_FORMAT, "%s: invalid PNG size %u x %u", name, *w, *h);
    return 0;
}

int tb_png_read(const char *path, tb_png_format_t want, uint64_t max_pixels, tb_image_t *out,
                tb_err_t *err)
{
    char *data;
    size_t bytes;
    if (tb_fs_read_all(path, (size_t)1 << 34, &data, &bytes, err) != 0)
        return -1;
    int rc = tb_png_read_mem(data, bytes, path, want, max_pixels, out, err);
    free(data);
    return rc;
}

typedef struct {
    unsigned char *data;
    size_t bytes, cap;
    int failed;
} s_growbuf_t;

static void s_mem_write(png_structp png, png_bytep in, png_size_t n)
{
    s_growbuf_t *b = png_get_io_ptr(png);
    if (b->bytes + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        while (cap < b->bytes + n)
            cap *= 2;
        unsigned char *p = realloc(b->data, cap);
        if (!p) {
            b->failed = 1;
            png_error(png, "out of memory");
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->bytes, in, n);
    b->bytes += n;
}

static void s_mem_flush(png_structp png)
{
    (void)png;
}

/* The zlib level and filters: a level 0..9 with libpng's adaptive filters (it tries all five on
 * every row and keeps the smallest), or TB_PNG_FAST: the Up filter on every row at level 1, with
 * zlib's run-length matching for 8-bit grey (png_io.h says what that saves). */
static void s_set_compression(png_structp png, tb_png_format_t format, int compression)
{
    if (compression != TB_PNG_FAST) {
        png_set_compression_level(png, compression < 0 ? 0 : compression > 9 ? 9 : compression);
        return;
    }
    png_set_compression_level(png, 1);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    if (format == TB_PNG_GRAY8)
        png_set_compression_strategy(png, Z_RLE);
}

int tb_png_encode(const tb_image_t *img, int compression, unsigned char **out, size_t *bytes_out,
                  tb_err_t *err)
{
    *out = NULL;
    *bytes_out = 0;
    tb_png_errctx_t ctx = {.name = "png"};
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, tb_png_on_error, tb_png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        return tb_err_set(err, TB_E_NOMEM, "cannot allocate a PNG encoder");
    }
    s_growbuf_t buf = {0};
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(rows);
        free(buf.data);
        png_destroy_write_struct(&png, &info);
        return tb_err_set(err, TB_E_FORMAT, "PNG encoding failed: %s", ctx.msg);
    }
    png_set_write_fn(png, &buf, s_mem_write, s_mem_flush);
    static const int colour[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_RGB,
                                 PNG_COLOR_TYPE_RGB_ALPHA};
    png_set_IHDR(png, info, img->w, img->h, img->format == TB_PNG_GRAY16 ? 16 : 8,
                 colour[img->format], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    s_set_compression(png, img->format, compression);
    png_write_info(png, info);
    if (img->format == TB_PNG_GRAY16)
        png_set_swap(png);
    size_t rowbytes = (size_t)img->w * tb_png_format_bytes(img->format);
    rows = malloc(sizeof(png_bytep) * img->h);
    if (!rows)
        png_error(png, "out of memory");
    for (uint32_t y = 0; y < img->h; y++)
        rows[y] = (png_bytep)img->pixels + y * rowbytes;
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    *out = buf.data;
    *bytes_out = buf.bytes;
    return 0;
}

int tb_png_write(const char *path, const tb_image_t *img, int compression, tb_err_t *err)
{
    unsigned char *bytes;
    size_t n;
    if (tb_png_encode(img, compression, &bytes, &n, err) != 0)
        return tb_err_prefix(err, "%s", path);
    int rc = tb_fs_write_atomic(path, bytes, n, err);
    free(bytes);
    return rc;
}

/* ---- writing row by row ---- */

struct tb_png_writer_t {
    png_structp png;
    png_infop info;
    tb_png_errctx_t ctx;
    tb_fs_tmp_t tmp;
    XXH3_state_t *hash; /* of the bytes as written */
    uint32_t w, h, done;
    size_t rowbytes;
    bool failed;
};

static void s_file_write(png_structp png, png_bytep in, png_size_t n)
{
    tb_png_writer_t *wr = png_get_io_ptr(png);
    if (fwrite(in, 1, n, wr->tmp.fp) != n)
        png_error(png, "cannot write the file (disk full?)");
    XXH3_64bits_update(wr->hash, in, n);
}

static void s_file_flush(png_structp png)
{
    (void)png;
}

tb_png_writer_t *tb_png_writer_open(const char *path, uint32_t w, uint32_t h,
                                    tb_png_format_t format, int compression, tb_err_t *err)
{
    tb_png_writer_t *wr = calloc(1, sizeof *wr);
    if (!wr || !(wr->hash = XXH3_createState())) {
        free(wr);
        tb_err_set(err, TB_E_NOMEM, "%s: cannot allocate a PNG writer", path);
        return NULL;
    }
    XXH3_64bits_reset(wr->hash);
    wr->ctx.name = "png";
    wr->w = w;
    wr->h = h;
    wr->rowbytes = (size_t)w * tb_png_format_bytes(format);
    if (tb_fs_tmp_open(&wr->tmp, path, err) != 0) {
        XXH3_freeState(wr->hash);
        free(wr);
        return NULL;
    }
    wr->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &wr->ctx, tb_png_on_error,
                                      tb_png_on_warning);
    wr->info = wr->png ? png_create_info_struct(wr->png) : NULL;
    if (!wr->png || !wr->info) {
        tb_err_set(err, TB_E_NOMEM, "%s: cannot allocate a PNG encoder", path);
        tb_png_writer_abort(&wr);
        return NULL;
    }
    if (setjmp(png_jmpbuf(wr->png))) {
        tb_err_set(err, TB_E_IO, "%s: PNG encoding failed: %s", path, wr->ctx.msg);
        tb_png_writer_abort(&wr);
        return NULL;
    }
    png_set_write_fn(wr->png, wr, s_file_write, s_file_flush);
    static const int colour[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_RGB,
                                 PNG_COLOR_TYPE_RGB_ALPHA};
    /* the same header, compression and filters as tb_png_encode: the same bytes */
    png_set_IHDR(wr->png, wr->info, w, h, format == TB_PNG_GRAY16 ? 16 : 8, colour[format],
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    s_set_compression(wr->png, format, compression);
    png_write_info(wr->png, wr->info);
    if (format == TB_PNG_GRAY16)
        png_set_swap(wr->png);
    return wr;
}

int tb_png_writer_rows(tb_png_writer_t *wr, const void *rows, uint32_t n, tb_err_t *err)
{
    if (wr->failed || n > wr->h - wr->done)
        return tb_err_set(err, TB_E_INTERNAL, "%s: %u rows more than the image's %u",
                          wr->tmp.final_path, n, wr->h);
    if (setjmp(png_jmpbuf(wr->png))) {
        wr->failed = true;
        return tb_err_set(err, TB_E_IO, "%s: PNG encoding failed: %s", wr->tmp.final_path,
                          wr->ctx.msg);
    }
    for (uint32_t y = 0; y < n; y++)
        png_write_row(wr->png, (png_const_bytep)rows + (size_t)y * wr->rowbytes);
    wr->done += n;
    return 0;
}

int tb_png_writer_close(tb_png_writer_t **wr_p, uint64_t *xxh3, tb_err_t *err)
{
    tb_png_writer_t *wr = *wr_p;
    if (wr->failed || wr->done != wr->h) {
        tb_err_set(err, TB_E_INTERNAL, "%s: %u of %u rows written", wr->tmp.final_path, wr->done,
                   wr->h);
        tb_png_writer_abort(wr_p);
        return -1;
    }
    if (setjmp(png_jmpbuf(wr->png))) {
        tb_err_set(err, TB_E_IO, "%s: PNG encoding failed: %s", wr->tmp.final_path, wr->ctx.msg);
        tb_png_writer_abort(wr_p);
        return -1;
    }
    png_write_end(wr->png, NULL);
    png_destroy_write_struct(&wr->png, &wr->info);
    int rc = tb_fs_tmp_commit(&wr->tmp, err);
    if (rc == 0 && xxh3)
        *xxh3 = XXH3_64bits_digest(wr->hash);
    wr->tmp.fp = NULL;
    XXH3_freeState(wr->hash);
    free(wr);
    *wr_p = NULL;
    return rc;
}

void tb_png_writer_abort(tb_png_writer_t **wr_p)
{
    tb_png_writer_t *wr = wr_p ? *wr_p : NULL;
    if (!wr)
        return;
    if (wr->png)
        png_destroy_write_struct(&wr->png, &wr->info);
    if (wr->tmp.fp)
        tb_fs_tmp_abort(&wr->tmp);
    XXH3_freeState(wr->hash);
    free(wr);
    *wr_p = NULL;
}
