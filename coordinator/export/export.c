/* The export run: check what the area needs, the range (pass 1), then the files tile by tile
 * (pass 2) and the import sheet; see export.h and docs/export.md. */
#include "coordinator/export/export.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/log.h"
#include "coordinator/export/geotiff.h"
#include "coordinator/export/sheet.h"
#include "coordinator/export/source.h"
#include "coordinator/export/writers.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/tile_files.h"

#define S_PATH 4200
#define S_LIST 8 /* tiles named in a refusal */

/* The weight layers, in the splat map's channel order (docs/tiles.md, "Splat rules"). */
static const char *const s_layers[4] = {"rock", "grass", "sediment", "scree_snow"};

typedef struct {
    const tb_export_opts_t *o;
    const tb_export_preset_t *p;
    tb_mosaic_t *m;
    tb_mosaic_info_t info;
    tb_export_grid_t g;
    tb_export_scale_t sc;
    tb_export_source_t *src;
    tb_export_report_t *rep;
    cJSON *files; /* the sheet's list of files */
    const char *base;
    const char *bake_dir;
} s_run_t;

/* Whether lattice column gx (0..P-1) is one the grid covers. */
static bool s_covered_col(const s_run_t *r, int64_t gx)
{
    int64_t P = r->info.planet_w, d = ((gx - r->g.x0) % P + P) % P;
    return r->g.covered_w >= P || d < r->g.covered_w;
}

/* The bake tiles the grid touches: refuses (before anything is written) unbaked ones unless
 * asked to fill them, and tiles without float heights. */
static int s_check_tiles(s_run_t *r, tb_err_t *err)
{
    const int64_t T = r->info.tile_samples;
    char unbaked[S_LIST * 12 + 1] = "", nofloat[S_LIST * 12 + 1] = "";
    int64_t n_unbaked = 0, n_nofloat = 0;
    for (int64_t row = r->g.y0 / T; row <= (r->g.y0 + r->g.covered_h - 1) / T; row++)
        for (int64_t col = 0; col < r->info.cols; col++) {
            bool touched = false;
            for (int64_t gx = col * T; gx < (col + 1) * T && !touched; gx++)
                touched = s_covered_col(r, gx);
            if (!touched)
                continue;
            char id[TB_TILE_ID_MAX];
            tb_tile_id_format((tb_tile_id_t){col, row}, id);
            if (!tb_mosaic_has_tile(r->m, col, row)) {
                if (n_unbaked++ < S_LIST)
                    snprintf(unbaked + strlen(unbaked), sizeof unbaked - strlen(unbaked), "%s%s",
                             n_unbaked > 1 ? "," : "", id);
            } else if (!tb_mosaic_lists_file(r->m, col, row, TB_TILE_F32Z_SUFFIX)) {
                if (n_nofloat++ < S_LIST)
                    snprintf(nofloat + strlen(nofloat), sizeof nofloat - strlen(nofloat), "%s%s",
                             n_nofloat > 1 ? "," : "", id);
            }
        }
    if (n_nofloat)
        return tb_err_set(err, TB_E_INVALID,
                          "%s/tiles/index.json lists no float heights (%s) for tile(s) %s%s (%lld "
                          "in all): the bake predates them; `terrain tiles %s --only %s` rewrites "
                          "those tiles with them",
                          r->bake_dir, TB_TILE_F32Z_SUFFIX, nofloat,
                          n_nofloat > S_LIST ? ",..." : "", (long long)n_nofloat, r->bake_dir,
                          nofloat);
    if (n_unbaked && !r->o->fill_unbaked)
        return tb_err_set(
            err, TB_E_INVALID,
            "the export needs tile(s) %s%s (%lld in all), which the bake did not make "
            "(only land and coast tiles are baked); choose an area of baked tiles, or "
            "--fill-unbaked METRES to fill them with a constant height",
            unbaked, n_unbaked > S_LIST ? ",..." : "", (long long)n_unbaked);
    return 0;
}

