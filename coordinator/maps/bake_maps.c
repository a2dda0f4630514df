/* The maps of a bake; see bake_maps.h. */
#include "coordinator/maps/bake_maps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

int64_t tb_map_height16_rows(const float *height_m, size_t n, double lo_m, double hi_m,
                             uint16_t *px)
{
    int64_t clip = 0;
    double scale = 65535.0 / (hi_m - lo_m);
    for (size_t i = 0; i < n; i++) {
        double v = ((double)height_m[i] - lo_m) * scale;
        if (!(v >= 0)) { /* also NaN */
            px[i] = 0;
            clip++;
        } else if (v > 65535) {
            px[i] = 65535;
            clip++;
        } else {
            px[i] = (uint16_t)lround(v);
        }
    }
    return clip;
}

int tb_map_height16(const float *height_m, int64_t w, int64_t h, double lo_m, double hi_m,
                    tb_image_t *out, int64_t *clipped, tb_err_t *err)
{
    if (!(hi_m > lo_m))
        return tb_err_set(err, TB_E_INVALID, "heightmap: empty elevation range %g..%g", lo_m, hi_m);
    if (tb_image_alloc(out, (uint32_t)w, (uint32_t)h, TB_PNG_GRAY16, err) != 0)
        return -1;
    int64_t clip = tb_map_height16_rows(height_m, (size_t)w * (size_t)h, lo_m, hi_m, out->pixels);
    if (clipped)
        *clipped = clip;
    return 0;
}

static int64_t s_factor(int64_t w, int64_t max_width)
{
    if (max_width < 1)
        max_width = 1;
    return (w + max_width - 1) / max_width;
}

/* The cell a picture pixel (pxi, py) samples at reduction f: the centre of its f x f block, kept
 * inside the w x h grid. */
static void s_sample_cell(int64_t pxi, int64_t py, int64_t f, int64_t w, int64_t h, int64_t *x,
                          int64_t *y)
{
    int64_t sx = pxi * f + f / 2, sy = py * f + f / 2;
    *x = sx < w ? sx : w - 1;
    *y = sy < h ? sy : h - 1;
}

