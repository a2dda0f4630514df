/* The region job; see region.h. Wire format (little-endian):
 *   spec:   "TBRS" u32 version | u32 header bytes | header JSON | classes (w h bytes) | mask (w h
 * bytes) result: "TBRR" u32 version | u32 header bytes | header JSON | height f32 | area f32 |
 * basin i32 | uplift f32 | u64 stats bytes | stats | u64 mouths | per mouth: i64 x, i64 y, f64 m3
 *           (version 2 added the mouths)
 * The header JSON is printed by cJSON from objects built in a fixed order, so equal specs are equal
 * bytes. */
#include "common/json.h"
#include "jobs/region.h"
#include "jobs/job.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "common/log.h"
#include "jobs/geology/geology.h"
#include "jobs/stats/stats.h"

#define S_SPEC_MAGIC 0x53524254u   /* "TBRS" */
#define S_RESULT_MAGIC 0x52524254u /* "TBRR" */
#define S_VERSION 1u
#define S_RESULT_VERSION 2u
#define S_MAX_MOUTHS ((uint64_t)1 << 28)
#define S_MAX_HEADER (16u << 20)
/* The largest statistics a result may carry (the encoder fails a job that would make more, so
 * tb_region_result_bound is a true bound). */
#define S_MAX_STATS_BYTES ((uint64_t)16 << 20)
/* The largest result header tb_region_result_bound allows for (the encoder's is a few hundred). */
#define S_MAX_RESULT_HEADER (64u << 10)
/* The largest box a spec or result may describe: 2^32 cells (a result is 16 bytes a cell, and the
 * kind's result limit is 2^36 bytes). Checked before any size is multiplied out. */
#define S_MAX_BOX_CELLS ((int64_t)1 << 32)

/* 0 when the decoded box is small enough that its byte counts cannot overflow. */
static int s_box_fits(const tb_frame_t *b, const char *what, tb_err_t *err)
{
    if (b->h > S_MAX_BOX_CELLS / b->w)
        return tb_err_set(err, TB_E_FORMAT, "%s: a %lld x %lld box is over the limit of %lld cells",
                          what, (long long)b->w, (long long)b->h, (long long)S_MAX_BOX_CELLS);
    return 0;
}

/* ---- spec ---- */

/* The manifest a region job sees: only what can change its answer. The elevation range, the
 * legend's matching tolerances, the coast section, the tile margin and the detail passes act
 * before or after the solve, so they take their defaults here and a change to them reuses every
 * stored region. */
static void s_job_manifest(const tb_manifest_t *in, tb_manifest_t *out)
{
    tb_manifest_t def;
    tb_manifest_defaults(&def);
    *out = *in;
    out->elevation_min_m = def.elevation_min_m;
    out->elevation_max_m = def.elevation_max_m;
    out->legend.tolerance = def.legend.tolerance;
    out->legend.max_unmatched_fraction = def.legend.max_unmatched_fraction;
    out->coast = def.coast; /* the coastal pass runs after the solve */
    /* the tile margin and the detail passes act only on the tiles: a change to them re-solves no
     * region (the tiles' lattice, size_km and cell_m, stays: the manifest checks it against the
     * planet) */
    double size_km = in->tiles.size_km, cell_m = in->tiles.cell_m;
    out->tiles = def.tiles;
    out->tiles.size_km = size_km;
    out->tiles.cell_m = cell_m;
}

/* tb_region_spec_encode's rows from the spec's own arrays */
static void s_array_rows(void *user, int64_t j, uint8_t *classes, uint8_t *solve_mask)
{
    const tb_region_spec_t *spec = user;
    size_t w = (size_t)spec->box.w, at = (size_t)j * w;
    memcpy(classes, spec->classes + at, w);
    memcpy(solve_mask, spec->solve_mask + at, w);
}

int tb_region_spec_encode(const tb_region_spec_t *spec, void **out, size_t *bytes, tb_err_t *err)
{
    return tb_region_spec_encode_rows(spec, s_array_rows, (void *)spec, out, bytes, err);
}

