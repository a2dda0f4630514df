/* The solve phase: one region job per selected region (jobs/region.h), run through the dispatch
 * engine (coordinator/farm/dispatch.h) in-process or on workers, each result composited into the
 * planet's rasters as it arrives; in a partial bake (--only), every other region whose result of
 * this build the store holds is composited too, "borrowed", so that a partial bake differs from a
 * whole one only in what the solve feeds in (docs/bake.md, "Partial bakes").
 *
 * Composite rule: each region's result writes exactly the cells of its own land (its solve mask),
 * so no margin cell of one region ever overwrites another's land, and the order in which results
 * arrive does not matter; cells no region composited keep the rasters' fill (land at 0 m, basin
 * -1). The statistics of the regions solved here are merged in region order once all are in
 * (docs/determinism.md, rule 4); the river mouths of every region composited are kept for the
 * coast. Reads: plan, classes. Writes: land_m, area_m2, basin, uplift_m_yr, solved, regions. */
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "common/version.h"
#include "coordinator/bake/phase.h"
#include "coordinator/farm/cache.h"
#include "jobs/region.h"

typedef struct {
    tb_bake_ctx_t *ctx;
    const int *job_region; /* job index -> region index */
    tb_stats_t **stats;    /* [region index]: the region's statistics, merged at the end */
    bool failed;
    tb_err_t err;
} s_solve_t;

static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((s_solve_t *)user)->ctx->live, d);
}

/* Appends a region's river mouths to the bake's list (the coast phase reads them). */
static int s_keep_mouths(tb_bake_regions_t *regions, const tb_region_result_t *r, tb_err_t *err)
{
    if (regions->n_mouths + r->n_mouths > regions->cap_mouths) {
        size_t cap = (regions->n_mouths + r->n_mouths) * 2 + 16;
        tb_region_mouth_t *m = realloc(regions->mouths, cap * sizeof *m);
        if (!m)
            return tb_err_set(err, TB_E_NOMEM, "out of memory for %zu river mouths", cap);
        regions->mouths = m;
        regions->cap_mouths = cap;
    }
    for (size_t k = 0; k < r->n_mouths; k++)
        regions->mouths[regions->n_mouths++] = r->mouths[k];
    return 0;
}

/* Writes a decoded result of region index ri into the rasters (its land only) and keeps its mouths;
 * then lets the rows of its box go. */
static int s_composite(tb_bake_ctx_t *ctx, int ri, const tb_region_result_t *r, tb_err_t *err)
{
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan.plan, ri);
    if (r->box.x0 != reg->box.x0 || r->box.y0 != reg->box.y0 || r->box.w != reg->box.w ||
        r->box.h != reg->box.h)
        return tb_err_set(err, TB_E_FORMAT, "the result is for another box");
    tb_grid_t *mask = NULL;
    if (tb_plan_region_grids(ctx->plan.plan, ri, NULL, &mask, err) != 0)
        return -1;
    tb_planet_t *planet = ctx->planet;
    const uint8_t *m = tb_grid_cu8(mask);
    float *land = tb_planet_land_m(planet), *area = tb_planet_area_m2(planet);
    float *uplift = tb_planet_uplift_m_yr(planet);
    int32_t *basin = tb_planet_basin(planet);
    uint8_t *solved = tb_planet_solved(planet);
    int64_t w = tb_planet_w(planet);
    for (int64_t j = 0; j < r->box.h; j++)
        for (int64_t i = 0; i < r->box.w; i++) {
            size_t bi = tb_idx(r->box.w, i, j);
            if (!m[bi])
                continue;
            size_t pi = tb_idx(w, tb_frame_lattice_x(&r->box, i), r->box.y0 + j);
            land[pi] = r->height_m[bi];
            area[pi] = r->area_m2[bi];
            basin[pi] = r->basin[bi];
            uplift[pi] = r->uplift_m_yr[bi];
            solved[pi] = 1;
        }
    tb_grid_destroy(&mask);
    for (tb_planet_array_t a = TB_PLANET_LAND_M; a <= TB_PLANET_SOLVED; a++)
        tb_planet_release(planet, a, r->box.y0, r->box.y0 + r->box.h);
    return s_keep_mouths(&ctx->regions, r, err);
}

static void s_on_result(void *user, size_t index, const void *data, size_t bytes)
{
    s_solve_t *s = user;
    if (s->failed)
        return;
    int ri = s->job_region[index];
    tb_region_result_t r;
    if (tb_region_result_decode(data, bytes, &r, &s->err) != 0)
        goto fail;
    int rc = s_composite(s->ctx, ri, &r, &s->err);
    if (rc == 0 && !(s->stats[ri] = tb_stats_decode(r.stats, r.stats_bytes, &s->err)))
        rc = -1;
    tb_region_result_free(&r);
    if (rc == 0)
        return;
fail:
    tb_err_prefix(&s->err, "region %d", tb_plan_region(s->ctx->plan.plan, ri)->id);
    s->failed = true;
}

