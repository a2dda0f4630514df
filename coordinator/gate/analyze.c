/* `terrain analyze`; see analyze.h. */
#include "common/json.h"
#include "coordinator/gate/analyze.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/png_io.h"
#include "common/version.h"

#define S_MAX_CELLS ((uint64_t)1 << 31) /* the routing's limit (int32 cell indices) */
#define S_MAX_META_BYTES ((size_t)256 << 20)

/* What a bake's meta.json says about its heightmap. */
typedef struct {
    bool present;
    double cell_m, lo_m, hi_m, talus_deg, m, n, mfd_exponent;
    int64_t planet_w;
    bool has_range, has_solve;
} s_meta_t;

static const cJSON *s_get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static bool s_num(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = s_get(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return false;
    *out = v->valuedouble;
    return true;
}

/* Reads dir(path)/meta.json when there is one. Returns 0 (meta->present says whether it was
 * there), or -1 when it exists but is not a bake's meta.json. */
static int s_read_meta(const char *map_path, s_meta_t *meta, char *meta_path, size_t n,
                       tb_err_t *err)
{
    memset(meta, 0, sizeof *meta);
    char dir[4096];
    tb_fs_dirname(dir, sizeof dir, map_path);
    if (tb_fs_join(meta_path, n, dir, "meta.json", err) != 0)
        return -1;
    if (!tb_fs_exists(meta_path)) {
        meta_path[0] = '\0';
        return 0;
    }
    char *text;
    size_t bytes;
    if (tb_fs_read_all(meta_path, S_MAX_META_BYTES, &text, &bytes, err) != 0)
        return -1;
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *man = s_get(root, "manifest");
    const cJSON *range = s_get(man, "elevation_m");
    double planet_w = 0;
    int rc = 0;
    if (!cJSON_IsObject(man) || !s_num(man, "cell_m", &meta->cell_m) || !(meta->cell_m > 0) ||
        !s_num(s_get(man, "derived"), "planet_w", &planet_w)) {
        rc =
            tb_err_set(err, TB_E_FORMAT,
                       "%s: not a bake's meta.json (no manifest with cell_m and derived.planet_w); "
                       "give --no-meta to ignore it",
                       meta_path);
        goto done;
    }
    meta->planet_w = (int64_t)planet_w;
    if (cJSON_IsArray(range) && cJSON_GetArraySize(range) == 2 &&
        cJSON_IsNumber(cJSON_GetArrayItem(range, 0)) &&
        cJSON_IsNumber(cJSON_GetArrayItem(range, 1))) {
        meta->lo_m = cJSON_GetArrayItem(range, 0)->valuedouble;
        meta->hi_m = cJSON_GetArrayItem(range, 1)->valuedouble;
        meta->has_range = meta->lo_m < meta->hi_m;
    }
    const cJSON *solve = s_get(man, "solve");
    meta->has_solve = s_num(solve, "talus_deg", &meta->talus_deg) && s_num(solve, "m", &meta->m) &&
                      s_num(solve, "n", &meta->n) &&
                      s_num(solve, "mfd_exponent", &meta->mfd_exponent);
    meta->present = true;
done:
    cJSON_Delete(root);
    return rc;
}

/* The heights of a 16-bit PNG over [lo, hi]: h = lo + v (hi - lo) / 65535, the inverse of the
 * bake's encoding (coordinator/bake_maps.h). */
static int s_load_png(const char *path, double lo, double hi, tb_analyze_result_t *out,
                      float **heights, tb_err_t *err)
{
    tb_image_t img = {0};
    if (tb_png_read(path, TB_PNG_GRAY16, S_MAX_CELLS - 1, &img, err) != 0)
        return -1;
    size_t cells = (size_t)img.w * img.h;
    float *h = tb_malloc(cells * sizeof(float), "heightmap", err);
    if (!h) {
        tb_image_free(&img);
        return -1;
    }
    const uint16_t *px = img.pixels;
    double scale = (hi - lo) / 65535.0;
    int64_t saturated = 0;
    for (size_t i = 0; i < cells; i++) {
        h[i] = (float)(lo + (double)px[i] * scale);
        saturated += px[i] == 0 || px[i] == 65535;
    }
    out->w = img.w;
    out->h = img.h;
    out->saturated_cells = saturated;
    tb_image_free(&img);
    *heights = h;
    return 0;
}

static int s_load_raw(const char *path, int64_t w, int64_t hgt, float **heights, tb_err_t *err)
{
    /* Divided, not multiplied: 4611686018427387905 x 16 wraps a 64-bit product to 16. */
    if (w <= 0 || hgt <= 0 || (uint64_t)w > (S_MAX_CELLS - 1) / (uint64_t)hgt)
        return tb_err_set(err, TB_E_INVALID,
                          "--raw-float32 %lldx%lld: expected a size of 3 .. 2^31 "
                          "cells",
                          (long long)w, (long long)hgt);
    uint64_t cells = (uint64_t)w * (uint64_t)hgt;
    char *data;
    size_t bytes;
    if (tb_fs_read_all(path, (size_t)cells * 4 + 1, &data, &bytes, err) != 0)
        return -1;
    if (bytes != (size_t)cells * 4) {
        free(data);
        return tb_err_set(err, TB_E_FORMAT,
                          "%s: %zu bytes, but --raw-float32 %lldx%lld needs "
                          "exactly %llu (4 bytes a cell)",
                          path, bytes, (long long)w, (long long)hgt,
                          (unsigned long long)(cells * 4));
    }
    float *h = tb_malloc((size_t)cells * sizeof(float), "heightmap", err);
    if (!h) {
        free(data);
        return -1;
    }
    const unsigned char *b = (const unsigned char *)data;
    size_t finite = 0;
    for (size_t i = 0; i < (size_t)cells; i++) {
        uint32_t u = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
                     (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
        memcpy(&h[i], &u, sizeof u);
        finite += isfinite(h[i]);
        /* NaN and infinity are no data; a finite height beyond the statistics' limit is refused
         * here, naming the file and the cell, rather than deep in the statistics. */
        if (isfinite(h[i]) && !(fabsf(h[i]) <= TB_STATS_HEIGHT_LIMIT_M)) {
            double v = (double)h[i];
            free(data);
            free(h);
            return tb_err_set(err, TB_E_INVALID,
                              "%s: height %g m at cell (%lld, %lld): expected heights within "
                              "+-%g m (NaN and infinity are read as no data)",
                              path, v, (long long)(i % (size_t)w), (long long)(i / (size_t)w),
                              (double)TB_STATS_HEIGHT_LIMIT_M);
        }
    }
    free(data);
    if (finite == 0) {
        free(h);
        return tb_err_set(err, TB_E_INVALID,
                          "%s: no finite height in its %llu cells (all NaN or infinite); nothing "
                          "to analyse",
                          path, (unsigned long long)cells);
    }
    *heights = h;
    return 0;
}

static bool s_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Writes summary.txt and analyze.json. */
static int s_write(const tb_analyze_opts_t *o, const tb_analyze_result_t *r, tb_err_t *err)
{
    if (tb_fs_mkdir_p(o->out_dir, err) != 0)
        return -1;
    char path[4200];
    if (tb_fs_join(path, sizeof path, o->out_dir, "summary.txt", err) != 0 ||
        tb_fs_write_atomic(path, r->text, strlen(r->text), err) != 0)
        return -1;
    cJSON *root = cJSON_CreateObject();
    cJSON *tool = cJSON_AddObjectToObject(root, "tool");
    cJSON_AddStringToObject(tool, "version", tb_version());
    cJSON_AddStringToObject(tool, "build_id", tb_build_id());
    cJSON *in = cJSON_AddObjectToObject(root, "input");
    cJSON_AddStringToObject(in, "path", o->path);
    cJSON_AddStringToObject(in, "format", r->from_png ? "png16" : "raw_float32_le");
    cJSON_AddNumberToObject(in, "width", (double)r->w);
    cJSON_AddNumberToObject(in, "height", (double)r->h);
    cJSON_AddNumberToObject(in, "cell_m", r->cell_m);
    cJSON_AddNumberToObject(in, "sea_level_m", r->sea_level_m);
    cJSON_AddNumberToObject(in, "mfd_exponent", r->mfd_exponent);
    cJSON_AddBoolToObject(in, "wraps_x", r->wraps);
    cJSON_AddNumberToObject(in, "uncounted_border_cells", (double)r->border_cells);
    cJSON_AddStringToObject(in, "border", o->border_sea ? "sea" : "open");
    if (r->meta_path[0])
        cJSON_AddStringToObject(in, "meta_json", r->meta_path);
    cJSON_AddNumberToObject(in, "sea_cells", (double)r->sea_cells);
    cJSON_AddNumberToObject(in, "not_finite_cells", (double)r->not_finite_cells);
    if (r->from_png)
        cJSON_AddNumberToObject(in, "saturated_cells", (double)r->saturated_cells);
    cJSON *route = cJSON_AddObjectToObject(root, "routing");
    cJSON_AddNumberToObject(route, "land_cells", (double)r->route.land_cells);
    cJSON_AddNumberToObject(route, "pits", (double)r->route.pits);
    cJSON_AddNumberToObject(route, "flooded_cells", (double)r->route.flooded_cells);
    cJSON *st = tb_stats_report_json(r->stats, &r->extent, NULL);
    cJSON_AddItemToObject(root, "statistics", st ? st : cJSON_CreateNull());
    char *text = tb_json_print(root, true);
    cJSON_Delete(root);
    int rc = -1;
    if (!text)
        tb_err_set(err, TB_E_NOMEM, "analyze: out of memory printing analyze.json");
    else if (tb_fs_join(path, sizeof path, o->out_dir, "analyze.json", err) == 0)
        rc = tb_fs_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}

void tb_analyze_result_free(tb_analyze_result_t *r)
{
    if (!r)
        return;
    tb_stats_destroy(&r->stats);
    free(r->text);
    r->text = NULL;
}

int tb_analyze_run(const tb_analyze_opts_t *o, tb_analyze_result_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    float *h = NULL, *area = NULL;
    uint8_t *mask = NULL;
    char *block = NULL;
    int rc = -1;
    if (!o->path)
        return tb_err_set(err, TB_E_INVALID, "analyze: no heightmap given");
    if (o->has_sea_level && !isfinite(o->sea_level_m))
        return tb_err_set(err, TB_E_INVALID, "--sea-level %g: expected a finite height",
                          o->sea_level_m);
    if (o->has_elevation && !(isfinite(o->elevation_lo_m) && isfinite(o->elevation_hi_m) &&
                              o->elevation_lo_m < o->elevation_hi_m))
        return tb_err_set(err, TB_E_INVALID, "--elevation-m %g,%g: expected LO,HI with LO < HI",
                          o->elevation_lo_m, o->elevation_hi_m);
    s_meta_t meta = {0};
    if (!o->ignore_meta &&
        s_read_meta(o->path, &meta, out->meta_path, sizeof out->meta_path, err) != 0)
        return -1;
    /* the cell size: an option, or meta.json's; never two that disagree */
    out->cell_m = o->cell_m > 0 ? o->cell_m : meta.cell_m;
    if (!(out->cell_m > 0) || !isfinite(out->cell_m))
        return tb_err_set(err, TB_E_INVALID,
                          "analyze %s: give --cell-m (the size of one cell in "
                          "metres; no meta.json beside the map says it)",
                          o->path);
    if (meta.present && o->cell_m > 0 && fabs(o->cell_m - meta.cell_m) > 1e-9 * meta.cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "--cell-m %g disagrees with %s (cell_m %g); every slope "
                          "would be wrong by their ratio",
                          o->cell_m, out->meta_path, meta.cell_m);
    out->sea_level_m = o->has_sea_level ? o->sea_level_m : 0;
    out->mfd_exponent = o->has_mfd_exponent ? o->mfd_exponent
                        : meta.has_solve    ? meta.mfd_exponent
                                            : 1.0;
    double lo = 0, hi = 0;
    bool has_range = o->has_elevation || meta.has_range;
    if (has_range) {
        lo = o->has_elevation ? o->elevation_lo_m : meta.lo_m;
        hi = o->has_elevation ? o->elevation_hi_m : meta.hi_m;
    }
    if (o->raw_w > 0 || o->raw_h > 0) {
        if (s_load_raw(o->path, o->raw_w, o->raw_h, &h, err) != 0)
            return -1;
        out->w = o->raw_w;
        out->h = o->raw_h;
    } else {
        if (!s_has_suffix(o->path, ".png") && !s_has_suffix(o->path, ".PNG"))
            return tb_err_set(err, TB_E_INVALID,
                              "analyze %s: not a .png; give --raw-float32 WxH "
                              "for raw float32 little-endian heights",
                              o->path);
        if (!has_range)
            return tb_err_set(err, TB_E_INVALID,
                              "analyze %s: a 16-bit PNG holds no elevations, only "
                              "0..65535: give --elevation-m LO,HI (the heights of 0 and 65535), or "
                              "keep the bake's meta.json beside it",
                              o->path);
        if (s_load_png(o->path, lo, hi, out, &h, err) != 0)
            return -1;
        out->from_png = true;
    }
    size_t cells = (size_t)out->w * (size_t)out->h;
    if (out->w < 3 || out->h < 3 || cells >= S_MAX_CELLS) {
        tb_err_set(err, TB_E_INVALID,
                   "analyze %s: %lld x %lld cells; expected at least 3 x 3 and "
                   "under 2^31",
                   o->path, (long long)out->w, (long long)out->h);
        goto done;
    }
    /* A bake's planet_height.png is the whole circumference: X wraps. A DEM's edges do not. */
    out->wraps = meta.present && meta.planet_w == out->w;
    /* The extent of the map's own heights (over the PNG's range; for raw, --elevation-m or its
     * own extremes); PNG samples at either end of the range may have been clipped. */
    {
        double elo = has_range ? lo : INFINITY, ehi = has_range ? hi : -INFINITY;
        if (!has_range)
            for (size_t i = 0; i < cells; i++)
                if (isfinite(h[i])) {
                    elo = fmin(elo, h[i]);
                    ehi = fmax(ehi, h[i]);
                }
        if (!(elo < ehi)) { /* flat or empty: any range that holds it */
            elo = isfinite(elo) ? elo - 1 : -1;
            ehi = elo + 2;
        }
        if (tb_stats_extent_measure(h, cells, elo, ehi, &out->extent, err) != 0) {
            tb_err_prefix(err, "analyze %s", o->path);
            goto done;
        }
        if (out->from_png)
            out->extent.clipped = out->saturated_cells;
    }
    /* Heights above the sea level; the sea (and what is not a number) at 0 m. */
    for (size_t i = 0; i < cells; i++) {
        bool finite = isfinite(h[i]);
        float z = finite ? (float)((double)h[i] - out->sea_level_m) : 0.0f;
        out->not_finite_cells += !finite;
        out->sea_cells += !(z > 0);
        h[i] = z > 0 ? z : 0.0f;
    }
    tb_frame_t box;
    /* A map that does not wrap sits in a lattice one column wider than itself, so no column of it
     * neighbours another; its Y edges are the lattice's. */
    if (tb_frame_make(&box, out->wraps ? out->w : out->w + 1, out->h, out->cell_m, 0, 0, out->w,
                      out->h, err) != 0)
        goto done;
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, out->cell_m);
    if (meta.has_solve) {
        sp.talus_deg = meta.talus_deg;
        sp.m = meta.m;
        sp.n = meta.n;
    }
    if (o->has_fit_min_area)
        sp.fit_min_area_m2 = o->fit_min_area_m2;
    if (o->has_channel_min_area)
        sp.channel_fit_min_area_m2 = o->channel_min_area_m2;
    out->stats = tb_stats_new(&sp, err);
    area = tb_malloc(cells * sizeof(float), "drainage area", err);
    mask = tb_malloc(cells, "count mask", err);
    if (!out->stats || !area || !mask)
        goto done;
    if (tb_stats_route_area_border(&box, h, out->mfd_exponent,
                                   o->border_sea ? TB_ROUTE_BORDER_SEA : TB_ROUTE_BORDER_OPEN, area,
                                   &out->route, err) != 0) {
        tb_err_prefix(err, "analyze %s", o->path);
        goto done;
    }
    /* The count mask: everything but a border as wide as the statistics halo (a map that does not
     * wrap), or the first and last rows (one that does: they are the routing's fixed ring). */
    int64_t r = out->wraps ? 0 : tb_stats_halo_cells(&sp);
    int64_t ry = out->wraps ? 1 : r;
    out->border_cells = r;
    for (int64_t j = 0; j < out->h; j++)
        for (int64_t i = 0; i < out->w; i++)
            mask[tb_idx(out->w, i, j)] =
                j >= ry && j < out->h - ry && (out->wraps || (i >= r && i < out->w - r));
    if (tb_stats_accumulate(out->stats, &box, h, area, NULL, mask, err) != 0) {
        tb_err_prefix(err, "analyze %s", o->path);
        goto done;
    }
    block = tb_stats_report_text(out->stats, &out->extent, NULL);
    if (!block) {
        tb_err_set(err, TB_E_NOMEM, "analyze: out of memory printing the block");
        goto done;
    }
    {
        char head[5200], border[160];
        if (out->wraps)
            snprintf(border, sizeof border, "X wraps (a bake's whole planet, per meta.json)");
        else
            snprintf(border, sizeof border,
                     "X does not wrap: a border of %lld cells (%.0f m) is routed but not counted",
                     (long long)r, (double)r * out->cell_m);
        int n =
            snprintf(head, sizeof head,
                     "terrain analyze %s: %lld x %lld cells of %g m, sea level %g m (%lld sea "
                     "cells), %s exponent %g, %s border; %s%s%s\n",
                     o->path, (long long)out->w, (long long)out->h, out->cell_m, out->sea_level_m,
                     (long long)out->sea_cells, out->mfd_exponent > 0 ? "MFD" : "D8",
                     out->mfd_exponent, o->border_sea ? "sea (0 m)" : "open", border,
                     out->meta_path[0] ? "; read " : "", out->meta_path);
        size_t len = (size_t)n + strlen(block) + 1;
        out->text = malloc(len);
        if (!out->text) {
            tb_err_set(err, TB_E_NOMEM, "analyze: out of memory");
            goto done;
        }
        snprintf(out->text, len, "%s%s", head, block);
    }
    if (o->out_dir && s_write(o, out, err) != 0)
        goto done;
    rc = 0;
done:
    free(block);
    free(h);
    free(area);
    free(mask);
    return rc;
}
