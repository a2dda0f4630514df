/* Landmass labelling, the minimum-size drop and circular arcs; see landmasses.h. Everything is
 * accumulated per run in raster order, so the sums (and the centroids) have one fixed order. */
#include "jobs/plan/landmasses.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"

static const double S_TWO_PI = 6.283185307179586;

/* ---- arcs ---- */

static int s_cmp_arc(const void *a, const void *b)
{
    const tb_arc_t *p = a, *q = b;
    if (p->x0 != q->x0)
        return p->x0 < q->x0 ? -1 : 1;
    return (p->w > q->w) - (p->w < q->w);
}

tb_arc_t tb_arc_cover(tb_arc_t *arcs, int64_t n, int64_t W)
{
    if (n <= 0)
        return (tb_arc_t){0, 0};
    for (int64_t k = 0; k < n; k++)
        if (arcs[k].w >= W)
            return (tb_arc_t){0, W};
    /* Sweep the arcs in order of first column, keeping the end of the covered stretch; every start
     * past it opens a gap. Arcs that wrap (end past W) also cover [0, end - W): the sweep starts
     * with that stretch covered. Otherwise the stretch before the first arc belongs to the closing
     * gap, from the last covered column round the seam to the first. */
    qsort(arcs, (size_t)n, sizeof *arcs, s_cmp_arc);
    int64_t wrap_end = 0; /* columns [0, wrap_end) are covered by arcs that wrap */
    for (int64_t k = 0; k < n; k++)
        if (arcs[k].x0 + arcs[k].w > W && arcs[k].x0 + arcs[k].w - W > wrap_end)
            wrap_end = arcs[k].x0 + arcs[k].w - W;
    int64_t best_start = 0, best_len = 0;
    int64_t cur_end = wrap_end; /* covered up to here */
    bool any = wrap_end > 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t s = arcs[k].x0, e = arcs[k].x0 + arcs[k].w;
        if (!any) {
            /* the first interval: the stretch before it is part of the closing gap */
            cur_end = e;
            any = true;
            continue;
        }
        if (s > cur_end && s - cur_end > best_len) {
            best_start = cur_end;
            best_len = s - cur_end;
        }
        if (e > cur_end)
            cur_end = e;
    }
    /* The closing gap: from the covered end round to the first covered column. */
    int64_t first = wrap_end > 0 ? 0 : arcs[0].x0;
    if (cur_end < W + first) {
        int64_t len = W + first - cur_end;
        if (len > best_len) {
            best_start = cur_end;
            best_len = len;
        }
    }
    if (best_len <= 0)
        return (tb_arc_t){0, W};
    return (tb_arc_t){tb_wrap(best_start + best_len, W), W - best_len};
}

void tb_landmass_centroid(double sum_cos, double sum_sin, double sum_y, int64_t cells, int64_t W,
                          double *x, double *y)
{
    double angle = atan2(sum_sin, sum_cos);
    double cx = angle / S_TWO_PI * (double)W;
    if (cx < 0)
        cx += (double)W;
    if (cx >= (double)W)
        cx = 0;
    *x = cx;
    *y = cells ? sum_y / (double)cells : 0;
}

/* ---- landmasses ---- */

static int s_cmp_landmass(const void *a, const void *b)
{
    const tb_landmass_t *p = a, *q = b;
    int64_t py = (int64_t)floor(p->centroid_y), qy = (int64_t)floor(q->centroid_y);
    if (py != qy)
        return py < qy ? -1 : 1;
    int64_t px = (int64_t)floor(p->centroid_x), qx = (int64_t)floor(q->centroid_x);
    if (px != qx)
        return px < qx ? -1 : 1;
    return (p->first_index > q->first_index) - (p->first_index < q->first_index);
}

/* The ocean class most common along the edge of a dropped component (ties to the lower index). */
static uint8_t s_edge_ocean(const uint8_t *classes, const tb_ccl_t *ccl, int64_t comp,
                            const tb_legend_t *legend, const uint8_t *is_land)
{
    int64_t counts[TB_MAX_CLASSES] = {0};
    int64_t w = ccl->w;
    for (int64_t r = ccl->comp_start[comp]; r < ccl->comp_start[comp + 1]; r++) {
        const tb_run_t *run = &ccl->runs[ccl->comp_runs[r]];
        for (int dy = -1; dy <= 1; dy++) {
            int64_t y = run->y + dy;
            if (y < 0 || y >= ccl->h)
                continue;
            for (int64_t x = run->x0 - 1; x <= run->x1 + 1; x++) {
                if (dy == 0 && x >= run->x0 && x <= run->x1)
                    continue;
                if ((x < 0 || x >= w) && !ccl->wrap_x)
                    continue;
                uint8_t c = classes[tb_idx(w, tb_wrap(x, w), y)];
                if (c < legend->n_classes && !is_land[c])
                    counts[c]++;
            }
        }
    }
    int best = -1;
    for (int c = 0; c < legend->n_classes; c++)
        if (!is_land[c] && (best < 0 || counts[c] > counts[best]))
            best = c;
    return (uint8_t)best;
}

/* Sums of cos and sin of the column angle over columns [0, x): prefix tables of W + 1. */
static int s_angle_tables(int64_t W, double **cos_out, double **sin_out, tb_err_t *err)
{
    double *c = tb_malloc(sizeof *c * (size_t)(W + 1), "angle table", err);
    double *s = c ? tb_malloc(sizeof *s * (size_t)(W + 1), "angle table", err) : NULL;
    if (!s) {
        free(c);
        return -1;
    }
    c[0] = s[0] = 0;
    for (int64_t x = 0; x < W; x++) {
        double a = S_TWO_PI * ((double)x + 0.5) / (double)W;
        c[x + 1] = c[x] + cos(a);
        s[x + 1] = s[x] + sin(a);
    }
    *cos_out = c;
    *sin_out = s;
    return 0;
}

