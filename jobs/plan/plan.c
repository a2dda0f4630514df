/* The plan phase; see plan.h. The order of work (docs/plan.md, "The streamed plan"), as passes
 * over the painting and the two rasters, each a row at a time:
 *   1. the painting, once: match every pixel (classify.h) into the class raster, recording the
 *      unmatched ones; then the fill, in memory, and the refusal when too many are unmatched;
 *   2. the class raster, read and rewritten: the fill laid in, the despeckle, the expansion of
 *      each pixel to a square of cells, the seam, the landmasses' first pass (landmasses.h);
 *   3. the class raster, read: every kept landmass's centroid sums and class cells, and its land
 *      dilated and labelled into regions (regions.h);
 *   4. the class raster, read and rewritten, and the label raster's land written: the drop, the
 *      landmass ids, the hash of the final classes and the land and ocean cells.
 * Then the regions and the class table, from what the passes counted.
 */
#include "common/json.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct tb_plan_t {
    tb_manifest_t manifest;
    tb_plan_summary_t summary;
    tb_raster_t classes; /* u8 over the planet: the caller's, or own_classes */
    tb_raster_t labels;  /* i32 landmass ids over the planet: the caller's, or own_labels */
    void *own_classes, *own_labels;
    uint64_t classes_xxh3;
    int64_t land_total, ocean_total; /* cells of the final class raster */
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

/* The working state of tb_plan_new: what the passes share. */
typedef struct {
    tb_plan_t *p;
    const char *name; /* the painting, in messages */
    int64_t pw, ph, k, W, H, band;
    bool is_land[256];
    uint8_t *pre[3]; /* pass 2: painting rows before the despeckle (ring by row) */
    uint8_t *post;   /* pass 2: a painting row after it */
    uint8_t *cells;  /* a planet row */
    uint8_t *mask;   /* pass 3: a row of kept land */
    tb_classify_t *classify;
    tb_landmass_finder_t *finder;
    tb_region_grouper_t *grouper;
} s_work_t;

/* Releases rows [*done, upto) of r once a band of them is finished (or at the end of a pass). */
static void s_release(const tb_raster_t *r, int64_t *done, int64_t upto, int64_t band, bool end)
{
    if (upto - *done >= band || (end && upto > *done)) {
        tb_raster_release(r, *done, upto);
        *done = upto;
    }
}

/* Pass 1: the painting's rows, matched, into the class raster; with more than one cell a pixel,
 * pixel row y sits in the first pw bytes of cell row y k until pass 2 expands it. */
static int s_pass_match(s_work_t *w, const tb_row_source_t *painting, tb_err_t *err)
{
    tb_plan_t *p = w->p;
    uint8_t *rgb = tb_malloc((size_t)w->pw * 3, "painting row", err);
    if (!rgb)
        return -1;
    int64_t done = 0;
    for (int64_t y = 0; y < w->ph; y++) {
        uint8_t *dst = tb_raster_row(&p->classes, y * w->k);
        if (tb_row_source_read(painting, 1, rgb, err) != 0 ||
            tb_classify_row(w->classify, rgb, dst, err) != 0) {
            free(rgb);
            return -1;
        }
        s_release(&p->classes, &done, (y + 1) * w->k, w->band, y + 1 == w->ph);
    }
    free(rgb);
    return tb_classify_finish(w->classify, w->name, &p->summary.classify, err);
}

/* Pixel row y as pass 1 left it, with the fill laid in, into pre[y % 3]. */
static void s_load_pixel_row(s_work_t *w, int64_t y)
{
    memcpy(w->pre[y % 3], tb_raster_row(&w->p->classes, y * w->k), (size_t)w->pw);
    tb_classify_fill_row(w->classify, y, w->pre[y % 3]);
}

/* Pass 2: despeckle each painting row (from the rows either side of it as the fill left them),
 * expand it to its k rows of cells, write those and hand them to the seam and the landmasses. */
