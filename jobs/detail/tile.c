/* The tile job; see tile.h. Wire format (little-endian):
 *   spec:   "TBTS" u32 version | u32 header bytes | header JSON | height f32 | area f32
 *           [| rock f32, when the header has no "rock"] | class u8 [| exposure u16 | moved f32,
 *           when the header's "coast" is 1] (each geo.w x geo.h)
 *   result: "TBTR" u32 version (2) | u32 header bytes | header JSON (id, interior, elevation_m,
 *           classes, spec_xxh3: the XXH3-64 of the spec bytes it answers, 16 hex digits) |
 *           height f32 | height u16 | flow u8 | wear u8 | deposit u8 | splat 4 x u8 (each
 *           interior w x h) | budget 6 x i64 | stats 5 x i64 | slope histogram n_classes x 90 x i64
 * Headers are printed by cJSON from objects built in a fixed order, so equal specs are equal
 * bytes. */
#include "jobs/detail/tile.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "common/noise.h"
#include "jobs/detail/line_scratch.h"
#include "jobs/detail/planet_inputs.h"
#include "jobs/detail/relief_fbm.h"
#include "jobs/detail/resample_catmull_rom.h"
#include "jobs/detail/shore.h"
#include "jobs/detail/splat.h"
#include "jobs/detail/thermal_talus_jacobi.h"

#define S_SPEC_MAGIC 0x53544254u   /* "TBTS" */
#define S_RESULT_MAGIC 0x52544254u /* "TBTR" */
#define S_VERSION 1u
/* version 2 echoes the spec's hash (docs/distribution.md, "Verifying results") */
#define S_RESULT_VERSION 2u
#define S_MAX_HEADER (1u << 20)
/* The largest result header tb_tile_result_bound allows for (the encoder's is a few hundred). */
#define S_MAX_RESULT_HEADER (64u << 10)
#define S_MAX_CELLS                                                                                \
    ((int64_t)1 << 26) /* a window or interior over 67 M cells (8192^2) is refused:                \
                        * a default tile is 7 M, and a tile costs ~70 bytes a cell */

/* ---- the frames a spec implies ---- */

typedef struct {
    tb_tile_lattice_t L;
    tb_frame_t win, interior, geo;
} s_frames_t;

static int s_frames(const tb_tile_spec_t *s, s_frames_t *f, tb_err_t *err)
{
    if (tb_detail_params_check(&s->params, "tile spec", err) != 0)
        return -1;
    if (tb_tile_lattice_make(&f->L, s->geo_w, s->geo_h, s->geo_cell_m, s->params.size_km,
                             s->params.cell_m, err) != 0 ||
        tb_tile_interior(&f->L, s->id, &f->interior, err) != 0 ||
        tb_tile_window(&f->L, s->id, s->params.margin_cells, &f->win, err) != 0 ||
        tb_tile_geo_window(&f->L, &f->win, &f->geo, err) != 0)
        return tb_err_prefix(err, "tile spec");
    if (f->win.h > S_MAX_CELLS / f->win.w)
        return tb_err_set(err, TB_E_INVALID,
                          "tile spec: a %" PRId64 " x %" PRId64 " window is over the limit",
                          f->win.w, f->win.h);
    if (!(s->elevation_max_m > s->elevation_min_m) || !isfinite(s->elevation_min_m) ||
        !isfinite(s->elevation_max_m))
        return tb_err_set(err, TB_E_INVALID, "tile spec: elevation range %g..%g is empty",
                          s->elevation_min_m, s->elevation_max_m);
    if (s->n_classes < 1 || s->n_classes > TB_TILE_MAX_CLASSES)
        return tb_err_set(err, TB_E_INVALID, "tile spec: %d classes, expected 1..%d", s->n_classes,
                          TB_TILE_MAX_CLASSES);
    for (int c = 0; c < s->n_classes; c++)
        if (!isfinite(s->classes[c].relief_mult) || s->classes[c].relief_mult < 0 ||
            s->classes[c].relief_mult > 100 || s->classes[c].ocean > 1)
            return tb_err_set(err, TB_E_INVALID, "tile spec: class %d: ocean %u, relief_mult %g", c,
                              s->classes[c].ocean, s->classes[c].relief_mult);
    const tb_frame_t *g = &s->geo, *e = &f->geo;
    if (!tb_frame_valid(g) || !tb_frame_same_lattice(g, e) || g->x0 != e->x0 || g->y0 != e->y0 ||
        g->w != e->w || g->h != e->h)
        return tb_err_set(err, TB_E_INVALID,
                          "tile spec: window %" PRId64 ",%" PRId64 " %" PRId64 "x%" PRId64
                          " is not the one tile and margin %d need (%" PRId64 ",%" PRId64
                          " %" PRId64 "x%" PRId64 ")",
                          g->x0, g->y0, g->w, g->h, s->params.margin_cells, e->x0, e->y0, e->w,
                          e->h);
    return 0;
}

static int s_check_arrays(const tb_tile_spec_t *s, tb_err_t *err)
{
    size_t n = (size_t)s->geo.w * (size_t)s->geo.h;
    for (size_t i = 0; i < n; i++) {
        if (s->class_idx[i] >= s->n_classes)
            return tb_err_set(err, TB_E_INVALID, "tile spec: cell %zu has class %u of %d", i,
                              s->class_idx[i], s->n_classes);
        float a = s->area_m2[i], h = s->height_m[i], k = s->rock_k ? s->rock_k[i] : 1.0f;
        if (!isfinite(h) || fabsf(h) > 1e5f || !isfinite(a) || a < 0 || !isfinite(k) || k <= 0)
            return tb_err_set(err, TB_E_INVALID,
                              "tile spec: cell %zu has height %g, area %g, rock %g", i, (double)h,
                              (double)a, (double)k);
    }
    if (!s->exposure != !s->moved_m)
        return tb_err_set(err, TB_E_INVALID,
                          "tile spec: the coastal pass's exposure and moved_m come together");
    for (size_t i = 0; s->exposure && i < n; i++) {
        uint16_t e = s->exposure[i];
        float m = s->moved_m[i];
        if ((e > 1000 && e != 0xffff) || !isfinite(m) || fabsf(m) > 1e5f)
            return tb_err_set(err, TB_E_INVALID,
                              "tile spec: cell %zu has exposure %u (expected 0..1000 or 65535) and "
                              "moved %g m",
                              i, e, (double)m);
    }
    return 0;
}

/* ---- cutting a spec from a planet ---- */

void tb_tile_spec_free(tb_tile_spec_owned_t *s)
{
    if (!s)
        return;
    free(s->height_m);
    free(s->area_m2);
    free(s->rock_k);
    free(s->class_idx);
    free(s->exposure);
    free(s->moved_m);
    memset(s, 0, sizeof *s);
}

static int s_alloc_coast(tb_tile_spec_owned_t *o, size_t n, tb_err_t *err)
{
    o->exposure = malloc(n ? n * sizeof(uint16_t) : 1);
    o->moved_m = malloc(n ? n * sizeof(float) : 1);
    if (!o->exposure || !o->moved_m)
        return tb_err_set(err, TB_E_NOMEM, "tile spec: out of memory for %zu coast cells", n);
    o->spec.exposure = o->exposure;
    o->spec.moved_m = o->moved_m;
    return 0;
}

/* The window's arrays; rock_k only when the spec does not carry the rock's inputs. */
static int s_alloc_arrays(tb_tile_spec_owned_t *o, size_t n, bool with_rock_k, tb_err_t *err)
{
    o->height_m = malloc(n * sizeof(float));
    o->area_m2 = malloc(n * sizeof(float));
    o->rock_k = with_rock_k ? malloc(n * sizeof(float)) : NULL;
    o->class_idx = malloc(n ? n : 1);
    if (!o->height_m || !o->area_m2 || (with_rock_k && !o->rock_k) || !o->class_idx)
        return tb_err_set(err, TB_E_NOMEM, "tile spec: out of memory for %zu cells", n);
    o->spec.height_m = o->height_m;
    o->spec.area_m2 = o->area_m2;
    o->spec.rock_k = o->rock_k;
    o->spec.class_idx = o->class_idx;
    return 0;
}

