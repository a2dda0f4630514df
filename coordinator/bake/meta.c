/* meta.json, the record of a bake, written last; see phase.h and docs/bake.md. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/json.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/version.h"
#include "coordinator/bake/phase.h"

static cJSON *s_array_names(uint64_t mask)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < TB_ART_N; i++)
        if (mask & ((uint64_t)1 << i))
            cJSON_AddItemToArray(a, cJSON_CreateString(tb_art_name((tb_art_t)i)));
    return a;
}

static cJSON *s_phases_json(const tb_bake_ctx_t *ctx)
{
    cJSON *phases = cJSON_CreateArray();
    for (int i = 0; i < ctx->n_records; i++) {
        const tb_phase_record_t *r = &ctx->records[i];
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", r->name);
        cJSON_AddNumberToObject(p, "seconds", r->seconds);
        if (r->peak_rss_bytes > 0)
            cJSON_AddNumberToObject(p, "peak_rss_bytes", r->peak_rss_bytes);
        cJSON_AddItemToObject(p, "reads", s_array_names(r->reads));
        cJSON_AddItemToObject(p, "writes", s_array_names(r->writes));
        cJSON_AddBoolToObject(p, "skipped", r->skipped != NULL);
        if (r->skipped)
            cJSON_AddStringToObject(p, "skip_reason", r->skipped);
        if (r->note)
            cJSON_AddStringToObject(p, "note", r->note);
        if (r->unchanged)
            cJSON_AddBoolToObject(p, "unchanged", true);
        if (r->ran || r->unchanged) {
            char key[17];
            snprintf(key, sizeof key, "%016llx", (unsigned long long)r->input_key);
            cJSON_AddStringToObject(p, "input_key", key);
        }
        if (r->files)
            cJSON_AddItemToObject(p, "files", cJSON_Duplicate(r->files, true));
        cJSON_AddItemToArray(phases, p);
    }
    return phases;
}

/* The sections meta.json always has; a phase's own section may not take one of these names. */
static const char *const s_reserved[] = {"tool",   "manifest", "overrides",  "plan",   "bake",
                                         "extent", "dispatch", "statistics", "phases", "outputs"};

int tb_bake_meta_add(tb_bake_ctx_t *ctx, const char *key, cJSON *item, tb_err_t *err)
{
    for (size_t i = 0; i < sizeof s_reserved / sizeof s_reserved[0]; i++)
        if (strcmp(key, s_reserved[i]) == 0) {
            cJSON_Delete(item);
            return tb_err_set(err, TB_E_INTERNAL, "meta.json: \"%s\" is the bake's own section",
                              key);
        }
    if (!ctx->meta_sections)
        ctx->meta_sections = cJSON_CreateObject();
    if (!ctx->meta_sections || !item || cJSON_GetObjectItemCaseSensitive(ctx->meta_sections, key)) {
        cJSON_Delete(item);
        return tb_err_set(err, TB_E_INTERNAL, "meta.json: cannot add the section \"%s\"", key);
    }
    cJSON_AddItemToObject(ctx->meta_sections, key, item);
    return 0;
}

