/* The overlay: its legend, its pieces and paths, and the coast jitter; see overlay.h. */
#include "jobs/plan/overlay.h"

#include "common/fs.h"
#include "common/grid.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/manifest/section.h"
#include "common/noise.h"
#include "jobs/plan/ccl.h"
#include "jobs/plan/landmasses.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double S_TWO_PI = 6.283185307179586;

/* ---- the legend ---- */

static const char *const s_kind_names[] = {"blob", "path", "coast_jitter"};

static int s_parse_mark(const cJSON *mk, int index, const char *name, tb_mark_t *out, tb_err_t *err)
{
    char where[128];
    snprintf(where, sizeof where, "marks[%d]", index);
    if (!cJSON_IsObject(mk))
        return tb_manifest_bad(err, name, where, "an object", mk);
    for (const cJSON *it = mk->child; it; it = it->next)
        if (strcmp(it->string, "name") && strcmp(it->string, "colour") &&
            strcmp(it->string, "color") && strcmp(it->string, "kind") &&
            strcmp(it->string, "coast_jitter_px"))
            return tb_err_set(err, TB_E_UNKNOWN_KEY, "%s: %s.%s: unknown key", name, where,
                              it->string);
    memset(out, 0, sizeof *out);
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(mk, "name");
    if (!cJSON_IsString(nm) || !nm->valuestring[0] || strlen(nm->valuestring) >= TB_NAME_MAX)
        return tb_manifest_bad(err, name, where, "a \"name\" string of 1..63 characters",
                               nm ? nm : mk);
    for (const unsigned char *q = (const unsigned char *)nm->valuestring; *q; q++)
        if (*q < 0x20 || *q == 0x7f)
            return tb_manifest_bad(err, name, where, "a \"name\" without control characters", nm);
    snprintf(out->name, sizeof out->name, "%s", nm->valuestring);
    snprintf(where, sizeof where, "marks[%d] (%s)", index, out->name);
    char path[256];
    const cJSON *col = cJSON_GetObjectItemCaseSensitive(mk, "colour");
    if (!col)
        col = cJSON_GetObjectItemCaseSensitive(mk, "color");
    if (!col || tb_colour_parse(col, out->rgb) != 0) {
        snprintf(path, sizeof path, "%s.colour", where);
        return tb_manifest_bad(err, name, path, "\"#rrggbb\" or [r, g, b] with 0..255",
                               col ? col : mk);
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(mk, "kind");
    int k = -1;
    for (int i = 0; i < 3 && cJSON_IsString(kind); i++)
        if (strcmp(kind->valuestring, s_kind_names[i]) == 0)
            k = i;
    if (k < 0) {
        snprintf(path, sizeof path, "%s.kind", where);
        return tb_manifest_bad(err, name, path, "\"blob\", \"path\" or \"coast_jitter\"",
                               kind ? kind : mk);
    }
    out->kind = (tb_mark_kind_t)k;
    const cJSON *jit = cJSON_GetObjectItemCaseSensitive(mk, "coast_jitter_px");
    snprintf(path, sizeof path, "%s.coast_jitter_px", where);
    if (out->kind != TB_MARK_COAST_JITTER) {
        if (jit)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: %s: only a coast_jitter mark takes coast_jitter_px", name, path);
        return 0;
    }
    char expected[64];
    snprintf(expected, sizeof expected, "a number of pixels in 0..%d", TB_OVERLAY_MAX_JITTER_PX);
    if (!jit)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %s: missing; a coast_jitter mark says how far the coast may wander "
                          "(%s)",
                          name, path, expected);
    if (!cJSON_IsNumber(jit) || !isfinite(jit->valuedouble) || jit->valuedouble < 0 ||
        jit->valuedouble > TB_OVERLAY_MAX_JITTER_PX)
        return tb_manifest_bad(err, name, path, expected, jit);
    out->coast_jitter_px = jit->valuedouble;
    return 0;
}