int tb_tile_spec_cut(const tb_tile_planet_t *planet, tb_tile_id_t id, uint64_t seed,
                     const tb_detail_params_t *params, double elevation_min_m,
                     double elevation_max_m, const tb_tile_class_t *classes, int n_classes,
                     tb_tile_spec_owned_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_tile_spec_t *s = &out->spec;
    s->id = id;
    s->seed = seed;
    s->params = *params;
    s->geo_w = planet->geo_w;
    s->geo_h = planet->geo_h;
    s->geo_cell_m = planet->geo_cell_m;
    s->elevation_min_m = elevation_min_m;
    s->elevation_max_m = elevation_max_m;
    if (n_classes < 1 || n_classes > TB_TILE_MAX_CLASSES)
        return tb_err_set(err, TB_E_INVALID, "tile spec: %d classes", n_classes);
    s->n_classes = n_classes;
    memcpy(s->classes, classes, (size_t)n_classes * sizeof *classes);
    s_frames_t f;
    /* the window the frames imply, then check everything against it */
    if (tb_tile_lattice_make(&f.L, s->geo_w, s->geo_h, s->geo_cell_m, params->size_km,
                             params->cell_m, err) != 0 ||
        tb_tile_window(&f.L, id, params->margin_cells, &f.win, err) != 0 ||
        tb_tile_geo_window(&f.L, &f.win, &s->geo, err) != 0)
        return -1;
    if (s_frames(s, &f, err) != 0)
        return -1;
    size_t n = (size_t)s->geo.w * (size_t)s->geo.h;
    bool coast = planet->exposure && planet->moved_m;
    if (s_alloc_arrays(out, n, planet->rock == NULL, err) != 0 ||
        (coast && s_alloc_coast(out, n, err) != 0)) {
        tb_tile_spec_free(out);
        return -1;
    }
    if (planet->rock) {
        out->rock = *planet->rock;
        s->rock = &out->rock;
    }
    for (int64_t j = 0; j < s->geo.h; j++)
        for (int64_t i = 0; i < s->geo.w; i++) {
            size_t from = tb_idx(planet->geo_w, tb_frame_lattice_x(&s->geo, i), s->geo.y0 + j);
            size_t to = tb_idx(s->geo.w, i, j);
            out->height_m[to] = planet->height_m[from];
            out->area_m2[to] = planet->area_m2[from];
            if (out->rock_k)
                out->rock_k[to] = planet->rock_k ? planet->rock_k[from] : 1.0f;
            out->class_idx[to] = planet->class_idx[from];
            if (coast) {
                out->exposure[to] = planet->exposure[from];
                out->moved_m[to] = planet->moved_m[from];
            }
        }
    return 0;
}

/* ---- the rock ---- */

void tb_tile_rock_of(const tb_manifest_t *m, const tb_uplift_probes_t *probes, tb_tile_rock_t *out)
{
    *out = (tb_tile_rock_t){.seed = m->seed,
                            .circumference_km = m->circumference_km,
                            .massif_wavelength_km = m->massif.wavelength_km,
                            .params = m->rock,
                            .probes = *probes};
}

/* The manifest the rock field reads: the defaults with the rock's inputs, the wavelengths snapped
 * as tb_manifest_finish snaps them (the same function of the same numbers: the same bits). */
static void s_rock_manifest(const tb_tile_rock_t *r, tb_manifest_t *m)
{
    tb_manifest_defaults(m);
    m->seed = r->seed;
    m->circumference_km = r->circumference_km;
    m->massif.wavelength_km = r->massif_wavelength_km;
    m->massif.wavelength_snapped_km =
        tb_snap_wavelength(r->circumference_km, r->massif_wavelength_km);
    m->rock = r->params;
    m->rock.wavelength_snapped_km =
        tb_snap_wavelength(r->circumference_km, r->params.wavelength_km);
}

static cJSON *s_rock_json(const tb_tile_rock_t *r)
{
    cJSON *o = cJSON_CreateObject();
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, r->seed);
    cJSON_AddStringToObject(o, "seed", seed);
    cJSON_AddNumberToObject(o, "circumference_km", r->circumference_km);
    cJSON_AddNumberToObject(o, "massif_wavelength_km", r->massif_wavelength_km);
    cJSON_AddNumberToObject(o, "wavelength_km", r->params.wavelength_km);
    cJSON_AddNumberToObject(o, "k_min_mult", r->params.k_min_mult);
    cJSON_AddNumberToObject(o, "k_max_mult", r->params.k_max_mult);
    cJSON_AddNumberToObject(o, "softness", r->params.softness);
    char *pj = tb_uplift_probes_to_json(&r->probes);
    cJSON_AddItemToObject(o, "probes", pj ? cJSON_Parse(pj) : NULL);
    free(pj);
    return o;
}

static int s_rock_parse(const cJSON *o, tb_tile_rock_t *r, tb_err_t *err)
{
    const char *const keys[] = {"circumference_km", "massif_wavelength_km", "wavelength_km",
                                "k_min_mult",       "k_max_mult",           "softness"};
    double v[6];
    for (int i = 0; i < 6; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || !(x->valuedouble >= 0))
            return tb_err_set(err, TB_E_FORMAT, "tile spec: rock.%s missing or not a number",
                              keys[i]);
        v[i] = x->valuedouble;
    }
    if (!(v[0] > 0) || !(v[1] > 0) || !(v[2] > 0) || !(v[3] > 0) || !(v[4] >= v[3]) || v[5] > 1)
        return tb_err_set(err, TB_E_INVALID, "tile spec: the rock's numbers are out of range");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(o, "seed");
    char *end = NULL;
    if (!cJSON_IsString(seed) || !seed->valuestring[0])
        return tb_err_set(err, TB_E_FORMAT, "tile spec: rock.seed missing");
    r->seed = strtoull(seed->valuestring, &end, 10);
    if (!end || *end)
        return tb_err_set(err, TB_E_FORMAT, "tile spec: rock.seed is not a number");
    r->circumference_km = v[0];
    r->massif_wavelength_km = v[1];
    memset(&r->params, 0, sizeof r->params);
    r->params.wavelength_km = v[2];
    r->params.k_min_mult = v[3];
    r->params.k_max_mult = v[4];
    r->params.softness = v[5];
    char *text = tb_json_print(cJSON_GetObjectItemCaseSensitive(o, "probes"), false);
    int rc = text ? tb_uplift_probes_from_json(text, &r->probes, err)
                  : tb_err_set(err, TB_E_FORMAT, "tile spec: rock.probes missing");
    free(text);
    return rc;
}

/* The rock multiplier under the spec's window, made from its rock inputs, into a new array. */
static float *s_make_rock(const tb_tile_spec_t *spec, tb_err_t *err)
{
    size_t ng = (size_t)spec->geo.w * (size_t)spec->geo.h;
    float *k = malloc((ng ? ng : 1) * sizeof *k);
    if (!k) {
        tb_err_set(err, TB_E_NOMEM, "tile: out of memory for the rock of %zu cells", ng);
        return NULL;
    }
    tb_manifest_t m;
    s_rock_manifest(spec->rock, &m);
    if (tb_tile_rock_k(&m, &spec->rock->probes, &spec->geo, k, err) != 0) {
        free(k);
        return NULL;
    }
    return k;
}

/* ---- spec codec ---- */