static double s_region_deadline_s(int64_t box_cells, int steps)
{
    /* The plan's one-core estimate (TB_PLAN_NS_PER_CELL_STEP, a floor) times 20, and never under
     * ten minutes: generous enough for a slow or shared machine, and still an end to a job that a
     * worker holds without working on it (docs/distribution.md, "Leases"). --job-timeout
     * overrides it. */
    double estimate_s = (double)box_cells * steps * TB_PLAN_NS_PER_CELL_STEP * 1e-9;
    return 600 + 20 * estimate_s;
}

int tb_bake_region_spec(const tb_bake_ctx_t *ctx, int ri, void **bytes, size_t *n, tb_err_t *err)
{
    const tb_bake_plan_t *pl = &ctx->plan;
    const tb_plan_region_t *reg = tb_plan_region(pl->plan, ri);
    tb_grid_t *classes = NULL, *mask = NULL;
    if (tb_plan_region_grids(pl->plan, ri, &classes, &mask, err) != 0)
        return -1;
    tb_region_spec_t spec = {.region_id = reg->id,
                             .box = reg->box,
                             .steps = pl->steps,
                             .manifest = pl->manifest,
                             .probes = &pl->probes,
                             .classes = tb_grid_cu8(classes),
                             .solve_mask = tb_grid_cu8(mask),
                             .no_incision = ctx->opts->no_incision};
    int erc = tb_region_spec_encode(&spec, bytes, n, err);
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    return erc;
}

/* Encodes and adds the job of region index ri; returns its job index, or -1. */
static int64_t s_add_region_job(tb_bake_ctx_t *ctx, tb_dispatch_t *d, int ri, tb_err_t *err)
{
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan.plan, ri);
    void *bytes;
    size_t n;
    if (tb_bake_region_spec(ctx, ri, &bytes, &n, err) != 0)
        return -1;
    char label[32];
    snprintf(label, sizeof label, "region %d", reg->id);
    /* a bake that reuses its outputs solves nothing: every region comes from the store */
    if (tb_bake_reuses_outputs(ctx) &&
        tb_bake_require_stored(ctx, "region", bytes, n, label, err) != 0) {
        free(bytes);
        return -1;
    }
    tb_job_desc_t desc = {.kind = "region",
                          .spec = bytes,
                          .spec_bytes = n,
                          .weight = (double)reg->box_cells * ctx->plan.steps,
                          .cells = (double)reg->land_cells,
                          .label = label,
                          .deadline_s = s_region_deadline_s(reg->box_cells, ctx->plan.steps)};
    int64_t idx = tb_dispatch_add(d, &desc, err);
    free(bytes);
    return idx;
}

/* A partial bake's region ri, not selected: composited from its stored result of this build when
 * there is a usable one (1), else left out (0, the region is missing); -1 on an error. A stored
 * result is checked as the dispatch engine checks one (its checksum, the kind's check, the
 * decoder, the box); one that fails is not used. */
static int s_borrow(tb_bake_ctx_t *ctx, tb_cache_t *cache, int ri, tb_err_t *err)
{
    const tb_job_kind_t *kind = tb_job_find("region");
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan.plan, ri);
    void *spec = NULL, *data = NULL;
    size_t n = 0, bytes = 0;
    tb_region_result_t r;
    bool decoded = false;
    int rc = -1;
    if (!kind || tb_bake_region_spec(ctx, ri, &spec, &n, err) != 0)
        goto done;
    tb_cache_key_t key;
    tb_cache_key_make(&key, tb_build_id(), "region", spec, n, NULL, 0);
    tb_err_t e;
    int got = tb_cache_get(cache, &key, tb_job_result_bound(kind, spec, n), &data, &bytes, &e);
    if (got <= 0 || tb_job_check_result(kind, spec, n, data, bytes, &e) != 0 ||
        tb_region_result_decode(data, bytes, &r, &e) != 0) {
        if (got != 0)
            tb_log_warn("region %d: stored result unusable, left out: %s", reg->id, e.msg);
        rc = 0;
        goto done;
    }
    decoded = true;
    if (s_composite(ctx, ri, &r, &e) != 0) {
        if (e.code == TB_E_NOMEM) {
            *err = e;
            goto done;
        }
        tb_log_warn("region %d: stored result unusable, left out: %s", reg->id, e.msg);
        rc = 0;
        goto done;
    }
    rc = 1;
