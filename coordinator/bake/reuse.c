/* A bake that reuses the complete bake in its output directory: `--tiles-only`, `terrain tiles`
 * (docs/tiles.md, "Re-running chosen tiles"). The planet is a pure function of its inputs and every
 * region's and the coast's result is in the store, so running the phases again with everything
 * from the store rebuilds the composite exactly and in seconds; what this file adds is the checks
 * that it really is the same planet and that nothing must be solved, and meta.json's update. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/fs.h"
#include "common/hash.h"
#include "common/version.h"
#include "coordinator/bake/phase.h"
#include "coordinator/farm/cache.h"

bool tb_bake_reuses_outputs(const tb_bake_ctx_t *ctx)
{
    return ctx->opts->tiles_only != NULL || ctx->opts->measure_margin;
}

int tb_bake_require_stored(const tb_bake_ctx_t *ctx, const char *kind, const void *spec, size_t n,
                           const char *label, tb_err_t *err)
{
    tb_cache_key_t key;
    tb_cache_key_make(&key, tb_build_id(), kind, spec, n, NULL, 0);
    tb_cache_t *cache = tb_cache_open(ctx->plan.store_dir, err); /* creates nothing */
    if (!cache)
        return -1;
    char path[4300];
    tb_cache_path(cache, &key, path, sizeof path);
    tb_cache_destroy(&cache);
    if (tb_fs_exists(path))
        return 0;
    return tb_err_set(err, TB_E_INVALID,
                      "%s: %s has no result of %s for this build (%s): it was baked by another "
                      "build, with other inputs, or the store was cleared; re-solving it would "
                      "take the bake's time, so run `terrain bake` into %s first (it reuses "
                      "whatever is stored), then re-run the tiles",
                      ctx->opts->out_dir, ctx->plan.store_dir, label, tb_build_id(),
                      ctx->opts->out_dir);
}

static int s_read_json(const char *dir, const char *name, cJSON **out, tb_err_t *err)
{
    char path[4200];
    char *text;
    size_t n;
    if (tb_fs_join(path, sizeof path, dir, name, err) != 0)
        return -1;
    if (tb_fs_read_all(path, (size_t)1 << 30, &text, &n, err) != 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %s: no complete bake here (%s; a bake writes %s last)", dir, name,
                          err->msg, name);
    *out = cJSON_ParseWithLength(text, n);
    free(text);
    if (!*out)
        return tb_err_set(err, TB_E_INVALID, "%s: not JSON", path);
    return 0;
}

static const char *s_str(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static int s_same_hash(const tb_bake_ctx_t *ctx, const char *what, const char *recorded,
                       uint64_t now, tb_err_t *err)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)now);
    if (recorded && strcmp(recorded, hex) == 0)
        return 0;
    return tb_err_set(err, TB_E_INVALID,
                      "%s/meta.json: the bake there is of another planet: its %s has XXH3 %s, "
                      "this one's %s; give the bake's manifest, seed, size and --set overrides "
                      "(terrain tiles reads them from meta.json)",
                      ctx->opts->out_dir, what, recorded ? recorded : "(not recorded)", hex);
}

bool tb_bake_previous_read(tb_bake_ctx_t *ctx)
{
    char path[4200];
    char *text = NULL;
    size_t n;
    tb_err_t err;
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, "meta.json", &err) != 0 ||
        !tb_fs_exists(path) || tb_fs_read_all(path, (size_t)1 << 30, &text, &n, &err) != 0)
        return false;
    ctx->previous.meta = cJSON_ParseWithLength(text, n);
    free(text);
    if (!ctx->previous.meta)
        return false;
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, "tiles/index.json", &err) == 0 &&
        tb_fs_exists(path) && tb_fs_read_all(path, (size_t)1 << 30, &text, &n, &err) == 0) {
        ctx->previous.index = cJSON_ParseWithLength(text, n);
        free(text);
    }
    return true;
}

const cJSON *tb_bake_previous_phase(const tb_bake_ctx_t *ctx, const char *name, uint64_t input_key)
{
    char key[17];
    snprintf(key, sizeof key, "%016llx", (unsigned long long)input_key);
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(ctx->previous.meta, "phases"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(p, "input_key");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0 && cJSON_IsString(k) &&
            strcmp(k->valuestring, key) == 0)
            return p;
    }
    return NULL;
}

