/* The job "coast": the coastal pass over the whole planet as a pure function from spec bytes to
 * result bytes (jobs/job.h, docs/coast.md "The job"). Wire format (little-endian):
 *   spec:   "TBCS" u32 version | u32 header bytes | header JSON | height f32 (w h) | classes u8 (w
 * h) | u64 mouths | per mouth: i64 x, i64 y, f64 eroded m3 (sorted by y then x, one per cell)
 *   result: "TBCR" u32 version (2) | u64 spec_xxh3 (the XXH3-64 of the spec bytes it answers) |
 *           i64 w | i64 h | statistics (fixed list of i64 and f64) | height f32 | moved f32 |
 *           exposure u16
 * The header JSON ({"planet": [w, h, cell_m], "coast": {...}, "classes": [...]}) is printed by
 * cJSON from objects built in a fixed order, so equal specs are equal bytes. The dispatch
 * compresses and checksums both as blobs (common/blob.h). Typical sizes: 5 bytes a cell of spec, 10
 * of result (380 MB and 760 MB raw for the predecessor's 76 M-cell planet). */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/json.h"
#include "common/bytes.h"
#include "jobs/coast/coast.h"
#include "jobs/coast/methods.h"

#define S_SPEC_MAGIC 0x53434254u   /* "TBCS" */
#define S_RESULT_MAGIC 0x52434254u /* "TBCR" */
#define S_VERSION 1u
/* version 2 echoes the spec's hash (docs/distribution.md, "Verifying results") */
#define S_RESULT_VERSION 2u
#define S_MAX_HEADER (1u << 20)

void tb_coast_classes_from_legend(const tb_legend_t *legend, tb_coast_classes_t *out)
{
    memset(out, 0, sizeof *out);
    out->n = legend->n_classes;
    for (int c = 0; c < legend->n_classes; c++) {
        out->ocean[c] = legend->classes[c].kind == TB_CLASS_OCEAN;
        out->depth_m[c] = out->ocean[c] ? legend->classes[c].depth_m : 0;
    }
}

static int s_mouth_cmp(const void *a, const void *b)
{
    const tb_coast_mouth_t *x = a, *y = b;
    if (x->y != y->y)
        return x->y < y->y ? -1 : 1;
    if (x->x != y->x)
        return x->x < y->x ? -1 : 1;
    return x->eroded_m3 < y->eroded_m3 ? -1 : x->eroded_m3 > y->eroded_m3;
}

