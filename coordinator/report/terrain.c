/* The reduced copy of the tiles for the 3D view; see terrain.h. */
#include "coordinator/report/terrain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "common/fs.h"
#include "coordinator/report/html.h"

int64_t tb_terrain_stride(int64_t n, int64_t max)
{
    for (int64_t d = 1; d <= n; d++)
        if (n % d == 0 && n / d <= max)
            return d;
    return n > 0 ? n : 1;
}

static const char s_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Appends base64 of zlib-deflated bytes to h. */
static int s_deflate_b64(tb_html_t *h, const void *data, size_t n, tb_err_t *err)
{
    uLongf cap = compressBound((uLong)n);
    unsigned char *z = malloc(cap);
    if (!z)
        return tb_err_set(err, TB_E_NOMEM, "out of memory deflating %zu bytes", n);
    if (compress2(z, &cap, data, (uLong)n, 6) != Z_OK) {
        free(z);
        return tb_err_set(err, TB_E_INTERNAL, "zlib could not deflate %zu bytes", n);
    }
    char *out = malloc(((size_t)cap + 2) / 3 * 4 + 1);
    if (!out) {
        free(z);
        return tb_err_set(err, TB_E_NOMEM, "out of memory for base64");
    }
    size_t k = 0;
    for (size_t i = 0; i < cap; i += 3) {
        uint32_t v = (uint32_t)z[i] << 16;
        if (i + 1 < cap)
            v |= (uint32_t)z[i + 1] << 8;
        if (i + 2 < cap)
            v |= z[i + 2];
        out[k++] = s_b64[(v >> 18) & 63];
        out[k++] = s_b64[(v >> 12) & 63];
        out[k++] = i + 1 < cap ? s_b64[(v >> 6) & 63] : '=';
        out[k++] = i + 2 < cap ? s_b64[v & 63] : '=';
    }
    out[k] = '\0';
    tb_html_printf(h, "%s", out);
    free(out);
    free(z);
    return 0;
}

/* One level of the copy: the w x hgt blocks of stride x stride samples from interior sample
 * (i0, j0) on, each block's centre sample, heights over [lo, hi]. */
static int s_level(const char *path, const char *id, const char *level, const tb_tile_result_t *r,
                   int64_t i0, int64_t j0, int64_t w, int64_t hgt, int64_t stride, double x0_m,
                   double y0_m, double lo, double hi, tb_err_t *err)
{
    if (w < 2 || hgt < 2)
        return tb_err_set(err, TB_E_INVALID, "tile %s: %lld x %lld samples at stride %lld", id,
                          (long long)w, (long long)hgt, (long long)stride);
    size_t n = (size_t)(w * hgt);
    uint8_t *hb = malloc(n * 2), *sp = malloc(n * 4);
    tb_html_t h = {0};
    int rc = -1;
    if (!hb || !sp) {
        tb_err_set(err, TB_E_NOMEM, "out of memory for tile %s's copy", id);
        goto done;
    }
    double range = hi > lo ? hi - lo : 1;
    for (int64_t j = 0; j < hgt; j++)
        for (int64_t i = 0; i < w; i++) {
            size_t src = (size_t)((j0 + j * stride + stride / 2) * r->interior.w + i0 + i * stride +
                                  stride / 2);
            size_t dst = (size_t)(j * w + i);
            double v = (r->height_m[src] - lo) / range * 65535.0;
            uint16_t q = (uint16_t)fmin(65535, fmax(0, floor(v + 0.5)));
            hb[2 * dst] = (uint8_t)(q & 0xff);
            hb[2 * dst + 1] = (uint8_t)(q >> 8);
            memcpy(sp + 4 * dst, r->splat + 4 * src, 4);
        }
    double spacing = (double)stride * r->interior.cell_m;
    /* the first sample sits at the centre of the first block */
    double offx = ((double)(i0 + stride / 2) + 0.5) * r->interior.cell_m;
    double offy = ((double)(j0 + stride / 2) + 0.5) * r->interior.cell_m;
    tb_html_printf(&h,
                   "tbTerrain({\"id\":\"%s\",\"level\":\"%s\",\"w\":%lld,\"h\":%lld,"
                   "\"spacing_m\":%.17g,\"x0_m\":%.17g,\"y0_m\":%.17g,\"min_m\":%.17g,"
                   "\"max_m\":%.17g,\"heights\":\"",
                   id, level, (long long)w, (long long)hgt, spacing, x0_m + offx, y0_m + offy, lo,
                   hi);
    if (s_deflate_b64(&h, hb, n * 2, err) != 0)
        goto done;
    tb_html_printf(&h, "\",\"splat\":\"");
    if (s_deflate_b64(&h, sp, n * 4, err) != 0)
        goto done;
    tb_html_printf(&h, "\"});\n");
    size_t len;
    char *text = tb_html_take(&h, &len);
    if (!text) {
        tb_err_set(err, TB_E_NOMEM, "out of memory for %s", path);
        goto done;
    }
    rc = tb_fs_write_atomic(path, text, len, err);
    free(text);
done:
    tb_html_free(&h);
    free(hb);
    free(sp);
    return rc;
}

