/* Region grouping by banded dilation and labelling; see regions.h. */
#include "jobs/plan/regions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/edt.h"
#include "jobs/plan/ccl.h"

struct tb_region_grouper_t {
    int64_t w, h;
    double cell_m;
    int64_t margin_cells, radius2;
    int64_t halo; /* rows a dilated row looks up and down: floor(sqrt(radius2)), at most h */
    int64_t band; /* rows dilated at a time */
    int threads;
    uint8_t *win; /* mask rows [win_y0, win_y0 + win_n), room for band + 2 halo */
    uint8_t *dil; /* the dilation of a band with its halos */
    int64_t win_y0, win_n, cap_rows;
    int64_t rows_in, next_out; /* mask rows received; the first row not yet dilated */
    tb_ccl_stream_t *ccl;      /* components of the dilated mask */
    const int64_t *firsts;
    int n_firsts, next_first;
    int64_t *label_of_first; /* the dilated component's label at each first cell */
};

tb_region_grouper_t *tb_region_grouper_new(int64_t w, int64_t h, double cell_m,
                                           double ocean_margin_km, const int64_t *firsts, int n,
                                           int64_t band_rows, int threads, tb_err_t *err)
{
    tb_region_grouper_t *g = tb_calloc(1, sizeof *g, "region grouper", err);
    if (!g)
        return NULL;
    g->w = w;
    g->h = h;
    g->cell_m = cell_m;
    const double margin_cells = ocean_margin_km * 1000.0 / cell_m;
    g->margin_cells = (int64_t)ceil(margin_cells - 1e-9);
    g->radius2 = (int64_t)floor(margin_cells * margin_cells / 4.0 + 1e-9);
    /* floor(sqrt(radius2)), at most h: the dilation's reach in rows (tb_edt_dilate's own r) */
    for (g->halo = 0; g->halo < h && (g->halo + 1) * (g->halo + 1) <= g->radius2; g->halo++)
        ;
    /* a band dilates its rows and a halo either side: a band of at least twice the halo keeps
     * that overhead to 2x (a wide ocean margin with 256-row bands dilated every row ~3x over) */
    g->band = band_rows < 1 ? 1 : band_rows;
    if (g->band < 2 * g->halo)
        g->band = 2 * g->halo;
    g->threads = threads < 1 ? 1 : threads;
    g->cap_rows = g->band + 2 * g->halo;
    if (g->cap_rows > h)
        g->cap_rows = h;
    if (g->cap_rows > 65000) {
        tb_err_set(err, TB_E_INVALID,
                   "regions: a band of %lld rows with %lld rows of halo either side is more than "
                   "the 65000 rows the dilation takes (regions.ocean_margin_km %g is %g cells)",
                   (long long)g->band, (long long)g->halo, ocean_margin_km, margin_cells);
        goto fail;
    }
    g->firsts = firsts;
    g->n_firsts = n;
    size_t bytes = (size_t)g->cap_rows * (size_t)w;
    g->win = tb_malloc(bytes, "region mask band", err);
    g->dil = g->win ? tb_malloc(bytes, "region dilation band", err) : NULL;
    g->label_of_first =
        g->dil ? tb_malloc(sizeof *g->label_of_first * (size_t)(n ? n : 1), "regions", err) : NULL;
    static const uint8_t s_one[256] = {[1] = 1};
    g->ccl = g->label_of_first ? tb_ccl_stream_new(w, true, s_one, NULL, err) : NULL;
    if (!g->ccl)
        goto fail;
    return g;
fail:
    tb_region_grouper_destroy(&g);
    return NULL;
}

void tb_region_grouper_destroy(tb_region_grouper_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_region_grouper_t *g = *self_p;
    free(g->win);
    free(g->dil);
    free(g->label_of_first);
    tb_ccl_stream_destroy(&g->ccl);
    free(g);
    *self_p = NULL;
}

/* Labels dilated row y and notes the label at every landmass's first cell in it. */
static int s_label_row(tb_region_grouper_t *g, int64_t y, const uint8_t *row, tb_err_t *err)
{
    if (tb_ccl_stream_row(g->ccl, row, err) != 0)
        return -1;
    int64_t n;
    const tb_ccl_run_t *runs = tb_ccl_stream_runs(g->ccl, &n);
    for (; g->next_first < g->n_firsts && g->firsts[g->next_first] / g->w == y; g->next_first++) {
        int64_t x = g->firsts[g->next_first] % g->w, run = tb_ccl_run_at(runs, n, x);
        if (run < 0)
            return tb_err_set(err, TB_E_INTERNAL,
                              "regions: a landmass's first cell (%lld, %lld) lies outside its own "
                              "dilation",
                              (long long)x, (long long)y);
        g->label_of_first[g->next_first] = runs[run].label;
    }
    return 0;
}