static int s_pass_despeckle(s_work_t *w, tb_err_t *err)
{
    tb_plan_t *p = w->p;
    tb_plan_summary_t *s = &p->summary;
    int64_t done = 0, seam = 0;
    s_load_pixel_row(w, 0);
    for (int64_t y = 0; y < w->ph; y++) {
        if (y + 1 < w->ph)
            s_load_pixel_row(w, y + 1);
        const uint8_t *above = y > 0 ? w->pre[(y - 1) % 3] : NULL;
        const uint8_t *below = y + 1 < w->ph ? w->pre[(y + 1) % 3] : NULL;
        s->classify.speckle_pixels +=
            tb_classify_despeckle_row(above, w->pre[y % 3], below, w->pw, true, w->post);
        /* Cell (i, j) takes pixel (i / k, j / k): the pixel whose square holds its centre. */
        const uint8_t *cells = w->post;
        if (w->k > 1) {
            for (int64_t i = 0; i < w->W; i++)
                w->cells[i] = w->post[i / w->k];
            cells = w->cells;
        }
        for (int64_t j = y * w->k; j < (y + 1) * w->k; j++) {
            memcpy(tb_raster_row(&p->classes, j), cells, (size_t)w->W);
            seam += w->is_land[cells[0]] != w->is_land[cells[w->W - 1]];
            if (tb_landmass_finder_scan(w->finder, cells, err) != 0)
                return -1;
        }
        s_release(&p->classes, &done, (y + 1) * w->k, w->band, y + 1 == w->ph);
    }
    s->seam_rows = seam;
    s->seam_percent = w->H ? 100.0 * (double)seam / (double)w->H : 0;
    p->summary.provisional_labels = tb_landmass_finder_labels(w->finder);
    p->summary.unmatched_recorded = tb_classify_recorded(w->classify);
    return tb_landmass_finder_resolve(w->finder, err);
}

/* Pass 3: the kept landmasses' sums, and their land into the region grouper. */
static int s_pass_measure(s_work_t *w, int threads, tb_err_t *err)
{
    tb_plan_t *p = w->p;
    int n_firsts;
    const int64_t *firsts = tb_landmass_finder_firsts(w->finder, &n_firsts);
    w->grouper =
        tb_region_grouper_new(w->W, w->H, p->manifest.cell_m, p->manifest.regions.ocean_margin_km,
                              firsts, n_firsts, w->band, threads, err);
    if (!w->grouper)
        return -1;
    int64_t done = 0;
    for (int64_t y = 0; y < w->H; y++) {
        if (tb_landmass_finder_measure(w->finder, tb_raster_row(&p->classes, y), w->mask, err) !=
                0 ||
            tb_region_grouper_row(w->grouper, w->mask, err) != 0)
            return -1;
        s_release(&p->classes, &done, y + 1, w->band, y + 1 == w->H);
    }
    if (tb_landmass_finder_number(w->finder, err) != 0)
        return -1;
    const tb_landmasses_t *lm = tb_landmass_finder_result(w->finder);
    int *id_of_first =
        tb_malloc(sizeof *id_of_first * (size_t)(n_firsts ? n_firsts : 1), "landmass ids", err);
    if (!id_of_first)
        return -1;
    for (int k = 0; k < n_firsts; k++)
        id_of_first[k] = tb_landmass_finder_id(w->finder, k);
    int rc = tb_region_grouper_finish(w->grouper, lm, id_of_first, &p->regions, err);
    free(id_of_first);
    return rc;
}

/* Pass 4: the drop and the landmass ids, row by row, and what the caller reads of the result
 * without reading the rasters again: the hash of the classes, land and ocean cells. */