/* Whether the tile's geology cells hold land of the plan's largest landmass. */
static bool s_on_largest(const tb_plan_t *plan, const tb_tile_lattice_t *L, tb_tile_id_t id)
{
    if (!plan)
        return false;
    int n = tb_plan_landmass_count(plan), best = 0;
    int64_t best_cells = 0;
    for (int i = 0; i < n; i++)
        if (tb_plan_landmass(plan, i)->cells > best_cells) {
            best_cells = tb_plan_landmass(plan, i)->cells;
            best = i + 1;
        }
    const tb_raster_t *labels = tb_plan_label_raster(plan);
    if (!best || !labels || !labels->data)
        return false;
    const int32_t *lab = labels->data;
    int64_t tg = L->tile_geo_cells, y0 = id.row * tg;
    int64_t y1 = (id.row + 1) * tg < labels->h ? (id.row + 1) * tg : labels->h;
    bool found = false;
    for (int64_t y = y0; y < y1 && !found; y++)
        for (int64_t x = id.col * tg; x < (id.col + 1) * tg && x < labels->w && !found; x++)
            found = lab[y * labels->w + x] == best;
    tb_raster_release(labels, y0, y1); /* the planet's raster: its rows leave memory again */
    return found;
}

int tb_terrain_write_tile(const char *out_dir, const tb_tile_lattice_t *L, const tb_plan_t *plan,
                          const tb_tile_result_t *r, tb_err_t *err)
{
    char dir[4200], path[4400], id[TB_TILE_ID_MAX];
    tb_tile_id_format(r->id, id);
    if (tb_fs_join(dir, sizeof dir, out_dir, TB_TERRAIN_DIR, err) != 0 ||
        tb_fs_mkdir_inside(dir, err) != 0)
        return -1;
    size_t n = (size_t)(r->interior.w * r->interior.h);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, r->height_m[i]);
        hi = fmax(hi, r->height_m[i]);
    }
    double x0_m, y0_m;
    tb_tile_origin_m(L, r->id, &x0_m, &y0_m);
    int64_t fine = tb_terrain_stride(r->interior.w, TB_TERRAIN_FINE_MAX);
    int64_t coarse = tb_terrain_stride(r->interior.w, TB_TERRAIN_COARSE_MAX);
    if (r->interior.h % fine || r->interior.h % coarse) /* a partial last row: the same strides */
        fine = coarse = tb_terrain_stride(r->interior.w, TB_TERRAIN_FINE_MAX);
    const int64_t W = r->interior.w, H = r->interior.h;
    snprintf(path, sizeof path, "%s/%s.js", dir, id);
    if (s_level(path, id, "fine", r, 0, 0, W / fine, H / fine, fine, x0_m, y0_m, lo, hi, err) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/%s_c.js", dir, id);
    if (s_level(path, id, "coarse", r, 0, 0, W / coarse, H / coarse, coarse, x0_m, y0_m, lo, hi,
                err) != 0)
        return -1;
    /* the walk camera's ground: every 2 m sample of the tile's centre */
    int64_t gw = W < TB_TERRAIN_GROUND_MAX ? W : TB_TERRAIN_GROUND_MAX;
    int64_t gh = H < TB_TERRAIN_GROUND_MAX ? H : TB_TERRAIN_GROUND_MAX;
    snprintf(path, sizeof path, "%s/%s_g.js", dir, id);
    if (s_level(path, id, "ground", r, (W - gw) / 2, (H - gh) / 2, gw, gh, 1, x0_m, y0_m, lo, hi,
                err) != 0)
        return -1;
    /* the tile's mean 2 m slope over its land, from its own histogram (bin centres) */
    double sum = 0, cnt = 0;
    for (int c = 0; c < r->stats.n_classes && c < TB_TILE_MAX_CLASSES; c++)
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++) {
            sum += (double)r->stats.slope_hist[c][k] * (k + 0.5);
            cnt += (double)r->stats.slope_hist[c][k];
        }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddNumberToObject(o, "col", (double)r->id.col);
    cJSON_AddNumberToObject(o, "row", (double)r->id.row);
    cJSON_AddNumberToObject(o, "x0_m", x0_m);
    cJSON_AddNumberToObject(o, "y0_m", y0_m);
    cJSON_AddNumberToObject(o, "size_m", (double)r->interior.w * r->interior.cell_m);
    cJSON_AddNumberToObject(o, "samples", (double)r->interior.w);
    cJSON_AddNumberToObject(o, "fine_stride", (double)fine);
    cJSON_AddNumberToObject(o, "coarse_stride", (double)coarse);
    double ground[2] = {(double)gw, (double)gh};
    cJSON_AddItemToObject(o, "ground", cJSON_CreateDoubleArray(ground, 2));
    cJSON_AddNumberToObject(o, "min_m", lo);
    cJSON_AddNumberToObject(o, "max_m", hi);
    cJSON_AddNumberToObject(
        o, "land_share", r->stats.cells ? (double)r->stats.land_cells / (double)r->stats.cells : 0);
    cJSON_AddNumberToObject(o, "mean_slope_deg", cnt > 0 ? sum / cnt : 0);
    cJSON_AddBoolToObject(o, "largest_landmass", s_on_largest(plan, L, r->id));
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text)
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    snprintf(path, sizeof path, "%s/%s.json", dir, id);
    int rc = tb_fs_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}