done:
    if (decoded)
        tb_region_result_free(&r);
    free(data);
    free(spec);
    return rc;
}

/* The regions a partial bake did not solve: borrowed from the store, or missing. */
static int s_borrow_others(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_bake_regions_t *regions = &ctx->regions;
    int n_regions = ctx->plan.n_regions;
    regions->missing =
        tb_calloc((size_t)n_regions + 1, sizeof *regions->missing, "missing regions", err);
    if (!regions->missing)
        return -1;
    tb_cache_t *cache = tb_cache_open(ctx->plan.store_dir, err);
    if (!cache)
        return -1;
    int rc = 0;
    for (int ri = 0; ri < n_regions && rc == 0; ri++) {
        if (ctx->plan.selected[ri])
            continue;
        int b = s_borrow(ctx, cache, ri, err);
        if (b < 0)
            rc = -1;
        else if (b == 0)
            regions->missing[regions->n_missing++] = tb_plan_region(ctx->plan.plan, ri)->id;
        regions->borrowed += b > 0;
    }
    tb_cache_destroy(&cache);
    if (rc == 0 && !ctx->opts->quiet)
        tb_log_info("partial bake: %d other region(s) from the store, %d missing (left at sea "
                    "level)",
                    regions->borrowed, regions->n_missing);
    return rc;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    const tb_manifest_t *m = ctx->plan.manifest;
    tb_bake_outcome_t *out = ctx->out;
    tb_bake_regions_t *regions = &ctx->regions;
    int n_regions = ctx->plan.n_regions;
    int rc = -1;
    bool owned = false;
    tb_dispatch_t *d = NULL;
    int *job_region = tb_calloc((size_t)n_regions + 1, sizeof(int), "job list", err);
    tb_stats_t **stats = tb_calloc((size_t)n_regions + 1, sizeof *stats, "region statistics", err);
    if (!job_region || !stats)
        goto done;
    s_solve_t s = {.ctx = ctx, .job_region = job_region, .stats = stats};
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, m->cell_m);
    sp.talus_deg = m->solve.talus_deg;
    sp.m = m->solve.m;
    sp.n = m->solve.n;
    regions->stats = tb_stats_new(&sp, err);
    if (!regions->stats)
        goto done;
    tb_dispatch_batch_t batch = {.label = o->dispatch.label ? o->dispatch.label : "regions",
                                 .on_result = s_on_result,
                                 .on_tick = s_on_tick,
                                 .user = &s};
    d = tb_bake_dispatch(ctx, &batch, &owned, err);
    if (!d)
        goto done;
    for (int ri = 0; ri < n_regions; ri++) {
        if (!ctx->plan.selected[ri])
            continue;
        int64_t idx = s_add_region_job(ctx, d, ri, err);
        if (idx < 0)
            goto done;
        job_region[idx] = ri;
        regions->solved++;
        out->land_cells_solved += tb_plan_region(ctx->plan.plan, ri)->land_cells;
    }
    out->regions_solved = regions->solved;
    out->bad_input = false;
    if (!o->quiet)
        tb_log_info("baking %d of %d regions, %d steps, into %s", regions->solved, n_regions,
                    ctx->plan.steps, o->out_dir);
    int drc = tb_dispatch_run(d, err);
    tb_dispatch_stats(d, &out->dispatch);
    /* its record, before a later phase's batch replaces the engine's jobs */
    regions->record = tb_dispatch_record_json(d);
    if (drc != 0) {
        /* refused before any job went out: a bad --bind or bad keys, exit 2 */
        out->bad_input = err->code == TB_E_INVALID && out->dispatch.attempts == 0;
        goto done;
    }
    if (s.failed) {
        *err = s.err;
        goto done;
    }
    /* the statistics of the regions solved here, in region order */
    for (int ri = 0; ri < n_regions; ri++)
        if (stats[ri] && tb_stats_merge(regions->stats, stats[ri], err) != 0)
            goto done;
    if (out->partial && s_borrow_others(ctx, err) != 0)
        goto done;
    rc = 0;
done:
    for (int ri = 0; stats && ri < n_regions; ri++)
        tb_stats_destroy(&stats[ri]);
    free(stats);
    free(job_region);
    if (owned)
        tb_dispatch_destroy(&d);
    return rc;
}

const tb_phase_t tb_phase_solve = {
    .name = "solve",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(CLASSES),
    .writes = TB_ART_BIT(LAND_M) | TB_ART_BIT(AREA_M2) | TB_ART_BIT(BASIN) |
              TB_ART_BIT(UPLIFT_M_YR) | TB_ART_BIT(SOLVED) | TB_ART_BIT(REGIONS),
    .run = s_run,
};
