/* `terrain tiles OUT [--only IDS] [--measure-margin [--sample-km X]] [--check-seams [--at ID]
 * [--margin N] [--size-km X]] [--workers N] ...`: re-runs chosen detail tiles of the complete bake
 * in OUT, measures the tile margin on its planet, or checks a 2 x 2 block of its tiles against the
 * tile of twice the size (docs/tiles.md, "Re-running chosen tiles", "Seams on a baked planet"; exit
 * 1 when the check finds a difference). Everything the bake was made from - the manifest (or the
 * demo planet's seed and size), the steps, --only, --no-coast, the --set overrides - is read from
 * OUT/meta.json; a manifest, painting or legend whose XXH3 no longer matches the record is refused.
 * The bake runs again with every region and the coast from the store (a missing one is refused:
 * nothing is re-solved), then only the chosen tiles, computed afresh (coordinator/bake/bake.h,
 * tiles_only). The verb runs in the directory the bake ran in (meta.json's bake.cwd), so the
 * manifest is read by the path the bake was given. Exit status 0, 1 when a tile job failed, 2 for
 * bad usage, a directory that holds no complete bake, changed inputs or results missing from the
 * store, 128 + signal when interrupted. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "coordinator/bake/bake.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/dispatch_cli.h"
#include "coordinator/cli/verb.h"
#include "coordinator/farm/signals.h"

static const cJSON *s_get(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

/* The input file `key` of meta.json's "inputs" ({"path", "xxh3"}) still has its recorded XXH3.
 * A relative path is taken from the directory the bake ran in (bake.cwd) when it was recorded. The
 * path used goes to path_out (may be NULL). */
static int s_check_input(const char *out_dir, const cJSON *meta, const char *key, char *path_out,
                         size_t path_n, tb_err_t *err)
{
    const cJSON *f = s_get(meta, "inputs", key);
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(f, "path");
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(f, "xxh3");
    const cJSON *cwd = s_get(meta, "bake", "cwd");
    if (!cJSON_IsString(path) || !cJSON_IsString(want))
        return tb_err_set(err, TB_E_INVALID,
                          "%s/meta.json: inputs.%s: no path and XXH3 recorded (a bake made "
                          "before they were): re-bake it with `terrain bake`",
                          out_dir, key);
    char full[PATH_MAX + 64];
    if (path->valuestring[0] != '/' && cJSON_IsString(cwd))
        snprintf(full, sizeof full, "%s/%s", cwd->valuestring, path->valuestring);
    else
        snprintf(full, sizeof full, "%s", path->valuestring);
    if (path_out)
        snprintf(path_out, path_n, "%s", full);
    char *bytes;
    size_t n;
    if (tb_fs_read_all(full, (size_t)1 << 34, &bytes, &n, err) != 0)
        return tb_err_prefix(err, "%s/meta.json names the %s the bake read", out_dir, key);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(bytes, n));
    free(bytes);
    if (strcmp(hex, want->valuestring) != 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: the %s changed since the bake in %s (XXH3 %s, the bake read %s): "
                          "its tiles would not match the bake's; bake again with `terrain bake`",
                          full, key, out_dir, hex, want->valuestring);
    return 0;
}

/* Fills *o (manifest, seed, size, steps, only, coast) from OUT/meta.json. only[] holds the ids. */
static int s_from_meta(const char *out_dir, const cJSON *meta, tb_bake_opts_t *o, char *manifest,
                       size_t manifest_n, int64_t *only, tb_err_t *err)
{
    const cJSON *inputs = s_get(meta, "inputs", NULL);
    const cJSON *seed = s_get(meta, "manifest", "seed");
    const cJSON *steps = s_get(meta, "bake", "steps");
    if (!cJSON_IsObject(inputs) || !cJSON_IsNumber(seed) || !cJSON_IsNumber(steps))
        return tb_err_set(err, TB_E_INVALID,
                          "%s/meta.json: not a bake's record (no inputs, manifest.seed or "
                          "bake.steps)",
                          out_dir);
    if (cJSON_GetObjectItemCaseSensitive(inputs, "manifest")) {
        /* the manifest as the bake was given it: the resolved manifest (which the reuse check
         * compares) holds the paths as spelled, and the verb runs in the bake's directory */
        const cJSON *given = s_get(s_get(meta, "inputs", "manifest"), "path", NULL);
        if (s_check_input(out_dir, meta, "manifest", manifest, manifest_n, err) != 0 ||
            s_check_input(out_dir, meta, "painting", NULL, 0, err) != 0 ||
            (cJSON_GetObjectItemCaseSensitive(inputs, "legend") &&
             s_check_input(out_dir, meta, "legend", NULL, 0, err) != 0))
            return -1;
        snprintf(manifest, manifest_n, "%s", given->valuestring);
        o->manifest_path = manifest;
    } else {
        const cJSON *km = s_get(meta, "manifest", "circumference_km");
        if (!cJSON_IsNumber(km))
            return tb_err_set(err, TB_E_INVALID,
                              "%s/meta.json: a demo planet without manifest.circumference_km",
                              out_dir);
        o->input.has_circumference = true;
        o->input.circumference_km = km->valuedouble;
    }
    o->input.has_seed = true;
    o->input.seed = (uint64_t)seed->valuedouble;
    o->steps = (int)steps->valuedouble;
    o->no_coast = !cJSON_IsObject(s_get(meta, "coast", NULL));
    o->no_incision = cJSON_IsTrue(s_get(meta, "bake", "test_no_incision"));
    /* the store the bake was given with --store (relative to bake.cwd, where the verb runs) */
    const cJSON *store = s_get(meta, "bake", "store");
    if (store && (!cJSON_IsString(store) || !store->valuestring[0]))
        return tb_err_set(err, TB_E_INVALID, "%s/meta.json: bake.store is not a directory's path",
                          out_dir);
    static char store_dir[PATH_MAX]; /* outlives meta, like the caller's `only` */
    if (store && strlen(store->valuestring) >= sizeof store_dir)
        return tb_err_set(err, TB_E_INVALID, "%s/meta.json: bake.store: the path is too long",
                          out_dir);
    if (store)
        snprintf(store_dir, sizeof store_dir, "%s", store->valuestring);
    o->store_dir = store ? store_dir : NULL;
    const cJSON *id;
    cJSON_ArrayForEach(id, s_get(meta, "bake", "only"))
    {
        if (!cJSON_IsNumber(id) || o->n_only >= TB_BAKE_MAX_ONLY)
            return tb_err_set(err, TB_E_INVALID, "%s/meta.json: bake.only is not a list of ids",
                              out_dir);
        only[o->n_only++] = (int64_t)id->valuedouble;
    }
    o->only = o->n_only ? only : NULL;
    return 0;
}