/* Pass 1: the least and greatest height the grid covers, reading each bake tile once. */
static int s_range(s_run_t *r, tb_err_t *err)
{
    const int64_t T = r->info.tile_samples;
    double lo = INFINITY, hi = -INFINITY;
    float *row = tb_malloc(sizeof *row * (size_t)T, "a row of heights", err);
    if (!row)
        return -1;
    int64_t y_end = r->g.y0 + r->g.covered_h;
    for (int64_t trow = r->g.y0 / T; trow <= (y_end - 1) / T; trow++)
        for (int64_t col = 0; col < r->info.cols; col++) {
            int64_t c0 = -1, c1 = -1; /* the covered columns of this tile, as one span */
            for (int64_t k = 0; k < T; k++)
                if (s_covered_col(r, col * T + k)) {
                    c0 = c0 < 0 ? k : c0;
                    c1 = k;
                }
            if (c0 < 0)
                continue;
            int64_t ya = trow * T > r->g.y0 ? trow * T : r->g.y0;
            int64_t yb = (trow + 1) * T < y_end ? (trow + 1) * T : y_end;
            for (int64_t y = ya; y < yb; y++) {
                if (tb_export_source_heights(r->src, col * T, y, T, row, err) != 0) {
                    free(row);
                    return -1;
                }
                for (int64_t k = c0; k <= c1; k++)
                    if (s_covered_col(r, col * T + k)) {
                        lo = row[k] < lo ? row[k] : lo;
                        hi = row[k] > hi ? row[k] : hi;
                    }
            }
        }
    free(row);
    if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi))
        return tb_err_set(err, TB_E_FORMAT, "the exported heights are not finite (%g .. %g)", lo,
                          hi);
    r->rep->min_m = lo;
    r->rep->max_m = hi;
    r->sc = tb_export_scale_of(lo, hi);
    return 0;
}

/* Records a written file in the sheet. */
static void s_file(s_run_t *r, const char *name, const char *what, int64_t i, int64_t j, uint64_t h)
{
    cJSON *f = cJSON_CreateObject();
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cJSON_AddStringToObject(f, "name", name);
    cJSON_AddStringToObject(f, "what", what);
    cJSON_AddItemToObject(f, "tile", cJSON_CreateIntArray((const int[]){(int)i, (int)j}, 2));
    cJSON_AddStringToObject(f, "xxh3", hex);
    cJSON_AddItemToArray(r->files, f);
    r->rep->files_written++;
}

static tb_export_file_t *s_open(s_run_t *r, const char *name, tb_export_file_kind_t kind, int64_t w,
                                int64_t h, size_t bps, tb_err_t *err)
{
    char path[S_PATH];
    if (tb_fs_join(path, sizeof path, r->o->out_dir, name, err) != 0)
        return NULL;
    return tb_export_file_open(path, kind, w, h, bps, err);
}

static int s_close(s_run_t *r, tb_export_file_t **f, const char *name, const char *what, int64_t i,
                   int64_t j, tb_err_t *err)
{
    uint64_t h = 0;
    if (tb_export_file_close(f, &h, err) != 0)
        return -1;
    s_file(r, name, what, i, j, h);
    return 0;
}

/* The ENVI header GDAL and GIS tools read a raw float32 file by. */
static int s_envi_header(s_run_t *r, const char *name, int64_t n, tb_err_t *err)
{
    char path[S_PATH], text[512];
    if (tb_fs_join(path, sizeof path, r->o->out_dir, name, err) != 0)
        return -1;
    int len = snprintf(text, sizeof text,
                       "ENVI\ndescription = {terrain-bake export: heights in metres}\n"
                       "samples = %lld\nlines = %lld\nbands = 1\nheader offset = 0\n"
                       "file type = ENVI Standard\ndata type = 4\ninterleave = bsq\n"
                       "byte order = 0\n",
                       (long long)n, (long long)n);
    return tb_fs_write_atomic(path, text, (size_t)len, err);
}

/* The samples of a tile row, equal to all four neighbours, counted on the 16-bit values and on
 * the floats: cur is the middle of three rows (prev, next may be NULL at the tile's edges). */