int tb_region_spec_encode_rows(const tb_region_spec_t *spec, tb_region_rows_fn rows, void *user,
                               void **out, size_t *bytes, tb_err_t *err)
{
    *out = NULL;
    *bytes = 0;
    const tb_frame_t *b = &spec->box;
    size_t w = (size_t)b->w, h = (size_t)b->h, cells = w * h;
    const tb_legend_t *legend = &spec->manifest->legend;
    uint8_t *crow = malloc(w ? w : 1), *mrow = malloc(w ? w : 1);
    if (!crow || !mrow) {
        free(crow);
        free(mrow);
        return tb_err_set(err, TB_E_NOMEM, "region %d: out of memory for a row of the spec",
                          spec->region_id);
    }
    /* the classes present in the box, in legend order, and the map to their reduced index: a
     * first pass over the rows, for the header comes before the cells */
    bool present[TB_MAX_CLASSES] = {0};
    for (size_t j = 0; j < h; j++) {
        rows(user, (int64_t)j, crow, mrow);
        for (size_t i = 0; i < w; i++) {
            if (crow[i] >= legend->n_classes) {
                unsigned bad = crow[i];
                free(crow);
                free(mrow);
                return tb_err_set(err, TB_E_INVALID,
                                  "region %d: class %u at box cell %zu is not in the "
                                  "legend",
                                  spec->region_id, bad, j * w + i);
            }
            present[crow[i]] = true;
        }
    }
    tb_manifest_t m;
    s_job_manifest(spec->manifest, &m);
    uint8_t remap[TB_MAX_CLASSES];
    int n = 0;
    for (int c = 0; c < legend->n_classes; c++)
        if (present[c]) {
            remap[c] = (uint8_t)n;
            m.legend.classes[n++] = legend->classes[c];
        }
    m.legend.n_classes = n;

    cJSON *root = cJSON_CreateObject();
    double box[7] = {(double)b->x0,        (double)b->y0,        (double)b->w, (double)b->h,
                     (double)b->lattice_w, (double)b->lattice_h, b->cell_m};
    cJSON_AddItemToObject(root, "box", cJSON_CreateDoubleArray(box, 7));
    cJSON_AddNumberToObject(root, "steps", spec->steps);
    if (spec->no_incision)
        cJSON_AddBoolToObject(root, "test_no_incision", true);
    char *mj = tb_manifest_to_file_json(&m, "-", "-");
    char *lj = tb_legend_to_json(&m.legend);
    char *pj = tb_uplift_probes_to_json(spec->probes);
    cJSON_AddItemToObject(root, "manifest", mj ? cJSON_Parse(mj) : NULL);
    cJSON_AddItemToObject(root, "legend", lj ? cJSON_Parse(lj) : NULL);
    cJSON_AddItemToObject(root, "probes", pj ? cJSON_Parse(pj) : NULL);
    free(mj);
    free(lj);
    free(pj);
    char *header = tb_json_print(root, false);
    cJSON_Delete(root);
    if (!header) {
        free(crow);
        free(mrow);
        return tb_err_set(err, TB_E_NOMEM, "region %d: cannot print the spec", spec->region_id);
    }
    /* the spec is made at its size, and its cells written into it a row at a time: no copy of the
     * box's class raster and mask beside it (2 bytes a box cell: 340 MB for the largest region of
     * a 300 km planet) */
    tb_bytes_t wr;
    tb_bytes_init(&wr);
    size_t hlen = strlen(header);
    tb_bytes_put_u32(&wr, S_SPEC_MAGIC);
    tb_bytes_put_u32(&wr, S_VERSION);
    tb_bytes_put_u32(&wr, (uint32_t)hlen);
    tb_bytes_put(&wr, header, hlen);
    free(header);
    size_t head = wr.len;
    uint8_t *data = NULL;
    if (!wr.failed && cells <= (SIZE_MAX - head) / 2)
        data = realloc(wr.data, head + 2 * cells);
    if (!data) {
        tb_bytes_free(&wr);
        free(crow);
        free(mrow);
        return tb_err_set(err, TB_E_NOMEM, "region %d: out of memory encoding the spec",
                          spec->region_id);
    }
    for (size_t j = 0; j < h; j++) {
        uint8_t *c = data + head + j * w;
        rows(user, (int64_t)j, c, data + head + cells + j * w);
        for (size_t i = 0; i < w; i++)
            c[i] = remap[c[i]];
    }
    free(crow);
    free(mrow);
    *out = data;
    *bytes = head + 2 * cells;
    return 0;
}

static int s_json_int(const cJSON *v, double lo, double hi, int64_t *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return -1;
    *out = (int64_t)v->valuedouble;
    return 0;
}

