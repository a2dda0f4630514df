/* The streamed plan (docs/plan.md, "The streamed plan") against the whole-array reference
 * (the reference below) on small planets cut into many bands: every number of the summary,
 * the landmasses, the regions and the class table bit for bit, and both rasters cell for cell -
 * with landmasses across band edges, across the seam, touching the Y edges, a U whose arms meet
 * only many bands later, a comb, many tiny dropped ones, unmatched pixels to fill, speckle, a
 * coarse painting, a ring round the planet and random coasts. Then the memory bound: rasters
 * whose rows fault in when touched and are protected again when released, so the test sees every
 * row the plan holds at once; and the negative controls that show the comparison and the bound
 * can fail. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/edt.h"
#include "common/grid.h"
#include "common/hash.h"
#include "common/png_rows.h"
#include "jobs/plan/plan.h"
#include "support/plan_fixtures.h"
#include "support/tb_test.h"

/* ---- the reference: the plan computed the plain way, over whole arrays ----
 *
 * It holds the painting, the class raster and the label raster whole and does each step of
 * docs/plan.md as it reads, with nothing clever: nearest colour per pixel, the fill in global
 * rounds, the despeckle on a copy, landmasses by flood fill, their sums run by run in raster order,
 * the dilation of the whole mask (common/edt.h) and a flood fill of it. Only the arithmetic that
 * defines the answer is shared with jobs/plan (the arc cover, the class angles, the centroid): the
 * order of every floating-point sum is the plan's definition, written out again here. It lives in
 * this suite, its only user, rather than in tests/support/, whose files every test links: it would
 * pull the plan and common/edt.c into all of them (and edt.c's target_clones resolver crashes the
 * ThreadSanitizer builds of test_pool and test_threads at load). Written for plainness, not speed:
 * test planets are a few hundred thousand cells. */

typedef struct {
    tb_plan_summary_t summary;
    tb_landmasses_t landmasses; /* kept[], numbered */
    tb_regions_t regions;
    int n_class_rows;
    tb_plan_class_row_t class_rows[TB_MAX_CLASSES];
    int64_t land_total, ocean_total;
    uint8_t *classes; /* planet_w x planet_h, after the drop */
    int32_t *labels;
} ref_plan_t;

/* The reference plan of a painting (RGB8) under a finished manifest. 0, or -1 with *err for a
 * painting refused (too many unmatched pixels: the same message as the plan's) or no memory;
 * *out is filled as far as it got and freed with ref_plan_free either way. */
static int ref_plan(const tb_manifest_t *m, const tb_image_t *painting, ref_plan_t *out,
                    tb_err_t *err);

static void ref_plan_free(ref_plan_t *r);

/* Compares a plan with the reference: the summary, every landmass and region, the class table (all
 * numbers bit for bit) and both rasters cell for cell. NULL when they agree, else a description of
 * the first difference in buf. */
static const char *ref_plan_compare(const ref_plan_t *ref, const tb_plan_t *p, char *buf, size_t n);

static const double S_TWO_PI = 6.283185307179586;

static bool s_land(const tb_legend_t *l, uint8_t c)
{
    return c < l->n_classes && l->classes[c].kind == TB_CLASS_LAND;
}

/* ---- classification ---- */

static uint8_t s_nearest(const tb_legend_t *legend, const uint8_t *px)
{
    int best = -1;
    double best_d2 = 0;
    for (int c = 0; c < legend->n_classes; c++) {
        const uint8_t *k = legend->classes[c].rgb;
        double dr = (double)px[0] - k[0], dg = (double)px[1] - k[1], db = (double)px[2] - k[2];
        double d2 = dr * dr + dg * dg + db * db;
        if (best < 0 || d2 < best_d2) {
            best = c;
            best_d2 = d2;
        }
    }
    return best >= 0 && best_d2 <= legend->tolerance * legend->tolerance ? (uint8_t)best
                                                                         : TB_CLASS_NONE;
}

/* Most common class among vals (TB_CLASS_NONE ignored), ties to the lower index. */
static uint8_t s_mode(const uint8_t *vals, int n)
{
    int counts[256] = {0}, best = -1;
    for (int k = 0; k < n; k++)
        if (vals[k] < TB_MAX_CLASSES)
            counts[vals[k]]++;
    for (int c = 0; c < TB_MAX_CLASSES; c++)
        if (counts[c] && (best < 0 || counts[c] > counts[best]))
            best = c;
    return best < 0 ? TB_CLASS_NONE : (uint8_t)best;
}

/* The values of the neighbours of (i, j) that exist, X wrapping. */
static int s_neighbours(const uint8_t *c, int64_t w, int64_t h, int64_t i, int64_t j,
                        uint8_t vals[8])
{
    int n = 0;
    for (int k = 0; k < 8; k++) {
        int64_t y = j + tb_nb_dy[k];
        if (y >= 0 && y < h)
            vals[n++] = c[tb_idx(w, tb_wrap(i + tb_nb_dx[k], w), y)];
    }
    return n;
}

typedef struct {
    uint32_t colour;
    int64_t index;
} s_px_t;

static int s_cmp_px(const void *a, const void *b)
{
    const s_px_t *p = a, *q = b;
    if (p->colour != q->colour)
        return p->colour < q->colour ? -1 : 1;
    return (p->index > q->index) - (p->index < q->index);
}

