/* The job "coast_block": the coastal pass over one block's window, giving its interior (jobs/job.h,
 * jobs/coast/blocks.h, docs/coast.md "Blocks"). Wire format (little-endian):
 *   spec:   "TBCB" u32 version | u32 header bytes | header JSON | height f32 (window) | classes u8
 *           (window) | u64 mouths | per mouth: i64 x, i64 y, f64 eroded m3 (planet cells, sorted by
 *           y then x, one per cell, inside the window)
 *   result: "TBBR" u32 version | u64 spec_xxh3 | i64 interior x0, y0, w, h | u8 probe | the tally
 *           (fixed list of integers, the exposure histogram whole, the backshore histogram's
 *           non-zero bins as u32 bin, i64 count) | unless a probe: height f32 | moved f32 |
 *           exposure u16 (interior)
 * The header JSON ({"planet": [w, h, cell_m], "window": [x0, y0, w, h], "interior": [...],
 * "wraps": b, "share": [b1, b2], "totals_only": b, "coast": {...}, "classes": [...]}) is printed by
 * cJSON from objects built in a fixed order, so equal specs are equal bytes. Both buffers are
 * allocated once at their exact size (a doubling buffer would hold up to twice a window's bytes).
 * Typical sizes: 5 bytes a cell of window in the spec, 10 a cell of interior in the result. */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/bytes.h"
#include "jobs/coast/blocks.h"
#include "jobs/job.h"
#include "jobs/coast/methods.h"

#define S_SPEC_MAGIC 0x42434254u   /* "TBCB" */
#define S_RESULT_MAGIC 0x52424254u /* "TBBR" */
#define S_VERSION 1u
#define S_MAX_HEADER (1u << 20)
/* The largest planet a block spec names (cells): far past any bake, well inside int64. */
#define S_MAX_PLANET_CELLS ((int64_t)1 << 46)

/* ---- an exact-size writer ---- */

typedef struct {
    uint8_t *p;
    size_t len;
} s_out_t;

static void s_le(s_out_t *o, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        o->p[o->len++] = (uint8_t)(v >> (8 * i));
}

static void s_raw(s_out_t *o, const void *src, size_t n)
{
    if (n)
        memcpy(o->p + o->len, src, n);
    o->len += n;
}

static void s_f64(s_out_t *o, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    s_le(o, u, 8);
}

/* ---- the spec ---- */

static int s_mouth_cmp(const void *a, const void *b)
{
    const tb_coast_mouth_t *x = a, *y = b;
    if (x->y != y->y)
        return x->y < y->y ? -1 : 1;
    if (x->x != y->x)
        return x->x < y->x ? -1 : 1;
    return x->eroded_m3 < y->eroded_m3 ? -1 : x->eroded_m3 > y->eroded_m3;
}

/* The column of planet column x in the window, or -1 when it is not in it. */
static int64_t s_window_col(const tb_coast_block_spec_t *s, int64_t x)
{
    int64_t d = tb_wrap(x - s->window.x0, s->planet_w);
    return d < s->window.w ? d : -1;
}

/* The checks a spec's frame must pass, encoding or decoding: the planet, the window inside it (the
 * whole width when it wraps), the interior inside the window, the share bits (-1 only for a window
 * that is the planet). */
static int s_check_frame(const tb_coast_block_spec_t *s, tb_err_t *err)
{
    const tb_coast_rect_t *wi = &s->window, *in = &s->interior;
    if (s->planet_w < 3 || s->planet_h < 1 || s->planet_h > S_MAX_PLANET_CELLS / s->planet_w ||
        !(s->cell_m > 0 && s->cell_m < 1e6))
        return tb_err_set(err, TB_E_FORMAT,
                          "coast block spec: a planet of %lld x %lld cells of %g m (at least 3 x "
                          "1, at most 2^46 cells)",
                          (long long)s->planet_w, (long long)s->planet_h, s->cell_m);
    if (wi->x0 < 0 || wi->x0 >= s->planet_w || wi->w < 3 || wi->w > s->planet_w || wi->y0 < 0 ||
        wi->h < 1 || wi->y0 > s->planet_h - wi->h || wi->h > TB_COAST_MAX_CELLS / wi->w ||
        (s->wraps && (wi->x0 != 0 || wi->w != s->planet_w)))
        return tb_err_set(err, TB_E_FORMAT,
                          "coast block spec: window [%lld, %lld, %lld x %lld]%s is not inside the "
                          "%lld x %lld planet within %lld cells",
                          (long long)wi->x0, (long long)wi->y0, (long long)wi->w, (long long)wi->h,
                          s->wraps ? " (wrapping)" : "", (long long)s->planet_w,
                          (long long)s->planet_h, (long long)TB_COAST_MAX_CELLS);
    int64_t dx = in->x0 >= 0 && in->x0 < s->planet_w ? s_window_col(s, in->x0) : -1;
    if (dx < 0 || in->w < 1 || in->w > wi->w - dx || in->y0 < wi->y0 || in->h < 1 ||
        in->y0 - wi->y0 > wi->h - in->h)
        return tb_err_set(err, TB_E_FORMAT,
                          "coast block spec: interior [%lld, %lld, %lld x %lld] is not inside the "
                          "window [%lld, %lld, %lld x %lld]",
                          (long long)in->x0, (long long)in->y0, (long long)in->w, (long long)in->h,
                          (long long)wi->x0, (long long)wi->y0, (long long)wi->w, (long long)wi->h);
    bool whole = s->wraps && wi->y0 == 0 && wi->h == s->planet_h;
    for (int k = 0; k < 2; k++)
        if (s->share.bits[k] < -1 || s->share.bits[k] > 61 ||
            (s->share.bits[k] < 0) != (s->share.bits[0] < 0) || (s->share.bits[k] < 0 && !whole))
            return tb_err_set(err, TB_E_FORMAT,
                              "coast block spec: share bits [%d, %d] (0..61 each, or -1 both for "
                              "a window that is the planet)",
                              s->share.bits[0], s->share.bits[1]);
    if (s->legend.n < 1 || s->legend.n > TB_MAX_CLASSES)
        return tb_err_set(err, TB_E_FORMAT, "coast block spec: %d classes (1..%d)", s->legend.n,
                          TB_MAX_CLASSES);
    return 0;
}