static void s_terraces(s_run_t *r, const float *hf, const uint16_t *prev_u, const uint16_t *cur_u,
                       const uint16_t *next_u, const float *prev_f, const float *next_f, int64_t n)
{
    if (!prev_u || !next_u)
        return;
    for (int64_t i = 1; i < n - 1; i++) {
        if (!(hf[i] > 0))
            continue;
        r->rep->land_samples++;
        uint16_t v = cur_u[i];
        r->rep->terraced_u16 +=
            cur_u[i - 1] == v && cur_u[i + 1] == v && prev_u[i] == v && next_u[i] == v;
        r->rep->terraced_float +=
            hf[i - 1] == hf[i] && hf[i + 1] == hf[i] && prev_f[i] == hf[i] && next_f[i] == hf[i];
    }
}

/* The heights of tile (i, j): the 16-bit file in the engine's row order, and the float file. */
static int s_heights(s_run_t *r, int64_t i, int64_t j, tb_err_t *err)
{
    const int64_t n = r->g.size, x = r->g.x0 + i * r->g.stride, y = r->g.y0 + j * r->g.stride;
    const bool want_f32 = r->o->float_heights || r->o->engine == TB_EXPORT_RAW;
    char name[S_PATH], fname[S_PATH], hname[S_PATH];
    tb_export_tile_name(r->p, &r->g, r->base, "", i, j, r->p->height_ext, name, sizeof name);
    tb_export_tile_name(r->p, &r->g, r->base, "", i, j, ".f32", fname, sizeof fname);
    tb_export_tile_name(r->p, &r->g, r->base, "", i, j, ".hdr", hname, sizeof hname);
    bool png = strcmp(r->p->height_ext, ".png") == 0;
    tb_export_file_t *fu =
        s_open(r, name, png ? TB_EXPORT_FILE_PNG_GRAY16 : TB_EXPORT_FILE_RAW, n, n, 2, err);
    tb_export_file_t *ff =
        want_f32 && fu ? s_open(r, fname, TB_EXPORT_FILE_RAW, n, n, 4, err) : NULL;
    /* three rows of each, rolling, for the terrace count */
    float *hf = tb_malloc(sizeof(float) * (size_t)n * 3, "export rows", err);
    uint16_t *hu = tb_malloc(sizeof(uint16_t) * (size_t)n * 3, "export rows", err);
    unsigned char *le = tb_malloc(4 * (size_t)n, "export rows", err);
    int rc = -1;
    if (!fu || (want_f32 && !ff) || !hf || !hu || !le)
        goto done;
    for (int64_t k = 0; k < n; k++) {
        int64_t row = r->p->south_first ? n - 1 - k : k; /* the file's k-th row */
        float *f = hf + (size_t)(k % 3) * (size_t)n;
        uint16_t *u = hu + (size_t)(k % 3) * (size_t)n;
        if (tb_export_source_heights(r->src, x, y + row, n, f, err) != 0)
            goto done;
        for (int64_t s = 0; s < n; s++)
            u[s] = tb_export_encode(&r->sc, f[s]);
        if (k >= 2) /* the row before this one now has both neighbours */
            s_terraces(r, hf + (size_t)((k - 1) % 3) * (size_t)n,
                       hu + (size_t)((k - 2) % 3) * (size_t)n,
                       hu + (size_t)((k - 1) % 3) * (size_t)n, u,
                       hf + (size_t)((k - 2) % 3) * (size_t)n, f, n);
        if (png) {
            if (tb_export_file_row(fu, u, err) != 0)
                goto done;
        } else {
            for (int64_t s = 0; s < n; s++) {
                le[2 * s] = (unsigned char)(u[s] & 0xff);
                le[2 * s + 1] = (unsigned char)(u[s] >> 8);
            }
            if (tb_export_file_row(fu, le, err) != 0)
                goto done;
        }
        if (ff) {
            for (int64_t s = 0; s < n; s++) {
                uint32_t b;
                memcpy(&b, &f[s], 4);
                for (int q = 0; q < 4; q++)
                    le[4 * s + q] = (unsigned char)(b >> (8 * q));
            }
            if (tb_export_file_row(ff, le, err) != 0)
                goto done;
        }
    }
    if (s_close(r, &fu, name, "heights, 16-bit", i, j, err) != 0 ||
        (ff && (s_close(r, &ff, fname, "heights, float32 metres", i, j, err) != 0 ||
                s_envi_header(r, hname, n, err) != 0)))
        goto done;
    rc = 0;
done:
    tb_export_file_abort(&fu);
    tb_export_file_abort(&ff);
    free(hf);
    free(hu);
    free(le);
    return rc;
}