static int s_pass_label(s_work_t *w, tb_err_t *err)
{
    tb_plan_t *p = w->p;
    const tb_legend_t *legend = &p->manifest.legend;
    XXH3_state_t *h = XXH3_createState();
    if (!h || XXH3_64bits_reset(h) != XXH_OK) {
        XXH3_freeState(h);
        return tb_err_set(err, TB_E_NOMEM, "plan: out of memory for a hash");
    }
    bool ocean[256] = {false};
    for (int c = 0; c < legend->n_classes; c++)
        ocean[c] = legend->classes[c].kind == TB_CLASS_OCEAN;
    int64_t done = 0;
    for (int64_t y = 0; y < w->H; y++) {
        uint8_t *row = tb_raster_row(&p->classes, y);
        if (tb_landmass_finder_label(w->finder, row, tb_raster_row(&p->labels, y), err) != 0) {
            XXH3_freeState(h);
            return -1;
        }
        XXH3_64bits_update(h, row, (size_t)w->W);
        for (int64_t x = 0; x < w->W; x++)
            p->ocean_total += ocean[row[x]];
        bool end = y + 1 == w->H;
        int64_t was = done;
        s_release(&p->classes, &done, y + 1, w->band, end);
        if (done != was)
            tb_raster_release(&p->labels, was, done);
    }
    p->land_total = w->W * w->H - p->ocean_total;
    p->classes_xxh3 = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    return 0;
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

/* What the bake's first region job would refuse, refused here (plan.h). */
int tb_plan_check_jobs(const tb_plan_t *p, const tb_uplift_probes_t *probes, tb_err_t *err)
{
    return tb_region_spec_selfcheck(&p->manifest, probes, p->summary.planet_h, err);
}

/* A planet needs both: its regions are landmasses with an ocean margin, and the solve's base level
 * is the sea (docs/manifest.md, "legend"). Refused at plan time, before anything runs. */
int tb_plan_check_land_and_sea(const tb_plan_t *p, tb_err_t *err)
{
    const tb_manifest_t *m = &p->manifest;
    const char *name = m->is_demo ? "the demo painting" : m->painting_path;
    if (p->ocean_total == 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: no ocean: every pixel is painted with a land class; a planet needs "
                          "sea round its land (paint some with an ocean class of the legend)",
                          name);
    if (p->land_total == 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: no land: every pixel is painted with an ocean class; there is "
                          "nothing to solve (paint some with a land class of the legend)",
                          name);
    return 0;
}

/* The raster the plan writes: the caller's (checked against the planet), or its own. */
static int s_raster(const tb_raster_t *given, int64_t w, int64_t h, size_t elem, void **own,
                    const char *what, tb_raster_t *out, tb_err_t *err)
{
    if (given) {
        if (given->w != w || given->h != h || given->elem_bytes != elem || !given->data)
            return tb_err_set(err, TB_E_INTERNAL,
                              "plan: the %s raster is %lld x %lld of %zu bytes, the planet %lld x "
                              "%lld of %zu",
                              what, (long long)given->w, (long long)given->h, given->elem_bytes,
                              (long long)w, (long long)h, elem);
        *out = *given;
        return 0;
    }
    *own = tb_calloc((size_t)w * (size_t)h, elem, what, err); /* the labels must start at 0 */
    if (!*own)
        return -1;
    *out = (tb_raster_t){.data = *own, .w = w, .h = h, .elem_bytes = elem};
    return 0;
}

static void s_work_free(s_work_t *w)
{
    for (int k = 0; k < 3; k++)
        free(w->pre[k]);
    free(w->post);
    free(w->cells);
    free(w->mask);
    tb_classify_destroy(&w->classify);
    tb_landmass_finder_destroy(&w->finder);
    tb_region_grouper_destroy(&w->grouper);
}

tb_plan_t *tb_plan_new_banded(const tb_manifest_t *manifest, const tb_row_source_t *painting,
                              const tb_raster_t *classes, const tb_raster_t *labels, int threads,
                              int64_t band_rows, tb_err_t *err)
{
    if (manifest->planet_w <= 0) {
        tb_err_set(err, TB_E_INTERNAL, "plan: the manifest was not finished (no planet width)");
        return NULL;
    }
    if (painting->format != TB_PNG_RGB8 || painting->w <= 0 || painting->h <= 0) {
        tb_err_set(err, TB_E_INTERNAL, "plan: the painting must be 8-bit RGB rows");
        return NULL;
    }
    const char *name = manifest->is_demo ? "the demo painting" : manifest->painting_path;
    if (manifest->planet_w % painting->w != 0) {
        tb_err_set(err, TB_E_INVALID,
                   "%s: %lld pixels wide, which does not divide the planet's %lld cells "
                   "(circumference_km %g at cell_m %g); paint it %lld pixels wide or another "
                   "divisor of %lld",
                   name, (long long)painting->w, (long long)manifest->planet_w,
                   manifest->circumference_km, manifest->cell_m, (long long)manifest->planet_w,
                   (long long)manifest->planet_w);
        return NULL;
    }
    tb_plan_t *p = tb_calloc(1, sizeof *p, "plan", err);
    if (!p)
        return NULL;
    p->manifest = *manifest;
    tb_plan_summary_t *s = &p->summary;
    s->painting_w = painting->w;
    s->painting_h = painting->h;
    s->cells_per_pixel = manifest->planet_w / painting->w;
    s->planet_w = manifest->planet_w;
    s->planet_h = painting->h * s->cells_per_pixel;
    s_work_t w = {.p = p,
                  .name = name,
                  .pw = painting->w,
                  .ph = painting->h,
                  .k = s->cells_per_pixel,
                  .W = s->planet_w,
                  .H = s->planet_h,
                  .band = band_rows < 1 ? 1 : band_rows};
    for (int c = 0; c < manifest->legend.n_classes; c++)
        w.is_land[c] = manifest->legend.classes[c].kind == TB_CLASS_LAND;
    tb_frame_t planet;
    if (tb_frame_make(&planet, s->planet_w, s->planet_h, manifest->cell_m, 0, 0, s->planet_w,
                      s->planet_h, err) != 0 ||
        s_raster(classes, w.W, w.H, 1, &p->own_classes, "class", &p->classes, err) != 0 ||
        s_raster(labels, w.W, w.H, 4, &p->own_labels, "landmass", &p->labels, err) != 0)
        goto fail;
    for (int k = 0; k < 3; k++)
        if (!(w.pre[k] = tb_malloc((size_t)w.pw, "plan rows", err)))
            goto fail;
    w.post = tb_malloc((size_t)w.pw, "plan rows", err);
    w.cells = w.post ? tb_malloc((size_t)w.W, "plan rows", err) : NULL;
    w.mask = w.cells ? tb_malloc((size_t)w.W, "plan rows", err) : NULL;
    w.classify = w.mask ? tb_classify_new(&manifest->legend, w.pw, w.ph, err) : NULL;
    w.finder = w.classify ? tb_landmass_finder_new(w.W, w.H, &manifest->legend, manifest->cell_m,
                                                   manifest->regions.min_landmass_km2, err)
                          : NULL;
    if (!w.finder || s_pass_match(&w, painting, err) != 0 || s_pass_despeckle(&w, err) != 0 ||
        s_pass_measure(&w, threads < 1 ? 1 : threads, err) != 0 || s_pass_label(&w, err) != 0)
        goto fail;
    const tb_landmasses_t *lm = tb_landmass_finder_result(w.finder);
    p->landmasses = *lm;
    p->landmasses.kept =
        tb_malloc(sizeof *lm->kept * (size_t)(lm->n ? lm->n : 1), "landmasses", err);
    if (!p->landmasses.kept)
        goto fail;
    memcpy(p->landmasses.kept, lm->kept, sizeof *lm->kept * (size_t)lm->n);
    s_work_free(&w);
    s->landmasses_found = p->landmasses.found;
    s->landmasses_kept = p->landmasses.n;
    s->dropped = p->landmasses.dropped;
    s->dropped_cells = p->landmasses.dropped_cells;
    s->dropped_area_km2 = p->landmasses.dropped_area_km2;
    s->margin_cells = p->regions.margin_cells;
    s->dilation_radius2 = p->regions.dilation_radius2;
    for (int r = 0; r < p->regions.n; r++) {
        const tb_plan_region_t *reg = &p->regions.regions[r];
        s->land_cells += reg->land_cells;
        s->region_cells += reg->box_cells;
        if (reg->box_cells > s->largest_region_cells)
            s->largest_region_cells = reg->box_cells;
    }
    s_class_table(p);
    return p;
fail:
    s_work_free(&w);
    tb_plan_destroy(&p);
    return NULL;
}

tb_plan_t *tb_plan_new(const tb_manifest_t *manifest, const tb_row_source_t *painting,
                       const tb_raster_t *classes, const tb_raster_t *labels, int threads,
                       tb_err_t *err)
{
    return tb_plan_new_banded(manifest, painting, classes, labels, threads, TB_PLAN_BAND_ROWS, err);
}

tb_plan_t *tb_plan_new_image(const tb_manifest_t *manifest, const tb_image_t *painting, int threads,
                             tb_err_t *err)
{
    tb_image_rows_t rows;
    const char *name = manifest->is_demo ? "the demo painting" : manifest->painting_path;
    return tb_plan_new(manifest, tb_image_rows(&rows, painting, name), NULL, NULL, threads, err);
}

void tb_plan_destroy(tb_plan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_plan_t *p = *self_p;
    free(p->own_classes);
    free(p->own_labels);
    free(p->landmasses.kept);
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
const tb_raster_t *tb_plan_class_raster(const tb_plan_t *self)
{
    return &self->classes;
}
const tb_raster_t *tb_plan_label_raster(const tb_plan_t *self)
{
    return &self->labels;
}
uint64_t tb_plan_class_raster_xxh3(const tb_plan_t *self)
{
    return self->classes_xxh3;
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

void tb_plan_region_row(const tb_plan_t *self, int region_index, int64_t j, uint8_t *classes,
                        uint8_t *solve_mask)
{
    const tb_plan_region_t *r = &self->regions.regions[region_index];
    const tb_frame_t *box = &r->box;
    const int32_t *lm_region = self->regions.landmass_region;
    const uint8_t *pc = tb_raster_row(&self->classes, box->y0 + j);
    const int32_t *pl = tb_raster_row(&self->labels, box->y0 + j);
    for (int64_t i = 0; i < box->w; i++) {
        int64_t src = tb_frame_lattice_x(box, i);
        if (classes)
            classes[i] = pc[src];
        if (solve_mask)
            solve_mask[i] = pl[src] > 0 && lm_region[pl[src]] == r->id;
    }
    /* the row read leaves memory (the labels of the largest region of a 300 km planet are 680 MB
     * of a mapped raster) */
    tb_raster_release(&self->classes, box->y0 + j, box->y0 + j + 1);
    tb_raster_release(&self->labels, box->y0 + j, box->y0 + j + 1);
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
    for (int64_t j = 0; j < box->h; j++)
        tb_plan_region_row(self, region_index, j, cg ? tb_grid_u8(cg) + tb_idx(box->w, 0, j) : NULL,
                           mg ? tb_grid_u8(mg) + tb_idx(box->w, 0, j) : NULL);
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