int tb_region_spec_decode(const void *data, size_t bytes, tb_region_spec_owned_t *out,
                          tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_reader_t r;
    tb_reader_init(&r, data, bytes);
    char *header =
        tb_reader_preamble(&r, S_SPEC_MAGIC, S_VERSION, S_MAX_HEADER, "region spec", err);
    if (!header)
        return -1;
    cJSON *root = cJSON_Parse(header);
    free(header);
    int rc = -1;
    char *text = NULL;
    if (!cJSON_IsObject(root)) {
        tb_err_set(err, TB_E_FORMAT, "region spec: header is not a JSON object");
        goto done;
    }
    int64_t steps, box[6];
    const cJSON *jbox = cJSON_GetObjectItemCaseSensitive(root, "box");
    if (s_json_int(cJSON_GetObjectItemCaseSensitive(root, "steps"), 1, 1e7, &steps) ||
        !cJSON_IsArray(jbox) || cJSON_GetArraySize(jbox) != 7) {
        tb_err_set(err, TB_E_FORMAT, "region spec: steps or box missing or malformed");
        goto done;
    }
    for (int i = 0; i < 6; i++)
        if (s_json_int(cJSON_GetArrayItem(jbox, i), -1e12, 1e12, &box[i])) {
            tb_err_set(err, TB_E_FORMAT, "region spec: box[%d] is not an integer", i);
            goto done;
        }
    const cJSON *cell = cJSON_GetArrayItem(jbox, 6);
    if (!cJSON_IsNumber(cell) || tb_frame_make(&out->spec.box, box[4], box[5], cell->valuedouble,
                                               box[0], box[1], box[2], box[3], err) != 0) {
        tb_err_prefix(err, "region spec: box");
        goto done;
    }
    if (s_box_fits(&out->spec.box, "region spec", err) != 0)
        goto done;
    text = tb_json_print(cJSON_GetObjectItemCaseSensitive(root, "manifest"), false);
    if (!text || tb_manifest_parse(text, "region spec manifest", ".", &out->manifest, err) != 0)
        goto done;
    free(text);
    text = NULL;
    text = tb_json_print(cJSON_GetObjectItemCaseSensitive(root, "legend"), false);
    if (!text || tb_legend_parse(text, "region spec legend", &out->manifest.legend, err) != 0)
        goto done;
    free(text);
    text = NULL;
    if (tb_manifest_finish(&out->manifest, err) != 0)
        goto done;
    text = tb_json_print(cJSON_GetObjectItemCaseSensitive(root, "probes"), false);
    if (!text || tb_uplift_probes_from_json(text, &out->probes, err) != 0)
        goto done;
    if (out->spec.box.lattice_w != out->manifest.planet_w ||
        out->spec.box.cell_m != out->manifest.cell_m) {
        tb_err_set(err, TB_E_INVALID,
                   "region spec: box lattice %lld cells of %g m, manifest %lld of %g",
                   (long long)out->spec.box.lattice_w, out->spec.box.cell_m,
                   (long long)out->manifest.planet_w, out->manifest.cell_m);
        goto done;
    }
    size_t cells = (size_t)out->spec.box.w * (size_t)out->spec.box.h;
    if (tb_reader_left(&r) != 2 * cells) {
        tb_err_set(
            err, TB_E_FORMAT, "region spec: %zu raster bytes for a %lld x %lld box (expected %zu)",
            tb_reader_left(&r), (long long)out->spec.box.w, (long long)out->spec.box.h, 2 * cells);
        goto done;
    }
    out->classes = malloc(cells);
    out->solve_mask = malloc(cells);
    if (!out->classes || !out->solve_mask) {
        tb_err_set(err, TB_E_NOMEM, "region spec: out of memory for %zu cells", cells);
        goto done;
    }
    tb_reader_get(&r, out->classes, cells);
    tb_reader_get(&r, out->solve_mask, cells);
    for (size_t i = 0; i < cells; i++)
        if (out->classes[i] >= out->manifest.legend.n_classes || out->solve_mask[i] > 1) {
            tb_err_set(err, TB_E_FORMAT, "region spec: cell %zu has class %u of %d, mask %u", i,
                       out->classes[i], out->manifest.legend.n_classes, out->solve_mask[i]);
            goto done;
        }
    out->spec.no_incision =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "test_no_incision"));
    out->spec.region_id = 0; /* not in the spec: a renumbered region keeps its stored result */
    out->spec.steps = (int)steps;
    out->spec.manifest = &out->manifest;
    out->spec.probes = &out->probes;
    out->spec.classes = out->classes;
    out->spec.solve_mask = out->solve_mask;
    rc = 0;
done:
    free(text);
    cJSON_Delete(root);
    if (rc != 0)
        tb_region_spec_free(out);
    return rc;
}

void tb_region_spec_free(tb_region_spec_owned_t *s)
{
    if (!s)
        return;
    free(s->classes);
    free(s->solve_mask);
    memset(s, 0, sizeof *s);
}

/* ---- solve ---- */

typedef struct {
    bool (*progress)(void *user, double fraction, const char *note);
    void *user;
    int64_t steps;
} s_progress_t;

int tb_region_spec_selfcheck(const tb_manifest_t *m, const tb_uplift_probes_t *p, int64_t planet_h,
                             tb_err_t *err)
{
    /* two cells, the legend's first land class and its first ocean class: a region's box always
     * holds both (its ocean margin) */
    uint8_t cls[2] = {0, 0}, mask[2] = {0, 0};
    const tb_legend_t *legend = &m->legend;
    while (cls[0] + 1 < legend->n_classes && legend->classes[cls[0]].kind == TB_CLASS_OCEAN)
        cls[0]++;
    while (cls[1] + 1 < legend->n_classes && legend->classes[cls[1]].kind != TB_CLASS_OCEAN)
        cls[1]++;
    tb_region_spec_t spec = {.region_id = 1, .steps = 1, .manifest = m, .probes = p};
    spec.classes = cls;
    spec.solve_mask = mask;
    if (tb_frame_make(&spec.box, m->planet_w, planet_h, m->cell_m, 0, 0, 2, 1, err) != 0)
        return -1;
    void *bytes = NULL;
    size_t n = 0;
    tb_region_spec_owned_t back;
    if (tb_region_spec_encode(&spec, &bytes, &n, err) != 0)
        return -1;
    int rc = tb_region_spec_decode(bytes, n, &back, err);
    free(bytes);
    if (rc != 0)
        return tb_err_prefix(err, "the region spec a worker would decode");
    /* the solve's first step, which makes every check of the manifest, the frame and the probes */
    float uplift_m_yr[2], k[2];
    rc = tb_uplift_build(&back.manifest, &back.probes, &back.spec.box, back.classes, uplift_m_yr, k,
                         err) == 0
             ? 0
             : tb_err_prefix(err, "a worker would refuse every region");
    tb_region_spec_free(&back);
    return rc;
}