/* The arc of a component that touches both seam columns, from its runs. */
static int s_seam_arc(const tb_ccl_t *ccl, int64_t comp, tb_arc_t *out, tb_err_t *err)
{
    int64_t n = ccl->comp_start[comp + 1] - ccl->comp_start[comp];
    tb_arc_t *arcs = tb_malloc(sizeof *arcs * (size_t)n, "landmass arcs", err);
    if (!arcs)
        return -1;
    for (int64_t k = 0; k < n; k++) {
        const tb_run_t *run = &ccl->runs[ccl->comp_runs[ccl->comp_start[comp] + k]];
        arcs[k] = (tb_arc_t){run->x0, run->x1 - run->x0 + 1};
    }
    *out = tb_arc_cover(arcs, n, ccl->w);
    free(arcs);
    return 0;
}

int tb_landmasses_find(uint8_t *classes, int64_t w, int64_t h, const tb_legend_t *legend,
                       double cell_m, double min_area_km2, tb_landmasses_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    uint8_t is_land[256] = {0};
    bool any_ocean = false;
    for (int c = 0; c < legend->n_classes; c++) {
        is_land[c] = legend->classes[c].kind == TB_CLASS_LAND;
        any_ocean |= !is_land[c];
    }
    if (!any_ocean)
        return tb_err_set(err, TB_E_INVALID, "landmasses: the legend has no ocean class");
    if (tb_ccl_label(classes, w, h, true, is_land, &out->ccl, err) != 0)
        return -1;
    const tb_ccl_t *ccl = &out->ccl;
    int64_t nc = ccl->n_components;
    double *cos_sum = NULL, *sin_sum = NULL;
    tb_landmass_t *all = tb_calloc((size_t)(nc ? nc : 1), sizeof *all, "landmasses", err);
    out->comp_id = tb_calloc((size_t)(nc ? nc : 1), sizeof *out->comp_id, "landmass ids", err);
    if (!all || !out->comp_id || s_angle_tables(w, &cos_sum, &sin_sum, err) != 0)
        goto fail;
    const double cell_km2 = cell_m * cell_m * 1e-6;
    out->found = nc;
    int kept = 0;
    for (int64_t c = 0; c < nc; c++) {
        tb_landmass_t *lm = &all[c];
        int64_t r0 = ccl->comp_start[c], r1 = ccl->comp_start[c + 1];
        int64_t xmin = w, xmax = -1;
        bool at_first = false, at_last = false;
        lm->comp = (int)c;
        lm->y0 = ccl->runs[ccl->comp_runs[r0]].y;
        lm->y1 = ccl->runs[ccl->comp_runs[r1 - 1]].y;
        lm->first_index = (int64_t)tb_idx(w, ccl->runs[ccl->comp_runs[r0]].x0, lm->y0);
        for (int64_t r = r0; r < r1; r++) {
            const tb_run_t *run = &ccl->runs[ccl->comp_runs[r]];
            int64_t len = run->x1 - run->x0 + 1;
            lm->cells += len;
            lm->sum_cos += cos_sum[run->x1 + 1] - cos_sum[run->x0];
            lm->sum_sin += sin_sum[run->x1 + 1] - sin_sum[run->x0];
            lm->sum_y += (double)len * ((double)run->y + 0.5);
            xmin = run->x0 < xmin ? run->x0 : xmin;
            xmax = run->x1 > xmax ? run->x1 : xmax;
            at_first |= run->x0 == 0;
            at_last |= run->x1 == w - 1;
        }
        if ((double)lm->cells * cell_km2 < min_area_km2) {
            uint8_t ocean = s_edge_ocean(classes, ccl, c, legend, is_land);
            for (int64_t r = r0; r < r1; r++) {
                const tb_run_t *run = &ccl->runs[ccl->comp_runs[r]];
                memset(classes + tb_idx(w, run->x0, run->y), ocean,
                       (size_t)(run->x1 - run->x0 + 1));
            }
            out->dropped++;
            out->dropped_cells += lm->cells;
            continue;
        }
        if (at_first && at_last) {
            if (s_seam_arc(ccl, c, &lm->arc, err) != 0)
                goto fail;
        } else {
            lm->arc = (tb_arc_t){xmin, xmax - xmin + 1};
        }
        tb_landmass_centroid(lm->sum_cos, lm->sum_sin, lm->sum_y, lm->cells, w, &lm->centroid_x,
                             &lm->centroid_y);
        all[kept++] = *lm;
    }
    out->dropped_area_km2 = (double)out->dropped_cells * cell_km2;
    qsort(all, (size_t)kept, sizeof *all, s_cmp_landmass);
    for (int k = 0; k < kept; k++)
        out->comp_id[all[k].comp] = k + 1;
    out->n = kept;
    out->kept = all;
    free(cos_sum);
    free(sin_sum);
    return 0;
fail:
    free(all);
    free(cos_sum);
    free(sin_sum);
    tb_landmasses_free(out);
    return -1;
}

void tb_landmasses_free(tb_landmasses_t *lm)
{
    if (!lm)
        return;
    tb_ccl_free(&lm->ccl);
    free(lm->kept);
    free(lm->comp_id);
    memset(lm, 0, sizeof *lm);
}
