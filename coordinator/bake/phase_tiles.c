/* The tiles phase: one `tile` job (jobs/detail/tile.h) per land or coast tile of the detail
 * lattice, run through the dispatch engine like the regions (same leases, retries, result store,
 * build-id check), each result written to out_dir/tiles as it arrives and then freed, so the
 * coordinator never holds more than a few tiles (docs/tiles.md, "The bake's tiles phase").
 *
 * Per tile: <id>.png (16-bit height in the planet's elevation encoding), <id>.r16 (the same
 * samples, little-endian), <id>_flow.png, <id>_wear.png, <id>_deposit.png (8-bit) and
 * <id>_splat.png (RGBA), all north-up; then tiles/index.json lists every tile with its origin,
 * size, samples, encoding and the XXH3 of its files, and meta.json gets a "tiles" object (counts,
 * margins, parameters, dispatch record, pooled detail statistics). The pass parameters are the
 * manifest's `tiles` section, every key (tb_manifest_detail_params); the rock
 * multiplier is the uplift module's field (tb_tile_rock_k, about 0.55 s a default tile, before
 * dispatch). A writer thread does the decoding, encoding and writing, because the dispatch loop
 * does not heartbeat while a result callback runs. Skipped with --no-tiles (opts->tiles false) and
 * in a partial bake with the coastal pass when some region is neither solved nor stored; in farm
 * mode the tile jobs go to the farm's workers on the bake's one engine (tb_bake_dispatch,
 * docs/distribution.md). A partial bake reads the whole planet of phase_whole.c: without the coast
 * it bakes the tiles its solved and stored land covers, with it the tiles holding land of its own
 * regions, over the coast of the whole composite (docs/tiles.md, "Tiles of a partial bake");
 * --tiles-only re-runs the chosen tiles afresh and merges them into the index, and
 * --measure-margin hands the planet to tiles_margin.c (docs/tiles.md, "Re-running chosen tiles").
 * Reads height_m, area_m2, classes, solved (and a partial bake's ctx->whole_*). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    cJSON *index_tiles;           /* the index's "tiles" array, in job (= tile) order */
    tb_tile_stats_t pooled;
    int64_t eroded_q, deposited_q;
    int written;
    bool failed;
    tb_err_t err;
} s_tiles_t;

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    if (!ctx->opts->tiles)
        return "--no-tiles";
    if (ctx->out->partial && ctx->whole_missing[0])
        return ctx->whole_missing; /* regions neither solved nor stored (phase_whole.c) */
    return NULL;
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
    cJSON_AddItemToArray(t->index_tiles, entry);
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
    /* the detail statistics pool by adding integers, in tile order */
    for (int c = 0; c < r.stats.n_classes && c < TB_TILE_MAX_CLASSES; c++)
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            t->pooled.slope_hist[c][k] += r.stats.slope_hist[c][k];
    if (r.stats.n_classes > t->pooled.n_classes)
        t->pooled.n_classes = r.stats.n_classes;
    t->pooled.cells += r.stats.cells;
    t->pooled.land_cells += r.stats.land_cells;
    t->pooled.channel_cells += r.stats.channel_cells;
    t->pooled.eroded_q += r.stats.eroded_q;
    t->pooled.deposited_q += r.stats.deposited_q;
    t->written++;
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

/* Lets the writer finish what is queued and joins it. */
static void s_writer_close(s_tiles_t *t, pthread_t th)
{
    pthread_mutex_lock(&t->mu);
    t->closing = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(th, NULL);
}

/* The pooled detail statistics for meta.json: volumes, channel share, and the slope histogram per
 * class as counts a degree. */