int tb_coast_spec_encode(const tb_coast_spec_t *spec, void **out, size_t *bytes, tb_err_t *err)
{
    *out = NULL;
    *bytes = 0;
    if (spec->w < 3 || spec->h < 1 || spec->h > TB_COAST_MAX_CELLS / spec->w ||
        spec->n_mouths > (size_t)TB_COAST_MAX_MOUTHS || spec->legend.n < 1 ||
        spec->legend.n > TB_MAX_CLASSES)
        return tb_err_set(err, TB_E_INVALID,
                          "coast spec: %lld x %lld cells, %zu mouths, %d "
                          "classes is outside what a coast job takes",
                          (long long)spec->w, (long long)spec->h, spec->n_mouths, spec->legend.n);
    size_t cells = (size_t)spec->w * (size_t)spec->h;
    /* canonical mouths: sorted, one per cell */
    tb_coast_mouth_t *m =
        tb_malloc((spec->n_mouths ? spec->n_mouths : 1) * sizeof *m, "coast spec mouths", err);
    if (!m)
        return -1;
    if (spec->n_mouths)
        memcpy(m, spec->mouths, spec->n_mouths * sizeof *m);
    qsort(m, spec->n_mouths, sizeof *m, s_mouth_cmp);
    /* a cell two regions drain into is one mouth: its volumes add in whole litres (as a region
     * reports them), so the sum does not depend on how the planet was cut into regions */
    size_t n = 0;
    for (size_t k = 0; k < spec->n_mouths; k++) {
        if (n > 0 && m[n - 1].x == m[k].x && m[n - 1].y == m[k].y)
            m[n - 1].eroded_m3 =
                (double)(llround(m[n - 1].eroded_m3 * 1000.0) + llround(m[k].eroded_m3 * 1000.0)) /
                1000.0;
        else
            m[n++] = m[k];
    }
    cJSON *root = cJSON_CreateObject();
    double planet[3] = {(double)spec->w, (double)spec->h, spec->cell_m};
    cJSON_AddItemToObject(root, "planet", cJSON_CreateDoubleArray(planet, 3));
    cJSON_AddItemToObject(root, "coast", tb_coast_params_to_json(&spec->params));
    cJSON *classes = cJSON_AddArrayToObject(root, "classes");
    for (int c = 0; c < spec->legend.n; c++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "ocean", spec->legend.ocean[c]);
        cJSON_AddNumberToObject(o, "depth_m", spec->legend.depth_m[c]);
        cJSON_AddItemToArray(classes, o);
    }
    char *header = tb_json_print(root, false);
    cJSON_Delete(root);
    if (!header) {
        free(m);
        return tb_err_set(err, TB_E_NOMEM, "coast spec: cannot print the header");
    }
    tb_bytes_t b;
    tb_bytes_init(&b);
    size_t hlen = strlen(header);
    tb_bytes_put_u32(&b, S_SPEC_MAGIC);
    tb_bytes_put_u32(&b, S_VERSION);
    tb_bytes_put_u32(&b, (uint32_t)hlen);
    tb_bytes_put(&b, header, hlen);
    free(header);
    tb_bytes_put(&b, spec->height_m, cells * sizeof(float));
    tb_bytes_put(&b, spec->classes, cells);
    tb_bytes_put_u64(&b, n);
    for (size_t k = 0; k < n; k++) {
        tb_bytes_put_i64(&b, m[k].x);
        tb_bytes_put_i64(&b, m[k].y);
        tb_bytes_put_f64(&b, m[k].eroded_m3);
    }
    free(m);
    if (b.failed) {
        tb_bytes_free(&b);
        return tb_err_set(err, TB_E_NOMEM, "coast spec: out of memory encoding %zu cells", cells);
    }
    *out = tb_bytes_take(&b, bytes);
    return 0;
}

static bool s_int_in(const cJSON *v, double lo, double hi, int64_t *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return false;
    *out = (int64_t)v->valuedouble;
    return true;
}

/* The header: planet size, parameters, classes. */
static int s_decode_header(const cJSON *root, tb_coast_spec_t *s, tb_err_t *err)
{
    const cJSON *planet = cJSON_GetObjectItemCaseSensitive(root, "planet");
    const cJSON *cell = cJSON_GetArrayItem(planet, 2);
    if (!cJSON_IsArray(planet) || cJSON_GetArraySize(planet) != 3 ||
        !s_int_in(cJSON_GetArrayItem(planet, 0), 3, 1e12, &s->w) ||
        !s_int_in(cJSON_GetArrayItem(planet, 1), 1, 1e12, &s->h) || !cJSON_IsNumber(cell) ||
        !(cell->valuedouble > 0 && cell->valuedouble < 1e6) || s->h > TB_COAST_MAX_CELLS / s->w)
        return tb_err_set(err, TB_E_FORMAT,
                          "coast spec: planet is not [w >= 3, h >= 1, cell_m > 0] "
                          "within %lld cells",
                          (long long)TB_COAST_MAX_CELLS);
    s->cell_m = cell->valuedouble;
    if (tb_coast_params_from_json(cJSON_GetObjectItemCaseSensitive(root, "coast"), "coast spec",
                                  &s->params, err) != 0 ||
        tb_coast_params_check(&s->params, s->cell_m, s->w, err) != 0)
        return -1;
    const cJSON *classes = cJSON_GetObjectItemCaseSensitive(root, "classes");
    int n = cJSON_GetArraySize(classes);
    if (!cJSON_IsArray(classes) || n < 1 || n > TB_MAX_CLASSES)
        return tb_err_set(err, TB_E_FORMAT, "coast spec: classes is not an array of 1..%d",
                          TB_MAX_CLASSES);
    s->legend.n = n;
    int c = 0;
    for (const cJSON *o = classes->child; o; o = o->next, c++) {
        const cJSON *ocean = cJSON_GetObjectItemCaseSensitive(o, "ocean");
        const cJSON *depth = cJSON_GetObjectItemCaseSensitive(o, "depth_m");
        if (!cJSON_IsBool(ocean) || !cJSON_IsNumber(depth) || !isfinite(depth->valuedouble) ||
            (cJSON_IsTrue(ocean) && !(depth->valuedouble > 0 && depth->valuedouble < 2e4)))
            return tb_err_set(err, TB_E_FORMAT,
                              "coast spec: class %d is not {ocean, depth_m} "
                              "with an ocean depth in 0..20000 m",
                              c);
        s->legend.ocean[c] = cJSON_IsTrue(ocean);
        s->legend.depth_m[c] = depth->valuedouble;
    }
    return 0;
}

