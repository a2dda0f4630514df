/* The coast phase: the coastal pass over the whole cylinder as one job of kind "coast"
 * (jobs/coast/coast.h, docs/coast.md), dispatched like a region - its spec compressed and
 * checksummed by the dispatch engine, its result in the store, reused by a rerun - after the
 * composite. The new heights replace the heightmap (the outputs phase measures its extent); the
 * moved and exposure maps are kept and drawn (map_coast.png, map_exposure.png); the coast block
 * joins the statistics (summary.txt, meta.json). `--no-coast` skips it and leaves the composite as
 * it was. Reads: classes, height_m. Writes: height_m, moved_m, exposure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/bake/phase.h"
#include "coordinator/maps/coast_maps.h"

#define S_MAP_MAX_WIDTH 4096

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    return ctx->opts->no_coast ? "--no-coast" : NULL;
}

int tb_bake_coast_spec(const tb_bake_ctx_t *ctx, const float *height_m,
                       const tb_region_mouth_t *mouths, size_t n_mouths, void **bytes, size_t *n,
                       tb_err_t *err)
{
    const tb_manifest_t *m = ctx->manifest;
    const tb_planet_t *p = ctx->planet;
    tb_coast_mouth_t *cm = tb_malloc((n_mouths ? n_mouths : 1) * sizeof *cm, "coast mouths", err);
    if (!cm)
        return -1;
    for (size_t k = 0; k < n_mouths; k++)
        cm[k] = (tb_coast_mouth_t){mouths[k].x, mouths[k].y, mouths[k].eroded_m3};
    tb_coast_spec_t spec = {.w = tb_planet_w(p),
                            .h = tb_planet_h(p),
                            .cell_m = m->cell_m,
                            .params = m->coast,
                            .height_m = height_m,
                            .classes = tb_planet_cclasses(p),
                            .mouths = cm,
                            .n_mouths = n_mouths};
    tb_coast_classes_from_legend(&m->legend, &spec.legend);
    int rc = tb_coast_spec_encode(&spec, bytes, n, err);
    free(cm);
    return rc;
}

/* report.html's live view of the coast job (coordinator/report/report.h) */
static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((tb_bake_ctx_t *)user)->live, d);
}

int tb_bake_coast_job(tb_bake_ctx_t *ctx, const void *spec, size_t n, const char *label,
                      tb_coast_result_t *r, cJSON **record, tb_err_t *err)
{
    const tb_planet_t *p = ctx->planet;
    bool owned = false;
    int rc = -1;
    *record = NULL;
    *r = (tb_coast_result_t){0};
    /* in farm mode the bake's one engine, in a new batch: the coast job goes to the farm's
     * workers like the regions (docs/coast.md, "In the bake") */
    tb_dispatch_batch_t batch = {.label = label, .on_tick = s_on_tick, .user = ctx};
    /* the result is read after the run */
    tb_dispatch_t *d = NULL;
    if (tb_bake_reuses_outputs(ctx) &&
        tb_bake_require_stored(ctx, "coast", spec, n, label, err) != 0) {
        ctx->out->bad_input = true; /* nothing was written: exit 2, as for a region */
        return -1;
    }
    d = tb_bake_dispatch(ctx, &batch, &owned, err);
    if (!d)
        return -1;
    tb_job_desc_t desc = {.kind = "coast",
                          .spec = spec,
                          .spec_bytes = n,
                          .weight = (double)tb_planet_cells(p),
                          .cells = (double)tb_planet_cells(p),
                          .label = label};
    int drc = tb_dispatch_add(d, &desc, err) < 0 ? -1 : tb_dispatch_run(d, err);
    *record = tb_dispatch_record_json(d);
    if (drc != 0)
        goto done;
    size_t bytes = 0;
    const void *data = tb_dispatch_result(d, 0, &bytes);
    if (!data) {
        tb_err_set(err, TB_E_INTERNAL, "%s: the job finished without a result", label);
        goto done;
    }
    rc = tb_coast_result_decode(data, bytes, r, err);
    /* checked against what was asked before anyone reads it */
    if (rc == 0 && (r->w != tb_planet_w(p) || r->h != tb_planet_h(p))) {
        tb_err_set(err, TB_E_FORMAT, "%s: the result is for a %lld x %lld planet, not %lld x %lld",
                   label, (long long)r->w, (long long)r->h, (long long)tb_planet_w(p),
                   (long long)tb_planet_h(p));
        tb_coast_result_free(r);
        rc = -1;
    }
done:
    if (owned)
        tb_dispatch_destroy(&d);
    return rc;
}