static cJSON *s_int_array(const int64_t *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

int tb_tile_spec_encode(const tb_tile_spec_t *spec, void **out, size_t *bytes, tb_err_t *err)
{
    *out = NULL;
    *bytes = 0;
    s_frames_t f;
    if (s_frames(spec, &f, err) != 0 || s_check_arrays(spec, err) != 0)
        return -1;
    cJSON *root = cJSON_CreateObject();
    int64_t id[2] = {spec->id.col, spec->id.row};
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, spec->seed);
    cJSON_AddItemToObject(root, "id", s_int_array(id, 2));
    cJSON_AddStringToObject(root, "seed", seed);
    cJSON *geo = cJSON_AddArrayToObject(root, "geo");
    cJSON_AddItemToArray(geo, cJSON_CreateNumber((double)spec->geo_w));
    cJSON_AddItemToArray(geo, cJSON_CreateNumber((double)spec->geo_h));
    cJSON_AddItemToArray(geo, cJSON_CreateNumber(spec->geo_cell_m));
    double el[2] = {spec->elevation_min_m, spec->elevation_max_m};
    cJSON_AddItemToObject(root, "elevation_m", cJSON_CreateDoubleArray(el, 2));
    cJSON *cls = cJSON_AddArrayToObject(root, "classes");
    for (int c = 0; c < spec->n_classes; c++) {
        cJSON *e = cJSON_CreateArray();
        cJSON_AddItemToArray(e, cJSON_CreateNumber(spec->classes[c].ocean));
        cJSON_AddItemToArray(e, cJSON_CreateNumber(spec->classes[c].relief_mult));
        cJSON_AddItemToArray(cls, e);
    }
    int64_t win[4] = {spec->geo.x0, spec->geo.y0, spec->geo.w, spec->geo.h};
    cJSON_AddItemToObject(root, "window", s_int_array(win, 4));
    cJSON_AddItemToObject(root, "tiles", tb_detail_params_to_json(&spec->params));
    if (spec->rock)
        cJSON_AddItemToObject(root, "rock", s_rock_json(spec->rock));
    if (spec->exposure) /* absent without the coastal pass */
        cJSON_AddNumberToObject(root, "coast", 1);
    char *header = tb_json_print(root, false);
    cJSON_Delete(root);
    if (!header)
        return tb_err_set(err, TB_E_NOMEM, "tile spec: cannot print the header");
    size_t n = (size_t)spec->geo.w * (size_t)spec->geo.h, hlen = strlen(header);
    tb_bytes_t w;
    tb_bytes_init(&w);
    tb_bytes_put_u32(&w, S_SPEC_MAGIC);
    tb_bytes_put_u32(&w, S_VERSION);
    tb_bytes_put_u32(&w, (uint32_t)hlen);
    tb_bytes_put(&w, header, hlen);
    free(header);
    tb_bytes_put(&w, spec->height_m, n * sizeof(float));
    tb_bytes_put(&w, spec->area_m2, n * sizeof(float));
    if (spec->rock) {
        /* the job makes it */
    } else if (spec->rock_k) {
        tb_bytes_put(&w, spec->rock_k, n * sizeof(float));
    } else {
        const float one = 1.0f;
        for (size_t i = 0; i < n; i++)
            tb_bytes_put(&w, &one, sizeof one);
    }
    tb_bytes_put(&w, spec->class_idx, n);
    if (spec->exposure) {
        tb_bytes_put(&w, spec->exposure, n * sizeof(uint16_t));
        tb_bytes_put(&w, spec->moved_m, n * sizeof(float));
    }
    if (w.failed) {
        tb_bytes_free(&w);
        return tb_err_set(err, TB_E_NOMEM, "tile spec: out of memory encoding %zu cells", n);
    }
    *out = tb_bytes_take(&w, bytes);
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

static int s_json_ints(const cJSON *a, int n, double lo, double hi, int64_t *out)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return -1;
    for (int i = 0; i < n; i++)
        if (s_json_int(cJSON_GetArrayItem(a, i), lo, hi, &out[i]) != 0)
            return -1;
    return 0;
}

static int s_decode_header(const cJSON *root, tb_tile_spec_t *s, tb_tile_rock_t *rock_out,
                           bool *has_coast, tb_err_t *err)
{
    int64_t id[2], geo[2], win[4];
    const cJSON *jgeo = cJSON_GetObjectItemCaseSensitive(root, "geo");
    const cJSON *jel = cJSON_GetObjectItemCaseSensitive(root, "elevation_m");
    const cJSON *jseed = cJSON_GetObjectItemCaseSensitive(root, "seed");
    const cJSON *jcls = cJSON_GetObjectItemCaseSensitive(root, "classes");
    if (s_json_ints(cJSON_GetObjectItemCaseSensitive(root, "id"), 2, 0, 1e9, id) != 0 ||
        !cJSON_IsArray(jgeo) || cJSON_GetArraySize(jgeo) != 3 ||
        s_json_int(cJSON_GetArrayItem(jgeo, 0), 1, 1e9, &geo[0]) != 0 ||
        s_json_int(cJSON_GetArrayItem(jgeo, 1), 1, 1e9, &geo[1]) != 0 ||
        !cJSON_IsNumber(cJSON_GetArrayItem(jgeo, 2)) || !cJSON_IsArray(jel) ||
        cJSON_GetArraySize(jel) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(jel, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(jel, 1)) || !cJSON_IsString(jseed) ||
        !cJSON_IsArray(jcls) ||
        s_json_ints(cJSON_GetObjectItemCaseSensitive(root, "window"), 4, -1e12, 1e12, win) != 0)
        return tb_err_set(err, TB_E_FORMAT,
                          "tile spec: id, seed, geo, elevation_m, classes or "
                          "window missing or malformed");
    char *end = NULL;
    s->seed = strtoull(jseed->valuestring, &end, 10);
    if (!end || *end || !jseed->valuestring[0])
        return tb_err_set(err, TB_E_FORMAT, "tile spec: seed \"%s\" is not a number",
                          jseed->valuestring);
    s->id.col = id[0];
    s->id.row = id[1];
    s->geo_w = geo[0];
    s->geo_h = geo[1];
    s->geo_cell_m = cJSON_GetArrayItem(jgeo, 2)->valuedouble;
    s->elevation_min_m = cJSON_GetArrayItem(jel, 0)->valuedouble;
    s->elevation_max_m = cJSON_GetArrayItem(jel, 1)->valuedouble;
    int nc = cJSON_GetArraySize(jcls);
    if (nc < 1 || nc > TB_TILE_MAX_CLASSES)
        return tb_err_set(err, TB_E_INVALID, "tile spec: %d classes, expected 1..%d", nc,
                          TB_TILE_MAX_CLASSES);
    s->n_classes = nc;
    for (int c = 0; c < nc; c++) {
        const cJSON *e = cJSON_GetArrayItem(jcls, c);
        int64_t ocean;
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 ||
            s_json_int(cJSON_GetArrayItem(e, 0), 0, 1, &ocean) != 0 ||
            !cJSON_IsNumber(cJSON_GetArrayItem(e, 1)))
            return tb_err_set(err, TB_E_FORMAT, "tile spec: class %d is not [ocean, relief_mult]",
                              c);
        s->classes[c].ocean = (uint8_t)ocean;
        s->classes[c].relief_mult = cJSON_GetArrayItem(e, 1)->valuedouble;
    }
    if (tb_detail_params_parse(cJSON_GetObjectItemCaseSensitive(root, "tiles"), "tile spec",
                               &s->params, err) != 0)
        return -1;
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "tiles")))
        return tb_err_set(err, TB_E_FORMAT, "tile spec: no tiles parameters");
    const cJSON *rock = cJSON_GetObjectItemCaseSensitive(root, "rock");
    if (rock) {
        if (!cJSON_IsObject(rock))
            return tb_err_set(err, TB_E_FORMAT, "tile spec: rock is not an object");
        if (s_rock_parse(rock, rock_out, err) != 0)
            return -1;
        s->rock = rock_out;
    }
    const cJSON *jcoast = cJSON_GetObjectItemCaseSensitive(root, "coast");
    int64_t coast = 0;
    if (jcoast && s_json_int(jcoast, 1, 1, &coast) != 0)
        return tb_err_set(err, TB_E_FORMAT, "tile spec: \"coast\" is not 1");
    *has_coast = coast == 1;
    if (!(s->geo_cell_m > 0) || !isfinite(s->geo_cell_m) || win[2] < 1 || win[3] < 1 ||
        tb_frame_make(&s->geo, s->geo_w, s->geo_h, s->geo_cell_m, win[0], win[1], win[2], win[3],
                      err) != 0)
        return tb_err_set(err, TB_E_FORMAT, "tile spec: a malformed window");
    s_frames_t f;
    return s_frames(s, &f, err);
}

