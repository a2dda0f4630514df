/* The coastal pass's maps; see coast_maps.h. */
#include "coordinator/maps/coast_maps.h"

#include <math.h>

#include "jobs/coast/coast.h"

static int64_t s_factor(int64_t w, int64_t max_width)
{
    if (max_width < 1)
        max_width = 1;
    return (w + max_width - 1) / max_width;
}

static void s_mix(const double a[3], const double b[3], double t, uint8_t *px)
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    for (int c = 0; c < 3; c++)
        px[c] = (uint8_t)lround(a[c] + (b[c] - a[c]) * t);
}

/* A round number (1, 2 or 5 times a power of ten) at or above x, at least 1 m. */
static double s_round_up(double x)
{
    if (!(x > 1))
        return 1;
    double p = pow(10, floor(log10(x)));
    for (;;) {
        if (p >= x)
            return p;
        if (2 * p >= x)
            return 2 * p;
        if (5 * p >= x)
            return 5 * p;
        p *= 10;
    }
}

/* land[v] = v != 0: a land mask read through tb_map_coast_classes */
static void s_mask_lut(uint8_t lut[256])
{
    for (int v = 0; v < 256; v++)
        lut[v] = v != 0;
}

int tb_map_coast(const float *moved_m, const float *height_m, const uint8_t *land_mask, int64_t w,
                 int64_t h, double deep_m, int64_t max_width, tb_image_t *out, double *top_m,
                 tb_err_t *err)
{
    uint8_t lut[256];
    s_mask_lut(lut);
    return tb_map_coast_classes(moved_m, height_m, land_mask, lut, w, h, deep_m, max_width, NULL,
                                out, top_m, err);
}

int tb_map_exposure(const uint16_t *exposure, const uint8_t *land_mask, int64_t w, int64_t h,
                    int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    uint8_t lut[256];
    s_mask_lut(lut);
    return tb_map_exposure_classes(exposure, land_mask, lut, w, h, max_width, NULL, out, err);
}

int tb_map_coast_classes(const float *moved_m, const float *height_m, const uint8_t *classes,
                         const uint8_t land_of[256], int64_t w, int64_t h, double deep_m,
                         int64_t max_width, const tb_rows_hook_t *done, tb_image_t *out,
                         double *top_m, tb_err_t *err)
{
    int64_t f = s_factor(w, max_width);
    if (tb_image_alloc(out, (uint32_t)((w + f - 1) / f), (uint32_t)((h + f - 1) / f), TB_PNG_RGB8,
                       err) != 0)
        return -1;
    double most = 0;
    for (int64_t y = 0; y < h; y++) {
        const float *row = moved_m + (size_t)y * (size_t)w;
        for (int64_t x = 0; x < w; x++)
            most = fabs(row[x]) > most ? fabs(row[x]) : most;
        if ((y + 1) % 256 == 0)
            tb_rows_done(done, y - 255, y + 1);
    }
    tb_rows_done(done, 0, h);
    double top = s_round_up(most);
    if (top_m)
        *top_m = top;
    const double land[3] = {200, 200, 195}, sea[3] = {95, 100, 110}, deep[3] = {45, 48, 58};
    const double cut_lo[3] = {150, 200, 235}, cut_hi[3] = {10, 40, 160};
    const double laid_lo[3] = {250, 215, 120}, laid_hi[3] = {190, 30, 10};
    const double span = log(top / 0.01);
    uint8_t *px = out->pixels;
    for (int64_t py = 0; py < (int64_t)out->h; py++)
        for (int64_t pxi = 0; pxi < (int64_t)out->w; pxi++) {
            /* the block's largest move; its centre cell for the ground */
            double best = 0;
            for (int64_t y = py * f; y < py * f + f && y < h; y++)
                for (int64_t x = pxi * f; x < pxi * f + f && x < w; x++) {
                    double m = moved_m[(size_t)y * (size_t)w + (size_t)x];
                    if (fabs(m) > fabs(best))
                        best = m;
                }
            int64_t cx = pxi * f + f / 2, cy = py * f + f / 2;
            cx = cx < w ? cx : w - 1;
            cy = cy < h ? cy : h - 1;
            size_t c = (size_t)cy * (size_t)w + (size_t)cx;
            uint8_t *p = px + 3 * ((size_t)py * out->w + (size_t)pxi);
            if (fabs(best) >= 0.01) {
                double t = log(fabs(best) / 0.01) / span;
                s_mix(best < 0 ? cut_lo : laid_lo, best < 0 ? cut_hi : laid_hi, t, p);
            } else {
                const double *g = land_of[classes[c]] ? land : -height_m[c] > deep_m ? deep : sea;
                s_mix(g, g, 0, p);
            }
            if (pxi + 1 == (int64_t)out->w)
                tb_rows_done(done, py * f, py * f + f);
        }
    return 0;
}

int tb_map_exposure_classes(const uint16_t *exposure, const uint8_t *classes,
                            const uint8_t land_of[256], int64_t w, int64_t h, int64_t max_width,
                            const tb_rows_hook_t *done, tb_image_t *out, tb_err_t *err)
{
    int64_t f = s_factor(w, max_width);
    if (tb_image_alloc(out, (uint32_t)((w + f - 1) / f), (uint32_t)((h + f - 1) / f), TB_PNG_RGB8,
                       err) != 0)
        return -1;
    /* a violet-to-yellow ramp (viridis-like stops) */
    static const double stops[4][3] = {{68, 1, 84}, {49, 104, 142}, {53, 183, 121}, {253, 231, 37}};
    const double land[3] = {205, 205, 200}, sea[3] = {60, 62, 70};
    uint8_t *px = out->pixels;
    for (int64_t py = 0; py < (int64_t)out->h; py++)
        for (int64_t pxi = 0; pxi < (int64_t)out->w; pxi++) {
            uint16_t best = TB_COAST_NO_EXPOSURE;
            int64_t cx = pxi * f + f / 2, cy = py * f + f / 2;
            cx = cx < w ? cx : w - 1;
            cy = cy < h ? cy : h - 1;
            for (int64_t y = py * f; y < py * f + f && y < h; y++)
                for (int64_t x = pxi * f; x < pxi * f + f && x < w; x++) {
                    uint16_t e = exposure[(size_t)y * (size_t)w + (size_t)x];
                    if (e != TB_COAST_NO_EXPOSURE && (best == TB_COAST_NO_EXPOSURE || e < best))
                        best = e;
                }
            uint8_t *p = px + 3 * ((size_t)py * out->w + (size_t)pxi);
            if (best == TB_COAST_NO_EXPOSURE) {
                const double *g =
                    land_of[classes[(size_t)cy * (size_t)w + (size_t)cx]] ? land : sea;
                s_mix(g, g, 0, p);
            } else {
                double t = (double)best / TB_COAST_EXPOSURE_ONE * 3;
                int k = t >= 3 ? 2 : (int)t;
                s_mix(stops[k], stops[k + 1], t - k, p);
            }
            if (pxi + 1 == (int64_t)out->w)
                tb_rows_done(done, py * f, py * f + f);
        }
    return 0;
}
