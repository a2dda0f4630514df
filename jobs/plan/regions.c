/* Region grouping by dilation and labelling; see regions.h. */
#include "jobs/plan/regions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/edt.h"

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
    int64_t py = (int64_t)floor(p->cy), qy = (int64_t)floor(q->cy);
    if (py != qy)
        return py < qy ? -1 : 1;
    int64_t px = (int64_t)floor(p->cx), qx = (int64_t)floor(q->cx);
    if (px != qx)
        return px < qx ? -1 : 1;
    return (p->first_index > q->first_index) - (p->first_index < q->first_index);
}

/* The land of the kept landmasses as a 0/1 mask, dilated in place by radius2. */
static uint8_t *s_dilated_land(const tb_landmasses_t *lm, int64_t w, int64_t h, int64_t radius2,
                               int threads, tb_err_t *err)
{
    uint8_t *mask = tb_calloc((size_t)w * (size_t)h, 1, "region mask", err);
    if (!mask)
        return NULL;
    const tb_ccl_t *ccl = &lm->ccl;
    for (int64_t k = 0; k < ccl->n_runs; k++) {
        const tb_run_t *run = &ccl->runs[k];
        if (lm->comp_id[run->comp])
            memset(mask + tb_idx(w, run->x0, run->y), 1, (size_t)(run->x1 - run->x0 + 1));
    }
    if (tb_edt_dilate(mask, w, h, true, radius2, threads, mask, err) != 0) {
        free(mask);
        return NULL;
    }
    return mask;
}

/* Fills a region's land statistics, arc and box from its landmasses. */
static int s_fill_region(tb_plan_region_t *r, const tb_landmasses_t *lm, const uint8_t *classes,
                         int64_t w, int64_t h, double cell_m, int64_t margin, tb_err_t *err)
{
    tb_arc_t *arcs = tb_malloc(sizeof *arcs * (size_t)r->n_landmasses, "region arcs", err);
    if (!arcs)
        return -1;
    const tb_ccl_t *ccl = &lm->ccl;
    r->land_y0 = h;
    r->land_y1 = -1;
    for (int k = 0; k < r->n_landmasses; k++) {
        const tb_landmass_t *m = &lm->kept[r->landmass_ids[k] - 1];
        arcs[k] = m->arc;
        r->land_cells += m->cells;
        r->land_y0 = m->y0 < r->land_y0 ? m->y0 : r->land_y0;
        r->land_y1 = m->y1 > r->land_y1 ? m->y1 : r->land_y1;
        for (int64_t q = ccl->comp_start[m->comp]; q < ccl->comp_start[m->comp + 1]; q++) {
            const tb_run_t *run = &ccl->runs[ccl->comp_runs[q]];
            const uint8_t *c = classes + tb_idx(w, run->x0, run->y);
            for (int64_t x = 0; x <= run->x1 - run->x0; x++)
                r->class_cells[c[x] < TB_MAX_CLASSES ? c[x] : 0]++;
        }
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

int tb_regions_group(const uint8_t *classes, int64_t w, int64_t h, double cell_m,
                     const tb_landmasses_t *landmasses, double ocean_margin_km, int threads,
                     tb_regions_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    const double margin_cells = ocean_margin_km * 1000.0 / cell_m;
    out->margin_cells = (int64_t)ceil(margin_cells - 1e-9);
    out->dilation_radius2 = (int64_t)floor(margin_cells * margin_cells / 4.0 + 1e-9);
    const int n_lm = landmasses->n;
    out->landmass_region =
        tb_calloc((size_t)n_lm + 1, sizeof *out->landmass_region, "landmass regions", err);
    if (!out->landmass_region)
        return -1;
    if (n_lm == 0)
        return 0;
    tb_ccl_t ccl = {0};
    int32_t *comp_group = NULL, *lm_comp = NULL;
    s_group_t *groups = NULL;
    int rc = -1, n_groups = 0;
    uint8_t *dilated = s_dilated_land(landmasses, w, h, out->dilation_radius2, threads, err);
    if (!dilated)
        goto done;
    static const uint8_t s_one[256] = {[1] = 1};
    int ccl_rc = tb_ccl_label(dilated, w, h, true, s_one, &ccl, err);
    free(dilated);
    if (ccl_rc != 0)
        goto done;
    comp_group = malloc(sizeof *comp_group * (size_t)ccl.n_components);
    groups = calloc((size_t)n_lm, sizeof *groups);
    lm_comp = malloc(sizeof *lm_comp * (size_t)n_lm);
    if (!comp_group || !groups || !lm_comp) {
        tb_err_set(err, TB_E_NOMEM, "regions: out of memory grouping %d landmasses", n_lm);
        goto done;
    }
    /* Each landmass belongs to the dilated component holding its first cell (land lies inside its
     * own dilation). A component without land (a dilation artefact) makes no region. */
    for (int64_t c = 0; c < ccl.n_components; c++)
        comp_group[c] = -1;
    for (int k = 0; k < n_lm; k++) {
        const tb_landmass_t *m = &landmasses->kept[k];
        int64_t run = tb_ccl_find(&ccl, m->first_index % w, m->first_index / w);
        if (run < 0) {
            tb_err_set(err, TB_E_INTERNAL, "regions: landmass %d lies outside its own dilation",
                       k + 1);
            goto done;
        }
        int comp = ccl.runs[run].comp;
        lm_comp[k] = comp;
        if (comp_group[comp] < 0) {
            comp_group[comp] = n_groups;
            groups[n_groups++] = (s_group_t){.comp = comp, .first_index = m->first_index};
        }
        s_group_t *g = &groups[comp_group[comp]];
        g->sum_cos += m->sum_cos;
        g->sum_sin += m->sum_sin;
        g->sum_y += m->sum_y;
        g->cells += m->cells;
        if (m->first_index < g->first_index)
            g->first_index = m->first_index;
    }
    for (int g = 0; g < n_groups; g++)
        tb_landmass_centroid(groups[g].sum_cos, groups[g].sum_sin, groups[g].sum_y, groups[g].cells,
                             w, &groups[g].cx, &groups[g].cy);
    qsort(groups, (size_t)n_groups, sizeof *groups, s_cmp_group);
    for (int g = 0; g < n_groups; g++)
        comp_group[groups[g].comp] = g; /* component -> region index, in id order */
    out->regions = tb_calloc((size_t)n_groups, sizeof *out->regions, "regions", err);
    if (!out->regions)
        goto done;
    out->n = n_groups;
    for (int k = 0; k < n_lm; k++)
        out->regions[comp_group[lm_comp[k]]].n_landmasses++;
    for (int g = 0; g < n_groups; g++) {
        tb_plan_region_t *r = &out->regions[g];
        r->id = g + 1;
        r->centroid_x = groups[g].cx;
        r->centroid_y = groups[g].cy;
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
    for (int g = 0; g < n_groups; g++)
        if (s_fill_region(&out->regions[g], landmasses, classes, w, h, cell_m, out->margin_cells,
                          err) != 0)
            goto done;
    rc = 0;
done:
    tb_ccl_free(&ccl);
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
