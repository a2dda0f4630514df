/* Mosaics of a bake's detail tiles; see tile_mosaic.h and docs/tiles.md ("Stitching"). */
#include "coordinator/maps/tile_mosaic.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/png_io.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/tile_files.h"

#define S_INDEX_MAX_BYTES ((size_t)1 << 28)
#define S_PATH 4200

typedef struct {
    char id[TB_TILE_ID_MAX];
    int64_t col, row, w, h;
    cJSON *files; /* name -> XXH3 hex, into the index */
} s_tile_t;

struct tb_mosaic {
    char dir[S_PATH]; /* out_dir/tiles */
    char index_path[S_PATH];
    tb_mosaic_info_t info;
    cJSON *index;
    s_tile_t *tiles;
    int64_t n_tiles; /* tiles[0..n_tiles), sorted by (row, col): found by binary search, so a
                        planet of millions of lattice tiles costs only what the index lists */
};

static int s_num(const cJSON *o, const char *key, const char *path, double *out, tb_err_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return tb_err_set(err, TB_E_FORMAT, "%s: \"%s\" is missing or not a number", path, key);
    *out = v->valuedouble;
    return 0;
}

/* A whole number in [lo, hi], or TB_E_FORMAT naming the key. */
static int s_int(const cJSON *o, const char *key, const char *path, int64_t lo, int64_t hi,
                 int64_t *out, tb_err_t *err)
{
    double d = 0;
    if (s_num(o, key, path, &d, err) != 0)
        return -1;
    if (d != floor(d) || d < (double)lo || d > (double)hi)
        return tb_err_set(err, TB_E_FORMAT,
                          "%s: \"%s\" is %g, expected a whole number in %lld..%lld", path, key, d,
                          (long long)lo, (long long)hi);
    *out = (int64_t)d;
    return 0;
}

/* The pair at key ([a, b] of numbers). */
static int s_pair(const cJSON *o, const char *key, const char *path, double *a, double *b,
                  tb_err_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 ||
        !cJSON_IsNumber(cJSON_GetArrayItem(v, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(v, 1)))
        return tb_err_set(err, TB_E_FORMAT, "%s: \"%s\" is not a pair of numbers", path, key);
    *a = cJSON_GetArrayItem(v, 0)->valuedouble;
    *b = cJSON_GetArrayItem(v, 1)->valuedouble;
    return 0;
}

static int s_lattice(tb_mosaic_t *m, tb_err_t *err)
{
    const char *p = m->index_path;
    tb_mosaic_info_t *I = &m->info;
    const cJSON *lat = cJSON_GetObjectItemCaseSensitive(m->index, "lattice");
    const cJSON *enc = cJSON_GetObjectItemCaseSensitive(m->index, "encoding");
    if (!cJSON_IsObject(lat) || !cJSON_IsObject(enc))
        return tb_err_set(err, TB_E_FORMAT, "%s: no \"lattice\" or \"encoding\" object", p);
    const int64_t big = (int64_t)1 << 31;
    if (s_num(lat, "cell_m", p, &I->cell_m, err) != 0 ||
        s_int(lat, "tile_samples", p, 1, big, &I->tile_samples, err) != 0 ||
        s_int(lat, "columns", p, 1, big, &I->cols, err) != 0 ||
        s_int(lat, "rows", p, 1, big, &I->rows, err) != 0 ||
        s_int(lat, "planet_samples_w", p, 1, big, &I->planet_w, err) != 0 ||
        s_int(lat, "planet_samples_h", p, 1, big, &I->planet_h, err) != 0 ||
        s_pair(enc, "elevation_m", p, &I->elev_lo, &I->elev_hi, err) != 0)
        return -1;
    if (!(I->cell_m > 0) || I->cols * I->tile_samples != I->planet_w ||
        I->rows != (I->planet_h + I->tile_samples - 1) / I->tile_samples ||
        I->cols * I->rows > big || !(I->elev_hi > I->elev_lo))
        return tb_err_set(err, TB_E_FORMAT,
                          "%s: the lattice does not hold together (%lld x %lld tiles of %lld "
                          "samples of %g m over %lld x %lld samples, elevation_m [%g, %g])",
                          p, (long long)I->cols, (long long)I->rows, (long long)I->tile_samples,
                          I->cell_m, (long long)I->planet_w, (long long)I->planet_h, I->elev_lo,
                          I->elev_hi);
    return 0;
}