/* A spec's preamble and header: fills *s (and *rock, which s->rock points to when the spec carries
 * it) but its rasters and leaves r at them. */
static int s_spec_head(const void *data, size_t bytes, tb_reader_t *r, tb_tile_spec_t *s,
                       tb_tile_rock_t *rock, bool *has_coast, tb_err_t *err)
{
    memset(s, 0, sizeof *s);
    tb_reader_init(r, data, bytes);
    char *header = tb_reader_preamble(r, S_SPEC_MAGIC, S_VERSION, S_MAX_HEADER, "tile spec", err);
    if (!header)
        return -1;
    cJSON *root = cJSON_Parse(header);
    free(header);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return tb_err_set(err, TB_E_FORMAT, "tile spec: the header is not a JSON object");
    }
    *has_coast = false;
    int rc = s_decode_header(root, s, rock, has_coast, err);
    cJSON_Delete(root);
    return rc;
}

int tb_tile_spec_decode(const void *data, size_t bytes, tb_tile_spec_owned_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_reader_t r;
    bool coast;
    if (s_spec_head(data, bytes, &r, &out->spec, &out->rock, &coast, err) != 0)
        return -1;
    size_t n = (size_t)out->spec.geo.w * (size_t)out->spec.geo.h;
    bool rock_k = out->spec.rock == NULL; /* else the job makes it */
    size_t per_cell = (rock_k ? 13 : 9) + (coast ? 6 : 0);
    if (tb_reader_left(&r) != n * per_cell)
        return tb_err_set(err, TB_E_FORMAT,
                          "tile spec: %zu raster bytes for a %" PRId64 " x %" PRId64
                          " window (expected %zu)",
                          tb_reader_left(&r), out->spec.geo.w, out->spec.geo.h, n * per_cell);
    if (s_alloc_arrays(out, n, rock_k, err) != 0 || (coast && s_alloc_coast(out, n, err) != 0)) {
        tb_tile_spec_free(out);
        return -1;
    }
    out->spec.rock = rock_k ? NULL : &out->rock;
    tb_reader_get(&r, out->height_m, n * sizeof(float));
    tb_reader_get(&r, out->area_m2, n * sizeof(float));
    if (rock_k)
        tb_reader_get(&r, out->rock_k, n * sizeof(float));
    tb_reader_get(&r, out->class_idx, n);
    if (coast) {
        tb_reader_get(&r, out->exposure, n * sizeof(uint16_t));
        tb_reader_get(&r, out->moved_m, n * sizeof(float));
    }
    if (r.failed || s_check_arrays(&out->spec, err) != 0) {
        if (r.failed)
            tb_err_set(err, TB_E_FORMAT, "tile spec: truncated rasters");
        tb_tile_spec_free(out);
        return -1;
    }
    return 0;
}

/* ---- the passes ---- */

/* CPU seconds of the calling thread: the bench's measure on a shared machine. */
static double s_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tb_tile_result_free(tb_tile_result_t *r)
{
    if (!r)
        return;
    free(r->height_m);
    free(r->height_u16);
    free(r->flow);
    free(r->wear);
    free(r->deposit);
    free(r->splat);
    memset(r, 0, sizeof *r);
}

static int s_result_alloc(tb_tile_result_t *r, size_t n, tb_err_t *err)
{
    r->height_m = malloc(n * sizeof(float));
    r->height_u16 = malloc(n * sizeof(uint16_t));
    r->flow = malloc(n);
    r->wear = malloc(n);
    r->deposit = malloc(n);
    r->splat = malloc(4 * n);
    if (!r->height_m || !r->height_u16 || !r->flow || !r->wear || !r->deposit || !r->splat)
        return tb_err_set(err, TB_E_NOMEM, "tile result: out of memory for %zu cells", n);
    return 0;
}

static uint8_t s_sqrt_byte(double v_m)
{
    double t = v_m <= 0 ? 0 : (v_m >= 1 ? 1 : v_m);
    return (uint8_t)(255.0 * sqrt(t) + 0.5);
}

/* The interior's maps and statistics from the window's final heights and droplet records, one
 * task a row; each thread fills its own statistics, added afterwards (integers: any order). */
typedef struct {
    const tb_tile_spec_t *s;
    const s_frames_t *f;
    const double *h;
    const int64_t *ero, *dep, *water;
    const uint8_t *cls;
    const uint8_t *sand; /* the shore pass's beach sand, 0..255 (NULL: none) */
    tb_tile_result_t *r;
    tb_tile_stats_t *per_thread;
} s_out_t;

static void s_output_row(void *ctx, size_t task, int thread)
{
    const s_out_t *a = ctx;
    const tb_tile_spec_t *s = a->s;
    const tb_frame_t *win = &a->f->win, *in = &a->f->interior;
    tb_tile_result_t *r = a->r;
    tb_tile_stats_t *st = &a->per_thread[thread];
    int64_t ox = tb_wrap(in->x0 - win->x0, win->lattice_w), oy = in->y0 - win->y0;
    double lo = s->elevation_min_m, scale = 65535.0 / (s->elevation_max_m - s->elevation_min_m);
    double flow_full = s->params.splat_flow_full * TB_DROPLET_WATER_UNIT;
    int64_t j = (int64_t)task;
    for (int64_t i = 0; i < in->w; i++) {
        size_t at = tb_idx(win->w, i + ox, j + oy), o = tb_idx(in->w, i, j);
        double hv = a->h[at];
        r->height_m[o] = (float)hv;
        double v = ((double)r->height_m[o] - lo) * scale;
        r->height_u16[o] = !(v >= 0) ? 0 : (v > 65535 ? 65535 : (uint16_t)(v + 0.5));
        int64_t wq = a->water[at], eq = a->ero[at], dq = a->dep[at];
        double wat = (double)wq / TB_DROPLET_WATER_UNIT;
        if (wq > 0) {
            double fl = 32.0 * log2(1.0 + wat);
            r->flow[o] = fl >= 255 ? 255 : (uint8_t)(fl + 0.5);
        } else {
            r->flow[o] = 0;
        }
        double dep_m = (double)dq * TB_DROPLET_QUANTUM_M;
        /* beach sand reads as sediment in the splat (the deposit map keeps the droplets' own) */
        double sand_m = a->sand ? a->sand[at] / 255.0 * s->params.splat_sediment_m : 0;
        r->wear[o] = eq > 0 ? s_sqrt_byte((double)eq * TB_DROPLET_QUANTUM_M) : 0;
        r->deposit[o] = dq > 0 ? s_sqrt_byte(dep_m) : 0;
        double slope = tb_detail_slope(a->h, win->w, win->h, win->cell_m, i + ox, j + oy);
        double deg = atan(slope) * (180.0 / M_PI);
        uint8_t c = a->cls[at];
        bool ocean = s->classes[c].ocean != 0;
        tb_splat_weights(&s->params, deg, wat, dep_m > sand_m ? dep_m : sand_m, hv, ocean,
                         &r->splat[4 * o]);
        int bin = (int)deg;
        bin = bin < 0 ? 0 : (bin >= TB_TILE_SLOPE_BINS ? TB_TILE_SLOPE_BINS - 1 : bin);
        st->slope_hist[c][bin]++;
        st->cells++;
        if (!ocean) {
            st->land_cells++;
            st->channel_cells += (double)wq >= flow_full;
        }
        st->eroded_q += eq;
        st->deposited_q += dq;
    }
}