static char *s_header(const tb_coast_block_spec_t *s)
{
    cJSON *root = cJSON_CreateObject();
    double planet[3] = {(double)s->planet_w, (double)s->planet_h, s->cell_m};
    double window[4] = {(double)s->window.x0, (double)s->window.y0, (double)s->window.w,
                        (double)s->window.h};
    double interior[4] = {(double)s->interior.x0, (double)s->interior.y0, (double)s->interior.w,
                          (double)s->interior.h};
    double share[2] = {s->share.bits[0], s->share.bits[1]};
    cJSON_AddItemToObject(root, "planet", cJSON_CreateDoubleArray(planet, 3));
    cJSON_AddItemToObject(root, "window", cJSON_CreateDoubleArray(window, 4));
    cJSON_AddItemToObject(root, "interior", cJSON_CreateDoubleArray(interior, 4));
    cJSON_AddBoolToObject(root, "wraps", s->wraps);
    cJSON_AddItemToObject(root, "share", cJSON_CreateDoubleArray(share, 2));
    cJSON_AddBoolToObject(root, "totals_only", s->totals_only);
    cJSON_AddItemToObject(root, "coast", tb_coast_params_to_json(&s->params));
    cJSON *classes = cJSON_AddArrayToObject(root, "classes");
    for (int c = 0; c < s->legend.n; c++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "ocean", s->legend.ocean[c]);
        cJSON_AddNumberToObject(o, "depth_m", s->legend.depth_m[c]);
        cJSON_AddItemToArray(classes, o);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

/* The window's mouths, canonical: sorted, one per cell (volumes added in whole litres, as the
 * coast spec merges them), each checked to lie in the window. *out is the caller's to free. */
static int s_canonical_mouths(const tb_coast_block_spec_t *s, tb_coast_mouth_t **out, size_t *n_out,
                              tb_err_t *err)
{
    tb_coast_mouth_t *m =
        tb_malloc((s->n_mouths ? s->n_mouths : 1) * sizeof *m, "coast block mouths", err);
    if (!m)
        return -1;
    if (s->n_mouths)
        memcpy(m, s->mouths, s->n_mouths * sizeof *m);
    qsort(m, s->n_mouths, sizeof *m, s_mouth_cmp);
    size_t n = 0;
    for (size_t k = 0; k < s->n_mouths; k++) {
        if (m[k].x < 0 || m[k].x >= s->planet_w || s_window_col(s, m[k].x) < 0 ||
            m[k].y < s->window.y0 || m[k].y >= s->window.y0 + s->window.h ||
            !isfinite(m[k].eroded_m3) || m[k].eroded_m3 < 0) {
            tb_coast_mouth_t bad = m[k];
            free(m);
            return tb_err_set(err, TB_E_INVALID,
                              "coast block spec: river mouth at (%lld, %lld) with %g m3 is not in "
                              "the window or its volume is not >= 0",
                              (long long)bad.x, (long long)bad.y, bad.eroded_m3);
        }
        if (n > 0 && m[n - 1].x == m[k].x && m[n - 1].y == m[k].y)
            m[n - 1].eroded_m3 =
                (double)(llround(m[n - 1].eroded_m3 * 1000.0) + llround(m[k].eroded_m3 * 1000.0)) /
                1000.0;
        else
            m[n++] = m[k];
    }
    *out = m;
    *n_out = n;
    return 0;
}

/* Writes the spec bytes with the window's rows given by row(ctx, y, heights, classes) (window row
 * y into the two row buffers): from a spec's arrays or straight from the planet's views. */
typedef void (*s_row_fn)(const void *ctx, int64_t y, float *height, uint8_t *classes);

static int s_encode(const tb_coast_block_spec_t *spec, s_row_fn row, const void *ctx, void **out,
                    size_t *bytes, tb_err_t *err)
{
    *out = NULL;
    *bytes = 0;
    if (s_check_frame(spec, err) != 0)
        return -1;
    tb_coast_mouth_t *m = NULL;
    size_t n = 0;
    if (s_canonical_mouths(spec, &m, &n, err) != 0)
        return -1;
    char *header = s_header(spec);
    if (!header) {
        free(m);
        return tb_err_set(err, TB_E_NOMEM, "coast block spec: cannot print the header");
    }
    size_t hlen = strlen(header), ww = (size_t)spec->window.w, wh = (size_t)spec->window.h;
    size_t cells = ww * wh, total = 12 + hlen + 5 * cells + 8 + 24 * n;
    s_out_t o = {tb_malloc(total, "coast block spec", err), 0};
    if (!o.p) {
        free(header);
        free(m);
        return -1;
    }
    s_le(&o, S_SPEC_MAGIC, 4);
    s_le(&o, S_VERSION, 4);
    s_le(&o, hlen, 4);
    s_raw(&o, header, hlen);
    free(header);
    /* the heights, then the classes, each row in place */
    size_t h0 = o.len, c0 = o.len + 4 * cells;
    float *hrow = malloc(ww * sizeof *hrow);
    if (!hrow) {
        free(m);
        free(o.p);
        return tb_err_set(err, TB_E_NOMEM, "coast block spec: out of memory for a row");
    }
    for (size_t y = 0; y < wh; y++) {
        row(ctx, (int64_t)y, hrow, o.p + c0 + y * ww);
        memcpy(o.p + h0 + 4 * y * ww, hrow, 4 * ww);
    }
    free(hrow);
    o.len = c0 + cells;
    s_le(&o, n, 8);
    for (size_t k = 0; k < n; k++) {
        s_le(&o, (uint64_t)m[k].x, 8);
        s_le(&o, (uint64_t)m[k].y, 8);
        s_f64(&o, m[k].eroded_m3);
    }
    free(m);
    *out = o.p;
    *bytes = o.len;
    return 0;
}

static void s_spec_row(const void *ctx, int64_t y, float *height, uint8_t *classes)
{
    const tb_coast_block_spec_t *s = ctx;
    size_t w = (size_t)s->window.w, i = (size_t)y * w;
    memcpy(height, s->height_m + i, w * sizeof *height);
    memcpy(classes, s->classes + i, w);
}

int tb_coast_block_spec_encode(const tb_coast_block_spec_t *spec, void **out, size_t *bytes,
                               tb_err_t *err)
{
    return s_encode(spec, s_spec_row, spec, out, bytes, err);
}

/* The views' row of a block cut from the planet. */
typedef struct {
    const tb_coast_block_spec_t *spec;
    const tb_coast_view_t *view;
} s_cut_t;

static void s_view_row(const void *ctx, int64_t y, float *height, uint8_t *classes)
{
    const s_cut_t *c = ctx;
    const tb_coast_block_spec_t *s = c->spec;
    int64_t py = s->window.y0 + y, w = s->planet_w, x0 = s->window.x0, n = s->window.w;
    size_t row = (size_t)(py - c->view->row0) * c->view->stride;
    /* up to the seam, then from column 0 */
    int64_t first = n < w - x0 ? n : w - x0;
    memcpy(height, c->view->height_m + row + (size_t)x0, (size_t)first * sizeof *height);
    memcpy(classes, c->view->classes + row + (size_t)x0, (size_t)first);
    if (first < n) {
        memcpy(height + first, c->view->height_m + row, (size_t)(n - first) * sizeof *height);
        memcpy(classes + first, c->view->classes + row, (size_t)(n - first));
    }
    tb_rows_done(&c->view->done, py, py + 1);
}

int tb_coast_block_spec_from_view(const tb_coast_block_spec_t *spec, const tb_coast_view_t *view,
                                  void **out, size_t *bytes, tb_err_t *err);

int tb_coast_block_spec_from_view(const tb_coast_block_spec_t *spec, const tb_coast_view_t *view,
                                  void **out, size_t *bytes, tb_err_t *err)
{
    if (!view || view->stride < (size_t)spec->planet_w || view->row0 > spec->window.y0)
        return tb_err_set(err, TB_E_INVALID,
                          "coast block cut: the view (stride %zu, first row %lld) does not hold "
                          "the window's rows from %lld of a planet %lld wide",
                          view ? view->stride : 0, view ? (long long)view->row0 : -1LL,
                          (long long)spec->window.y0, (long long)spec->planet_w);
    s_cut_t c = {spec, view};
    return s_encode(spec, s_view_row, &c, out, bytes, err);
}

static bool s_int_in(const cJSON *v, double lo, double hi, int64_t *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return false;
    *out = (int64_t)v->valuedouble;
    return true;
}

static bool s_rect(const cJSON *a, tb_coast_rect_t *r)
{
    return cJSON_IsArray(a) && cJSON_GetArraySize(a) == 4 &&
           s_int_in(cJSON_GetArrayItem(a, 0), -1e15, 1e15, &r->x0) &&
           s_int_in(cJSON_GetArrayItem(a, 1), -1e15, 1e15, &r->y0) &&
           s_int_in(cJSON_GetArrayItem(a, 2), -1e15, 1e15, &r->w) &&
           s_int_in(cJSON_GetArrayItem(a, 3), -1e15, 1e15, &r->h);
}

static int s_decode_header(const cJSON *root, tb_coast_block_spec_t *s, tb_err_t *err)
{
    const cJSON *planet = cJSON_GetObjectItemCaseSensitive(root, "planet");
    const cJSON *cell = cJSON_GetArrayItem(planet, 2);
    const cJSON *share = cJSON_GetObjectItemCaseSensitive(root, "share");
    const cJSON *wraps = cJSON_GetObjectItemCaseSensitive(root, "wraps");
    const cJSON *probe = cJSON_GetObjectItemCaseSensitive(root, "totals_only");
    int64_t b0 = 0, b1 = 0;
    if (!cJSON_IsArray(planet) || cJSON_GetArraySize(planet) != 3 ||
        !s_int_in(cJSON_GetArrayItem(planet, 0), 3, 1e15, &s->planet_w) ||
        !s_int_in(cJSON_GetArrayItem(planet, 1), 1, 1e15, &s->planet_h) || !cJSON_IsNumber(cell) ||
        !s_rect(cJSON_GetObjectItemCaseSensitive(root, "window"), &s->window) ||
        !s_rect(cJSON_GetObjectItemCaseSensitive(root, "interior"), &s->interior) ||
        !cJSON_IsBool(wraps) || !cJSON_IsBool(probe) || !cJSON_IsArray(share) ||
        cJSON_GetArraySize(share) != 2 || !s_int_in(cJSON_GetArrayItem(share, 0), -1, 61, &b0) ||
        !s_int_in(cJSON_GetArrayItem(share, 1), -1, 61, &b1))
        return tb_err_set(err, TB_E_FORMAT,
                          "coast block spec: the header is not {planet: [w, h, cell_m], window, "
                          "interior: [x0, y0, w, h], wraps, share: [b1, b2], totals_only, ...}");
    s->cell_m = cell->valuedouble;
    s->wraps = cJSON_IsTrue(wraps);
    s->totals_only = cJSON_IsTrue(probe);
    s->share.bits[0] = (int)b0;
    s->share.bits[1] = (int)b1;
    const cJSON *classes = cJSON_GetObjectItemCaseSensitive(root, "classes");
    int n = cJSON_GetArraySize(classes);
    if (!cJSON_IsArray(classes) || n < 1 || n > TB_MAX_CLASSES)
        return tb_err_set(err, TB_E_FORMAT, "coast block spec: classes is not an array of 1..%d",
                          TB_MAX_CLASSES);
    s->legend.n = n;
    int c = 0;
    for (const cJSON *o = classes->child; o; o = o->next, c++) {
        const cJSON *ocean = cJSON_GetObjectItemCaseSensitive(o, "ocean");
        const cJSON *depth = cJSON_GetObjectItemCaseSensitive(o, "depth_m");
        if (!cJSON_IsBool(ocean) || !cJSON_IsNumber(depth) || !isfinite(depth->valuedouble) ||
            (cJSON_IsTrue(ocean) && !(depth->valuedouble > 0 && depth->valuedouble < 2e4)))
            return tb_err_set(err, TB_E_FORMAT,
                              "coast block spec: class %d is not {ocean, depth_m} with an ocean "
                              "depth in 0..20000 m",
                              c);
        s->legend.ocean[c] = cJSON_IsTrue(ocean);
        s->legend.depth_m[c] = depth->valuedouble;
    }
    if (s_check_frame(s, err) != 0)
        return -1;
    /* the parameters as the whole pass would take them on the planet */
    return tb_coast_params_from_json(cJSON_GetObjectItemCaseSensitive(root, "coast"),
                                     "coast block spec", &s->params, err) != 0 ||
                   tb_coast_params_check(&s->params, s->cell_m, s->planet_w, err) != 0
               ? -1
               : 0;
}

static int s_spec_head(const void *data, size_t bytes, tb_reader_t *r, tb_coast_block_spec_t *s,
                       tb_err_t *err)
{
    memset(s, 0, sizeof *s);
    tb_reader_init(r, data, bytes);
    char *header =
        tb_reader_preamble(r, S_SPEC_MAGIC, S_VERSION, S_MAX_HEADER, "coast block spec", err);
    if (!header)
        return -1;
    cJSON *root = cJSON_Parse(header);
    free(header);
    int rc = cJSON_IsObject(root)
                 ? s_decode_header(root, s, err)
                 : tb_err_set(err, TB_E_FORMAT, "coast block spec: header is not a JSON object");
    cJSON_Delete(root);
    return rc;
}

int tb_coast_block_spec_decode(const void *data, size_t bytes, tb_coast_block_spec_owned_t *out,
                               tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_reader_t r;
    tb_coast_block_spec_t *s = &out->spec;
    if (s_spec_head(data, bytes, &r, s, err) != 0)
        goto fail;
    size_t cells = (size_t)s->window.w * (size_t)s->window.h;
    if (tb_reader_left(&r) < cells * 5 + 8) {
        tb_err_set(err, TB_E_FORMAT, "coast block spec: %zu bytes left for %zu cells",
                   tb_reader_left(&r), cells);
        goto fail;
    }
    out->height_m = tb_malloc(cells * sizeof(float), "coast block heights", err);
    out->classes = out->height_m ? tb_malloc(cells, "coast block classes", err) : NULL;
    if (!out->classes)
        goto fail;
    tb_reader_get(&r, out->height_m, cells * sizeof(float));
    tb_reader_get(&r, out->classes, cells);
    uint64_t n = tb_reader_u64(&r);
    if (r.failed || n > (uint64_t)TB_COAST_MAX_MOUTHS || tb_reader_left(&r) != n * 24) {
        tb_err_set(err, TB_E_FORMAT, "coast block spec: %llu mouths in %zu bytes",
                   (unsigned long long)n, tb_reader_left(&r));
        goto fail;
    }
    out->mouths = tb_malloc((n ? n : 1) * sizeof *out->mouths, "coast block mouths", err);
    if (!out->mouths)
        goto fail;
    for (uint64_t k = 0; k < n; k++) {
        tb_coast_mouth_t *m = &out->mouths[k];
        m->x = tb_reader_i64(&r);
        m->y = tb_reader_i64(&r);
        m->eroded_m3 = tb_reader_f64(&r);
        bool ordered = k == 0 || m->y > m[-1].y || (m->y == m[-1].y && m->x > m[-1].x);
        if (!ordered || m->x < 0 || m->x >= s->planet_w || s_window_col(s, m->x) < 0 ||
            m->y < s->window.y0 || m->y >= s->window.y0 + s->window.h || !isfinite(m->eroded_m3) ||
            m->eroded_m3 < 0) {
            tb_err_set(err, TB_E_FORMAT,
                       "coast block spec: mouth %llu is out of order, outside the window or has a "
                       "bad volume",
                       (unsigned long long)k);
            goto fail;
        }
    }
    for (size_t i = 0; i < cells; i++)
        if (out->classes[i] >= s->legend.n || !isfinite(out->height_m[i])) {
            tb_err_set(err, TB_E_FORMAT,
                       "coast block spec: window cell %zu has class %u of %d or a height that is "
                       "not finite",
                       i, out->classes[i], s->legend.n);
            goto fail;
        }
    s->height_m = out->height_m;
    s->classes = out->classes;
    s->mouths = out->mouths;
    s->n_mouths = (size_t)n;
    return 0;
fail:
    tb_coast_block_spec_free(out);
    return -1;
}

void tb_coast_block_spec_free(tb_coast_block_spec_owned_t *s)
{
    if (!s)
        return;
    free(s->height_m);
    free(s->classes);
    free(s->mouths);
    memset(s, 0, sizeof *s);
}

/* ---- running a block ---- */

/* The pass over the window: heights rewritten in place (height, the window's), moved and exposure
 * made (window-sized, the caller frees them), the interior's tally. */
typedef struct {
    float *moved;
    uint16_t *exposure;
    tb_coast_tally_t tally;
    int64_t ix, iy; /* the interior's first cell in the window */
} s_ran_t;

static int s_run(const tb_coast_block_spec_t *s, float *height, int threads,
                 bool (*progress)(void *user, double fraction, const char *note), void *user,
                 s_ran_t *ran, tb_err_t *err)
{
    memset(ran, 0, sizeof *ran);
    size_t cells = (size_t)s->window.w * (size_t)s->window.h;
    tb_coast_mouth_t *m =
        tb_malloc((s->n_mouths ? s->n_mouths : 1) * sizeof *m, "coast block mouths", err);
    if (!m)
        return -1;
    /* the mouths in the window's own cells */
    for (size_t k = 0; k < s->n_mouths; k++) {
        m[k] = s->mouths[k];
        m[k].x = s_window_col(s, s->mouths[k].x);
        m[k].y = s->mouths[k].y - s->window.y0;
    }
    ran->moved = tb_malloc(cells * sizeof *ran->moved, "coast block moved map", err);
    ran->exposure =
        ran->moved ? tb_malloc(cells * sizeof *ran->exposure, "coast block exposure", err) : NULL;
    if (!ran->exposure || tb_coast_tally_init(&ran->tally, err) != 0) {
        free(m);
        free(ran->moved);
        free(ran->exposure);
        memset(ran, 0, sizeof *ran);
        return -1;
    }
    ran->ix = s_window_col(s, s->interior.x0);
    ran->iy = s->interior.y0 - s->window.y0;
    tb_coast_planet_t pl = {s->window.w, s->window.h, s->cell_m, height,
                            s->classes,  &s->legend,  m,         s->n_mouths};
    tb_coast_maps_t maps = {ran->moved, ran->exposure, {0}};
    /* a probe shares its first drift with its window's own bits: its second drift's sources are
     * then the planet's to within the shares' rounding, which is all a probe is asked (blocks.h) */
    tb_coast_share_t own = {{-1, -1}};
    /* the phases after the carry over the interior and their own reach round it (a probe stops
     * after the first drift), not the whole halo the distances, the fetch and the carry need */
    tb_coast_halo_t halo;
    tb_coast_halo(&s->params, s->cell_m, &halo);
    tb_coast_window_t win = {ran->ix,
                             ran->iy,
                             s->interior.w,
                             s->interior.h,
                             s->totals_only ? own : s->share,
                             s->totals_only,
                             halo.first_drift + halo.stretch +
                                 (s->totals_only ? 0 : halo.second_drift),
                             s->wraps};
    int rc = tb_coast_run_window(&s->params, &pl, &maps, threads, NULL, progress, user, &win,
                                 &ran->tally, err);
    free(m);
    if (rc != 0) {
        free(ran->moved);
        free(ran->exposure);
        tb_coast_tally_free(&ran->tally);
        memset(ran, 0, sizeof *ran);
    }
    return rc;
}

/* The interior's rows of a window array of `size`-byte elements into dst. */
static void s_interior(void *dst, const void *src, size_t size, const tb_coast_block_spec_t *s,
                       int64_t ix, int64_t iy)
{
    for (int64_t y = 0; y < s->interior.h; y++)
        memcpy((uint8_t *)dst + (size_t)y * (size_t)s->interior.w * size,
               (const uint8_t *)src + ((size_t)(iy + y) * (size_t)s->window.w + (size_t)ix) * size,
               (size_t)s->interior.w * size);
}

int tb_coast_block_solve(const tb_coast_block_spec_t *spec, int threads,
                         bool (*progress)(void *user, double fraction, const char *note),
                         void *user, tb_coast_block_result_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (s_check_frame(spec, err) != 0)
        return -1;
    size_t cells = (size_t)spec->window.w * (size_t)spec->window.h;
    size_t inner = (size_t)spec->interior.w * (size_t)spec->interior.h;
    float *height = tb_malloc(cells * sizeof *height, "coast block heights", err);
    if (!height)
        return -1;
    memcpy(height, spec->height_m, cells * sizeof *height);
    s_ran_t ran;
    if (s_run(spec, height, threads, progress, user, &ran, err) != 0) {
        free(height);
        return -1;
    }
    out->interior = spec->interior;
    out->totals_only = spec->totals_only;
    out->tally = ran.tally;
    int rc = 0;
    if (!spec->totals_only) {
        out->height_m = tb_malloc(inner * sizeof *out->height_m, "coast block result", err);
        out->moved_m = out->height_m
                           ? tb_malloc(inner * sizeof *out->moved_m, "coast block result", err)
                           : NULL;
        out->exposure = out->moved_m
                            ? tb_malloc(inner * sizeof *out->exposure, "coast block result", err)
                            : NULL;
        if (!out->exposure) {
            rc = -1;
        } else {
            s_interior(out->height_m, height, sizeof *height, spec, ran.ix, ran.iy);
            s_interior(out->moved_m, ran.moved, sizeof *ran.moved, spec, ran.ix, ran.iy);
            s_interior(out->exposure, ran.exposure, sizeof *ran.exposure, spec, ran.ix, ran.iy);
        }
    }
    free(height);
    free(ran.moved);
    free(ran.exposure);
    if (rc != 0)
        tb_coast_block_result_free(out);
    return rc;
}

/* ---- the result ---- */

/* The tally in a fixed order: integers (the fixed-point sums as their two words). */
#define S_TALLY_INTS(X)                                                                            \
    X(cells)                                                                                       \
    X(sea_cells)                                                                                   \
    X(shelf_cells)                                                                                 \
    X(waterline_cells)                                                                             \
    X(edges)                                                                                       \
    X(drowned_cells)                                                                               \
    X(planed_cells)                                                                                \
    X(cut_units)                                                                                   \
    X(mouths)                                                                                      \
    X(river_units)                                                                                 \
    X(beach_cells)                                                                                 \
    X(backshore_cells)                                                                             \
    X(no_room_units)                                                                               \
    X(laid.units)                                                                                  \
    X(laid.frac)                                                                                   \
    X(full.units)                                                                                  \
    X(full.frac)                                                                                   \
    X(remainder.units)                                                                             \
    X(remainder.frac)                                                                              \
    X(sources[0])                                                                                  \
    X(sources[1])
#define S_COUNT(f) +1
#define S_HEAD_BYTES ((size_t)(8 + 8 + 32 + 1))

static size_t s_backshore_bins(const tb_coast_tally_t *t)
{
    size_t n = 0;
    for (int b = 0; b < TB_COAST_BACKSHORE_BINS; b++)
        n += t->backshore_hist[b] != 0;
    return n;
}

/* The result bytes: the head, the tally, and the interior's rows of the window arrays (hw, mw,
 * ew: the window's, row stride window.w; NULL for a probe). */
static int s_result_bytes(uint64_t spec_xxh3, const tb_coast_rect_t *interior, bool probe,
                          const tb_coast_tally_t *t, const float *hw, const float *mw,
                          const uint16_t *ew, int64_t stride, int64_t ix, int64_t iy, void **out,
                          size_t *bytes, tb_err_t *err)
{
    size_t bins = s_backshore_bins(t), inner = (size_t)interior->w * (size_t)interior->h;
    size_t total = S_HEAD_BYTES + 8 * (0 S_TALLY_INTS(S_COUNT)) + 8 * TB_COAST_EXPOSURE_BINS + 4 +
                   12 * bins + (probe ? 0 : 10 * inner);
    s_out_t o = {tb_malloc(total, "coast block result", err), 0};
    if (!o.p)
        return -1;
    s_le(&o, S_RESULT_MAGIC, 4);
    s_le(&o, S_VERSION, 4);
    s_le(&o, spec_xxh3, 8);
    s_le(&o, (uint64_t)interior->x0, 8);
    s_le(&o, (uint64_t)interior->y0, 8);
    s_le(&o, (uint64_t)interior->w, 8);
    s_le(&o, (uint64_t)interior->h, 8);
    s_le(&o, probe, 1);
#define S_PUT(f) s_le(&o, (uint64_t)t->f, 8);
    S_TALLY_INTS(S_PUT)
#undef S_PUT
    for (int e = 0; e < TB_COAST_EXPOSURE_BINS; e++)
        s_le(&o, (uint64_t)t->exposure_hist[e], 8);
    s_le(&o, bins, 4);
    for (int b = 0; b < TB_COAST_BACKSHORE_BINS; b++)
        if (t->backshore_hist[b]) {
            s_le(&o, (uint64_t)b, 4);
            s_le(&o, (uint64_t)t->backshore_hist[b], 8);
        }
    if (!probe) {
        const void *arrays[3] = {hw, mw, ew};
        const size_t size[3] = {4, 4, 2};
        for (int a = 0; a < 3; a++)
            for (int64_t y = 0; y < interior->h; y++)
                s_raw(&o,
                      (const uint8_t *)arrays[a] +
                          ((size_t)(iy + y) * (size_t)stride + (size_t)ix) * size[a],
                      (size_t)interior->w * size[a]);
    }
    *out = o.p;
    *bytes = o.len;
    return 0;
}

int tb_coast_block_result_encode(const tb_coast_block_result_t *r, void **out, size_t *bytes,
                                 tb_err_t *err)
{
    return s_result_bytes(r->spec_xxh3, &r->interior, r->totals_only, &r->tally, r->height_m,
                          r->moved_m, r->exposure, r->interior.w, 0, 0, out, bytes, err);
}

/* A result's head and tally (into *out, its tally initialised), r left at the maps, which must be
 * as long as the interior makes them. */
static int s_result_head(const void *data, size_t bytes, tb_reader_t *r,
                         tb_coast_block_result_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_reader_init(r, data, bytes);
    if (tb_reader_magic(r, S_RESULT_MAGIC, S_VERSION, "coast block result", err) != 0)
        return -1;
    out->spec_xxh3 = tb_reader_u64(r);
    out->interior.x0 = tb_reader_i64(r);
    out->interior.y0 = tb_reader_i64(r);
    out->interior.w = tb_reader_i64(r);
    out->interior.h = tb_reader_i64(r);
    uint8_t probe = tb_reader_u8(r);
    const tb_coast_rect_t *in = &out->interior;
    if (r->failed || probe > 1 || in->w < 1 || in->h < 1 || in->w > TB_COAST_MAX_CELLS ||
        in->h > TB_COAST_MAX_CELLS / in->w)
        return tb_err_set(err, TB_E_FORMAT, "coast block result: an interior of %lld x %lld",
                          (long long)in->w, (long long)in->h);
    out->totals_only = probe;
    if (tb_coast_tally_init(&out->tally, err) != 0)
        return -1;
    tb_coast_tally_t *t = &out->tally;
#define S_GET(f) t->f = (__typeof__(t->f))tb_reader_u64(r);
    S_TALLY_INTS(S_GET)
#undef S_GET
    for (int e = 0; e < TB_COAST_EXPOSURE_BINS; e++)
        t->exposure_hist[e] = tb_reader_i64(r);
    /* the non-zero bins, ascending (the one spelling the encoder writes) */
    uint32_t bins = tb_reader_u32(r);
    int64_t last = -1;
    for (uint32_t k = 0; k < bins && !r->failed; k++) {
        uint32_t b = tb_reader_u32(r);
        int64_t v = tb_reader_i64(r);
        if (b >= TB_COAST_BACKSHORE_BINS || (int64_t)b <= last || v == 0) {
            r->failed = true;
            break;
        }
        t->backshore_hist[b] = v;
        last = b;
    }
    size_t want = probe ? 0 : 10 * (size_t)in->w * (size_t)in->h;
    if (r->failed || tb_reader_left(r) != want) {
        tb_coast_tally_free(&out->tally);
        return tb_err_set(err, TB_E_FORMAT,
                          "coast block result: a bad tally or %zu bytes for the maps (expected "
                          "%zu)",
                          tb_reader_left(r), want);
    }
    return 0;
}

int tb_coast_block_result_decode(const void *data, size_t bytes, tb_coast_block_result_t *out,
                                 tb_err_t *err)
{
    tb_reader_t r;
    if (s_result_head(data, bytes, &r, out, err) != 0)
        return -1;
    if (out->totals_only)
        return 0;
    size_t inner = (size_t)out->interior.w * (size_t)out->interior.h;
    out->height_m = tb_malloc(inner * sizeof(float), "coast block result", err);
    out->moved_m =
        out->height_m ? tb_malloc(inner * sizeof(float), "coast block result", err) : NULL;
    out->exposure =
        out->moved_m ? tb_malloc(inner * sizeof(uint16_t), "coast block result", err) : NULL;
    if (!out->exposure) {
        tb_coast_block_result_free(out);
        return -1;
    }
    tb_reader_get(&r, out->height_m, inner * sizeof(float));
    tb_reader_get(&r, out->moved_m, inner * sizeof(float));
    tb_reader_get(&r, out->exposure, inner * sizeof(uint16_t));
    return 0;
}

void tb_coast_block_result_free(tb_coast_block_result_t *r)
{
    if (!r)
        return;
    free(r->height_m);
    free(r->moved_m);
    free(r->exposure);
    tb_coast_tally_free(&r->tally);
    memset(r, 0, sizeof *r);
}

/* For blocks.c: the result's head and tally from untrusted bytes, and where its maps begin. */
int tb_coast_block_result_peek(const void *data, size_t bytes, tb_coast_block_result_t *out,
                               size_t *maps_at, tb_err_t *err);

int tb_coast_block_result_peek(const void *data, size_t bytes, tb_coast_block_result_t *out,
                               size_t *maps_at, tb_err_t *err)
{
    tb_reader_t r;
    if (s_result_head(data, bytes, &r, out, err) != 0)
        return -1;
    *maps_at = r.pos;
    return 0;
}

/* ---- the job kind ---- */

static bool s_job_progress(void *user, double fraction, const char *note)
{
    return tb_job_progress(user, fraction, note);
}

/* Decodes, runs in place on the decoded heights (no copy), and writes the result straight from the
 * window's arrays: the job's peak is the spec's bytes, their decoded copy and the pass. */
static int s_job_run(const void *spec_bytes, size_t n, tb_job_ctx_t *ctx, tb_job_output_t *out,
                     tb_err_t *err)
{
    tb_coast_block_spec_owned_t spec;
    if (tb_coast_block_spec_decode(spec_bytes, n, &spec, err) != 0)
        return -1;
    s_ran_t ran;
    int rc = s_run(&spec.spec, spec.height_m, ctx->threads > 0 ? ctx->threads : 1, s_job_progress,
                   ctx, &ran, err);
    if (rc == 0) {
        free(spec.classes); /* the result reads the heights and maps alone */
        spec.classes = NULL;
        rc = s_result_bytes(XXH3_64bits(spec_bytes, n), &spec.spec.interior, spec.spec.totals_only,
                            &ran.tally, spec.height_m, ran.moved, ran.exposure, spec.spec.window.w,
                            ran.ix, ran.iy, &out->data, &out->bytes, err);
        free(ran.moved);
        free(ran.exposure);
        tb_coast_tally_free(&ran.tally);
    }
    tb_coast_block_spec_free(&spec);
    return rc;
}

static size_t s_result_bound(const void *spec, size_t n)
{
    tb_reader_t r;
    tb_coast_block_spec_t s;
    tb_err_t err;
    if (s_spec_head(spec, n, &r, &s, &err) != 0)
        return 0;
    size_t inner = (size_t)s.interior.w * (size_t)s.interior.h;
    return S_HEAD_BYTES + 8 * (0 S_TALLY_INTS(S_COUNT)) + 8 * TB_COAST_EXPOSURE_BINS + 4 +
           12 * (size_t)TB_COAST_BACKSHORE_BINS + (s.totals_only ? 0 : 10 * inner);
}

/* What every honest tally of an interior holds: each count belongs to one of its cells (so none is
 * negative and none over the interior's cells; the tally counts all of them, but a probe's only
 * what its passes reached), the exposure histogram counts exactly the waterline
 * cells and the backshore histogram exactly the backshore cells, and the first drift's sources are
 * the cut and the river supply. */
static int s_check_tally(const tb_coast_block_result_t *got, tb_err_t *err)
{
    const tb_coast_tally_t *t = &got->tally;
    int64_t cells = got->interior.w * got->interior.h;
    const int64_t per_cell[] = {t->sea_cells,       t->shelf_cells,  t->waterline_cells,
                                t->drowned_cells,   t->planed_cells, t->beach_cells,
                                t->backshore_cells, t->mouths};
    if (!got->totals_only && t->cells != cells)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast block result: a tally of %lld cells for an interior of %lld",
                          (long long)t->cells, (long long)cells);
    for (size_t k = 0; k < sizeof per_cell / sizeof *per_cell; k++)
        if (per_cell[k] < 0 || per_cell[k] > cells)
            return tb_err_set(err, TB_E_CHECKSUM,
                              "coast block result: tally count %zu is %lld, outside 0..%lld cells",
                              k, (long long)per_cell[k], (long long)cells);
    if (t->edges < 0 || t->edges > 2 * cells || t->cut_units < 0 || t->river_units < 0 ||
        t->no_room_units < 0 || t->sources[0] < 0 || t->sources[1] < 0)
        return tb_err_set(err, TB_E_CHECKSUM, "coast block result: a negative tally count");
    int64_t exposed = 0, backshore = 0;
    for (int e = 0; e < TB_COAST_EXPOSURE_BINS; e++) {
        if (t->exposure_hist[e] < 0)
            return tb_err_set(err, TB_E_CHECKSUM,
                              "coast block result: exposure bin %d holds %lld cells", e,
                              (long long)t->exposure_hist[e]);
        exposed += t->exposure_hist[e];
    }
    for (int b = 0; b < TB_COAST_BACKSHORE_BINS; b++) {
        if (t->backshore_hist[b] < 0)
            return tb_err_set(err, TB_E_CHECKSUM,
                              "coast block result: backshore bin %d holds %lld cells", b,
                              (long long)t->backshore_hist[b]);
        backshore += t->backshore_hist[b];
    }
    if (exposed != t->waterline_cells || backshore != t->backshore_cells)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast block result: %lld cells by exposure for %lld waterline cells, "
                          "%lld by backshore height for %lld backshore cells",
                          (long long)exposed, (long long)t->waterline_cells, (long long)backshore,
                          (long long)t->backshore_cells);
    if (t->sources[0] != t->cut_units + t->river_units)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast block result: the first drift's sources %lld are not the cut %lld "
                          "plus the river supply %lld",
                          (long long)t->sources[0], (long long)t->cut_units,
                          (long long)t->river_units);
    return 0;
}

