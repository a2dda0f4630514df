/* Bathymetry as a field of the waterline's distance: a shelf, a continental slope, the painted
 * depth (docs/coast.md, "Bathymetry"). Typical sizes: the whole planet, 3 M to 76 M cells; the
 * invariant is that the floor depends on a cell's distance from land and its own class only, so it
 * is continuous across the X seam whenever the distance is (common/edt.h wraps). */
#include <math.h>
#include <stdlib.h>

#include "jobs/coast/methods.h"

/* Shelf and slope profile (after the predecessor's coastal bathymetry, docs/coast.md), continuous
 * in slope (C1) wherever the distance is, so the floor has no crease of its own:
 *   depth = break_depth_m u(d) + max(0, painted_m - break_depth_m) v(d),
 * with u the shelf's share, d / shelf up to a knee round the shelf break and 1 past it (a quadratic
 * over [shelf - k, shelf + k], k = min(shelf, slope) / 4, meeting both lines with their slopes),
 * and v the continental slope's share, 0 until shelf - k and 1 from shelf + slope on, a smoothstep
 * between (the slope is steepest half way down, as real continental slopes are). A sea painted
 * shallower than the break stops at its own depth by a smooth minimum that is exact (the painted
 * depth itself) where the shelf is more than a tenth of that depth below it. Monotone
 * non-decreasing in dist_m, exactly painted_m from shelf_km + slope_km out. Deterministic: a pure
 * function of its arguments. Where the old profile bent (the break, the foot of the slope, a
 * shallow sea's flat) the hillshade showed a line along the whole coast; now none does. */
static void s_shares(const tb_coast_params_t *p, double dist_m, double *u, double *v)
{
    double S = p->shelf_km * 1000.0, L = p->slope_km * 1000.0;
    double k = (S < L ? S : L) / 4, d = dist_m > 0 ? dist_m : 0;
    if (d <= S - k)
        *u = d / S;
    else if (d < S + k)
        *u = 1 - (S + k - d) * (S + k - d) / (4 * k * S);
    else
        *u = 1;
    double t = (d - (S - k)) / (L + k);
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    *v = t * t * (3 - 2 * t);
}

/* The smooth minimum of a and the painted depth D below the break B (a quadratic blend within
 * kk = min(D / 10, B - D) of it; exactly min(a, D) beyond, so exactly D where the shelf has reached
 * the break). */
static double s_cap(double a, double D, double B)
{
    double kk = 0.1 * D < B - D ? 0.1 * D : B - D, gap = D - a;
    if (gap >= kk || kk <= 0)
        return a < D ? a : D;
    if (gap <= -kk)
        return D;
    double h = (kk - (gap < 0 ? -gap : gap)) / kk;
    return (a < D ? a : D) - h * h * kk / 4;
}

static double s_depth(double break_m, double painted, double below, double u, double v)
{
    double depth = break_m * u + below * v;
    return painted < break_m ? s_cap(depth, painted, break_m) : depth;
}

double tb_coast_shelf_slope_depth_m(const tb_coast_params_t *p, double dist_m, double painted_m)
{
    double u, v;
    s_shares(p, dist_m, &u, &v);
    double below = painted_m > p->break_depth_m ? painted_m - p->break_depth_m : 0;
    return s_depth(p->break_depth_m, painted_m, below, u, v);
}

/* Bathymetry over the planet: every sea cell's height becomes minus the shelf-slope depth at its
 * distance from the waterline, with its class's painted depth; land keeps its height. kind[] is set
 * for every cell (land, sea shallower than shoal_depth_m, open sea). Units: metres; d2 in cells
 * squared (TB_EDT_FAR, no land anywhere, reads as far away). Deterministic and pointwise, so
 * rolling the planet rolls the floor exactly.
 *
 * The profile's distance part (u, v) is a pure function of d2, so it is tabulated for the d2 below
 * S_TABLE_N, two doubles an entry in `table`. A cell then finishes with its class's painted depth
 * by the same operations tb_coast_shelf_slope_depth_m does after them: the same bits without a
 * square root or a division. Most sea cells are on the shelf, where v is 0 and the depth is above
 * their painted depth's blend, so the height and the kind are functions of d2 alone: those are
 * tabulated too, and a class takes them for every d2 below the first entry where that fails
 * (fast_d2). */
#define S_TABLE_N ((uint32_t)1 << 16) /* d2 within 256 cells: 1 MB of (u, v) */