/* Unmatched colours: counted, and the five most common (ties to the earlier first pixel). */
static void s_top_colours(const s_px_t *px, int64_t n, int64_t w, tb_classify_report_t *rep)
{
    s_px_t *sorted = malloc(sizeof *sorted * (size_t)(n ? n : 1));
    memcpy(sorted, px, sizeof *px * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, s_cmp_px);
    tb_classify_colour_t *all = malloc(sizeof *all * (size_t)(n ? n : 1));
    int64_t n_col = 0;
    for (int64_t k = 0; k < n;) {
        int64_t e = k;
        while (e < n && sorted[e].colour == sorted[k].colour)
            e++;
        uint32_t c = sorted[k].colour;
        all[n_col++] = (tb_classify_colour_t){{(uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c},
                                              e - k,
                                              sorted[k].index % w,
                                              sorted[k].index / w};
        k = e;
    }
    rep->unmatched_colours = n_col;
    for (int t = 0; t < TB_CLASSIFY_TOP_COLOURS && t < n_col; t++) {
        int64_t best = -1;
        for (int64_t k = 0; k < n_col; k++) {
            if (all[k].pixels <= 0)
                continue;
            int64_t bi = best < 0 ? 0 : all[best].example_y * w + all[best].example_x;
            int64_t ki = all[k].example_y * w + all[k].example_x;
            if (best < 0 || all[k].pixels > all[best].pixels ||
                (all[k].pixels == all[best].pixels && ki < bi))
                best = k;
        }
        rep->top[rep->n_top++] = all[best];
        all[best].pixels = 0;
    }
    free(sorted);
    free(all);
}

/* Classifies the painting at its own resolution into c (pw x ph). */
static int s_classify(const tb_manifest_t *m, const tb_image_t *img, uint8_t *c,
                      tb_classify_report_t *rep, tb_err_t *err)
{
    const tb_legend_t *l = &m->legend;
    const int64_t w = img->w, h = img->h, n = w * h;
    const uint8_t *px = img->pixels;
    s_px_t *un = malloc(sizeof *un * (size_t)n);
    int64_t n_un = 0;
    for (int64_t k = 0; k < n; k++) {
        c[k] = s_nearest(l, px + 3 * k);
        if (c[k] == TB_CLASS_NONE)
            un[n_un++] = (s_px_t){
                (uint32_t)px[3 * k] << 16 | (uint32_t)px[3 * k + 1] << 8 | px[3 * k + 2], k};
    }
    rep->pixels = n;
    rep->unmatched_pixels = n_un;
    rep->unmatched_fraction = (double)n_un / (double)n;
    if (n_un)
        s_top_colours(un, n_un, w, rep);
    free(un);
    /* (the plan's refusals are its own tests'; the reference only says it would refuse) */
    if (rep->unmatched_fraction > l->max_unmatched_fraction)
        return tb_err_set(err, TB_E_INVALID, "reference: too many unmatched pixels");
    /* the fill: rounds over the whole painting, each decided on the state before it */
    uint8_t *next = malloc((size_t)n);
    for (int64_t pending = n_un; pending > 0;) {
        memcpy(next, c, (size_t)n);
        int64_t filled = 0;
        for (int64_t k = 0; k < n; k++) {
            if (c[k] != TB_CLASS_NONE)
                continue;
            uint8_t vals[8];
            next[k] = s_mode(vals, s_neighbours(c, w, h, k % w, k / w, vals));
            filled += next[k] != TB_CLASS_NONE;
        }
        if (!filled) {
            free(next);
            return tb_err_set(err, TB_E_INVALID, "reference: nothing to fill from");
        }
        memcpy(c, next, (size_t)n);
        pending -= filled;
        rep->fill_rounds++;
    }
    /* the despeckle: every cell decided on the filled painting */
    memcpy(next, c, (size_t)n);
    for (int64_t k = 0; k < n; k++) {
        uint8_t vals[8];
        int nv = s_neighbours(next, w, h, k % w, k / w, vals), same = 0;
        for (int q = 0; q < nv; q++)
            same |= vals[q] == next[k];
        if (!same && nv) {
            c[k] = s_mode(vals, nv);
            rep->speckle_pixels++;
        }
    }
    free(next);
    return 0;
}

/* ---- components ---- */

/* 8-connected flood fill of mask, X wrapping: comp per cell (-1 off the mask), numbered in raster
 * order of first cells; returns the count. */
static int64_t s_flood(const uint8_t *mask, int64_t w, int64_t h, int32_t *comp)
{
    int64_t n = 0, *stack = malloc(sizeof *stack * (size_t)(w * h));
    for (int64_t k = 0; k < w * h; k++)
        comp[k] = -1;
    for (int64_t k = 0; k < w * h; k++) {
        if (!mask[k] || comp[k] >= 0)
            continue;
        int64_t top = 0;
        stack[top++] = k;
        comp[k] = (int32_t)n;
        while (top) {
            int64_t c = stack[--top], x = c % w, y = c / w;
            for (int d = 0; d < 8; d++) {
                int64_t ny = y + tb_nb_dy[d];
                if (ny < 0 || ny >= h)
                    continue;
                int64_t q = tb_idx(w, tb_wrap(x + tb_nb_dx[d], w), ny);
                if (mask[q] && comp[q] < 0) {
                    comp[q] = (int32_t)n;
                    stack[top++] = q;
                }
            }
        }
        n++;
    }
    free(stack);
    return n;
}

static int s_cmp_lm(const void *a, const void *b)
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

typedef struct {
    int64_t cells, first, y0, y1, xmin, xmax;
    bool at_first, at_last;
    double sum_cos, sum_sin, sum_y;
    int64_t edge[TB_MAX_CLASSES];
    int64_t class_cells[TB_MAX_CLASSES];
    tb_arc_t *arcs; /* of its runs */
    int64_t n_arcs;
} s_comp_t;

/* Landmasses: components, their sums run by run in raster order, the drop, the ids, the labels. */
static void s_landmasses(const tb_manifest_t *m, int64_t W, int64_t H, ref_plan_t *r)
{
    const tb_legend_t *l = &m->legend;
    uint8_t *c = r->classes, *mask = malloc((size_t)(W * H));
    int32_t *comp = malloc(sizeof *comp * (size_t)(W * H));
    for (int64_t k = 0; k < W * H; k++)
        mask[k] = s_land(l, c[k]);
    int64_t nc = s_flood(mask, W, H, comp);
    s_comp_t *cs = calloc((size_t)(nc ? nc : 1), sizeof *cs);
    for (int64_t k = 0; k < nc; k++)
        cs[k].first = -1;
    double *cos_sum = malloc(sizeof *cos_sum * (size_t)(W + 1));
    double *sin_sum = malloc(sizeof *sin_sum * (size_t)(W + 1));
    cos_sum[0] = sin_sum[0] = 0;
    for (int64_t x = 0; x < W; x++) {
        double a = S_TWO_PI * ((double)x + 0.5) / (double)W;
        cos_sum[x + 1] = cos_sum[x] + cos(a);
        sin_sum[x + 1] = sin_sum[x] + sin(a);
    }
    /* runs in raster order: a run is a maximal stretch of land in a row, in one component */
    for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W;) {
            if (!mask[y * W + x]) {
                x++;
                continue;
            }
            int64_t x0 = x;
            while (x < W && mask[y * W + x])
                x++;
            int64_t x1 = x - 1;
            s_comp_t *s = &cs[comp[y * W + x0]];
            int64_t len = x1 - x0 + 1;
            if (s->first < 0) {
                s->first = y * W + x0;
                s->y0 = y;
                s->xmin = x0;
                s->xmax = x1;
            }
            s->y1 = y;
            s->xmin = x0 < s->xmin ? x0 : s->xmin;
            s->xmax = x1 > s->xmax ? x1 : s->xmax;
            s->at_first |= x0 == 0;
            s->at_last |= x1 == W - 1;
            s->cells += len;
            s->sum_cos += cos_sum[x1 + 1] - cos_sum[x0];
            s->sum_sin += sin_sum[x1 + 1] - sin_sum[x0];
            s->sum_y += (double)len * ((double)y + 0.5);
            s->arcs = realloc(s->arcs, sizeof *s->arcs * (size_t)(s->n_arcs + 1));
            s->arcs[s->n_arcs++] = (tb_arc_t){x0, len};
            for (int dy = -1; dy <= 1; dy++) {
                int64_t yy = y + dy;
                if (yy < 0 || yy >= H)
                    continue;
                for (int64_t xx = x0 - 1; xx <= x1 + 1; xx++) {
                    if (dy == 0 && xx >= x0 && xx <= x1)
                        continue;
                    uint8_t v = c[yy * W + tb_wrap(xx, W)];
                    if (v < l->n_classes && !s_land(l, v))
                        s->edge[v]++;
                }
            }
        }
    const double cell_km2 = m->cell_m * m->cell_m * 1e-6;
    tb_landmass_t *kept = calloc((size_t)(nc ? nc : 1), sizeof *kept);
    int n = 0;
    r->landmasses.found = nc;
    uint8_t *ocean_of = malloc((size_t)(nc ? nc : 1));
    for (int64_t k = 0; k < nc; k++) {
        s_comp_t *s = &cs[k];
        ocean_of[k] = TB_CLASS_NONE;
        if ((double)s->cells * cell_km2 < m->regions.min_landmass_km2) {
            int best = -1;
            for (int q = 0; q < l->n_classes; q++)
                if (!s_land(l, (uint8_t)q) && (best < 0 || s->edge[q] > s->edge[best]))
                    best = q;
            ocean_of[k] = (uint8_t)best;
            r->landmasses.dropped++;
            r->landmasses.dropped_cells += s->cells;
            continue;
        }
        tb_landmass_t *lm = &kept[n++];
        lm->comp = (int)k;
        lm->cells = s->cells;
        lm->y0 = s->y0;
        lm->y1 = s->y1;
        lm->first_index = s->first;
        lm->sum_cos = s->sum_cos;
        lm->sum_sin = s->sum_sin;
        lm->sum_y = s->sum_y;
        lm->arc = s->at_first && s->at_last ? tb_arc_cover(s->arcs, s->n_arcs, W)
                                            : (tb_arc_t){s->xmin, s->xmax - s->xmin + 1};
        tb_landmass_centroid(lm->sum_cos, lm->sum_sin, lm->sum_y, lm->cells, W, &lm->centroid_x,
                             &lm->centroid_y);
    }
    r->landmasses.dropped_area_km2 = (double)r->landmasses.dropped_cells * cell_km2;
    qsort(kept, (size_t)n, sizeof *kept, s_cmp_lm);
    int32_t *id_of = calloc((size_t)(nc ? nc : 1), sizeof *id_of);
    for (int k = 0; k < n; k++)
        id_of[kept[k].comp] = k + 1;
    r->landmasses.n = n;
    r->landmasses.kept = kept;
    for (int64_t k = 0; k < W * H; k++) {
        r->labels[k] = 0;
        if (comp[k] < 0)
            continue;
        if (ocean_of[comp[k]] != TB_CLASS_NONE)
            c[k] = ocean_of[comp[k]];
        else
            r->labels[k] = id_of[comp[k]];
    }
    /* class cells of each landmass, after the drop (which leaves kept land alone) */
    for (int64_t k = 0; k < W * H; k++)
        if (r->labels[k] > 0)
            kept[r->labels[k] - 1].class_cells[c[k] < TB_MAX_CLASSES ? c[k] : 0]++;
    for (int64_t k = 0; k < nc; k++)
        free(cs[k].arcs);
    free(cs);
    free(cos_sum);
    free(sin_sum);
    free(ocean_of);
    free(id_of);
    free(mask);
    free(comp);
}