/* Dilates and labels every band whose rows and lower halo have arrived (all of them at the end),
 * then drops the mask rows no later band reaches. */
static int s_flush(tb_region_grouper_t *g, tb_err_t *err)
{
    const int64_t w = g->w;
    while (g->next_out < g->h) {
        int64_t b0 = g->next_out, b1 = b0 + g->band < g->h ? b0 + g->band : g->h;
        int64_t s0 = b0 - g->halo > 0 ? b0 - g->halo : 0;
        int64_t s1 = b1 + g->halo < g->h ? b1 + g->halo : g->h;
        if (g->rows_in < s1)
            return 0;
        const uint8_t *src = g->win + (size_t)(s0 - g->win_y0) * (size_t)w;
        if (tb_edt_dilate(src, w, s1 - s0, true, g->radius2, g->threads, g->dil, err) != 0)
            return -1;
        for (int64_t y = b0; y < b1; y++)
            if (s_label_row(g, y, g->dil + (size_t)(y - s0) * (size_t)w, err) != 0)
                return -1;
        g->next_out = b1;
        /* the next band reads from b1 - halo */
        int64_t keep0 = b1 - g->halo > g->win_y0 ? b1 - g->halo : g->win_y0;
        int64_t drop = keep0 - g->win_y0;
        if (drop > 0) {
            memmove(g->win, g->win + (size_t)drop * (size_t)w, (size_t)(g->win_n - drop) * w);
            g->win_y0 += drop;
            g->win_n -= drop;
        }
    }
    return 0;
}

int tb_region_grouper_row(tb_region_grouper_t *g, const uint8_t *mask_row, tb_err_t *err)
{
    if (g->rows_in >= g->h || g->win_n >= g->cap_rows)
        return tb_err_set(err, TB_E_INTERNAL, "regions: mask row %lld out of turn",
                          (long long)g->rows_in);
    uint8_t *dst = g->win + (size_t)g->win_n * (size_t)g->w;
    for (int64_t x = 0; x < g->w; x++)
        dst[x] = mask_row[x] != 0;
    g->win_n++;
    g->rows_in++;
    return s_flush(g, err);
}

typedef struct {
    int comp; /* component of the dilated mask */
    double sum_cos, sum_sin, sum_y;
    int64_t cells;
    int64_t first_index; /* earliest first cell among its landmasses */
    double cx, cy;
} s_group_t;

static int s_cmp_group(const void *a, const void *b)
{
    const s_group_t *p = a, *q = b;
    return tb_landmass_order(p->cy, p->cx, p->first_index, q->cy, q->cx, q->first_index);
}

/* Fills a region's land statistics, arc and box from its landmasses. */
static int s_fill_region(tb_plan_region_t *r, const tb_landmasses_t *lm, int64_t w, int64_t h,
                         double cell_m, int64_t margin, tb_err_t *err)
{
    tb_arc_t *arcs = tb_malloc(sizeof *arcs * (size_t)r->n_landmasses, "region arcs", err);
    if (!arcs)
        return -1;
    r->land_y0 = h;
    r->land_y1 = -1;
    for (int k = 0; k < r->n_landmasses; k++) {
        const tb_landmass_t *m = &lm->kept[r->landmass_ids[k] - 1];
        arcs[k] = m->arc;
        r->land_cells += m->cells;
        r->land_y0 = m->y0 < r->land_y0 ? m->y0 : r->land_y0;
        r->land_y1 = m->y1 > r->land_y1 ? m->y1 : r->land_y1;
        for (int c = 0; c < TB_MAX_CLASSES; c++)
            r->class_cells[c] += m->class_cells[c];
    }
    r->land_arc = tb_arc_cover(arcs, r->n_landmasses, w);
    free(arcs);
    int64_t x0 = 0, bw = w;
    if (r->land_arc.w + 2 * margin < w) {
        x0 = r->land_arc.x0 - margin;
        bw = r->land_arc.w + 2 * margin;
    }
    int64_t y0 = r->land_y0 - margin > 0 ? r->land_y0 - margin : 0;
    int64_t y1 = r->land_y1 + margin < h - 1 ? r->land_y1 + margin : h - 1;
    if (tb_frame_make(&r->box, w, h, cell_m, x0, y0, bw, y1 - y0 + 1, err) != 0)
        return tb_err_prefix(err, "region %d box", r->id);
    r->box_cells = r->box.w * r->box.h;
    r->box_wraps = tb_frame_wraps(&r->box) || r->box.x0 + r->box.w > w;
    r->straddles_seam = tb_arc_crosses_seam(r->land_arc, w);
    return 0;
}