void tb_coast_bathymetry_init(tb_coast_bathy_t *b, const tb_coast_params_t *p, double cell_m,
                              int64_t w, const uint8_t *classes, const tb_coast_classes_t *legend,
                              float *height_m, uint8_t *kind)
{
    /* past shelf and slope every sea is at its painted depth: no square root out there */
    double far_cells = (p->shelf_km + p->slope_km) * 1000.0 / cell_m + 1.5;
    *b = (tb_coast_bathy_t){.p = p,
                            .cell_m = cell_m,
                            .w = w,
                            .far_d2 = (uint32_t)fmin(4e9, ceil(far_cells * far_cells)),
                            .classes = classes,
                            .height_m = height_m,
                            .kind = kind};
    for (int c = 0; c < legend->n && c < TB_MAX_CLASSES; c++) {
        double painted = legend->depth_m[c];
        b->painted_m[c] = painted;
        b->below_m[c] = painted > p->break_depth_m ? painted - p->break_depth_m : 0;
    }
    b->table_n = b->far_d2 < S_TABLE_N - 1 ? b->far_d2 + 1 : S_TABLE_N;
    b->table = malloc(2 * (size_t)b->table_n * sizeof *b->table);
    b->height_table = malloc(b->table_n * sizeof *b->height_table);
    b->kind_table = malloc(b->table_n);
    if (!b->table || !b->height_table || !b->kind_table) { /* the same bits, slower */
        tb_coast_bathymetry_free(b);
        b->table_n = 0;
        return;
    }
    for (uint32_t d2 = 0; d2 < b->table_n; d2++) {
        double u, v;
        s_shares(p, tb_coast_waterline_m(d2, cell_m), &u, &v);
        b->table[2 * d2] = u;
        b->table[2 * d2 + 1] = v;
        double depth = p->break_depth_m * u + 0.0 * v; /* the shelf part, as s_depth makes it */
        b->height_table[d2] = (float)-depth;
        b->kind_table[d2] = depth < p->shoal_depth_m ? TB_COAST_SHALLOW : TB_COAST_OPEN;
    }
    /* "v is 0 and the shelf's depth is clear of the painted depth's blend" holds for a prefix of d2
     * (u rises with d2, v is 0 and then positive): the first d2 where it fails, by bisection */
    for (int c = 0; c < legend->n && c < TB_MAX_CLASSES; c++) {
        double painted = b->painted_m[c], B = p->break_depth_m;
        double clear = painted < B
                           ? painted - (0.1 * painted < B - painted ? 0.1 * painted : B - painted)
                           : 1e300;
        uint32_t lo = 0, hi = legend->ocean[c] ? b->table_n : 0;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            double u = b->table[2 * mid], v = b->table[2 * mid + 1];
            if (v == 0 && p->break_depth_m * u <= clear && p->break_depth_m * u <= painted)
                lo = mid + 1;
            else
                hi = mid;
        }
        b->fast_d2[c] = lo;
    }
}

void tb_coast_bathymetry_free(tb_coast_bathy_t *b)
{
    free(b->table);
    free(b->height_table);
    free(b->kind_table);
    b->table = NULL;
    b->height_table = NULL;
    b->kind_table = NULL;
}

void tb_coast_bathymetry_row(const tb_coast_bathy_t *b, int64_t y, const uint32_t *d2)
{
    const size_t row = (size_t)y * (size_t)b->w;
    const uint8_t *cls = b->classes + row;
    uint8_t *kind = b->kind + row;
    float *height_m = b->height_m + row;
    const double *table = b->table, *painted_m = b->painted_m, *below_m = b->below_m;
    const double break_m = b->p->break_depth_m, shoal_m = b->p->shoal_depth_m;
    const uint32_t table_n = b->table_n, far_d2 = b->far_d2;
    const int64_t w = b->w;
    const float *height_table = b->height_table;
    const uint8_t *kind_table = b->kind_table;
    const uint32_t *fast_d2 = b->fast_d2;
    for (int64_t x = 0; x < w; x++) {
        if (kind[x]) { /* the land mask, rewritten as kinds */
            kind[x] = TB_COAST_LAND;
            continue;
        }
        if (d2[x] < fast_d2[cls[x]]) {
            height_m[x] = height_table[d2[x]];
            kind[x] = kind_table[d2[x]];
            continue;
        }
        double painted = painted_m[cls[x]], depth;
        if (d2[x] < table_n)
            depth =
                s_depth(break_m, painted, below_m[cls[x]], table[2 * d2[x]], table[2 * d2[x] + 1]);
        else
            depth = d2[x] > far_d2 ? painted
                                   : tb_coast_shelf_slope_depth_m(
                                         b->p, tb_coast_waterline_m(d2[x], b->cell_m), painted);
        height_m[x] = (float)-depth;
        kind[x] = depth < shoal_m ? TB_COAST_SHALLOW : TB_COAST_OPEN;
    }
}

typedef struct {
    const tb_coast_bathy_t *b;
    const uint8_t *land;
    const uint32_t *d2;
} s_bathy_t;

static void s_bathy_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_bathy_t *c = ctx;
    const int64_t w = c->b->w;
    for (int64_t y = y0; y < y1; y++) {
        if (c->land != c->b->kind) /* the row's land mask into kind[], where the row reads it */
            for (int64_t x = 0; x < w; x++)
                c->b->kind[y * w + x] = c->land[y * w + x] != 0;
        tb_coast_bathymetry_row(c->b, y, c->d2 + (size_t)y * (size_t)w);
    }
}

void tb_coast_bathymetry_shelf_slope(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                     int64_t w, int64_t h, const uint8_t *land, const uint32_t *d2,
                                     const uint8_t *classes, const tb_coast_classes_t *legend,
                                     float *height_m, uint8_t *kind)
{
    tb_coast_bathy_t b;
    tb_coast_bathymetry_init(&b, p, cell_m, w, classes, legend, height_m, kind);
    s_bathy_t c = {&b, land, d2};
    tb_coast_par_rows(pool, h, s_bathy_rows, &c);
    tb_coast_bathymetry_free(&b);
}