/* ---- regions ---- */

typedef struct {
    int comp;
    double sum_cos, sum_sin, sum_y, cx, cy;
    int64_t cells, first;
} s_group_t;

static int s_cmp_group(const void *a, const void *b)
{
    const s_group_t *p = a, *q = b;
    int64_t py = (int64_t)floor(p->cy), qy = (int64_t)floor(q->cy);
    if (py != qy)
        return py < qy ? -1 : 1;
    int64_t px = (int64_t)floor(p->cx), qx = (int64_t)floor(q->cx);
    if (px != qx)
        return px < qx ? -1 : 1;
    return (p->first > q->first) - (p->first < q->first);
}

static int s_regions(const tb_manifest_t *m, int64_t W, int64_t H, ref_plan_t *r, tb_err_t *err)
{
    tb_regions_t *out = &r->regions;
    const double mc = m->regions.ocean_margin_km * 1000.0 / m->cell_m;
    out->margin_cells = (int64_t)ceil(mc - 1e-9);
    out->dilation_radius2 = (int64_t)floor(mc * mc / 4.0 + 1e-9);
    const int n = r->landmasses.n;
    out->landmass_region = calloc((size_t)n + 1, sizeof *out->landmass_region);
    if (n == 0)
        return 0;
    uint8_t *mask = malloc((size_t)(W * H));
    for (int64_t k = 0; k < W * H; k++)
        mask[k] = r->labels[k] > 0;
    if (tb_edt_dilate(mask, W, H, true, out->dilation_radius2, 1, mask, err) != 0) {
        free(mask);
        return -1;
    }
    int32_t *comp = malloc(sizeof *comp * (size_t)(W * H));
    int64_t nc = s_flood(mask, W, H, comp);
    free(mask);
    int *group_of = malloc(sizeof *group_of * (size_t)(nc ? nc : 1));
    for (int64_t k = 0; k < nc; k++)
        group_of[k] = -1;
    s_group_t *g = calloc((size_t)n, sizeof *g);
    int ng = 0, *lm_comp = malloc(sizeof *lm_comp * (size_t)n);
    for (int k = 0; k < n; k++) {
        const tb_landmass_t *lm = &r->landmasses.kept[k];
        int c = comp[lm->first_index];
        lm_comp[k] = c;
        if (group_of[c] < 0) {
            group_of[c] = ng;
            g[ng++] = (s_group_t){.comp = c, .first = lm->first_index};
        }
        s_group_t *gr = &g[group_of[c]];
        gr->sum_cos += lm->sum_cos;
        gr->sum_sin += lm->sum_sin;
        gr->sum_y += lm->sum_y;
        gr->cells += lm->cells;
        gr->first = lm->first_index < gr->first ? lm->first_index : gr->first;
    }
    free(comp);
    for (int k = 0; k < ng; k++)
        tb_landmass_centroid(g[k].sum_cos, g[k].sum_sin, g[k].sum_y, g[k].cells, W, &g[k].cx,
                             &g[k].cy);
    qsort(g, (size_t)ng, sizeof *g, s_cmp_group);
    for (int k = 0; k < ng; k++)
        group_of[g[k].comp] = k;
    out->n = ng;
    out->regions = calloc((size_t)ng, sizeof *out->regions);
    for (int k = 0; k < ng; k++) {
        tb_plan_region_t *reg = &out->regions[k];
        reg->id = k + 1;
        reg->centroid_x = g[k].cx;
        reg->centroid_y = g[k].cy;
        reg->landmass_ids = malloc(sizeof *reg->landmass_ids * (size_t)n);
    }
    for (int k = 0; k < n; k++) {
        tb_plan_region_t *reg = &out->regions[group_of[lm_comp[k]]];
        reg->landmass_ids[reg->n_landmasses++] = k + 1;
        out->landmass_region[k + 1] = reg->id;
    }
    int rc = 0;
    for (int k = 0; k < ng && rc == 0; k++) {
        tb_plan_region_t *reg = &out->regions[k];
        tb_arc_t *arcs = malloc(sizeof *arcs * (size_t)reg->n_landmasses);
        reg->land_y0 = H;
        reg->land_y1 = -1;
        for (int q = 0; q < reg->n_landmasses; q++) {
            const tb_landmass_t *lm = &r->landmasses.kept[reg->landmass_ids[q] - 1];
            arcs[q] = lm->arc;
            reg->land_cells += lm->cells;
            reg->land_y0 = lm->y0 < reg->land_y0 ? lm->y0 : reg->land_y0;
            reg->land_y1 = lm->y1 > reg->land_y1 ? lm->y1 : reg->land_y1;
        }
        for (int64_t c = 0; c < W * H; c++)
            if (r->labels[c] > 0 && out->landmass_region[r->labels[c]] == reg->id)
                reg->class_cells[r->classes[c] < TB_MAX_CLASSES ? r->classes[c] : 0]++;
        reg->land_arc = tb_arc_cover(arcs, reg->n_landmasses, W);
        free(arcs);
        int64_t mg = out->margin_cells, x0 = 0, bw = W;
        if (reg->land_arc.w + 2 * mg < W) {
            x0 = reg->land_arc.x0 - mg;
            bw = reg->land_arc.w + 2 * mg;
        }
        int64_t y0 = reg->land_y0 - mg > 0 ? reg->land_y0 - mg : 0;
        int64_t y1 = reg->land_y1 + mg < H - 1 ? reg->land_y1 + mg : H - 1;
        rc = tb_frame_make(&reg->box, W, H, m->cell_m, x0, y0, bw, y1 - y0 + 1, err);
        reg->box_cells = reg->box.w * reg->box.h;
        reg->box_wraps = tb_frame_wraps(&reg->box) || reg->box.x0 + reg->box.w > W;
        reg->straddles_seam = tb_arc_crosses_seam(reg->land_arc, W);
    }
    free(g);
    free(group_of);
    free(lm_comp);
    return rc;
}