/* Copies the result (its size checked by tb_bake_coast_job) into the planet's arrays. */
static void s_take(tb_bake_ctx_t *ctx, const tb_coast_result_t *r)
{
    tb_planet_t *p = ctx->planet;
    size_t cells = tb_planet_cells(p);
    memcpy(tb_planet_height_m(p), r->height_m, cells * sizeof(float));
    memcpy(tb_planet_moved_m(p), r->moved_m, cells * sizeof(float));
    memcpy(tb_planet_exposure(p), r->exposure, cells * sizeof(uint16_t));
    ctx->coast_stats = r->stats;
}

static int s_maps(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_planet_t *p = ctx->planet;
    const tb_manifest_t *m = ctx->manifest;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    size_t cells = tb_planet_cells(p);
    uint8_t *land = tb_malloc(cells, "coast land mask", err);
    if (!land)
        return -1;
    const uint8_t *cls = tb_planet_cclasses(p);
    for (size_t i = 0; i < cells; i++)
        land[i] = m->legend.classes[cls[i]].kind == TB_CLASS_LAND;
    tb_image_t img = {0};
    int rc = -1;
    if (tb_map_coast(tb_planet_cmoved_m(p), tb_planet_cheight_m(p), land, w, h,
                     m->coast.break_depth_m, S_MAP_MAX_WIDTH, &img, NULL, err) != 0 ||
        tb_bake_write_png(ctx, "map_coast.png", &img, err) != 0)
        goto done;
    tb_image_free(&img);
    if (tb_map_exposure(tb_planet_cexposure(p), land, w, h, S_MAP_MAX_WIDTH, &img, err) != 0 ||
        tb_bake_write_png(ctx, "map_exposure.png", &img, err) != 0)
        goto done;
    rc = 0;
done:
    tb_image_free(&img);
    free(land);
    return rc;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    double t0 = tb_now_s();
    void *spec = NULL;
    size_t n = 0;
    tb_coast_result_t r = {0};
    int rc = -1;
    /* the composited planet and the regions' mouths (in a partial bake its regions only, the
     * others land at 0 m: docs/tiles.md, "Tiles of a partial bake") */
    if (tb_bake_coast_spec(ctx, tb_planet_cheight_m(ctx->planet), ctx->mouths, ctx->n_mouths, &spec,
                           &n, err) != 0 ||
        tb_bake_coast_job(ctx, spec, n, "coast", &r, &ctx->coast_record, err) != 0)
        goto done;
    s_take(ctx, &r);
    /* a bake that reuses its outputs keeps the maps it has */
    if (tb_bake_check_interrupted(ctx, err) != 0 ||
        (!tb_bake_reuses_outputs(ctx) && s_maps(ctx, err) != 0))
        goto done;
    ctx->coast_ran = true;
    ctx->coast_s = tb_now_s() - t0;
    if (!ctx->opts->quiet)
        tb_log_info("coast: the coastal pass over %lld x %lld cells took %.1f s", (long long)r.w,
                    (long long)r.h, ctx->coast_s);
    rc = 0;
done:
    tb_coast_result_free(&r);
    free(spec);
    if (rc != 0)
        tb_err_prefix(err, "coast");
    return rc;
}

const tb_phase_t tb_phase_coast = {
    .name = "coast",
    .reads = TB_PLANET_BIT(CLASSES) | TB_PLANET_BIT(HEIGHT_M),
    .writes = TB_PLANET_BIT(HEIGHT_M) | TB_PLANET_BIT(MOVED_M) | TB_PLANET_BIT(EXPOSURE),
    .writes_files = true,
    .skip = s_skip,
    .run = s_run,
};