/* A result answers a spec when it echoes the spec's hash and names the spec's interior and probe
 * flag, with the maps' bytes that interior takes, an honest tally and finite maps
 * (docs/distribution.md, "Verifying results"). */
static int s_job_check(const void *spec, size_t n, const void *result, size_t bytes, tb_err_t *err)
{
    tb_reader_t r;
    tb_coast_block_spec_t s;
    tb_coast_block_result_t got;
    if (s_spec_head(spec, n, &r, &s, err) != 0 || s_result_head(result, bytes, &r, &got, err) != 0)
        return -1;
    int rc = s_check_tally(&got, err);
    tb_coast_tally_free(&got.tally);
    if (rc != 0)
        return -1;
    uint64_t want = tb_job_spec_xxh3(spec, n);
    if (got.spec_xxh3 != want)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast block result answers spec %016llx, not this job's %016llx",
                          (unsigned long long)got.spec_xxh3, (unsigned long long)want);
    if (memcmp(&got.interior, &s.interior, sizeof s.interior) != 0 ||
        got.totals_only != s.totals_only)
        return tb_err_set(err, TB_E_FORMAT,
                          "coast block result: interior [%lld, %lld, %lld x %lld]%s, its spec's "
                          "is [%lld, %lld, %lld x %lld]%s",
                          (long long)got.interior.x0, (long long)got.interior.y0,
                          (long long)got.interior.w, (long long)got.interior.h,
                          got.totals_only ? " (probe)" : "", (long long)s.interior.x0,
                          (long long)s.interior.y0, (long long)s.interior.w,
                          (long long)s.interior.h, s.totals_only ? " (probe)" : "");
    return s.totals_only ? 0
                         : tb_coast_check_maps(r.data + r.pos, got.interior.x0, got.interior.y0,
                                               got.interior.w, got.interior.h,
                                               "coast block result: interior", err);
}

const tb_job_kind_t tb_job_kind_coast_block = {
    .name = "coast_block",
    .run = s_job_run,
    .max_spec_bytes = (size_t)5 * ((size_t)1 << 31) + 24 * ((size_t)1 << 24) + ((size_t)1 << 21),
    .max_result_bytes = (size_t)10 * ((size_t)1 << 31) + ((size_t)2 << 20),
    .summary = "the coastal pass over one block's window of the planet, giving its interior",
    .result_bound = s_result_bound,
    .check_result = s_job_check,
    /* both read the preamble alone: magic, version, the header's length, a header of at most
     * S_MAX_HEADER bytes (s_spec_head) */
    .spec_head_bytes = 12 + S_MAX_HEADER,
};