/* The bake's --set overrides, from meta.json's "overrides" (absent in a bake made before them:
 * none), given to the bake again so its resolved manifest is the record's. */
static int s_overrides_from_meta(const char *out_dir, const cJSON *meta, tb_overrides_t *overrides,
                                 tb_bake_opts_t *o, tb_err_t *err)
{
    const cJSON *rec = s_get(meta, "overrides", NULL);
    if (!rec || cJSON_IsNull(rec))
        return 0;
    if (!cJSON_IsObject(rec))
        return tb_err_set(err, TB_E_FORMAT, "%s/meta.json: overrides: expected an object", out_dir);
    const cJSON *it;
    cJSON_ArrayForEach(it, rec)
    {
        char *value = tb_json_print(it, false);
        char arg[4400];
        int n = value ? snprintf(arg, sizeof arg, "%s=%s", it->string, value) : -1;
        free(value);
        if (n < 0 || (size_t)n >= sizeof arg)
            return tb_err_set(err, TB_E_FORMAT, "%s/meta.json: overrides.%s: too long", out_dir,
                              it->string);
        if (tb_overrides_add(overrides, arg, err) != 0)
            return tb_err_prefix(err, "%s/meta.json: overrides", out_dir);
    }
    o->input.overrides = overrides;
    /* the seed and size the record names are the overrides' then (the two options beside them
     * are refused) */
    if (tb_overrides_has(overrides, "seed"))
        o->input.has_seed = false;
    if (tb_overrides_has(overrides, "circumference_km"))
        o->input.has_circumference = false;
    return 0;
}