static int s_step_progress(void *ud, int64_t step_done)
{
    s_progress_t *p = ud;
    if (!p->progress)
        return 0;
    char note[64];
    snprintf(note, sizeof note, "step %lld/%lld", (long long)step_done, (long long)p->steps);
    return p->progress(p->user, (double)step_done / (double)p->steps, note) ? 1 : 0;
}

static int s_mouth_cmp(const void *a, const void *b)
{
    const tb_region_mouth_t *x = a, *y = b;
    if (x->y != y->y)
        return x->y < y->y ? -1 : 1;
    return (x->x > y->x) - (x->x < y->x);
}

/* The river supply of every mouth (docs/coast.md, "River supply"): for each solved cell the volume
 * eroded over the solve, uplift U dt steps minus the height it gained (the solve starts at 0 m), in
 * whole litres so the sums are exact and order-free, added to the fixed cell its D8 path ends in
 * at the last step. A mouth whose basins gained more than their uplift (diffusion from a
 * neighbouring basin) reports 0. */
static int s_mouths(const tb_region_spec_t *spec, tb_region_result_t *out, const int32_t *basin,
                    tb_err_t *err)
{
    const tb_frame_t *box = &spec->box;
    size_t cells = (size_t)box->w * (size_t)box->h;
    double years = spec->manifest->solve.dt_yr * spec->steps;
    double cell_m2 = box->cell_m * box->cell_m;
    int64_t *litres = tb_calloc(cells, sizeof *litres, "region mouth volumes", err);
    uint8_t *is_mouth = tb_calloc(cells, 1, "region mouths", err);
    if (!litres || !is_mouth) {
        free(litres);
        free(is_mouth);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < cells; i++) {
        if (basin[i] < 0 || spec->solve_mask[i] != 1)
            continue;
        double eroded = ((double)out->uplift_m_yr[i] * years - (double)out->height_m[i]) * cell_m2;
        litres[basin[i]] += (int64_t)llround(eroded * 1000.0);
        n += !is_mouth[basin[i]];
        is_mouth[basin[i]] = 1;
    }
    out->mouths = tb_malloc((n ? n : 1) * sizeof *out->mouths, "region mouths", err);
    if (!out->mouths) {
        free(litres);
        free(is_mouth);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < cells; i++)
        if (is_mouth[i]) {
            tb_region_mouth_t *mo = &out->mouths[k++];
            mo->x = tb_frame_lattice_x(box, (int64_t)(i % (size_t)box->w));
            mo->y = tb_frame_lattice_y(box, (int64_t)(i / (size_t)box->w));
            mo->eroded_m3 = litres[i] > 0 ? (double)litres[i] / 1000.0 : 0;
        }
    out->n_mouths = n;
    qsort(out->mouths, n, sizeof *out->mouths, s_mouth_cmp);
    free(litres);
    free(is_mouth);
    return 0;
}

int tb_region_solve(const tb_region_spec_t *spec, tb_pool_t *pool,
                    bool (*progress)(void *user, double fraction, const char *note), void *user,
                    tb_region_result_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    const tb_frame_t *box = &spec->box;
    const tb_manifest_t *m = spec->manifest;
    size_t cells = (size_t)box->w * (size_t)box->h;
    out->region_id = spec->region_id;
    out->box = *box;
    out->steps = spec->steps;
    out->height_m = tb_calloc(cells, sizeof(float), "region heights", err);
    out->area_m2 = tb_calloc(cells, sizeof(float), "region drainage area", err);
    out->basin = tb_calloc(cells, sizeof(int32_t), "region basins", err);
    out->uplift_m_yr = tb_calloc(cells, sizeof(float), "region uplift", err);
    float *k = tb_calloc(cells, sizeof(float), "region erodibility", err);
    tb_geology_t *geo = NULL;
    tb_stats_t *stats = NULL;
    if (!out->height_m || !out->area_m2 || !out->basin || !out->uplift_m_yr || !k)
        goto fail;
    if (tb_uplift_build(m, spec->probes, box, spec->classes, out->uplift_m_yr, k, err) != 0)
        goto fail;
    double t0 = tb_now_s();
    geo = tb_geology_new(box, &m->solve, m->seed, err);
    if (!geo)
        goto fail;
    tb_geology_set_pool(geo, pool); /* any pool gives the same bits */
    if (spec->no_incision) {
        tb_geology_options_t go;
        tb_geology_options_defaults(&go);
        go.stream_power = false;
        if (tb_geology_set_options(geo, &go, err) != 0)
            goto fail;
    }
    s_progress_t prog = {progress, user, spec->steps};
    if (tb_geology_run(geo, spec->solve_mask, out->uplift_m_yr, k, out->height_m, 0, spec->steps,
                       s_step_progress, &prog, err) != 0)
        goto fail;
    out->solve_s = tb_now_s() - t0;
    memcpy(out->area_m2, tb_geology_area_m2(geo), cells * sizeof(float));
    /* basins as the lattice index of their outlet, so the coordinator can colour them planet-wide;
     * a planet of more than 2^31 - 1 cells folds the index (the basin map is a picture: two basins
     * may then share a colour, nothing else reads it) */
    const int32_t *basin = tb_geology_basin(geo);
    for (size_t i = 0; i < cells; i++) {
        int32_t b = basin[i];
        if (b < 0) {
            out->basin[i] = -1;
            continue;
        }
        int64_t bx = tb_frame_lattice_x(box, b % box->w), by = tb_frame_lattice_y(box, b / box->w);
        out->basin[i] = (int32_t)((by * box->lattice_w + bx) % INT32_MAX);
    }
    if (s_mouths(spec, out, basin, err) != 0)
        goto fail;
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, m->cell_m);
    sp.talus_deg = m->solve.talus_deg;
    sp.m = m->solve.m;
    sp.n = m->solve.n;
    stats = tb_stats_new(&sp, err);
    /* the painted classes by name (docs/statistics.md), so regions with reduced legends pool */
    const char *names[TB_MAX_CLASSES];
    for (int c = 0; c < m->legend.n_classes; c++)
        names[c] = m->legend.classes[c].name;
    if (!stats || tb_stats_accumulate_classes(stats, box, out->height_m, out->area_m2,
                                              out->uplift_m_yr, spec->solve_mask, spec->classes,
                                              m->legend.n_classes, names, err) != 0)
        goto fail;
    if (tb_stats_edge_cells(stats) != 0) {
        tb_err_set(err, TB_E_INTERNAL,
                   "region %d: %lld land cells lie within the statistics "
                   "window of the box edge; the ocean margin is too small",
                   spec->region_id, (long long)tb_stats_edge_cells(stats));
        goto fail;
    }
    out->stats = tb_stats_encode(stats, &out->stats_bytes, err);
    if (!out->stats)
        goto fail;
    tb_stats_destroy(&stats);
    tb_geology_destroy(&geo);
    free(k);
    return 0;
