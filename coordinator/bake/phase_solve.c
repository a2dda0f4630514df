/* The solve phase: one region job per selected region (jobs/region.h), run through the dispatch
 * engine (coordinator/farm/dispatch.h) in-process or on workers, each result composited into the
 * planet's rasters as it arrives; in a partial bake (--only), every other region whose result of
 * this build the store holds is composited too, "borrowed", so that a partial bake differs from a
 * whole one only in what the solve feeds in (docs/bake.md, "Partial bakes").
 *
 * Composite rule: each region's result writes exactly the cells of its own land (its solve mask),
 * so no margin cell of one region ever overwrites another's land, and the order in which results
 * arrive does not matter: they are delivered as they come (unordered), and a result is read in
 * place a row at a time (tb_region_result_view: a large one is a mapping of a file, whose rows are
 * given back as they are read), never copied whole. Cells no region composited keep the rasters'
 * fill (land at 0 m, basin -1). The statistics of the regions solved here are merged in region
 * order once all are in (docs/determinism.md, rule 4); the river mouths of every region composited
 * are kept for the coast. A region's spec is made when the engine is about to need it (a lazy job),
 * so the coordinator holds a few specs at a time, not every region's class raster. Reads: plan,
 * classes. Writes: land_m, area_m2, basin, uplift_m_yr, solved, regions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/log.h"
#include "common/version.h"
#include "coordinator/bake/phase.h"
#include "coordinator/farm/cache.h"
#include "jobs/plan/limits.h"
#include "jobs/region.h"

typedef struct {
    tb_bake_ctx_t *ctx;
    int *job_region;         /* job index -> region index */
    uint64_t *borrowed_xxh3; /* [region index]: a borrowed region's result hash */
    tb_stats_t **stats;      /* [region index]: the region's statistics, merged at the end */
    bool failed;
    tb_err_t err;
} s_solve_t;

static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((s_solve_t *)user)->ctx->live, d);
}

/* Appends a region's river mouths to the bake's list (the coast phase reads them). */
static int s_keep_mouths(tb_bake_regions_t *regions, const tb_region_result_view_t *v,
                         tb_err_t *err)
{
    if (regions->n_mouths + v->n_mouths > regions->cap_mouths) {
        size_t cap = (regions->n_mouths + v->n_mouths) * 2 + 16;
        tb_region_mouth_t *m = realloc(regions->mouths, cap * sizeof *m);
        if (!m)
            return tb_err_set(err, TB_E_NOMEM, "out of memory for %zu river mouths", cap);
        regions->mouths = m;
        regions->cap_mouths = cap;
    }
    for (size_t k = 0; k < v->n_mouths; k++)
        tb_region_view_mouth(v, k, &regions->mouths[regions->n_mouths++]);
    return 0;
}

/* Composites the result of region index ri, read in place a row at a time (its land only), and
 * keeps its mouths; each row of the result and of the rasters is let go once written. `result`
 * (may be NULL) is the engine's: its rows are given back as they are read. *stats (may be NULL)
 * gets the region's decoded statistics. */
