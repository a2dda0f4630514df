/* The tiles phase: one `tile` job (jobs/detail/tile.h) per tile of the tile list, run through the
 * dispatch engine like the regions (same leases, retries, result store, build-id check), each
 * result written to out_dir/tiles as it arrives and then freed, so the coordinator never holds more
 * than a few tiles (docs/tiles.md, "The bake's tiles phase").
 *
 * Per tile: <id>.png (16-bit height in the planet's elevation encoding), <id>.r16 (the same
 * samples, little-endian), <id>_flow.png, <id>_wear.png, <id>_deposit.png (8-bit) and
 * <id>_splat.png (RGBA), all north-up, and the tile's index entry (origin, size, samples, the XXH3
 * of its files); the pooled detail statistics add integers, in any order. The pass parameters are
 * the manifest's `tiles` section, every key (tb_manifest_detail_params); the rock multiplier is the
 * uplift module's field, which each job makes from the rock's inputs its spec carries
 * (tb_tile_rock_t), so a spec is a copy of its window's rows (milliseconds). A writer thread does
 * the decoding, encoding and writing, because the dispatch loop does not heartbeat while a result
 * callback runs. In farm mode the tile jobs go to the farm's workers on the bake's one engine
 * (tb_bake_dispatch, docs/distribution.md); --tiles-only computes the chosen tiles afresh. Reads:
 * plan, tile_list, height_m, area_m2, classes. Writes: tile_files (tiles_index.c writes the index).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/png_io.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"
#include "jobs/detail/planet_inputs.h"
#include "jobs/detail/tile.h"
#include "jobs/detail/tile_files.h"

#define S_PNG_LEVEL 1 /* fast: one writer thread keeps up with the workers */

#define S_QUEUE 3 /* results waiting for the writer; the dispatch loop waits when it is full */

typedef struct {
    size_t index;
    void *data;
    size_t bytes;
} s_item_t;

typedef struct {
    tb_bake_ctx_t *ctx;
    const tb_tile_lattice_t *L;
    /* the writer thread: the dispatch loop hands each result over and goes back to its workers
     * (it does not heartbeat while a callback runs, and a tile's files take seconds to encode) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    s_item_t queue[S_QUEUE];
    int head, count;
    bool closing;
    const tb_tile_id_t *job_tile; /* job index -> tile */
    tb_bake_tile_files_t *files;  /* the entries (in job = list order), the pooled statistics */
    bool failed;
    tb_err_t err;
} s_tiles_t;

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

static int s_write_tile(s_tiles_t *t, const tb_tile_result_t *r, tb_err_t *err)
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
        int erc = tb_png_encode(&img, S_PNG_LEVEL, &png, &n, err);
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
    cJSON_AddItemToArray(t->files->entries, entry);
    entry = NULL;
    rc = 0;
done:
    cJSON_Delete(files);
    cJSON_Delete(entry);
    return rc;
}

static void s_consume(s_tiles_t *t, size_t index, const void *data, size_t bytes)
{
    if (t->failed)
        return;
    tb_tile_result_t r;
    if (tb_tile_result_decode(data, bytes, &r, &t->err) != 0)
        goto fail;
    const tb_tile_id_t want = t->job_tile[index];
    if (r.id.col != want.col || r.id.row != want.row) {
        tb_err_set(&t->err, TB_E_FORMAT, "the result is for another tile");
        tb_tile_result_free(&r);
        goto fail;
    }
    if (s_write_tile(t, &r, &t->err) != 0) {
        tb_tile_result_free(&r);
        goto fail;
    }
    tb_report_live_tile(t->ctx->live, &r); /* the 3D view's reduced copy (report.h) */
    /* the detail statistics pool by adding integers, in any order */
    tb_tile_stats_t *pooled = &t->files->pooled;
    for (int c = 0; c < r.stats.n_classes && c < TB_TILE_MAX_CLASSES; c++)
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            pooled->slope_hist[c][k] += r.stats.slope_hist[c][k];
    if (r.stats.n_classes > pooled->n_classes)
        pooled->n_classes = r.stats.n_classes;
    pooled->cells += r.stats.cells;
    pooled->land_cells += r.stats.land_cells;
    pooled->channel_cells += r.stats.channel_cells;
    pooled->eroded_q += r.stats.eroded_q;
    pooled->deposited_q += r.stats.deposited_q;
    t->files->written++;
    tb_tile_result_free(&r);
    return;
fail : {
    char id[TB_TILE_ID_MAX];
    tb_tile_id_format(t->job_tile[index], id);
    tb_err_prefix(&t->err, "tile %s", id);
    t->failed = true;
}
}

/* The writer thread: takes results in the order the dispatch loop delivered them (job order). */
static void *s_writer(void *user)
{
    s_tiles_t *t = user;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        while (t->count == 0 && !t->closing)
            pthread_cond_wait(&t->cv, &t->mu);
        if (t->count == 0) {
            pthread_mutex_unlock(&t->mu);
            return NULL;
        }
        s_item_t it = t->queue[t->head];
        pthread_mutex_unlock(&t->mu);
        s_consume(t, it.index, it.data, it.bytes);
        free(it.data);
        pthread_mutex_lock(&t->mu);
        t->head = (t->head + 1) % S_QUEUE;
        t->count--;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
    }
}