static int ref_plan(const tb_manifest_t *m, const tb_image_t *painting, ref_plan_t *r,
                    tb_err_t *err)
{
    memset(r, 0, sizeof *r);
    tb_plan_summary_t *s = &r->summary;
    const int64_t pw = painting->w, ph = painting->h, k = m->planet_w / pw;
    const int64_t W = m->planet_w, H = ph * k;
    s->planet_w = W;
    s->planet_h = H;
    s->painting_w = pw;
    s->painting_h = ph;
    s->cells_per_pixel = k;
    uint8_t *px = malloc((size_t)(pw * ph));
    if (s_classify(m, painting, px, &s->classify, err) != 0) {
        free(px);
        return -1;
    }
    r->classes = malloc((size_t)(W * H));
    r->labels = malloc(sizeof *r->labels * (size_t)(W * H));
    for (int64_t j = 0; j < H; j++)
        for (int64_t i = 0; i < W; i++)
            r->classes[j * W + i] = px[(j / k) * pw + i / k];
    free(px);
    const tb_legend_t *l = &m->legend;
    for (int64_t j = 0; j < H; j++)
        s->seam_rows += s_land(l, r->classes[j * W]) != s_land(l, r->classes[j * W + W - 1]);
    s->seam_percent = 100.0 * (double)s->seam_rows / (double)H;
    s_landmasses(m, W, H, r);
    s->landmasses_found = r->landmasses.found;
    s->landmasses_kept = r->landmasses.n;
    s->dropped = r->landmasses.dropped;
    s->dropped_cells = r->landmasses.dropped_cells;
    s->dropped_area_km2 = r->landmasses.dropped_area_km2;
    if (s_regions(m, W, H, r, err) != 0)
        return -1;
    s->margin_cells = r->regions.margin_cells;
    s->dilation_radius2 = r->regions.dilation_radius2;
    for (int q = 0; q < r->regions.n; q++) {
        const tb_plan_region_t *reg = &r->regions.regions[q];
        s->land_cells += reg->land_cells;
        s->region_cells += reg->box_cells;
        s->largest_region_cells =
            reg->box_cells > s->largest_region_cells ? reg->box_cells : s->largest_region_cells;
    }
    for (int c = 0; c < l->n_classes; c++) {
        if (l->classes[c].kind != TB_CLASS_LAND)
            continue;
        tb_plan_class_row_t *row = &r->class_rows[r->n_class_rows++];
        tb_plan_class_angles(m, c, row);
        for (int q = 0; q < r->regions.n; q++)
            row->cells += r->regions.regions[q].class_cells[c];
    }
    for (int64_t q = 0; q < W * H; q++)
        r->ocean_total +=
            r->classes[q] < l->n_classes && l->classes[r->classes[q]].kind == TB_CLASS_OCEAN;
    r->land_total = W * H - r->ocean_total;
    return 0;
}

static void ref_plan_free(ref_plan_t *r)
{
    free(r->landmasses.kept);
    tb_regions_free(&r->regions);
    free(r->classes);
    free(r->labels);
    memset(r, 0, sizeof *r);
}

/* ---- comparison ---- */

#define S_SAME(a, b, what)                                                                         \
    do {                                                                                           \
        if (memcmp(&(a), &(b), sizeof(a)) != 0) {                                                  \
            snprintf(buf, n, "%s differs", what);                                                  \
            return buf;                                                                            \
        }                                                                                          \
    } while (0)

