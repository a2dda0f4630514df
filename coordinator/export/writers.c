/* Files written a row at a time; see writers.h. libpng's write callback goes through s_write, so
 * the XXH3 of a PNG is of the bytes that reach the disk. */
#include "coordinator/export/writers.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/fs.h"

#define S_PNG_LEVEL 6 /* zlib level: the exported files are kept, so size over speed */

struct tb_export_file {
    tb_fs_tmp_t tmp;
    tb_export_file_kind_t kind;
    int64_t w, h, rows;
    size_t row_bytes;
    png_structp png;
    png_infop info;
    XXH3_state_t *hash;
    bool io_failed;
    uint16_t *swap;          /* a 16-bit row in PNG's byte order (big-endian) */
    png_const_bytep pending; /* the row s_png_row writes */
};

static void s_bytes(tb_export_file_t *f, const void *data, size_t n)
{
    if (fwrite(data, 1, n, f->tmp.fp) != n)
        f->io_failed = true;
    XXH3_64bits_update(f->hash, data, n);
}

static void s_png_write(png_structp png, png_bytep data, png_size_t n)
{
    s_bytes(png_get_io_ptr(png), data, n);
}

static void s_png_flush(png_structp png)
{
    (void)png;
}

tb_export_file_t *tb_export_file_open(const char *path, tb_export_file_kind_t kind, int64_t w,
                                      int64_t h, size_t bytes_per_sample, tb_err_t *err)
{
    tb_export_file_t *f = tb_calloc(1, sizeof *f, "export file", err);
    if (!f)
        return NULL;
    f->kind = kind;
    f->w = w;
    f->h = h;
    size_t bps = kind == TB_EXPORT_FILE_PNG_GRAY16  ? 2
                 : kind == TB_EXPORT_FILE_PNG_GRAY8 ? 1
                 : kind == TB_EXPORT_FILE_PNG_RGBA8 ? 4
                                                    : bytes_per_sample;
    f->row_bytes = (size_t)w * bps;
    f->hash = XXH3_createState();
    if (!f->hash || XXH3_64bits_reset(f->hash) != XXH_OK) {
        tb_err_set(err, TB_E_NOMEM, "%s: out of memory for its hash", path);
        goto fail_early;
    }
    if (tb_fs_tmp_open(&f->tmp, path, err) != 0)
        goto fail_early;
    if (kind == TB_EXPORT_FILE_RAW)
        return f;
    f->swap = kind == TB_EXPORT_FILE_PNG_GRAY16 ? malloc(f->row_bytes) : NULL;
    f->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    f->info = f->png ? png_create_info_struct(f->png) : NULL;
    if (!f->info || (kind == TB_EXPORT_FILE_PNG_GRAY16 && !f->swap)) {
        tb_err_set(err, TB_E_NOMEM, "%s: out of memory for the PNG writer", path);
        tb_export_file_abort(&f);
        return NULL;
    }
    if (setjmp(png_jmpbuf(f->png))) {
        tb_err_set(err, TB_E_IO, "%s: libpng could not start the file", path);
        tb_export_file_abort(&f);
        return NULL;
    }
    png_set_write_fn(f->png, f, s_png_write, s_png_flush);
    png_set_compression_level(f->png, S_PNG_LEVEL);
    png_set_IHDR(f->png, f->info, (png_uint_32)w, (png_uint_32)h,
                 kind == TB_EXPORT_FILE_PNG_GRAY16 ? 16 : 8,
                 kind == TB_EXPORT_FILE_PNG_RGBA8 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(f->png, f->info);
    return f;
fail_early:
    if (f->hash)
        XXH3_freeState(f->hash);
    free(f);
    return NULL;
}

/* libpng reports errors by longjmp: the jump target has no locals of its own to clobber. */
static int s_png_row(tb_export_file_t *f)
{
    if (setjmp(png_jmpbuf(f->png)))
        return -1;
    png_write_row(f->png, f->pending);
    return 0;
}

int tb_export_file_row(tb_export_file_t *f, const void *row, tb_err_t *err)
{
    if (f->rows >= f->h)
        return tb_err_set(err, TB_E_INTERNAL, "%s: more than %lld rows", f->tmp.final_path,
                          (long long)f->h);
    f->rows++;
    if (f->kind == TB_EXPORT_FILE_RAW) {
        s_bytes(f, row, f->row_bytes);
    } else {
        f->pending = row;
        if (f->kind == TB_EXPORT_FILE_PNG_GRAY16) {
            const uint16_t *v = row;
            unsigned char *b = (unsigned char *)f->swap;
            for (int64_t i = 0; i < f->w; i++) {
                b[2 * i] = (unsigned char)(v[i] >> 8);
                b[2 * i + 1] = (unsigned char)(v[i] & 0xff);
            }
            f->pending = (png_const_bytep)f->swap;
        }
        if (s_png_row(f) != 0)
            return tb_err_set(err, TB_E_IO, "%s: libpng could not write row %lld",
                              f->tmp.final_path, (long long)f->rows);
    }
    return f->io_failed
               ? tb_err_set(err, TB_E_IO, "%s: write failed (disk full?)", f->tmp.final_path)
               : 0;
}

static void s_free(tb_export_file_t *f)
{
    if (f->png)
        png_destroy_write_struct(&f->png, &f->info);
    if (f->hash)
        XXH3_freeState(f->hash);
    free(f->swap);
    free(f);
}

int tb_export_file_close(tb_export_file_t **f_p, uint64_t *xxh3, tb_err_t *err)
{
    tb_export_file_t *f = *f_p;
    *f_p = NULL;
    if (f->rows != f->h) {
        tb_err_set(err, TB_E_INTERNAL, "%s: %lld of %lld rows written", f->tmp.final_path,
                   (long long)f->rows, (long long)f->h);
        goto fail;
    }
    if (f->png) {
        if (setjmp(png_jmpbuf(f->png))) {
            tb_err_set(err, TB_E_IO, "%s: libpng could not finish the file", f->tmp.final_path);
            goto fail;
        }
        png_write_end(f->png, NULL);
    }
    if (f->io_failed) {
        tb_err_set(err, TB_E_IO, "%s: write failed (disk full?)", f->tmp.final_path);
        goto fail;
    }
    if (xxh3)
        *xxh3 = XXH3_64bits_digest(f->hash);
    int rc = tb_fs_tmp_commit(&f->tmp, err);
    s_free(f);
    return rc;
fail:
    tb_fs_tmp_abort(&f->tmp);
    s_free(f);
    return -1;
}

void tb_export_file_abort(tb_export_file_t **f_p)
{
    if (!f_p || !*f_p)
        return;
    tb_fs_tmp_abort(&(*f_p)->tmp);
    s_free(*f_p);
    *f_p = NULL;
}
