/* Bathymetry as a field of the waterline's distance: a shelf, a continental slope, the painted
 * depth (docs/coast.md, "Bathymetry"). Typical sizes: the whole planet, 3 M to 76 M cells; the
 * invariant is that the floor depends on a cell's distance from land and its own class only, so it
 * is continuous across the X seam whenever the distance is (common/edt.h wraps). */
#include <math.h>

#include "jobs/coast/methods.h"

/* Shelf and slope profile (after the predecessor's coastal bathymetry, docs/coast.md).
 * Depth in metres below sea level at dist_m >= 0 from the waterline: a straight shelf from 0 m to
 * break_depth_m over shelf_km, then a straight continental slope from the break to painted_m over
 * slope_km, then painted_m. A sea painted shallower than the break stops at its own depth on the
 * shelf. Monotone non-decreasing in dist_m, continuous, and exactly painted_m from
 * shelf_km + slope_km out (from where the shelf reaches painted_m, for a shallow sea).
 * Deterministic: a pure function of its arguments. */
double tb_coast_shelf_slope_depth_m(const tb_coast_params_t *p, double dist_m, double painted_m)
{
    double shelf_m = p->shelf_km * 1000.0, slope_m = p->slope_km * 1000.0;
    double d = dist_m > 0 ? dist_m : 0;
    double depth;
    if (d <= shelf_m)
        depth = p->break_depth_m * (d / shelf_m);
    else {
        double t = (d - shelf_m) / slope_m;
        double below = painted_m > p->break_depth_m ? painted_m - p->break_depth_m : 0;
        depth = p->break_depth_m + below * (t < 1 ? t : 1);
    }
    return depth < painted_m ? depth : painted_m;
}

/* Bathymetry over the planet: every sea cell's height becomes minus the shelf-slope depth at its
 * distance from the waterline, with its class's painted depth; land keeps its height. kind[] is set
 * for every cell (land, sea shallower than shoal_depth_m, open sea). Units: metres; d2 in cells
 * squared (TB_EDT_FAR, no land anywhere, reads as far away). Deterministic and pointwise, so
 * rolling the planet rolls the floor exactly. */
typedef struct {
    const tb_coast_params_t *p;
    double cell_m;
    int64_t w;
    uint32_t far_d2;
    const uint8_t *land;
    const uint32_t *d2;
    const uint8_t *classes;
    const tb_coast_classes_t *legend;
    float *height_m;
    uint8_t *kind;
} s_bathy_t;

static void s_bathy_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_bathy_t *b = ctx;
    const uint8_t *land = b->land;
    const uint32_t *d2 = b->d2;
    for (size_t i = (size_t)y0 * (size_t)b->w; i < (size_t)y1 * (size_t)b->w; i++) {
        if (land[i]) {
            b->kind[i] = TB_COAST_LAND;
            continue;
        }
        double painted = b->legend->depth_m[b->classes[i]];
        double depth = d2[i] > b->far_d2
                           ? painted
                           : tb_coast_shelf_slope_depth_m(
                                 b->p, tb_coast_waterline_m(d2[i], b->cell_m), painted);
        b->height_m[i] = (float)-depth;
        b->kind[i] = depth < b->p->shoal_depth_m ? TB_COAST_SHALLOW : TB_COAST_OPEN;
    }
}

void tb_coast_bathymetry_shelf_slope(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                     int64_t w, int64_t h, const uint8_t *land, const uint32_t *d2,
                                     const uint8_t *classes, const tb_coast_classes_t *legend,
                                     float *height_m, uint8_t *kind)
{
    /* past shelf and slope every sea is at its painted depth: no square root out there */
    double far_cells = (p->shelf_km + p->slope_km) * 1000.0 / cell_m + 1.5;
    s_bathy_t b = {p,        cell_m, w,       (uint32_t)fmin(4e9, ceil(far_cells * far_cells)),
                   land,     d2,     classes, legend,
                   height_m, kind};
    tb_coast_par_rows(pool, h, s_bathy_rows, &b);
}
