/* The plan phase; see plan.h. The order of work (docs/plan.md): classify at the
 * painting's resolution (unmatched pixels and speckle are painting artefacts), expand to cells,
 * measure the seam, find and drop landmasses, group regions, write the landmass raster, fill the
 * class table. */
#include "common/json.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tb_plan_t {
    tb_manifest_t manifest;
    tb_plan_summary_t summary;
    tb_grid_t *classes; /* U8 over the planet */
    tb_grid_t *labels;  /* I32 landmass ids over the planet */
    tb_landmasses_t landmasses;
    tb_regions_t regions;
    int n_class_rows;
    tb_plan_class_row_t class_rows[TB_MAX_CLASSES];
};

static const double S_DEG = 57.29577951308232;

void tb_plan_class_angles(const tb_manifest_t *m, int class_index, tb_plan_class_row_t *row)
{
    const tb_class_t *c = &m->legend.classes[class_index];
    const double area_m2 = m->cell_m * m->cell_m;
    const double ka = m->solve.k * c->k_mult * pow(area_m2, m->solve.m); /* K k_mult A^m, 1/yr */
    const double inv_n = 1.0 / m->solve.n;
    memset(row, 0, sizeof *row);
    row->class_index = class_index;
    row->massif_mm_yr = c->uplift_mm_yr;
    row->floor_mm_yr = c->massif_floor_mm_yr;
    row->k_mult = c->k_mult;
    double s_massif = pow(c->uplift_mm_yr * 1e-3 / ka, inv_n);
    double s_floor = pow(c->massif_floor_mm_yr * 1e-3 / ka, inv_n);
    row->divide_deg = atan(s_massif) * S_DEG;
    row->floor_divide_deg = atan(s_floor) * S_DEG;
    row->typical_deg = atan(s_massif / 3.0) * S_DEG;
    row->floor_typical_deg = atan(s_floor / 3.0) * S_DEG;
    row->u_max_mm_yr = pow(tan(m->solve.talus_deg / S_DEG), m->solve.n) * ka * 1e3;
    row->clamped = row->massif_mm_yr > row->u_max_mm_yr;
    row->floor_clamped = row->floor_mm_yr > row->u_max_mm_yr;
}

/* Classifies the painting into the planet class grid, expanding each pixel to a square of cells. */
static int s_classify(tb_plan_t *p, const tb_image_t *painting, tb_err_t *err)
{
    const tb_manifest_t *m = &p->manifest;
    const char *name = m->is_demo ? "the demo painting" : m->painting_path;
    tb_plan_summary_t *s = &p->summary;
    uint8_t *cells = tb_grid_u8(p->classes);
    int64_t k = s->cells_per_pixel;
    uint8_t *px = cells;
    if (k > 1) {
        px = tb_malloc((size_t)painting->w * painting->h, "painting classes", err);
        if (!px)
            return -1;
    }
    if (tb_classify_painting(painting, name, &m->legend, px, &s->classify, err) != 0) {
        if (px != cells)
            free(px);
        return -1;
    }
    if (k > 1) {
        /* Cell (i, j) takes pixel (i / k, j / k): the pixel whose square holds its centre. */
        for (int64_t j = 0; j < s->planet_h; j++) {
            const uint8_t *src = px + (size_t)(j / k) * painting->w;
            uint8_t *dst = cells + (size_t)j * s->planet_w;
            for (int64_t i = 0; i < s->planet_w; i++)
                dst[i] = src[i / k];
        }
        free(px);
    }
    return 0;
}

/* Rows where the two edge columns, which are neighbours across the seam, disagree about land. */
static void s_seam(tb_plan_t *p)
{
    const tb_legend_t *legend = &p->manifest.legend;
    const uint8_t *c = tb_grid_cu8(p->classes);
    int64_t w = p->summary.planet_w, h = p->summary.planet_h, rows = 0;
    for (int64_t j = 0; j < h; j++) {
        uint8_t a = c[tb_idx(w, 0, j)], b = c[tb_idx(w, w - 1, j)];
        bool la = a < legend->n_classes && legend->classes[a].kind == TB_CLASS_LAND;
        bool lb = b < legend->n_classes && legend->classes[b].kind == TB_CLASS_LAND;
        rows += la != lb;
    }
    p->summary.seam_rows = rows;
    p->summary.seam_percent = h ? 100.0 * (double)rows / (double)h : 0;
}

