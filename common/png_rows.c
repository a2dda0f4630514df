/* Images a row at a time; see png_rows.h. libpng reports errors by longjmp: every function here
 * that calls into libpng sets its own setjmp frame first, and a reader or writer that has failed
 * once refuses every later call (libpng's state is undefined after a longjmp). */
#include "common/png_rows.h"

#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/png_io.h"
#include "common/png_libpng.h"

int tb_row_source_read(const tb_row_source_t *src, int64_t n, void *out, tb_err_t *err)
{
    if (n < 0)
        return tb_err_set(err, TB_E_INTERNAL, "%s: asked for %lld rows", src->name, (long long)n);
    return n ? src->read(src->user, n, out, err) : 0;
}

/* ---- an image in memory ---- */

static int s_image_read(void *user, int64_t n, void *out, tb_err_t *err)
{
    tb_image_rows_t *r = user;
    if (r->next + n > (int64_t)r->img->h)
        return tb_err_set(err, TB_E_INTERNAL, "%s: rows %lld..%lld asked of %u", r->src.name,
                          (long long)r->next, (long long)(r->next + n - 1), r->img->h);
    size_t row_bytes = (size_t)r->img->w * tb_png_format_bytes(r->img->format);
    memcpy(out, (const uint8_t *)r->img->pixels + (size_t)r->next * row_bytes,
           (size_t)n * row_bytes);
    r->next += n;
    return 0;
}

const tb_row_source_t *tb_image_rows(tb_image_rows_t *self, const tb_image_t *img, const char *name)
{
    self->img = img;
    self->next = 0;
    self->src = (tb_row_source_t){.w = img->w,
                                  .h = img->h,
                                  .format = img->format,
                                  .name = name ? name : "the image",
                                  .read = s_image_read,
                                  .user = self};
    return &self->src;
}

int tb_row_source_to_image(const tb_row_source_t *src, tb_image_t *out, tb_err_t *err)
{
    if (src->w <= 0 || src->h <= 0 || src->w > UINT32_MAX || src->h > UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "%s: %lld x %lld pixels", src->name, (long long)src->w,
                          (long long)src->h);
    if (tb_image_alloc(out, (uint32_t)src->w, (uint32_t)src->h, src->format, err) != 0)
        return -1;
    if (tb_row_source_read(src, src->h, out->pixels, err) != 0) {
        tb_image_free(out);
        return -1;
    }
    return 0;
}

int tb_row_source_write_png(const tb_row_source_t *src, const char *path, int compression,
                            tb_err_t *err)
{
    enum { S_BAND = 64 };
    if (src->w <= 0 || src->h <= 0 || src->w > UINT32_MAX || src->h > UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "%s: %lld x %lld pixels", src->name, (long long)src->w,
                          (long long)src->h);
    uint8_t *band =
        tb_malloc((size_t)src->w * tb_png_format_bytes(src->format) * S_BAND, "PNG rows", err);
    tb_png_writer_t *wr = band ? tb_png_writer_open(path, (uint32_t)src->w, (uint32_t)src->h,
                                                    src->format, compression, err)
                               : NULL;
    int rc = wr ? 0 : -1;
    for (int64_t y = 0; rc == 0 && y < src->h; y += S_BAND) {
        int64_t n = src->h - y < S_BAND ? src->h - y : S_BAND;
        rc = tb_row_source_read(src, n, band, err);
        if (rc == 0)
            rc = tb_png_writer_rows(wr, band, (uint32_t)n, err);
    }
    if (rc == 0)
        rc = tb_png_writer_close(&wr, NULL, err);
    tb_png_writer_abort(&wr);
    free(band);
    return rc;
}

/* ---- reader ---- */

struct tb_png_rows_t {
    char path[4096];
    FILE *fp;
    png_structp png;
    png_infop info;
    tb_png_errctx_t ectx;
    tb_row_source_t src;
    size_t row_bytes;
    int64_t next; /* the next row to decode */
    bool failed;  /* libpng longjmp'd: its state is gone */
};

static int s_rows_read(void *user, int64_t n, void *out, tb_err_t *err)
{
    tb_png_rows_t *r = user;
    if (r->failed)
        return tb_err_set(err, TB_E_FORMAT, "%s: the PNG reader failed earlier", r->path);
    if (r->next + n > r->src.h)
        return tb_err_set(err, TB_E_INTERNAL, "%s: rows %lld..%lld asked of %lld", r->path,
                          (long long)r->next, (long long)(r->next + n - 1), (long long)r->src.h);
    /* volatile: read after a longjmp */
    volatile int64_t done = 0;
    if (setjmp(png_jmpbuf(r->png))) {
        r->failed = true;
        return tb_err_set(err, TB_E_FORMAT, "%s: invalid PNG at row %lld: %s", r->path,
                          (long long)(r->next + done), r->ectx.msg);
    }
    for (; done < n; done++)
        png_read_row(r->png, (png_bytep)out + (size_t)done * r->row_bytes, NULL);
    r->next += n;
    if (r->next == r->src.h)
        png_read_end(r->png, NULL); /* checks the end of the stream: a truncated IEND fails here */
    return 0;
}

