/* An image in memory: the pixels every picture of the bake is drawn into, and what a painting is
 * read into. Its formats are named after the PNG colour types they are written as (common/png_io.h
 * reads and writes them), but nothing here needs libpng: jobs/ takes a painting as a tb_image_t.
 */
#ifndef TB_IMAGE_H
#define TB_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef enum { TB_PNG_GRAY8 = 0, TB_PNG_GRAY16, TB_PNG_RGB8, TB_PNG_RGBA8 } tb_png_format_t;

typedef struct {
    uint32_t w, h;
    tb_png_format_t format;
    void *pixels; /* row-major, tb_png_format_bytes(format) per pixel, top row first */
} tb_image_t;

/* Bytes per pixel of a format. */
size_t tb_png_format_bytes(tb_png_format_t format);

/* Allocates a zeroed image; returns 0 or -1 with *err set. Free with tb_image_free. */
int tb_image_alloc(tb_image_t *img, uint32_t w, uint32_t h, tb_png_format_t format, tb_err_t *err);
void tb_image_free(tb_image_t *img);

#endif
