/* The bake's driver; see bake.h and phase.h. Runs the phases of coordinator/bake/phases.c in order,
 * each timed and recorded, then writes meta.json and judges the clip fraction. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/version.h"
#include <xxhash.h>
#include "coordinator/bake/phase.h"

static const char *const s_value_names[] = {
#define TB_ART_X_NAME(id, name, what) #name,
    TB_BAKE_VALUES(TB_ART_X_NAME)
#undef TB_ART_X_NAME
};

const char *tb_art_name(tb_art_t id)
{
    if (id < 0 || id >= TB_ART_N)
        return "?";
    if ((int)id < TB_PLANET_N_ARRAYS)
        return tb_planet_array_name((tb_planet_array_t)id);
    return s_value_names[id - TB_PLANET_N_ARRAYS];
}

double tb_bake_default_job_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double total = pages > 0 && page > 0 ? (double)pages * (double)page : 8e9;
    return 0.75 * total;
}

double tb_bake_job_memory(const tb_bake_ctx_t *ctx)
{
    return ctx->opts->job_memory_bytes > 0 ? ctx->opts->job_memory_bytes
                                           : tb_bake_default_job_memory();
}

void tb_bake_note(tb_bake_ctx_t *ctx, const char *note)
{
    if (ctx->n_records > 0)
        ctx->records[ctx->n_records - 1].note = note;
    if (!ctx->opts->quiet)
        tb_log_info("%s", note);
}

int tb_bake_check_interrupted(const tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const volatile sig_atomic_t *flag = ctx->opts->dispatch.interrupted;
    if (flag && *flag)
        return tb_err_set(err, TB_E_INTERRUPTED, "interrupted while writing the outputs");
    return 0;
}

/* The bake's one engine, made by the first phase that dispatches (the solve) with its batch, and
 * moved on to each later phase's batch: in every mode (in-process, local, farm) the same workers
 * and the same store serve every phase, and local workers start once. */
tb_dispatch_t *tb_bake_dispatch(tb_bake_ctx_t *ctx, const tb_dispatch_batch_t *batch, tb_err_t *err)
{
    if (ctx->dispatch)
        return tb_dispatch_next_batch(ctx->dispatch, batch, err) == 0 ? ctx->dispatch : NULL;
    const tb_bake_opts_t *o = ctx->opts;
    tb_dispatch_opts_t dopts = o->dispatch;
    dopts.store_dir = ctx->plan.store_dir;
    dopts.label = batch->label ? batch->label : o->dispatch.label;
    dopts.on_result = batch->on_result;
    dopts.on_take = batch->on_take;
    dopts.unordered = batch->unordered;
    dopts.on_tick = batch->on_tick;
    dopts.user = batch->user;
    dopts.fresh = o->dispatch.fresh || batch->fresh;
    /* the caller's callback gets the caller's pointer (the engine's user is the batch's) */
    dopts.listening_user =
        o->dispatch.listening_user ? o->dispatch.listening_user : o->dispatch.user;
    dopts.batches = true;
    ctx->dispatch = tb_dispatch_new(&dopts, err);
    return ctx->dispatch;
}

/* The kernel's high-water mark of this process's resident memory (VmHWM), bytes; 0 when unknown. */
static double s_hwm_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (double)kb * 1024.0;
}

/* Per-phase peaks (meta.json's phases[].peak_rss_bytes): the mark so far goes into the bake's
 * peak, then is reset to what is resident now (writing 5 to /proc/self/clear_refs, Linux 4.0 on;
 * where that fails the phase's peak is the process's so far, which is still an upper bound). */
