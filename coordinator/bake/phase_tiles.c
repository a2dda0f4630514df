/* The tiles phase: one `tile` job (jobs/detail/tile.h) per tile of the tile list, run through the
 * dispatch engine like the regions (same leases, retries, result store, build-id check).
 *
 * At planet scale nothing here holds more than a few tiles (docs/tiles.md, "The bake's tiles
 * phase"): a tile's spec is made when the engine is about to need it (a lazy job: a copy of its
 * window's rows of the mapped planet, on one of the engine's helper threads, at most a few held at
 * once), and each result is delivered as it arrives, in any order (unordered), decoded and written
 * to out_dir/tiles on this thread while the engine's own thread keeps the workers heartbeated, then
 * freed; while the engine holds its bound of undelivered results it starts no new job. The index
 * entries are kept by job and put in lattice order at the end (tiles_index.c writes the index).
 *
 * Per tile: <id>.png (16-bit height in the planet's elevation encoding), <id>.r16 (the same
 * samples, little-endian), <id>.f32z (the float heights, lossless), <id>_flow.png, <id>_wear.png,
 * <id>_deposit.png (8-bit) and <id>_splat.png (RGBA), all north-up, and the tile's index entry
 * (origin, size, samples, the XXH3 of its files); the pooled detail statistics add integers, in any
 * order. The pass parameters are the manifest's `tiles` section, every key
 * (tb_manifest_detail_params); the rock multiplier is the uplift module's field, which each job
 * makes from the rock's inputs its spec carries (tb_tile_rock_t). In farm mode the tile jobs go to
 * the farm's workers on the bake's one engine (tb_bake_dispatch, docs/distribution.md);
 * --tiles-only computes the chosen tiles afresh. Reads: plan, tile_list, height_m, area_m2,
 * classes. Writes: tile_files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/png_io.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"
#include "jobs/detail/planet_inputs.h"
#include "jobs/detail/tile.h"
#include "jobs/detail/tile_files.h"

typedef struct {
    tb_bake_ctx_t *ctx;
    const tb_tile_lattice_t *L;
    const tb_tile_planet_t *src; /* the mapped planet the specs are cut from */
    const tb_tile_class_t *cls;
    int n_cls;
    const tb_tile_id_t *job_tile; /* job index -> tile */
    cJSON **entry;                /* job index -> its index entry, once written */
    tb_bake_tile_files_t *files;  /* the pooled statistics */
    bool failed;
    tb_err_t err;
} s_tiles_t;

/* The detail statistics pool by adding integers, in any order. */
static void s_pool(tb_tile_stats_t *pooled, const tb_tile_stats_t *st)
{
    for (int c = 0; c < st->n_classes && c < TB_TILE_MAX_CLASSES; c++)
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            pooled->slope_hist[c][k] += st->slope_hist[c][k];
    if (st->n_classes > pooled->n_classes)
        pooled->n_classes = st->n_classes;
    pooled->cells += st->cells;
    pooled->land_cells += st->land_cells;
    pooled->channel_cells += st->channel_cells;
    pooled->eroded_q += st->eroded_q;
    pooled->deposited_q += st->deposited_q;
}

/* A tile's statistics in its index entry ("detail_stats"), so that a rerun that keeps the tile's
 * files pools them without its result. */
static cJSON *s_stats_json(const tb_tile_stats_t *st)
{
    cJSON *o = cJSON_CreateObject(), *h = cJSON_AddArrayToObject(o, "slope_hist");
    for (int c = 0; c < st->n_classes && c < TB_TILE_MAX_CLASSES; c++) {
        double v[TB_TILE_SLOPE_BINS];
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            v[k] = (double)st->slope_hist[c][k];
        cJSON_AddItemToArray(h, cJSON_CreateDoubleArray(v, TB_TILE_SLOPE_BINS));
    }
    double n[5] = {(double)st->cells, (double)st->land_cells, (double)st->channel_cells,
                   (double)st->eroded_q, (double)st->deposited_q};
    cJSON_AddItemToObject(o, "counts", cJSON_CreateDoubleArray(n, 5));
    return o;
}

