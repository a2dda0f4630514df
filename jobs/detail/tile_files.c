/* The files of a tile; see tile_files.h. */
#include "jobs/detail/tile_files.h"

#include <stdlib.h>
#include <string.h>

#include "common/blob.h"

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

/* The float heights file. The predictor works on the float bits mapped to unsigned integers in
 * the order of the floats they are (negative floats flipped), so that neighbouring heights are
 * neighbouring integers and the residuals of a smooth surface are small; zigzag folds their sign
 * into the low bit, and the byte planes put the mostly-zero high bytes together for zstd. */
static const unsigned char s_f32z_magic[4] = {'T', 'B', 'H', 'F'};
#define S_F32Z_VERSION 1u
#define S_F32Z_MAX_SIDE ((int64_t)1 << 20)

static uint32_t s_ordered(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

static float s_unordered(uint32_t u)
{
    uint32_t b = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* The prediction of sample (i, j) from its decoded neighbours u (row-major, width w). */
static uint32_t s_predict(const uint32_t *u, int64_t w, int64_t i, int64_t j)
{
    size_t k = tb_idx(w, i, j);
    if (i > 0 && j > 0)
        return u[k - 1] + u[k - (size_t)w] - u[k - (size_t)w - 1];
    return i > 0 ? u[k - 1] : j > 0 ? u[k - (size_t)w] : 0u;
}

static void s_put_u32(unsigned char *b, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        b[k] = (unsigned char)(v >> (8 * k));
}

static uint32_t s_get_u32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int tb_tile_f32z_encode(const float *height_m, int64_t w, int64_t h, void **out, size_t *bytes,
                        tb_err_t *err)
{
    if (w < 1 || h < 1 || w > S_F32Z_MAX_SIDE || h > S_F32Z_MAX_SIDE)
        return tb_err_set(err, TB_E_INVALID, "f32z: %lld x %lld samples: expected 1..2^20 a side",
                          (long long)w, (long long)h);
    size_t n = (size_t)w * (size_t)h;
    uint32_t *u = malloc(4 * n);
    unsigned char *planes = malloc(4 * n);
    void *blob = NULL;
    size_t blob_bytes = 0;
    int rc = -1;
    if (!u || !planes) {
        tb_err_set(err, TB_E_NOMEM, "f32z: out of memory for %zu samples", n);
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        u[k] = s_ordered(height_m[k]);
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            size_t k = tb_idx(w, i, j);
            uint32_t d = u[k] - s_predict(u, w, i, j);
            uint32_t z = (d << 1) ^ (uint32_t) - (int32_t)(d >> 31); /* zigzag of d as signed */
            for (int b = 0; b < 4; b++)
                planes[(size_t)b * n + k] = (unsigned char)(z >> (8 * b));
        }
    if (tb_blob_encode(planes, 4 * n, TB_BLOB_DEFAULT_LEVEL, &blob, &blob_bytes, err) != 0)
        goto done;
    unsigned char *o = malloc(TB_TILE_F32Z_HEADER_BYTES + blob_bytes);
    if (!o) {
        tb_err_set(err, TB_E_NOMEM, "f32z: out of memory for %zu bytes", blob_bytes);
        goto done;
    }
    memcpy(o, s_f32z_magic, 4);
    s_put_u32(o + 4, S_F32Z_VERSION);
    s_put_u32(o + 8, (uint32_t)w);
    s_put_u32(o + 12, (uint32_t)h);
    memcpy(o + TB_TILE_F32Z_HEADER_BYTES, blob, blob_bytes);
    *out = o;
    *bytes = TB_TILE_F32Z_HEADER_BYTES + blob_bytes;
    rc = 0;
done:
    free(u);
    free(planes);
    free(blob);
    return rc;
}

int tb_tile_f32z(const tb_tile_result_t *r, void **out, size_t *bytes, tb_err_t *err)
{
    return tb_tile_f32z_encode(r->height_m, r->interior.w, r->interior.h, out, bytes, err);
}

int tb_tile_f32z_peek(const void *data, size_t bytes, const char *name, int64_t *w, int64_t *h,
                      tb_err_t *err)
{
    const unsigned char *b = data;
    if (bytes < TB_TILE_F32Z_HEADER_BYTES || memcmp(b, s_f32z_magic, 4) != 0)
        return tb_err_set(err, TB_E_FORMAT, "%s: not a float heights file (no TBHF header)", name);
    if (s_get_u32(b + 4) != S_F32Z_VERSION)
        return tb_err_set(err, TB_E_FORMAT, "%s: float heights format version %u, expected %u",
                          name, s_get_u32(b + 4), S_F32Z_VERSION);
    *w = s_get_u32(b + 8);
    *h = s_get_u32(b + 12);
    if (*w < 1 || *h < 1 || *w > S_F32Z_MAX_SIDE || *h > S_F32Z_MAX_SIDE)
        return tb_err_set(err, TB_E_FORMAT, "%s: %lld x %lld samples: expected 1..2^20 a side",
                          name, (long long)*w, (long long)*h);
    return 0;
}

int tb_tile_f32z_decode(const void *data, size_t bytes, const char *name, int64_t w, int64_t h,
                        float *out, tb_err_t *err)
{
    int64_t fw, fh;
    if (tb_tile_f32z_peek(data, bytes, name, &fw, &fh, err) != 0)
        return -1;
    if (fw != w || fh != h)
        return tb_err_set(err, TB_E_FORMAT, "%s: %lld x %lld samples, expected %lld x %lld", name,
                          (long long)fw, (long long)fh, (long long)w, (long long)h);
    size_t n = (size_t)w * (size_t)h, got = 0;
    void *planes_v = NULL;
    if (tb_blob_decode((const unsigned char *)data + TB_TILE_F32Z_HEADER_BYTES,
                       bytes - TB_TILE_F32Z_HEADER_BYTES, 4 * n, &planes_v, &got, err) != 0) {
        if (err && err->code == TB_E_INVALID)
            err->code = TB_E_FORMAT; /* a blob larger than the header's size: a damaged file */
        return tb_err_prefix(err, "%s", name);
    }
    const unsigned char *planes = planes_v;
    uint32_t *u = (uint32_t *)(void *)out; /* decoded in place: a float is 4 bytes */
    if (got != 4 * n) {
        free(planes_v);
        return tb_err_set(err, TB_E_FORMAT, "%s: %zu bytes of residuals, expected %zu", name, got,
                          4 * n);
    }
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            size_t k = tb_idx(w, i, j);
            uint32_t z = (uint32_t)planes[k] | (uint32_t)planes[n + k] << 8 |
                         (uint32_t)planes[2 * n + k] << 16 | (uint32_t)planes[3 * n + k] << 24;
            uint32_t d = (z >> 1) ^ (uint32_t) - (int32_t)(z & 1u);
            u[k] = s_predict(u, w, i, j) + d;
        }
    for (size_t k = 0; k < n; k++)
        out[k] = s_unordered(u[k]);
    free(planes_v);
    return 0;
}
