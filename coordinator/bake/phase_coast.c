/* The coast phase: the planet's final heightmap, height_m, and its extent. With the coastal pass
 * (jobs/coast/coast.h, docs/coast.md) it is the pass's answer over the composite, run in blocks
 * (jobs/coast/blocks.h, docs/coast.md "Blocks"): the planet cut into windows whose interiors give
 * the whole-cylinder pass's bytes, each one job of kind "coast_block" dispatched like a region -
 * its spec cut from the mapped composite's rows, its result in the store, reused by a rerun - and
 * scattered into height_m, moved_m and exposure as it arrives; the blocks' tallies add up to the
 * pass's statistics. A planet whose whole pass fits one job's memory budget is one block: one job,
 * one round. Larger planets run a probe round (the sources of each drift, for the planet's
 * fixed-point bits) and then the full round with those bits (rarely one more). The moved and
 * exposure maps are drawn (map_coast.png, map_exposure.png) and the statistics join the summary
 * (the coast artifact). With `--no-coast` height_m is the composite itself (a second name of its
 * file, no copy), and the moved map, the exposure and the coast artifact are not made. Either way
 * the phase measures the extent of height_m against the manifest's elevation_m, which the bake is
 * judged on. A rerun on the same inputs takes the previous bake's bits and runs no probe
 * (s_known_share). Reads: plan, classes, composite_m, regions (their river mouths); previous when
 * there is one. Writes: height_m, extent; moved_m, exposure and coast with the pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "coordinator/bake/phase.h"
#include "coordinator/farm/jobwork.h"
#include "coordinator/maps/coast_maps.h"
#include "jobs/coast/blocks.h"

#define S_MAP_MAX_WIDTH 4096

/* One round of the blocks: where its specs are cut from and its results scattered into. */
typedef struct {
    tb_bake_ctx_t *ctx;
    const tb_coast_layout_t *layout;
    bool probe;
    tb_coast_view_t in;
    const tb_coast_mouth_t *mouths;
    tb_coast_classes_t legend;
    tb_coast_share_t share;
    tb_coast_out_view_t out;
    tb_coast_tally_t sum;
    bool failed;
    tb_err_t err;
} s_round_t;

/* report.html's live view of the coast jobs (coordinator/report/report.h) */
static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((s_round_t *)user)->ctx->live, d);
}

/* The cut's hook: the composite's and the classes' rows it has read leave memory as it goes. */
static void s_release_in(void *user, int64_t y0, int64_t y1)
{
    tb_planet_release(user, TB_PLANET_COMPOSITE_M, y0, y1);
    tb_planet_release(user, TB_PLANET_CLASSES, y0, y1);
}

/* A block's spec, made when the engine needs it (a helper thread: it reads the mapped composite and
 * classes, which do not change while the round runs). */
static int s_make_spec(void *user, size_t index, void **spec, size_t *bytes, tb_err_t *err)
{
    const s_round_t *r = user;
    const tb_manifest_t *m = r->ctx->plan.manifest;
    if (tb_coast_block_cut(r->layout, index, &r->in, r->mouths, r->ctx->regions.n_mouths, &m->coast,
                           &r->legend, &r->share, r->probe, spec, bytes, err) != 0)
        return -1;
    const tb_coast_rect_t *w = &r->layout->blocks[index].window;
    tb_planet_release(r->ctx->planet, TB_PLANET_COMPOSITE_M, w->y0, w->y0 + w->h);
    tb_planet_release(r->ctx->planet, TB_PLANET_CLASSES, w->y0, w->y0 + w->h);
    return 0;
}

/* A block's result, as it comes: its interior scattered (the planet's rows it wrote let go as it
 * goes, through r->out.done), its tally added. */