static int s_outputs(const tb_tile_spec_t *s, const s_frames_t *f, const double *h,
                     const int64_t *ero, const int64_t *dep, const int64_t *water,
                     const uint8_t *cls, const uint8_t *sand, tb_tile_result_t *r, tb_pool_t *pool,
                     tb_err_t *err)
{
    int threads = tb_pool_threads(pool);
    tb_tile_stats_t *per = calloc((size_t)threads, sizeof *per);
    if (!per)
        return tb_err_set(err, TB_E_NOMEM, "tile: out of memory for statistics");
    s_out_t a = {s, f, h, ero, dep, water, cls, sand, r, per};
    tb_pool_run(pool, (size_t)f->interior.h, s_output_row, &a);
    tb_tile_stats_t *st = &r->stats;
    memset(st, 0, sizeof *st);
    st->n_classes = s->n_classes;
    for (int t = 0; t < threads; t++) {
        for (int c = 0; c < s->n_classes; c++)
            for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
                st->slope_hist[c][k] += per[t].slope_hist[c][k];
        st->cells += per[t].cells;
        st->land_cells += per[t].land_cells;
        st->channel_cells += per[t].channel_cells;
        st->eroded_q += per[t].eroded_q;
        st->deposited_q += per[t].deposited_q;
    }
    free(per);
    return 0;
}

/* The sea floor at 2 m: the 8 m floor is a function of each cell's distance from the nearest land
 * cell (jobs/coast/bathymetry.c), whose gradient turns at the boundaries between the land cells'
 * nearest regions - rays off every corner of the 8 m coastline and creases half way between two
 * coasts, which the cubic resampler draws at 2 m as bands 16 m wide. Below S_SEA_FROM_M the
 * resampled floor is replaced, smoothly by depth, by its mean over a tent of radius 2 x S_SEA_BOX
 * (32) cells (the box of radius S_SEA_BOX twice along each axis, 130 m across at 2 m: about sixteen
 * geology cells), which leaves the shelf's and the slope's shape and takes the rays and creases
 * out. In integers (millimetres), so running sums give the same value wherever the window starts:
 * a function of world position for every cell 2 S_SEA_BOX inside the window, not nearer its edge
 * (tests/test_detail_ground.c test_sea_floor_reads_32_cells; the margin bound does not count this
 * reach yet: docs/tiles.md, "The margin"). The shallows above are the shore pass's. */
#define S_SEA_BOX 16
#define S_SEA_FROM_M 4.0
#define S_SEA_FULL_M 10.0

typedef struct {
    const int64_t *in;
    int64_t *out;
    int64_t w, h;
    bool rows;
    tb_line_scratch_fail_t *fail; /* a task's failed allocation, reported after the run */
} s_seabox_t;

/* The box sum of radius S_SEA_BOX along one line of n values (the line's ends repeated). */
static void s_seabox_run(const int64_t *in, int64_t *out, int64_t n)
{
    const int64_t b = S_SEA_BOX;
    int64_t run = 0;
    for (int64_t k = -b; k <= b; k++)
        run += in[k < 0 ? 0 : (k >= n ? n - 1 : k)];
    for (int64_t x = 0; x < n; x++) {
        out[x] = run;
        int64_t add = x + b + 1, sub = x - b;
        run += in[add >= n ? n - 1 : add] - in[sub < 0 ? 0 : sub];
    }
}

#define S_SEA_COLS 32 /* columns a task gathers into a contiguous block */

static void s_seabox_line(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_seabox_t *c = ctx;
    if (c->rows) {
        s_seabox_run(c->in + (int64_t)task * c->w, c->out + (int64_t)task * c->w, c->w);
        return;
    }
    int64_t x0 = (int64_t)task * S_SEA_COLS, h = c->h;
    int64_t nc = c->w - x0 < S_SEA_COLS ? c->w - x0 : S_SEA_COLS;
    int64_t *block = tb_line_scratch_alloc((size_t)(nc * h + h) * sizeof *block, c->fail);
    if (!block) /* recorded in c->fail: the pass fails with TB_E_NOMEM */
        return;
    int64_t *col = block + nc * h;
    for (int64_t y = 0; y < h; y++)
        for (int64_t k = 0; k < nc; k++)
            block[k * h + y] = c->in[y * c->w + x0 + k];
    for (int64_t k = 0; k < nc; k++) {
        s_seabox_run(block + k * h, col, h);
        memcpy(block + k * h, col, (size_t)h * sizeof *col);
    }
    for (int64_t y = 0; y < h; y++)
        for (int64_t k = 0; k < nc; k++)
            c->out[y * c->w + x0 + k] = block[k * h + y];
    free(block);
}

static int s_sea_floor(const tb_frame_t *win, double *h, tb_pool_t *pool, tb_err_t *err)
{
    size_t n = (size_t)win->w * (size_t)win->h;
    bool any = false;
    for (size_t i = 0; i < n && !any; i++)
        any = h[i] < -S_SEA_FROM_M;
    if (!any)
        return 0;
    int64_t *a = malloc(n * sizeof *a), *t = malloc(n * sizeof *t);
    if (!a || !t) {
        free(a);
        free(t);
        return tb_err_set(err, TB_E_NOMEM, "tile: out of memory for the sea floor");
    }
    for (size_t i = 0; i < n; i++)
        a[i] = (int64_t)floor(h[i] * 1000.0 + 0.5);
    tb_line_scratch_fail_t fail = {.filter = TB_LINE_SEA_FLOOR};
    s_seabox_t c = {a, t, win->w, win->h, true, &fail};
    for (int k = 0; k < 4; k++) { /* rows twice, then columns twice */
        c.rows = k < 2;
        c.in = k % 2 == 0 ? a : t;
        c.out = k % 2 == 0 ? t : a;
        tb_pool_run(pool, (size_t)(c.rows ? win->h : (win->w + S_SEA_COLS - 1) / S_SEA_COLS),
                    s_seabox_line, &c);
    }
    if (tb_line_scratch_check(&fail, "tile: the sea floor's smoothing", err) != 0) {
        free(a);
        free(t);
        return -1;
    }
    const double N = 2 * S_SEA_BOX + 1, scale = 1.0 / (1000.0 * N * N * N * N);
    for (size_t i = 0; i < n; i++) {
        double depth = -h[i];
        if (depth <= S_SEA_FROM_M)
            continue;
        double u = (depth - S_SEA_FROM_M) / (S_SEA_FULL_M - S_SEA_FROM_M);
        u = u > 1 ? 1 : u;
        double wgt = u * u * (3 - 2 * u);
        h[i] += wgt * ((double)a[i] * scale - h[i]);
    }
    free(a);
    free(t);
    return 0;
}

/* The shore pass (shore.h): the coastal pass's exposure, cut and laid depth resampled to the
 * window like the heights (through the geology scratch ge, gm, whose resampling is done, into the
 * thermal scratch, free again), then the pass over h. */