static void s_ramp(double t, uint8_t rgb[3])
{
    /* dark blue -> cyan -> white: the flow ramp */
    static const double stops[4][3] = {
        {20, 30, 60}, {30, 90, 170}, {60, 200, 230}, {255, 255, 255}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double x = t * 3;
    int k = x >= 3 ? 2 : (int)x;
    double f = x - k;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround(stops[k][c] + (stops[k + 1][c] - stops[k][c]) * f);
}

int tb_map_flow(const float *area_m2, const uint8_t *land_mask, int64_t w, int64_t h,
                double area_min_m2, int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out,
                tb_err_t *err)
{
    int64_t f = s_factor(w, max_width);
    int64_t ow = (w + f - 1) / f, oh = (h + f - 1) / f;
    /* one pass: each pixel's block maximum (-1: no land), and the largest area of all */
    float *best = tb_malloc((size_t)ow * (size_t)oh * sizeof *best, "flow map", err);
    if (!best)
        return -1;
    double amax = area_min_m2;
    for (int64_t py = 0; py < oh; py++) {
        for (int64_t pxi = 0; pxi < ow; pxi++) {
            float b = -1;
            for (int64_t y = py * f; y < py * f + f && y < h; y++)
                for (int64_t x = pxi * f; x < pxi * f + f && x < w; x++) {
                    size_t i = (size_t)y * (size_t)w + (size_t)x;
                    if (land_mask[i] && area_m2[i] > b)
                        b = area_m2[i];
                }
            best[(size_t)py * (size_t)ow + (size_t)pxi] = b;
            if (b > amax)
                amax = b;
        }
        tb_rows_done(done, py * f, py * f + f);
    }
    if (tb_image_alloc(out, (uint32_t)ow, (uint32_t)oh, TB_PNG_RGB8, err) != 0) {
        free(best);
        return -1;
    }
    double lo = log(area_min_m2), span = log(amax) - lo;
    if (span <= 0)
        span = 1;
    uint8_t *px = out->pixels;
    for (size_t k = 0; k < (size_t)ow * (size_t)oh; k++, px += 3) {
        double b = best[k];
        if (b < 0) {
            px[0] = 8, px[1] = 12, px[2] = 24;
            continue;
        }
        s_ramp((log(b > area_min_m2 ? b : area_min_m2) - lo) / span, px);
    }
    free(best);
    return 0;
}

static void s_hsv(double hue, double s, double v, uint8_t rgb[3])
{
    double hh = fmod(hue, 1.0) * 6;
    int i = (int)hh;
    double f = hh - i, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    double r, g, b;
    switch (i) {
    case 0:
        r = v, g = t, b = p;
        break;
    case 1:
        r = q, g = v, b = p;
        break;
    case 2:
        r = p, g = v, b = t;
        break;
    case 3:
        r = p, g = q, b = v;
        break;
    case 4:
        r = t, g = p, b = v;
        break;
    default:
        r = v, g = p, b = q;
        break;
    }
    rgb[0] = (uint8_t)lround(r * 255);
    rgb[1] = (uint8_t)lround(g * 255);
    rgb[2] = (uint8_t)lround(b * 255);
}

int tb_map_basins(const int32_t *basin, const uint8_t *land_mask, int64_t w, int64_t h,
                  int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out, tb_err_t *err)
{
    int64_t f = s_factor(w, max_width);
    if (tb_image_alloc(out, (uint32_t)((w + f - 1) / f), (uint32_t)((h + f - 1) / f), TB_PNG_RGB8,
                       err) != 0)
        return -1;
    uint8_t *px = out->pixels;
    for (int64_t py = 0; py < (int64_t)out->h; py++) {
        for (int64_t pxi = 0; pxi < (int64_t)out->w; pxi++, px += 3) {
            int64_t x, y;
            s_sample_cell(pxi, py, f, w, h, &x, &y);
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            if (!land_mask[i] || basin[i] < 0) {
                px[0] = 8, px[1] = 12, px[2] = 24;
                continue;
            }
            uint64_t hsh = tb_hash(0, TB_SALT_MAP_BASINS, basin[i], 0, 0);
            s_hsv(tb_hash_unit(hsh), 0.45 + 0.5 * (double)((hsh >> 8) & 1),
                  0.6 + 0.4 * (double)((hsh >> 9) & 1), px);
        }
        /* after the row, not in its last pixel's branch: a row ending at sea was never given back
         * (125 of the 200 MB of a 100 km planet's basin raster stayed resident) */
        tb_rows_done(done, py * f, py * f + f);
    }
    return 0;
}

int tb_map_preview(const float *height_m, int64_t w, int64_t h, double cell_m, double land_top_m,
                   int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out, tb_err_t *err)
{
    int64_t f = s_factor(w, max_width);
    if (tb_image_alloc(out, (uint32_t)((w + f - 1) / f), (uint32_t)((h + f - 1) / f), TB_PNG_RGB8,
                       err) != 0)
        return -1;
    if (!(land_top_m > 0))
        land_top_m = 1;
    static const double land[4][3] = {
        {70, 120, 60}, {150, 150, 90}, {140, 110, 80}, {225, 225, 225}};
    uint8_t *px = out->pixels;
    for (int64_t py = 0; py < (int64_t)out->h; py++)
        for (int64_t pxi = 0; pxi < (int64_t)out->w; pxi++, px += 3) {
            int64_t x, y;
            s_sample_cell(pxi, py, f, w, h, &x, &y);
            double z = height_m[(size_t)y * (size_t)w + (size_t)x];
            /* hillshade from the neighbours f cells away (X wraps) */
            int64_t xl = (x - f + w) % w, xr = (x + f) % w;
            int64_t yu = y - f < 0 ? 0 : y - f, yd = y + f >= h ? h - 1 : y + f;
            double dzdx =
                (height_m[(size_t)y * w + xr] - height_m[(size_t)y * w + xl]) / (2 * f * cell_m);
            double dzdy =
                (height_m[(size_t)yd * w + x] - height_m[(size_t)yu * w + x]) / (2 * f * cell_m);
            double shade = 0.75 + 0.6 * (-dzdx - dzdy) / sqrt(1 + dzdx * dzdx + dzdy * dzdy);
            shade = shade < 0.35 ? 0.35 : shade > 1.25 ? 1.25 : shade;
            double rgb[3];
            if (z <= 0) {
                double t = fmin(1.0, -z / 1000.0);
                rgb[0] = 40 - 25 * t, rgb[1] = 110 - 70 * t, rgb[2] = 170 - 80 * t;
                shade = 1;
            } else {
                double t = fmin(1.0, z / land_top_m) * 3;
                int k = t >= 3 ? 2 : (int)t;
                double fr = t - k;
                for (int c = 0; c < 3; c++)
                    rgb[c] = land[k][c] + (land[k + 1][c] - land[k][c]) * fr;
            }
            for (int c = 0; c < 3; c++) {
                double v = rgb[c] * shade;
                px[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lround(v));
            }
            /* the next row of pixels reads from its block's centre row less f on */
            if (pxi + 1 == (int64_t)out->w)
                tb_rows_done(done, 0, (py + 1) * f + f / 2 - f);
        }
    return 0;
}