int tb_region_grouper_finish(tb_region_grouper_t *g, const tb_landmasses_t *landmasses,
                             const int *id_of_first, tb_regions_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->margin_cells = g->margin_cells;
    out->dilation_radius2 = g->radius2;
    if (g->rows_in != g->h || g->next_out != g->h || g->next_first != g->n_firsts)
        return tb_err_set(err, TB_E_INTERNAL, "regions: finished after %lld of %lld rows",
                          (long long)g->rows_in, (long long)g->h);
    const int n_lm = landmasses->n;
    if (n_lm != g->n_firsts)
        return tb_err_set(err, TB_E_INTERNAL, "regions: %d landmasses, %d first cells", n_lm,
                          g->n_firsts);
    out->landmass_region =
        tb_calloc((size_t)n_lm + 1, sizeof *out->landmass_region, "landmass regions", err);
    if (!out->landmass_region)
        return -1;
    if (n_lm == 0)
        return 0;
    int32_t *comp_of_label = NULL, *comp_group = NULL, *lm_comp = NULL;
    s_group_t *groups = NULL;
    int rc = -1, n_groups = 0;
    int64_t n_comps = 0;
    if (tb_ccl_stream_resolve(g->ccl, &comp_of_label, &n_comps, err) != 0)
        goto done;
    comp_group = malloc(sizeof *comp_group * (size_t)(n_comps ? n_comps : 1));
    groups = calloc((size_t)n_lm, sizeof *groups);
    lm_comp = malloc(sizeof *lm_comp * (size_t)n_lm);
    if (!comp_group || !groups || !lm_comp) {
        tb_err_set(err, TB_E_NOMEM, "regions: out of memory grouping %d landmasses", n_lm);
        goto done;
    }
    for (int k = 0; k < n_lm; k++)
        lm_comp[id_of_first[k] - 1] = comp_of_label[g->label_of_first[k]];
    /* Each landmass belongs to the dilated component holding its first cell (land lies inside its
     * own dilation). A component without land (a dilation artefact) makes no region. Groups open
     * and sum in landmass id order, so their sums have one fixed order. */
    for (int64_t c = 0; c < n_comps; c++)
        comp_group[c] = -1;
    for (int k = 0; k < n_lm; k++) {
        const tb_landmass_t *m = &landmasses->kept[k];
        int comp = lm_comp[k];
        if (comp_group[comp] < 0) {
            comp_group[comp] = n_groups;
            groups[n_groups++] = (s_group_t){.comp = comp, .first_index = m->first_index};
        }
        s_group_t *gr = &groups[comp_group[comp]];
        gr->sum_cos += m->sum_cos;
        gr->sum_sin += m->sum_sin;
        gr->sum_y += m->sum_y;
        gr->cells += m->cells;
        if (m->first_index < gr->first_index)
            gr->first_index = m->first_index;
    }
    for (int k = 0; k < n_groups; k++)
        tb_landmass_centroid(groups[k].sum_cos, groups[k].sum_sin, groups[k].sum_y, groups[k].cells,
                             g->w, &groups[k].cx, &groups[k].cy);
    qsort(groups, (size_t)n_groups, sizeof *groups, s_cmp_group);
    for (int k = 0; k < n_groups; k++)
        comp_group[groups[k].comp] = k; /* component -> region index, in id order */
    out->regions = tb_calloc((size_t)n_groups, sizeof *out->regions, "regions", err);
    if (!out->regions)
        goto done;
    out->n = n_groups;
    for (int k = 0; k < n_lm; k++)
        out->regions[comp_group[lm_comp[k]]].n_landmasses++;
    for (int k = 0; k < n_groups; k++) {
        tb_plan_region_t *r = &out->regions[k];
        r->id = k + 1;
        r->centroid_x = groups[k].cx;
        r->centroid_y = groups[k].cy;
        r->landmass_ids =
            tb_malloc(sizeof *r->landmass_ids * (size_t)r->n_landmasses, "region landmasses", err);
        if (!r->landmass_ids)
            goto done;
        r->n_landmasses = 0;
    }
    for (int k = 0; k < n_lm; k++) {
        tb_plan_region_t *r = &out->regions[comp_group[lm_comp[k]]];
        r->landmass_ids[r->n_landmasses++] = k + 1;
        out->landmass_region[k + 1] = r->id;
    }
    for (int k = 0; k < n_groups; k++)
        if (s_fill_region(&out->regions[k], landmasses, g->w, g->h, g->cell_m, g->margin_cells,
                          err) != 0)
            goto done;
    rc = 0;
done:
    free(comp_of_label);
    free(comp_group);
    free(groups);
    free(lm_comp);
    if (rc != 0)
        tb_regions_free(out);
    return rc;
}

void tb_regions_free(tb_regions_t *regions)
{
    if (!regions)
        return;
    for (int r = 0; r < regions->n; r++)
        free(regions->regions[r].landmass_ids);
    free(regions->regions);
    free(regions->landmass_region);
    memset(regions, 0, sizeof *regions);
}