static int s_shore(const tb_tile_spec_t *spec, const s_frames_t *f, const uint8_t *land8, float *ge,
                   float *gm, double *h, double *work, uint8_t *sand, tb_tile_result_t *out,
                   tb_pool_t *pool, tb_err_t *err)
{
    const tb_frame_t *win = &f->win, *geo = &spec->geo;
    size_t n = (size_t)win->w * (size_t)win->h, ng = (size_t)geo->w * (size_t)geo->h;
    double *laid = malloc(n * sizeof *laid);
    if (!laid)
        return tb_err_set(err, TB_E_NOMEM, "tile: out of memory for the shore");
    for (size_t i = 0; i < ng; i++) {
        uint16_t e = spec->exposure[i];
        /* beyond carry_m (0xffff) the shore pass reads nothing: open, like the sea it faces */
        ge[i] = e == 0xffff ? 1.0f : (float)e / 1000.0f;
        gm[i] = spec->moved_m[i] < 0 ? -spec->moved_m[i] : 0;
    }
    double *e2 = work, *cut2 = work + n;
    int rc = -1;
    if (tb_resample_catmull_rom(geo, ge, win, e2, err) != 0 ||
        tb_resample_catmull_rom(geo, gm, win, cut2, err) != 0)
        goto done;
    for (size_t i = 0; i < ng; i++)
        gm[i] = spec->moved_m[i] > 0 ? spec->moved_m[i] : 0;
    if (tb_resample_catmull_rom(geo, gm, win, laid, err) != 0)
        goto done;
    tb_shore_in_t in = {.p = &spec->params,
                        .seed = spec->seed,
                        .win = win,
                        .land8 = land8,
                        .exposure = e2,
                        .cut_m = cut2,
                        .laid_m = laid};
    tb_shore_stats_t st;
    if (tb_shore_dean_sunamura(&in, h, sand, &st, pool, err) != 0)
        goto done;
    out->shore_beach_cells = st.beach_cells;
    out->shore_cliff_cells = st.cliff_cells;
    rc = 0;
done:
    free(laid);
    return rc;
}

int tb_tile_compute(const tb_tile_spec_t *spec, tb_pool_t *pool, tb_tile_result_t *out,
                    tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    s_frames_t f;
    if (s_frames(spec, &f, err) != 0 || s_check_arrays(spec, err) != 0)
        return -1;
    const tb_detail_params_t *p = &spec->params;
    const tb_frame_t *win = &f.win, *geo = &spec->geo;
    size_t n = (size_t)win->w * (size_t)win->h, ng = (size_t)geo->w * (size_t)geo->h;
    size_t ni = (size_t)f.interior.w * (size_t)f.interior.h;
    out->id = spec->id;
    out->interior = f.interior;
    out->elevation_min_m = spec->elevation_min_m;
    out->elevation_max_m = spec->elevation_max_m;
    double *h0 = malloc(n * sizeof *h0), *h1 = malloc(n * sizeof *h1);
    double *work = malloc(2 * n * sizeof *work); /* log-area + factor, then thermal scratch */
    int64_t *ero = malloc(n * sizeof *ero), *dep = malloc(n * sizeof *dep);
    int64_t *water = malloc(n * sizeof *water);
    uint8_t *cls = malloc(n);
    float *gla = malloc(ng * sizeof *gla), *gfac = malloc(ng * sizeof *gfac);
    float *rock = NULL; /* the multiplier the job makes from the spec's rock inputs */
    bool coast = spec->exposure && spec->moved_m;
    uint8_t *land8 = coast ? malloc(n) : NULL, *sand = coast ? malloc(n) : NULL;
    int rc = -1;
    if (!h0 || !h1 || !work || !ero || !dep || !water || !cls || !gla || !gfac ||
        (coast && (!land8 || !sand)) || s_result_alloc(out, ni, err) != 0) {
        tb_err_set(err, TB_E_NOMEM, "tile: out of memory for a %" PRId64 " x %" PRId64 " window",
                   win->w, win->h);
        goto done;
    }
    double t[7], cpu[7];
    t[0] = tb_now_s();
    cpu[0] = s_cpu_s();
    if (spec->rock && !(rock = s_make_rock(spec, err)))
        goto done;
    const float *rock_k = spec->rock ? rock : spec->rock_k;
    for (size_t i = 0; i < ng; i++) {
        const tb_tile_class_t *c = &spec->classes[spec->class_idx[i]];
        double k = rock_k ? (double)rock_k[i] : 1.0;
        gla[i] = (float)log10(spec->area_m2[i] > 1 ? (double)spec->area_m2[i] : 1.0);
        gfac[i] = (float)(c->relief_mult * (c->ocean ? p->relief_ocean_mult : 1.0) *
                          pow(k, -p->relief_rock_exponent));
    }
    double *la = work, *fac = work + n;
    if (tb_resample_catmull_rom(geo, spec->height_m, win, h0, err) != 0 ||
        tb_resample_catmull_rom(geo, gla, win, la, err) != 0 ||
        tb_resample_catmull_rom(geo, gfac, win, fac, err) != 0 ||
        tb_resample_nearest_u8(geo, spec->class_idx, win, cls, err) != 0)
        goto done;
    if (land8) /* the waterline the shore pass draws from: the 8 m surface's, before any detail;
                  land the coastal pass left at or below sea level is no sea (the pass's own rule:
                  the sea is the ocean classes) */
        for (size_t i = 0; i < n; i++)
            land8[i] = h0[i] > 0 || !spec->classes[cls[i]].ocean;
    if (s_sea_floor(win, h0, pool, err) != 0)
        goto done;
    t[1] = tb_now_s();
    cpu[1] = s_cpu_s();
    if (tb_relief_fbm(p, spec->seed, win, fac, la, h0, err) != 0)
        goto done;
    t[2] = tb_now_s();
    cpu[2] = s_cpu_s();
    if (tb_erosion_droplets_beyer(p, spec->seed, win, h0, la, h1, ero, dep, water, &out->budget,
                                  pool, err) != 0)
        goto done;
    t[3] = tb_now_s();
    cpu[3] = s_cpu_s();
    if (tb_thermal_talus_jacobi(h1, win->w, win->h, win->cell_m, p->thermal_talus_deg,
                                p->thermal_rate, p->thermal_iterations, work, pool, err) != 0)
        goto done;
    t[4] = tb_now_s();
    cpu[4] = s_cpu_s();
    if (land8 && s_shore(spec, &f, land8, gla, gfac, h1, work, sand, out, pool, err) != 0)
        goto done;
    t[5] = tb_now_s();
    cpu[5] = s_cpu_s();
    if (s_outputs(spec, &f, h1, ero, dep, water, cls, sand, out, pool, err) != 0)
        goto done;
    t[6] = tb_now_s();
    cpu[6] = s_cpu_s();
    for (int k = 0; k < 6; k++) {
        out->pass_s[k] = t[k + 1] - t[k];
        out->pass_cpu_s[k] = cpu[k + 1] - cpu[k];
    }
    rc = 0;
done:
    free(h0);
    free(h1);
    free(work);
    free(ero);
    free(dep);
    free(water);
    free(cls);
    free(gla);
    free(gfac);
    free(rock);
    free(land8);
    free(sand);
    if (rc != 0)
        tb_tile_result_free(out);
    return rc;
}

/* ---- result codec ---- */

static void s_put_i64s(tb_bytes_t *w, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tb_bytes_put_i64(w, v[i]);
}