fail:
    tb_stats_destroy(&stats);
    tb_geology_destroy(&geo);
    free(k);
    tb_region_result_free(out);
    return -1;
}

void tb_region_result_free(tb_region_result_t *r)
{
    if (!r)
        return;
    free(r->height_m);
    free(r->area_m2);
    free(r->basin);
    free(r->uplift_m_yr);
    free(r->stats);
    free(r->mouths);
    memset(r, 0, sizeof *r);
}

/* ---- result ---- */

int tb_region_result_encode(const tb_region_result_t *r, void **out, size_t *bytes, tb_err_t *err)
{
    *out = NULL;
    *bytes = 0;
    const tb_frame_t *b = &r->box;
    size_t cells = (size_t)b->w * (size_t)b->h;
    cJSON *root = cJSON_CreateObject();
    double box[7] = {(double)b->x0,        (double)b->y0,        (double)b->w, (double)b->h,
                     (double)b->lattice_w, (double)b->lattice_h, b->cell_m};
    cJSON_AddItemToObject(root, "box", cJSON_CreateDoubleArray(box, 7));
    cJSON_AddNumberToObject(root, "steps", r->steps);
    char spec_hex[17];
    tb_hash_hex(r->spec_xxh3, spec_hex);
    cJSON_AddStringToObject(root, "spec_xxh3", spec_hex);
    char *header = tb_json_print(root, false);
    cJSON_Delete(root);
    if (!header)
        return tb_err_set(err, TB_E_NOMEM, "region result: cannot print the header");
    tb_bytes_t w;
    tb_bytes_init(&w);
    size_t hlen = strlen(header);
    tb_bytes_put_u32(&w, S_RESULT_MAGIC);
    tb_bytes_put_u32(&w, S_RESULT_VERSION);
    tb_bytes_put_u32(&w, (uint32_t)hlen);
    tb_bytes_put(&w, header, hlen);
    free(header);
    tb_bytes_put(&w, r->height_m, cells * sizeof(float));
    tb_bytes_put(&w, r->area_m2, cells * sizeof(float));
    tb_bytes_put(&w, r->basin, cells * sizeof(int32_t));
    tb_bytes_put(&w, r->uplift_m_yr, cells * sizeof(float));
    tb_bytes_put_u64(&w, r->stats_bytes);
    tb_bytes_put(&w, r->stats, r->stats_bytes);
    tb_bytes_put_u64(&w, r->n_mouths);
    for (size_t k = 0; k < r->n_mouths; k++) {
        tb_bytes_put_i64(&w, r->mouths[k].x);
        tb_bytes_put_i64(&w, r->mouths[k].y);
        tb_bytes_put_f64(&w, r->mouths[k].eroded_m3);
    }
    if (r->stats_bytes > S_MAX_STATS_BYTES || r->n_mouths > cells)
        w.failed = true;
    if (w.failed) {
        tb_bytes_free(&w);
        return tb_err_set(err, TB_E_NOMEM, "region result: out of memory encoding %zu cells",
                          cells);
    }
    *out = tb_bytes_take(&w, bytes);
    return 0;
}