static int s_composite(tb_bake_ctx_t *ctx, int ri, const void *data, size_t bytes,
                       tb_result_t *result, tb_stats_t **stats, tb_err_t *err)
{
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan.plan, ri);
    tb_region_result_view_t v;
    if (tb_region_result_view(data, bytes, &v, err) != 0)
        return -1;
    if (v.box.x0 != reg->box.x0 || v.box.y0 != reg->box.y0 || v.box.w != reg->box.w ||
        v.box.h != reg->box.h)
        return tb_err_set(err, TB_E_FORMAT, "the result is for another box");
    tb_grid_t *mask = NULL;
    size_t rowbytes = (size_t)v.box.w * 4;
    float *hrow = tb_malloc(rowbytes, "a result row", err);
    float *arow = tb_malloc(rowbytes, "a result row", err);
    float *urow = tb_malloc(rowbytes, "a result row", err);
    int32_t *brow = tb_malloc(rowbytes, "a result row", err);
    int rc = -1;
    if (!hrow || !arow || !urow || !brow ||
        tb_plan_region_grids(ctx->plan.plan, ri, NULL, &mask, err) != 0)
        goto done;
    tb_planet_t *planet = ctx->planet;
    const uint8_t *m = tb_grid_cu8(mask);
    float *land = tb_planet_land_m(planet), *area = tb_planet_area_m2(planet);
    float *uplift = tb_planet_uplift_m_yr(planet);
    int32_t *basin = tb_planet_basin(planet);
    uint8_t *solved = tb_planet_solved(planet);
    int64_t w = tb_planet_w(planet);
    const unsigned char *base = data;
    for (int64_t j = 0; j < v.box.h; j++) {
        size_t at = (size_t)j * rowbytes;
        /* the planes are not aligned for float reads: a row of each is copied out */
        memcpy(hrow, v.height_m + at, rowbytes);
        memcpy(arow, v.area_m2 + at, rowbytes);
        memcpy(brow, v.basin + at, rowbytes);
        memcpy(urow, v.uplift_m_yr + at, rowbytes);
        const uint8_t *mr = m + (size_t)j * (size_t)v.box.w;
        size_t row = (size_t)(v.box.y0 + j) * (size_t)w;
        for (int64_t i = 0; i < v.box.w; i++) {
            if (!mr[i])
                continue;
            size_t pi = row + (size_t)tb_frame_lattice_x(&v.box, i);
            land[pi] = hrow[i];
            area[pi] = arow[i];
            basin[pi] = brow[i];
            uplift[pi] = urow[i];
            solved[pi] = 1;
        }
        if (result) {
            tb_result_done_with(result, (size_t)(v.height_m + at - base), rowbytes);
            tb_result_done_with(result, (size_t)(v.area_m2 + at - base), rowbytes);
            tb_result_done_with(result, (size_t)(v.basin + at - base), rowbytes);
            tb_result_done_with(result, (size_t)(v.uplift_m_yr + at - base), rowbytes);
        }
        for (tb_planet_array_t a = TB_PLANET_LAND_M; a <= TB_PLANET_SOLVED; a++)
            tb_planet_release(planet, a, v.box.y0 + j, v.box.y0 + j + 1);
    }
    if (s_keep_mouths(&ctx->regions, &v, err) != 0)
        goto done;
    if (stats && !(*stats = tb_stats_decode(v.stats, v.stats_bytes, err)))
        goto done;
    rc = 0;
done:
    tb_grid_destroy(&mask);
    free(hrow);
    free(arow);
    free(urow);
    free(brow);
    return rc;
}

/* A region's result, as it comes (any order, on the caller's thread): composited, then given back.
 */
static void s_on_take(void *user, size_t index, tb_result_t *result)
{
    s_solve_t *s = user;
    int ri = s->job_region[index];
    if (!s->failed && s_composite(s->ctx, ri, tb_result_data(result), tb_result_bytes(result),
                                  result, &s->stats[ri], &s->err) != 0) {
        tb_err_prefix(&s->err, "region %d", tb_plan_region(s->ctx->plan.plan, ri)->id);
        s->failed = true;
    }
    tb_result_destroy(&result);
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

typedef struct {
    const tb_plan_t *plan;
    int ri;
} s_rows_t;

static void s_spec_rows(void *user, int64_t j, uint8_t *classes, uint8_t *solve_mask)
{
    const s_rows_t *r = user;
    tb_plan_region_row(r->plan, r->ri, j, classes, solve_mask);
}

int tb_bake_region_spec(const tb_bake_ctx_t *ctx, int ri, void **bytes, size_t *n, tb_err_t *err)
{
    const tb_bake_plan_t *pl = &ctx->plan;
    const tb_plan_region_t *reg = tb_plan_region(pl->plan, ri);
    if (!reg)
        return tb_err_set(err, TB_E_INVALID, "plan: no region with index %d", ri);
    tb_region_spec_t spec = {.region_id = reg->id,
                             .box = reg->box,
                             .steps = pl->steps,
                             .manifest = pl->manifest,
                             .probes = &pl->probes,
                             .no_incision = ctx->opts->no_incision};
    /* the box's classes and mask go from the plan's rasters straight into the spec, a row at a
     * time (no box-sized grids beside it) */
    s_rows_t rows = {pl->plan, ri};
    return tb_region_spec_encode_rows(&spec, s_spec_rows, &rows, bytes, n, err);
}

/* A region job's spec, made when the engine needs it (a helper thread: it reads only the plan). */
static int s_make_spec(void *user, size_t index, void **spec, size_t *bytes, tb_err_t *err)
{
    const s_solve_t *s = user;
    return tb_bake_region_spec(s->ctx, s->job_region[index], spec, bytes, err);
}

/* Adds the job of region index ri as job `index` (its spec made lazily); 0 or -1. */
static int s_add_region_job(tb_bake_ctx_t *ctx, tb_dispatch_t *d, s_solve_t *s, int ri,
                            tb_err_t *err)
{
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan.plan, ri);
    char label[32];
    snprintf(label, sizeof label, "region %d", reg->id);
    /* a bake that reuses its outputs solves nothing: every region comes from the store */
    if (tb_bake_reuses_outputs(ctx)) {
        void *bytes;
        size_t n;
        if (tb_bake_region_spec(ctx, ri, &bytes, &n, err) != 0)
            return -1;
        int rc = tb_bake_require_stored(ctx, "region", bytes, n, label, err);
        free(bytes);
        if (rc != 0)
            return -1;
    }
    s->job_region[tb_dispatch_count(d)] = ri;
    tb_job_desc_t desc = {.kind = "region",
                          .make_spec = s_make_spec,
                          .spec_user = s,
                          .weight = (double)reg->box_cells * ctx->plan.steps,
                          .cells = (double)reg->land_cells,
                          .label = label,
                          .memory_bytes = tb_plan_region_peak_bytes(reg->box_cells),
                          .deadline_s = s_region_deadline_s(reg->box_cells, ctx->plan.steps)};
    return tb_dispatch_add(d, &desc, err) < 0 ? -1 : 0;
}