/* The landmass id raster, from the runs of the kept landmasses. */
static void s_fill_labels(tb_plan_t *p)
{
    int32_t *lab = tb_grid_i32(p->labels);
    const tb_ccl_t *ccl = &p->landmasses.ccl;
    int64_t w = p->summary.planet_w;
    for (int64_t k = 0; k < ccl->n_runs; k++) {
        const tb_run_t *run = &ccl->runs[k];
        int32_t id = p->landmasses.comp_id[run->comp];
        if (!id)
            continue;
        int32_t *row = lab + tb_idx(w, run->x0, run->y);
        for (int64_t x = 0; x <= run->x1 - run->x0; x++)
            row[x] = id;
    }
}

static void s_class_table(tb_plan_t *p)
{
    const tb_manifest_t *m = &p->manifest;
    p->n_class_rows = 0;
    for (int c = 0; c < m->legend.n_classes; c++) {
        if (m->legend.classes[c].kind != TB_CLASS_LAND)
            continue;
        tb_plan_class_row_t *row = &p->class_rows[p->n_class_rows++];
        tb_plan_class_angles(m, c, row);
        for (int r = 0; r < p->regions.n; r++)
            row->cells += p->regions.regions[r].class_cells[c];
    }
}

/* A planet needs both: its regions are landmasses with an ocean margin, and the solve's base level
 * is the sea (docs/manifest.md, "legend"). Refused at plan time, before anything runs. */
int tb_plan_check_jobs(const tb_plan_t *p, const tb_uplift_probes_t *probes, tb_err_t *err)
{
    return tb_region_spec_selfcheck(&p->manifest, probes, p->summary.planet_h, err);
}

int tb_plan_check_land_and_sea(const tb_plan_t *p, tb_err_t *err)
{
    const tb_manifest_t *m = &p->manifest;
    const char *name = m->is_demo ? "the demo painting" : m->painting_path;
    const uint8_t *classes = tb_grid_cu8(p->classes);
    int64_t cells = p->summary.planet_w * p->summary.planet_h;
    int64_t land = 0, ocean = 0;
    for (int64_t i = 0; i < cells; i++) {
        int c = classes[i];
        if (c < m->legend.n_classes && m->legend.classes[c].kind == TB_CLASS_OCEAN)
            ocean++;
        else
            land++;
    }
    if (ocean == 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: no ocean: every pixel is painted with a land class; a planet needs "
                          "sea round its land (paint some with an ocean class of the legend)",
                          name);
    if (land == 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: no land: every pixel is painted with an ocean class; there is "
                          "nothing to solve (paint some with a land class of the legend)",
                          name);
    return 0;
}