int tb_bake_reuse_check(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    const char *dir = o->out_dir;
    cJSON *meta = NULL;
    if (s_read_json(dir, "meta.json", &meta, err) != 0)
        return -1;
    ctx->previous.meta = meta;
    char *mj = tb_manifest_to_json(ctx->plan.manifest);
    if (!mj)
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    uint64_t mh = tb_xxh3(mj, strlen(mj));
    free(mj);
    if (s_same_hash(ctx, "resolved manifest", s_str(meta, "inputs", "resolved_manifest_xxh3"), mh,
                    err) != 0 ||
        s_same_hash(ctx, "class raster", s_str(meta, "inputs", "class_raster_xxh3"),
                    tb_plan_class_raster_xxh3(ctx->plan.plan), err) != 0)
        return -1;
    const cJSON *bake = cJSON_GetObjectItemCaseSensitive(meta, "bake");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(bake, "steps");
    if (!cJSON_IsNumber(steps) || (int)steps->valuedouble != ctx->plan.steps)
        return tb_err_set(err, TB_E_INVALID,
                          "%s/meta.json: the bake there solved %g steps, this one %d: give "
                          "--steps as the bake had it",
                          dir, cJSON_IsNumber(steps) ? steps->valuedouble : -1.0, ctx->plan.steps);
    bool coast_before = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(meta, "coast"));
    if (coast_before == o->no_coast)
        return tb_err_set(err, TB_E_INVALID,
                          "%s/meta.json: the bake there ran %s the coastal pass, this one "
                          "%s: the heights differ (give --no-coast as the bake had it)",
                          dir, coast_before ? "with" : "without", o->no_coast ? "not" : "too");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bake, "test_no_incision")) != o->no_incision)
        return tb_err_set(err, TB_E_INVALID,
                          "%s/meta.json: --test-no-incision differs from the bake there", dir);
    /* the regions solved: --only as the bake had it */
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(bake, "only");
    int n_regions = tb_plan_region_count(ctx->plan.plan), listed = 0;
    bool same = cJSON_IsArray(only);
    const cJSON *id;
    cJSON_ArrayForEach(id, only)
    {
        listed++;
        int k = cJSON_IsNumber(id) ? (int)id->valuedouble : 0;
        same = same && k >= 1 && k <= n_regions && ctx->plan.selected[k - 1];
    }
    int selected = 0;
    for (int ri = 0; ri < n_regions; ri++)
        selected += ctx->plan.selected[ri];
    if (!same || (listed ? listed : n_regions) != selected)
        return tb_err_set(err, TB_E_INVALID,
                          "%s/meta.json: the bake there solved other regions (its \"only\" is "
                          "%s): give --only as the bake had it",
                          dir, listed ? "a list" : "empty: every region");
    if (o->tiles_only) {
        const cJSON *tiles = cJSON_GetObjectItemCaseSensitive(meta, "tiles");
        if (!cJSON_IsObject(tiles) ||
            cJSON_GetObjectItemCaseSensitive(tiles, "phase_skipped")) /* regions missing */
            return tb_err_set(err, TB_E_INVALID,
                              "%s/meta.json: the bake there made no tiles (--no-tiles, or a "
                              "partial bake with the coastal pass whose other regions were not "
                              "stored): bake them with `terrain bake` (what is stored is reused)",
                              dir);
        if (s_read_json(dir, "tiles/index.json", &ctx->previous.index, err) != 0)
            return -1;
        if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(ctx->previous.index, "tiles")))
            return tb_err_set(err, TB_E_INVALID, "%s/tiles/index.json: no \"tiles\" array", dir);
    }
    return 0;
}