static const char *s_cmp_lms(const ref_plan_t *ref, const tb_plan_t *p, char *buf, size_t n)
{
    for (int k = 0; k < ref->landmasses.n; k++) {
        const tb_landmass_t *a = &ref->landmasses.kept[k], *b = tb_plan_landmass(p, k);
        char what[64];
        snprintf(what, sizeof what, "landmass %d", k + 1);
        if (a->cells != b->cells || a->y0 != b->y0 || a->y1 != b->y1 || a->arc.x0 != b->arc.x0 ||
            a->arc.w != b->arc.w || a->first_index != b->first_index ||
            memcmp(&a->sum_cos, &b->sum_cos, sizeof(double)) ||
            memcmp(&a->sum_sin, &b->sum_sin, sizeof(double)) ||
            memcmp(&a->sum_y, &b->sum_y, sizeof(double)) ||
            memcmp(&a->centroid_x, &b->centroid_x, sizeof(double)) ||
            memcmp(&a->centroid_y, &b->centroid_y, sizeof(double)) ||
            memcmp(a->class_cells, b->class_cells, sizeof a->class_cells) ||
            tb_plan_landmass_region(p, k + 1) != ref->regions.landmass_region[k + 1]) {
            snprintf(buf, n, "%s differs (cells %lld / %lld, arc %lld+%lld / %lld+%lld)", what,
                     (long long)a->cells, (long long)b->cells, (long long)a->arc.x0,
                     (long long)a->arc.w, (long long)b->arc.x0, (long long)b->arc.w);
            return buf;
        }
    }
    return NULL;
}

static const char *s_cmp_regions(const ref_plan_t *ref, const tb_plan_t *p, char *buf, size_t n)
{
    for (int k = 0; k < ref->regions.n; k++) {
        const tb_plan_region_t *a = &ref->regions.regions[k], *b = tb_plan_region(p, k);
        if (a->id != b->id || a->n_landmasses != b->n_landmasses ||
            memcmp(a->landmass_ids, b->landmass_ids, sizeof(int) * (size_t)a->n_landmasses) ||
            a->land_cells != b->land_cells || a->box_cells != b->box_cells ||
            memcmp(&a->box, &b->box, sizeof a->box) ||
            memcmp(a->class_cells, b->class_cells, sizeof a->class_cells) ||
            a->land_arc.x0 != b->land_arc.x0 || a->land_arc.w != b->land_arc.w ||
            a->land_y0 != b->land_y0 || a->land_y1 != b->land_y1 ||
            a->straddles_seam != b->straddles_seam || a->box_wraps != b->box_wraps ||
            memcmp(&a->centroid_x, &b->centroid_x, sizeof(double)) ||
            memcmp(&a->centroid_y, &b->centroid_y, sizeof(double))) {
            snprintf(buf, n,
                     "region %d differs (land %lld / %lld, box %lld,%lld %lldx%lld / "
                     "%lld,%lld %lldx%lld)",
                     k + 1, (long long)a->land_cells, (long long)b->land_cells,
                     (long long)a->box.x0, (long long)a->box.y0, (long long)a->box.w,
                     (long long)a->box.h, (long long)b->box.x0, (long long)b->box.y0,
                     (long long)b->box.w, (long long)b->box.h);
            return buf;
        }
    }
    return NULL;
}

static const char *ref_plan_compare(const ref_plan_t *ref, const tb_plan_t *p, char *buf, size_t n)
{
    const tb_plan_summary_t *a = &ref->summary, *b = tb_plan_summary(p);
    /* field by field: the struct has padding */
    S_SAME(a->planet_w, b->planet_w, "planet_w");
    S_SAME(a->planet_h, b->planet_h, "planet_h");
    S_SAME(a->cells_per_pixel, b->cells_per_pixel, "cells_per_pixel");
    S_SAME(a->classify.unmatched_pixels, b->classify.unmatched_pixels, "unmatched pixels");
    S_SAME(a->classify.unmatched_fraction, b->classify.unmatched_fraction, "unmatched fraction");
    S_SAME(a->classify.unmatched_colours, b->classify.unmatched_colours, "unmatched colours");
    S_SAME(a->classify.n_top, b->classify.n_top, "top colours");
    for (int k = 0; k < a->classify.n_top; k++) {
        const tb_classify_colour_t *x = &a->classify.top[k], *y = &b->classify.top[k];
        if (memcmp(x->rgb, y->rgb, 3) || x->pixels != y->pixels || x->example_x != y->example_x ||
            x->example_y != y->example_y) {
            snprintf(buf, n, "top colour %d differs", k);
            return buf;
        }
    }
    S_SAME(a->classify.fill_rounds, b->classify.fill_rounds, "fill rounds");
    S_SAME(a->classify.speckle_pixels, b->classify.speckle_pixels, "speckle pixels");
    S_SAME(a->seam_rows, b->seam_rows, "seam rows");
    S_SAME(a->seam_percent, b->seam_percent, "seam percent");
    S_SAME(a->landmasses_found, b->landmasses_found, "landmasses found");
    S_SAME(a->landmasses_kept, b->landmasses_kept, "landmasses kept");
    S_SAME(a->dropped, b->dropped, "dropped");
    S_SAME(a->dropped_cells, b->dropped_cells, "dropped cells");
    S_SAME(a->dropped_area_km2, b->dropped_area_km2, "dropped area");
    S_SAME(a->land_cells, b->land_cells, "land cells");
    S_SAME(a->region_cells, b->region_cells, "region cells");
    S_SAME(a->largest_region_cells, b->largest_region_cells, "largest region");
    S_SAME(a->margin_cells, b->margin_cells, "margin cells");
    S_SAME(a->dilation_radius2, b->dilation_radius2, "dilation radius");
    if (tb_plan_landmass_count(p) != ref->landmasses.n) {
        snprintf(buf, n, "%d landmasses, the reference %d", tb_plan_landmass_count(p),
                 ref->landmasses.n);
        return buf;
    }
    if (tb_plan_region_count(p) != ref->regions.n) {
        snprintf(buf, n, "%d regions, the reference %d", tb_plan_region_count(p), ref->regions.n);
        return buf;
    }
    const char *d = s_cmp_lms(ref, p, buf, n);
    if (!d)
        d = s_cmp_regions(ref, p, buf, n);
    if (d)
        return d;
    if (tb_plan_class_count(p) != ref->n_class_rows) {
        snprintf(buf, n, "class table rows differ");
        return buf;
    }
    for (int k = 0; k < ref->n_class_rows; k++)
        if (tb_plan_class_row(p, k)->cells != ref->class_rows[k].cells) {
            snprintf(buf, n, "class table row %d differs", k);
            return buf;
        }
    const int64_t W = a->planet_w, H = a->planet_h;
    const tb_raster_t *pc = tb_plan_class_raster(p), *pl = tb_plan_label_raster(p);
    for (int64_t y = 0; y < H; y++) {
        if (memcmp(tb_raster_row(pc, y), ref->classes + y * W, (size_t)W)) {
            snprintf(buf, n, "class raster row %lld differs", (long long)y);
            return buf;
        }
        if (memcmp(tb_raster_row(pl, y), ref->labels + y * W, sizeof(int32_t) * (size_t)W)) {
            snprintf(buf, n, "label raster row %lld differs", (long long)y);
            return buf;
        }
    }
    tb_err_t err;
    if ((tb_plan_check_land_and_sea(p, &err) == 0) != (ref->land_total && ref->ocean_total)) {
        snprintf(buf, n, "land and sea check differs");
        return buf;
    }
    return NULL;
}