tb_plan_t *tb_plan_new(const tb_manifest_t *manifest, const tb_image_t *painting, int threads,
                       tb_err_t *err)
{
    if (manifest->planet_w <= 0) {
        tb_err_set(err, TB_E_INTERNAL, "plan: the manifest was not finished (no planet width)");
        return NULL;
    }
    if (painting->format != TB_PNG_RGB8 || painting->w == 0 || painting->h == 0) {
        tb_err_set(err, TB_E_INTERNAL, "plan: the painting must be a decoded 8-bit RGB image");
        return NULL;
    }
    const char *name = manifest->is_demo ? "the demo painting" : manifest->painting_path;
    if (manifest->planet_w % (int64_t)painting->w != 0) {
        tb_err_set(err, TB_E_INVALID,
                   "%s: %u pixels wide, which does not divide the planet's %lld cells "
                   "(circumference_km %g at cell_m %g); paint it %lld pixels wide or another "
                   "divisor of %lld",
                   name, painting->w, (long long)manifest->planet_w, manifest->circumference_km,
                   manifest->cell_m, (long long)manifest->planet_w, (long long)manifest->planet_w);
        return NULL;
    }
    tb_plan_t *p = tb_calloc(1, sizeof *p, "plan", err);
    if (!p)
        return NULL;
    p->manifest = *manifest;
    tb_plan_summary_t *s = &p->summary;
    s->painting_w = painting->w;
    s->painting_h = painting->h;
    s->cells_per_pixel = manifest->planet_w / (int64_t)painting->w;
    s->planet_w = manifest->planet_w;
    s->planet_h = (int64_t)painting->h * s->cells_per_pixel;
    tb_frame_t planet;
    if (tb_frame_make(&planet, s->planet_w, s->planet_h, manifest->cell_m, 0, 0, s->planet_w,
                      s->planet_h, err) != 0)
        goto fail;
    p->classes = tb_grid_new(&planet, TB_U8, err);
    if (!p->classes || s_classify(p, painting, err) != 0)
        goto fail;
    s_seam(p);
    uint8_t *classes = tb_grid_u8(p->classes);
    if (tb_landmasses_find(classes, s->planet_w, s->planet_h, &manifest->legend, manifest->cell_m,
                           manifest->regions.min_landmass_km2, &p->landmasses, err) != 0)
        goto fail;
    s->landmasses_found = p->landmasses.found;
    s->landmasses_kept = p->landmasses.n;
    s->dropped = p->landmasses.dropped;
    s->dropped_cells = p->landmasses.dropped_cells;
    s->dropped_area_km2 = p->landmasses.dropped_area_km2;
    if (tb_regions_group(classes, s->planet_w, s->planet_h, manifest->cell_m, &p->landmasses,
                         manifest->regions.ocean_margin_km, threads, &p->regions, err) != 0)
        goto fail;
    s->margin_cells = p->regions.margin_cells;
    s->dilation_radius2 = p->regions.dilation_radius2;
    for (int r = 0; r < p->regions.n; r++) {
        const tb_plan_region_t *reg = &p->regions.regions[r];
        s->land_cells += reg->land_cells;
        s->region_cells += reg->box_cells;
        if (reg->box_cells > s->largest_region_cells)
            s->largest_region_cells = reg->box_cells;
    }
    p->labels = tb_grid_new(&planet, TB_I32, err);
    if (!p->labels)
        goto fail;
    s_fill_labels(p);
    s_class_table(p);
    return p;
fail:
    tb_plan_destroy(&p);
    return NULL;
}

void tb_plan_destroy(tb_plan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_plan_t *p = *self_p;
    tb_grid_destroy(&p->classes);
    tb_grid_destroy(&p->labels);
    tb_landmasses_free(&p->landmasses);
    tb_regions_free(&p->regions);
    free(p);
    *self_p = NULL;
}

const tb_manifest_t *tb_plan_manifest(const tb_plan_t *self)
{
    return &self->manifest;
}
const tb_plan_summary_t *tb_plan_summary(const tb_plan_t *self)
{
    return &self->summary;
}
const tb_grid_t *tb_plan_classes(const tb_plan_t *self)
{
    return self->classes;
}
const tb_grid_t *tb_plan_landmass_labels(const tb_plan_t *self)
{
    return self->labels;
}
int tb_plan_region_count(const tb_plan_t *self)
{
    return self->regions.n;
}

const tb_plan_region_t *tb_plan_region(const tb_plan_t *self, int index)
{
    return (index >= 0 && index < self->regions.n) ? &self->regions.regions[index] : NULL;
}

int tb_plan_landmass_count(const tb_plan_t *self)
{
    return self->landmasses.n;
}

const tb_landmass_t *tb_plan_landmass(const tb_plan_t *self, int index)
{
    return (index >= 0 && index < self->landmasses.n) ? &self->landmasses.kept[index] : NULL;
}

int tb_plan_landmass_region(const tb_plan_t *self, int landmass_id)
{
    if (landmass_id < 1 || landmass_id > self->landmasses.n)
        return 0;
    return self->regions.landmass_region[landmass_id];
}