int tb_overlay_legend_parse(const char *json, const char *name, tb_overlay_legend_t *out,
                            tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->tolerance = TB_OVERLAY_TOLERANCE_DEFAULT;
    cJSON *root;
    if (tb_manifest_parse_json(json, name, &root, err) != 0)
        return -1;
    int rc = -1;
    if (!cJSON_IsObject(root)) {
        tb_manifest_bad(err, name, "(top level)", "an object with \"marks\"", root);
        goto done;
    }
    for (const cJSON *it = root->child; it; it = it->next)
        if (strcmp(it->string, "marks") && strcmp(it->string, "tolerance")) {
            tb_err_set(err, TB_E_UNKNOWN_KEY,
                       "%s: %s: unknown key (an overlay legend has marks "
                       "and tolerance)",
                       name, it->string);
            goto done;
        }
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (tol) {
        if (!cJSON_IsNumber(tol) || !isfinite(tol->valuedouble) || tol->valuedouble < 0 ||
            tol->valuedouble > 441.7) {
            tb_manifest_bad(err, name, "tolerance", "a number in 0..441.7", tol);
            goto done;
        }
        out->tolerance = tol->valuedouble;
    }
    const cJSON *marks = cJSON_GetObjectItemCaseSensitive(root, "marks");
    int n = cJSON_IsArray(marks) ? cJSON_GetArraySize(marks) : 0;
    if (n < 1 || n > TB_OVERLAY_MAX_MARKS) {
        char expected[96];
        snprintf(expected, sizeof expected, "an array of 1..%d marks", TB_OVERLAY_MAX_MARKS);
        tb_manifest_bad(err, name, "marks", expected, marks ? marks : root);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        tb_mark_t *m = &out->marks[i];
        if (s_parse_mark(cJSON_GetArrayItem(marks, i), i, name, m, err) != 0)
            goto done;
        for (int j = 0; j < i; j++) {
            if (strcmp(out->marks[j].name, m->name) == 0) {
                tb_err_set(err, TB_E_INVALID, "%s: marks[%d] and marks[%d] are both named %s", name,
                           j, i, m->name);
                goto done;
            }
            if (memcmp(out->marks[j].rgb, m->rgb, 3) == 0) {
                tb_err_set(err, TB_E_INVALID,
                           "%s: marks[%d] (%s) and marks[%d] (%s) share the colour "
                           "#%02x%02x%02x; each colour must mean one mark",
                           name, j, out->marks[j].name, i, m->name, m->rgb[0], m->rgb[1],
                           m->rgb[2]);
                goto done;
            }
        }
    }
    out->n_marks = n;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int tb_overlay_legend_load(const char *path, tb_overlay_legend_t *out, tb_err_t *err)
{
    char *text;
    size_t bytes;
    if (tb_fs_read_all(path, 16u << 20, &text, &bytes, err) != 0)
        return -1;
    int rc = tb_overlay_legend_parse(text, path, out, err);
    free(text);
    return rc;
}

int tb_overlay_jitter_reach(const tb_overlay_legend_t *legend)
{
    double r = 0;
    for (int i = 0; i < legend->n_marks; i++)
        if (legend->marks[i].kind == TB_MARK_COAST_JITTER && legend->marks[i].coast_jitter_px > r)
            r = legend->marks[i].coast_jitter_px;
    return (int)ceil(r);
}

/* The index of the colour nearest rgb among n colours (the first at `first`, each `stride` bytes
 * after the one before: the rgb fields of an array of marks or classes) within tol in RGB, the
 * first on a tie; -1 when none is that close. */
static int s_nearest(const uint8_t *rgb, const uint8_t *first, size_t stride, int n, double tol)
{
    double best = tol * tol;
    int found = -1;
    for (int i = 0; i < n; i++) {
        const uint8_t *c = first + (size_t)i * stride;
        double dr = (double)rgb[0] - c[0], dg = (double)rgb[1] - c[1], db = (double)rgb[2] - c[2];
        double d2 = dr * dr + dg * dg + db * db;
        if (d2 <= best && (found < 0 || d2 < best)) {
            best = d2;
            found = i;
        }
    }
    return found;
}

/* The mark of an RGB colour: 1 + its index, or TB_OVERLAY_UNMATCHED. */
static uint8_t s_match(const tb_overlay_legend_t *legend, const uint8_t *rgb)
{
    int found = s_nearest(rgb, legend->marks[0].rgb, sizeof legend->marks[0], legend->n_marks,
                          legend->tolerance);
    return found < 0 ? TB_OVERLAY_UNMATCHED : (uint8_t)(found + 1);
}

int64_t tb_overlay_match_row(const tb_overlay_legend_t *legend, const uint8_t *rgba, int64_t w,
                             uint8_t *out)
{
    int64_t unmatched = 0;
    uint8_t last[3] = {0, 0, 0}, last_mark = 0;
    bool have_last = false;
    for (int64_t x = 0; x < w; x++) {
        const uint8_t *p = rgba + 4 * x;
        if (p[3] == 0) {
            out[x] = TB_OVERLAY_BLANK;
            continue;
        }
        if (!have_last || memcmp(p, last, 3) != 0) {
            memcpy(last, p, 3);
            last_mark = s_match(legend, p);
            have_last = true;
        }
        out[x] = last_mark;
        unmatched += last_mark == TB_OVERLAY_UNMATCHED;
    }
    return unmatched;
}

/* ---- features ---- */

typedef struct {
    int64_t pixels;
    int64_t y0, y1;
    tb_arc_t arc;
    double sum_cos, sum_sin, sum_y;
} s_rec_t;

typedef struct {
    int32_t x, y;
    int32_t mark;
    int64_t label; /* of the mark's stream; the piece's index once finished */
} s_px_t;

typedef struct {
    int mark;     /* legend index */
    int64_t comp; /* component of the mark's stream, raster order of first run */
    s_rec_t rec;
    /* paths */
    double *poly; /* x, y pairs in metres, X unwrapped along the path */
    int64_t n_poly;
    double length_m;
    int64_t off_path; /* pixels of the piece not on the polyline's pixel path */
} s_piece_t;

struct tb_overlay_features_t {
    tb_overlay_legend_t legend;
    int64_t w, h, rows;
    double pixel_m;
    double *cos_pre, *sin_pre; /* prefix sums over columns of cos and sin of 2 pi (x + 0.5) / w */
    tb_ccl_stream_t *ccl[TB_OVERLAY_MAX_MARKS];
    int64_t mark_pixels[TB_OVERLAY_MAX_MARKS];
    s_px_t *px; /* path pixels */
    int64_t n_px, cap_px;
    s_piece_t *pieces;
    int64_t n_pieces;
    tb_overlay_counts_t counts;
    int64_t map_f, map_k, map_W, map_H, map_w, map_h, map_next; /* map_next: its next row */
    uint8_t *map;
    bool finished;
};

static void s_rec_add(void *ctx, void *rec_, int64_t y, int32_t x0, int32_t x1)
{
    const tb_overlay_features_t *f = ctx;
    s_rec_t *r = rec_;
    tb_arc_t run = {x0, (int64_t)x1 - x0 + 1};
    if (r->pixels == 0) {
        r->y0 = y;
        r->arc = run;
    } else {
        r->arc = tb_arc_join(r->arc, run, f->w);
    }
    r->pixels += run.w;
    r->y1 = y;
    r->sum_cos += f->cos_pre[x1 + 1] - f->cos_pre[x0];
    r->sum_sin += f->sin_pre[x1 + 1] - f->sin_pre[x0];
    r->sum_y += (double)run.w * ((double)y + 0.5);
}

static void s_rec_merge(void *ctx, void *into_, const void *from_)
{
    const tb_overlay_features_t *f = ctx;
    s_rec_t *into = into_;
    const s_rec_t *from = from_;
    into->pixels += from->pixels;
    into->y0 = from->y0 < into->y0 ? from->y0 : into->y0;
    into->y1 = from->y1 > into->y1 ? from->y1 : into->y1;
    into->arc = tb_arc_join(into->arc, from->arc, f->w);
    into->sum_cos += from->sum_cos;
    into->sum_sin += from->sum_sin;
    into->sum_y += from->sum_y;
}

tb_overlay_features_t *tb_overlay_features_new(const tb_overlay_legend_t *legend, int64_t w,
                                               int64_t h, double pixel_m, tb_err_t *err)
{
    tb_overlay_features_t *f = tb_calloc(1, sizeof *f, "overlay features", err);
    if (!f)
        return NULL;
    f->legend = *legend;
    f->w = w;
    f->h = h;
    f->pixel_m = pixel_m;
    f->counts.unmatched_x = f->counts.unmatched_y = -1;
    f->cos_pre = tb_malloc(sizeof(double) * (size_t)(w + 1), "overlay sums", err);
    f->sin_pre = tb_malloc(sizeof(double) * (size_t)(w + 1), "overlay sums", err);
    if (!f->cos_pre || !f->sin_pre)
        goto fail;
    f->cos_pre[0] = f->sin_pre[0] = 0;
    for (int64_t x = 0; x < w; x++) {
        double a = S_TWO_PI * ((double)x + 0.5) / (double)w;
        f->cos_pre[x + 1] = f->cos_pre[x] + cos(a);
        f->sin_pre[x + 1] = f->sin_pre[x] + sin(a);
    }
    tb_ccl_records_t recs = {sizeof(s_rec_t), s_rec_add, s_rec_merge, f};
    for (int i = 0; i < legend->n_marks; i++) {
        uint8_t select[256] = {0};
        select[i + 1] = 1;
        f->ccl[i] = tb_ccl_stream_new(w, true, select, &recs, err);
        if (!f->ccl[i])
            goto fail;
    }
    return f;
fail:
    tb_overlay_features_destroy(&f);
    return NULL;
}

static int64_t s_map_sample(int64_t p, int64_t f, int64_t k, int64_t n)
{
    int64_t c = p * f + f / 2;
    return (c < n ? c : n - 1) / k;
}

int tb_overlay_features_keep_map(tb_overlay_features_t *self, int64_t f, int64_t k, int64_t W,
                                 int64_t H, tb_err_t *err)
{
    self->map_f = f < 1 ? 1 : f;
    self->map_k = k < 1 ? 1 : k;
    self->map_W = W;
    self->map_H = H;
    self->map_w = (W + self->map_f - 1) / self->map_f;
    self->map_h = (H + self->map_f - 1) / self->map_f;
    free(self->map);
    self->map = tb_calloc((size_t)(self->map_w * self->map_h) + 1, 1, "overlay map", err);
    return self->map ? 0 : -1;
}

const uint8_t *tb_overlay_features_map(const tb_overlay_features_t *self, int64_t *mw, int64_t *mh)
{
    *mw = self->map_w;
    *mh = self->map_h;
    return self->map;
}

const tb_overlay_legend_t *tb_overlay_features_legend(const tb_overlay_features_t *self)
{
    return &self->legend;
}

int tb_overlay_features_row(tb_overlay_features_t *self, const uint8_t *marks, tb_err_t *err)
{
    const int64_t y = self->rows++;
    while (self->map && self->map_next < self->map_h &&
           s_map_sample(self->map_next, self->map_f, self->map_k, self->map_H) == y) {
        uint8_t *dst = self->map + self->map_next++ * self->map_w;
        for (int64_t x = 0; x < self->map_w; x++)
            dst[x] = marks[s_map_sample(x, self->map_f, self->map_k, self->map_W)];
    }
    bool any[TB_OVERLAY_MAX_MARKS + 2] = {false};
    for (int64_t x = 0; x < self->w; x++)
        any[marks[x] == TB_OVERLAY_UNMATCHED ? TB_OVERLAY_MAX_MARKS + 1 : marks[x]] = true;
    for (int i = 0; i < self->legend.n_marks; i++) {
        /* a row without the mark still goes in: it ends the runs of the row before */
        if (tb_ccl_stream_row(self->ccl[i], marks, err) != 0)
            return -1;
        if (!any[i + 1])
            continue;
        int64_t n;
        const tb_ccl_run_t *runs = tb_ccl_stream_runs(self->ccl[i], &n);
        for (int64_t k = 0; k < n; k++) {
            int64_t len = (int64_t)runs[k].x1 - runs[k].x0 + 1;
            self->mark_pixels[i] += len;
            self->counts.marked_pixels += len;
            if (self->legend.marks[i].kind != TB_MARK_PATH)
                continue;
            if (self->n_px + len > TB_OVERLAY_MAX_PATH_PIXELS)
                return tb_err_set(err, TB_E_INVALID,
                                  "overlay: path marks cover more than %lld pixels (at row %lld, "
                                  "mark %s): a path is a line a few pixels wide; paint areas "
                                  "with a blob mark",
                                  (long long)TB_OVERLAY_MAX_PATH_PIXELS, (long long)y,
                                  self->legend.marks[i].name);
            if (self->n_px + len > self->cap_px) {
                int64_t cap = self->cap_px ? 2 * self->cap_px : 4096;
                while (cap < self->n_px + len)
                    cap *= 2;
                s_px_t *g = realloc(self->px, sizeof *g * (size_t)cap);
                if (!g)
                    return tb_err_set(err, TB_E_NOMEM, "overlay: out of memory for path pixels");
                self->px = g;
                self->cap_px = cap;
            }
            for (int32_t x = runs[k].x0; x <= runs[k].x1; x++)
                self->px[self->n_px++] = (s_px_t){x, (int32_t)y, i, runs[k].label};
        }
    }
    return 0;
}

void tb_overlay_features_unmatched(tb_overlay_features_t *self, int64_t y, int64_t x, int64_t n)
{
    if (n <= 0)
        return;
    if (self->counts.unmatched_pixels == 0) {
        self->counts.unmatched_x = x;
        self->counts.unmatched_y = y;
    }
    self->counts.unmatched_pixels += n;
}

tb_overlay_counts_t tb_overlay_features_counts(const tb_overlay_features_t *self)
{
    return self->counts;
}

/* -- paths: the longest geodesic path through a piece's pixels -- */

typedef struct {
    const s_px_t *px; /* sorted by (y, x) */
    int64_t n, w;
} s_pathset_t;

static int s_px_cmp(const void *a_, const void *b_)
{
    const s_px_t *a = a_, *b = b_;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    return a->x < b->x ? -1 : (a->x > b->x);
}

static int64_t s_find(const s_pathset_t *s, int64_t x, int64_t y)
{
    int64_t lo = 0, hi = s->n - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        const s_px_t *p = &s->px[mid];
        if (p->y == y && p->x == x)
            return mid;
        if (p->y < y || (p->y == y && p->x < x))
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Breadth-first hops from `from` (8-neighbours, X wrapping); the last pixel reached is returned
 * (the farthest, the lowest index on a tie since the queue is in index order of discovery).
 * dist and parent get n entries. */
static int64_t s_bfs(const s_pathset_t *s, int64_t from, int64_t *dist, int64_t *parent,
                     int64_t *queue)
{
    for (int64_t i = 0; i < s->n; i++)
        dist[i] = -1;
    int64_t head = 0, tail = 0, last = from;
    dist[from] = 0;
    parent[from] = -1;
    queue[tail++] = from;
    while (head < tail) {
        int64_t c = queue[head++];
        last = c;
        for (int d = 0; d < 8; d++) {
            int64_t nx = tb_wrap(s->px[c].x + tb_nb_dx[d], s->w), ny = s->px[c].y + tb_nb_dy[d];
            int64_t q = s_find(s, nx, ny);
            if (q >= 0 && dist[q] < 0) {
                dist[q] = dist[c] + 1;
                parent[q] = c;
                queue[tail++] = q;
            }
        }
    }
    return last;
}

/* Douglas and Peucker (1973) on pts[a..b] (x, y pairs): keep[] marks the vertices that stay so
 * that no dropped vertex lies farther than tol from the line kept. */
static void s_simplify(const double *pts, int64_t a, int64_t b, double tol, bool *keep)
{
    while (b > a + 1) {
        double ax = pts[2 * a], ay = pts[2 * a + 1], bx = pts[2 * b], by = pts[2 * b + 1];
        double dx = bx - ax, dy = by - ay, len = hypot(dx, dy), worst = -1;
        int64_t at = -1;
        for (int64_t i = a + 1; i < b; i++) {
            double px = pts[2 * i] - ax, py = pts[2 * i + 1] - ay;
            double d = len > 0 ? fabs(px * dy - py * dx) / len : hypot(px, py);
            if (d > worst) {
                worst = d;
                at = i;
            }
        }
        if (worst <= tol)
            return;
        keep[at] = true;
        s_simplify(pts, a, at, tol, keep);
        a = at;
    }
}

static int s_build_path(tb_overlay_features_t *f, s_piece_t *pc, s_px_t *px, int64_t n,
                        tb_err_t *err)
{
    qsort(px, (size_t)n, sizeof *px, s_px_cmp);
    s_pathset_t s = {px, n, f->w};
    int64_t *dist = malloc(sizeof *dist * (size_t)n), *parent = malloc(sizeof *parent * (size_t)n),
            *queue = malloc(sizeof *queue * (size_t)n);
    double *pts = malloc(sizeof *pts * 2 * (size_t)n), *sm = NULL;
    bool *keep = calloc((size_t)n, 1);
    int rc = -1;
    if (!dist || !parent || !queue || !pts || !keep) {
        tb_err_set(err, TB_E_NOMEM, "overlay: out of memory for a path of %lld pixels",
                   (long long)n);
        goto done;
    }
    /* one end: the farthest pixel from the piece's first; the other: the farthest from that one */
    int64_t a = s_bfs(&s, 0, dist, parent, queue);
    int64_t b = s_bfs(&s, a, dist, parent, queue);
    int64_t m = 0;
    double x_prev = 0;
    /* from b back to a, with X unwrapped so the line is continuous across the seam */
    for (int64_t c = b; c >= 0; c = parent[c], m++) {
        double x = (double)px[c].x;
        if (m > 0) {
            while (x - x_prev > (double)f->w / 2)
                x -= (double)f->w;
            while (x_prev - x > (double)f->w / 2)
                x += (double)f->w;
        }
        x_prev = x;
        pts[2 * m] = (x + 0.5) * f->pixel_m;
        pts[2 * m + 1] = ((double)px[c].y + 0.5) * f->pixel_m;
    }
    /* start the line on the planet: its first vertex in [0, C) */
    double circ = (double)f->w * f->pixel_m, shift = floor(pts[0] / circ) * circ;
    for (int64_t i = 0; i < m; i++)
        pts[2 * i] -= shift;
    pc->off_path = n - m;
    /* The hops of a stroke w pixels wide wander from side to side of it: a moving mean over w
     * hops either side centres them (and pulls each end in by about half the width, where the
     * brush's square ends), then the line is simplified to within half the width. */
    double width = (double)n / (double)m, tol = width / 2 > 1 ? width / 2 : 1;
    int64_t hw = (int64_t)ceil(width);
    sm = malloc(sizeof *sm * 2 * (size_t)m);
    if (!sm) {
        tb_err_set(err, TB_E_NOMEM, "overlay: out of memory for a path of %lld pixels",
                   (long long)n);
        goto done;
    }
    for (int64_t i = 0; i < m; i++) {
        int64_t lo = i - hw < 0 ? 0 : i - hw, hi = i + hw >= m ? m - 1 : i + hw;
        double sx = 0, sy = 0;
        for (int64_t t = lo; t <= hi; t++) {
            sx += pts[2 * t];
            sy += pts[2 * t + 1];
        }
        sm[2 * i] = sx / (double)(hi - lo + 1);
        sm[2 * i + 1] = sy / (double)(hi - lo + 1);
    }
    keep[0] = keep[m - 1] = true;
    s_simplify(sm, 0, m - 1, tol * f->pixel_m, keep);
    int64_t kept = 0;
    for (int64_t i = 0; i < m; i++)
        kept += keep[i];
    pc->poly = malloc(sizeof *pc->poly * 2 * (size_t)kept);
    if (!pc->poly) {
        tb_err_set(err, TB_E_NOMEM, "overlay: out of memory for a polyline");
        goto done;
    }
    pc->n_poly = 0;
    pc->length_m = 0;
    for (int64_t i = 0; i < m; i++) {
        if (!keep[i])
            continue;
        double *v = pc->poly + 2 * pc->n_poly;
        v[0] = sm[2 * i];
        v[1] = sm[2 * i + 1];
        if (pc->n_poly > 0)
            pc->length_m += hypot(v[0] - v[-2], v[1] - v[-1]);
        pc->n_poly++;
    }
    rc = 0;
done:
    free(dist);
    free(parent);
    free(queue);
    free(pts);
    free(sm);
    free(keep);
    return rc;
}

static int s_px_comp_cmp(const void *a_, const void *b_)
{
    /* the label field holds the piece index here */
    const s_px_t *a = a_, *b = b_;
    return a->label < b->label ? -1 : (a->label > b->label);
}

int tb_overlay_features_finish(tb_overlay_features_t *self, tb_err_t *err)
{
    int64_t total = 0;
    int32_t *comp[TB_OVERLAY_MAX_MARKS] = {NULL};
    int64_t n_comp[TB_OVERLAY_MAX_MARKS] = {0}, first_piece[TB_OVERLAY_MAX_MARKS] = {0};
    int rc = -1;
    for (int i = 0; i < self->legend.n_marks; i++) {
        if (tb_ccl_stream_resolve(self->ccl[i], &comp[i], &n_comp[i], err) != 0)
            goto done;
        first_piece[i] = total;
        total += n_comp[i];
    }
    self->pieces =
        tb_calloc((size_t)(total ? total : 1), sizeof *self->pieces, "overlay pieces", err);
    if (!self->pieces)
        goto done;
    self->n_pieces = total;
    for (int i = 0; i < self->legend.n_marks; i++) {
        int64_t labels = tb_ccl_stream_labels(self->ccl[i]);
        for (int64_t l = 0; l < labels; l++) {
            if (tb_ccl_stream_find(self->ccl[i], l) != l)
                continue;
            s_piece_t *pc = &self->pieces[first_piece[i] + comp[i][l]];
            pc->mark = i;
            pc->comp = comp[i][l];
            pc->rec = *(const s_rec_t *)tb_ccl_stream_record(self->ccl[i], l);
        }
    }
    /* path pixels: label -> piece, grouped by piece, and each piece's polyline */
    for (int64_t k = 0; k < self->n_px; k++) {
        s_px_t *q = &self->px[k];
        int64_t root = tb_ccl_stream_find(self->ccl[q->mark], q->label);
        q->label = first_piece[q->mark] + comp[q->mark][root];
    }
    if (self->n_px > 0) /* (qsort takes no NULL, even for no elements) */
        qsort(self->px, (size_t)self->n_px, sizeof *self->px, s_px_comp_cmp);
    for (int64_t k = 0; k < self->n_px;) {
        int64_t e = k;
        while (e < self->n_px && self->px[e].label == self->px[k].label)
            e++;
        if (s_build_path(self, &self->pieces[self->px[k].label], self->px + k, e - k, err) != 0)
            goto done;
        k = e;
    }
    self->counts.pieces = total;
    self->finished = true;
    rc = 0;
done:
    for (int i = 0; i < TB_OVERLAY_MAX_MARKS; i++)
        free(comp[i]);
    return rc;
}

static cJSON *s_pair(double a, double b)
{
    double v[2] = {a, b};
    return cJSON_CreateDoubleArray(v, 2);
}

char *tb_overlay_features_json(const tb_overlay_features_t *self, const char *source)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    const double pm = self->pixel_m, circ = (double)self->w * pm;
    cJSON_AddStringToObject(root, "source", source ? source : "");
    cJSON_AddStringToObject(root, "units",
                            "world metres: x east from the seam (x = 0), y south from row 0");
    cJSON_AddNumberToObject(root, "pixel_m", pm);
    cJSON_AddNumberToObject(root, "circumference_m", circ);
    cJSON_AddItemToObject(root, "size_px", s_pair((double)self->w, (double)self->h));
    cJSON_AddNumberToObject(root, "marked_pixels", (double)self->counts.marked_pixels);
    cJSON_AddNumberToObject(root, "unmatched_pixels", (double)self->counts.unmatched_pixels);
    if (self->counts.unmatched_pixels > 0)
        cJSON_AddItemToObject(
            root, "first_unmatched_px",
            s_pair((double)self->counts.unmatched_x, (double)self->counts.unmatched_y));
    cJSON *marks = cJSON_AddArrayToObject(root, "marks");
    for (int i = 0; i < self->legend.n_marks; i++) {
        const tb_mark_t *mk = &self->legend.marks[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", mk->name);
        cJSON_AddStringToObject(o, "kind", s_kind_names[mk->kind]);
        char hex[8];
        snprintf(hex, sizeof hex, "#%02x%02x%02x", mk->rgb[0], mk->rgb[1], mk->rgb[2]);
        cJSON_AddStringToObject(o, "colour", hex);
        if (mk->kind == TB_MARK_COAST_JITTER)
            cJSON_AddNumberToObject(o, "coast_jitter_px", mk->coast_jitter_px);
        int64_t pieces = 0;
        for (int64_t k = 0; k < self->n_pieces; k++)
            pieces += self->pieces[k].mark == i;
        cJSON_AddNumberToObject(o, "pixels", (double)self->mark_pixels[i]);
        cJSON_AddNumberToObject(o, "area_m2", (double)self->mark_pixels[i] * pm * pm);
        cJSON_AddNumberToObject(o, "pieces", (double)pieces);
        cJSON_AddItemToArray(marks, o);
    }
    cJSON *feats = cJSON_AddArrayToObject(root, "features");
    for (int64_t k = 0; k < self->n_pieces; k++) {
        const s_piece_t *pc = &self->pieces[k];
        const tb_mark_t *mk = &self->legend.marks[pc->mark];
        const s_rec_t *r = &pc->rec;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "mark", mk->name);
        cJSON_AddStringToObject(o, "kind", s_kind_names[mk->kind]);
        cJSON_AddNumberToObject(o, "pixels", (double)r->pixels);
        double area = (double)r->pixels * pm * pm;
        cJSON_AddNumberToObject(o, "area_m2", area);
        double cx, cy;
        tb_landmass_centroid(r->sum_cos, r->sum_sin, r->sum_y, r->pixels, self->w, &cx, &cy);
        cJSON_AddItemToObject(o, "centre_m", s_pair(cx * pm, cy * pm));
        cJSON_AddNumberToObject(o, "radius_m", sqrt(area / M_PI));
        cJSON *ext = cJSON_AddObjectToObject(o, "extent_m");
        cJSON_AddNumberToObject(ext, "x0", (double)r->arc.x0 * pm);
        cJSON_AddNumberToObject(ext, "x1", (double)(r->arc.x0 + r->arc.w) * pm);
        cJSON_AddNumberToObject(ext, "y0", (double)r->y0 * pm);
        cJSON_AddNumberToObject(ext, "y1", (double)(r->y1 + 1) * pm);
        cJSON_AddBoolToObject(o, "crosses_seam", tb_arc_crosses_seam(r->arc, self->w));
        if (mk->kind == TB_MARK_PATH && pc->poly) {
            cJSON *line = cJSON_AddArrayToObject(o, "polyline_m");
            for (int64_t v = 0; v < pc->n_poly; v++)
                cJSON_AddItemToArray(line, s_pair(pc->poly[2 * v], pc->poly[2 * v + 1]));
            cJSON_AddNumberToObject(o, "length_m", pc->length_m);
            cJSON_AddNumberToObject(o, "off_line_pixels", (double)pc->off_path);
        }
        cJSON_AddItemToArray(feats, o);
    }
    char *text = tb_json_print(root, true);
    cJSON_Delete(root);
    return text;
}

void tb_overlay_features_line(const tb_overlay_features_t *self, char *buf, size_t n)
{
    int64_t per_kind[3] = {0, 0, 0};
    for (int64_t k = 0; k < self->n_pieces; k++)
        per_kind[self->legend.marks[self->pieces[k].mark].kind]++;
    int len =
        snprintf(buf, n,
                 "overlay: %d marks, %lld pieces (%lld blobs, %lld paths, %lld coast_jitter), "
                 "%lld marked pixels, %lld unmatched pixels dropped",
                 self->legend.n_marks, (long long)self->n_pieces, (long long)per_kind[0],
                 (long long)per_kind[1], (long long)per_kind[2],
                 (long long)self->counts.marked_pixels, (long long)self->counts.unmatched_pixels);
    if (self->counts.unmatched_pixels > 0 && len > 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " (the first at %lld,%lld)",
                        (long long)self->counts.unmatched_x, (long long)self->counts.unmatched_y);
    /* a sheet saved without transparency (or with a white matte) has no blank: say so */
    if (2 * self->counts.unmatched_pixels > self->w * self->h && len > 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len,
                 "; more than half the sheet matches no mark: save it with a transparent "
                 "background (alpha 0 is blank)");
}

void tb_overlay_features_destroy(tb_overlay_features_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_overlay_features_t *f = *self_p;
    for (int i = 0; i < TB_OVERLAY_MAX_MARKS; i++)
        tb_ccl_stream_destroy(&f->ccl[i]);
    for (int64_t k = 0; f->pieces && k < f->n_pieces; k++)
        free(f->pieces[k].poly);
    free(f->pieces);
    free(f->px);
    free(f->cos_pre);
    free(f->sin_pre);
    free(f->map);
    free(f);
    *self_p = NULL;
}

/* ---- the coast jitter ---- */

enum { S_OCEAN = 1, S_LAND = 2, S_JIT = 4 };

struct tb_coast_jitter_t {
    tb_row_source_t src;
    const tb_row_source_t *painting, *overlay;
    tb_overlay_features_t *features;
    tb_legend_t classes;
    double jit[256]; /* per mark index: coast_jitter_px, or 0 */
    int64_t w, h, R, ring, loaded, next, moved;
    double pixel_m;
    tb_noise_t nx, ny;
    uint8_t *rgb;   /* ring rows of the painting, RGB */
    uint8_t *flags; /* ring rows: S_OCEAN, S_LAND (by the class legend), S_JIT (a jitter mark) */
    uint8_t *mark;  /* ring rows of mark indices */
    uint8_t *rgba;  /* one overlay row */
    uint8_t *row_flags; /* ring: the flags of each row, ORed */
    uint8_t *vert; /* a row extended by R either side: the flags of the 2 R + 1 rows about it */
    int32_t *cnt;  /* prefix counts of vert's three bits */
    uint8_t last_rgb[3], last_kind;
    bool have_last;
};

static uint8_t s_kind(tb_coast_jitter_t *j, const uint8_t *rgb)
{
    if (j->have_last && memcmp(rgb, j->last_rgb, 3) == 0)
        return j->last_kind;
    const tb_legend_t *lg = &j->classes;
    int found =
        s_nearest(rgb, lg->classes[0].rgb, sizeof lg->classes[0], lg->n_classes, lg->tolerance);
    memcpy(j->last_rgb, rgb, 3);
    j->have_last = true;
    j->last_kind = found < 0 ? 0 : lg->classes[found].kind == TB_CLASS_OCEAN ? S_OCEAN : S_LAND;
    return j->last_kind;
}

/* Reads painting and overlay row `loaded` into the rings. */
static int s_load(tb_coast_jitter_t *j, tb_err_t *err)
{
    const int64_t y = j->loaded, slot = y % j->ring, w = j->w;
    uint8_t *rgb = j->rgb + slot * w * 3, *fl = j->flags + slot * w, *mk = j->mark + slot * w;
    if (tb_row_source_read(j->painting, 1, rgb, err) != 0 ||
        tb_row_source_read(j->overlay, 1, j->rgba, err) != 0)
        return -1;
    int64_t unmatched =
        tb_overlay_match_row(tb_overlay_features_legend(j->features), j->rgba, w, mk);
    if (unmatched) {
        int64_t x = 0;
        while (mk[x] != TB_OVERLAY_UNMATCHED)
            x++;
        tb_overlay_features_unmatched(j->features, y, x, unmatched);
    }
    if (tb_overlay_features_row(j->features, mk, err) != 0)
        return -1;
    if (j->R > 0) {
        uint8_t all = 0;
        for (int64_t x = 0; x < w; x++) {
            fl[x] = (uint8_t)(s_kind(j, rgb + 3 * x) | (j->jit[mk[x]] > 0 ? S_JIT : 0));
            all |= fl[x];
        }
        j->row_flags[slot] = all;
    }
    j->loaded++;
    return 0;
}

/* The noise displacement at pixel (x, y), each component in [-1, 1]. */
static void s_dir(const tb_coast_jitter_t *j, int64_t x, int64_t y, double *dx, double *dy)
{
    double wx = ((double)x + 0.5) * j->pixel_m, wy = ((double)y + 0.5) * j->pixel_m;
    double a = tb_noise_fbm(&j->nx, wx, wy, 2, 0.5), b = tb_noise_fbm(&j->ny, wx, wy, 2, 0.5);
    *dx = a < -1 ? -1 : (a > 1 ? 1 : a);
    *dy = b < -1 ? -1 : (b > 1 ? 1 : b);
}

/* Ring offsets of pixel (x + dx, y + dy): X wraps, Y clamped to the planet. */
static int64_t s_at(const tb_coast_jitter_t *j, int64_t x, int64_t y, int64_t dx, int64_t dy)
{
    int64_t yy = y + dy;
    yy = yy < 0 ? 0 : (yy >= j->h ? j->h - 1 : yy);
    return (yy % j->ring) * j->w + tb_wrap(x + dx, j->w);
}

static void s_row_out(tb_coast_jitter_t *j, int64_t y, uint8_t *out)
{
    const int64_t w = j->w, R = j->R;
    memcpy(out, j->rgb + (y % j->ring) * w * 3, (size_t)w * 3);
    if (R == 0)
        return;
    /* which pixels can move: both kinds and a jitter mark within R (Chebyshev); most rows of a
     * planet have no mark within R and cost only the copy */
    uint8_t any = 0;
    for (int64_t yy = y - R; yy <= y + R; yy++)
        if (yy >= 0 && yy < j->h)
            any |= j->row_flags[yy % j->ring];
    if (any != (S_OCEAN | S_LAND | S_JIT))
        return;
    uint8_t *vert = j->vert; /* the row extended by R either side, X wrapping */
    memset(vert, 0, (size_t)(w + 2 * R));
    for (int64_t yy = y - R; yy <= y + R; yy++) {
        if (yy < 0 || yy >= j->h || j->row_flags[yy % j->ring] == 0)
            continue;
        const uint8_t *fl = j->flags + (yy % j->ring) * w;
        for (int64_t x = 0; x < w; x++)
            vert[R + x] |= fl[x];
    }
    for (int64_t k = 0; k < R; k++) {
        vert[k] = vert[R + tb_wrap(k - R, w)];
        vert[R + w + k] = vert[R + tb_wrap(k, w)];
    }
    const int64_t ext = w + 2 * R;
    int32_t *c0 = j->cnt, *c1 = c0 + ext + 1, *c2 = c1 + ext + 1;
    c0[0] = c1[0] = c2[0] = 0;
    for (int64_t k = 0; k < ext; k++) {
        c0[k + 1] = c0[k] + (vert[k] & 1);
        c1[k + 1] = c1[k] + ((vert[k] >> 1) & 1);
        c2[k + 1] = c2[k] + ((vert[k] >> 2) & 1);
    }
    const uint8_t *rgb = j->rgb, *fl = j->flags, *mk = j->mark;
    for (int64_t x = 0; x < w; x++) {
        const int64_t e = x + 2 * R + 1;
        if (c0[e] == c0[x] || c1[e] == c1[x] || c2[e] == c2[x])
            continue;
        const int64_t p = s_at(j, x, y, 0, 0);
        const uint8_t kind = fl[p] & (S_OCEAN | S_LAND);
        if (!kind)
            continue;
        double dx, dy;
        s_dir(j, x, y, &dx, &dy);
        double a = j->jit[mk[p]];
        if (!(fl[p] & S_JIT)) {
            /* the instruction of the far side of the waterline */
            int64_t q =
                s_at(j, x, y, (int64_t)lround((double)R * dx), (int64_t)lround((double)R * dy));
            uint8_t qk = fl[q] & (S_OCEAN | S_LAND);
            a = (qk && qk != kind && (fl[q] & S_JIT)) ? j->jit[mk[q]] : 0;
        }
        if (a <= 0)
            continue;
        int64_t s = s_at(j, x, y, (int64_t)lround(a * dx), (int64_t)lround(a * dy));
        uint8_t sk = fl[s] & (S_OCEAN | S_LAND);
        if (sk && sk != kind) {
            memcpy(out + 3 * x, rgb + 3 * s, 3);
            j->moved++;
        }
    }
}

static int s_read(void *user, int64_t n, void *out_, tb_err_t *err)
{
    tb_coast_jitter_t *j = user;
    uint8_t *out = out_;
    for (int64_t r = 0; r < n; r++, j->next++) {
        int64_t need = j->next + j->R + 1;
        need = need > j->h ? j->h : need;
        while (j->loaded < need)
            if (s_load(j, err) != 0)
                return -1;
        s_row_out(j, j->next, out + r * j->w * 3);
    }
    return 0;
}

tb_coast_jitter_t *tb_coast_jitter_new(const tb_manifest_t *m, int64_t cells_per_pixel,
                                       const tb_overlay_legend_t *legend,
                                       const tb_row_source_t *painting,
                                       const tb_row_source_t *overlay,
                                       tb_overlay_features_t *features, tb_err_t *err)
{
    if (overlay->w != painting->w || overlay->h != painting->h) {
        tb_err_set(err, TB_E_INVALID,
                   "%s: %lld x %lld pixels; expected the painting's size, %lld x %lld (%s): an "
                   "overlay is a second sheet over the same pixels",
                   overlay->name, (long long)overlay->w, (long long)overlay->h,
                   (long long)painting->w, (long long)painting->h, painting->name);
        return NULL;
    }
    if (overlay->format != TB_PNG_RGBA8 || painting->format != TB_PNG_RGB8) {
        tb_err_set(err, TB_E_INTERNAL, "coast jitter: expected an RGB8 painting and RGBA8 overlay");
        return NULL;
    }
    tb_coast_jitter_t *j = tb_calloc(1, sizeof *j, "coast jitter", err);
    if (!j)
        return NULL;
    j->painting = painting;
    j->overlay = overlay;
    j->features = features;
    j->classes = m->legend;
    j->w = painting->w;
    j->h = painting->h;
    j->R = tb_overlay_jitter_reach(legend);
    j->ring = 2 * j->R + 1;
    j->pixel_m = m->cell_m * (double)cells_per_pixel;
    for (int i = 0; i < legend->n_marks; i++)
        if (legend->marks[i].kind == TB_MARK_COAST_JITTER)
            j->jit[i + 1] = legend->marks[i].coast_jitter_px;
    double circ = m->circumference_km * 1000.0, wave = 4.0 * (double)(j->R ? j->R : 1) * j->pixel_m;
    if (tb_noise_init(&j->nx, m->seed, TB_SALT_OVERLAY_JITTER_X, circ, wave, err) != 0 ||
        tb_noise_init(&j->ny, m->seed, TB_SALT_OVERLAY_JITTER_Y, circ, wave, err) != 0)
        goto fail;
    const size_t w = (size_t)j->w, ring = (size_t)j->ring;
    j->rgb = tb_malloc(w * 3 * ring, "coast jitter rows", err);
    j->flags = tb_calloc(w * ring, 1, "coast jitter rows", err);
    j->mark = tb_malloc(w * ring, "coast jitter rows", err);
    j->rgba = tb_malloc(w * 4, "overlay row", err);
    j->vert = tb_malloc(w + 2 * (size_t)j->R, "coast jitter row", err);
    j->row_flags = tb_calloc(ring, 1, "coast jitter rows", err);
    j->cnt = tb_malloc(sizeof *j->cnt * 3 * (w + 2 * (size_t)j->R + 1), "coast jitter row", err);
    if (!j->rgb || !j->flags || !j->mark || !j->rgba || !j->vert || !j->row_flags || !j->cnt)
        goto fail;
    j->src = (tb_row_source_t){.w = j->w,
                               .h = j->h,
                               .format = TB_PNG_RGB8,
                               .name = painting->name,
                               .read = s_read,
                               .user = j};
    return j;
fail:
    tb_coast_jitter_destroy(&j);
    return NULL;
}

const tb_row_source_t *tb_coast_jitter_rows(tb_coast_jitter_t *self)
{
    return &self->src;
}

int tb_coast_jitter_drain(tb_coast_jitter_t *self, tb_err_t *err)
{
    while (self->loaded < self->h)
        if (s_load(self, err) != 0)
            return -1;
    return 0;
}

int64_t tb_coast_jitter_moved(const tb_coast_jitter_t *self)
{
    return self->moved;
}

void tb_coast_jitter_destroy(tb_coast_jitter_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_coast_jitter_t *j = *self_p;
    free(j->rgb);
    free(j->flags);
    free(j->mark);
    free(j->rgba);
    free(j->vert);
    free(j->row_flags);
    free(j->cnt);
    free(j);
    *self_p = NULL;
}
