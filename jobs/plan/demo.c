/* The built-in demo planet; see demo.h.
 *
 * Each landmass is a "blob": a superellipse of radii (rx, ry) whose field f = (1 - r) s + a N is
 * positive on land, where r is the superellipse radius (1 on the outline), s = min(rx, ry) turns it
 * into cells, N is coastline noise in [-1, 1] and a is the wobble in cells. So the coast of every
 * blob lies within a cells of its outline, which is what the structural guarantees are reasoned
 * from: the two close islands are 2 (R + a) + 6 cells apart centre to centre (at least 6 cells of
 * water between them, at most 4a + 6 = 30 < 50, the ocean margin), and every other pair is more
 * than a margin apart. The highland is the core of a blob, the range a band along a curved spine,
 * the shelf the ocean within about 40 cells of land (the distance transform, with wrap).
 *
 * Noise is sampled every few cells in world metres and interpolated bilinearly (cheap enough for a
 * 76 M-cell benchmark painting); sample columns are taken modulo W, so the interpolated field wraps
 * exactly.
 */
#include "jobs/plan/demo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edt.h"
#include "common/grid.h"
#include "common/hash.h"
#include "common/noise.h"

enum { S_LOWLAND = 0, S_HIGHLAND, S_RANGE, S_SHELF, S_DEEP, S_NCLASSES };

#define S_SPINE_SEGS 16 /* segments of the range's spine */
#define S_MAX_BLOBS 12
#define S_ISLET_R 4.0 /* speckle islets: about 50 cells, far under 0.05 km2 (781 cells) */

typedef enum { S_CONTINENT, S_MEDIUM, S_ISLAND, S_ISLET } s_kind_t;

typedef struct {
    s_kind_t kind;
    double cx, cy; /* centre in cells; cx may lie outside [0, W) and wraps */
    double rx, ry; /* radii in cells */
    int p;         /* superellipse exponent: 2, 3 or 4 */
    double wobble; /* coastline noise amplitude in cells */
    double bays;   /* depth in cells of the bays cut inward where the bay noise is positive */
    double core;   /* highland where r < core + 0.15 N (0: no highland) */
} s_blob_t;

typedef struct {
    int n;
    s_blob_t blobs[S_MAX_BLOBS];
    double spine[S_SPINE_SEGS + 1][2];   /* the range, a quadratic Bezier through the continent */
    double spine_inv_len2[S_SPINE_SEGS]; /* 1 / squared length of each segment */
    double range_half_width;             /* cells, before noise */
    double spine_box[4];                 /* x0, y0, x1, y1 of the spine grown by its widest band */
} s_layout_t;

/* ---- noise sampled on a coarse lattice ---- */

typedef struct {
    int64_t w, h, step, nx, ny; /* samples every `step` cells */
    double inv_step;
    float *v;
} s_coarse_t;

static int s_coarse_init(s_coarse_t *c, uint64_t seed, uint32_t salt, double wavelength_km,
                         int octaves, int64_t step, int64_t w, int64_t h, double cell_m,
                         tb_err_t *err)
{
    tb_noise_t n;
    if (tb_noise_init(&n, seed, salt, (double)w * cell_m, wavelength_km * 1000.0, err) != 0)
        return -1;
    c->w = w;
    c->h = h;
    c->step = step;
    c->inv_step = 1.0 / (double)step;
    c->nx = (w + step - 1) / step + 1;
    c->ny = (h - 1 + step - 1) / step + 1;
    c->v = tb_malloc(sizeof *c->v * (size_t)(c->nx * c->ny), "demo noise", err);
    if (!c->v)
        return -1;
    for (int64_t ky = 0; ky < c->ny; ky++) {
        int64_t y = ky * step < h - 1 ? ky * step : h - 1;
        for (int64_t kx = 0; kx < c->nx; kx++) {
            int64_t x = tb_wrap(kx * step < w ? kx * step : w, w); /* the last is column 0 */
            c->v[ky * c->nx + kx] = (float)tb_noise_fbm(&n, ((double)x + 0.5) * cell_m,
                                                        ((double)y + 0.5) * cell_m, octaves, 0.5);
        }
    }
    return 0;
}

