/* The solve phase: one region job per selected region (jobs/region.h), run through the dispatch
 * engine (coordinator/farm/dispatch.h) in-process or on workers, and composited as results arrive.
 *
 * Composite rule: each region's result writes exactly the cells of its own land (its solve mask),
 * in region-id order as the dispatch engine delivers them, so no margin cell of one region ever
 * overwrites another's land; cells no region solved keep the arrays' fill (land at 0 m, basin -1).
 * The statistics of the regions are merged in the same order. Reads: classes (through the plan).
 * Writes: land_m, area_m2, basin, uplift_m_yr, solved, and the regions' river mouths in region
 * order (ctx->mouths, for the coast phase). */
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "coordinator/bake/phase.h"
#include "jobs/region.h"

typedef struct {
    tb_bake_ctx_t *ctx;
    const int *job_region; /* job index -> region index */
    bool failed;
    tb_err_t err;
} s_composite_t;

static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((s_composite_t *)user)->ctx->live, d);
}

/* Appends a region's river mouths to the bake's list (the coast phase reads them). */
static int s_keep_mouths(tb_bake_ctx_t *ctx, const tb_region_result_t *r, tb_err_t *err)
{
    if (ctx->n_mouths + r->n_mouths > ctx->cap_mouths) {
        size_t cap = (ctx->n_mouths + r->n_mouths) * 2;
        tb_region_mouth_t *m = realloc(ctx->mouths, cap * sizeof *m);
        if (!m)
            return tb_err_set(err, TB_E_NOMEM, "out of memory for %zu river mouths", cap);
        ctx->mouths = m;
        ctx->cap_mouths = cap;
    }
    for (size_t k = 0; k < r->n_mouths; k++)
        ctx->mouths[ctx->n_mouths++] = r->mouths[k];
    return 0;
}

static void s_on_result(void *user, size_t index, const void *data, size_t bytes)
{
    s_composite_t *c = user;
    if (c->failed)
        return;
    const tb_plan_t *plan = c->ctx->plan;
    tb_planet_t *planet = c->ctx->planet;
    int ri = c->job_region[index];
    const tb_plan_region_t *reg = tb_plan_region(plan, ri);
    tb_region_result_t r;
    tb_grid_t *mask = NULL;
    tb_stats_t *st = NULL;
    if (tb_region_result_decode(data, bytes, &r, &c->err) != 0)
        goto fail;
    if (r.box.x0 != reg->box.x0 || r.box.y0 != reg->box.y0 || r.box.w != reg->box.w ||
        r.box.h != reg->box.h) {
        tb_err_set(&c->err, TB_E_FORMAT, "region %d: the result is for another box", reg->id);
        goto fail;
    }
    if (tb_plan_region_grids(plan, ri, NULL, &mask, &c->err) != 0)
        goto fail;
    const uint8_t *m = tb_grid_cu8(mask);
    float *land = tb_planet_land_m(planet), *area = tb_planet_area_m2(planet);
    float *uplift = tb_planet_uplift_m_yr(planet);
    int32_t *basin = tb_planet_basin(planet);
    uint8_t *solved = tb_planet_solved(planet);
    int64_t w = tb_planet_w(planet);
    for (int64_t j = 0; j < r.box.h; j++)
        for (int64_t i = 0; i < r.box.w; i++) {
            size_t bi = tb_idx(r.box.w, i, j);
            if (!m[bi])
                continue;
            size_t pi = tb_idx(w, tb_frame_lattice_x(&r.box, i), r.box.y0 + j);
            land[pi] = r.height_m[bi];
            area[pi] = r.area_m2[bi];
            basin[pi] = r.basin[bi];
            uplift[pi] = r.uplift_m_yr[bi];
            solved[pi] = 1;
        }
    if (s_keep_mouths(c->ctx, &r, &c->err) != 0)
        goto fail;
    st = tb_stats_decode(r.stats, r.stats_bytes, &c->err);
    if (!st || tb_stats_merge(c->ctx->stats, st, &c->err) != 0)
        goto fail;
    tb_stats_destroy(&st);
    tb_grid_destroy(&mask);
    tb_region_result_free(&r);
    return;
fail:
    tb_err_prefix(&c->err, "region %d", reg->id);
    c->failed = true;
    tb_stats_destroy(&st);
    tb_grid_destroy(&mask);
    tb_region_result_free(&r);
}