/* The GeoTIFF of tile (i, j): float32 metres, north row first whatever the engine's own order,
 * placed in the local metric frame (geotiff.h): model X = world x, unwrapped past the seam, model
 * Y = - world y; the tie point is the north-west corner of the first sample's square. */
static int s_geotiff(s_run_t *r, int64_t i, int64_t j, tb_err_t *err)
{
    const int64_t n = r->g.size, x = r->g.x0 + i * r->g.stride, y = r->g.y0 + j * r->g.stride;
    const double c = r->info.cell_m;
    char name[S_PATH], path[S_PATH];
    tb_export_tile_name(r->p, &r->g, r->base, "", i, j, ".tif", name, sizeof name);
    if (tb_fs_join(path, sizeof path, r->o->out_dir, name, err) != 0)
        return -1;
    tb_export_geo_t geo = {.west_m = (double)x * c,
                           .north_m = -(double)y * c,
                           .cell_m = c,
                           .citation = r->rep->citation};
    float *row = tb_malloc(sizeof *row * (size_t)n, "a GeoTIFF row", err);
    tb_export_geotiff_t *f = row ? tb_export_geotiff_open(path, n, n, &geo, err) : NULL;
    uint64_t h = 0;
    int rc = -1;
    if (!f)
        goto done;
    for (int64_t k = 0; k < n; k++)
        if (tb_export_source_heights(r->src, x, y + k, n, row, err) != 0 ||
            tb_export_geotiff_row(f, row, err) != 0)
            goto done;
    if (tb_export_geotiff_close(&f, &h, err) != 0)
        goto done;
    s_file(r, name, "heights, float32 GeoTIFF metres", i, j, h);
    rc = 0;
done:
    tb_export_geotiff_abort(&f);
    free(row);
    return rc;
}

/* The GeoTIFFs' citation: the planet (seed, circumference) and the build, from bake_dir/meta.json,
 * a file of the bake and so checked like any input. */
static int s_citation(s_run_t *r, tb_err_t *err)
{
    char path[S_PATH], *text = NULL;
    size_t len;
    if (tb_fs_join(path, sizeof path, r->bake_dir, "meta.json", err) != 0 ||
        tb_fs_read_all(path, (size_t)1 << 24, &text, &len, err) != 0)
        return -1;
    cJSON *meta = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(meta, "manifest");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(m, "seed");
    const cJSON *km = cJSON_GetObjectItemCaseSensitive(m, "circumference_km");
    const cJSON *build = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(meta, "tool"), "build_id");
    const char *bad = !meta                   ? "valid JSON"
                      : !cJSON_IsNumber(seed) ? "a number at manifest.seed"
                      : !cJSON_IsNumber(km)   ? "a number at manifest.circumference_km"
                      : !cJSON_IsString(build) || strchr(build->valuestring, '|')
                          ? "a string without '|' at tool.build_id"
                          : NULL;
    if (!bad)
        snprintf(r->rep->citation, sizeof r->rep->citation,
                 "terrain-bake planet, seed %.0f, %g km round, build %.60s; local frame: x metres "
                 "east of the seam x = 0, y metres north of the north edge (negative southward), "
                 "heights metres above sea level",
                 seed->valuedouble, km->valuedouble, build->valuestring);
    cJSON_Delete(meta);
    return bad ? tb_err_set(err, TB_E_FORMAT,
                            "%s: expected %s (the GeoTIFFs' citation names the planet)", path, bad)
               : 0;
}

/* Rounds four weights summing to 1 to bytes summing to exactly 255: floors, then the rest to the
 * largest remainders, ties to the lower channel (as the splat rules round, jobs/detail/splat.c). */
static void s_round_weights(const double w[4], uint8_t out[4])
{
    double frac[4];
    int sum = 0;
    for (int c = 0; c < 4; c++) {
        double v = w[c] * 255.0, f = floor(v);
        out[c] = (uint8_t)f;
        frac[c] = v - f;
        sum += out[c];
    }
    for (; sum < 255; sum++) {
        int best = 0;
        for (int c = 1; c < 4; c++)
            if (frac[c] > frac[best])
                best = c;
        out[best]++;
        frac[best] = -1;
    }
}