/* The noise at cell (i, j), i in [0, w). */
static inline double s_coarse_at(const s_coarse_t *c, int64_t i, int64_t j)
{
    int64_t kx = i / c->step, ky = j / c->step;
    int64_t x0 = kx * c->step, y0 = ky * c->step;
    int64_t x1 = x0 + c->step < c->w ? x0 + c->step : c->w;
    int64_t y1 = y0 + c->step < c->h - 1 ? y0 + c->step : c->h - 1;
    /* Only the last column and row of samples can be closer than a step. */
    double tx =
        x1 - x0 == c->step ? (double)(i - x0) * c->inv_step : (double)(i - x0) / (double)(x1 - x0);
    double ty = y1 - y0 == c->step ? (double)(j - y0) * c->inv_step
                : y1 > y0          ? (double)(j - y0) / (double)(y1 - y0)
                                   : 0;
    const float *r0 = c->v + ky * c->nx + kx;
    const float *r1 = ky + 1 < c->ny ? r0 + c->nx : r0;
    double a = r0[0] + (r0[1] - r0[0]) * tx, b = r1[0] + (r1[1] - r1[0]) * tx;
    return a + (b - a) * ty;
}

/* ---- layout ---- */

static double s_jitter(uint64_t seed, int k)
{
    return tb_hash_unit(tb_hash(seed, TB_SALT_DEMO_LAYOUT, k, 0, 0)) * 2.0 - 1.0;
}

static double s_clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void s_add(s_layout_t *l, s_blob_t b)
{
    l->blobs[l->n++] = b;
}

/* The places and sizes of the landmasses for a W x H planet; see the file comment for the margins.
 */
static void s_layout(uint64_t seed, double W, double H, s_layout_t *l)
{
    memset(l, 0, sizeof *l);
    /* The main continent: tall (its box is clipped by the Y edges, so its margin costs little),
     * boxy, with a highland core and a range. */
    s_blob_t a = {S_CONTINENT,
                  0.36 * W + 0.02 * W * s_jitter(seed, 0),
                  0.5 * H,
                  0.185 * W,
                  (0.5 * H - 12) / 1.05,
                  4,
                  0,
                  0,
                  0.55}; /* reaches to 12 cells of the Y edges */
    a.wobble = 0.05 * fmin(a.rx, a.ry);
    a.bays = 0.25 * fmin(a.rx, a.ry);
    s_add(l, a);
    /* A medium island across the seam. */
    s_blob_t c = {S_MEDIUM,
                  0.01 * W * s_jitter(seed, 1),
                  0.55 * H + 0.04 * H * s_jitter(seed, 2),
                  0.055 * W,
                  0.14 * H,
                  3,
                  0,
                  0,
                  0.45};
    c.wobble = 0.08 * fmin(c.rx, c.ry);
    c.bays = 0.3 * fmin(c.rx, c.ry);
    s_add(l, c);
    /* Two islands closer than the ocean margin: 6 to 30 cells of water between them. */
    double r_d = s_clamp(0.0144 * W, 22, 45), a_d = 6;
    double d = 2 * (r_d + a_d) + 6;
    double dx = 0.70 * W + 0.02 * W * s_jitter(seed, 3),
           dy = 0.28 * H + 0.03 * H * s_jitter(seed, 4);
    s_add(l, (s_blob_t){S_ISLAND, dx - d / 2, dy, r_d, r_d, 2, a_d, 0.15 * r_d, 0});
    s_add(l, (s_blob_t){S_ISLAND, dx + d / 2, dy, r_d, r_d, 2, a_d, 0.15 * r_d, 0});
    /* A small island, comfortably over the minimum landmass (0.05 km2, 781 cells) at every size. */
    double r_e = s_clamp(0.0096 * W, 24, 30);
    s_add(l, (s_blob_t){S_ISLAND, 0.80 * W + 0.02 * W * s_jitter(seed, 5),
                        0.72 * H + 0.03 * H * s_jitter(seed, 6), r_e, r_e, 2, 0.15 * r_e,
                        0.15 * r_e, 0});
    /* Speckle islets, dropped by the plan. */
    static const double islets[][2] = {{0.60, 0.12}, {0.62, 0.88}, {0.90, 0.40}, {0.92, 0.90}};
    for (int k = 0; k < 4; k++)
        s_add(l, (s_blob_t){S_ISLET, islets[k][0] * W + 0.01 * W * s_jitter(seed, 10 + k),
                            islets[k][1] * H, S_ISLET_R, S_ISLET_R, 2, 0, 0, 0});
    /* The range: a Bezier from the continent's south-west to its north-east through a jittered
     * control point. */
    double p0[2] = {a.cx - 0.55 * a.rx, a.cy + 0.6 * a.ry},
           p2[2] = {a.cx + 0.5 * a.rx, a.cy - 0.6 * a.ry};
    double p1[2] = {a.cx + 0.35 * a.rx * s_jitter(seed, 7), a.cy + 0.3 * a.ry * s_jitter(seed, 8)};
    for (int k = 0; k <= S_SPINE_SEGS; k++) {
        double t = (double)k / S_SPINE_SEGS, u = 1 - t;
        for (int d2 = 0; d2 < 2; d2++)
            l->spine[k][d2] = u * u * p0[d2] + 2 * u * t * p1[d2] + t * t * p2[d2];
    }
    for (int k = 0; k < S_SPINE_SEGS; k++) {
        double bx = l->spine[k + 1][0] - l->spine[k][0], by = l->spine[k + 1][1] - l->spine[k][1];
        l->spine_inv_len2[k] = 1.0 / (bx * bx + by * by);
    }
    /* wider than twice the class blend's 288 m half-width (docs/uplift.md), so the range's core
     * reaches its own rate: at 0.045 the band was 340-470 m wide and never did (docs/plan.md) */
    l->range_half_width = fmax(4.0, 0.14 * fmin(a.rx, a.ry));
    double grow = 1.4 * l->range_half_width + 1;
    l->spine_box[0] = l->spine_box[2] = p0[0];
    l->spine_box[1] = l->spine_box[3] = p0[1];
    for (int k = 0; k <= S_SPINE_SEGS; k++) {
        l->spine_box[0] = fmin(l->spine_box[0], l->spine[k][0] - grow);
        l->spine_box[1] = fmin(l->spine_box[1], l->spine[k][1] - grow);
        l->spine_box[2] = fmax(l->spine_box[2], l->spine[k][0] + grow);
        l->spine_box[3] = fmax(l->spine_box[3], l->spine[k][1] + grow);
    }
}

