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

/* Writes *img to `path` atomically. compression 0..9 (zlib level; 6 is a good default). */
int tb_png_write(const char *path, const tb_image_t *img, int compression, tb_err_t *err);

/* Encodes *img as PNG bytes into a new buffer the caller frees. */
int tb_png_encode(const tb_image_t *img, int compression, unsigned char **out, size_t *bytes_out,
                  tb_err_t *err);

#endif