static int s_run(int argc, char **argv, tb_overrides_t *overrides)
{
    const char *ids = NULL;
    bool measure = false;
    double sample_km = 0;
    bool sample_given = false;
    bool seams = false;
    const char *at = NULL;
    int64_t seams_margin = -1;
    bool margin_given = false;
    double size_km = 0;
    bool size_given = false;
    tb_dispatch_cli_t cli;
    tb_dispatch_cli_init(&cli);
    const tb_opt_t opts[] = {
        {"only", TB_OPT_STRING, &ids, NULL, "IDS",
         "the tiles to re-run: ids as `terrain plan` prints them (c001r000), comma-separated, "
         "and ranges c000r000-c002r001; default: every tile"},
        {"measure-margin", TB_OPT_FLAG, &measure, NULL, NULL,
         "measure the tile margin on this planet's steepest land tile and two more; writes "
         "nothing"},
        {"sample-km", TB_OPT_DOUBLE, &sample_km, &sample_given, "X",
         "--measure-margin: the sample tiles' edge (default: the smallest of at least 0.4 km "
         "that divides the circumference)",
         TB_OPT_DRANGE(0.001, 1000)},
        {"check-seams", TB_OPT_FLAG, &seams, NULL, NULL,
         "compute a 2 x 2 block of tiles as four jobs and the tile of twice the size in one "
         "piece, compare every sample; exit 1 when any differs; writes nothing"},
        {"at", TB_OPT_STRING, &at, NULL, "ID",
         "--check-seams: the block holding this tile (default: round the steepest point of the "
         "largest landmass)"},
        {"margin", TB_OPT_INT, &seams_margin, &margin_given, "N",
         "--check-seams: the margin of all five tiles (default: the one in use; half of it is "
         "the negative control)",
         TB_OPT_IRANGE(0, 100000)},
        {"size-km", TB_OPT_DOUBLE, &size_km, &size_given, "X",
         "--check-seams: the small tiles' edge (default: the bake's; twice it must divide the "
         "circumference)",
         TB_OPT_DRANGE(0.001, 1000)},
    };
    tb_verb_t v = {.name = "tiles",
                   .usage = "terrain tiles OUT [--only IDS] [--measure-margin [--sample-km X]] "
                            "[--check-seams [--at ID] [--margin N] [--size-km X]] [--workers N] "
                            "[--threads N]   (OUT: a complete bake with its "
                            "meta.json)",
                   TB_VERB_SHARED(opts, cli.opts),
                   .min_positional = 1,
                   .max_positional = 1,
                   .positional_what = "the bake's output directory"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    if (measure && ids)
        return tb_verb_usage(&v, "--only and --measure-margin: give one or the other");
    if (seams && (measure || ids))
        return tb_verb_usage(&v, "--check-seams goes alone (not with --only or --measure-margin)");
    if ((at || margin_given || size_given) && !seams)
        return tb_verb_usage(&v, "--at, --margin and --size-km go with --check-seams");
    if (sample_given && !measure)
        return tb_verb_usage(&v, "--sample-km goes with --measure-margin");
    tb_err_t err;
    tb_bake_opts_t o = {0};
    if (tb_dispatch_cli_apply(&cli, &o.dispatch, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    if (cli.verbose)
        tb_log_set_level(TB_LOG_DEBUG);
    const char *out_dir = v.positional[0];
    char path[PATH_MAX + 64], *text = NULL;
    size_t n;
    if (tb_fs_join(path, sizeof path, out_dir, "meta.json", &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    if (tb_fs_read_all(path, (size_t)1 << 30, &text, &n, &err) != 0) {
        tb_err_prefix(&err, "%s: not a complete bake (a bake writes meta.json last)", out_dir);
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    }
    cJSON *meta = cJSON_ParseWithLength(text, n);
    free(text);
    if (!meta) {
        tb_err_set(&err, TB_E_FORMAT, "%s: not JSON", path);
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    }
    /* the bake's relative input paths are taken from the directory it ran in (bake.cwd) */
    char abs_out[PATH_MAX];
    const cJSON *cwd = s_get(meta, "bake", "cwd");
    if (!realpath(out_dir, abs_out)) {
        cJSON_Delete(meta);
        tb_err_set(&err, TB_E_IO, "%s: %s", out_dir, strerror(errno));
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    }
    out_dir = abs_out;
    if (cJSON_IsString(cwd) && chdir(cwd->valuestring) != 0) {
        tb_err_set(&err, TB_E_IO,
                   "%s/meta.json: the directory the bake ran in, %s, cannot be entered (%s): "
                   "the bake's relative input paths are taken from there",
                   out_dir, cwd->valuestring, strerror(errno));
        cJSON_Delete(meta);
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    }
    static int64_t only[TB_BAKE_MAX_ONLY];
    char manifest[PATH_MAX + 64];
    int rc = s_from_meta(out_dir, meta, &o, manifest, sizeof manifest, only, &err);
    if (rc == 0)
        rc = s_overrides_from_meta(out_dir, meta, overrides, &o, &err);
    cJSON_Delete(meta);
    if (rc != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    o.out_dir = out_dir;
    o.tiles = true;
    o.tiles_only = measure || seams ? NULL : (ids ? ids : "all");
    o.tiles_only_option = "--only";
    o.measure_margin = measure || seams; /* the check rides on its read-only path */
    o.check_seams = seams;
    o.seams_at = at;
    o.seams_margin = margin_given ? (int)seams_margin : -1;
    o.seams_size_km = size_given ? size_km : 0;
    o.margin_sample_km = sample_km;
    o.dispatch.interrupted = tb_signals_catch();
    tb_bake_outcome_t outcome;
    if (tb_bake_run(&o, &outcome, &err) != 0) {
        bool bad_input = outcome.bad_input;
        tb_bake_outcome_free(&outcome);
        return tb_verb_error(&v, bad_input ? TB_EXIT_USAGE : TB_EXIT_FAILED, &err);
    }
    if (seams) {
        int64_t differ = outcome.seams_differ;
        tb_bake_outcome_free(&outcome);
        return differ ? TB_EXIT_FAILED : TB_EXIT_OK;
    }
    if (!measure)
        printf("tiles: %d detail tiles re-run in %.1f s, in %s/tiles (index.json and meta.json "
               "updated)\n",
               outcome.tiles_baked, outcome.tiles_seconds, out_dir);
    tb_bake_outcome_free(&outcome);
    return TB_EXIT_OK;
}

int tb_cmd_tiles(int argc, char **argv)
{
    return tb_verb_run_with_overrides(argc, argv, s_run);
}
