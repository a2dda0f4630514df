/* The files of a tile; see tile_files.h. */
#include "jobs/detail/tile_files.h"

#include <stdlib.h>
#include <string.h>

static const char *const s_suffix[TB_TILE_FILE_IMAGES] = {".png", "_flow.png", "_wear.png",
                                                          "_deposit.png", "_splat.png"};

const char *tb_tile_file_suffix(tb_tile_file_t which)
{
    return which >= 0 && which < TB_TILE_FILE_IMAGES ? s_suffix[which] : NULL;
}

int tb_tile_image(const tb_tile_result_t *r, tb_tile_file_t which, tb_image_t *out, tb_err_t *err)
{
    int64_t w = r->interior.w, h = r->interior.h;
    tb_png_format_t fmt = which == TB_TILE_FILE_HEIGHT  ? TB_PNG_GRAY16
                          : which == TB_TILE_FILE_SPLAT ? TB_PNG_RGBA8
                                                        : TB_PNG_GRAY8;
    const uint8_t *src = which == TB_TILE_FILE_HEIGHT    ? (const uint8_t *)r->height_u16
                         : which == TB_TILE_FILE_FLOW    ? r->flow
                         : which == TB_TILE_FILE_WEAR    ? r->wear
                         : which == TB_TILE_FILE_DEPOSIT ? r->deposit
                         : which == TB_TILE_FILE_SPLAT   ? r->splat
                                                         : NULL;
    if (!src)
        return tb_err_set(err, TB_E_INVALID, "tile image: no image %d", (int)which);
    if (tb_image_alloc(out, (uint32_t)w, (uint32_t)h, fmt, err) != 0)
        return -1;
    size_t row = (size_t)w * tb_png_format_bytes(fmt);
    for (int64_t j = 0; j < h; j++) /* both run north to south (y grows southward) */
        memcpy((uint8_t *)out->pixels + (size_t)j * row, src + (size_t)j * row, row);
    return 0;
}

int tb_tile_r16(const tb_tile_result_t *r, void **out, size_t *bytes, tb_err_t *err)
{
    int64_t w = r->interior.w, h = r->interior.h;
    size_t n = (size_t)w * (size_t)h;
    uint8_t *b = malloc(2 * n);
    if (!b)
        return tb_err_set(err, TB_E_NOMEM, "tile r16: out of memory for %zu samples", n);
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            uint16_t v = r->height_u16[tb_idx(w, i, j)];
            size_t o = 2 * tb_idx(w, i, j);
            b[o] = (uint8_t)(v & 0xff);
            b[o + 1] = (uint8_t)(v >> 8);
        }
    *out = b;
    *bytes = 2 * n;
    return 0;
}