static void s_peak_reset(tb_bake_ctx_t *ctx)
{
    double hwm = s_hwm_bytes();
    if (hwm > ctx->peak_rss_bytes)
        ctx->peak_rss_bytes = hwm;
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static double s_peak_take(tb_bake_ctx_t *ctx)
{
    double hwm = s_hwm_bytes();
    if (hwm > ctx->peak_rss_bytes)
        ctx->peak_rss_bytes = hwm;
    return hwm;
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

/* The names of the artifacts of `mask`, comma-separated, for messages. */
static void s_names(uint64_t mask, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < TB_ART_N && k < n; i++)
        if (mask & ((uint64_t)1 << i))
            k += (size_t)snprintf(out + k, n - k, "%s%s", k ? ", " : "", tb_art_name((tb_art_t)i));
}

int tb_bake_check_producers(const tb_phase_t *const *phases, int n, tb_err_t *err)
{
    const char *producer[TB_ART_N] = {0};
    for (int i = 0; i < n; i++) {
        uint64_t w = phases[i]->writes | phases[i]->writes_maybe;
        for (int a = 0; a < TB_ART_N; a++) {
            if (!(w & ((uint64_t)1 << a)))
                continue;
            if (producer[a])
                return tb_err_set(err, TB_E_INTERNAL, "phases %s and %s both make %s", producer[a],
                                  phases[i]->name, tb_art_name((tb_art_t)a));
            producer[a] = phases[i]->name;
        }
    }
    return 0;
}

/* The live report goes up once the plan exists (docs/report.md); each phase rewrites it. */
static void s_live(tb_bake_ctx_t *ctx, const tb_phase_t *ph)
{
    if (ctx->plan.plan && !ctx->live && !ctx->opts->measure_margin) {
        ctx->live = tb_report_live_new(ctx->opts->out_dir, ctx->plan.plan, ctx->plan.steps,
                                       ctx->plan.n_selected);
        for (int k = 0; k + 1 < ctx->n_records; k++) /* the phases before it, done */
            tb_report_live_phase(ctx->live, ctx->records[k].name, NULL);
    }
    tb_report_live_phase(ctx->live, ph->name, ctx->dispatch);
}

/* A reason to skip phase ph because an artifact it needs was not made by a phase that was skipped
 * (into why, size n), or NULL. The reason names the first such artifact and the skip that started
 * the chain ("it needs tiles, not made: --no-tiles"); *cause gets that first reason. */
static const char *s_skipped_input(const tb_bake_ctx_t *ctx, const tb_phase_t *ph, char *why,
                                   size_t n, const char **cause)
{
    uint64_t missing = ph->reads & ~ctx->made;
    for (int k = 0; k < ctx->n_records && missing; k++) {
        const tb_phase_record_t *r = &ctx->records[k];
        uint64_t theirs = missing & (r->writes | r->writes_maybe);
        if (!r->skipped || !theirs)
            continue;
        *cause = r->cause ? r->cause : r->skipped;
        snprintf(why, n, "it needs %s, not made: %s",
                 tb_art_name((tb_art_t)__builtin_ctzll(theirs)), *cause);
        return why;
    }
    return NULL;
}

/* The phase's input key: XXH3 over the tool id, its name and the hashes of every artifact it reads
 * that was made, in artifact order. */
static uint64_t s_input_key(const tb_bake_ctx_t *ctx, const tb_phase_t *ph)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return 0;
    XXH3_64bits_reset(st);
    const char *tool = tb_tool_id();
    XXH3_64bits_update(st, tool, strlen(tool) + 1);
    XXH3_64bits_update(st, ph->name, strlen(ph->name) + 1);
    /* not the previous bake's record: it says what was, not what a phase makes now */
    uint64_t reads = (ph->reads | ph->reads_maybe) & ctx->made & ~TB_ART_BIT(PREVIOUS);
    for (int a = 0; a < TB_ART_N; a++)
        if (reads & ((uint64_t)1 << a)) {
            uint64_t v[2] = {(uint64_t)a, ctx->art_hash[a]};
            XXH3_64bits_update(st, v, sizeof v);
        }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

/* The XXH3-64 of out_dir/name as 16 hex digits into hex; -1 when it cannot be read. */
static int s_file_hash(const tb_bake_ctx_t *ctx, const char *name, char hex[17])
{
    char path[4200];
    tb_err_t err;
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, name, &err) != 0)
        return -1;
    uint64_t h;
    if (tb_fs_hash_file(path, &h, &err) != 0)
        return -1;
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
    return 0;
}

/* Whether the previous bake recorded phase ph with this input key and its files are still as it
 * wrote them; then they become this bake's (their hashes recorded) and the phase need not run. */