static cJSON *s_stats_json(const s_tiles_t *t, const tb_tile_lattice_t *L, const tb_manifest_t *m)
{
    cJSON *o = cJSON_CreateObject();
    double cell_area = L->cell_m * L->cell_m;
    const tb_tile_stats_t *p = &t->pooled;
    cJSON_AddNumberToObject(o, "cells", (double)p->cells);
    cJSON_AddNumberToObject(o, "land_cells", (double)p->land_cells);
    cJSON_AddNumberToObject(o, "eroded_m3", (double)p->eroded_q * TB_DROPLET_QUANTUM_M * cell_area);
    cJSON_AddNumberToObject(o, "deposited_m3",
                            (double)p->deposited_q * TB_DROPLET_QUANTUM_M * cell_area);
    cJSON_AddNumberToObject(o, "channel_share_of_land",
                            p->land_cells ? (double)p->channel_cells / (double)p->land_cells : 0);
    cJSON *hist = cJSON_AddObjectToObject(o, "slope_deg_histogram");
    for (int c = 0; c < p->n_classes; c++) {
        int64_t total = 0;
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            total += p->slope_hist[c][k];
        if (total == 0)
            continue;
        double v[TB_TILE_SLOPE_BINS];
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            v[k] = (double)p->slope_hist[c][k];
        const char *name = c < m->legend.n_classes ? m->legend.classes[c].name : "unmatched";
        cJSON_AddItemToObject(hist, name, cJSON_CreateDoubleArray(v, TB_TILE_SLOPE_BINS));
    }
    return o;
}

/* Whether a partial bake bakes a tile (docs/tiles.md, "Tiles of a partial bake"). Without the
 * coastal pass: when its window holds no land of a region this bake did not solve and the store
 * does not hold (tb_bake_tile_covered); then its bytes are the whole bake's. With it (every region
 * known, the coast of the whole composite): when its own cells hold land of a region this bake
 * solved. The others are listed in *skipped with the reason. Returns 0 to bake the tile; -1 to skip
 * it (err cleared) or on error (err set); --tiles-only naming such a tile is an error. */