int tb_region_result_view(const void *data, size_t bytes, tb_region_result_view_t *v, tb_err_t *err)
{
    memset(v, 0, sizeof *v);
    tb_reader_t r;
    tb_reader_init(&r, data, bytes);
    char *header = tb_reader_preamble(&r, S_RESULT_MAGIC, S_RESULT_VERSION, S_MAX_RESULT_HEADER,
                                      "region result", err);
    if (!header)
        return -1;
    cJSON *root = cJSON_Parse(header);
    free(header);
    const cJSON *jbox = cJSON_GetObjectItemCaseSensitive(root, "box");
    const cJSON *jspec = cJSON_GetObjectItemCaseSensitive(root, "spec_xxh3");
    int64_t steps, box[6];
    int bad = !cJSON_IsArray(jbox) || cJSON_GetArraySize(jbox) != 7 ||
              s_json_int(cJSON_GetObjectItemCaseSensitive(root, "steps"), 1, 1e7, &steps) ||
              !cJSON_IsString(jspec) || tb_hash_from_hex(jspec->valuestring, &v->spec_xxh3) != 0;
    for (int i = 0; !bad && i < 6; i++)
        bad = s_json_int(cJSON_GetArrayItem(jbox, i), -1e12, 1e12, &box[i]);
    const cJSON *cell = bad ? NULL : cJSON_GetArrayItem(jbox, 6);
    if (bad || !cJSON_IsNumber(cell) ||
        tb_frame_make(&v->box, box[4], box[5], cell->valuedouble, box[0], box[1], box[2], box[3],
                      err) != 0) {
        cJSON_Delete(root);
        return tb_err_set(err, TB_E_FORMAT, "region result: malformed header");
    }
    cJSON_Delete(root);
    if (s_box_fits(&v->box, "region result", err) != 0)
        return -1;
    v->steps = (int)steps;
    size_t cells = (size_t)v->box.w * (size_t)v->box.h;
    v->cells = cells;
    if (tb_reader_left(&r) < cells * 16 + 8)
        return tb_err_set(err, TB_E_FORMAT, "region result: %zu bytes for %zu cells",
                          tb_reader_left(&r), cells);
    const unsigned char *p = (const unsigned char *)data + (bytes - tb_reader_left(&r));
    v->height_m = p;
    v->area_m2 = p + cells * 4;
    v->basin = p + cells * 8;
    v->uplift_m_yr = p + cells * 12;
    r.pos += cells * 16;
    uint64_t sb = tb_reader_u64(&r);
    if (r.failed || sb > tb_reader_left(&r) || tb_reader_left(&r) - sb < 8 ||
        sb > S_MAX_STATS_BYTES)
        return tb_err_set(err, TB_E_FORMAT, "region result: statistics of %llu bytes, %zu left",
                          (unsigned long long)sb, tb_reader_left(&r));
    v->stats = (const unsigned char *)data + (bytes - tb_reader_left(&r));
    v->stats_bytes = (size_t)sb;
    r.pos += (size_t)sb;
    uint64_t nm = tb_reader_u64(&r);
    if (r.failed || nm > S_MAX_MOUTHS || nm * 24 != tb_reader_left(&r))
        return tb_err_set(err, TB_E_FORMAT, "region result: %llu river mouths in %zu bytes",
                          (unsigned long long)nm, tb_reader_left(&r));
    v->mouths = (const unsigned char *)data + (bytes - tb_reader_left(&r));
    v->n_mouths = (size_t)nm;
    for (size_t k = 0; k < v->n_mouths; k++) {
        tb_region_mouth_t mo;
        tb_region_view_mouth(v, k, &mo);
        if (mo.x < 0 || mo.x >= v->box.lattice_w || mo.y < 0 || mo.y >= v->box.lattice_h ||
            !isfinite(mo.eroded_m3) || mo.eroded_m3 < 0)
            return tb_err_set(err, TB_E_FORMAT,
                              "region result: river mouth %zu is off the "
                              "planet or has a bad volume",
                              k);
    }
    return 0;
}

void tb_region_view_mouth(const tb_region_result_view_t *v, size_t k, tb_region_mouth_t *out)
{
    tb_reader_t r;
    tb_reader_init(&r, v->mouths + 24 * k, 24);
    out->x = tb_reader_i64(&r);
    out->y = tb_reader_i64(&r);
    out->eroded_m3 = tb_reader_f64(&r);
}

int tb_region_result_decode(const void *data, size_t bytes, tb_region_result_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_region_result_view_t v;
    if (tb_region_result_view(data, bytes, &v, err) != 0)
        return -1;
    out->box = v.box;
    out->steps = v.steps;
    out->spec_xxh3 = v.spec_xxh3;
    size_t cells = v.cells;
    out->height_m = malloc(cells * sizeof(float));
    out->area_m2 = malloc(cells * sizeof(float));
    out->basin = malloc(cells * sizeof(int32_t));
    out->uplift_m_yr = malloc(cells * sizeof(float));
    out->stats = malloc(v.stats_bytes ? v.stats_bytes : 1);
    out->mouths = malloc((v.n_mouths ? v.n_mouths : 1) * sizeof *out->mouths);
    if (!out->height_m || !out->area_m2 || !out->basin || !out->uplift_m_yr || !out->stats ||
        !out->mouths) {
        tb_region_result_free(out);
        return tb_err_set(err, TB_E_NOMEM, "region result: out of memory for %zu cells", cells);
    }
    memcpy(out->height_m, v.height_m, cells * sizeof(float));
    memcpy(out->area_m2, v.area_m2, cells * sizeof(float));
    memcpy(out->basin, v.basin, cells * sizeof(int32_t));
    memcpy(out->uplift_m_yr, v.uplift_m_yr, cells * sizeof(float));
    out->stats_bytes = v.stats_bytes;
    memcpy(out->stats, v.stats, v.stats_bytes);
    out->n_mouths = v.n_mouths;
    for (size_t k = 0; k < v.n_mouths; k++)
        tb_region_view_mouth(&v, k, &out->mouths[k]);
    return 0;
}