int tb_plan_class_count(const tb_plan_t *self)
{
    return self->n_class_rows;
}

const tb_plan_class_row_t *tb_plan_class_row(const tb_plan_t *self, int index)
{
    return (index >= 0 && index < self->n_class_rows) ? &self->class_rows[index] : NULL;
}

double tb_plan_estimate_floor_s(const tb_plan_t *self, int cores)
{
    if (cores < 1)
        cores = 1;
    return (double)self->summary.region_cells * (double)self->manifest.solve.steps *
           TB_PLAN_NS_PER_CELL_STEP * 1e-9 / (double)cores;
}

int tb_plan_region_grids(const tb_plan_t *self, int region_index, tb_grid_t **classes,
                         tb_grid_t **solve_mask, tb_err_t *err)
{
    if (classes)
        *classes = NULL;
    if (solve_mask)
        *solve_mask = NULL;
    const tb_plan_region_t *r = tb_plan_region(self, region_index);
    if (!r)
        return tb_err_set(err, TB_E_INVALID, "plan: no region with index %d (there are %d)",
                          region_index, self->regions.n);
    const tb_frame_t *box = &r->box;
    tb_grid_t *cg = classes ? tb_grid_new(box, TB_U8, err) : NULL;
    tb_grid_t *mg = solve_mask ? tb_grid_new(box, TB_U8, err) : NULL;
    if ((classes && !cg) || (solve_mask && !mg)) {
        tb_grid_destroy(&cg);
        tb_grid_destroy(&mg);
        return -1;
    }
    const uint8_t *pc = tb_grid_cu8(self->classes);
    const int32_t *pl = tb_grid_ci32(self->labels);
    const int32_t *lm_region = self->regions.landmass_region;
    const int64_t W = self->summary.planet_w;
    for (int64_t j = 0; j < box->h; j++) {
        size_t src_row = tb_idx(W, 0, box->y0 + j);
        for (int64_t i = 0; i < box->w; i++) {
            size_t src = src_row + (size_t)tb_frame_lattice_x(box, i);
            size_t dst = tb_idx(box->w, i, j);
            if (cg)
                tb_grid_u8(cg)[dst] = pc[src];
            if (mg)
                tb_grid_u8(mg)[dst] = pl[src] > 0 && lm_region[pl[src]] == r->id;
        }
    }
    if (classes)
        *classes = cg;
    if (solve_mask)
        *solve_mask = mg;
    return 0;
}

/* ---- JSON ---- */

static cJSON *s_box_json(const tb_frame_t *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "x0", (double)f->x0);
    cJSON_AddNumberToObject(o, "y0", (double)f->y0);
    cJSON_AddNumberToObject(o, "w", (double)f->w);
    cJSON_AddNumberToObject(o, "h", (double)f->h);
    return o;
}