/* ---- the streamed plan against it ---- */

static const int64_t s_bands[] = {1, 2, 3, 5, 8, 64, 100000};

/* Plans a painting both ways, streamed at every band and two thread counts, and requires the
 * same answer. */
static tb_plan_summary_t s_agree_img(const tb_manifest_t *m, const tb_image_t *img,
                                     const char *what)
{
    ref_plan_t ref;
    tb_err_t err;
    ck_assert_msg(ref_plan(m, img, &ref, &err) == 0, "%s: reference: %s", what, err.msg);
    for (size_t b = 0; b < sizeof s_bands / sizeof s_bands[0]; b++)
        for (int threads = 1; threads <= 2; threads++) {
            tb_image_rows_t rows;
            tb_plan_t *p = tb_plan_new_banded(m, tb_image_rows(&rows, img, "fixture"), NULL, NULL,
                                              threads, s_bands[b], &err);
            ck_assert_msg(p != NULL, "%s, band %lld: %s", what, (long long)s_bands[b], err.msg);
            char buf[256];
            const char *diff = ref_plan_compare(&ref, p, buf, sizeof buf);
            ck_assert_msg(diff == NULL, "%s, band %lld, %d threads: %s", what,
                          (long long)s_bands[b], threads, diff);
            tb_plan_destroy(&p);
        }
    tb_plan_summary_t sum = ref.summary;
    ref_plan_free(&ref);
    return sum; /* for the test to check its planet is what it says */
}

static tb_plan_summary_t s_agree(const uint8_t *classes, int64_t w, int64_t h, double margin_cells,
                                 double min_cells, const char *what)
{
    tb_manifest_t m;
    fix_manifest(&m, w, 8, margin_cells);
    m.regions.min_landmass_km2 = min_cells * 64e-6;
    tb_image_t img;
    fix_painting(&m, classes, w, h, &img);
    tb_plan_summary_t sum = s_agree_img(&m, &img, what);
    tb_image_free(&img);
    return sum;
}

static uint8_t *s_ocean(int64_t w, int64_t h)
{
    uint8_t *c = malloc((size_t)(w * h));
    memset(c, FIX_DEEP, (size_t)(w * h));
    return c;
}

START_TEST(test_band_edges_seam_and_y_edges)
{
    const int64_t w = 96, h = 48;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 10, 3, 12, 10, FIX_LOW);     /* across several band edges */
    fix_rect(c, w, 14, 6, 4, 3, FIX_HIGH);      /* a core inside it */
    fix_rect(c, w, w - 6, 20, 12, 6, FIX_LOW);  /* across the seam */
    fix_rect(c, w, w - 1, 30, 1, 1, FIX_LOW);   /* a diagonal contact across the seam ... */
    fix_rect(c, w, 0, 31, 3, 2, FIX_HIGH);      /* ... with this */
    fix_rect(c, w, 40, 0, 8, 3, FIX_LOW);       /* touching the top edge */
    fix_rect(c, w, 60, h - 2, 20, 2, FIX_HIGH); /* and the bottom one */
    fix_rect(c, w, 38, 36, 6, 6, FIX_SHELF);    /* some shelf for the drops to find */
    fix_rect(c, w, 40, 38, 2, 2, FIX_LOW);      /* an islet in it */
    ck_assert_int_eq(s_agree(c, w, h, 6, 0, "edges").landmasses_kept, 6);
    tb_plan_summary_t s = s_agree(c, w, h, 6, 5, "edges, islets dropped");
    ck_assert_int_eq(s.dropped, 1);
    ck_assert_int_gt(s.seam_rows, 0);
    free(c);
}
END_TEST

START_TEST(test_u_and_comb_meet_late)
{
    /* A U whose arms are one landmass only from row 40, an upside-down U that splits, and a comb
     * whose five teeth join at its back: provisional labels that merge many bands later. */
    const int64_t w = 120, h = 64;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 5, 4, 3, 37, FIX_LOW);
    fix_rect(c, w, 20, 10, 3, 31, FIX_HIGH);
    fix_rect(c, w, 5, 40, 18, 3, FIX_LOW);
    fix_rect(c, w, 35, 5, 20, 3, FIX_LOW);
    fix_rect(c, w, 35, 5, 3, 40, FIX_LOW);
    fix_rect(c, w, 52, 5, 3, 50, FIX_LOW);
    for (int t = 0; t < 5; t++)
        fix_rect(c, w, 70 + 8 * t, 2 + 6 * t, 2, 50 - 6 * t, FIX_LOW);
    fix_rect(c, w, 70, 52, 34, 2, FIX_LOW);
    /* a comb across the seam too: teeth at both ends joined at the bottom */
    fix_rect(c, w, w - 3, 20, 2, 38, FIX_HIGH);
    fix_rect(c, w, 1, 25, 2, 33, FIX_HIGH);
    fix_rect(c, w, w - 3, 58, 6, 2, FIX_HIGH);
    /* the U, the split one, the comb and the seam comb: four */
    ck_assert_int_eq(s_agree(c, w, h, 4, 0, "U and comb").landmasses_found, 4);
    free(c);
}
END_TEST

START_TEST(test_many_tiny_landmasses)
{
    const int64_t w = 128, h = 80;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 0, 40, w, 40, FIX_SHELF);
    for (int64_t j = 1; j + 2 < h; j += 3)
        for (int64_t i = (j * 7) % 5; i < w; i += 4 + (i + j) % 3) {
            uint64_t r = tb_hash(3, TB_SALT_TEST, i, j, 0) % 4;
            fix_rect(c, w, i, j, 1 + (int64_t)(r & 1), 1 + (int64_t)(r >> 1),
                     r == 3 ? FIX_HIGH : FIX_LOW);
        }
    fix_rect(c, w, 50, 20, 30, 30, FIX_LOW); /* one big one among them */
    tb_plan_summary_t s = s_agree(c, w, h, 3, 4, "tiny landmasses, those under 4 cells dropped");
    ck_assert_int_gt(s.dropped, 100);
    ck_assert_int_gt(s.landmasses_kept, 10);
    ck_assert_int_eq(s_agree(c, w, h, 3, 0, "tiny landmasses, all kept").dropped, 0);
    free(c);
}
END_TEST