static int s_partial_skip(tb_bake_ctx_t *ctx, const tb_tile_lattice_t *L, tb_tile_id_t id,
                          int margin, const uint8_t *land, const uint8_t *known, cJSON **skipped,
                          tb_err_t *err)
{
    bool coast = !ctx->opts->no_coast;
    if (coast) {
        if (tb_tile_content(L, id, tb_planet_csolved(ctx->planet)) != TB_TILE_OCEAN)
            return 0;
    } else {
        int c = tb_bake_tile_covered(L, id, margin, land, known, err);
        if (c != 0)
            return c < 0 ? -1 : 0;
    }
    char name[TB_TILE_ID_MAX];
    tb_tile_id_format(id, name);
    const char *why = coast ? "it holds no land of the regions this partial bake solved"
                            : "its window (the tile, its margin and the resampler's stencil) "
                              "reaches land of a region this partial bake did not solve and the "
                              "store does not hold";
    if (ctx->tile_sel) {
        ctx->out->bad_input = true; /* nothing was baked: exit 2 */
        return tb_err_set(err, TB_E_INVALID, "%s %s: %s (%s)",
                          ctx->opts->tiles_only_option ? ctx->opts->tiles_only_option
                                                       : "--tiles-only",
                          name, why, ctx->partial ? ctx->partial : "--only");
    }
    if (!*skipped)
        *skipped = cJSON_CreateArray();
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "id", name);
    cJSON_AddStringToObject(e, "reason", why);
    cJSON_AddItemToArray(*skipped, e);
    *err = (tb_err_t){0};
    return -1;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->manifest;
    tb_planet_t *planet = ctx->planet;
    int64_t pw = tb_planet_w(planet), ph = tb_planet_h(planet);
    size_t cells = tb_planet_cells(planet);
    double t0 = tb_now_s();
    tb_detail_params_t p;
    tb_tile_lattice_t L;
    if (tb_bake_tile_params(m, pw, ph, &p, &L, err) != 0)
        return -1;
    tb_tile_class_t cls[TB_TILE_MAX_CLASSES];
    int n_cls = tb_bake_tile_classes(m, cls);
    const uint8_t *classes = tb_planet_cclasses(planet);
    uint8_t *class_idx = tb_malloc(cells, "tile classes", err);
    uint8_t *land = tb_malloc(cells, "tile land mask", err);
    tb_tile_id_t *job_tile =
        tb_calloc((size_t)tb_tile_count(&L) + 1, sizeof *job_tile, "tile jobs", err);
    cJSON *index = cJSON_CreateObject();
    s_tiles_t t = {.ctx = ctx,
                   .L = &L,
                   .job_tile = job_tile,
                   .mu = PTHREAD_MUTEX_INITIALIZER,
                   .cv = PTHREAD_COND_INITIALIZER};
    tb_dispatch_t *dispatch = NULL;
    cJSON *skipped = NULL;         /* a partial bake's tiles it cannot bake */
    cJSON *rerun = NULL;           /* --tiles-only: meta.json's record of the re-run */
    const uint8_t *p_known = NULL; /* a partial bake's land solved or stored (phase_whole.c) */
    bool owned = false;
    int rc = -1;
    if (!class_idx || !land || !job_tile || !index)
        goto done;
    for (size_t i = 0; i < cells; i++) {
        uint8_t c = classes[i] < n_cls - 1 ? classes[i] : (uint8_t)(n_cls - 1);
        class_idx[i] = c;
        land[i] = !cls[c].ocean;
    }
    tb_tile_planet_t src = {.geo_w = pw,
                            .geo_h = ph,
                            .geo_cell_m = m->cell_m,
                            .height_m = tb_planet_cheight_m(planet),
                            .area_m2 = tb_planet_carea_m2(planet),
                            .rock_k = NULL,
                            .class_idx = class_idx};
    /* the coastal pass's maps for the shore pass (docs/tiles.md); absent with --no-coast */
    const uint32_t coast_bits = TB_PLANET_BIT(EXPOSURE) | TB_PLANET_BIT(MOVED_M);
    if (tb_planet_present(planet, coast_bits) == coast_bits) {
        src.exposure = tb_planet_cexposure(planet);
        src.moved_m = tb_planet_cmoved_m(planet);
    }
    if (ctx->out->partial) {
        /* the whole planet as far as this bake and the store know it, for the tiles only */
        if (!ctx->whole_height_m || !ctx->whole_area_m2 || !ctx->whole_known) {
            tb_err_set(err, TB_E_INTERNAL, "a partial bake's tiles need the whole phase");
            goto done;
        }
        src.height_m = ctx->whole_height_m;
        src.area_m2 = ctx->whole_area_m2;
        src.exposure = ctx->whole_exposure; /* the coast of the whole composite, or NULL */
        src.moved_m = ctx->whole_moved_m;
        p_known = ctx->whole_known;
    }
    if (ctx->opts->measure_margin) {
        rc = ctx->opts->check_seams
                 ? tb_bake_tiles_check_seams(ctx, &src, &p, cls, n_cls, land, err)
                 : tb_bake_tiles_measure(ctx, &src, &p, cls, n_cls, land, err);
        goto done;
    }
    char dir[4200];
    if (tb_fs_join(dir, sizeof dir, ctx->opts->out_dir, "tiles", err) != 0 ||
        tb_fs_mkdir_p(dir, err) != 0)
        goto done;
    tb_dispatch_batch_t batch = {.label = "tiles",
                                 .on_result = s_on_result,
                                 .user = &t,
                                 .fresh = ctx->tile_sel != NULL}; /* --tiles-only re-runs */
    dispatch = tb_bake_dispatch(ctx, &batch, &owned, err);
    if (!dispatch)
        goto done;
    int n_jobs = 0, n_land = 0, n_coast = 0;
    for (int64_t row = 0; row < L.rows; row++)
        for (int64_t col = 0; col < L.cols; col++) {
            tb_tile_id_t id = {col, row};
            tb_tile_content_t what = tb_tile_content(&L, id, land);
            if (what == TB_TILE_OCEAN)
                continue;
            n_land += what == TB_TILE_LAND;
            n_coast += what == TB_TILE_COAST;
            if (ctx->tile_sel && !ctx->tile_sel[row * L.cols + col])
                continue;
            if (ctx->out->partial &&
                s_partial_skip(ctx, &L, id, p.margin_cells, land, p_known, &skipped, err) != 0) {
                if (err->code != TB_OK)
                    goto done;
                continue;
            }
            tb_tile_spec_owned_t spec;
            void *bytes;
            size_t n;
            if (tb_tile_spec_cut(&src, id, m->seed, &p, m->elevation_min_m, m->elevation_max_m, cls,
                                 n_cls, &spec, err) != 0)
                goto done;
            /* the rock under the window: the uplift module's own field, by world position */
            if (tb_tile_rock_k(m, &ctx->probes, &spec.spec.geo, spec.rock_k, err) != 0) {
                tb_tile_spec_free(&spec);
                goto done;
            }
            int erc = tb_tile_spec_encode(&spec.spec, &bytes, &n, err);
            double window = (double)spec.spec.geo.w * (double)spec.spec.geo.h;
            tb_tile_spec_free(&spec);
            if (erc != 0)
                goto done;
            char label[64], name[TB_TILE_ID_MAX];
            tb_tile_id_format(id, name);
            snprintf(label, sizeof label, "tile %s", name);
            tb_job_desc_t desc = {.kind = "tile",
                                  .spec = bytes,
                                  .spec_bytes = n,
                                  .weight = window,
                                  .cells = (double)(L.tile_cells * L.tile_cells),
                                  .label = label};
            int64_t idx = tb_dispatch_add(dispatch, &desc, err);
            free(bytes);
            if (idx < 0)
                goto done;
            job_tile[idx] = id;
            n_jobs++;
        }
    t.index_tiles = cJSON_CreateArray();
    if (!ctx->opts->quiet)
        tb_log_info("baking %d detail tiles (%d land, %d coast) of %lld, %lld x %lld samples at %g "
                    "m, margin %d",
                    n_jobs, n_land, n_coast, (long long)tb_tile_count(&L), (long long)L.tile_cells,
                    (long long)L.tile_cells, L.cell_m, p.margin_cells);
    if (n_jobs > 0) {
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
    /* the index */
    cJSON *lat = cJSON_AddObjectToObject(index, "lattice");
    cJSON_AddNumberToObject(lat, "cell_m", L.cell_m);
    cJSON_AddNumberToObject(lat, "tile_samples", (double)L.tile_cells);
    cJSON_AddNumberToObject(lat, "size_m", (double)L.tile_cells * L.cell_m);
    cJSON_AddNumberToObject(lat, "columns", (double)L.cols);
    cJSON_AddNumberToObject(lat, "rows", (double)L.rows);
    cJSON_AddNumberToObject(lat, "planet_samples_w", (double)L.lattice_w);
    cJSON_AddNumberToObject(lat, "planet_samples_h", (double)L.lattice_h);
    cJSON_AddStringToObject(lat, "last_row",
                            "partial when the planet's height is not a whole "
                            "number of tiles: its tiles are cut at the planet's "
                            "edge (y grows southward, row 0 is the north)");
    cJSON *enc = cJSON_AddObjectToObject(index, "encoding");
    double el[2] = {m->elevation_min_m, m->elevation_max_m};
    cJSON_AddItemToObject(enc, "elevation_m", cJSON_CreateDoubleArray(el, 2));
    cJSON_AddStringToObject(enc, "height",
                            "<id>.png: 16-bit grey, h = lo + v (hi - lo) / 65535; "
                            "<id>.r16: the same samples, little-endian u16");
    cJSON_AddStringToObject(enc, "rows",
                            "row 0 is the tile's north edge (y = origin), as in "
                            "planet_height.png");
    cJSON_AddStringToObject(enc, "maps",
                            "_flow, _wear, _deposit: 8-bit; _splat: RGBA rock, "
                            "grass, sediment, scree or snow (docs/tiles.md)");
    cJSON_AddNumberToObject(index, "margin_cells", p.margin_cells);
    if (ctx->tile_sel) {
        /* --tiles-only: only the chosen tiles' entries change (coordinator/bake/reuse.c) */
        rerun = tb_bake_tiles_merge(ctx, &t.index_tiles, err);
        if (!rerun)
            goto done;
    }
    int n_index = cJSON_GetArraySize(t.index_tiles);
    cJSON_AddItemToObject(index, "tiles", t.index_tiles);
    t.index_tiles = NULL;
    char *text = cJSON_Print(index);
    if (!text || tb_bake_write_text(ctx, "tiles/index.json", text, err) != 0) {
        free(text);
        goto done;
    }
    free(text);
    if (rerun) {
        cJSON_AddNumberToObject(rerun, "seconds", tb_now_s() - t0);
        cJSON_AddItemToObject(rerun, "dispatch", tb_dispatch_record_json(dispatch));
        ctx->out->tiles_baked = t.written;
        ctx->out->tiles_seconds = tb_now_s() - t0;
        ctx->tiles_meta = tb_bake_tiles_rerun_meta(ctx, rerun, n_index);
        rerun = NULL; /* taken over */
        rc = ctx->tiles_meta ? 0 : tb_err_set(err, TB_E_NOMEM, "out of memory");
        goto done;
    }
    /* meta.json */
    ctx->tiles_meta = cJSON_CreateObject();
    cJSON_AddNumberToObject(ctx->tiles_meta, "tiles", n_jobs);
    cJSON_AddNumberToObject(ctx->tiles_meta, "land", n_land);
    cJSON_AddNumberToObject(ctx->tiles_meta, "coast", n_coast);
    cJSON_AddNumberToObject(ctx->tiles_meta, "lattice_tiles", (double)tb_tile_count(&L));
    if (ctx->out->partial) {
        cJSON_AddItemToObject(ctx->tiles_meta, "skipped", skipped ? skipped : cJSON_CreateArray());
        skipped = NULL;
        cJSON_AddNumberToObject(ctx->tiles_meta, "regions_from_store", ctx->whole_borrowed);
        bool coast = ctx->whole_coast != NULL;
        cJSON_AddStringToObject(ctx->tiles_meta, "selection",
                                coast ? "the tiles holding land of the regions this bake solved, "
                                        "over the coast of the whole composite"
                                      : "every tile whose window holds only land this bake "
                                        "solved or the store holds");
        if (coast)
            cJSON_AddItemToObject(ctx->tiles_meta, "whole_coast",
                                  cJSON_Duplicate(ctx->whole_coast, true));
        if (!ctx->opts->quiet)
            tb_log_info(
                "partial bake: %d tile(s) skipped: %s",
                cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ctx->tiles_meta, "skipped")),
                coast ? "they hold no land of its regions"
                      : "their windows reach land neither solved here nor stored");
    }
    cJSON_AddNumberToObject(ctx->tiles_meta, "margin_cells", p.margin_cells);
    cJSON_AddNumberToObject(ctx->tiles_meta, "margin_measured_cells",
                            TB_TILES_MEASURED_MARGIN_CELLS);
    cJSON_AddNumberToObject(ctx->tiles_meta, "margin_required_cells",
                            (double)m->tiles.margin_required_cells);
    cJSON_AddNumberToObject(ctx->tiles_meta, "margin_forced", m->tiles.force_margin);
    cJSON_AddNumberToObject(ctx->tiles_meta, "margin_bound_cells",
                            (double)tb_detail_margin_bound(&p));
    cJSON_AddNumberToObject(ctx->tiles_meta, "from_store", (double)ds.from_store);
    cJSON_AddNumberToObject(ctx->tiles_meta, "seconds", tb_now_s() - t0);
    cJSON_AddItemToObject(ctx->tiles_meta, "parameters", tb_detail_params_to_json(&p));
    cJSON_AddItemToObject(ctx->tiles_meta, "detail_statistics", s_stats_json(&t, &L, m));
    cJSON_AddItemToObject(ctx->tiles_meta, "dispatch", tb_dispatch_record_json(dispatch));
    ctx->out->tiles_baked = t.written;
    ctx->out->tiles_from_store = ds.from_store;
    ctx->out->tiles_seconds = tb_now_s() - t0;
    if (!ctx->opts->quiet)
        tb_log_info("%d detail tiles in %.1f s (%zu from the store)", t.written,
                    ctx->out->tiles_seconds, ds.from_store);
    rc = 0;
done:
    cJSON_Delete(skipped);
    cJSON_Delete(rerun);
    if (owned)
        tb_dispatch_destroy(&dispatch);
    cJSON_Delete(t.index_tiles);
    cJSON_Delete(index);
    free(class_idx);
    free(land);
    free(job_tile);
    return rc;
}

const tb_phase_t tb_phase_tiles = {
    .name = "tiles",
    .reads = TB_PLANET_BIT(HEIGHT_M) | TB_PLANET_BIT(AREA_M2) | TB_PLANET_BIT(CLASSES) |
             TB_PLANET_BIT(SOLVED),
    .writes = 0,
    .writes_files = true,
    .skip = s_skip,
    .run = s_run,
};