static int s_stats_parse(const cJSON *o, tb_tile_stats_t *st)
{
    memset(st, 0, sizeof *st);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "slope_hist");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "counts");
    if (!cJSON_IsArray(h) || cJSON_GetArraySize(h) > TB_TILE_MAX_CLASSES || !cJSON_IsArray(n) ||
        cJSON_GetArraySize(n) != 5)
        return -1;
    st->n_classes = cJSON_GetArraySize(h);
    for (int c = 0; c < st->n_classes; c++) {
        const cJSON *row = cJSON_GetArrayItem(h, c);
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != TB_TILE_SLOPE_BINS)
            return -1;
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            st->slope_hist[c][k] = (int64_t)cJSON_GetNumberValue(cJSON_GetArrayItem(row, k));
    }
    int64_t *v[5] = {&st->cells, &st->land_cells, &st->channel_cells, &st->eroded_q,
                     &st->deposited_q};
    for (int i = 0; i < 5; i++)
        *v[i] = (int64_t)cJSON_GetNumberValue(cJSON_GetArrayItem(n, i));
    return 0;
}

/* Writes one file of a tile and records it in the tile's "files" object. */
static int s_write(s_tiles_t *t, cJSON *files, const char *id, const char *suffix,
                   const void *bytes, size_t n, tb_err_t *err)
{
    char name[128], hex[17];
    uint64_t h;
    snprintf(name, sizeof name, "tiles/%s%s", id, suffix);
    if (tb_bake_write_bytes(t->ctx, name, bytes, n, &h, err) != 0)
        return -1;
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cJSON_AddStringToObject(files, name + 6, hex);
    return 0;
}

static int s_write_tile(s_tiles_t *t, size_t index, const tb_tile_result_t *r, tb_err_t *err)
{
    char id[TB_TILE_ID_MAX];
    tb_tile_id_format(r->id, id);
    cJSON *entry = cJSON_CreateObject(), *files = cJSON_CreateObject();
    int rc = -1;
    for (int k = 0; k < TB_TILE_FILE_IMAGES; k++) {
        tb_image_t img;
        unsigned char *png = NULL;
        size_t n = 0;
        if (tb_tile_image(r, (tb_tile_file_t)k, &img, err) != 0)
            goto done;
        /* on the coordinator's one thread as the results come: the fast encoding (png_io.h) */
        int erc = tb_png_encode(&img, TB_PNG_FAST, &png, &n, err);
        tb_image_free(&img);
        if (erc != 0 ||
            s_write(t, files, id, tb_tile_file_suffix((tb_tile_file_t)k), png, n, err) != 0) {
            free(png);
            goto done;
        }
        free(png);
        if (k == 0) {
            void *raw;
            size_t rn;
            if (tb_tile_r16(r, &raw, &rn, err) != 0)
                goto done;
            erc = s_write(t, files, id, ".r16", raw, rn, err);
            free(raw);
            if (erc != 0)
                goto done;
            /* the float heights, losslessly: what `terrain export` reads (docs/export.md) */
            if (tb_tile_f32z(r, &raw, &rn, err) != 0)
                goto done;
            erc = s_write(t, files, id, TB_TILE_F32Z_SUFFIX, raw, rn, err);
            free(raw);
            if (erc != 0)
                goto done;
        }
    }
    double x_m, y_m;
    tb_tile_origin_m(t->L, r->id, &x_m, &y_m);
    cJSON_AddStringToObject(entry, "id", id);
    cJSON_AddNumberToObject(entry, "col", (double)r->id.col);
    cJSON_AddNumberToObject(entry, "row", (double)r->id.row);
    double origin[2] = {x_m, y_m};
    double size[2] = {(double)r->interior.w * r->interior.cell_m,
                      (double)r->interior.h * r->interior.cell_m};
    double samples[2] = {(double)r->interior.w, (double)r->interior.h};
    cJSON_AddItemToObject(entry, "origin_m", cJSON_CreateDoubleArray(origin, 2));
    cJSON_AddItemToObject(entry, "size_m", cJSON_CreateDoubleArray(size, 2));
    cJSON_AddItemToObject(entry, "samples", cJSON_CreateDoubleArray(samples, 2));
    cJSON_AddItemToObject(entry, "files", files);
    files = NULL;
    char spec_hex[17];
    snprintf(spec_hex, sizeof spec_hex, "%016llx", (unsigned long long)r->spec_xxh3);
    cJSON_AddStringToObject(entry, "spec_xxh3", spec_hex);
    cJSON_AddItemToObject(entry, "detail_stats", s_stats_json(&r->stats));
    t->entry[index] = entry;
    entry = NULL;
    rc = 0;
done:
    cJSON_Delete(files);
    cJSON_Delete(entry);
    return rc;
}

/* A tile's result, as it comes (any order, on the caller's thread while the engine heartbeats):
 * decoded, its files written, its statistics pooled, then freed: the coordinator holds at most the
 * engine's few results. */
