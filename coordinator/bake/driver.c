/* The bake's driver; see bake.h and phase.h. Runs the phases of coordinator/bake/phases.c in order,
 * each timed and recorded, then writes meta.json and judges the clip fraction. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/log.h"
#include "coordinator/bake/phase.h"

int tb_bake_check_interrupted(const tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const volatile sig_atomic_t *flag = ctx->opts->dispatch.interrupted;
    if (flag && *flag)
        return tb_err_set(err, TB_E_INTERRUPTED, "interrupted while writing the outputs");
    return 0;
}

tb_dispatch_t *tb_bake_dispatch(tb_bake_ctx_t *ctx, const tb_dispatch_batch_t *batch, bool *owned,
                                tb_err_t *err)
{
    *owned = false;
    if (ctx->opts->dispatch.bind) {
        if (!ctx->dispatch) {
            tb_err_set(err, TB_E_INTERNAL, "a farm bake's engine is made by the solve phase");
            return NULL;
        }
        return tb_dispatch_next_batch(ctx->dispatch, batch, err) == 0 ? ctx->dispatch : NULL;
    }
    tb_dispatch_opts_t dopts = ctx->opts->dispatch;
    dopts.store_dir = ctx->store_dir;
    dopts.label = batch->label;
    dopts.on_result = batch->on_result;
    dopts.on_tick = batch->on_tick;
    dopts.user = batch->user;
    dopts.fresh = dopts.fresh || batch->fresh;
    dopts.listening_user = NULL;
    tb_dispatch_t *d = tb_dispatch_new(&dopts, err);
    *owned = d != NULL;
    return d;
}

/* meta.json says the directory holds a complete bake: an older one goes before the first phase that
 * writes into the directory, so a bake that stops half-way never sits beside it. */
static int s_remove_old_meta(const tb_bake_ctx_t *ctx, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, "meta.json", err) != 0)
        return -1;
    if (unlink(path) != 0 && errno != ENOENT)
        return tb_err_set(err, TB_E_IO, "%s: cannot remove the previous bake's record: %s", path,
                          strerror(errno));
    return 0;
}

/* The names of the arrays of `mask`, comma-separated, for messages. */
static void s_names(uint32_t mask, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < TB_PLANET_N_ARRAYS && k < n; i++)
        if (mask & (1u << i))
            k += (size_t)snprintf(out + k, n - k, "%s%s", k ? ", " : "",
                                  tb_planet_array_name((tb_planet_array_t)i));
}

static int s_run_phase(tb_bake_ctx_t *ctx, const tb_phase_t *ph, bool *removed_meta, tb_err_t *err)
{
    tb_phase_record_t *rec = &ctx->records[ctx->n_records++];
    *rec = (tb_phase_record_t){.name = ph->name, .reads = ph->reads, .writes = ph->writes};
    char names[256];
    if (ph->kept_on_reuse && tb_bake_reuses_outputs(ctx))
        rec->skipped = "reusing the bake's outputs (--tiles-only, terrain tiles)";
    else if (ph->skip)
        rec->skipped = ph->skip(ctx);
    if (rec->skipped) {
        if (!ctx->opts->quiet)
            tb_log_info("phase %s skipped: %s", ph->name, rec->skipped);
        return 0;
    }
    uint32_t missing = ph->reads & ~(ctx->planet ? tb_planet_present(ctx->planet, ph->reads) : 0);
    if (missing) {
        s_names(missing, names, sizeof names);
        return tb_err_set(err, TB_E_INTERNAL, "phase %s reads %s, which no earlier phase wrote",
                          ph->name, names);
    }
    /* a bake that reuses its outputs rewrites no file its meta.json describes but the tiles it was
     * asked for, and updates that meta.json at the end (coordinator/bake/reuse.c) */
    if (ph->writes_files && !*removed_meta && !tb_bake_reuses_outputs(ctx)) {
        if (s_remove_old_meta(ctx, err) != 0)
            return -1;
        *removed_meta = true;
    }
    /* report.html goes live once the plan exists (docs/report.md); each phase rewrites it */
    if (ctx->plan && !ctx->live && !tb_bake_reuses_outputs(ctx)) {
        int n = 0;
        for (int ri = 0; ri < tb_plan_region_count(ctx->plan); ri++)
            n += ctx->selected && ctx->selected[ri];
        ctx->live = tb_report_live_new(ctx->opts->out_dir, ctx->plan, ctx->steps, n);
        for (int k = 0; k + 1 < ctx->n_records; k++) /* the phases before it, done */
            tb_report_live_phase(ctx->live, ctx->records[k].name, NULL);
    }
    tb_report_live_phase(ctx->live, ph->name, ctx->dispatch);
    /* the plan phase makes the planet; every later phase finds its arrays ready */
    if (ctx->planet && tb_planet_provide(ctx->planet, ph->writes, err) != 0)
        return -1;
    double t0 = tb_now_s();
    int rc = ph->run(ctx, err);
    rec->seconds = tb_now_s() - t0;
    rec->ran = true;
    tb_log_debug("phase %s: %.3f s", ph->name, rec->seconds);
    if (rc != 0)
        return -1;
    missing = ph->writes & ~(ctx->planet ? tb_planet_present(ctx->planet, ph->writes) : 0);
    if (missing) {
        s_names(missing, names, sizeof names);
        return tb_err_set(err, TB_E_INTERNAL, "phase %s did not make %s", ph->name, names);
    }
    return 0;
}

