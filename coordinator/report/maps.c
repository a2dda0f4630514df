/* The maps the report adds; see maps.h. */
#include "coordinator/report/maps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/grid.h"
#include "common/hash.h"
#include "coordinator/maps/font.h"
#include "jobs/stats/relief.h"
#include "jobs/stats/stats.h"

static const uint8_t S_SEA[3] = {8, 12, 24};
static const uint8_t S_WHITE[3] = {255, 255, 255};
static const uint8_t S_INK[3] = {0, 0, 0};

typedef struct {
    int n;
    const uint8_t (*rgb)[3];
} s_ramp_t;

/* magma-like, light at the top: slope */
static const uint8_t S_SLOPE_RGB[7][3] = {{48, 18, 100},  {90, 30, 120},  {140, 45, 110},
                                          {190, 65, 80},  {230, 100, 45}, {250, 160, 30},
                                          {252, 240, 140}};
/* viridis: relief */
static const uint8_t S_VIRIDIS[5][3] = {
    {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
/* hard rock brown to soft rock cyan: erodibility */
static const uint8_t S_ROCK[5][3] = {
    {90, 50, 25}, {160, 110, 60}, {225, 200, 130}, {160, 220, 200}, {50, 160, 210}};

static void s_colour(const s_ramp_t *r, double t, uint8_t rgb[3])
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double x = t * (r->n - 1);
    int i = (int)x;
    if (i >= r->n - 1)
        i = r->n - 2;
    double f = x - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround(r->rgb[i][c] + (r->rgb[i + 1][c] - r->rgb[i][c]) * f);
}

static int64_t s_factor(int64_t w, int64_t max_width)
{
    if (max_width < 1)
        max_width = 1;
    return (w + max_width - 1) / max_width;
}

/* The legend's font scale for a map `w` pixels wide, and the strip's rows. */
static int s_scale(int64_t w)
{
    return w >= 2400 ? 2 : 1;
}

static int64_t s_legend_rows(int64_t w)
{
    return TB_REPORT_LEGEND_ROWS * s_scale(w);
}

/* A label centred on x but kept inside the image. */
static void s_label(tb_image_t *img, const char *text, int64_t x, int64_t y)
{
    int sc = s_scale(img->w);
    int64_t half = tb_font_text_width(text, sc) / 2 + 2;
    if (x < half)
        x = half;
    if (x > (int64_t)img->w - half)
        x = (int64_t)img->w - half;
    tb_font_draw_centred(img, text, x, y, sc, S_WHITE, S_INK, false);
}

/* The legend strip at rows [y0, y0 + TB_REPORT_LEGEND_ROWS): the title, the ramp as a bar, and
 * labels at fractions t[i] of the bar. */
static void s_legend(tb_image_t *img, int64_t y0, const s_ramp_t *ramp, const char *title,
                     const double *t, const char *const *labels, int n)
{
    uint8_t *px = img->pixels;
    for (int64_t y = y0; y < (int64_t)img->h; y++)
        for (int64_t x = 0; x < (int64_t)img->w; x++)
            memcpy(px + 3 * tb_idx(img->w, x, y), S_SEA, 3);
    int64_t x0 = 8, x1 = (int64_t)img->w - 8;
    if (x1 <= x0 + 1)
        x1 = x0 + 2;
    int sc = s_scale(img->w);
    for (int64_t y = y0 + 15 * sc; y < y0 + 24 * sc && y < (int64_t)img->h; y++)
        for (int64_t x = x0; x < x1 && x < (int64_t)img->w; x++)
            s_colour(ramp, (double)(x - x0) / (double)(x1 - 1 - x0), px + 3 * tb_idx(img->w, x, y));
    s_label(img, title, (int64_t)img->w / 2, y0 + 7 * sc);
    for (int i = 0; i < n; i++)
        s_label(img, labels[i], x0 + (int64_t)lround(t[i] * (double)(x1 - 1 - x0)), y0 + 32 * sc);
}

/* The map: each pixel the largest `value` over the land cells of its f x f block (NaN: none),
 * coloured through colour(value); sea elsewhere. Leaves TB_REPORT_LEGEND_ROWS rows below. */
typedef double (*s_to_t_fn)(const void *ctx, double value);

static int s_render(const float *v, const uint8_t *land, int64_t w, int64_t h, int64_t max_width,
                    const s_ramp_t *ramp, s_to_t_fn to_t, const void *ctx, tb_image_t *out,
                    tb_err_t *err)
{
    int64_t f = s_factor(w, max_width);
    int64_t ow = (w + f - 1) / f, oh = (h + f - 1) / f;
    if (tb_image_alloc(out, (uint32_t)ow, (uint32_t)(oh + s_legend_rows(ow)), TB_PNG_RGB8, err) !=
        0)
        return -1;
    uint8_t *px = out->pixels;
    for (int64_t py = 0; py < oh; py++)
        for (int64_t pxi = 0; pxi < ow; pxi++) {
            double best = NAN;
            for (int64_t y = py * f; y < py * f + f && y < h; y++)
                for (int64_t x = pxi * f; x < pxi * f + f && x < w; x++) {
                    size_t i = tb_idx(w, x, y);
                    if (land[i] && !(v[i] <= best))
                        best = v[i];
                }
            uint8_t *p = px + 3 * tb_idx(ow, pxi, py);
            if (isnan(best))
                memcpy(p, S_SEA, 3);
            else
                s_colour(ramp, to_t(ctx, best), p);
        }
    return 0;
}

/* ---- slope ---- */

#define S_SLOPE_STOPS 7
static const double S_SLOPE_DEG[S_SLOPE_STOPS] = {0, 2, 5, 10, 20, 35, 60};

static double s_slope_t(const void *ctx, double deg)
{
    (void)ctx;
    if (!(deg > 0))
        return 0;
    for (int i = 0; i + 1 < S_SLOPE_STOPS; i++)
        if (deg < S_SLOPE_DEG[i + 1])
            return (i + (deg - S_SLOPE_DEG[i]) / (S_SLOPE_DEG[i + 1] - S_SLOPE_DEG[i])) /
                   (S_SLOPE_STOPS - 1);
    return 1;
}

int tb_map_slope(const float *slope_deg, const uint8_t *land, int64_t w, int64_t h,
                 int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    s_ramp_t ramp = {7, S_SLOPE_RGB};
    if (s_render(slope_deg, land, w, h, max_width, &ramp, s_slope_t, NULL, out, err) != 0)
        return -1;
    double t[S_SLOPE_STOPS];
    char text[S_SLOPE_STOPS][16];
    const char *labels[S_SLOPE_STOPS];
    for (int i = 0; i < S_SLOPE_STOPS; i++) {
        t[i] = (double)i / (S_SLOPE_STOPS - 1);
        snprintf(text[i], sizeof text[i], "%g%s", S_SLOPE_DEG[i],
                 i == S_SLOPE_STOPS - 1 ? " UP" : "");
        labels[i] = text[i];
    }
    s_legend(out, out->h - s_legend_rows(out->w), &ramp, "SLOPE OF THE LAND IN DEGREES 0 - 60", t,
             labels, S_SLOPE_STOPS);
    return 0;
}

/* ---- relief ---- */

static double s_round_top(double hi)
{
    if (!(hi > 0))
        return 1;
    double p = pow(10, floor(log10(hi)));
    const double steps[4] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (steps[i] * p >= hi * (1 - 1e-6))
            return steps[i] * p;
    return 10 * p;
}

static double s_sqrt_t(const void *ctx, double v)
{
    double top = *(const double *)ctx;
    return v > 0 ? sqrt(v / top) : 0;
}

int tb_map_relief(const float *relief_m, const uint8_t *land, int64_t w, int64_t h, double window_m,
                  int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    double hi = 0;
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        if (land[i] && relief_m[i] > hi)
            hi = relief_m[i];
    double top = s_round_top(hi);
    s_ramp_t ramp = {5, S_VIRIDIS};
    if (s_render(relief_m, land, w, h, max_width, &ramp, s_sqrt_t, &top, out, err) != 0)
        return -1;
    double t[3] = {0, 0.5, 1};
    char a[32], b[32], title[96];
    snprintf(a, sizeof a, "%g M", top / 4);
    snprintf(b, sizeof b, "%g M", top);
    const char *labels[3] = {"0", a, b};
    snprintf(title, sizeof title, "LOCAL RELIEF OVER %.0f M IN METRES 0 - %g SQRT SCALE", window_m,
             top);
    s_legend(out, out->h - s_legend_rows(out->w), &ramp, title, t, labels, 3);
    return 0;
}

/* ---- erodibility ---- */

typedef struct {
    double lo, hi;
} s_range_t;

static double s_linear_t(const void *ctx, double v)
{
    const s_range_t *r = ctx;
    return r->hi > r->lo ? (v - r->lo) / (r->hi - r->lo) : 0.5;
}

int tb_map_erodibility(const float *k, const uint8_t *land, int64_t w, int64_t h, double m,
                       int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    s_range_t r = {INFINITY, -INFINITY};
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        if (land[i]) {
            r.lo = fmin(r.lo, k[i]);
            r.hi = fmax(r.hi, k[i]);
        }
    if (!(r.lo <= r.hi))
        r.lo = r.hi = 0;
    s_ramp_t ramp = {5, S_ROCK};
    if (s_render(k, land, w, h, max_width, &ramp, s_linear_t, &r, out, err) != 0)
        return -1;
    double t[3] = {0, 0.5, 1};
    char a[32], b[32], c[32], title[128];
    snprintf(a, sizeof a, "%.2E", r.lo);
    snprintf(b, sizeof b, "%.2E", 0.5 * (r.lo + r.hi));
    snprintf(c, sizeof c, "%.2E", r.hi);
    const char *labels[3] = {a, b, c};
    if (fabs(m - 0.5) < 1e-12)
        snprintf(title, sizeof title, "ERODIBILITY K PER YEAR %.2E - %.2E HARD TO SOFT", r.lo,
                 r.hi);
    else
        snprintf(title, sizeof title, "ERODIBILITY K IN M%.2g PER YEAR %.2E - %.2E", 1 - 2 * m,
                 r.lo, r.hi);
    s_legend(out, out->h - s_legend_rows(out->w), &ramp, title, t, labels, 3);
    return 0;
}

/* ---- the reduced heightmap ---- */

int tb_map_height16_low(const float *height_m, int64_t w, int64_t h, double lo_m, double hi_m,
                        int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    if (!(hi_m > lo_m))
        return tb_err_set(err, TB_E_INVALID, "heightmap: empty elevation range %g..%g", lo_m, hi_m);
    int64_t f = s_factor(w, max_width);
    int64_t ow = (w + f - 1) / f, oh = (h + f - 1) / f;
    if (tb_image_alloc(out, (uint32_t)ow, (uint32_t)oh, TB_PNG_GRAY16, err) != 0)
        return -1;
    uint16_t *px = out->pixels;
    double scale = 65535.0 / (hi_m - lo_m);
    for (int64_t py = 0; py < oh; py++)
        for (int64_t pxi = 0; pxi < ow; pxi++) {
            double sum = 0;
            int64_t n = 0;
            for (int64_t y = py * f; y < py * f + f && y < h; y++)
                for (int64_t x = pxi * f; x < pxi * f + f && x < w; x++, n++)
                    sum += height_m[tb_idx(w, x, y)];
            double v = (sum / (double)n - lo_m) * scale;
            px[tb_idx(ow, pxi, py)] = !(v >= 0) ? 0 : v > 65535 ? 65535 : (uint16_t)lround(v);
        }
    return 0;
}

/* ---- the erodibility field ---- */

int tb_report_erodibility_field(const tb_plan_t *plan, const tb_uplift_probes_t *probes,
                                const bool *selected, float *k_out, const float *uplift_check,
                                int64_t *mismatches, tb_err_t *err)
{
    const tb_manifest_t *m = tb_plan_manifest(plan);
    const tb_plan_summary_t *ps = tb_plan_summary(plan);
    int64_t pw = ps->planet_w;
    memset(k_out, 0, (size_t)pw * (size_t)ps->planet_h * sizeof(float));
    if (mismatches)
        *mismatches = 0;
    for (int ri = 0; ri < tb_plan_region_count(plan); ri++) {
        if (selected && !selected[ri])
            continue;
        const tb_plan_region_t *reg = tb_plan_region(plan, ri);
        const tb_frame_t *box = &reg->box;
        size_t cells = (size_t)box->w * (size_t)box->h;
        tb_grid_t *classes = NULL, *mask = NULL;
        float *u = malloc(cells * sizeof(float)), *k = malloc(cells * sizeof(float));
        int rc = -1;
        if (!u || !k)
            tb_err_set(err, TB_E_NOMEM, "erodibility map: out of memory for region %d", reg->id);
        else if (tb_plan_region_grids(plan, ri, &classes, &mask, err) == 0 &&
                 tb_uplift_build(m, probes, box, tb_grid_cu8(classes), u, k, err) == 0)
            rc = 0;
        if (rc == 0) {
            const uint8_t *msk = tb_grid_cu8(mask);
            for (int64_t j = 0; j < box->h; j++)
                for (int64_t i = 0; i < box->w; i++) {
                    size_t bi = tb_idx(box->w, i, j);
                    if (!msk[bi])
                        continue;
                    size_t pi = tb_idx(pw, tb_frame_lattice_x(box, i), box->y0 + j);
                    k_out[pi] = k[bi];
                    if (uplift_check && mismatches && uplift_check[pi] != u[bi])
                        (*mismatches)++;
                }
        }
        tb_grid_destroy(&classes);
        tb_grid_destroy(&mask);
        free(u);
        free(k);
        if (rc != 0)
            return tb_err_prefix(err, "erodibility map, region %d", reg->id);
    }
    return 0;
}

/* ---- writing ---- */

static int s_write(const char *dir, const char *name, tb_image_t *img, cJSON *hashes, tb_err_t *err)
{
    char path[4200];
    unsigned char *bytes = NULL;
    size_t n;
    int rc = -1;
    if (tb_fs_join(path, sizeof path, dir, name, err) == 0) {
        if (tb_png_encode(img, 6, &bytes, &n, err) != 0)
            tb_err_prefix(err, "%s", path);
        else if (tb_fs_write_atomic(path, bytes, n, err) == 0)
            rc = 0;
    }
    if (rc == 0 && hashes) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(bytes, n));
        cJSON_AddStringToObject(hashes, name, hex);
    }
    free(bytes);
    tb_image_free(img);
    return rc;
}

