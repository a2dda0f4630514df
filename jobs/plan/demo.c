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
 * 450 M-cell painting); sample columns are taken modulo W, so the interpolated field wraps exactly.
 *
 * The painter makes rows in bands (demo.h): the blobs' field a row at a time, each row once, into
 * a window of the band and its halos; the shelf from a distance transform of that window. Rows are
 * painted on a pool of threads, each a function of its position and of the noise's sample rows,
 * which are made before the rows that read them (a ring of a window's worth). Whole-planet
 * arrays made this painting cost 121 ns a cell at 300 km against 54 at 25 km: 13 bytes a cell of
 * fresh memory (5.8 GB) the kernel zeroed page by page (clear_page was 41 % of the profile at 100
 * km), where a band is the same few megabytes reused.
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
#include "common/pool.h"

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

/* Samples every `step` cells. The rows of samples a band reads are made before the band is
 * painted (s_coarse_prepare, in parallel), into a ring of `slots` rows: rows are painted in order,
 * so a band never needs a sample row the ring has already given to a later one. */
typedef struct {
    tb_noise_t noise;
    int octaves;
    double cell_m;
    int64_t w, h, step, nx, ny;
    double inv_step;
    int64_t slots;
    float *v;      /* slots x nx samples: sample row ky in slot ky % slots */
    int64_t *have; /* the sample row each slot holds, -1 for none */
} s_coarse_t;

static int s_coarse_init(s_coarse_t *c, uint64_t seed, uint32_t salt, double wavelength_km,
                         int octaves, int64_t step, int64_t w, int64_t h, double cell_m,
                         int64_t window_rows, tb_err_t *err)
{
    if (tb_noise_init(&c->noise, seed, salt, (double)w * cell_m, wavelength_km * 1000.0, err) != 0)
        return -1;
    c->octaves = octaves;
    c->cell_m = cell_m;
    c->w = w;
    c->h = h;
    c->step = step;
    c->inv_step = 1.0 / (double)step;
    c->nx = (w + step - 1) / step + 1;
    c->ny = (h - 1 + step - 1) / step + 1;
    c->slots = window_rows / step + 3; /* any window_rows rows read at most this many */
    c->v = tb_malloc(sizeof *c->v * (size_t)(c->nx * c->slots), "demo noise", err);
    c->have = c->v ? tb_malloc(sizeof *c->have * (size_t)c->slots, "demo noise", err) : NULL;
    if (!c->have)
        return -1;
    for (int64_t k = 0; k < c->slots; k++)
        c->have[k] = -1;
    return 0;
}

static void s_coarse_free(s_coarse_t *c)
{
    free(c->v);
    free(c->have);
}

/* Sample row ky into its slot. */
static void s_coarse_make(s_coarse_t *c, int64_t ky)
{
    float *v = c->v + (size_t)(ky % c->slots) * (size_t)c->nx;
    int64_t y = ky * c->step < c->h - 1 ? ky * c->step : c->h - 1;
    for (int64_t kx = 0; kx < c->nx; kx++) {
        int64_t x = tb_wrap(kx * c->step < c->w ? kx * c->step : c->w, c->w); /* last: column 0 */
        v[kx] = (float)tb_noise_fbm(&c->noise, ((double)x + 0.5) * c->cell_m,
                                    ((double)y + 0.5) * c->cell_m, c->octaves, 0.5);
    }
}

typedef struct {
    s_coarse_t *c;
    const int64_t *todo;
} s_make_t;

static void s_make_task(void *ctx, size_t task, int thread)
{
    const s_make_t *m = ctx;
    (void)thread;
    s_coarse_make(m->c, m->todo[task]);
}

/* Makes the sample rows cell rows [j0, j1) read that the ring does not hold yet, on the pool. */
static void s_coarse_prepare(s_coarse_t *c, int64_t j0, int64_t j1, tb_pool_t *pool)
{
    int64_t ky0 = j0 / c->step, ky1 = (j1 - 1) / c->step + 1;
    ky1 = ky1 < c->ny - 1 ? ky1 : c->ny - 1;
    int64_t todo[64], n = 0;
    s_make_t m = {c, todo};
    for (int64_t ky = ky0; ky <= ky1; ky++) {
        if (c->have[ky % c->slots] == ky)
            continue;
        c->have[ky % c->slots] = ky;
        todo[n++] = ky;
        if (n == 64) {
            tb_pool_run(pool, (size_t)n, s_make_task, &m);
            n = 0;
        }
    }
    if (n)
        tb_pool_run(pool, (size_t)n, s_make_task, &m);
}

/* A prepared sample row (see s_coarse_prepare). */
static const float *s_coarse_samples(const s_coarse_t *c, int64_t ky)
{
    return c->v + (size_t)(ky % c->slots) * (size_t)c->nx;
}

/* The two sample rows that cell row j interpolates between (the same one twice at the last). */
typedef struct {
    const s_coarse_t *c;
    const float *r0, *r1;
    int64_t y0;
    double ty;
} s_coarse_row_t;

static s_coarse_row_t s_coarse_row(const s_coarse_t *c, int64_t j)
{
    int64_t ky = j / c->step, y0 = ky * c->step;
    int64_t y1 = y0 + c->step < c->h - 1 ? y0 + c->step : c->h - 1;
    s_coarse_row_t r = {c, NULL, NULL, y0, 0};
    /* Only the last row of samples can be closer than a step. */
    r.ty = y1 - y0 == c->step ? (double)(j - y0) * c->inv_step
           : y1 > y0          ? (double)(j - y0) / (double)(y1 - y0)
                              : 0;
    r.r0 = s_coarse_samples(c, ky);
    r.r1 = ky + 1 < c->ny ? s_coarse_samples(c, ky + 1) : r.r0;
    return r;
}

/* The noise at column i in [0, w) of the row. */
static inline double s_coarse_at(const s_coarse_row_t *row, int64_t i)
{
    const s_coarse_t *c = row->c;
    int64_t kx = i / c->step, x0 = kx * c->step;
    int64_t x1 = x0 + c->step < c->w ? x0 + c->step : c->w;
    double tx =
        x1 - x0 == c->step ? (double)(i - x0) * c->inv_step : (double)(i - x0) / (double)(x1 - x0);
    const float *r0 = row->r0 + kx, *r1 = row->r1 + kx;
    double a = r0[0] + (r0[1] - r0[0]) * tx, b = r1[0] + (r1[1] - r1[0]) * tx;
    return a + (b - a) * row->ty;
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

/* A blob's reach in cells: the rows and (unwrapped) columns its field can be positive on. */
typedef struct {
    double s, reach;
    int64_t x0, x1, y0, y1;
} s_bounds_t;

static s_bounds_t s_blob_bounds(const s_blob_t *b, int64_t w, int64_t h)
{
    s_bounds_t o;
    o.s = fmin(b->rx, b->ry);
    o.reach = 1.0 + b->wobble / o.s;
    o.x0 = (int64_t)floor(b->cx - b->rx * o.reach) - 1;
    o.x1 = (int64_t)ceil(b->cx + b->rx * o.reach) + 1;
    o.y0 = (int64_t)floor(b->cy - b->ry * o.reach) - 1;
    o.y1 = (int64_t)ceil(b->cy + b->ry * o.reach) + 1;
    o.y0 = o.y0 < 0 ? 0 : o.y0;
    o.y1 = o.y1 > h - 1 ? h - 1 : o.y1;
    if (o.x1 - o.x0 + 1 > w)
        o.x1 = o.x0 + w - 1;
    return o;
}

struct tb_demo_painter_t {
    int64_t w, h;
    s_layout_t layout;
    s_bounds_t bounds[S_MAX_BLOBS];
    uint8_t rgb[S_NCLASSES][3];
    s_coarse_t coast, bay, zone, shelf;
    double shelf_cells;
    double shelf_far2; /* beyond this squared distance from land the ocean is deep */
    int64_t halo;      /* rows of land either side a band's shelf can see */
    int64_t band, cap; /* rows a band; rows of the window (a band and two halos) */
    tb_pool_t *pool;   /* rows are painted in parallel: each is a function of its position */
    int threads;
    /* the window: field rows [win_y0, win_y0 + win_n), classes and land */
    uint8_t *cls, *land;
    float *best; /* a row of the field per thread */
    uint32_t *d2;
    uint8_t *out; /* the band's pixels: rows [out_y0, out_y0 + out_n), next handed out: out_next */
    int64_t win_y0, win_n, field_rows, out_y0, out_n, out_next;
    int64_t task_y0, task_s0; /* the rows of the section the pool is running */
    tb_row_source_t src;
};

/* Paints field row y of every blob into best/cls: a cell is land where some blob's field is
 * positive, and takes the class of the blob whose field is largest there (blobs in order, a later
 * one only where it is strictly larger). */
static void s_paint_row(const tb_demo_painter_t *p, int64_t y, float *best, uint8_t *cls)
{
    const s_layout_t *l = &p->layout;
    const int64_t w = p->w;
    memset(best, 0, sizeof *best * (size_t)w); /* 0: only positive fields are land */
    s_coarse_row_t coast = s_coarse_row(&p->coast, y), bay = s_coarse_row(&p->bay, y),
                   zone = s_coarse_row(&p->zone, y);
    for (int k = 0; k < l->n; k++) {
        const s_blob_t *b = &l->blobs[k];
        const s_bounds_t *o = &p->bounds[k];
        if (y < o->y0 || y > o->y1)
            continue;
        double yc = (double)y + 0.5, v = (yc - b->cy) / b->ry;
        for (int64_t xu = o->x0; xu <= o->x1; xu++) {
            double xc = (double)xu + 0.5;
            double r = s_radius((xc - b->cx) / b->rx, v, b->p);
            if (r >= o->reach)
                continue;
            int64_t i = tb_wrap(xu, w);
            double f = (1.0 - r) * o->s;
            if (b->wobble > 0)
                f += b->wobble * s_coarse_at(&coast, i);
            if (b->bays > 0) /* cuts inward only: the outline never grows past the wobble */
                f -= b->bays * fmin(1.0, fmax(0.0, 2.0 * s_coarse_at(&bay, i)));
            if (f <= best[i]) /* best starts at 0, so only land gets past */
                continue;
            best[i] = (float)f;
            cls[i] = s_land_class(l, b, xc, yc, s_coarse_at(&zone, i));
        }
    }
}

/* Field row task_y0 + task into the window, with its land. */
static void s_field_task(void *ctx, size_t task, int thread)
{
    tb_demo_painter_t *p = ctx;
    const int64_t w = p->w, y = p->task_y0 + (int64_t)task;
    size_t at = (size_t)(y - p->win_y0) * (size_t)w;
    float *best = p->best + (size_t)thread * (size_t)w;
    s_paint_row(p, y, best, p->cls + at);
    for (int64_t i = 0; i < w; i++)
        p->land[at + (size_t)i] = best[i] > 0;
}

/* The shelf: ocean within about 0.32 km of land, its edge moved in and out by noise. Every distance
 * that decides a pixel is at most shelf_far2, so within the window (demo.h). Pixel row task_y0 +
 * task of the band. */
static void s_shelf_task(void *ctx, size_t task, int thread)
{
    const tb_demo_painter_t *p = ctx;
    (void)thread;
    const int64_t w = p->w, j = p->task_y0 + (int64_t)task;
    size_t row = (size_t)(j - p->task_s0) * (size_t)w;
    const uint8_t *land = p->land + row, *cls = p->cls + row;
    const uint32_t *d2 = p->d2 + row;
    uint8_t *px = p->out + (size_t)task * (size_t)w * 3;
    s_coarse_row_t shelf = s_coarse_row(&p->shelf, j);
    for (int64_t i = 0; i < w; i++, px += 3) {
        uint8_t c = cls[i];
        if (!land[i] && (double)d2[i] > p->shelf_far2) {
            c = S_DEEP; /* beyond the widest the noise can make the shelf */
        } else if (!land[i]) {
            double reach = p->shelf_cells * (1.0 + 0.35 * s_coarse_at(&shelf, i));
            c = (double)d2[i] <= reach * reach ? S_SHELF : S_DEEP;
        }
        memcpy(px, p->rgb[c], 3);
    }
}

/* Makes the next band: the field rows it and its lower halo need, the distance to land over the
 * window, the shelf, the colours. */
static int s_band(tb_demo_painter_t *p, tb_err_t *err)
{
    const int64_t w = p->w, h = p->h;
    int64_t b0 = p->out_y0 + p->out_n, b1 = b0 + p->band < h ? b0 + p->band : h;
    int64_t s0 = b0 - p->halo > 0 ? b0 - p->halo : 0, s1 = b1 + p->halo < h ? b1 + p->halo : h;
    /* drop the field rows above the window, then paint down to its end */
    int64_t drop = s0 - p->win_y0;
    if (drop > 0) {
        size_t keep = (size_t)(p->win_n - drop) * (size_t)w;
        memmove(p->cls, p->cls + (size_t)drop * (size_t)w, keep);
        memmove(p->land, p->land + (size_t)drop * (size_t)w, keep);
        p->win_y0 += drop;
        p->win_n -= drop;
    }
    if (p->field_rows < s1) {
        s_coarse_prepare(&p->coast, p->field_rows, s1, p->pool);
        s_coarse_prepare(&p->bay, p->field_rows, s1, p->pool);
        s_coarse_prepare(&p->zone, p->field_rows, s1, p->pool);
        p->task_y0 = p->field_rows;
        tb_pool_run(p->pool, (size_t)(s1 - p->field_rows), s_field_task, p);
        p->win_n += s1 - p->field_rows;
        p->field_rows = s1;
    }
    if (tb_edt_squared(p->land, w, s1 - s0, true, p->threads, p->d2, err) != 0)
        return -1;
    s_coarse_prepare(&p->shelf, b0, b1, p->pool);
    p->task_y0 = b0;
    p->task_s0 = s0;
    tb_pool_run(p->pool, (size_t)(b1 - b0), s_shelf_task, p);
    p->out_y0 = b0;
    p->out_n = b1 - b0;
    p->out_next = b0;
    return 0;
}

static int s_painter_read(void *user, int64_t n, void *out, tb_err_t *err)
{
    tb_demo_painter_t *p = user;
    uint8_t *dst = out;
    const size_t row_bytes = (size_t)p->w * 3;
    if (p->out_next + n > p->h)
        return tb_err_set(err, TB_E_INTERNAL, "the demo painting: rows %lld..%lld of %lld",
                          (long long)p->out_next, (long long)(p->out_next + n - 1),
                          (long long)p->h);
    while (n > 0) {
        if (p->out_next == p->out_y0 + p->out_n && s_band(p, err) != 0)
            return -1;
        int64_t take = p->out_y0 + p->out_n - p->out_next;
        take = take < n ? take : n;
        memcpy(dst, p->out + (size_t)(p->out_next - p->out_y0) * row_bytes,
               (size_t)take * row_bytes);
        dst += (size_t)take * row_bytes;
        p->out_next += take;
        n -= take;
    }
    return 0;
}

tb_demo_painter_t *tb_demo_painter_new(uint64_t seed, const tb_manifest_t *m, int64_t w, int64_t h,
                                       int64_t band_rows, int threads, tb_err_t *err)
{
    if (w < 16 || h < 16 || w > INT32_MAX || h > INT32_MAX) {
        tb_err_set(err, TB_E_INVALID, "demo: a %lld x %lld planet is too small to paint",
                   (long long)w, (long long)h);
        return NULL;
    }
    if (m->legend.n_classes != S_NCLASSES) {
        tb_err_set(err, TB_E_INTERNAL, "demo: the legend is not the demo legend");
        return NULL;
    }
    tb_demo_painter_t *p = tb_calloc(1, sizeof *p, "demo painter", err);
    if (!p)
        return NULL;
    p->w = w;
    p->h = h;
    s_layout(seed, (double)w, (double)h, &p->layout);
    for (int k = 0; k < p->layout.n; k++)
        p->bounds[k] = s_blob_bounds(&p->layout.blobs[k], w, h);
    for (int c = 0; c < S_NCLASSES; c++)
        memcpy(p->rgb[c], m->legend.classes[c].rgb, 3);
    p->shelf_cells = 320.0 / m->cell_m;
    p->shelf_far2 = p->shelf_cells * p->shelf_cells * 1.35 * 1.35;
    /* the halo: land further than halo rows away is at a squared distance above shelf_far2 */
    p->halo = (int64_t)floor(sqrt(p->shelf_far2));
    while ((double)((p->halo + 1) * (p->halo + 1)) <= p->shelf_far2)
        p->halo++;
    p->band = band_rows > 0 ? band_rows : TB_DEMO_BAND_ROWS;
    p->cap = p->band + 2 * p->halo;
    p->cap = p->cap < h ? p->cap : h;
    size_t cells = (size_t)p->cap * (size_t)w;
    p->threads = threads < 1 ? 1 : threads;
    /* Samples at least four to the finest octave's wavelength. */
    if (s_coarse_init(&p->coast, seed, TB_SALT_DEMO_PAINTING, 1.6, 3, 8, w, h, m->cell_m, p->cap,
                      err) ||
        s_coarse_init(&p->bay, seed, TB_SALT_DEMO_BAYS, 3.2, 2, 16, w, h, m->cell_m, p->cap, err) ||
        s_coarse_init(&p->zone, seed, TB_SALT_DEMO_CLASSES, 2.0, 3, 12, w, h, m->cell_m, p->cap,
                      err) ||
        s_coarse_init(&p->shelf, seed, TB_SALT_DEMO_SHELF, 1.2, 2, 16, w, h, m->cell_m, p->cap,
                      err) ||
        !(p->pool = tb_pool_new(p->threads, err)))
        goto fail;
    p->cls = tb_malloc(cells, "demo classes", err);
    p->land = p->cls ? tb_malloc(cells, "demo land", err) : NULL;
    p->d2 = p->land ? tb_malloc(sizeof *p->d2 * cells, "demo coast distance", err) : NULL;
    p->best = p->d2 ? tb_malloc(sizeof *p->best * (size_t)w * (size_t)p->threads, "demo field", err)
                    : NULL;
    p->out = p->best ? tb_malloc((size_t)p->band * (size_t)w * 3, "demo band", err) : NULL;
    if (!p->out)
        goto fail;
    p->src = (tb_row_source_t){.w = w,
                               .h = h,
                               .format = TB_PNG_RGB8,
                               .name = "the demo painting",
                               .read = s_painter_read,
                               .user = p};
    return p;
fail:
    tb_demo_painter_destroy(&p);
    return NULL;
}

const tb_row_source_t *tb_demo_painter_rows(tb_demo_painter_t *self)
{
    return &self->src;
}

void tb_demo_painter_destroy(tb_demo_painter_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_demo_painter_t *p = *self_p;
    s_coarse_free(&p->coast);
    s_coarse_free(&p->bay);
    s_coarse_free(&p->zone);
    s_coarse_free(&p->shelf);
    tb_pool_destroy(&p->pool);
    free(p->cls);
    free(p->land);
    free(p->d2);
    free(p->best);
    free(p->out);
    free(p);
    *self_p = NULL;
}

/* The demo layout at w x h as a whole image (tb_demo_painter_new's rows, all of them). */
static int s_paint(uint64_t seed, const tb_manifest_t *m, int64_t w, int64_t h,
                   tb_image_t *painting, tb_err_t *err)
{
    memset(painting, 0, sizeof *painting);
    tb_demo_painter_t *p = tb_demo_painter_new(seed, m, w, h, 0, 2, err);
    if (!p)
        return -1;
    int rc = tb_row_source_to_image(tb_demo_painter_rows(p), painting, err);
    tb_demo_painter_destroy(&p);
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
    return s_paint(seed, m, m->planet_w, tb_demo_painting_h(m->planet_w), painting, err);
}

int64_t tb_demo_painting_h(int64_t planet_w)
{
    return (int64_t)llround(0.32 * (double)planet_w);
}