static int s_cmp_tile(const void *a, const void *b)
{
    const s_tile_t *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return x->col < y->col ? -1 : x->col > y->col ? 1 : 0;
}

static int s_tiles(tb_mosaic_t *m, tb_err_t *err)
{
    const char *p = m->index_path;
    tb_mosaic_info_t *I = &m->info;
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(m->index, "tiles");
    if (!cJSON_IsArray(arr))
        return tb_err_set(err, TB_E_FORMAT, "%s: no \"tiles\" array", p);
    int64_t n = cJSON_GetArraySize(arr), k = 0;
    m->tiles = tb_calloc((size_t)n + 1, sizeof *m->tiles, "tile index", err);
    if (!m->tiles)
        return -1;
    for (cJSON *e = arr->child; e; e = e->next, k++) {
        s_tile_t *t = &m->tiles[k];
        char where[S_PATH + 64];
        snprintf(where, sizeof where, "%s: tiles[%lld]", p, (long long)k);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        double sw, sh;
        if (!cJSON_IsString(id) || s_int(e, "col", where, 0, I->cols - 1, &t->col, err) != 0 ||
            s_int(e, "row", where, 0, I->rows - 1, &t->row, err) != 0 ||
            s_pair(e, "samples", where, &sw, &sh, err) != 0)
            return cJSON_IsString(id) ? -1
                                      : tb_err_set(err, TB_E_FORMAT, "%s: no \"id\" string", where);
        /* the id is a file name: it must be exactly the one its column and row print */
        tb_tile_id_format((tb_tile_id_t){t->col, t->row}, t->id);
        if (strcmp(t->id, id->valuestring) != 0)
            return tb_err_set(err, TB_E_FORMAT,
                              "%s: id \"%.64s\" is not %s (column %lld, row %lld)", where,
                              id->valuestring, t->id, (long long)t->col, (long long)t->row);
        t->w = I->tile_samples;
        t->h = I->planet_h - t->row * I->tile_samples;
        if (t->h > I->tile_samples)
            t->h = I->tile_samples;
        if (sw != (double)t->w || sh != (double)t->h)
            return tb_err_set(err, TB_E_FORMAT,
                              "%s: tile %s has %g x %g samples, expected %lld x %lld", where, t->id,
                              sw, sh, (long long)t->w, (long long)t->h);
        t->files = cJSON_GetObjectItemCaseSensitive(e, "files");
        if (!cJSON_IsObject(t->files))
            return tb_err_set(err, TB_E_FORMAT, "%s: tile %s has no \"files\" object", where,
                              t->id);
    }
    qsort(m->tiles, (size_t)n, sizeof *m->tiles, s_cmp_tile);
    for (int64_t i = 1; i < n; i++)
        if (s_cmp_tile(&m->tiles[i - 1], &m->tiles[i]) == 0)
            return tb_err_set(err, TB_E_FORMAT, "%s: tile %s is listed twice", p, m->tiles[i].id);
    m->n_tiles = I->n_tiles = n;
    return 0;
}

/* The index of tile (col, row) in m->tiles, or -1. */
static int64_t s_find(const tb_mosaic_t *m, int64_t col, int64_t row)
{
    int64_t lo = 0, hi = m->n_tiles;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        const s_tile_t *t = &m->tiles[mid];
        if (t->row < row || (t->row == row && t->col < col))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n_tiles && m->tiles[lo].row == row && m->tiles[lo].col == col ? lo : -1;
}

/* The index's bytes, parsed and checked; m->dir and m->index_path are set. */
static int s_parse(tb_mosaic_t *m, const char *text, size_t n, tb_err_t *err)
{
    m->index = cJSON_ParseWithLength(text, n);
    if (!cJSON_IsObject(m->index))
        return tb_err_set(err, TB_E_FORMAT, "%s: not a JSON object", m->index_path);
    return s_lattice(m, err) == 0 && s_tiles(m, err) == 0 ? 0 : -1;
}

int tb_mosaic_parse(const char *out_dir, const char *text, size_t n, tb_mosaic_t **out,
                    tb_err_t *err)
{
    *out = NULL;
    tb_mosaic_t *m = tb_calloc(1, sizeof *m, "tile mosaic", err);
    if (!m)
        return -1;
    if (tb_fs_join(m->dir, sizeof m->dir, out_dir, "tiles", err) != 0 ||
        tb_fs_join(m->index_path, sizeof m->index_path, m->dir, "index.json", err) != 0 ||
        s_parse(m, text, n, err) != 0) {
        tb_mosaic_close(&m);
        return -1;
    }
    *out = m;
    return 0;
}