int tb_report_maps_write(const char *dir, const tb_plan_t *plan, const tb_uplift_probes_t *probes,
                         const bool *selected, const float *height_m, const float *planet_m,
                         const float *uplift_m_yr, const uint8_t *solved, int64_t w, int64_t h,
                         int64_t max_width, cJSON *hashes, tb_err_t *err)
{
    const tb_manifest_t *m = tb_plan_manifest(plan);
    tb_frame_t pf;
    tb_image_t img = {0};
    float *buf = tb_malloc((size_t)w * (size_t)h * sizeof(float), "a map field", err);
    if (!buf)
        return -1;
    int rc = -1;
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, m->cell_m);
    int64_t r = tb_relief_radius_cells(sp.relief_window_m, m->cell_m);
    int64_t mism = 0;
    if (tb_frame_make(&pf, w, h, m->cell_m, 0, 0, w, h, err) != 0)
        goto done;
    if (tb_stats_slope_grid(&pf, height_m, buf, err) != 0 ||
        tb_map_slope(buf, solved, w, h, max_width, &img, err) != 0 ||
        s_write(dir, "map_slope.png", &img, hashes, err) != 0)
        goto done;
    if (tb_relief_grid(&pf, height_m, r, buf, err) != 0 ||
        tb_map_relief(buf, solved, w, h, (double)(2 * r + 1) * m->cell_m, max_width, &img, err) !=
            0 ||
        s_write(dir, "map_relief.png", &img, hashes, err) != 0)
        goto done;
    if (tb_report_erodibility_field(plan, probes, selected, buf, uplift_m_yr, &mism, err) != 0 ||
        tb_map_erodibility(buf, solved, w, h, m->solve.m, max_width, &img, err) != 0 ||
        s_write(dir, "map_erodibility.png", &img, hashes, err) != 0)
        goto done;
    if (mism > 0) {
        tb_err_set(err, TB_E_INTERNAL,
                   "map_erodibility.png: the uplift built for the map differs from the solved "
                   "one at %lld land cells, so its K is not the solve's",
                   (long long)mism);
        goto done;
    }
    if (tb_map_height16_low(planet_m, w, h, m->elevation_min_m, m->elevation_max_m,
                            TB_REPORT_LOW_MAX_WIDTH, &img, err) != 0 ||
        s_write(dir, "planet_height_low.png", &img, hashes, err) != 0)
        goto done;
    rc = 0;
done:
    tb_image_free(&img);
    free(buf);
    return rc;
}