int tb_bake_reuse_meta_write(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    if (ctx->opts->measure_margin)
        return 0;
    if (!ctx->previous.meta || !ctx->tiles.meta) {
        const char *why = "it was skipped";
        for (int i = 0; i < ctx->n_records; i++)
            if (strcmp(ctx->records[i].name, "tiles") == 0 && ctx->records[i].skipped)
                why = ctx->records[i].skipped;
        return tb_err_set(err, TB_E_INVALID, "--tiles-only: the tiles phase did not run (%s)", why);
    }
    cJSON *meta = cJSON_Duplicate(ctx->previous.meta, true);
    cJSON *tiles = ctx->tiles.meta ? cJSON_Duplicate(ctx->tiles.meta, true) : NULL;
    if (!meta || !tiles) {
        cJSON_Delete(meta);
        cJSON_Delete(tiles);
        return tb_err_set(err, TB_E_NOMEM, "out of memory for meta.json");
    }
    cJSON_ReplaceItemInObjectCaseSensitive(meta, "tiles", tiles);
    cJSON *outputs = cJSON_GetObjectItemCaseSensitive(meta, "outputs");
    if (!cJSON_IsObject(outputs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "outputs");
        outputs = cJSON_AddObjectToObject(meta, "outputs");
    }
    for (const cJSON *h = ctx->hashes ? ctx->hashes->child : NULL; h; h = h->next) {
        cJSON *v = cJSON_CreateString(h->valuestring);
        if (cJSON_GetObjectItemCaseSensitive(outputs, h->string))
            cJSON_ReplaceItemInObjectCaseSensitive(outputs, h->string, v);
        else
            cJSON_AddItemToObject(outputs, h->string, v);
    }
    char *text = tb_json_print(meta, true);
    cJSON_Delete(meta);
    char path[4200];
    int rc = -1;
    if (!text)
        tb_err_set(err, TB_E_NOMEM, "out of memory writing meta.json");
    else if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, "meta.json", err) == 0 &&
             tb_fs_write_atomic(path, text, strlen(text), err) == 0) {
        snprintf(ctx->out->meta_path, sizeof ctx->out->meta_path, "%s", path);
        rc = 0;
    }
    free(text);
    return rc;
}

static const char *s_entry_id(const cJSON *e)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    return cJSON_IsString(id) ? id->valuestring : "";
}

/* Tile order: by row, then column, as the bake lists them. */
static bool s_before(const cJSON *a, const cJSON *b)
{
    double ra = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "row"));
    double rb = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(b, "row"));
    if (ra != rb)
        return ra < rb;
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "col")) <
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(b, "col"));
}

cJSON *tb_bake_tiles_merge(tb_bake_ctx_t *ctx, cJSON **tiles, tb_err_t *err)
{
    cJSON *fresh = *tiles;
    cJSON *merged =
        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx->previous.index, "tiles"), true);
    cJSON *rerun = cJSON_CreateObject();
    cJSON *ids = cJSON_AddArrayToObject(rerun, "ids");
    cJSON *changed = cJSON_AddArrayToObject(rerun, "changed");
    if (!merged || !rerun || !ids || !changed) {
        cJSON_Delete(merged);
        cJSON_Delete(rerun);
        tb_err_set(err, TB_E_NOMEM, "out of memory merging tiles/index.json");
        return NULL;
    }
    int computed = 0, unchanged = 0;
    while (fresh->child) {
        cJSON *e = cJSON_DetachItemViaPointer(fresh, fresh->child);
        const char *id = s_entry_id(e);
        cJSON_AddItemToArray(ids, cJSON_CreateString(id));
        computed++;
        cJSON *old = NULL;
        int at = -1, k = 0;
        for (cJSON *o = merged->child; o; o = o->next, k++) {
            if (strcmp(s_entry_id(o), id) == 0) {
                old = o;
                break;
            }
            if (at < 0 && s_before(e, o))
                at = k;
        }
        if (old) {
            if (cJSON_Compare(cJSON_GetObjectItemCaseSensitive(old, "files"),
                              cJSON_GetObjectItemCaseSensitive(e, "files"), true))
                unchanged++;
            else
                cJSON_AddItemToArray(changed, cJSON_CreateString(id));
            cJSON_ReplaceItemViaPointer(merged, old, e);
        } else {
            /* a tile the index did not list (a whole bake's index lists every one): noted */
            cJSON_AddItemToArray(changed, cJSON_CreateString(id));
            if (at >= 0)
                cJSON_InsertItemInArray(merged, at, e);
            else
                cJSON_AddItemToArray(merged, e);
        }
    }
    cJSON_Delete(fresh);
    *tiles = merged;
    cJSON_AddNumberToObject(rerun, "computed", computed);
    cJSON_AddNumberToObject(rerun, "unchanged", unchanged);
    return rerun;
}

cJSON *tb_bake_tiles_rerun_meta(tb_bake_ctx_t *ctx, cJSON *rerun, int n_index)
{
    cJSON *tiles =
        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx->previous.meta, "tiles"), true);
    if (!tiles) {
        cJSON_Delete(rerun);
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(tiles, "rerun");
    cJSON_DeleteItemFromObjectCaseSensitive(tiles, "tiles");
    cJSON_AddNumberToObject(tiles, "tiles", n_index);
    cJSON_AddItemToObject(tiles, "rerun", rerun);
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rerun, "changed")) > 0)
        cJSON_AddStringToObject(tiles, "rerun_note",
                                "re-run tiles differ from the files the index listed: the "
                                "detail statistics are the bake's, not of these files");
    return tiles;
}