/* A spec's preamble and header: fills *s but its arrays and leaves r at them. */
static int s_spec_head(const void *data, size_t bytes, tb_reader_t *r, tb_coast_spec_t *s,
                       tb_err_t *err)
{
    memset(s, 0, sizeof *s);
    tb_reader_init(r, data, bytes);
    char *header = tb_reader_preamble(r, S_SPEC_MAGIC, S_VERSION, S_MAX_HEADER, "coast spec", err);
    if (!header)
        return -1;
    cJSON *root = cJSON_Parse(header);
    free(header);
    int rc = cJSON_IsObject(root)
                 ? s_decode_header(root, s, err)
                 : tb_err_set(err, TB_E_FORMAT, "coast spec: header is not a JSON object");
    cJSON_Delete(root);
    return rc;
}

int tb_coast_spec_decode(const void *data, size_t bytes, tb_coast_spec_owned_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_reader_t r;
    int rc = -1;
    tb_coast_spec_t *s = &out->spec;
    if (s_spec_head(data, bytes, &r, s, err) != 0)
        goto done;
    size_t cells = (size_t)s->w * (size_t)s->h;
    if (tb_reader_left(&r) < cells * 5 + 8) {
        tb_err_set(err, TB_E_FORMAT, "coast spec: %zu bytes left for %zu cells", tb_reader_left(&r),
                   cells);
        goto done;
    }
    out->height_m = tb_malloc(cells * sizeof(float), "coast spec heights", err);
    out->classes = out->height_m ? tb_malloc(cells, "coast spec classes", err) : NULL;
    if (!out->classes)
        goto done;
    tb_reader_get(&r, out->height_m, cells * sizeof(float));
    tb_reader_get(&r, out->classes, cells);
    uint64_t n = tb_reader_u64(&r);
    if (r.failed || n > (uint64_t)TB_COAST_MAX_MOUTHS || tb_reader_left(&r) != n * 24) {
        tb_err_set(err, TB_E_FORMAT, "coast spec: %llu mouths in %zu bytes", (unsigned long long)n,
                   tb_reader_left(&r));
        goto done;
    }
    out->mouths = tb_malloc((n ? n : 1) * sizeof *out->mouths, "coast spec mouths", err);
    if (!out->mouths)
        goto done;
    for (uint64_t k = 0; k < n; k++) {
        tb_coast_mouth_t *m = &out->mouths[k];
        m->x = tb_reader_i64(&r);
        m->y = tb_reader_i64(&r);
        m->eroded_m3 = tb_reader_f64(&r);
        bool ordered = k == 0 || m->y > m[-1].y || (m->y == m[-1].y && m->x > m[-1].x);
        if (!ordered || m->x < 0 || m->x >= s->w || m->y < 0 || m->y >= s->h ||
            !isfinite(m->eroded_m3) || m->eroded_m3 < 0) {
            tb_err_set(err, TB_E_FORMAT,
                       "coast spec: mouth %llu is out of order, off the planet "
                       "or has a bad volume",
                       (unsigned long long)k);
            goto done;
        }
    }
    for (size_t i = 0; i < cells; i++)
        if (out->classes[i] >= s->legend.n || !isfinite(out->height_m[i])) {
            tb_err_set(err, TB_E_FORMAT,
                       "coast spec: cell %zu has class %u of %d or a height that "
                       "is not finite",
                       i, out->classes[i], s->legend.n);
            goto done;
        }
    s->height_m = out->height_m;
    s->classes = out->classes;
    s->mouths = out->mouths;
    s->n_mouths = (size_t)n;
    rc = 0;
done:
    if (rc != 0)
        tb_coast_spec_free(out);
    return rc;
}