START_TEST(test_unmatched_speckle_and_coarse_paintings)
{
    const int64_t w = 64, h = 40;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 10, 8, 20, 16, FIX_LOW);
    fix_rect(c, w, w - 4, 25, 8, 8, FIX_HIGH);
    fix_rect(c, w, 40, 30, 1, 1, FIX_LOW); /* speckle */
    fix_rect(c, w, 20, 12, 1, 1, FIX_SHELF);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 5);
    m.legend.max_unmatched_fraction = 0.05;
    tb_image_t img;
    fix_painting(&m, c, w, h, &img);
    /* unmatched: a 5 x 5 blob (three fill rounds) on a coast, a column over the seam, strays */
    uint8_t *px = img.pixels;
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            bool blob = i >= 27 && i < 32 && j >= 14 && j < 19;
            bool seam = i == 0 && j >= 20 && j < 35;
            bool stray = tb_hash(4, TB_SALT_TEST, i, j, 0) % 97 == 0;
            if (blob || seam || stray)
                memcpy(px + 3 * (j * w + i), blob ? "\xff\x00\xff" : "\x00\xff\xff", 3);
        }
    tb_plan_summary_t s = s_agree_img(&m, &img, "unmatched and speckle");
    ck_assert_int_gt(s.classify.unmatched_pixels, 40);
    ck_assert_int_ge(s.classify.fill_rounds, 3);
    ck_assert_int_gt(s.classify.speckle_pixels, 1);
    /* the same painting as a coarse one: 2 x 2 cells a pixel */
    tb_manifest_t m2;
    fix_manifest(&m2, 2 * w, 8, 5);
    m2.legend.max_unmatched_fraction = 0.05;
    ck_assert_int_eq(s_agree_img(&m2, &img, "a coarse painting").cells_per_pixel, 2);
    tb_image_free(&img);
    free(c);
}
END_TEST

START_TEST(test_margins_wider_than_bands_and_rings)
{
    /* Islands a margin apart across band edges (the dilation's halo spans several bands), a
     * landmass round the whole planet (a ring box), and a long one whose box wraps. */
    const int64_t w = 150, h = 90;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 10, 10, 8, 8, FIX_LOW);
    fix_rect(c, w, 10, 30, 8, 8, FIX_HIGH); /* 12 rows below: within a margin of 25 */
    fix_rect(c, w, 60, 10, 8, 8, FIX_LOW);  /* 42 columns away: not */
    fix_rect(c, w, 0, 55, w, 3, FIX_LOW);   /* the ring */
    fix_rect(c, w, 100, 75, 40, 2, FIX_HIGH);
    tb_plan_summary_t s = s_agree(c, w, h, 25, 0, "wide margins and a ring");
    ck_assert_int_eq(s.landmasses_kept, 5);
    free(c);
}
END_TEST

START_TEST(test_random_coasts)
{
    /* Thresholded value noise: coasts of every shape, lakes, islands in lakes. */
    const int64_t w = 160, h = 100;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        uint8_t *c = malloc((size_t)(w * h));
        for (int64_t j = 0; j < h; j++)
            for (int64_t i = 0; i < w; i++) {
                double v = 0;
                for (int o = 0; o < 3; o++) {
                    int64_t s = 16 >> o;
                    v +=
                        tb_hash_unit(tb_hash(seed, TB_SALT_TEST, tb_wrap(i / s, w / s), j / s, o)) /
                        (1 << o);
                }
                c[j * w + i] = v > 1.15   ? FIX_HIGH
                               : v > 0.95 ? FIX_LOW
                               : v > 0.85 ? FIX_SHELF
                                          : FIX_DEEP;
            }
        char what[64];
        snprintf(what, sizeof what, "random coasts, seed %llu", (unsigned long long)seed);
        s_agree(c, w, h, 6, (double)(seed * 3), what);
        free(c);
    }
}
END_TEST

START_TEST(test_png_rows_give_the_same_plan)
{
    /* The painting as a PNG read row by row plans to the same answer as the image in memory. */
    const int64_t w = 96, h = 48;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 10, 3, 40, 30, FIX_LOW);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 6);
    tb_image_t img;
    fix_painting(&m, c, w, h, &img);
    char path[4096];
    snprintf(path, sizeof path, "%s/painting.png", tb_test_tmpdir("plan-stream"));
    ck_assert_int_eq(tb_png_write(path, &img, 6, NULL), 0);
    tb_err_t err;
    tb_png_rows_t *r = tb_png_rows_open(path, TB_PNG_RGB8, 1u << 20, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    tb_plan_t *p = tb_plan_new_banded(&m, tb_png_rows_source(r), NULL, NULL, 1, 7, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ref_plan_t ref;
    ck_assert_int_eq(ref_plan(&m, &img, &ref, &err), 0);
    char buf[256];
    const char *diff = ref_plan_compare(&ref, p, buf, sizeof buf);
    ck_assert_msg(diff == NULL, "%s", diff);
    ref_plan_free(&ref);
    tb_plan_destroy(&p);
    tb_png_rows_destroy(&r);
    unlink(path);
    tb_image_free(&img);
    free(c);
}
END_TEST

START_TEST(test_the_comparison_can_fail)
{
    /* Negative control: one cell of the reference's label raster changed, or one landmass's
     * centroid sum moved by 1e-9, and the comparison names it. */
    const int64_t w = 64, h = 32;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 10, 10, 10, 10, FIX_LOW);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 4);
    tb_image_t img;
    fix_painting(&m, c, w, h, &img);
    ref_plan_t ref;
    tb_err_t err;
    ck_assert_int_eq(ref_plan(&m, &img, &ref, &err), 0);
    tb_plan_t *p = tb_plan_new_image(&m, &img, 1, &err);
    char buf[256];
    ck_assert_ptr_null(ref_plan_compare(&ref, p, buf, sizeof buf));
    ref.labels[15 * w + 12] = 0;
    ck_assert_ptr_nonnull(strstr(ref_plan_compare(&ref, p, buf, sizeof buf), "label raster"));
    ref.labels[15 * w + 12] = 1;
    ref.landmasses.kept[0].sum_y += 1e-9;
    ck_assert_ptr_nonnull(strstr(ref_plan_compare(&ref, p, buf, sizeof buf), "landmass 1"));
    ref_plan_free(&ref);
    tb_plan_destroy(&p);
    tb_image_free(&img);
    free(c);
}
END_TEST

/* ---- the memory bound ---- */