static cJSON *s_summary_json(const tb_plan_t *p)
{
    const tb_plan_summary_t *s = &p->summary;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "planet_w", (double)s->planet_w);
    cJSON_AddNumberToObject(o, "planet_h", (double)s->planet_h);
    cJSON_AddNumberToObject(o, "cell_m", p->manifest.cell_m);
    cJSON_AddNumberToObject(o, "painting_w", (double)s->painting_w);
    cJSON_AddNumberToObject(o, "painting_h", (double)s->painting_h);
    cJSON_AddNumberToObject(o, "cells_per_pixel", (double)s->cells_per_pixel);
    cJSON *u = cJSON_AddObjectToObject(o, "unmatched");
    cJSON_AddNumberToObject(u, "pixels", (double)s->classify.unmatched_pixels);
    cJSON_AddNumberToObject(u, "fraction", s->classify.unmatched_fraction);
    cJSON_AddNumberToObject(u, "colours", (double)s->classify.unmatched_colours);
    cJSON_AddNumberToObject(u, "fill_rounds", s->classify.fill_rounds);
    cJSON *top = cJSON_AddArrayToObject(u, "most_common");
    for (int k = 0; k < s->classify.n_top; k++) {
        const tb_classify_colour_t *c = &s->classify.top[k];
        char hex[8];
        snprintf(hex, sizeof hex, "#%02x%02x%02x", c->rgb[0], c->rgb[1], c->rgb[2]);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "colour", hex);
        cJSON_AddNumberToObject(e, "pixels", (double)c->pixels);
        cJSON_AddNumberToObject(e, "example_x", (double)c->example_x);
        cJSON_AddNumberToObject(e, "example_y", (double)c->example_y);
        cJSON_AddItemToArray(top, e);
    }
    cJSON_AddNumberToObject(o, "speckle_pixels", (double)s->classify.speckle_pixels);
    cJSON *seam = cJSON_AddObjectToObject(o, "seam_disagreement");
    cJSON_AddNumberToObject(seam, "rows", (double)s->seam_rows);
    cJSON_AddNumberToObject(seam, "percent", s->seam_percent);
    cJSON *lm = cJSON_AddObjectToObject(o, "landmasses");
    cJSON_AddNumberToObject(lm, "found", (double)s->landmasses_found);
    cJSON_AddNumberToObject(lm, "kept", (double)s->landmasses_kept);
    cJSON_AddNumberToObject(lm, "dropped", (double)s->dropped);
    cJSON_AddNumberToObject(lm, "dropped_cells", (double)s->dropped_cells);
    cJSON_AddNumberToObject(lm, "dropped_area_km2", s->dropped_area_km2);
    cJSON_AddNumberToObject(o, "land_cells", (double)s->land_cells);
    cJSON_AddNumberToObject(o, "land_fraction",
                            (double)s->land_cells / (double)(s->planet_w * s->planet_h));
    cJSON_AddNumberToObject(o, "region_cells", (double)s->region_cells);
    cJSON_AddNumberToObject(o, "largest_region_cells", (double)s->largest_region_cells);
    cJSON_AddNumberToObject(o, "margin_cells", (double)s->margin_cells);
    cJSON_AddNumberToObject(o, "dilation_radius2", (double)s->dilation_radius2);
    return o;
}