void tb_coast_spec_free(tb_coast_spec_owned_t *s)
{
    if (!s)
        return;
    free(s->height_m);
    free(s->classes);
    free(s->mouths);
    memset(s, 0, sizeof *s);
}

int tb_coast_solve(const tb_coast_spec_t *spec, int threads,
                   bool (*progress)(void *user, double fraction, const char *note), void *user,
                   tb_coast_result_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    size_t cells = (size_t)spec->w * (size_t)spec->h;
    out->w = spec->w;
    out->h = spec->h;
    out->height_m = tb_malloc(cells * sizeof(float), "coast heights", err);
    out->moved_m = out->height_m ? tb_malloc(cells * sizeof(float), "coast moved map", err) : NULL;
    out->exposure =
        out->moved_m ? tb_malloc(cells * sizeof(uint16_t), "coast exposure map", err) : NULL;
    if (!out->exposure) {
        tb_coast_result_free(out);
        return -1;
    }
    memcpy(out->height_m, spec->height_m, cells * sizeof(float));
    tb_coast_planet_t pl = {spec->w,       spec->h,       spec->cell_m, out->height_m,
                            spec->classes, &spec->legend, spec->mouths, spec->n_mouths};
    tb_coast_maps_t maps = {out->moved_m, out->exposure, {0}};
    if (tb_coast_run(&spec->params, &pl, &maps, threads, NULL, progress, user, err) != 0) {
        tb_coast_result_free(out);
        return -1;
    }
    out->stats = maps.stats;
    return 0;
}

/* The statistics in a fixed order: integers, then doubles. */
#define S_STAT_INTS(X)                                                                             \
    X(cells) X(sea_cells) X(shelf_cells) X(waterline_cells) X(mouths) X(backshore_cells)
#define S_STAT_DOUBLES(X)                                                                          \
    X(shore_km)                                                                                    \
    X(planed_m2)                                                                                   \
    X(cut_m3)                                                                                      \
    X(river_m3)                                                                                    \
    X(laid_m3)                                                                                     \
    X(unplaced_m3)                                                                                 \
    X(unplaced_no_shallows_m3)                                                                     \
    X(unplaced_full_m3)                                                                            \
    X(unplaced_rounding_m3)                                                                        \
    X(beach_m2)                                                                                    \
    X(backshore_median_m)                                                                          \
    X(backshore_p90_m) X(drowned_m2) X(exposure_p10) X(exposure_p50) X(exposure_p90)