int tb_bake_run_phases(tb_bake_ctx_t *ctx, const tb_phase_t *const *phases, int n, tb_err_t *err)
{
    if (n > TB_BAKE_MAX_PHASES)
        return tb_err_set(err, TB_E_INTERNAL, "%d phases; at most %d", n, TB_BAKE_MAX_PHASES);
    bool removed_meta = false;
    for (int i = 0; i < n; i++)
        if (s_run_phase(ctx, phases[i], &removed_meta, err) != 0)
            return -1; /* the phase's own message: it names the file, key or job */
    return 0;
}

void tb_bake_outcome_free(tb_bake_outcome_t *out)
{
    if (out)
        tb_stats_destroy(&out->stats);
}

int tb_bake_run(const tb_bake_opts_t *o, tb_bake_outcome_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_bake_ctx_t ctx = {.opts = o, .out = out, .started_s = tb_now_s()};
    int rc = -1;
    out->bad_input = true; /* until the jobs are dispatched (the solve phase) */
    ctx.hashes = cJSON_CreateObject();
    if (!ctx.hashes) {
        tb_err_set(err, TB_E_NOMEM, "out of memory");
        goto done;
    }
    if (tb_bake_run_phases(&ctx, tb_bake_phases, tb_bake_n_phases, err) != 0)
        goto done;
    /* meta.json, last: its presence says the bake is complete */
    if (tb_bake_check_interrupted(&ctx, err) != 0 ||
        (tb_bake_reuses_outputs(&ctx) ? tb_bake_reuse_meta_write(&ctx, err)
                                      : tb_bake_meta_write(&ctx, err)) != 0)
        goto done;
    out->seconds = tb_now_s() - ctx.started_s;
    if (out->clip_fraction > TB_BAKE_MAX_CLIP_FRACTION) {
        const tb_manifest_t *m = ctx.manifest;
        tb_err_set(
            err, TB_E_INVALID,
            "%.3f %% of the planet's cells lie outside elevation_m [%g, %g] (%g .. %g m) and "
            "were clipped; more than %.1f %% fails the bake: widen elevation_m in the "
            "manifest or lower the uplift",
            out->clip_fraction * 100, m->elevation_min_m, m->elevation_max_m, out->extent.min_m,
            out->extent.max_m, TB_BAKE_MAX_CLIP_FRACTION * 100);
        goto done;
    }
    rc = 0;
done:
    /* a farm's workers leave once, here, whatever the outcome (docs/distribution.md) */
    tb_dispatch_finish(ctx.dispatch, rc != 0);
    tb_report_live_finish(ctx.live, ctx.dispatch, out->meta_path[0] != '\0', rc == 0 ? NULL : err);
    tb_report_live_destroy(&ctx.live);
    out->stats = ctx.stats;
    cJSON_Delete(ctx.hashes);
    cJSON_Delete(ctx.meta_sections);
    cJSON_Delete(ctx.tiles_meta);
    cJSON_Delete(ctx.tiles_skip_meta);
    cJSON_Delete(ctx.whole_coast);
    free(ctx.whole_height_m);
    free(ctx.whole_area_m2);
    free(ctx.whole_exposure);
    free(ctx.whole_moved_m);
    free(ctx.whole_known);
    cJSON_Delete(ctx.before_meta);
    cJSON_Delete(ctx.before_index);
    free(ctx.tile_sel);
    tb_planet_destroy(&ctx.planet);
    free(ctx.selected);
    tb_dispatch_destroy(&ctx.dispatch);
    cJSON_Delete(ctx.solve_record);
    cJSON_Delete(ctx.coast_record);
    free(ctx.mouths);
    tb_plan_destroy(&ctx.plan);
    tb_planet_input_free(&ctx.input);
    return rc;
}