int tb_tile_result_encode(const tb_tile_result_t *r, void **out, size_t *bytes, tb_err_t *err)
{
    *out = NULL;
    *bytes = 0;
    const tb_frame_t *b = &r->interior;
    size_t n = (size_t)b->w * (size_t)b->h;
    cJSON *root = cJSON_CreateObject();
    int64_t id[2] = {r->id.col, r->id.row};
    cJSON_AddItemToObject(root, "id", s_int_array(id, 2));
    double fr[7] = {(double)b->x0,        (double)b->y0,        (double)b->w, (double)b->h,
                    (double)b->lattice_w, (double)b->lattice_h, b->cell_m};
    cJSON_AddItemToObject(root, "interior", cJSON_CreateDoubleArray(fr, 7));
    double el[2] = {r->elevation_min_m, r->elevation_max_m};
    cJSON_AddItemToObject(root, "elevation_m", cJSON_CreateDoubleArray(el, 2));
    cJSON_AddNumberToObject(root, "classes", r->stats.n_classes);
    char spec_hex[17];
    tb_hash_hex(r->spec_xxh3, spec_hex);
    cJSON_AddStringToObject(root, "spec_xxh3", spec_hex);
    char *header = tb_json_print(root, false);
    cJSON_Delete(root);
    if (!header)
        return tb_err_set(err, TB_E_NOMEM, "tile result: cannot print the header");
    tb_bytes_t w;
    tb_bytes_init(&w);
    size_t hlen = strlen(header);
    tb_bytes_put_u32(&w, S_RESULT_MAGIC);
    tb_bytes_put_u32(&w, S_RESULT_VERSION);
    tb_bytes_put_u32(&w, (uint32_t)hlen);
    tb_bytes_put(&w, header, hlen);
    free(header);
    tb_bytes_put(&w, r->height_m, n * sizeof(float));
    tb_bytes_put(&w, r->height_u16, n * sizeof(uint16_t));
    tb_bytes_put(&w, r->flow, n);
    tb_bytes_put(&w, r->wear, n);
    tb_bytes_put(&w, r->deposit, n);
    tb_bytes_put(&w, r->splat, 4 * n);
    const tb_droplet_budget_t *bu = &r->budget;
    int64_t bv[6] = {bu->eroded_q,        bu->deposited_q, bu->carried_edge_q,
                     bu->deposited_end_q, bu->droplets,    bu->steps};
    s_put_i64s(&w, bv, 6);
    const tb_tile_stats_t *st = &r->stats;
    int64_t sv[5] = {st->cells, st->land_cells, st->channel_cells, st->eroded_q, st->deposited_q};
    s_put_i64s(&w, sv, 5);
    for (int c = 0; c < st->n_classes; c++)
        s_put_i64s(&w, st->slope_hist[c], TB_TILE_SLOPE_BINS);
    if (w.failed) {
        tb_bytes_free(&w);
        return tb_err_set(err, TB_E_NOMEM, "tile result: out of memory encoding %zu cells", n);
    }
    *out = tb_bytes_take(&w, bytes);
    return 0;
}

/* The bytes a result of n interior cells and nc classes takes after its header. */
static size_t s_result_body(size_t n, int64_t nc)
{
    return n * 13 + 8 * (6 + 5 + (size_t)nc * TB_TILE_SLOPE_BINS);
}

/* A result's preamble and header: fills out's id, interior, elevation range, class count and
 * spec_xxh3 (no arrays) and checks that the rest is as long as they make it; r is left there. */
static int s_result_head(const void *data, size_t bytes, tb_reader_t *r, tb_tile_result_t *out,
                         tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_reader_init(r, data, bytes);
    char *header = tb_reader_preamble(r, S_RESULT_MAGIC, S_RESULT_VERSION, S_MAX_RESULT_HEADER,
                                      "tile result", err);
    if (!header)
        return -1;
    cJSON *root = cJSON_Parse(header);
    free(header);
    int64_t id[2], fr[6], nc;
    const cJSON *jf = cJSON_GetObjectItemCaseSensitive(root, "interior");
    const cJSON *jel = cJSON_GetObjectItemCaseSensitive(root, "elevation_m");
    const cJSON *jspec = cJSON_GetObjectItemCaseSensitive(root, "spec_xxh3");
    int bad = s_json_ints(cJSON_GetObjectItemCaseSensitive(root, "id"), 2, 0, 1e9, id) != 0 ||
              !cJSON_IsArray(jf) || cJSON_GetArraySize(jf) != 7 || !cJSON_IsArray(jel) ||
              cJSON_GetArraySize(jel) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(jel, 0)) ||
              !cJSON_IsNumber(cJSON_GetArrayItem(jel, 1)) ||
              s_json_int(cJSON_GetObjectItemCaseSensitive(root, "classes"), 1, TB_TILE_MAX_CLASSES,
                         &nc) != 0 ||
              !cJSON_IsString(jspec) || tb_hash_from_hex(jspec->valuestring, &out->spec_xxh3) != 0;
    for (int i = 0; !bad && i < 6; i++)
        bad = s_json_int(cJSON_GetArrayItem(jf, i), -1e12, 1e12, &fr[i]);
    const cJSON *cell = bad ? NULL : cJSON_GetArrayItem(jf, 6);
    if (bad || !cJSON_IsNumber(cell) || fr[2] < 1 || fr[3] < 1 ||
        tb_frame_make(&out->interior, fr[4], fr[5], cell->valuedouble, fr[0], fr[1], fr[2], fr[3],
                      err) != 0 ||
        out->interior.h > S_MAX_CELLS / out->interior.w) {
        cJSON_Delete(root);
        return tb_err_set(err, TB_E_FORMAT, "tile result: malformed header");
    }
    out->id.col = id[0];
    out->id.row = id[1];
    out->elevation_min_m = cJSON_GetArrayItem(jel, 0)->valuedouble;
    out->elevation_max_m = cJSON_GetArrayItem(jel, 1)->valuedouble;
    out->stats.n_classes = (int)nc;
    cJSON_Delete(root);
    size_t n = (size_t)out->interior.w * (size_t)out->interior.h;
    if (tb_reader_left(r) != s_result_body(n, nc))
        return tb_err_set(err, TB_E_FORMAT, "tile result: %zu bytes for %zu cells (expected %zu)",
                          tb_reader_left(r), n, s_result_body(n, nc));
    return 0;
}

int tb_tile_result_decode(const void *data, size_t bytes, tb_tile_result_t *out, tb_err_t *err)
{
    tb_reader_t r;
    if (s_result_head(data, bytes, &r, out, err) != 0)
        return -1;
    size_t n = (size_t)out->interior.w * (size_t)out->interior.h;
    if (s_result_alloc(out, n, err) != 0) {
        tb_tile_result_free(out);
        return -1;
    }
    tb_reader_get(&r, out->height_m, n * sizeof(float));
    tb_reader_get(&r, out->height_u16, n * sizeof(uint16_t));
    tb_reader_get(&r, out->flow, n);
    tb_reader_get(&r, out->wear, n);
    tb_reader_get(&r, out->deposit, n);
    tb_reader_get(&r, out->splat, 4 * n);
    tb_droplet_budget_t *bu = &out->budget;
    bu->eroded_q = tb_reader_i64(&r);
    bu->deposited_q = tb_reader_i64(&r);
    bu->carried_edge_q = tb_reader_i64(&r);
    bu->deposited_end_q = tb_reader_i64(&r);
    bu->droplets = tb_reader_i64(&r);
    bu->steps = tb_reader_i64(&r);
    tb_tile_stats_t *st = &out->stats;
    st->cells = tb_reader_i64(&r);
    st->land_cells = tb_reader_i64(&r);
    st->channel_cells = tb_reader_i64(&r);
    st->eroded_q = tb_reader_i64(&r);
    st->deposited_q = tb_reader_i64(&r);
    for (int c = 0; c < st->n_classes; c++)
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            st->slope_hist[c][k] = tb_reader_i64(&r);
    if (r.failed) {
        tb_tile_result_free(out);
        return tb_err_set(err, TB_E_FORMAT, "tile result: truncated");
    }
    return 0;
}

/* ---- the job kind ---- */