int tb_mosaic_open(const char *out_dir, tb_mosaic_t **out, tb_err_t *err)
{
    *out = NULL;
    tb_mosaic_t *m = tb_calloc(1, sizeof *m, "tile mosaic", err);
    if (!m)
        return -1;
    char *text = NULL;
    size_t n;
    if (tb_fs_join(m->dir, sizeof m->dir, out_dir, "tiles", err) != 0 ||
        tb_fs_join(m->index_path, sizeof m->index_path, m->dir, "index.json", err) != 0 ||
        tb_fs_read_all(m->index_path, S_INDEX_MAX_BYTES, &text, &n, err) != 0)
        goto fail;
    int prc = s_parse(m, text, n, err);
    free(text);
    if (prc != 0)
        goto fail;
    *out = m;
    return 0;
fail:
    tb_mosaic_close(&m);
    return -1;
}
void tb_mosaic_close(tb_mosaic_t **m)
{
    if (!m || !*m)
        return;
    cJSON_Delete((*m)->index);
    free((*m)->tiles);
    free(*m);
    *m = NULL;
}

void tb_mosaic_info(const tb_mosaic_t *m, tb_mosaic_info_t *out)
{
    *out = m->info;
}

bool tb_mosaic_has_tile(const tb_mosaic_t *m, int64_t col, int64_t row)
{
    const tb_mosaic_info_t *I = &m->info;
    return col >= 0 && col < I->cols && row >= 0 && row < I->rows && s_find(m, col, row) >= 0;
}

int tb_mosaic_area_samples(const tb_mosaic_info_t *info, double x0_m, double y0_m, double w_m,
                           double h_m, int64_t max_samples, tb_mosaic_rect_t *out, tb_err_t *err)
{
    double c = info->cell_m, circ = (double)info->planet_w * c, height = (double)info->planet_h * c;
    if (!isfinite(x0_m) || !isfinite(y0_m) || !(w_m > 0) || !(h_m > 0) || !isfinite(w_m) ||
        !isfinite(h_m))
        return tb_err_set(err, TB_E_INVALID,
                          "area %g,%g,%g,%g: expected X0,Y0,W,H in metres with W and H positive",
                          x0_m, y0_m, w_m, h_m);
    if (w_m > circ)
        return tb_err_set(err, TB_E_INVALID, "area width %g m is more than the circumference, %g m",
                          w_m, circ);
    if (y0_m < 0 || y0_m + h_m > height)
        return tb_err_set(
            err, TB_E_INVALID,
            "area rows %g..%g m run past the planet, which is %g m from north (y = 0) "
            "to south",
            y0_m, y0_m + h_m, height);
    double x = fmod(x0_m, circ);
    if (x < 0)
        x += circ;
    /* the samples whose centres (i + 0.5) c lie in [a, b): i from ceil(a / c - 0.5) */
    int64_t i0 = (int64_t)ceil(x / c - 0.5), i1 = (int64_t)ceil((x + w_m) / c - 0.5);
    int64_t j0 = (int64_t)ceil(y0_m / c - 0.5), j1 = (int64_t)ceil((y0_m + h_m) / c - 0.5);
    if (j1 > info->planet_h)
        j1 = info->planet_h;
    if (i1 - i0 > info->planet_w)
        i1 = i0 + info->planet_w;
    if (i1 <= i0 || j1 <= j0)
        return tb_err_set(err, TB_E_INVALID,
                          "area %g,%g,%g,%g holds no sample centre (samples are %g m)", x0_m, y0_m,
                          w_m, h_m, c);
    tb_mosaic_rect_t r = {i0 % info->planet_w, j0, i1 - i0, j1 - j0};
    if (r.w * r.h > max_samples)
        return tb_err_set(err, TB_E_INVALID,
                          "area %g,%g,%g,%g is %lld x %lld samples, more than the budget of %lld "
                          "samples; stitch it in parts",
                          x0_m, y0_m, w_m, h_m, (long long)r.w, (long long)r.h,
                          (long long)max_samples);
    *out = r;
    return 0;
}