/* ---- the job kind ---- */

typedef struct {
    tb_job_ctx_t *ctx;
} s_job_progress_t;

static bool s_job_progress(void *user, double fraction, const char *note)
{
    s_job_progress_t *p = user;
    return tb_job_progress(p->ctx, fraction, note);
}

static int s_job_run(const void *spec_bytes, size_t n, tb_job_ctx_t *ctx, tb_job_output_t *out,
                     tb_err_t *err)
{
    tb_region_spec_owned_t spec;
    if (tb_region_spec_decode(spec_bytes, n, &spec, err) != 0)
        return -1;
    tb_region_result_t result;
    s_job_progress_t prog = {ctx};
    int rc = tb_region_solve(&spec.spec, ctx->pool, s_job_progress, &prog, &result, err);
    tb_region_spec_free(&spec);
    if (rc != 0)
        return -1;
    result.spec_xxh3 = XXH3_64bits(spec_bytes, n);
    rc = tb_region_result_encode(&result, &out->data, &out->bytes, err);
    tb_region_result_free(&result);
    return rc;
}

size_t tb_region_result_bound(const void *spec, size_t n)
{
    tb_reader_t r;
    tb_reader_init(&r, spec, n);
    uint32_t magic = tb_reader_u32(&r), version = tb_reader_u32(&r), hlen = tb_reader_u32(&r);
    if (r.failed || magic != S_SPEC_MAGIC || version != S_VERSION || hlen > tb_reader_left(&r))
        return 0;
    /* After the header the spec holds one class byte and one mask byte a box cell. */
    uint64_t cells = (uint64_t)(tb_reader_left(&r) - hlen) / 2;
    if (cells > (uint64_t)S_MAX_BOX_CELLS)
        return 0;
    /* What tb_region_result_encode writes: magic, version, header length, the header, four 4-byte
     * planes a cell, the statistics' length and the statistics, the mouths' count and 24 bytes a
     * mouth (a mouth is a cell, so at most one a cell). Keep in step with it: a result it
     * allows too little for is refused as larger than its job can produce. */
    uint64_t mouths = cells < S_MAX_MOUTHS ? cells : S_MAX_MOUTHS;
    return (size_t)(12 + S_MAX_RESULT_HEADER + 16 * cells + 8 + S_MAX_STATS_BYTES + 8 +
                    24 * mouths);
}

/* The box, the steps and the solve mask (in place) of a spec, read without decoding the rest. */
static int s_spec_frame(const void *spec, size_t n, tb_frame_t *box, int *steps,
                        const uint8_t **mask, tb_err_t *err)
{
    tb_reader_t r;
    tb_reader_init(&r, spec, n);
    char *header =
        tb_reader_preamble(&r, S_SPEC_MAGIC, S_VERSION, S_MAX_HEADER, "region spec", err);
    if (!header)
        return -1;
    cJSON *root = cJSON_Parse(header);
    free(header);
    const cJSON *jbox = cJSON_GetObjectItemCaseSensitive(root, "box");
    int64_t st, b[6];
    int bad = !cJSON_IsArray(jbox) || cJSON_GetArraySize(jbox) != 7 ||
              s_json_int(cJSON_GetObjectItemCaseSensitive(root, "steps"), 1, 1e7, &st);
    for (int i = 0; !bad && i < 6; i++)
        bad = s_json_int(cJSON_GetArrayItem(jbox, i), -1e12, 1e12, &b[i]);
    const cJSON *cell = bad ? NULL : cJSON_GetArrayItem(jbox, 6);
    bad = bad || !cJSON_IsNumber(cell) ||
          tb_frame_make(box, b[4], b[5], cell->valuedouble, b[0], b[1], b[2], b[3], err) != 0;
    cJSON_Delete(root);
    if (bad)
        return tb_err_set(err, TB_E_FORMAT, "region spec: malformed header");
    if (s_box_fits(box, "region spec", err) != 0)
        return -1;
    size_t cells = (size_t)box->w * (size_t)box->h;
    if (tb_reader_left(&r) != 2 * cells)
        return tb_err_set(err, TB_E_FORMAT, "region spec: %zu raster bytes for %zu cells",
                          tb_reader_left(&r), cells);
    *steps = (int)st;
    *mask = (const uint8_t *)spec + n - cells;
    return 0;
}

static float s_plane_f32(const unsigned char *plane, size_t i)
{
    float f;
    memcpy(&f, plane + 4 * i, 4);
    return f;
}