/* A regular file for reading (tb_fs_open_regular: a FIFO or device is refused before a byte). */
static FILE *s_open_regular(const char *path, tb_err_t *err)
{
    int fd;
    uint64_t bytes;
    if (tb_fs_open_regular(path, &fd, &bytes, err) != 0)
        return NULL;
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        close(fd);
        tb_err_set(err, TB_E_NOMEM, "%s: cannot open: %s", path, strerror(errno));
    }
    return fp;
}

int tb_png_rows_peek(const char *path, uint32_t *w, uint32_t *h, tb_err_t *err)
{
    FILE *fp = s_open_regular(path, err);
    if (!fp)
        return -1;
    unsigned char head[33]; /* signature, then IHDR's length, type, data and CRC */
    size_t n = fread(head, 1, sizeof head, fp);
    fclose(fp);
    return tb_png_peek(head, n, path, w, h, err);
}

tb_png_rows_t *tb_png_rows_open(const char *path, tb_png_format_t want, uint64_t max_pixels,
                                tb_err_t *err)
{
    tb_png_rows_t *r = tb_calloc(1, sizeof *r, "PNG reader", err);
    if (!r)
        return NULL;
    snprintf(r->path, sizeof r->path, "%s", path);
    if (!(r->fp = s_open_regular(path, err)))
        goto fail;
    unsigned char sig[8];
    if (fread(sig, 1, 8, r->fp) != 8 || png_sig_cmp(sig, 0, 8) != 0) {
        tb_err_set(err, TB_E_FORMAT, "%s: not a PNG file (bad signature)", path);
        goto fail;
    }
    r->png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, &r->ectx, tb_png_on_error, tb_png_on_warning);
    r->info = r->png ? png_create_info_struct(r->png) : NULL;
    if (!r->png || !r->info) {
        tb_err_set(err, TB_E_NOMEM, "%s: cannot allocate a PNG decoder", path);
        goto fail;
    }
    if (setjmp(png_jmpbuf(r->png))) {
        tb_err_set(err, TB_E_FORMAT, "%s: invalid PNG: %s", path, r->ectx.msg);
        goto fail;
    }
    png_init_io(r->png, r->fp);
    png_set_sig_bytes(r->png, 8);
    png_set_user_limits(r->png, 0x7fffffff, 0x7fffffff);
    png_read_info(r->png, r->info);
    png_uint_32 w = png_get_image_width(r->png, r->info), h = png_get_image_height(r->png, r->info);
    if ((uint64_t)w * h > max_pixels) {
        tb_err_set(err, TB_E_INVALID, "%s: %u x %u pixels, more than the %llu allowed", path,
                   (unsigned)w, (unsigned)h, (unsigned long long)max_pixels);
        goto fail;
    }
    if (png_get_interlace_type(r->png, r->info) != PNG_INTERLACE_NONE) {
        tb_err_set(err, TB_E_FORMAT,
                   "%s: an interlaced (Adam7) PNG, which cannot be read a row at a time; save it "
                   "without interlacing",
                   path);
        goto fail;
    }
    const char *complaint = tb_png_set_transforms(r->png, r->info, want);
    if (complaint) {
        tb_err_set(err, TB_E_FORMAT, "%s: %s (asked for %s)", path, complaint,
                   tb_png_format_name(want));
        goto fail;
    }
    png_read_update_info(r->png, r->info);
    r->row_bytes = png_get_rowbytes(r->png, r->info);
    if (r->row_bytes != (size_t)w * tb_png_format_bytes(want)) {
        tb_err_set(err, TB_E_FORMAT, "%s: decodes to %zu bytes a row, expected %zu for %s", path,
                   r->row_bytes, (size_t)w * tb_png_format_bytes(want), tb_png_format_name(want));
        goto fail;
    }
    r->src = (tb_row_source_t){
        .w = w, .h = h, .format = want, .name = r->path, .read = s_rows_read, .user = r};
    return r;
fail:
    tb_png_rows_destroy(&r);
    return NULL;
}

const tb_row_source_t *tb_png_rows_source(tb_png_rows_t *self)
{
    return &self->src;
}

void tb_png_rows_destroy(tb_png_rows_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_png_rows_t *r = *self_p;
    if (r->png)
        png_destroy_read_struct(&r->png, &r->info, NULL);
    if (r->fp)
        fclose(r->fp);
    free(r);
    *self_p = NULL;
}