/* The weights of tile (i, j): one 8-bit PNG per layer, or one RGBA PNG, north row first; Unity's
 * splatmap is texel-aligned at size - 1 texels, bilinear from the samples. */
static int s_weights(s_run_t *r, int64_t i, int64_t j, tb_err_t *err)
{
    const int64_t n = r->g.size, x = r->g.x0 + i * r->g.stride, y = r->g.y0 + j * r->g.stride;
    const bool per_layer = r->p->layer_per_file, resample = r->p->splat_resampled;
    const int64_t tex = resample ? n - 1 : n;
    tb_export_file_t *f[4] = {NULL};
    char names[4][S_PATH];
    uint8_t *a = tb_malloc(4 * (size_t)n, "splat rows", err);
    uint8_t *b = tb_malloc(4 * (size_t)n, "splat rows", err);
    uint8_t *o = tb_malloc(4 * (size_t)tex, "splat rows", err);
    uint8_t *l = tb_malloc((size_t)tex, "splat rows", err);
    int rc = -1, nf = per_layer ? 4 : 1;
    if (!a || !b || !o || !l)
        goto done;
    for (int c = 0; c < nf; c++) {
        char layer[32];
        snprintf(layer, sizeof layer, "_%s", per_layer ? s_layers[c] : "splat");
        tb_export_tile_name(r->p, &r->g, r->base, layer, i, j, ".png", names[c], sizeof names[c]);
        f[c] = s_open(r, names[c], per_layer ? TB_EXPORT_FILE_PNG_GRAY8 : TB_EXPORT_FILE_PNG_RGBA8,
                      tex, tex, 0, err);
        if (!f[c])
            goto done;
    }
    int64_t have = -1; /* the sample row in a (b holds have + 1) */
    for (int64_t t = 0; t < tex; t++) {
        if (!resample) {
            if (tb_export_source_splat(r->src, x, y + t, n, a, err) != 0)
                goto done;
            memcpy(o, a, 4 * (size_t)n);
        } else {
            /* texel t sits at sample t (n - 1) / (tex - 1): Unity's splat texel centres reach the
             * terrain's edges */
            double py = (double)t * (double)(n - 1) / (double)(tex - 1);
            int64_t y0 = (int64_t)floor(py);
            y0 = y0 > n - 2 ? n - 2 : y0;
            double fy = py - (double)y0;
            if (have != y0) {
                if (tb_export_source_splat(r->src, x, y + y0, n, a, err) != 0 ||
                    tb_export_source_splat(r->src, x, y + y0 + 1, n, b, err) != 0)
                    goto done;
                have = y0;
            }
            for (int64_t s = 0; s < tex; s++) {
                double px = (double)s * (double)(n - 1) / (double)(tex - 1);
                int64_t x0 = (int64_t)floor(px);
                x0 = x0 > n - 2 ? n - 2 : x0;
                double fx = px - (double)x0, w[4];
                for (int c = 0; c < 4; c++)
                    w[c] =
                        ((1 - fx) * (1 - fy) * a[4 * x0 + c] + fx * (1 - fy) * a[4 * x0 + 4 + c] +
                         (1 - fx) * fy * b[4 * x0 + c] + fx * fy * b[4 * x0 + 4 + c]) /
                        255.0;
                s_round_weights(w, o + 4 * s);
            }
        }
        if (per_layer) {
            for (int c = 0; c < 4; c++) {
                for (int64_t s = 0; s < tex; s++)
                    l[s] = o[4 * s + c];
                if (tb_export_file_row(f[c], l, err) != 0)
                    goto done;
            }
        } else if (tb_export_file_row(f[0], o, err) != 0) {
            goto done;
        }
    }
    for (int c = 0; c < nf; c++)
        if (s_close(r, &f[c], names[c], per_layer ? s_layers[c] : "splat, RGBA", i, j, err) != 0)
            goto done;
    rc = 0;
done:
    for (int c = 0; c < 4; c++)
        tb_export_file_abort(&f[c]);
    free(a);
    free(b);
    free(o);
    free(l);
    return rc;
}