uint16_t tb_mosaic_encode_m(const tb_mosaic_info_t *info, double metres)
{
    double v = round((metres - info->elev_lo) * 65535.0 / (info->elev_hi - info->elev_lo));
    return v <= 0 ? 0 : v >= 65535 ? 65535 : (uint16_t)v;
}

/* Reads tiles/<id><suffix>, checks its XXH3 against the index: a new buffer, or -1. */
static int s_read_checked(const tb_mosaic_t *m, const s_tile_t *t, const char *suffix, char **data,
                          size_t *n, char *path, tb_err_t *err)
{
    char name[TB_TILE_ID_MAX + 32];
    snprintf(name, sizeof name, "%s%s", t->id, suffix);
    if (tb_fs_join(path, S_PATH, m->dir, name, err) != 0)
        return -1;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(t->files, name);
    if (!cJSON_IsString(h))
        return tb_err_set(err, TB_E_FORMAT, "%s: tile %s lists no XXH3 for %s", m->index_path,
                          t->id, name);
    if (tb_fs_read_all(path, (size_t)1 << 34, data, n, err) != 0)
        return -1;
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(*data, *n));
    if (strcmp(hex, h->valuestring) != 0) {
        free(*data);
        *data = NULL;
        return tb_err_set(err, TB_E_CHECKSUM, "%s: XXH3 %s, but %s says %.32s: the file is damaged",
                          path, hex, m->index_path, h->valuestring);
    }
    return 0;
}

int tb_mosaic_read_file(const tb_mosaic_t *m, int64_t col, int64_t row, const char *suffix,
                        char **data, size_t *n, tb_err_t *err)
{
    int64_t k = tb_mosaic_has_tile(m, col, row) ? s_find(m, col, row) : -1;
    char path[S_PATH];
    if (k < 0)
        return tb_err_set(err, TB_E_INVALID, "%s lists no tile at column %lld, row %lld",
                          m->index_path, (long long)col, (long long)row);
    return s_read_checked(m, &m->tiles[k], suffix, data, n, path, err);
}

bool tb_mosaic_lists_file(const tb_mosaic_t *m, int64_t col, int64_t row, const char *suffix)
{
    int64_t k = tb_mosaic_has_tile(m, col, row) ? s_find(m, col, row) : -1;
    char name[TB_TILE_ID_MAX + 32];
    if (k < 0)
        return false;
    snprintf(name, sizeof name, "%s%s", m->tiles[k].id, suffix);
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m->tiles[k].files, name));
}

size_t tb_mosaic_layer_bytes(tb_mosaic_layer_t layer)
{
    return layer == TB_MOSAIC_HEIGHT ? 2 : layer == TB_MOSAIC_SPLAT ? 4 : 1;
}

/* One tile's layer, decoded: t->w * t->h samples of tb_mosaic_layer_bytes(layer) bytes (host
 * order). */
static void *s_load(const tb_mosaic_t *m, const s_tile_t *t, tb_mosaic_layer_t layer, tb_err_t *err)
{
    char path[S_PATH], *data = NULL;
    size_t n, cells = (size_t)(t->w * t->h);
    if (layer == TB_MOSAIC_HEIGHT) {
        if (s_read_checked(m, t, ".r16", &data, &n, path, err) != 0)
            return NULL;
        if (n != 2 * cells) {
            free(data);
            tb_err_set(err, TB_E_FORMAT, "%s: %zu bytes, expected %zu (%lld x %lld samples)", path,
                       n, 2 * cells, (long long)t->w, (long long)t->h);
            return NULL;
        }
        uint16_t *v = tb_malloc(2 * cells, "tile heights", err);
        const unsigned char *b = (const unsigned char *)data;
        for (size_t i = 0; v && i < cells; i++)
            v[i] = (uint16_t)(b[2 * i] | (b[2 * i + 1] << 8));
        free(data);
        return v;
    }
    tb_tile_file_t k = layer == TB_MOSAIC_FLOW    ? TB_TILE_FILE_FLOW
                       : layer == TB_MOSAIC_WEAR  ? TB_TILE_FILE_WEAR
                       : layer == TB_MOSAIC_SPLAT ? TB_TILE_FILE_SPLAT
                                                  : TB_TILE_FILE_DEPOSIT;
    if (s_read_checked(m, t, tb_tile_file_suffix(k), &data, &n, path, err) != 0)
        return NULL;
    tb_image_t img;
    int rc = tb_png_read_mem(data, n, path, layer == TB_MOSAIC_SPLAT ? TB_PNG_RGBA8 : TB_PNG_GRAY8,
                             (uint64_t)cells, &img, err);
    free(data);
    if (rc != 0)
        return NULL;
    if (img.w != (uint32_t)t->w || img.h != (uint32_t)t->h) {
        tb_err_set(err, TB_E_FORMAT, "%s: %u x %u pixels, expected %lld x %lld", path, img.w, img.h,
                   (long long)t->w, (long long)t->h);
        tb_image_free(&img);
        return NULL;
    }
    return img.pixels;
}

