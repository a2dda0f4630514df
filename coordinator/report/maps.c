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
 * coloured through colour(value); sea elsewhere. Leaves TB_REPORT_LEGEND_ROWS rows below. Made in
 * two steps so that a planet can be fed to it a band of rows at a time: the blocks' largest values
 * (and the land's range) are gathered row by row, then painted. */
typedef double (*s_to_t_fn)(const void *ctx, double value);

typedef struct {
    int64_t w, h, f, ow, oh;
    float *best;      /* ow x oh: the block's largest land value, NaN where it has no land */
    double lo, hi;    /* fmin / fmax of the land's values (+inf / -inf: none) */
    double hi_over_0; /* the largest land value above 0 (0: none) */
} s_blocks_t;

static int s_blocks_new(s_blocks_t *b, int64_t w, int64_t h, int64_t max_width, tb_err_t *err)
{
    int64_t f = s_factor(w, max_width);
    *b = (s_blocks_t){.w = w,
                      .h = h,
                      .f = f,
                      .ow = (w + f - 1) / f,
                      .oh = (h + f - 1) / f,
                      .lo = INFINITY,
                      .hi = -INFINITY};
    b->best = tb_malloc((size_t)b->ow * (size_t)b->oh * sizeof *b->best, "map blocks", err);
    if (!b->best)
        return -1;
    for (size_t k = 0; k < (size_t)b->ow * (size_t)b->oh; k++)
        b->best[k] = NAN;
    return 0;
}

/* Rows [y0, y0 + n) of the planet: v and land point at row y0's first cell (w a row). */
static void s_blocks_add(s_blocks_t *b, const float *v, const uint8_t *land, int64_t y0, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        const float *vr = v + (size_t)j * (size_t)b->w;
        const uint8_t *lr = land + (size_t)j * (size_t)b->w;
        float *br = b->best + (size_t)((y0 + j) / b->f) * (size_t)b->ow;
        for (int64_t x = 0; x < b->w; x++) {
            if (!lr[x])
                continue;
            float *bb = br + x / b->f;
            if (!(vr[x] <= *bb))
                *bb = vr[x];
            b->lo = fmin(b->lo, vr[x]);
            b->hi = fmax(b->hi, vr[x]);
            if (vr[x] > b->hi_over_0)
                b->hi_over_0 = vr[x];
        }
    }
}

static int s_blocks_paint(const s_blocks_t *b, const s_ramp_t *ramp, s_to_t_fn to_t,
                          const void *ctx, tb_image_t *out, tb_err_t *err)
{
    if (tb_image_alloc(out, (uint32_t)b->ow, (uint32_t)(b->oh + s_legend_rows(b->ow)), TB_PNG_RGB8,
                       err) != 0)
        return -1;
    uint8_t *px = out->pixels;
    for (size_t k = 0; k < (size_t)b->ow * (size_t)b->oh; k++) {
        uint8_t *p = px + 3 * k;
        if (isnan(b->best[k]))
            memcpy(p, S_SEA, 3);
        else
            s_colour(ramp, to_t(ctx, b->best[k]), p);
    }
    return 0;
}

static void s_blocks_free(s_blocks_t *b)
{
    free(b->best);
    b->best = NULL;
}