/* A raster whose rows are pages protected until touched: a fault makes the row readable and
 * writable and counts it as held; the release hook protects released rows again. */
typedef struct {
    uint8_t *base;
    size_t row_bytes, bytes;
    int64_t h;
    uint8_t *held;
    int64_t n_held, max_held, releases;
    bool honour_release; /* false: the negative control, a hook that never lets go */
} s_track_t;

static s_track_t *s_tracks[2];

static void s_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    for (int k = 0; k < 2; k++) {
        s_track_t *t = s_tracks[k];
        uint8_t *a = si->si_addr;
        if (!t || a < t->base || a >= t->base + t->bytes)
            continue;
        int64_t y = (int64_t)((size_t)(a - t->base) / t->row_bytes);
        mprotect(t->base + (size_t)y * t->row_bytes, t->row_bytes, PROT_READ | PROT_WRITE);
        if (!t->held[y]) {
            t->held[y] = 1;
            t->n_held++;
            t->max_held = t->n_held > t->max_held ? t->n_held : t->max_held;
        }
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void s_track_release(void *user, int64_t y0, int64_t y1)
{
    s_track_t *t = user;
    t->releases++;
    if (!t->honour_release)
        return;
    for (int64_t y = y0; y < y1; y++) {
        if (!t->held[y])
            continue;
        mprotect(t->base + (size_t)y * t->row_bytes, t->row_bytes, PROT_NONE);
        t->held[y] = 0;
        t->n_held--;
    }
}

static void s_track_new(s_track_t *t, int64_t w, int64_t h, size_t elem, bool honour,
                        tb_raster_t *r)
{
    memset(t, 0, sizeof *t);
    t->row_bytes = (size_t)w * elem;
    ck_assert_int_eq(t->row_bytes % (size_t)sysconf(_SC_PAGESIZE), 0);
    t->bytes = t->row_bytes * (size_t)h;
    t->base = mmap(NULL, t->bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(t->base != MAP_FAILED);
    t->h = h;
    t->held = calloc((size_t)h, 1);
    t->honour_release = honour;
    *r = (tb_raster_t){t->base, w, h, elem, s_track_release, t};
}

static void s_track_free(s_track_t *t)
{
    munmap(t->base, t->bytes);
    free(t->held);
}

/* Plans a 4096-cell-wide planet (a u8 row is a page) into tracked rasters at band `band`; the
 * plan's answer must still be the reference's. */
static void s_tracked_plan(int64_t band, bool honour, s_track_t *tc, s_track_t *tl)
{
    const int64_t w = 4096, h = 60;
    uint8_t *c = s_ocean(w, h);
    for (int k = 0; k < 12; k++)
        fix_rect(c, w, 300 * k + 20, 2 + 4 * k, 200, 8 + k / 3, k % 2 ? FIX_LOW : FIX_HIGH);
    fix_rect(c, w, w - 50, 40, 100, 15, FIX_LOW);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 6);
    tb_image_t img;
    fix_painting(&m, c, w, h, &img);
    tb_raster_t rc, rl;
    s_track_new(tc, w, h, 1, honour, &rc);
    s_track_new(tl, w, h, 4, honour, &rl);
    s_tracks[0] = tc;
    s_tracks[1] = tl;
    struct sigaction sa = {0}, old_segv, old_bus;
    sa.sa_sigaction = s_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
    tb_image_rows_t rows;
    tb_err_t err;
    tb_plan_t *p =
        tb_plan_new_banded(&m, tb_image_rows(&rows, &img, "fixture"), &rc, &rl, 1, band, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    int64_t held_c = tc->n_held, held_l = tl->n_held, max_c = tc->max_held, max_l = tl->max_held;
    ref_plan_t ref;
    ck_assert_int_eq(ref_plan(&m, &img, &ref, &err), 0);
    char buf[256];
    const char *diff = ref_plan_compare(&ref, p, buf, sizeof buf); /* faults rows in again */
    ck_assert_msg(diff == NULL, "%s", diff);
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    s_tracks[0] = s_tracks[1] = NULL;
    /* what the plan held when it returned */
    tc->n_held = held_c;
    tl->n_held = held_l;
    tc->max_held = max_c;
    tl->max_held = max_l;
    ref_plan_free(&ref);
    tb_plan_destroy(&p);
    tb_image_free(&img);
    free(c);
}

START_TEST(test_rows_held_stay_within_a_band)
{
    for (int64_t band = 2; band <= 8; band *= 2) {
        s_track_t tc, tl;
        s_tracked_plan(band, true, &tc, &tl);
        /* the plan reads one row ahead of the band it writes, and releases every band */
        ck_assert_msg(tc.max_held <= band + 2, "band %lld: %lld class rows held at once",
                      (long long)band, (long long)tc.max_held);
        ck_assert_msg(tl.max_held <= band + 1, "band %lld: %lld label rows held at once",
                      (long long)band, (long long)tl.max_held);
        /* every row it touched it let go of, and it touched every row */
        ck_assert_int_eq(tc.n_held, 0);
        ck_assert_int_eq(tl.n_held, 0);
        ck_assert_int_ge(tc.releases, 4 * (60 / band));
        s_track_free(&tc);
        s_track_free(&tl);
    }
}
END_TEST

START_TEST(test_a_plan_that_holds_everything_is_seen)
{
    /* Negative control: a release hook that lets nothing go, and the tracker sees every row the
     * plan touched still held at the end. */
    s_track_t tc, tl;
    s_tracked_plan(4, false, &tc, &tl);
    ck_assert_int_eq(tc.max_held, 60);
    ck_assert_int_eq(tc.n_held, 60);
    /* the label raster starts at zero: only its rows with land are written (the islands' rows
     * 2 .. 56) */
    ck_assert_int_eq(tl.max_held, 55);
    ck_assert_int_eq(tl.n_held, 55);
    s_track_free(&tc);
    s_track_free(&tl);
}
END_TEST

Suite *plan_stream_suite(void)
{
    Suite *s = suite_create("plan_stream");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_band_edges_seam_and_y_edges);
    tcase_add_test(tc, test_u_and_comb_meet_late);
    tcase_add_test(tc, test_many_tiny_landmasses);
    tcase_add_test(tc, test_unmatched_speckle_and_coarse_paintings);
    tcase_add_test(tc, test_margins_wider_than_bands_and_rings);
    tcase_add_test(tc, test_random_coasts);
    tcase_add_test(tc, test_png_rows_give_the_same_plan);
    tcase_add_test(tc, test_the_comparison_can_fail);
    tcase_add_test(tc, test_rows_held_stay_within_a_band);
    tcase_add_test(tc, test_a_plan_that_holds_everything_is_seen);
    suite_add_tcase(s, tc);
    return s;
}