static cJSON *s_classes_json(const tb_plan_t *p)
{
    cJSON *arr = cJSON_CreateArray();
    for (int k = 0; k < p->n_class_rows; k++) {
        const tb_plan_class_row_t *r = &p->class_rows[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", p->manifest.legend.classes[r->class_index].name);
        cJSON_AddNumberToObject(o, "cells", (double)r->cells);
        cJSON_AddNumberToObject(o, "uplift_mm_yr", r->massif_mm_yr);
        cJSON_AddNumberToObject(o, "floor_mm_yr", r->floor_mm_yr);
        cJSON_AddNumberToObject(o, "k_mult", r->k_mult);
        cJSON_AddNumberToObject(o, "divide_deg", r->divide_deg);
        cJSON_AddNumberToObject(o, "floor_divide_deg", r->floor_divide_deg);
        cJSON_AddNumberToObject(o, "typical_deg", r->typical_deg);
        cJSON_AddNumberToObject(o, "floor_typical_deg", r->floor_typical_deg);
        cJSON_AddNumberToObject(o, "u_max_mm_yr", r->u_max_mm_yr);
        cJSON_AddBoolToObject(o, "clamped", r->clamped);
        cJSON_AddBoolToObject(o, "floor_clamped", r->floor_clamped);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *s_regions_json(const tb_plan_t *p)
{
    cJSON *arr = cJSON_CreateArray();
    const tb_legend_t *legend = &p->manifest.legend;
    for (int k = 0; k < p->regions.n; k++) {
        const tb_plan_region_t *r = &p->regions.regions[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", r->id);
        cJSON_AddItemToObject(o, "box", s_box_json(&r->box));
        cJSON_AddItemToObject(o, "landmasses",
                              cJSON_CreateIntArray(r->landmass_ids, r->n_landmasses));
        cJSON_AddNumberToObject(o, "land_cells", (double)r->land_cells);
        cJSON_AddNumberToObject(o, "box_cells", (double)r->box_cells);
        cJSON *cc = cJSON_AddObjectToObject(o, "class_cells");
        for (int c = 0; c < legend->n_classes; c++)
            if (r->class_cells[c])
                cJSON_AddNumberToObject(cc, legend->classes[c].name, (double)r->class_cells[c]);
        cJSON_AddBoolToObject(o, "straddles_seam", r->straddles_seam);
        cJSON_AddBoolToObject(o, "box_wraps", r->box_wraps);
        cJSON *arc = cJSON_AddObjectToObject(o, "land_arc");
        cJSON_AddNumberToObject(arc, "x0", (double)r->land_arc.x0);
        cJSON_AddNumberToObject(arc, "w", (double)r->land_arc.w);
        cJSON_AddNumberToObject(arc, "y0", (double)r->land_y0);
        cJSON_AddNumberToObject(arc, "y1", (double)r->land_y1);
        cJSON *cen = cJSON_AddObjectToObject(o, "centroid");
        cJSON_AddNumberToObject(cen, "x", r->centroid_x);
        cJSON_AddNumberToObject(cen, "y", r->centroid_y);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *s_landmasses_json(const tb_plan_t *p)
{
    cJSON *arr = cJSON_CreateArray();
    const double cell_km2 = p->manifest.cell_m * p->manifest.cell_m * 1e-6;
    for (int k = 0; k < p->landmasses.n; k++) {
        const tb_landmass_t *m = &p->landmasses.kept[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", k + 1);
        cJSON_AddNumberToObject(o, "region", p->regions.landmass_region[k + 1]);
        cJSON_AddNumberToObject(o, "cells", (double)m->cells);
        cJSON_AddNumberToObject(o, "area_km2", (double)m->cells * cell_km2);
        cJSON_AddBoolToObject(o, "crosses_seam", tb_arc_crosses_seam(m->arc, p->summary.planet_w));
        cJSON *cen = cJSON_AddObjectToObject(o, "centroid");
        cJSON_AddNumberToObject(cen, "x", m->centroid_x);
        cJSON_AddNumberToObject(cen, "y", m->centroid_y);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

char *tb_plan_to_json(const tb_plan_t *self)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    char *manifest = tb_manifest_to_json(&self->manifest);
    cJSON *mj = manifest ? cJSON_Parse(manifest) : NULL;
    free(manifest);
    if (mj)
        cJSON_AddItemToObject(root, "manifest", mj);
    cJSON_AddItemToObject(root, "summary", s_summary_json(self));
    cJSON *snapped = cJSON_AddObjectToObject(root, "snapped_wavelengths_km");
    cJSON_AddNumberToObject(snapped, "massif", self->manifest.massif.wavelength_snapped_km);
    cJSON_AddNumberToObject(snapped, "rock", self->manifest.rock.wavelength_snapped_km);
    cJSON_AddNumberToObject(snapped, "fault_grain",
                            self->manifest.faults.grain_wavelength_snapped_km);
    cJSON_AddItemToObject(root, "classes", s_classes_json(self));
    cJSON_AddItemToObject(root, "regions", s_regions_json(self));
    cJSON_AddItemToObject(root, "landmasses", s_landmasses_json(self));
    cJSON *est = cJSON_AddObjectToObject(root, "estimate");
    cJSON_AddNumberToObject(est, "region_cells", (double)self->summary.region_cells);
    cJSON_AddNumberToObject(est, "steps", self->manifest.solve.steps);
    cJSON_AddNumberToObject(est, "ns_per_cell_step", TB_PLAN_NS_PER_CELL_STEP);
    cJSON_AddNumberToObject(est, "one_core_floor_s", tb_plan_estimate_floor_s(self, 1));
    cJSON_AddStringToObject(est, "note",
                            "a floor: calibrated on plains; steep classes pay more hillslope "
                            "sub-steps, and the largest region sets the wall time");
    char *s = tb_json_print(root, true);
    cJSON_Delete(root);
    return s;
}