/* "regions 2,3 of 4" for a partial bake: the selected region ids in increasing order. */
static void s_partial_note(const bool *selected, int n_selected, int total, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "region%s ", n_selected > 1 ? "s" : "");
    for (int ri = 0, first = 1; ri < total && k < n; ri++)
        if (selected[ri]) {
            k += (size_t)snprintf(out + k, n - k, "%s%d", first ? "" : ",", ri + 1);
            first = 0;
        }
    if (k < n)
        snprintf(out + k, n - k, " of %d", total);
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
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan, ri);
    tb_grid_t *classes = NULL, *mask = NULL;
    if (tb_plan_region_grids(ctx->plan, ri, &classes, &mask, err) != 0)
        return -1;
    tb_region_spec_t spec = {.region_id = reg->id,
                             .box = reg->box,
                             .steps = ctx->steps,
                             .manifest = ctx->manifest,
                             .probes = &ctx->probes,
                             .classes = tb_grid_cu8(classes),
                             .solve_mask = tb_grid_cu8(mask),
                             .no_incision = ctx->opts->no_incision};
    int erc = tb_region_spec_encode(&spec, bytes, n, err);
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    return erc;
}

/* Encodes and adds the job of region index ri; returns its job index, or -1. */
static int64_t s_add_region_job(tb_bake_ctx_t *ctx, int ri, tb_err_t *err)
{
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan, ri);
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
                          .weight = (double)reg->box_cells * ctx->steps,
                          .cells = (double)reg->land_cells,
                          .label = label,
                          .deadline_s = s_region_deadline_s(reg->box_cells, ctx->steps)};
    int64_t idx = tb_dispatch_add(ctx->dispatch, &desc, err);
    free(bytes);
    return idx;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    const tb_manifest_t *m = ctx->manifest;
    tb_bake_outcome_t *out = ctx->out;
    int n_regions = tb_plan_region_count(ctx->plan);
    int rc = -1;
    int *job_region = tb_calloc((size_t)n_regions + 1, sizeof(int), "job list", err);
    if (!job_region)
        return -1;
    s_composite_t c = {.ctx = ctx, .job_region = job_region};
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, m->cell_m);
    sp.talus_deg = m->solve.talus_deg;
    sp.m = m->solve.m;
    sp.n = m->solve.n;
    ctx->stats = tb_stats_new(&sp, err);
    if (!ctx->stats)
        goto done;
    tb_dispatch_opts_t dopts = o->dispatch;
    dopts.store_dir = ctx->store_dir;
    dopts.on_result = s_on_result;
    dopts.on_tick = s_on_tick;
    dopts.user = &c;
    /* the caller's callback gets the caller's pointer (the engine's user is the composite) */
    dopts.listening_user =
        o->dispatch.listening_user ? o->dispatch.listening_user : o->dispatch.user;
    /* a farm's engine serves the later phases too (tb_bake_dispatch) */
    dopts.batches = o->dispatch.bind != NULL;
    if (!dopts.label)
        dopts.label = "regions";
    ctx->dispatch = tb_dispatch_new(&dopts, err);
    if (!ctx->dispatch)
        goto done;
    int n_jobs = 0;
    for (int ri = 0; ri < n_regions; ri++) {
        if (!ctx->selected[ri])
            continue;
        int64_t idx = s_add_region_job(ctx, ri, err);
        if (idx < 0)
            goto done;
        job_region[idx] = ri;
        n_jobs++;
        out->land_cells_solved += tb_plan_region(ctx->plan, ri)->land_cells;
    }
    out->regions_solved = n_jobs;
    /* an --only that names every region is a whole bake */
    out->partial = n_jobs < n_regions;
    if (out->partial) {
        s_partial_note(ctx->selected, n_jobs, n_regions, ctx->partial_text,
                       sizeof ctx->partial_text);
        ctx->partial = ctx->partial_text;
    }
    out->bad_input = false;
    if (!o->quiet)
        tb_log_info("baking %d of %d regions, %d steps, into %s", n_jobs, n_regions, ctx->steps,
                    o->out_dir);
    int drc = tb_dispatch_run(ctx->dispatch, err);
    tb_dispatch_stats(ctx->dispatch, &out->dispatch);
    /* its record, before a later phase's batch replaces the engine's jobs */
    ctx->solve_record = tb_dispatch_record_json(ctx->dispatch);
    if (drc != 0) {
        /* refused before any job went out: a bad --bind or bad keys, exit 2 */
        out->bad_input = err->code == TB_E_INVALID && out->dispatch.attempts == 0;
        goto done;
    }
    if (c.failed) {
        *err = c.err;
        goto done;
    }
    rc = 0;
done:
    free(job_region);
    return rc;
}

const tb_phase_t tb_phase_solve = {
    .name = "solve",
    .reads = TB_PLANET_BIT(CLASSES),
    .writes = TB_PLANET_BIT(LAND_M) | TB_PLANET_BIT(AREA_M2) | TB_PLANET_BIT(BASIN) |
              TB_PLANET_BIT(UPLIFT_M_YR) | TB_PLANET_BIT(SOLVED),
    .run = s_run,
};