static void s_on_take(void *user, size_t index, tb_result_t *result)
{
    s_tiles_t *t = user;
    const void *data = tb_result_data(result);
    size_t bytes = tb_result_bytes(result);
    tb_tile_result_t r;
    if (t->failed)
        goto done;
    if (tb_tile_result_decode(data, bytes, &r, &t->err) != 0)
        goto fail;
    const tb_tile_id_t want = t->job_tile[index];
    if (r.id.col != want.col || r.id.row != want.row) {
        tb_err_set(&t->err, TB_E_FORMAT, "the result is for another tile");
        tb_tile_result_free(&r);
        goto fail;
    }
    if (s_write_tile(t, index, &r, &t->err) != 0) {
        tb_tile_result_free(&r);
        goto fail;
    }
    tb_report_live_tile(t->ctx->live, &r); /* the 3D view's reduced copy (report.h) */
    s_pool(&t->files->pooled, &r.stats);
    t->files->written++;
    tb_tile_result_free(&r);
    goto done;
fail : {
    char id[TB_TILE_ID_MAX];
    tb_tile_id_format(t->job_tile[index], id);
    tb_err_prefix(&t->err, "tile %s", id);
    t->failed = true;
}
done:
    tb_result_destroy(&result);
}

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    return ctx->tile_list.skip_reason; /* a partial bake's regions missing (tiles_select) */
}

/* report.html's live view of the tile jobs (coordinator/report/report.h) */
static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((s_tiles_t *)user)->ctx->live, d);
}

/* Tile id's spec bytes: a copy of its window's rows of the mapped planet (milliseconds), which are
 * let go after. */
static int s_cut_spec(const s_tiles_t *t, tb_tile_id_t id, void **bytes, size_t *n, tb_err_t *err)
{
    const tb_manifest_t *m = t->ctx->plan.manifest;
    tb_tile_spec_owned_t spec;
    if (tb_tile_spec_cut(t->src, id, m->seed, &t->ctx->plan.tile_params, m->elevation_min_m,
                         m->elevation_max_m, t->cls, t->n_cls, &spec, err) != 0)
        return -1;
    int rc = tb_tile_spec_encode(&spec.spec, bytes, n, err);
    tb_frame_t geo = spec.spec.geo;
    tb_tile_spec_free(&spec);
    tb_planet_release(t->ctx->planet, TB_PLANET_HEIGHT_M, geo.y0, geo.y0 + geo.h);
    tb_planet_release(t->ctx->planet, TB_PLANET_AREA_M2, geo.y0, geo.y0 + geo.h);
    tb_planet_release(t->ctx->planet, TB_PLANET_CLASSES, geo.y0, geo.y0 + geo.h);
    return rc;
}

/* A tile job's spec, made when the engine needs it (a helper thread: it reads the mapped planet,
 * which does not change while the tiles run). */
static int s_make_spec(void *user, size_t index, void **bytes, size_t *n, tb_err_t *err)
{
    const s_tiles_t *t = user;
    return s_cut_spec(t, t->job_tile[index], bytes, n, err);
}

/* The tile job of tile `id` (its spec made lazily), weighed by its window's cells, a land cell
 * counting 1 + S_LAND_EXTRA: the droplets and the talus pass run on land, and on the 25 km demo the
 * seconds a window cell were 6.4 + 5.8 x the interior's land share (us; 50 tile jobs of five
 * bakes), 24 % spread about their mean by window cells alone and 9 % about that line. The weight
 * orders the jobs (the largest first) and prices the queued ones in the ETA (docs/report.md). */
#define S_LAND_EXTRA 0.9

static int s_add_job(s_tiles_t *t, tb_dispatch_t *d, tb_tile_id_t id, double land_share,
                     tb_err_t *err)
{
    const tb_tile_lattice_t *L = t->L;
    tb_frame_t win, geo;
    if (tb_tile_window(L, id, t->ctx->plan.tile_params.margin_cells, &win, err) != 0 ||
        tb_tile_geo_window(L, &win, &geo, err) != 0)
        return -1;
    char label[64], name[TB_TILE_ID_MAX];
    tb_tile_id_format(id, name);
    snprintf(label, sizeof label, "tile %s", name);
    tb_job_desc_t desc = {.kind = "tile",
                          .make_spec = s_make_spec,
                          .spec_user = t,
                          .weight = (double)geo.w * (double)geo.h * (1 + S_LAND_EXTRA * land_share),
                          .cells = (double)(L->tile_cells * L->tile_cells),
                          .memory_bytes = tb_tile_peak_bytes(win.w * win.h),
                          .label = label};
    return tb_dispatch_add(d, &desc, err) < 0 ? -1 : 0;
}