/* The superellipse radius of (u, v): 1 on the outline. */
static inline double s_radius(double u, double v, int p)
{
    u = fabs(u);
    v = fabs(v);
    switch (p) {
    case 2:
        return sqrt(u * u + v * v);
    case 3:
        return cbrt(u * u * u + v * v * v);
    default: {
        double u2 = u * u, v2 = v * v;
        return sqrt(sqrt(u2 * u2 + v2 * v2));
    }
    }
}

/* Distance from a point to the range's spine, in cells. */
static double s_spine_distance(const s_layout_t *l, double x, double y)
{
    double best = INFINITY;
    for (int k = 0; k < S_SPINE_SEGS; k++) {
        double ax = l->spine[k][0], ay = l->spine[k][1];
        double bx = l->spine[k + 1][0] - ax, by = l->spine[k + 1][1] - ay;
        double t = ((x - ax) * bx + (y - ay) * by) * l->spine_inv_len2[k];
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        double ex = x - ax - t * bx, ey = y - ay - t * by;
        double d2 = ex * ex + ey * ey;
        if (d2 < best)
            best = d2;
    }
    return sqrt(best);
}

/* The land class a blob gives the cell centred at (xc, yc) (x unwrapped, in the blob's frame). */
static uint8_t s_land_class(const s_layout_t *l, const s_blob_t *b, double xc, double yc,
                            double zone)
{
    if (b->kind == S_CONTINENT && xc >= l->spine_box[0] && xc <= l->spine_box[2] &&
        yc >= l->spine_box[1] && yc <= l->spine_box[3] &&
        s_spine_distance(l, xc, yc) < l->range_half_width * (1.0 + 0.4 * zone))
        return S_RANGE;
    /* the core is elliptical whatever the outline's exponent */
    if (b->core > 0 &&
        s_radius((xc - b->cx) / b->rx, (yc - b->cy) / b->ry, 2) < b->core + 0.15 * zone)
        return S_HIGHLAND;
    return S_LOWLAND;
}