int tb_coast_result_encode(const tb_coast_result_t *r, void **out, size_t *bytes, tb_err_t *err)
{
    *out = NULL;
    *bytes = 0;
    size_t cells = (size_t)r->w * (size_t)r->h;
    tb_bytes_t b;
    tb_bytes_init(&b);
    tb_bytes_put_u32(&b, S_RESULT_MAGIC);
    tb_bytes_put_u32(&b, S_RESULT_VERSION);
    tb_bytes_put_u64(&b, r->spec_xxh3);
    tb_bytes_put_i64(&b, r->w);
    tb_bytes_put_i64(&b, r->h);
#define S_PUT_I(f) tb_bytes_put_i64(&b, r->stats.f);
#define S_PUT_D(f) tb_bytes_put_f64(&b, r->stats.f);
    S_STAT_INTS(S_PUT_I)
    S_STAT_DOUBLES(S_PUT_D)
    tb_bytes_put(&b, r->height_m, cells * sizeof(float));
    tb_bytes_put(&b, r->moved_m, cells * sizeof(float));
    tb_bytes_put(&b, r->exposure, cells * sizeof(uint16_t));
    if (b.failed) {
        tb_bytes_free(&b);
        return tb_err_set(err, TB_E_NOMEM, "coast result: out of memory encoding %zu cells", cells);
    }
    *out = tb_bytes_take(&b, bytes);
    return 0;
}

/* The bytes of a result before its maps: magic, version, spec hash, w, h, the statistics. */
#define S_COUNT(f) +1
#define S_RESULT_HEAD_BYTES ((size_t)8 * (4 + S_STAT_INTS(S_COUNT) S_STAT_DOUBLES(S_COUNT)))

/* A result's head: fills out's spec_xxh3, size and statistics (no maps) and checks that the rest
 * is as long as the size makes it; r is left at the maps. */
static int s_result_head(const void *data, size_t bytes, tb_reader_t *r, tb_coast_result_t *out,
                         tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_reader_init(r, data, bytes);
    if (tb_reader_magic(r, S_RESULT_MAGIC, S_RESULT_VERSION, "coast result", err) != 0)
        return -1;
    out->spec_xxh3 = tb_reader_u64(r);
    out->w = tb_reader_i64(r);
    out->h = tb_reader_i64(r);
    if (r->failed || out->w < 3 || out->h < 1 || out->h > TB_COAST_MAX_CELLS / out->w)
        return tb_err_set(err, TB_E_FORMAT, "coast result: a planet of %lld x %lld cells",
                          (long long)out->w, (long long)out->h);
#define S_GET_I(f) out->stats.f = tb_reader_i64(r);
#define S_GET_D(f) out->stats.f = tb_reader_f64(r);
    S_STAT_INTS(S_GET_I)
    S_STAT_DOUBLES(S_GET_D)
    size_t cells = (size_t)out->w * (size_t)out->h;
    if (r->failed || tb_reader_left(r) != cells * 10)
        return tb_err_set(err, TB_E_FORMAT, "coast result: %zu bytes for %zu cells (expected %zu)",
                          tb_reader_left(r), cells, cells * 10);
    return 0;
}

int tb_coast_result_decode(const void *data, size_t bytes, tb_coast_result_t *out, tb_err_t *err)
{
    tb_reader_t r;
    if (s_result_head(data, bytes, &r, out, err) != 0)
        return -1;
    size_t cells = (size_t)out->w * (size_t)out->h;
    out->height_m = tb_malloc(cells * sizeof(float), "coast result heights", err);
    out->moved_m =
        out->height_m ? tb_malloc(cells * sizeof(float), "coast result moved", err) : NULL;
    out->exposure =
        out->moved_m ? tb_malloc(cells * sizeof(uint16_t), "coast result exposure", err) : NULL;
    if (!out->exposure) {
        tb_coast_result_free(out);
        return -1;
    }
    tb_reader_get(&r, out->height_m, cells * sizeof(float));
    tb_reader_get(&r, out->moved_m, cells * sizeof(float));
    tb_reader_get(&r, out->exposure, cells * sizeof(uint16_t));
    return 0;
}

void tb_coast_result_free(tb_coast_result_t *r)
{
    if (!r)
        return;
    free(r->height_m);
    free(r->moved_m);
    free(r->exposure);
    memset(r, 0, sizeof *r);
}