static void s_on_take(void *user, size_t index, tb_result_t *result)
{
    s_round_t *r = user;
    /* a mapped result's rows leave memory as they are scattered (tb_job_result_done) */
    tb_jobwork_result_done_hook(result);
    if (!r->failed &&
        tb_coast_block_scatter(r->layout, index, tb_result_data(result), tb_result_bytes(result),
                               r->probe, r->probe ? NULL : &r->out, &r->sum, &r->err) != 0) {
        tb_err_prefix(&r->err, "coast block %zu", index + 1);
        r->failed = true;
    }
    tb_job_set_result_done(NULL, NULL);
    tb_result_destroy(&result);
}

/* The river mouths of every composited region, as the pass takes them. */
static tb_coast_mouth_t *s_mouths(const tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_regions_t *regions = &ctx->regions;
    tb_coast_mouth_t *cm =
        tb_malloc((regions->n_mouths ? regions->n_mouths : 1) * sizeof *cm, "coast mouths", err);
    for (size_t k = 0; cm && k < regions->n_mouths; k++)
        cm[k] = (tb_coast_mouth_t){regions->mouths[k].x, regions->mouths[k].y,
                                   regions->mouths[k].eroded_m3};
    return cm;
}

/* One round: a lazy job of kind coast_block per block, each scattered as it arrives (any order: the
 * interiors are disjoint and the tallies add integers); the coast's record is the round's. */
static int s_round(tb_bake_ctx_t *ctx, const tb_coast_layout_t *l, s_round_t *r, tb_err_t *err)
{
    tb_dispatch_batch_t batch = {.label = r->probe ? "coast probe" : "coast",
                                 .on_take = s_on_take,
                                 .unordered = true,
                                 .on_tick = s_on_tick,
                                 .user = r};
    /* a bake that reuses its outputs computes nothing: the coast comes from the store */
    for (size_t b = 0; tb_bake_reuses_outputs(ctx) && b < l->n; b++) {
        void *spec = NULL;
        size_t n = 0;
        int rc = s_make_spec(r, b, &spec, &n, err) == 0
                     ? tb_bake_require_stored(ctx, "coast_block", spec, n, "coast", err)
                     : -1;
        free(spec);
        if (rc != 0) {
            ctx->out->bad_input = true; /* nothing was written: exit 2, as for a region */
            return -1;
        }
    }
    tb_dispatch_t *d = tb_bake_dispatch(ctx, &batch, err);
    if (!d)
        return -1;
    for (size_t b = 0; b < l->n; b++) {
        char label[64];
        snprintf(label, sizeof label, l->n == 1 ? "coast" : "coast block %zu of %zu%s", b + 1, l->n,
                 r->probe ? " (probe)" : "");
        const tb_coast_rect_t *w = &l->blocks[b].window;
        double cells = (double)w->w * (double)w->h;
        tb_job_desc_t desc = {.kind = "coast_block",
                              .make_spec = s_make_spec,
                              .spec_user = r,
                              .weight = cells,
                              .cells = cells,
                              .memory_bytes = (double)l->blocks[b].peak_bytes,
                              .label = label};
        if (tb_dispatch_add(d, &desc, err) < 0)
            return -1;
    }
    int drc = tb_dispatch_run(d, err);
    cJSON_Delete(ctx->coast.record);
    ctx->coast.record = tb_dispatch_record_json(d);
    if (drc != 0)
        return -1;
    if (r->failed) {
        *err = r->err;
        return -1;
    }
    return 0;
}

/* The previous bake's final bits, into *share, when it ran the coast on these very inputs (its
 * coast phase's input key is this one's: the same composite, classes, mouths, plan and tool) in
 * blocks. A rerun then runs one full round where a first bake probes first, and takes that round
 * from the store. The bits are checked as any round's are: tb_coast_share_next calls a round final
 * only when its tally proves it used the planet's own bits (the first drift's sources do not depend
 * on them, and with the first drift's right the second's are exact), so a meta.json that lies costs
 * rounds, never a byte of the planet. */