int tb_export_run(const char *bake_dir, const tb_export_opts_t *o, tb_export_report_t *rep,
                  tb_err_t *err)
{
    double t0 = tb_now_s();
    *rep = (tb_export_report_t){0};
    s_run_t r = {.o = o, .p = tb_export_preset(o->engine), .rep = rep, .bake_dir = bake_dir};
    r.base = o->name ? o->name : "terrain";
    int rc = -1;
    if (!r.p)
        return tb_err_set(err, TB_E_INVALID, "export: no engine %d", (int)o->engine);
    if (tb_mosaic_open(bake_dir, &r.m, err) != 0)
        return -1;
    tb_mosaic_info(r.m, &r.info);
    if (tb_export_grid_make(&r.info, r.p, o->area, o->tile_samples, &r.g, err) != 0 ||
        tb_export_sheet_check(o->engine, &r.g, err) != 0 || s_check_tiles(&r, err) != 0 ||
        (o->geotiff && s_citation(&r, err) != 0))
        goto done;
    rep->grid = r.g;
    /* the bake tiles one exported tile row spans, and one more to move on with */
    int capacity = (int)((r.g.size + r.info.tile_samples - 1) / r.info.tile_samples) + 2;
    r.src = tb_export_source_new(r.m, capacity, o->fill_m, err);
    r.files = cJSON_CreateArray();
    if (!r.src || !r.files || tb_fs_mkdir_p(o->out_dir, err) != 0)
        goto done;
    if (!o->quiet)
        tb_log_info("%s, %lld x %lld tiles of %lld samples (%.0f x %.0f m) from sample "
                    "(%lld, %lld)%s",
                    r.p->name, (long long)r.g.nx, (long long)r.g.ny, (long long)r.g.size,
                    (double)(r.g.covered_w - 1) * r.info.cell_m,
                    (double)(r.g.covered_h - 1) * r.info.cell_m, (long long)r.g.x0,
                    (long long)r.g.y0,
                    r.g.shifted_north ? " (moved north to end on the planet's edge)" : "");
    if (!o->quiet && r.g.rows_left_out > 0)
        tb_log_warn("%lld rows of the area are left out: no whole number of %lld-sample rows "
                    "fits the planet's %lld rows",
                    (long long)r.g.rows_left_out, (long long)r.g.size, (long long)r.info.planet_h);
    if (s_range(&r, err) != 0)
        goto done;
    rep->scale = r.sc;
    if (!o->quiet)
        tb_log_info("heights %.3f .. %.3f m; 16-bit over %.2f .. %.2f m, %.3f mm a step",
                    rep->min_m, rep->max_m, r.sc.lo_m, r.sc.hi_m, r.sc.step_m * 1000.0);
    int64_t total = r.g.nx * r.g.ny, k = 0;
    for (int64_t j = 0; j < r.g.ny; j++)
        for (int64_t i = 0; i < r.g.nx; i++) {
            double ts = tb_now_s();
            if (s_heights(&r, i, j, err) != 0 || (o->geotiff && s_geotiff(&r, i, j, err) != 0))
                goto done;
            double th = tb_now_s();
            if (s_weights(&r, i, j, err) != 0)
                goto done;
            rep->tiles_written++;
            if (!o->quiet) {
                char name[S_PATH];
                tb_export_tile_name(r.p, &r.g, r.base, "", i, j, r.p->height_ext, name,
                                    sizeof name);
                tb_log_info("tile %lld/%lld %s: %.2f s (heights %.2f, weights %.2f)",
                            (long long)++k, (long long)total, name, tb_now_s() - ts, th - ts,
                            tb_now_s() - th);
            }
        }
    rep->filled_samples = tb_export_source_filled(r.src);
    rep->seconds = tb_now_s() - t0;
    rc = tb_export_sheet_write(bake_dir, o, &r.info, r.p, rep, r.files, err);
done:
    cJSON_Delete(r.files);
    tb_export_source_destroy(&r.src);
    tb_mosaic_close(&r.m);
    return rc;
}