cJSON *tb_terrain_index(const char *out_dir)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/tiles/index.json", out_dir);
    char *text = NULL;
    size_t n = 0;
    tb_err_t err;
    if (!tb_fs_exists(path) || tb_fs_read_all(path, (size_t)64 << 20, &text, &n, &err) != 0)
        return NULL;
    cJSON *idx = cJSON_ParseWithLength(text, n);
    free(text);
    cJSON *out = cJSON_CreateObject(), *tiles = cJSON_AddArrayToObject(out, "tiles");
    cJSON *land = cJSON_AddArrayToObject(out, "landmass");
    const char *steep = NULL;
    double steep_slope = -1, most_land = -1;
    const char *most_land_id = NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(idx, "tiles"))
    {
        const char *id = tb_json_str(e, "id", "");
        snprintf(path, sizeof path, "%s/%s/%s.json", out_dir, TB_TERRAIN_DIR, id);
        if (!id[0] || strchr(id, '/') || !tb_fs_exists(path) ||
            tb_fs_read_all(path, 1 << 16, &text, &n, &err) != 0)
            continue;
        cJSON *t = cJSON_ParseWithLength(text, n);
        free(text);
        if (!cJSON_IsObject(t)) {
            cJSON_Delete(t);
            continue;
        }
        cJSON_AddItemToArray(tiles, t);
        const char *tid = tb_json_str(t, "id", "");
        double ls = tb_json_num(t, "land_share"), sl = tb_json_num(t, "mean_slope_deg");
        if (ls >= 0.9 && sl > steep_slope) {
            steep_slope = sl;
            steep = tid;
        }
        if (ls > most_land) {
            most_land = ls;
            most_land_id = tid;
        }
        if (cJSON_IsTrue(cJSON_GetObjectItem(t, "largest_landmass")))
            cJSON_AddItemToArray(land, cJSON_CreateString(tid));
    }
    cJSON_Delete(idx);
    if (cJSON_GetArraySize(tiles) == 0) {
        cJSON_Delete(out);
        return NULL;
    }
    cJSON_AddStringToObject(out, "steepest", steep ? steep : most_land_id);
    cJSON_AddStringToObject(out, "steepest_rule",
                            steep ? "the largest mean 2 m slope among tiles of at least 90 % land"
                                  : "no tile has 90 % land: the tile with the most land");
    return out;
}
