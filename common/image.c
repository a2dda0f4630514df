/* Images in memory; see image.h. */
#include "common/image.h"

#include <stdlib.h>
#include <string.h>

size_t tb_png_format_bytes(tb_png_format_t f)
{
    switch (f) {
    case TB_PNG_GRAY8:
        return 1;
    case TB_PNG_GRAY16:
        return 2;
    case TB_PNG_RGB8:
        return 3;
    case TB_PNG_RGBA8:
        return 4;
    }
    return 0;
}

int tb_image_alloc(tb_image_t *img, uint32_t w, uint32_t h, tb_png_format_t format, tb_err_t *err)
{
    memset(img, 0, sizeof *img);
    if (w == 0 || h == 0)
        return tb_err_set(err, TB_E_INVALID, "image of %u x %u pixels", w, h);
    img->pixels = tb_calloc((size_t)w * h, tb_png_format_bytes(format), "image", err);
    if (!img->pixels)
        return -1;
    img->w = w;
    img->h = h;
    img->format = format;
    return 0;
}

void tb_image_free(tb_image_t *img)
{
    if (!img)
        return;
    free(img->pixels);
    memset(img, 0, sizeof *img);
}