/* A result answers a spec when it decodes and echoes the spec's hash (which covers the steps, the
 * box, the manifest and the inputs: everything the spec holds), docs/distribution.md, and holds
 * what every honest answer holds: the spec's box and steps (the echo is one field of the header:
 * a header altered around it must not pass), finite planes, every cell off the region's land held
 * at sea level with no basin, drainage areas >= 0, statistics that decode and whose counts add up
 * (the channel cells are the cardinal, diagonal and no-descent ones; no more land counted than the
 * region has; none at the box edge). Read in place, one pass over the planes: a result of 2.7 GB
 * is checked through its mapping, never copied. */
static int s_job_check(const void *spec, size_t n, const void *result, size_t bytes, tb_err_t *err)
{
    tb_region_result_view_t r;
    if (tb_region_result_view(result, bytes, &r, err) != 0)
        return -1;
    uint64_t want = XXH3_64bits(spec, n), got = r.spec_xxh3;
    int steps = r.steps;
    if (got != want)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "region result answers spec %016llx (%d steps), not this job's %016llx",
                          (unsigned long long)got, steps, (unsigned long long)want);
    tb_frame_t box;
    int spec_steps = 0;
    const uint8_t *mask = NULL;
    if (s_spec_frame(spec, n, &box, &spec_steps, &mask, err) != 0)
        return -1;
    const tb_frame_t *b = &r.box;
    if (b->x0 != box.x0 || b->y0 != box.y0 || b->w != box.w || b->h != box.h ||
        b->lattice_w != box.lattice_w || b->lattice_h != box.lattice_h || b->cell_m != box.cell_m)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "region result: box %lld,%lld %lld x %lld (lattice %lld x %lld), not the "
                          "spec's %lld,%lld %lld x %lld (lattice %lld x %lld)",
                          (long long)b->x0, (long long)b->y0, (long long)b->w, (long long)b->h,
                          (long long)b->lattice_w, (long long)b->lattice_h, (long long)box.x0,
                          (long long)box.y0, (long long)box.w, (long long)box.h,
                          (long long)box.lattice_w, (long long)box.lattice_h);
    if (steps != spec_steps)
        return tb_err_set(err, TB_E_CHECKSUM, "region result: %d steps, the spec asks %d", steps,
                          spec_steps);
    int64_t land = 0;
    const size_t chunk = (size_t)1 << 20; /* cells between tb_job_result_done calls */
    for (size_t i = 0; i < r.cells; i++) {
        if (i % chunk == 0 && i > 0) {
            /* the planes' cells before i are read: a mapped result lets them go */
            tb_job_result_done(r.height_m + 4 * (i - chunk), 4 * chunk);
            tb_job_result_done(r.area_m2 + 4 * (i - chunk), 4 * chunk);
            tb_job_result_done(r.uplift_m_yr + 4 * (i - chunk), 4 * chunk);
            tb_job_result_done(r.basin + 4 * (i - chunk), 4 * chunk);
        }
        float h = s_plane_f32(r.height_m, i), a = s_plane_f32(r.area_m2, i);
        float u = s_plane_f32(r.uplift_m_yr, i);
        int32_t bas;
        memcpy(&bas, r.basin + 4 * i, 4);
        land += mask[i] != 0;
        if (!isfinite(h) || !isfinite(a) || !(a >= 0) || !isfinite(u) ||
            (!mask[i] && (h != 0 || bas != -1)))
            return tb_err_set(err, TB_E_CHECKSUM,
                              "region result: box cell %zu (%lld,%lld) has height %g, area %g, "
                              "uplift %g, basin %d%s",
                              i, (long long)(i % (size_t)box.w), (long long)(i / (size_t)box.w),
                              (double)h, (double)a, (double)u, (int)bas,
                              mask[i] ? "" : " off the region's land (held at 0 m, basin -1)");
    }
    tb_stats_t *st = tb_stats_decode(r.stats, r.stats_bytes, err);
    if (!st) {
        tb_err_prefix(err, "region result: statistics");
        return -1;
    }
    tb_stats_counts_t c;
    tb_stats_counts(st, TB_STATS_ALL, &c);
    int64_t edge = tb_stats_edge_cells(st);
    tb_stats_destroy(&st);
    if (c.channel_cells != c.channel_cardinal + c.channel_diagonal + c.channel_no_descent ||
        c.land_cells < 0 || c.land_cells > land || c.area_cells > c.land_cells ||
        c.channel_cells > c.land_cells || edge != 0)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "region result: statistics whose counts do not add up (%lld land cells "
                          "of the region's %lld, %lld with an area, %lld channel cells = %lld "
                          "cardinal + %lld diagonal + %lld without descent, %lld at the edge)",
                          (long long)c.land_cells, (long long)land, (long long)c.area_cells,
                          (long long)c.channel_cells, (long long)c.channel_cardinal,
                          (long long)c.channel_diagonal, (long long)c.channel_no_descent,
                          (long long)edge);
    return 0;
}

const tb_job_kind_t tb_job_kind_region = {
    .name = "region",
    .run = s_job_run,
    .max_spec_bytes = (size_t)1 << 33,
    .max_result_bytes = (size_t)1 << 36,
    .summary = "the geology solve of one region: uplift, stream power, statistics",
    .result_bound = tb_region_result_bound,
    .check_result = s_job_check,
};