/* A partial bake's region ri, not selected: composited from its stored result of this build when
 * there is a usable one (1), else left out (0, the region is missing); -1 on an error. A stored
 * result is checked as the dispatch engine checks one (its checksum, the kind's check, the
 * decoder, the box); one that fails is not used. */
static int s_borrow(tb_bake_ctx_t *ctx, tb_cache_t *cache, int ri, uint64_t *xxh3, tb_err_t *err)
{
    const tb_job_kind_t *kind = tb_job_find("region");
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan.plan, ri);
    void *spec = NULL, *data = NULL;
    size_t n = 0, bytes = 0;
    int rc = -1;
    if (!kind || tb_bake_region_spec(ctx, ri, &spec, &n, err) != 0)
        goto done;
    tb_cache_key_t key;
    tb_cache_key_make(&key, tb_build_id(), "region", spec, n, NULL, 0);
    tb_err_t e;
    int got = tb_cache_get(cache, &key, tb_job_result_bound(kind, spec, n), &data, &bytes, &e);
    if (got <= 0 || tb_job_check_result(kind, spec, n, data, bytes, &e) != 0) {
        if (got != 0)
            tb_log_warn("region %d: stored result unusable, left out: %s", reg->id, e.msg);
        rc = 0;
        goto done;
    }
    *xxh3 = tb_xxh3(data, bytes);
    if (s_composite(ctx, ri, data, bytes, NULL, NULL, &e) != 0) {
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
    free(data);
    free(spec);
    return rc;
}

/* The regions a partial bake did not solve: borrowed from the store, or missing. */
static int s_borrow_others(tb_bake_ctx_t *ctx, s_solve_t *s, tb_err_t *err)
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
        int b = s_borrow(ctx, cache, ri, &s->borrowed_xxh3[ri], err);
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
    tb_dispatch_t *d = NULL;
    uint64_t *result_xxh3 = NULL;
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
                                 .on_take = s_on_take,
                                 .unordered = true,
                                 .on_tick = s_on_tick,
                                 .user = &s};
    d = tb_bake_dispatch(ctx, &batch, err);
    if (!d)
        goto done;
    for (int ri = 0; ri < n_regions; ri++) {
        if (!ctx->plan.selected[ri])
            continue;
        if (s_add_region_job(ctx, d, &s, ri, err) != 0)
            goto done;
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
    /* what the solve fed in, for the later phases' keys: each region's result hash (0 missing) */
    result_xxh3 = tb_calloc((size_t)n_regions + 1, sizeof *result_xxh3, "region hashes", err);
    if (!result_xxh3)
        goto done;
    for (size_t j = 0; j < tb_dispatch_count(d); j++) {
        tb_job_record_t jr;
        tb_dispatch_record(d, j, &jr);
        result_xxh3[job_region[j]] = jr.result_xxh3;
    }
    s.borrowed_xxh3 = result_xxh3;
    if (out->partial && s_borrow_others(ctx, &s, err) != 0)
        goto done;
    ctx->art_hash[TB_ART_REGIONS] =
        tb_xxh3(result_xxh3, (size_t)n_regions * sizeof *result_xxh3) ^ (uint64_t)regions->solved;
    rc = 0;
done:
    for (int ri = 0; stats && ri < n_regions; ri++)
        tb_stats_destroy(&stats[ri]);
    free(stats);
    free(job_region);
    free(result_xxh3);
    return rc;
}

const tb_phase_t tb_phase_solve = {
    .name = "solve",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(CLASSES),
    .writes = TB_ART_BIT(LAND_M) | TB_ART_BIT(AREA_M2) | TB_ART_BIT(BASIN) |
              TB_ART_BIT(UPLIFT_M_YR) | TB_ART_BIT(SOLVED) | TB_ART_BIT(REGIONS),
    .run = s_run,
};