int tb_bake_meta_write(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    const tb_bake_outcome_t *out = ctx->out;
    cJSON *meta = cJSON_CreateObject();
    cJSON *tool = cJSON_AddObjectToObject(meta, "tool");
    cJSON_AddStringToObject(tool, "version", tb_version());
    cJSON_AddStringToObject(tool, "build_id", tb_build_id());
    const tb_bake_plan_t *pl = &ctx->plan;
    char *mj = tb_manifest_to_json(pl->manifest);
    cJSON_AddItemToObject(meta, "manifest", mj ? cJSON_Parse(mj) : cJSON_CreateNull());
    free(mj);
    /* the --set overrides as given (the manifest above already holds their effect) */
    char *oj = tb_overrides_to_json(o->input.overrides);
    cJSON_AddItemToObject(meta, "overrides", oj ? cJSON_Parse(oj) : cJSON_CreateNull());
    free(oj);
    char *pj = tb_plan_to_json(pl->plan);
    cJSON_AddItemToObject(meta, "plan", pj ? cJSON_Parse(pj) : cJSON_CreateNull());
    free(pj);
    cJSON *bake = cJSON_AddObjectToObject(meta, "bake");
    cJSON_AddNumberToObject(bake, "steps", pl->steps);
    cJSON_AddBoolToObject(bake, "partial", pl->partial != NULL);
    cJSON *only = cJSON_AddArrayToObject(bake, "only");
    for (int ri = 0; o->n_only > 0 && ri < out->regions_total; ri++)
        if (pl->selected[ri])
            cJSON_AddItemToArray(only, cJSON_CreateNumber(ri + 1));
    cJSON_AddNumberToObject(bake, "regions_solved", out->regions_solved);
    cJSON_AddNumberToObject(bake, "regions_total", out->regions_total);
    if (pl->partial) {
        cJSON_AddNumberToObject(bake, "regions_borrowed", ctx->regions.borrowed);
        cJSON_AddItemToObject(bake, "regions_missing",
                              cJSON_CreateIntArray(ctx->regions.missing, ctx->regions.n_missing));
    }
    cJSON_AddNumberToObject(bake, "seconds", tb_now_s() - ctx->started_s);
    /* the coordinator's own peak resident memory so far (its workers are other processes): the
     * phases' peaks (the driver resets the kernel's mark at each phase) and what came since */
    struct rusage ru;
    double peak = ctx->peak_rss_bytes;
    if (getrusage(RUSAGE_SELF, &ru) == 0 && (double)ru.ru_maxrss * 1024.0 > peak)
        peak = (double)ru.ru_maxrss * 1024.0;
    if (peak > 0)
        cJSON_AddNumberToObject(bake, "coordinator_peak_rss_bytes", peak);
    if (o->no_incision)
        cJSON_AddBoolToObject(bake, "test_no_incision", true);
    /* the directory the bake ran in: the input paths below are as given, maybe relative, and
     * `terrain tiles OUT` may run from anywhere (docs/tiles.md) */
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd))
        cJSON_AddStringToObject(bake, "cwd", cwd);
    /* --store, as given (relative to cwd); absent: OUT/.cache */
    if (o->store_dir)
        cJSON_AddStringToObject(bake, "store", o->store_dir);
    cJSON *extent = cJSON_AddObjectToObject(meta, "extent");
    cJSON_AddNumberToObject(extent, "min_m", out->extent.min_m);
    cJSON_AddNumberToObject(extent, "max_m", out->extent.max_m);
    cJSON_AddNumberToObject(extent, "clipped_cells", (double)ctx->extent.clipped);
    cJSON_AddNumberToObject(extent, "clip_fraction", out->clip_fraction);
    cJSON_AddItemToObject(meta, "dispatch", cJSON_Duplicate(ctx->regions.record, true));
    cJSON *stats = tb_stats_report_json(ctx->regions.stats, &out->extent, pl->partial);
    cJSON_AddItemToObject(meta, "statistics", stats ? stats : cJSON_CreateNull());
    cJSON_AddItemToObject(meta, "histograms", tb_report_histograms_json(ctx->regions.stats));
    cJSON_AddItemToObject(meta, "inputs", tb_report_inputs_json(pl->manifest, pl->plan));
    for (cJSON *sec = ctx->meta_sections ? ctx->meta_sections->child : NULL; sec; sec = sec->next)
        cJSON_AddItemToObject(meta, sec->string, cJSON_Duplicate(sec, true));
    if (ctx->made & TB_ART_BIT(COAST)) {
        cJSON *coast = tb_coast_stats_to_json(&ctx->coast.stats);
        cJSON_AddNumberToObject(coast, "seconds", ctx->coast.seconds);
        /* the rounds, and the final round's bits: a rerun on the same inputs starts from them
         * (coordinator/bake/phase_coast.c, s_known_share) */
        cJSON_AddNumberToObject(coast, "blocks", ctx->coast.blocks);
        cJSON_AddNumberToObject(coast, "rounds", ctx->coast.rounds);
        cJSON_AddBoolToObject(coast, "probed", ctx->coast.probed);
        cJSON_AddBoolToObject(coast, "known_share", ctx->coast.known);
        cJSON *bits = cJSON_CreateArray();
        for (int k = 0; bits && k < 2; k++)
            cJSON_AddItemToArray(bits, cJSON_CreateNumber(ctx->coast.share.bits[k]));
        cJSON_AddItemToObject(coast, "share_bits", bits);
        cJSON_AddItemToObject(coast, "dispatch", cJSON_Duplicate(ctx->coast.record, true));
        cJSON_AddItemToObject(meta, "coast", coast);
    } else {
        cJSON_AddItemToObject(meta, "coast", cJSON_CreateNull());
    }
    if (ctx->tiles.meta)
        cJSON_AddItemToObject(meta, "tiles", cJSON_Duplicate(ctx->tiles.meta, true));
    else if (ctx->tile_list.skip_meta) /* a partial bake's tiles, skipped for missing regions */
        cJSON_AddItemToObject(meta, "tiles", cJSON_Duplicate(ctx->tile_list.skip_meta, true));
    cJSON_AddItemToObject(meta, "phases", s_phases_json(ctx));
    cJSON_AddItemToObject(meta, "outputs", cJSON_Duplicate(ctx->hashes, true));
    char *text = tb_json_print(meta, true);
    cJSON_Delete(meta);
    char path[4200];
    int rc = -1;
    if (!text)
        tb_err_set(err, TB_E_NOMEM, "out of memory writing meta.json");
    else if (tb_fs_join(path, sizeof path, o->out_dir, "meta.json", err) == 0 &&
             tb_fs_write_atomic(path, text, strlen(text), err) == 0) {
        snprintf(ctx->out->meta_path, sizeof ctx->out->meta_path, "%s", path);
        rc = 0;
    }
    free(text);
    return rc;
}
