/* The coast phase: the planet's final heightmap, height_m, and its extent. With the coastal pass
 * (jobs/coast/coast.h, docs/coast.md) it is the pass's answer over the composite: one job of kind
 * "coast" dispatched like a region - its spec compressed and checksummed by the dispatch engine,
 * its result in the store, reused by a rerun - whose moved and exposure maps are kept and drawn
 * (map_coast.png, map_exposure.png) and whose statistics join the summary (the coast artifact).
 * With `--no-coast` height_m is the composite itself (a second name of its file, no copy), and the
 * moved map, the exposure and the coast artifact are not made. Either way the phase measures the
 * extent of height_m against the manifest's elevation_m, which the bake is judged on. Reads: plan,
 * classes, composite_m, regions (their river mouths). Writes: height_m, extent; moved_m, exposure
 * and coast with the pass. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/bake/phase.h"
#include "coordinator/maps/coast_maps.h"

#define S_MAP_MAX_WIDTH 4096

/* The spec of the coastal pass over the composite with every composited region's river mouths. */
static int s_spec(const tb_bake_ctx_t *ctx, void **bytes, size_t *n, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    const tb_planet_t *p = ctx->planet;
    const tb_bake_regions_t *regions = &ctx->regions;
    size_t n_mouths = regions->n_mouths;
    tb_coast_mouth_t *cm = tb_malloc((n_mouths ? n_mouths : 1) * sizeof *cm, "coast mouths", err);
    if (!cm)
        return -1;
    for (size_t k = 0; k < n_mouths; k++)
        cm[k] = (tb_coast_mouth_t){regions->mouths[k].x, regions->mouths[k].y,
                                   regions->mouths[k].eroded_m3};
    tb_coast_spec_t spec = {.w = tb_planet_w(p),
                            .h = tb_planet_h(p),
                            .cell_m = m->cell_m,
                            .params = m->coast,
                            .height_m = tb_planet_ccomposite_m(p),
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

/* The coast job through the dispatch engine, its result checked against the planet's size before
 * it is read, copied into the rasters. */
static int s_job(tb_bake_ctx_t *ctx, const void *spec, size_t n, tb_err_t *err)
{
    tb_planet_t *p = ctx->planet;
    const char *label = "coast";
    bool owned = false;
    int rc = -1;
    tb_coast_result_t r = {0};
    /* in farm mode the bake's one engine, in a new batch: the coast job goes to the farm's
     * workers like the regions (docs/coast.md, "In the bake") */
    tb_dispatch_batch_t batch = {.label = label, .on_tick = s_on_tick, .user = ctx};
    /* the result is read after the run */
    if (tb_bake_reuses_outputs(ctx) &&
        tb_bake_require_stored(ctx, "coast", spec, n, label, err) != 0) {
        ctx->out->bad_input = true; /* nothing was written: exit 2, as for a region */
        return -1;
    }
    tb_dispatch_t *d = tb_bake_dispatch(ctx, &batch, &owned, err);
    if (!d)
        return -1;
    tb_job_desc_t desc = {.kind = "coast",
                          .spec = spec,
                          .spec_bytes = n,
                          .weight = (double)tb_planet_cells(p),
                          .cells = (double)tb_planet_cells(p),
                          .label = label};
    int drc = tb_dispatch_add(d, &desc, err) < 0 ? -1 : tb_dispatch_run(d, err);
    ctx->coast.record = tb_dispatch_record_json(d);
    if (drc != 0)
        goto done;
    size_t bytes = 0;
    const void *data = tb_dispatch_result(d, 0, &bytes);
    if (!data) {
        tb_err_set(err, TB_E_INTERNAL, "%s: the job finished without a result", label);
        goto done;
    }
    if (tb_coast_result_decode(data, bytes, &r, err) != 0)
        goto done;
    if (r.w != tb_planet_w(p) || r.h != tb_planet_h(p)) {
        tb_err_set(err, TB_E_FORMAT, "%s: the result is for a %lld x %lld planet, not %lld x %lld",
                   label, (long long)r.w, (long long)r.h, (long long)tb_planet_w(p),
                   (long long)tb_planet_h(p));
        goto done;
    }
    size_t cells = tb_planet_cells(p);
    memcpy(tb_planet_height_m(p), r.height_m, cells * sizeof(float));
    memcpy(tb_planet_moved_m(p), r.moved_m, cells * sizeof(float));
    memcpy(tb_planet_exposure(p), r.exposure, cells * sizeof(uint16_t));
    tb_planet_release_all(p, TB_PLANET_BIT(HEIGHT_M) | TB_PLANET_BIT(MOVED_M) |
                                 TB_PLANET_BIT(EXPOSURE));
    ctx->coast.stats = r.stats;
    rc = 0;
done:
    tb_coast_result_free(&r);
    if (owned)
        tb_dispatch_destroy(&d);
    return rc;
}

static int s_maps(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_planet_t *p = ctx->planet;
    const tb_manifest_t *m = ctx->plan.manifest;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    uint8_t land_of[256] = {0};
    for (int c = 0; c < m->legend.n_classes; c++)
        land_of[c] = m->legend.classes[c].kind == TB_CLASS_LAND;
    tb_rows_hook_t done = tb_planet_rows_hook(p);
    tb_image_t img = {0};
    int rc = -1;
    if (tb_map_coast_classes(tb_planet_cmoved_m(p), tb_planet_cheight_m(p), tb_planet_cclasses(p),
                             land_of, w, h, m->coast.break_depth_m, S_MAP_MAX_WIDTH, &done, &img,
                             NULL, err) != 0 ||
        tb_bake_write_png(ctx, "map_coast.png", &img, err) != 0)
        goto done;
    tb_image_free(&img);
    if (tb_map_exposure_classes(tb_planet_cexposure(p), tb_planet_cclasses(p), land_of, w, h,
                                S_MAP_MAX_WIDTH, &done, &img, err) != 0 ||
        tb_bake_write_png(ctx, "map_exposure.png", &img, err) != 0)
        goto done;
    rc = 0;
done:
    tb_image_free(&img);
    return rc;
}

/* The extent of height_m against elevation_m, and the share of cells the 16-bit encoding clips. */
static int s_extent(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    size_t cells = tb_planet_cells(ctx->planet);
    tb_bake_outcome_t *out = ctx->out;
    if (tb_stats_extent_measure(tb_planet_cheight_m(ctx->planet), cells, m->elevation_min_m,
                                m->elevation_max_m, &ctx->extent, err) != 0)
        return -1;
    tb_planet_release(ctx->planet, TB_PLANET_HEIGHT_M, 0, tb_planet_h(ctx->planet));
    out->extent = ctx->extent;
    out->clip_fraction = (double)ctx->extent.clipped / (double)cells;
    return 0;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    if (ctx->opts->no_coast) {
        if (tb_planet_alias(ctx->planet, TB_PLANET_HEIGHT_M, TB_PLANET_COMPOSITE_M, err) != 0)
            return -1;
        tb_bake_note(ctx, "--no-coast: no coastal pass; the heightmap is the composite");
        return s_extent(ctx, err);
    }
    double t0 = tb_now_s();
    void *spec = NULL;
    size_t n = 0;
    int rc = -1;
    if (tb_planet_provide(ctx->planet, TB_PLANET_BIT(MOVED_M) | TB_PLANET_BIT(EXPOSURE), err) !=
            0 ||
        s_spec(ctx, &spec, &n, err) != 0 || s_job(ctx, spec, n, err) != 0)
        goto done;
    /* a bake that reuses its outputs keeps the maps it has */
    if (tb_bake_check_interrupted(ctx, err) != 0 ||
        (!tb_bake_reuses_outputs(ctx) && s_maps(ctx, err) != 0) || s_extent(ctx, err) != 0)
        goto done;
    ctx->made |= TB_ART_BIT(COAST);
    ctx->coast.seconds = tb_now_s() - t0;
    if (!ctx->opts->quiet)
        tb_log_info("coast: the coastal pass over %lld x %lld cells took %.1f s",
                    (long long)tb_planet_w(ctx->planet), (long long)tb_planet_h(ctx->planet),
                    ctx->coast.seconds);
    rc = 0;
done:
    free(spec);
    if (rc != 0)
        tb_err_prefix(err, "coast");
    return rc;
}

const tb_phase_t tb_phase_coast = {
    .name = "coast",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(CLASSES) | TB_ART_BIT(COMPOSITE_M) | TB_ART_BIT(REGIONS),
    .writes = TB_ART_BIT(HEIGHT_M) | TB_ART_BIT(EXTENT),
    .writes_maybe = TB_ART_BIT(MOVED_M) | TB_ART_BIT(EXPOSURE) | TB_ART_BIT(COAST),
    .writes_files = true,
    .run = s_run,
};
