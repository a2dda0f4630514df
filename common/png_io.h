/* PNG read and write with libpng: 8- and 16-bit grey, 8-bit RGB and RGBA.
 *
 * Reading converts whatever the file holds to the format asked for where that is lossless or
 * conventional (palette and grey to RGB, 8-bit grey to 16 by v * 257, 16-bit RGB to 8 by dropping
 * the low byte) and refuses what would invent data (colour read as a grey heightmap). 16-bit
 * samples are returned in host order. Every libpng error, including a truncated file, comes back as
 * -1 with a message naming the file. Writes are atomic (fs.h).
 */
#ifndef TB_PNG_IO_H
#define TB_PNG_IO_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/image.h"

/* Reads `path` into *out as `want`. Images over max_pixels are refused before decoding. */
/* The image size its header (IHDR) declares, read without decoding anything, so that a size can
 * be checked against what the caller expects before a pixel is allocated. */
int tb_png_peek(const void *data, size_t bytes, const char *name, uint32_t *w, uint32_t *h,
                tb_err_t *err);

int tb_png_read(const char *path, tb_png_format_t want, uint64_t max_pixels, tb_image_t *out,
                tb_err_t *err);
/* The same from memory; `name` is used in messages. */
int tb_png_read_mem(const void *data, size_t bytes, const char *name, tb_png_format_t want,
                    uint64_t max_pixels, tb_image_t *out, tb_err_t *err);

/* `compression` is a zlib level 0..9 (6 is a good default) with libpng's adaptive filters, or
 * TB_PNG_FAST: one filter (Up) on every row at level 1, and zlib's run-length matching for 8-bit
 * grey. On a 2500 x 2500 detail tile's five images (docs/tiles.md, "Files") that took 0.39 s
 * against 0.72 s at level 1 with adaptive filters, and the files came out 5 % smaller: the
 * adaptive choice costs more than it saves on smooth heights and sparse masks. */
#define TB_PNG_FAST (-1)

/* Writes *img to `path` atomically. */
int tb_png_write(const char *path, const tb_image_t *img, int compression, tb_err_t *err);

/* Encodes *img as PNG bytes into a new buffer the caller frees. */
int tb_png_encode(const tb_image_t *img, int compression, unsigned char **out, size_t *bytes_out,
                  tb_err_t *err);

/* A PNG written a band of rows at a time, so that an image larger than memory (the 300 km planet's
 * heightmap is 37500 x 12000 samples of 16 bits) is never held whole: rows go through libpng to a
 * temporary file beside `path` as they come, and close renames it over `path` once every row is
 * in (fs.h). The bytes are those tb_png_encode makes of the whole image. */
typedef struct tb_png_writer_t tb_png_writer_t;
/* Starts a w x h image of `format` at zlib level `compression`. NULL with *err naming the path. */
tb_png_writer_t *tb_png_writer_open(const char *path, uint32_t w, uint32_t h,
                                    tb_png_format_t format, int compression, tb_err_t *err);
/* The next n rows, packed (w samples a row; 16-bit samples in host order). 0 or -1. */
int tb_png_writer_rows(tb_png_writer_t *wr, const void *rows, uint32_t n, tb_err_t *err);
/* Ends the image and renames it into place; *xxh3 (may be NULL) gets the XXH3-64 of the file's
 * bytes. Refuses (and removes the temporary) an image missing rows. Frees the writer and sets *wr
 * to NULL on every path. 0 or -1. */
int tb_png_writer_close(tb_png_writer_t **wr, uint64_t *xxh3, tb_err_t *err);
/* Drops the image: the temporary goes, `path` is not touched. Accepts NULL. */
void tb_png_writer_abort(tb_png_writer_t **wr);

#endif