/* On the dispatch loop: copy the result and queue it (a copy of tens of MB takes milliseconds). */
static void s_on_result(void *user, size_t index, const void *data, size_t bytes)
{
    s_tiles_t *t = user;
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy) {
        pthread_mutex_lock(&t->mu);
        if (!t->failed) {
            tb_err_set(&t->err, TB_E_NOMEM, "tiles: out of memory for a result of %zu bytes",
                       bytes);
            t->failed = true;
        }
        pthread_mutex_unlock(&t->mu);
        return;
    }
    memcpy(copy, data, bytes);
    pthread_mutex_lock(&t->mu);
    while (t->count == S_QUEUE)
        pthread_cond_wait(&t->cv, &t->mu);
    t->queue[(t->head + t->count) % S_QUEUE] = (s_item_t){index, copy, bytes};
    t->count++;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

/* report.html's live view of the tile jobs (coordinator/report/report.h) */
static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((s_tiles_t *)user)->ctx->live, d);
}

/* Lets the writer finish what is queued and joins it. */
static void s_writer_close(s_tiles_t *t, pthread_t th)
{
    pthread_mutex_lock(&t->mu);
    t->closing = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(th, NULL);
}

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    return ctx->tile_list.skip_reason; /* a partial bake's regions missing (tiles_select) */
}

/* The tile job of tile `id`: its spec cut from the planet, with the rock under its window. */
static int s_add_job(tb_bake_ctx_t *ctx, tb_dispatch_t *d, const tb_tile_planet_t *src,
                     const tb_tile_class_t *cls, int n_cls, tb_tile_id_t id, int64_t *idx,
                     tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    const tb_detail_params_t *p = &ctx->plan.tile_params;
    const tb_tile_lattice_t *L = &ctx->plan.lattice;
    tb_tile_spec_owned_t spec;
    void *bytes;
    size_t n;
    if (tb_tile_spec_cut(src, id, m->seed, p, m->elevation_min_m, m->elevation_max_m, cls, n_cls,
                         &spec, err) != 0)
        return -1;
    int erc = tb_tile_spec_encode(&spec.spec, &bytes, &n, err);
    double window = (double)spec.spec.geo.w * (double)spec.spec.geo.h;
    tb_frame_t geo = spec.spec.geo;
    tb_tile_spec_free(&spec);
    tb_planet_release(ctx->planet, TB_PLANET_HEIGHT_M, geo.y0, geo.y0 + geo.h);
    tb_planet_release(ctx->planet, TB_PLANET_AREA_M2, geo.y0, geo.y0 + geo.h);
    tb_planet_release(ctx->planet, TB_PLANET_CLASSES, geo.y0, geo.y0 + geo.h);
    if (erc != 0)
        return -1;
    char label[64], name[TB_TILE_ID_MAX];
    tb_tile_id_format(id, name);
    snprintf(label, sizeof label, "tile %s", name);
    tb_job_desc_t desc = {.kind = "tile",
                          .spec = bytes,
                          .spec_bytes = n,
                          .weight = window,
                          .cells = (double)(L->tile_cells * L->tile_cells),
                          .label = label};
    *idx = tb_dispatch_add(d, &desc, err);
    free(bytes);
    return *idx < 0 ? -1 : 0;
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
    s_tiles_t t = {.ctx = ctx,
                   .L = L,
                   .job_tile = job_tile,
                   .files = files,
                   .mu = PTHREAD_MUTEX_INITIALIZER,
                   .cv = PTHREAD_COND_INITIALIZER};
    tb_dispatch_t *dispatch = NULL;
    bool owned = false;
    int rc = -1;
    files->entries = cJSON_CreateArray();
    if (!job_tile || !files->entries || tb_bake_tile_planet(ctx, &src, cls, &n_cls, NULL, err) != 0)
        goto done;
    char dir[4200];
    if (tb_fs_join(dir, sizeof dir, ctx->opts->out_dir, "tiles", err) != 0 ||
        tb_fs_mkdir_p(dir, err) != 0)
        goto done;
    tb_dispatch_batch_t batch = {.label = "tiles",
                                 .on_result = s_on_result,
                                 .on_tick = s_on_tick,
                                 .user = &t,
                                 .fresh = ctx->plan.tile_sel != NULL}; /* --tiles-only re-runs */
    dispatch = tb_bake_dispatch(ctx, &batch, &owned, err);
    if (!dispatch)
        goto done;
    for (int k = 0; k < list->n; k++) {
        int64_t idx;
        if (s_add_job(ctx, dispatch, &src, cls, n_cls, list->ids[k], &idx, err) != 0)
            goto done;
        job_tile[idx] = list->ids[k];
    }
    if (!ctx->opts->quiet)
        tb_log_info("baking %d detail tiles (%d land, %d coast) of %lld, %lld x %lld samples at %g "
                    "m, margin %d",
                    list->n, list->n_land, list->n_coast, (long long)tb_tile_count(L),
                    (long long)L->tile_cells, (long long)L->tile_cells, L->cell_m,
                    ctx->plan.tile_params.margin_cells);
    if (list->n > 0) {
        pthread_t writer;
        if (pthread_create(&writer, NULL, s_writer, &t) != 0) {
            tb_err_set(err, TB_E_INTERNAL, "tiles: cannot start the writer thread");
            goto done;
        }
        int drc = tb_dispatch_run(dispatch, err);
        s_writer_close(&t, writer);
        if (drc != 0)
            goto done;
        if (t.failed) {
            *err = t.err;
            goto done;
        }
    }
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
    if (owned)
        tb_dispatch_destroy(&dispatch);
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