static bool s_unchanged(tb_bake_ctx_t *ctx, const tb_phase_t *ph, tb_phase_record_t *rec)
{
    const cJSON *prev = ctx->previous.meta;
    if (!ph->reusable || !prev || ctx->opts->dispatch.fresh || tb_bake_reuses_outputs(ctx))
        return false;
    const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(prev, "outputs"), *f;
    const cJSON *p = tb_bake_previous_phase(ctx, ph->name, rec->input_key);
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(p, "files");
    if (!p || !cJSON_IsArray(files) || cJSON_GetArraySize(files) == 0)
        return false;
    cJSON_ArrayForEach(f, files)
    {
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(outputs, f->valuestring);
        char have[17];
        if (!cJSON_IsString(f) || !cJSON_IsString(want) ||
            s_file_hash(ctx, f->valuestring, have) != 0 || strcmp(have, want->valuestring) != 0)
            return false;
    }
    cJSON_ArrayForEach(f, files)
    {
        const char *hex = cJSON_GetObjectItemCaseSensitive(outputs, f->valuestring)->valuestring;
        if (cJSON_GetObjectItemCaseSensitive(ctx->hashes, f->valuestring))
            cJSON_ReplaceItemInObjectCaseSensitive(ctx->hashes, f->valuestring,
                                                   cJSON_CreateString(hex));
        else
            cJSON_AddStringToObject(ctx->hashes, f->valuestring, hex);
    }
    rec->files = cJSON_Duplicate(files, true);
    return true;
}

/* After a phase made its artifacts: each raster's hash from its cells, each value's the one its
 * producer set or the phase's input key. */
static void s_hash_made(tb_bake_ctx_t *ctx, uint64_t made, uint64_t input_key)
{
    for (int a = 0; a < TB_ART_N; a++) {
        if (!(made & ((uint64_t)1 << a)))
            continue;
        if (a < TB_PLANET_N_ARRAYS)
            ctx->art_hash[a] = tb_planet_hash(ctx->planet, (tb_planet_array_t)a);
        else if (ctx->art_hash[a] == 0) {
            uint64_t v[2] = {input_key, (uint64_t)a};
            ctx->art_hash[a] = tb_xxh3(v, sizeof v);
        }
    }
}

static int s_run_phase(tb_bake_ctx_t *ctx, const tb_phase_t *ph, bool *removed_meta, tb_err_t *err)
{
    tb_phase_record_t *rec = &ctx->records[ctx->n_records];
    *rec = (tb_phase_record_t){.name = ph->name,
                               .reads = ph->reads,
                               .writes = ph->writes,
                               .writes_maybe = ph->writes_maybe};
    char names[512];
    if (ph->kept_on_reuse && tb_bake_reuses_outputs(ctx))
        rec->skipped = "reusing the bake's outputs (--tiles-only, terrain tiles)";
    else if (!(rec->skipped =
                   s_skipped_input(ctx, ph, rec->skip_text, sizeof rec->skip_text, &rec->cause)) &&
             ph->skip)
        rec->skipped = ph->skip(ctx);
    ctx->n_records++;
    if (rec->skipped) {
        if (!ctx->opts->quiet)
            tb_log_info("phase %s skipped: %s", ph->name, rec->skipped);
        return 0;
    }
    uint64_t missing = ph->reads & ~ctx->made;
    if (missing) {
        s_names(missing, names, sizeof names);
        return tb_err_set(err, TB_E_INTERNAL, "phase %s reads %s, which no earlier phase made",
                          ph->name, names);
    }
    rec->input_key = s_input_key(ctx, ph);
    if (s_unchanged(ctx, ph, rec)) {
        rec->unchanged = true;
        rec->skipped = "unchanged: the previous bake's files, with the same inputs";
        if (!ctx->opts->quiet)
            tb_log_info("phase %s unchanged: its %d file(s) kept", ph->name,
                        cJSON_GetArraySize(rec->files));
        ctx->made |= ph->writes;
        return 0;
    }
    /* a bake that reuses its outputs rewrites no file its meta.json describes but the tiles it was
     * asked for, and updates that meta.json at the end (coordinator/bake/reuse.c) */
    if (ph->writes_files && !*removed_meta && !tb_bake_reuses_outputs(ctx)) {
        if (s_remove_old_meta(ctx, err) != 0)
            return -1;
        *removed_meta = true;
    }
    s_live(ctx, ph);
    /* the plan phase makes the planet; every later phase finds the rasters it makes ready (an
     * alias, the heightmap without the coast, is the phase's own to make) */
    if (ctx->planet && tb_planet_provide(ctx->planet, TB_ART_RASTERS(ph->writes), err) != 0)
        return -1;
    double t0 = tb_now_s();
    s_peak_reset(ctx);
    int rc = ph->run(ctx, err);
    rec->seconds = tb_now_s() - t0;
    rec->peak_rss_bytes = s_peak_take(ctx);
    rec->ran = true;
    tb_log_debug("phase %s: %.3f s", ph->name, rec->seconds);
    /* no raster stays resident between phases: the next one maps in what it reads */
    if (ctx->planet)
        tb_planet_release_all(ctx->planet, ~0u);
    if (rc != 0)
        return -1;
    uint32_t rasters = TB_ART_RASTERS(ph->writes);
    uint32_t absent = rasters & ~(ctx->planet ? tb_planet_present(ctx->planet, rasters) : 0);
    if (absent) {
        s_names(absent, names, sizeof names);
        return tb_err_set(err, TB_E_INTERNAL, "phase %s did not make %s", ph->name, names);
    }
    uint64_t before = ctx->made;
    ctx->made |= ph->writes;
    /* a maybe-write is made when the phase made it: a raster that exists, a value it marked */
    uint32_t maybe = TB_ART_RASTERS(ph->writes_maybe);
    if (ctx->planet)
        ctx->made |= tb_planet_present(ctx->planet, maybe);
    s_hash_made(ctx, ctx->made & ~before & (ph->writes | ph->writes_maybe), rec->input_key);
    return 0;
}