static bool s_known_share(const tb_bake_ctx_t *ctx, const tb_coast_layout_t *l,
                          tb_coast_share_t *share)
{
    const cJSON *prev = ctx->previous.meta;
    if (!prev || ctx->n_records == 0 || ctx->opts->dispatch.fresh)
        return false;
    bool same =
        tb_bake_previous_phase(ctx, "coast", ctx->records[ctx->n_records - 1].input_key) != NULL;
    const cJSON *coast = cJSON_GetObjectItemCaseSensitive(prev, "coast");
    const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(coast, "blocks");
    const cJSON *bits = cJSON_GetObjectItemCaseSensitive(coast, "share_bits");
    if (!same || !cJSON_IsNumber(blocks) || blocks->valuedouble != (double)l->n ||
        !cJSON_IsArray(bits) || cJSON_GetArraySize(bits) != 2)
        return false;
    for (int k = 0; k < 2; k++) {
        const cJSON *b = cJSON_GetArrayItem(bits, k);
        if (!cJSON_IsNumber(b) || b->valuedouble < 0 || b->valuedouble > 61 ||
            b->valuedouble != (double)(int)b->valuedouble)
            return false;
        share->bits[k] = (int)b->valuedouble;
    }
    return true;
}

/* The pass in blocks: rounds until one used the planet's own bits (tb_coast_share_next). */
static int s_pass(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_planet_t *p = ctx->planet;
    const tb_manifest_t *m = ctx->plan.manifest;
    tb_coast_layout_t l = {0};
    tb_coast_mouth_t *mouths = s_mouths(ctx, err);
    s_round_t r = {.ctx = ctx,
                   .layout = &l,
                   .mouths = mouths,
                   .in = {.height_m = tb_planet_ccomposite_m(p),
                          .classes = tb_planet_cclasses(p),
                          .stride = (size_t)tb_planet_w(p),
                          .row0 = 0,
                          .done = {.fn = s_release_in, .user = p}},
                   .out = {.height_m = tb_planet_height_m(p),
                           .moved_m = tb_planet_moved_m(p),
                           .exposure = tb_planet_exposure(p),
                           .stride = (size_t)tb_planet_w(p),
                           .row0 = 0,
                           .done = tb_planet_rows_hook(p)}};
    bool have_sum = false;
    int rc = -1;
    double budget = tb_bake_job_memory(ctx);
    if (budget > TB_BAKE_COAST_JOB_MAX)
        budget = TB_BAKE_COAST_JOB_MAX;
    if (!mouths || tb_coast_layout_plan(tb_planet_w(p), tb_planet_h(p), m->cell_m, &m->coast,
                                        (size_t)budget, &l, err) != 0)
        goto done;
    tb_coast_classes_from_legend(&m->legend, &r.legend);
    bool whole = tb_coast_layout_is_whole(&l), final = false;
    r.share = whole ? (tb_coast_share_t){{-1, -1}} : (tb_coast_share_t){{30, 30}};
    bool known = !whole && s_known_share(ctx, &l, &r.share);
    r.probe = !whole && !known;
    ctx->coast.blocks = (int)l.n;
    ctx->coast.probed = r.probe;
    ctx->coast.known = known;
    if (!ctx->opts->quiet && !whole)
        tb_log_info("coast: %zu blocks (%lld x %lld) with a halo of %lld cells, each job at most "
                    "%.2f GB; %s",
                    l.n, (long long)l.nx, (long long)l.ny, (long long)l.halo,
                    (double)l.peak_bytes / 1e9,
                    known ? "no probe: the bits of the previous bake, on the same inputs"
                          : "a probe round first");
    for (int round = 0; !final; round++) {
        if (round == 4) {
            tb_err_set(err, TB_E_INTERNAL, "the coast's blocks did not settle in 4 rounds");
            goto done;
        }
        if (have_sum)
            tb_coast_tally_free(&r.sum);
        if (tb_coast_tally_init(&r.sum, err) != 0)
            goto done;
        have_sum = true;
        if (s_round(ctx, &l, &r, err) != 0)
            goto done;
        ctx->coast.rounds = round + 1;
        ctx->coast.share = r.share;
        tb_coast_share_t next;
        if (tb_coast_share_next(&r.sum, &r.share, r.probe, &next, &final, err) != 0)
            goto done;
        r.share = next;
        r.probe = false;
    }
    tb_coast_stats_from_tally(&r.sum, m->cell_m, &ctx->coast.stats);
    rc = 0;
done:
    if (have_sum)
        tb_coast_tally_free(&r.sum);
    tb_coast_layout_free(&l);
    free(mouths);
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
    /* in bands of rows, each given back once measured (the mapped heights of a 300 km planet are
     * 1.8 GB); the bands' extremes and counts add up to the whole array's, exactly */
    const float *height = tb_planet_cheight_m(ctx->planet);
    int64_t w = tb_planet_w(ctx->planet), h = tb_planet_h(ctx->planet), band = 256;
    tb_stats_extent_t all = {.min_m = NAN, .max_m = NAN};
    for (int64_t y0 = 0; y0 < h; y0 += band) {
        int64_t y1 = y0 + band < h ? y0 + band : h;
        tb_stats_extent_t e;
        if (tb_stats_extent_measure(height + (size_t)y0 * (size_t)w, (size_t)(y1 - y0) * (size_t)w,
                                    m->elevation_min_m, m->elevation_max_m, &e, err) != 0)
            return -1;
        tb_planet_release(ctx->planet, TB_PLANET_HEIGHT_M, y0, y1);
        if (!isnan(e.min_m)) {
            all.min_m = isnan(all.min_m) || e.min_m < all.min_m ? e.min_m : all.min_m;
            all.max_m = isnan(all.max_m) || e.max_m > all.max_m ? e.max_m : all.max_m;
        }
        all.cells += e.cells;
        all.clipped += e.clipped;
        all.range_lo_m = e.range_lo_m;
        all.range_hi_m = e.range_hi_m;
    }
    ctx->extent = all;
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
    int rc = -1;
    if (tb_planet_provide(ctx->planet, TB_PLANET_BIT(MOVED_M) | TB_PLANET_BIT(EXPOSURE), err) !=
            0 ||
        s_pass(ctx, err) != 0)
        goto done;
    /* a bake that reuses its outputs keeps the maps it has */
    if (tb_bake_check_interrupted(ctx, err) != 0 ||
        (!tb_bake_reuses_outputs(ctx) && s_maps(ctx, err) != 0) || s_extent(ctx, err) != 0)
        goto done;
    ctx->made |= TB_ART_BIT(COAST);
    /* the coast's identity for the later phases: its statistics, exactly */
    cJSON *cs = tb_coast_stats_to_json(&ctx->coast.stats);
    char *text = cs ? tb_json_print(cs, false) : NULL;
    ctx->art_hash[TB_ART_COAST] = text ? tb_xxh3(text, strlen(text)) : 0;
    free(text);
    cJSON_Delete(cs);
    ctx->coast.seconds = tb_now_s() - t0;
    if (!ctx->opts->quiet)
        tb_log_info("coast: the coastal pass over %lld x %lld cells took %.1f s",
                    (long long)tb_planet_w(ctx->planet), (long long)tb_planet_h(ctx->planet),
                    ctx->coast.seconds);
    rc = 0;
done:
    if (rc != 0)
        tb_err_prefix(err, "coast");
    return rc;
}

const tb_phase_t tb_phase_coast = {
    .name = "coast",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(CLASSES) | TB_ART_BIT(COMPOSITE_M) | TB_ART_BIT(REGIONS),
    /* the previous bake's final bits, on the same inputs (s_known_share) */
    .reads_maybe = TB_ART_BIT(PREVIOUS),
    .writes = TB_ART_BIT(HEIGHT_M) | TB_ART_BIT(EXTENT),
    .writes_maybe = TB_ART_BIT(MOVED_M) | TB_ART_BIT(EXPOSURE) | TB_ART_BIT(COAST),
    .writes_files = true,
    .run = s_run,
};