/* ---- the job kind ---- */

static bool s_job_progress(void *user, double fraction, const char *note)
{
    return tb_job_progress(user, fraction, note);
}

static int s_job_run(const void *spec_bytes, size_t n, tb_job_ctx_t *ctx, tb_job_output_t *out,
                     tb_err_t *err)
{
    tb_coast_spec_owned_t spec;
    if (tb_coast_spec_decode(spec_bytes, n, &spec, err) != 0)
        return -1;
    tb_coast_result_t result;
    int rc = tb_coast_solve(&spec.spec, ctx->threads > 0 ? ctx->threads : 1, s_job_progress, ctx,
                            &result, err);
    tb_coast_spec_free(&spec);
    if (rc != 0)
        return -1;
    result.spec_xxh3 = XXH3_64bits(spec_bytes, n);
    rc = tb_coast_result_encode(&result, &out->data, &out->bytes, err);
    tb_coast_result_free(&result);
    return rc;
}

size_t tb_coast_result_bound(const void *spec, size_t n)
{
    tb_reader_t r;
    tb_coast_spec_t s;
    tb_err_t err;
    /* What tb_coast_result_encode writes: the head, then 10 bytes a cell (0: not a coast spec). */
    return s_spec_head(spec, n, &r, &s, &err) == 0
               ? S_RESULT_HEAD_BYTES + 10 * (size_t)s.w * (size_t)s.h
               : 0;
}

/* A result answers a spec when it echoes the spec's hash (which covers the planet, its heights,
 * classes and mouths and the coast parameters) and its planet is the spec's size
 * (docs/distribution.md, "Verifying results"). Reads the heads only. */
static int s_job_check(const void *spec, size_t n, const void *result, size_t bytes, tb_err_t *err)
{
    tb_reader_t rs, r;
    tb_coast_spec_t s;
    tb_coast_result_t got;
    if (s_spec_head(spec, n, &rs, &s, err) != 0 || s_result_head(result, bytes, &r, &got, err) != 0)
        return -1;
    uint64_t want = XXH3_64bits(spec, n);
    if (got.spec_xxh3 != want)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast result answers spec %016llx, not this job's %016llx",
                          (unsigned long long)got.spec_xxh3, (unsigned long long)want);
    if (got.w != s.w || got.h != s.h)
        return tb_err_set(err, TB_E_FORMAT,
                          "coast result: a %lld x %lld planet, its spec's is %lld x %lld",
                          (long long)got.w, (long long)got.h, (long long)s.w, (long long)s.h);
    /* the spec's mouths after its heights and classes (5 bytes a cell): a delivered mouth is one */
    size_t cells = (size_t)s.w * (size_t)s.h;
    uint64_t n_mouths = 0;
    if (tb_reader_left(&rs) >= cells * 5 + 8) {
        rs.pos += cells * 5;
        n_mouths = tb_reader_u64(&rs);
    }
    if (tb_coast_check_stats(&got.stats, s.w, s.h, s.cell_m, n_mouths, err) != 0)
        return -1;
    return tb_coast_check_maps(r.data + r.pos, 0, 0, s.w, s.h, "coast result", err);
}

/* Limits from the largest planet a coast job takes (TB_COAST_MAX_CELLS): 5 bytes a cell of spec
 * plus the mouths and the header, 10 bytes a cell of result plus its fixed head. */
const tb_job_kind_t tb_job_kind_coast = {
    .name = "coast",
    .run = s_job_run,
    .max_spec_bytes = (size_t)5 * ((size_t)1 << 31) + 24 * ((size_t)1 << 24) + ((size_t)1 << 21),
    .max_result_bytes = (size_t)10 * ((size_t)1 << 31) + 4096,
    .summary = "the coastal pass over the whole planet: shelf, exposure, surf, sediment",
    .result_bound = tb_coast_result_bound,
    .check_result = s_job_check,
};