/* Paints every blob into best/cls: a cell is land where some blob's field is positive, and takes
 * the class of the blob whose field is largest there. */
static void s_paint_blobs(const s_layout_t *l, int64_t w, int64_t h, const s_coarse_t *coast,
                          const s_coarse_t *bay, const s_coarse_t *zone, float *best, uint8_t *cls)
{
    for (int k = 0; k < l->n; k++) {
        const s_blob_t *b = &l->blobs[k];
        double s = fmin(b->rx, b->ry), reach = 1.0 + b->wobble / s;
        int64_t x0 = (int64_t)floor(b->cx - b->rx * reach) - 1,
                x1 = (int64_t)ceil(b->cx + b->rx * reach) + 1;
        int64_t y0 = (int64_t)floor(b->cy - b->ry * reach) - 1,
                y1 = (int64_t)ceil(b->cy + b->ry * reach) + 1;
        y0 = y0 < 0 ? 0 : y0;
        y1 = y1 > h - 1 ? h - 1 : y1;
        if (x1 - x0 + 1 > w)
            x1 = x0 + w - 1;
        for (int64_t y = y0; y <= y1; y++) {
            double yc = (double)y + 0.5, v = (yc - b->cy) / b->ry;
            for (int64_t xu = x0; xu <= x1; xu++) {
                double xc = (double)xu + 0.5;
                double r = s_radius((xc - b->cx) / b->rx, v, b->p);
                if (r >= reach)
                    continue;
                int64_t i = tb_wrap(xu, w);
                size_t idx = tb_idx(w, i, y);
                double f = (1.0 - r) * s;
                if (b->wobble > 0)
                    f += b->wobble * s_coarse_at(coast, i, y);
                if (b->bays > 0) /* cuts inward only: the outline never grows past the wobble */
                    f -= b->bays * fmin(1.0, fmax(0.0, 2.0 * s_coarse_at(bay, i, y)));
                if (f <= best[idx]) /* best starts at 0, so only land gets past */
                    continue;
                best[idx] = (float)f;
                cls[idx] = s_land_class(l, b, xc, yc, s_coarse_at(zone, i, y));
            }
        }
    }
}

int tb_demo_paint(uint64_t seed, const tb_manifest_t *m, int64_t w, int64_t h, tb_image_t *painting,
                  tb_err_t *err)
{
    memset(painting, 0, sizeof *painting);
    if (w < 16 || h < 16 || w > INT32_MAX || h > INT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "demo: a %lld x %lld planet is too small to paint",
                          (long long)w, (long long)h);
    if (m->legend.n_classes != S_NCLASSES)
        return tb_err_set(err, TB_E_INTERNAL, "demo: the legend is not the demo legend");
    s_layout_t layout;
    s_layout(seed, (double)w, (double)h, &layout);
    s_coarse_t coast = {0}, bay = {0}, zone = {0}, shelf = {0};
    size_t n = (size_t)w * (size_t)h;
    float *best = NULL;
    uint8_t *cls = NULL, *mask = NULL;
    uint32_t *d2 = NULL;
    int rc = -1;
    /* Samples at least four to the finest octave's wavelength. */
    if (s_coarse_init(&coast, seed, TB_SALT_DEMO_PAINTING, 1.6, 3, 8, w, h, m->cell_m, err) ||
        s_coarse_init(&bay, seed, TB_SALT_DEMO_BAYS, 3.2, 2, 16, w, h, m->cell_m, err) ||
        s_coarse_init(&zone, seed, TB_SALT_DEMO_CLASSES, 2.0, 3, 12, w, h, m->cell_m, err) ||
        s_coarse_init(&shelf, seed, TB_SALT_DEMO_SHELF, 1.2, 2, 16, w, h, m->cell_m, err))
        goto done;
    best = tb_calloc(n, sizeof *best, "demo field", err); /* 0: only positive fields are land */
    cls = tb_malloc(n, "demo classes", err);
    mask = tb_malloc(n, "demo land mask", err);
    d2 = tb_malloc(sizeof *d2 * n, "demo coast distance", err);
    if (!best || !cls || !mask || !d2)
        goto done;
    s_paint_blobs(&layout, w, h, &coast, &bay, &zone, best, cls);
    for (size_t k = 0; k < n; k++)
        mask[k] = best[k] > 0;
    if (tb_edt_squared(mask, w, h, true, 2, d2, err) != 0)
        goto done;
    /* The shelf: ocean within about 0.32 km of land, its edge moved in and out by noise. */
    const double shelf_cells = 320.0 / m->cell_m;
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            size_t k = tb_idx(w, i, j);
            if (mask[k])
                continue;
            if ((double)d2[k] > shelf_cells * shelf_cells * 1.35 * 1.35) {
                cls[k] = S_DEEP; /* beyond the widest the noise can make the shelf */
                continue;
            }
            double reach = shelf_cells * (1.0 + 0.35 * s_coarse_at(&shelf, i, j));
            cls[k] = (double)d2[k] <= reach * reach ? S_SHELF : S_DEEP;
        }
    if (tb_image_alloc(painting, (uint32_t)w, (uint32_t)h, TB_PNG_RGB8, err) != 0)
        goto done;
    uint8_t *px = painting->pixels;
    for (size_t k = 0; k < n; k++)
        memcpy(px + 3 * k, m->legend.classes[cls[k]].rgb, 3);
    rc = 0;