int tb_mosaic_stitch(const tb_mosaic_t *m, tb_mosaic_layer_t layer, tb_mosaic_rect_t r,
                     uint16_t fill, void *out, int64_t *filled, tb_err_t *err)
{
    const tb_mosaic_info_t *I = &m->info;
    const int64_t T = I->tile_samples;
    const size_t bps = tb_mosaic_layer_bytes(layer);
    if (r.x0 < 0 || r.x0 >= I->planet_w || r.w < 1 || r.w > I->planet_w || r.y0 < 0 || r.h < 1 ||
        r.y0 + r.h > I->planet_h || r.w * r.h > TB_MOSAIC_MAX_SAMPLES)
        return tb_err_set(err, TB_E_INVALID,
                          "rectangle %lld,%lld %lld x %lld samples is outside the %lld x %lld "
                          "lattice or over %lld samples",
                          (long long)r.x0, (long long)r.y0, (long long)r.w, (long long)r.h,
                          (long long)I->planet_w, (long long)I->planet_h,
                          (long long)TB_MOSAIC_MAX_SAMPLES);
    int64_t n_filled = 0;
    /* tile rows, then runs of columns within one tile (X wraps) */
    for (int64_t y = r.y0; y < r.y0 + r.h;) {
        int64_t row = y / T, ty0 = y - row * T;
        int64_t ny = (row + 1) * T;
        if (ny > r.y0 + r.h)
            ny = r.y0 + r.h;
        for (int64_t ox = 0; ox < r.w;) {
            int64_t gx = (r.x0 + ox) % I->planet_w, col = gx / T, tx0 = gx - col * T;
            int64_t nx = T - tx0;
            if (nx > r.w - ox)
                nx = r.w - ox;
            int64_t k = s_find(m, col, row);
            if (k < 0) {
                for (int64_t yy = y; yy < ny; yy++)
                    for (int64_t i = 0; i < nx; i++) {
                        size_t o = (size_t)((yy - r.y0) * r.w + ox + i);
                        if (bps == 2)
                            ((uint16_t *)out)[o] = fill;
                        else
                            memset((uint8_t *)out + o * bps, (uint8_t)fill, bps);
                    }
                n_filled += (ny - y) * nx;
            } else {
                const s_tile_t *t = &m->tiles[k];
                unsigned char *src = s_load(m, t, layer, err);
                if (!src)
                    return -1;
                for (int64_t yy = y; yy < ny; yy++)
                    memcpy((unsigned char *)out + ((size_t)((yy - r.y0) * r.w + ox)) * bps,
                           src + ((size_t)((ty0 + yy - y) * t->w + tx0)) * bps, (size_t)nx * bps);
                free(src);
            }
            ox += nx;
        }
        y = ny;
    }
    if (filled)
        *filled = n_filled;
    return 0;
}

void tb_mosaic_hillshade(const tb_mosaic_info_t *info, const uint16_t *in, int64_t w, int64_t h,
                         double z_exag, float *out)
{
    const double step = (info->elev_hi - info->elev_lo) / 65535.0 * z_exag;
    const double k = step / (2.0 * info->cell_m);
    /* towards the light: azimuth 315 (north-west; y grows southward), 45 degrees up */
    const double lx = -0.5, ly = -0.5, lz = sqrt(0.5);
    const int64_t W = w + 2;
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            const uint16_t *c = in + (j + 1) * W + (i + 1);
            double dx = ((double)c[1] - (double)c[-1]) * k;
            double dy = ((double)c[W] - (double)c[-W]) * k;
            double s = (-dx * lx - dy * ly + lz) / sqrt(dx * dx + dy * dy + 1.0);
            out[j * w + i] = s > 0 ? (float)s : 0.0f;
        }
}