/* A rerun keeps a tile whose spec is the one the previous bake's index recorded for it and whose
 * files all still hash as it says (docs/bake.md, "Resume"): its entry is taken over, its files'
 * hashes recorded and its statistics pooled, and no job runs for it. 1 kept, 0 not, -1 error. */
static int s_keep_tile(s_tiles_t *t, tb_tile_id_t id, cJSON **entry, tb_err_t *err)
{
    tb_bake_ctx_t *ctx = t->ctx;
    const cJSON *prev = cJSON_GetObjectItemCaseSensitive(ctx->previous.index, "tiles"), *e, *f;
    if (!prev || ctx->opts->dispatch.fresh || ctx->plan.tile_sel)
        return 0;
    char name[TB_TILE_ID_MAX];
    tb_tile_id_format(id, name);
    const cJSON *old = NULL;
    cJSON_ArrayForEach(e, prev)
    {
        const cJSON *eid = cJSON_GetObjectItemCaseSensitive(e, "id");
        if (cJSON_IsString(eid) && strcmp(eid->valuestring, name) == 0)
            old = e;
    }
    const cJSON *spec_hex = cJSON_GetObjectItemCaseSensitive(old, "spec_xxh3");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(old, "files");
    tb_tile_stats_t st;
    if (!cJSON_IsString(spec_hex) || !cJSON_IsObject(files) ||
        s_stats_parse(cJSON_GetObjectItemCaseSensitive(old, "detail_stats"), &st) != 0)
        return 0;
    void *spec = NULL;
    size_t n = 0;
    if (s_cut_spec(t, id, &spec, &n, err) != 0)
        return -1;
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(spec, n));
    free(spec);
    if (strcmp(hex, spec_hex->valuestring) != 0)
        return 0;
    cJSON_ArrayForEach(f, files)
    {
        char path[4200], rel[256];
        uint64_t h;
        tb_err_t ferr;
        snprintf(rel, sizeof rel, "tiles/%s", f->string);
        if (!cJSON_IsString(f) || tb_fs_join(path, sizeof path, ctx->opts->out_dir, rel, &ferr) ||
            tb_fs_hash_file(path, &h, &ferr) != 0)
            return 0;
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
        if (strcmp(hex, f->valuestring) != 0)
            return 0;
    }
    cJSON_ArrayForEach(f, files)
    {
        char rel[256];
        snprintf(rel, sizeof rel, "tiles/%s", f->string);
        tb_bake_record_file(ctx, rel, f->valuestring);
    }
    *entry = cJSON_Duplicate(old, true);
    if (!*entry)
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    s_pool(&t->files->pooled, &st);
    return 1;
}