static int s_job_run(const void *spec_bytes, size_t n, tb_job_ctx_t *ctx, tb_job_output_t *out,
                     tb_err_t *err)
{
    tb_tile_spec_owned_t spec;
    if (tb_tile_spec_decode(spec_bytes, n, &spec, err) != 0)
        return -1;
    if (tb_job_progress(ctx, 0.0, "tile")) {
        tb_tile_spec_free(&spec);
        return tb_err_set(err, TB_E_INTERRUPTED, "tile: stopped");
    }
    tb_tile_result_t result;
    int rc = tb_tile_compute(&spec.spec, ctx ? ctx->pool : NULL, &result, err);
    tb_tile_spec_free(&spec);
    if (rc != 0)
        return -1;
    result.spec_xxh3 = XXH3_64bits(spec_bytes, n);
    rc = tb_tile_result_encode(&result, &out->data, &out->bytes, err);
    tb_tile_result_free(&result);
    if (rc == 0 && tb_job_progress(ctx, 1.0, "tile done")) {
        free(out->data);
        out->data = NULL;
        out->bytes = 0;
        return tb_err_set(err, TB_E_INTERRUPTED, "tile: stopped");
    }
    return rc;
}

/* The interior a spec's result covers, from its header alone (no rasters are read). */
static int s_spec_interior(const void *spec, size_t n, tb_tile_spec_t *s, tb_frame_t *interior,
                           tb_err_t *err)
{
    tb_reader_t r;
    s_frames_t f;
    tb_tile_rock_t rock;
    bool coast;
    if (s_spec_head(spec, n, &r, s, &rock, &coast, err) != 0 || s_frames(s, &f, err) != 0)
        return -1;
    s->rock = NULL; /* it pointed at this frame's rock */
    *interior = f.interior;
    return 0;
}

double tb_tile_peak_bytes(int64_t window_cells)
{
    return TB_TILE_PEAK_BYTES_A_CELL * (double)window_cells + TB_TILE_PEAK_FIXED_BYTES;
}

size_t tb_tile_result_bound(const void *spec, size_t n)
{
    tb_tile_spec_t s;
    tb_frame_t in;
    tb_err_t err;
    if (s_spec_interior(spec, n, &s, &in, &err) != 0)
        return 0;
    /* What tb_tile_result_encode writes: magic, version, header length, a header of at most
     * S_MAX_RESULT_HEADER, then the body. Keep in step with it. */
    return 12 + S_MAX_RESULT_HEADER + s_result_body((size_t)in.w * (size_t)in.h, s.n_classes);
}

/* A result answers a spec when it echoes the spec's hash (which covers the tile, the seed, the
 * window and the parameters) and its tile, interior, elevation range, class count and length are
 * the ones the spec asks for (docs/distribution.md, "Verifying results"). Reads the headers only.
 */
/* No honest height is this far from sea level (the deepest trench and the highest peak of a planet
 * are a few tens of km). */
#define S_MAX_ABS_HEIGHT_M 1e6

static int64_t s_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return (int64_t)v;
}

/* What every honest tile result holds (its head checked): finite heights within a physical bound
 * (not the manifest's elevation range: heights beyond it are honest, the 16-bit samples clip them
 * and the bake reports the clipped share), each 16-bit sample the encoding of its height in that
 * range; the statistics count every interior cell once (the slope histograms add up to the cells,
 * the land and channel cells within them) and no negative volume; the droplets' budget closes: what
 * they laid and carried off the window is at most what they eroded. Read in place, one pass over
 * the heights. */
static int s_check_body(const tb_tile_result_t *got, const char *id, const uint8_t *body,
                        tb_err_t *err)
{
    size_t n = (size_t)got->interior.w * (size_t)got->interior.h;
    double lo = got->elevation_min_m, hi = got->elevation_max_m, scale = 65535.0 / (hi - lo);
    const uint8_t *h16 = body + 4 * n;
    for (size_t o = 0; o < n; o++) {
        float h;
        uint16_t u;
        memcpy(&h, body + 4 * o, 4);
        memcpy(&u, h16 + 2 * o, 2);
        double v = ((double)h - lo) * scale;
        uint16_t want = !(v >= 0) ? 0 : (v > 65535 ? 65535 : (uint16_t)(v + 0.5));
        if (!isfinite(h) || !(fabs(h) <= S_MAX_ABS_HEIGHT_M) || u != want)
            return tb_err_set(err, TB_E_CHECKSUM,
                              "tile result (tile %s): interior cell %zu has height %g m (at most "
                              "%g from sea level) and sample %u (its encoding is %u)",
                              id, o, (double)h, S_MAX_ABS_HEIGHT_M, (unsigned)u, (unsigned)want);
    }
    const uint8_t *t = body + 13 * n;
    int64_t bu[6], st[5];
    for (int k = 0; k < 6; k++)
        bu[k] = s_le64(t + 8 * k);
    for (int k = 0; k < 5; k++)
        st[k] = s_le64(t + 48 + 8 * k);
    int64_t binned = 0;
    bool neg = false;
    for (int c = 0; c < got->stats.n_classes; c++)
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++) {
            int64_t v = s_le64(t + 88 + 8 * ((size_t)c * TB_TILE_SLOPE_BINS + (size_t)k));
            neg |= v < 0;
            binned += v;
        }
    /* bu: eroded, deposited, carried off, deposited at the end, droplets, steps; st: cells, land
     * cells, channel cells, eroded, deposited */
    if (neg || st[0] != (int64_t)n || binned != st[0] || st[1] < 0 || st[1] > st[0] || st[2] < 0 ||
        st[2] > st[1] || st[3] < 0 || st[4] < 0)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "tile result (tile %s): statistics that do not add up (%lld cells of "
                          "%zu, %lld in the slope bins, %lld land, %lld channel)",
                          id, (long long)st[0], n, (long long)binned, (long long)st[1],
                          (long long)st[2]);
    for (int k = 0; k < 6; k++)
        neg |= bu[k] < 0;
    if (neg || bu[3] > bu[1] || bu[1] > bu[0] || bu[2] > bu[0] - bu[1])
        return tb_err_set(err, TB_E_CHECKSUM,
                          "tile result (tile %s): a droplet budget that does not close (eroded "
                          "%lld, deposited %lld of which %lld at the end, carried off %lld)",
                          id, (long long)bu[0], (long long)bu[1], (long long)bu[3],
                          (long long)bu[2]);
    return 0;
}

static int s_job_check(const void *spec, size_t n, const void *result, size_t bytes, tb_err_t *err)
{
    tb_tile_spec_t s;
    tb_frame_t in;
    if (s_spec_interior(spec, n, &s, &in, err) != 0)
        return -1;
    tb_tile_result_t got;
    tb_reader_t r;
    if (s_result_head(result, bytes, &r, &got, err) != 0)
        return -1;
    uint64_t want = XXH3_64bits(spec, n);
    char id[TB_TILE_ID_MAX];
    tb_tile_id_format(got.id, id);
    if (got.spec_xxh3 != want)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "tile result answers spec %016llx (tile %s), not this job's %016llx",
                          (unsigned long long)got.spec_xxh3, id, (unsigned long long)want);
    const tb_frame_t *g = &got.interior;
    if (got.id.col != s.id.col || got.id.row != s.id.row || !tb_frame_same_lattice(g, &in) ||
        g->x0 != in.x0 || g->y0 != in.y0 || g->w != in.w || g->h != in.h ||
        got.elevation_min_m != s.elevation_min_m || got.elevation_max_m != s.elevation_max_m ||
        got.stats.n_classes != s.n_classes)
        return tb_err_set(err, TB_E_FORMAT,
                          "tile result: tile %s, interior %" PRId64 ",%" PRId64 " %" PRId64
                          "x%" PRId64 ", %d classes is not what its spec asks for",
                          id, g->x0, g->y0, g->w, g->h, got.stats.n_classes);
    return s_check_body(&got, id, r.data + r.pos, err);
}

const tb_job_kind_t tb_job_kind_tile = {
    .name = "tile",
    .run = s_job_run,
    .max_spec_bytes = (size_t)1 << 31,
    .max_result_bytes = (size_t)1 << 34,
    .summary = "one detail tile: resample to 2 m, relief, droplets, thermal, maps and histograms",
    .result_bound = tb_tile_result_bound,
    .check_result = s_job_check,
};