/* The whole-array form: the planet in one band. */
static int s_blocks_of(const float *v, const uint8_t *land, int64_t w, int64_t h, int64_t max_width,
                       s_blocks_t *b, tb_err_t *err)
{
    if (s_blocks_new(b, w, h, max_width, err) != 0)
        return -1;
    s_blocks_add(b, v, land, 0, h);
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

static int s_slope_paint(const s_blocks_t *b, tb_image_t *out, tb_err_t *err)
{
    s_ramp_t ramp = {7, S_SLOPE_RGB};
    if (s_blocks_paint(b, &ramp, s_slope_t, NULL, out, err) != 0)
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

int tb_map_slope(const float *slope_deg, const uint8_t *land, int64_t w, int64_t h,
                 int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    s_blocks_t b;
    int rc = s_blocks_of(slope_deg, land, w, h, max_width, &b, err) == 0
                 ? s_slope_paint(&b, out, err)
                 : -1;
    s_blocks_free(&b);
    return rc;
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

static int s_relief_paint(const s_blocks_t *blocks, double window_m, tb_image_t *out, tb_err_t *err)
{
    double top = s_round_top(blocks->hi_over_0);
    s_ramp_t ramp = {5, S_VIRIDIS};
    if (s_blocks_paint(blocks, &ramp, s_sqrt_t, &top, out, err) != 0)
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

int tb_map_relief(const float *relief_m, const uint8_t *land, int64_t w, int64_t h, double window_m,
                  int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    s_blocks_t b;
    int rc = s_blocks_of(relief_m, land, w, h, max_width, &b, err) == 0
                 ? s_relief_paint(&b, window_m, out, err)
                 : -1;
    s_blocks_free(&b);
    return rc;
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

static int s_erodibility_paint(const s_blocks_t *blocks, double m, tb_image_t *out, tb_err_t *err)
{
    s_range_t r = {blocks->lo, blocks->hi};
    if (!(r.lo <= r.hi))
        r.lo = r.hi = 0;
    s_ramp_t ramp = {5, S_ROCK};
    if (s_blocks_paint(blocks, &ramp, s_linear_t, &r, out, err) != 0)
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

int tb_map_erodibility(const float *k, const uint8_t *land, int64_t w, int64_t h, double m,
                       int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    s_blocks_t b;
    int rc = s_blocks_of(k, land, w, h, max_width, &b, err) == 0
                 ? s_erodibility_paint(&b, m, out, err)
                 : -1;
    s_blocks_free(&b);
    return rc;
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

typedef tb_report_maps_in_t s_maps_in_t;

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

#define S_BAND_CELLS ((int64_t)2 << 20) /* cells of a band of rows (8 MB of floats) */

/* Rows a band of the maps covers: a whole number of blocks of f rows, about S_BAND_CELLS cells. */
static int64_t s_band_rows(int64_t w, int64_t f)
{
    int64_t rows = S_BAND_CELLS / w + 1;
    return (rows + f - 1) / f * f;
}

/* map_slope.png: Horn's slope of the land heights, a band at a time with a row above and below
 * (tb_stats_slope_grid reads outside its box as sea level, so the band's own rows are the whole
 * planet's). */
static int s_slope_map(const s_maps_in_t *in, s_blocks_t *b, float *buf, tb_err_t *err)
{
    int64_t w = in->w, h = in->h, band = s_band_rows(w, b->f);
    for (int64_t y0 = 0; y0 < h; y0 += band) {
        int64_t y1 = y0 + band < h ? y0 + band : h;
        int64_t a = y0 > 0 ? y0 - 1 : 0, z = y1 < h ? y1 + 1 : h;
        tb_frame_t f;
        if (tb_frame_make(&f, w, h, in->cell_m, 0, a, w, z - a, err) != 0 ||
            tb_stats_slope_grid(&f, in->land_m + (size_t)a * (size_t)w, buf, err) != 0)
            return -1;
        s_blocks_add(b, buf + (size_t)(y0 - a) * (size_t)w, in->solved + (size_t)y0 * (size_t)w, y0,
                     y1 - y0);
        tb_rows_done(in->done, 0, y0 - 1);
    }
    return 0;
}

/* map_relief.png: the relief's own streaming pass over the whole planet (jobs/stats/relief.h). */
static int s_relief_map(const s_maps_in_t *in, int64_t r, s_blocks_t *b, tb_err_t *err)
{
    tb_frame_t pf;
    tb_relief_t *rel = tb_relief_new(err);
    int rc = -1;
    if (!rel || tb_frame_make(&pf, in->w, in->h, in->cell_m, 0, 0, in->w, in->h, err) != 0 ||
        tb_relief_begin(rel, &pf, in->land_m, r, err) != 0)
        goto done;
    int64_t k = 2 * r + 1;
    for (int64_t blk = 0; blk * k < in->h; blk++) {
        tb_relief_block(rel, blk);
        for (int64_t j = blk * k; j < blk * k + k && j < in->h; j++)
            s_blocks_add(b, tb_relief_row(rel, j), in->solved + (size_t)j * (size_t)in->w, j, 1);
        tb_rows_done(in->done, 0, blk * k - r - k);
    }
    rc = 0;
done:
    tb_relief_destroy(&rel);
    return rc;
}

/* map_erodibility.png: K as the solve built it, a band of the planet at a time with the uplift
 * blend's radius of rows either side: tb_uplift_build is exact for every land cell whose
 * neighbourhood lies in its box, which a region's box is for its land too (its ocean margin holds
 * the radius), so the K of a band is the regions' K. *mism counts solved cells whose U built here
 * differs from the solved one. */
static int s_erodibility_map(const s_maps_in_t *in, s_blocks_t *b, float *u, float *k,
                             int64_t *mism, tb_err_t *err)
{
    const tb_manifest_t *m = tb_plan_manifest(in->plan);
    int64_t w = in->w, h = in->h, band = s_band_rows(w, b->f);
    int64_t R = tb_uplift_blend_radius_cells(m->cell_m);
    for (int64_t y0 = 0; y0 < h; y0 += band) {
        int64_t y1 = y0 + band < h ? y0 + band : h;
        int64_t a = y0 - R > 0 ? y0 - R : 0, z = y1 + R < h ? y1 + R : h;
        tb_frame_t f;
        if (tb_frame_make(&f, w, h, m->cell_m, 0, a, w, z - a, err) != 0 ||
            tb_uplift_build(m, in->probes, &f, in->classes + (size_t)a * (size_t)w, u, k, err) != 0)
            return tb_err_prefix(err, "erodibility map");
        size_t off = (size_t)(y0 - a) * (size_t)w, at = (size_t)y0 * (size_t)w;
        for (size_t i = 0; i < (size_t)(y1 - y0) * (size_t)w; i++)
            if (in->solved[at + i] && in->uplift_m_yr[at + i] != u[off + i])
                (*mism)++;
        s_blocks_add(b, k + off, in->solved + at, y0, y1 - y0);
        tb_rows_done(in->done, 0, y0 - R);
    }
    return 0;
}

/* planet_height_low.png: each pixel the mean of its block, a row of blocks at a time. */
static int s_low_map(const s_maps_in_t *in, tb_image_t *out, tb_err_t *err)
{
    const tb_manifest_t *m = tb_plan_manifest(in->plan);
    double lo = m->elevation_min_m, hi = m->elevation_max_m;
    if (!(hi > lo))
        return tb_err_set(err, TB_E_INVALID, "heightmap: empty elevation range %g..%g", lo, hi);
    int64_t w = in->w, h = in->h, f = s_factor(w, TB_REPORT_LOW_MAX_WIDTH);
    int64_t ow = (w + f - 1) / f, oh = (h + f - 1) / f;
    if (tb_image_alloc(out, (uint32_t)ow, (uint32_t)oh, TB_PNG_GRAY16, err) != 0)
        return -1;
    uint16_t *px = out->pixels;
    double scale = 65535.0 / (hi - lo);
    for (int64_t py = 0; py < oh; py++) {
        for (int64_t pxi = 0; pxi < ow; pxi++) {
            double sum = 0;
            int64_t n = 0;
            for (int64_t y = py * f; y < py * f + f && y < h; y++)
                for (int64_t x = pxi * f; x < pxi * f + f && x < w; x++, n++)
                    sum += in->planet_m[tb_idx(w, x, y)];
            double v = (sum / (double)n - lo) * scale;
            px[tb_idx(ow, pxi, py)] = !(v >= 0) ? 0 : v > 65535 ? 65535 : (uint16_t)lround(v);
        }
        tb_rows_done(in->done, py * f, py * f + f);
    }
    return 0;
}

int tb_report_maps_write(const char *dir, const tb_report_maps_in_t *maps, int64_t max_width,
                         cJSON *hashes, tb_err_t *err)
{
    const s_maps_in_t *in = maps;
    const tb_manifest_t *m = tb_plan_manifest(in->plan);
    int64_t w = in->w;
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, m->cell_m);
    int64_t r = tb_relief_radius_cells(sp.relief_window_m, m->cell_m), mism = 0;
    s_blocks_t b = {0};
    tb_image_t img = {0};
    int64_t band = s_band_rows(w, s_factor(w, max_width));
    int64_t R = tb_uplift_blend_radius_cells(m->cell_m);
    size_t buf_cells = (size_t)w * (size_t)(band + 2 * R + 2);
    float *u = tb_malloc(buf_cells * sizeof(float), "a band of a map field", err);
    float *k = tb_malloc(buf_cells * sizeof(float), "a band of a map field", err);
    int rc = -1;
    if (!u || !k)
        goto done;
    if (s_blocks_new(&b, w, in->h, max_width, err) != 0 || s_slope_map(in, &b, u, err) != 0 ||
        s_slope_paint(&b, &img, err) != 0 || s_write(dir, "map_slope.png", &img, hashes, err) != 0)
        goto done;
    s_blocks_free(&b);
    if (s_blocks_new(&b, w, in->h, max_width, err) != 0 || s_relief_map(in, r, &b, err) != 0 ||
        s_relief_paint(&b, (double)(2 * r + 1) * m->cell_m, &img, err) != 0 ||
        s_write(dir, "map_relief.png", &img, hashes, err) != 0)
        goto done;
    s_blocks_free(&b);
    if (s_blocks_new(&b, w, in->h, max_width, err) != 0 ||
        s_erodibility_map(in, &b, u, k, &mism, err) != 0 ||
        s_erodibility_paint(&b, m->solve.m, &img, err) != 0 ||
        s_write(dir, "map_erodibility.png", &img, hashes, err) != 0)
        goto done;
    if (mism > 0) {
        tb_err_set(err, TB_E_INTERNAL,
                   "map_erodibility.png: the uplift built for the map differs from the solved "
                   "one at %lld land cells, so its K is not the solve's",
                   (long long)mism);
        goto done;
    }
    if (s_low_map(in, &img, err) != 0 ||
        s_write(dir, "planet_height_low.png", &img, hashes, err) != 0)
        goto done;
    rc = 0;
done:
    s_blocks_free(&b);
    tb_image_free(&img);
    free(u);
    free(k);
    return rc;
}