done:
    free(coast.v);
    free(bay.v);
    free(zone.v);
    free(shelf.v);
    free(best);
    free(cls);
    free(mask);
    free(d2);
    return rc;
}

/* ---- manifest ---- */

static void s_class(tb_class_t *c, const char *name, uint32_t rgb, tb_class_kind_t kind)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->rgb[0] = (uint8_t)(rgb >> 16);
    c->rgb[1] = (uint8_t)(rgb >> 8);
    c->rgb[2] = (uint8_t)rgb;
    c->kind = kind;
    c->k_mult = 1;
}

static void s_land(tb_class_t *c, double uplift, double floor_rate, double fraction, double k_mult)
{
    c->uplift_mm_yr = uplift;
    c->massif_floor_mm_yr = floor_rate;
    c->massif_fraction = fraction;
    c->k_mult = k_mult;
}

int tb_demo_manifest(uint64_t seed, double circumference_km, tb_manifest_t *m, tb_err_t *err)
{
    tb_manifest_defaults(m);
    m->is_demo = true;
    m->seed = seed;
    snprintf(m->source, sizeof m->source, "(demo planet, seed %llu)", (unsigned long long)seed);
    m->circumference_km = circumference_km;
    m->solve.steps = 400;
    m->solve.dt_yr = 2500; /* tentative: the lead tunes it once the solve exists */
    m->elevation_min_m = -1024;
    m->elevation_max_m = 1024;
    m->massif.wavelength_km = 2.5;
    m->regions.ocean_margin_km = 0.4;
    tb_legend_t *l = &m->legend;
    l->n_classes = S_NCLASSES;
    l->tolerance = 24;
    l->max_unmatched_fraction = 0.001;
    s_class(&l->classes[S_LOWLAND], "lowland", 0x6f9a4a, TB_CLASS_LAND);
    s_land(&l->classes[S_LOWLAND], 0.06, 0.012, 0.2, 1.0);
    s_class(&l->classes[S_HIGHLAND], "highland", 0xc8b273, TB_CLASS_LAND);
    s_land(&l->classes[S_HIGHLAND], 0.15, 0.08, 0.5, 1.0);
    s_class(&l->classes[S_RANGE], "range", 0xa0522d, TB_CLASS_LAND);
    s_land(&l->classes[S_RANGE], 0.8, 0.25, 0.7, 1.0);
    s_class(&l->classes[S_SHELF], "shelf", 0x7fb2d9, TB_CLASS_OCEAN);
    l->classes[S_SHELF].depth_m = 60;
    s_class(&l->classes[S_DEEP], "deep", 0x1f4e79, TB_CLASS_OCEAN);
    l->classes[S_DEEP].depth_m = 900;
    return tb_manifest_finish(m, err);
}

int tb_demo_planet(uint64_t seed, double circumference_km, tb_manifest_t *m, tb_image_t *painting,
                   tb_err_t *err)
{
    memset(painting, 0, sizeof *painting);
    if (tb_demo_manifest(seed, circumference_km, m, err) != 0)
        return -1;
    int64_t w = m->planet_w, h = (int64_t)llround(0.32 * (double)w);
    return tb_demo_paint(seed, m, w, h, painting, err);
}