int tb_bake_tile_planet(tb_bake_ctx_t *ctx, tb_tile_planet_t *src, tb_tile_class_t *cls, int *n_cls,
                        uint8_t **land, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    tb_planet_t *planet = ctx->planet;
    size_t cells = tb_planet_cells(planet);
    *n_cls = tb_bake_tile_classes(m, cls);
    if (land)
        *land = NULL;
    /* the class raster is the index into the tile class table: every cell holds a legend class
     * (unmatched pixels were filled), and the table is the legend's plus one */
    const uint8_t *classes = tb_planet_cclasses(planet);
    if (land) {
        *land = tb_malloc(cells, "tile land mask", err);
        if (!*land)
            return -1;
        tb_bake_tile_land(m, classes, cells, *land);
    }
    *src = (tb_tile_planet_t){.geo_w = tb_planet_w(planet),
                              .geo_h = tb_planet_h(planet),
                              .geo_cell_m = m->cell_m,
                              .height_m = tb_planet_cheight_m(planet),
                              .area_m2 = tb_planet_carea_m2(planet),
                              .rock_k = NULL,
                              .class_idx = classes,
                              .rock = &ctx->plan.tile_rock};
    /* the coastal pass's maps for the shore pass (docs/tiles.md); absent with --no-coast */
    const uint32_t coast_bits = TB_PLANET_BIT(EXPOSURE) | TB_PLANET_BIT(MOVED_M);
    if (tb_planet_present(planet, coast_bits) == coast_bits) {
        src->exposure = tb_planet_cexposure(planet);
        src->moved_m = tb_planet_cmoved_m(planet);
    }
    return 0;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_tile_list_t *list = &ctx->tile_list;
    tb_bake_tile_files_t *files = &ctx->tile_files;
    const tb_tile_lattice_t *L = &ctx->plan.lattice;
    double t0 = tb_now_s();
    tb_tile_class_t cls[TB_TILE_MAX_CLASSES];
    int n_cls;
    tb_tile_planet_t src;
    tb_tile_id_t *job_tile = tb_calloc((size_t)list->n + 1, sizeof *job_tile, "tile jobs", err);
    cJSON **entry = tb_calloc((size_t)list->n + 1, sizeof *entry, "tile entries", err);
    cJSON **kept_entry = tb_calloc((size_t)list->n + 1, sizeof *kept_entry, "tile entries", err);
    int *job_list = tb_calloc((size_t)list->n + 1, sizeof *job_list, "tile jobs", err);
    s_tiles_t t = {.ctx = ctx,
                   .L = L,
                   .src = &src,
                   .cls = cls,
                   .job_tile = job_tile,
                   .entry = entry,
                   .files = files};
    int rc = -1;
    files->entries = cJSON_CreateArray();
    if (!job_tile || !entry || !kept_entry || !job_list || !files->entries ||
        tb_bake_tile_planet(ctx, &src, cls, &n_cls, NULL, err) != 0)
        goto done;
    t.n_cls = n_cls;
    char dir[4200];
    if (tb_fs_join(dir, sizeof dir, ctx->opts->out_dir, "tiles", err) != 0 ||
        tb_fs_mkdir_inside(dir, err) != 0)
        goto done;
    tb_dispatch_batch_t batch = {.label = "tiles",
                                 .on_take = s_on_take,
                                 .unordered = true,
                                 .on_tick = s_on_tick,
                                 .user = &t,
                                 .fresh = ctx->plan.tile_sel != NULL}; /* --tiles-only re-runs */
    tb_dispatch_t *dispatch = tb_bake_dispatch(ctx, &batch, err);
    if (!dispatch)
        goto done;
    int kept = 0;
    for (int k = 0; k < list->n; k++) {
        cJSON *old = NULL;
        int keep = s_keep_tile(&t, list->ids[k], &old, err);
        if (keep < 0)
            goto done;
        if (keep) {
            kept_entry[k] = old;
            kept++;
            continue;
        }
        job_list[tb_dispatch_count(dispatch)] = k;
        job_tile[tb_dispatch_count(dispatch)] = list->ids[k];
        if (s_add_job(&t, dispatch, list->ids[k], list->land_share[k], err) != 0)
            goto done;
    }
    if (kept && !ctx->opts->quiet)
        tb_log_info("tiles: %d of %d kept from the previous bake (the same spec, the same files)",
                    kept, list->n);
    if (!ctx->opts->quiet)
        tb_log_info("baking %d detail tiles (%d land, %d coast) of %lld, %lld x %lld samples at %g "
                    "m, margin %d",
                    list->n, list->n_land, list->n_coast, (long long)tb_tile_count(L),
                    (long long)L->tile_cells, (long long)L->tile_cells, L->cell_m,
                    ctx->plan.tile_params.margin_cells);
    if (tb_dispatch_count(dispatch) > 0 && tb_dispatch_run(dispatch, err) != 0)
        goto done;
    if (t.failed) {
        *err = t.err;
        goto done;
    }
    /* the entries in list (lattice) order, whatever order the tiles came in */
    for (size_t j = 0; j < tb_dispatch_count(dispatch); j++) {
        kept_entry[job_list[j]] = entry[j];
        entry[j] = NULL;
    }
    for (int k = 0; k < list->n; k++) {
        cJSON_AddItemToArray(files->entries, kept_entry[k]);
        kept_entry[k] = NULL;
    }
    files->kept = kept;
    tb_dispatch_stats_t ds;
    tb_dispatch_stats(dispatch, &ds);
    files->from_store = ds.from_store;
    files->record = tb_dispatch_record_json(dispatch);
    files->seconds = tb_now_s() - t0;
    ctx->out->tiles_baked = files->written;
    ctx->out->tiles_from_store = ds.from_store;
    ctx->out->tiles_seconds = files->seconds;
    if (!ctx->opts->quiet)
        tb_log_info("%d detail tiles in %.1f s (%zu from the store)", files->written,
                    files->seconds, ds.from_store);
    rc = 0;
done:
    for (int k = 0; entry && kept_entry && k < list->n; k++) {
        cJSON_Delete(entry[k]);
        cJSON_Delete(kept_entry[k]);
    }
    free(entry);
    free(kept_entry);
    free(job_list);
    free(job_tile);
    return rc;
}

const tb_phase_t tb_phase_tiles = {
    .name = "tiles",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(TILE_LIST) | TB_ART_BIT(HEIGHT_M) | TB_ART_BIT(AREA_M2) |
             TB_ART_BIT(CLASSES),
    .writes = TB_ART_BIT(TILE_FILES),
    .writes_files = true,
    .skip = s_skip,
    .run = s_run,
};