int tb_bake_run_phases(tb_bake_ctx_t *ctx, const tb_phase_t *const *phases, int n, tb_err_t *err)
{
    if (n > TB_BAKE_MAX_PHASES)
        return tb_err_set(err, TB_E_INTERNAL, "%d phases; at most %d", n, TB_BAKE_MAX_PHASES);
    if (tb_bake_check_producers(phases, n, err) != 0)
        return -1;
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

void tb_bake_ctx_free_artifacts(tb_bake_ctx_t *ctx)
{
    tb_planet_destroy(&ctx->planet);
    tb_bake_plan_t *p = &ctx->plan;
    free(p->selected);
    free(p->tile_sel);
    tb_plan_destroy(&p->plan);
    tb_overlay_features_destroy(&p->overlay);
    tb_planet_input_free(&p->input);
    cJSON_Delete(ctx->previous.meta);
    cJSON_Delete(ctx->previous.index);
    tb_bake_regions_t *r = &ctx->regions;
    tb_stats_destroy(&r->stats);
    free(r->mouths);
    free(r->missing);
    cJSON_Delete(r->record);
    cJSON_Delete(ctx->coast.record);
    free(ctx->tile_list.ids);
    free(ctx->tile_list.land_share);
    cJSON_Delete(ctx->tile_list.skipped);
    cJSON_Delete(ctx->tile_list.skip_meta);
    cJSON_Delete(ctx->tile_files.entries);
    cJSON_Delete(ctx->tile_files.record);
    cJSON_Delete(ctx->tiles.meta);
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
        (!tb_bake_reuses_outputs(&ctx) && ctx.live &&
         tb_bake_meta_add(&ctx, "timeline", tb_report_live_timeline_json(ctx.live), err) != 0) ||
        (tb_bake_reuses_outputs(&ctx) ? tb_bake_reuse_meta_write(&ctx, err)
                                      : tb_bake_meta_write(&ctx, err)) != 0)
        goto done;
    out->seconds = tb_now_s() - ctx.started_s;
    if (out->clip_fraction > TB_BAKE_MAX_CLIP_FRACTION) {
        const tb_manifest_t *m = ctx.plan.manifest;
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
    /* the workers leave once, here, whatever the outcome (docs/distribution.md) */
    tb_dispatch_finish(ctx.dispatch, rc != 0);
    /* `terrain tiles` keeps the bake's meta.json whatever happened: the page is rebuilt from it */
    tb_report_live_finish(ctx.live, ctx.dispatch,
                          out->meta_path[0] != '\0' || tb_bake_reuses_outputs(&ctx),
                          rc == 0 ? NULL : err);
    tb_report_live_destroy(&ctx.live);
    out->stats = ctx.regions.stats; /* the caller's now */
    ctx.regions.stats = NULL;
    cJSON_Delete(ctx.hashes);
    cJSON_Delete(ctx.meta_sections);
    for (int k = 0; k < ctx.n_records; k++)
        cJSON_Delete(ctx.records[k].files);
    tb_dispatch_destroy(&ctx.dispatch);
    tb_bake_ctx_free_artifacts(&ctx);
    return rc;
}
