/* `terrain bake [MANIFEST] [--out DIR] [--only IDS] [--steps N] [--set KEY=VALUE]... [--workers N]
 * [--threads N]
 * [--bind ENDPOINT] ...`: plans the planet, solves its regions on workers, composites them and
 * writes the heightmap, the maps, summary.txt and meta.json (coordinator/bake/bake.h). Exit status
 * 0 on success, 1 when the bake failed (a job failed on 3 workers, the heightmap clips), 2 for bad
 * usage or input, 128 + signal when interrupted. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "common/args.h"
#include "common/log.h"
#include "coordinator/bake/bake.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/dispatch_cli.h"
#include "coordinator/cli/verb.h"
#include "coordinator/farm/signals.h"

static void s_on_listening(void *user, const char *endpoint)
{
    (void)user;
    printf("bake: listening for workers on %s\n", endpoint);
    fflush(stdout);
}

static int s_run(int argc, char **argv, tb_overrides_t *overrides)
{
    const char *out_dir = "out/bake", *only_text = NULL, *tiles_only = NULL, *store = NULL;
    int64_t steps = 0, seed = 0;
    double circumference_km = 0, job_memory_gb = 0;
    bool seed_given = false, circ_given = false, no_incision = false, no_coast = false,
         no_tiles = false;
    tb_dispatch_cli_t cli;
    tb_dispatch_cli_init(&cli);
    const tb_opt_t opts[] = {
        {"out", TB_OPT_STRING, &out_dir, NULL, "DIR", "output directory (out/bake)"},
        {"store", TB_OPT_STRING, &store, NULL, "DIR",
         "the result store (default OUT/.cache); bakes of this build may share one"},
        {"only", TB_OPT_STRING, &only_text, NULL, "IDS",
         "solve only these regions (e.g. 2,3; ids from `terrain plan`): a PARTIAL bake"},
        TB_VERB_OPT_STEPS(&steps),
        TB_VERB_OPT_SET(overrides),
        TB_VERB_OPT_SEED(&seed, &seed_given, "seed (default: the manifest's, or 7)"),
        TB_VERB_OPT_CIRCUMFERENCE(&circumference_km, &circ_given,
                                  "demo planet only: its circumference (25)"),
        {"no-coast", TB_OPT_FLAG, &no_coast, NULL, NULL,
         "skip the coastal pass: every coast stays a step (docs/coast.md)"},
        {"no-tiles", TB_OPT_FLAG, &no_tiles, NULL, NULL,
         "skip the detail tiles (out_dir/tiles, docs/tiles.md)"},
        {"tiles-only", TB_OPT_STRING, &tiles_only, NULL, "IDS",
         "re-run only these detail tiles (c001r000, ranges c000r000-c002r001, or all) of the "
         "complete bake in --out, every region from its store (docs/tiles.md)"},
        {"job-memory-gb", TB_OPT_DOUBLE, &job_memory_gb, NULL, "G",
         "the memory one job may take on a worker (default: 3/4 of this machine's); a region "
         "needing more is refused, the coast cut into blocks that fit",
         TB_OPT_DRANGE(0.01, 1e6)},
        {"test-no-incision", TB_OPT_FLAG, &no_incision, NULL, NULL,
         "TEST ONLY: turn stream-power incision off (a negative control for the gates)"},
    };
    tb_verb_t v = {
        .name = "bake",
        .usage = "terrain bake [MANIFEST] [--out DIR] [--only IDS] [--steps N] "
                 "[--set KEY=VALUE]... [--store DIR] [--no-coast] [--no-tiles] [--tiles-only IDS] "
                 "[--workers N] [--threads N] "
                 "[--bind ENDPOINT] [--fresh]",
        TB_VERB_SHARED(opts, cli.opts),
        .max_positional = 1};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    if (!*out_dir)
        return tb_verb_usage(&v, "--out '': expected the output directory");
    if (store && !*store)
        return tb_verb_usage(&v, "--store '': expected the result store's directory");
    if (steps > 0 && tb_overrides_has(overrides, "solve.steps"))
        return tb_verb_usage(&v, "--steps %lld and --set %s: both set the steps; give one",
                             (long long)steps, tb_overrides_arg(overrides, "solve.steps"));
    if (tiles_only && no_tiles)
        return tb_verb_usage(&v,
                             "--tiles-only %s with --no-tiles: the one re-runs tiles, the "
                             "other makes none; give one or the other",
                             tiles_only);
    tb_err_t err;
    tb_bake_opts_t o = {0};
    if (tb_dispatch_cli_apply(&cli, &o.dispatch, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    int64_t only[TB_BAKE_MAX_ONLY];
    if (only_text) {
        o.n_only = tb_args_int_list(only_text, "only", only, TB_BAKE_MAX_ONLY, &err);
        if (o.n_only < 0)
            return tb_verb_error(&v, TB_EXIT_USAGE, &err);
        o.only = only;
    }
    if (cli.verbose)
        tb_log_set_level(TB_LOG_DEBUG);
    if (tb_overrides_count(overrides) > 0) {
        char given[1024];
        tb_overrides_describe(overrides, given, sizeof given);
        tb_log_info("overriding the manifest: %s (recorded in meta.json)", given);
    }
    o.manifest_path = v.n_positional ? v.positional[0] : NULL;
    o.input.has_seed = seed_given;
    o.input.seed = (uint64_t)seed;
    o.input.has_circumference = circ_given;
    o.input.circumference_km = circumference_km;
    o.input.overrides = overrides;
    o.out_dir = out_dir;
    o.store_dir = store;
    o.steps = (int)steps;
    o.no_incision = no_incision;
    o.no_coast = no_coast;
    o.job_memory_bytes = job_memory_gb * 1e9;
    o.tiles = !no_tiles;
    o.tiles_only = tiles_only;
    o.dispatch.on_listening = s_on_listening;
    o.dispatch.interrupted = tb_signals_catch();
    /* The phases allocate and free band buffers, specs and results of megabytes all along: kept
     * mmapped, a free gives them back at once, where glibc's growing threshold moves them onto a
     * heap that holds its high-water mark (measured at 100 km: each phase's peak 10-30 % lower,
     * docs/bake.md, "Memory"). No output depends on it. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    tb_bake_outcome_t outcome;
    if (tb_bake_run(&o, &outcome, &err) != 0) {
        bool bad_input = outcome.bad_input;
        tb_bake_outcome_free(&outcome);
        return tb_verb_error(&v, bad_input ? TB_EXIT_USAGE : TB_EXIT_FAILED, &err);
    }
    if (tiles_only) {
        printf("bake: %d detail tiles re-run in %.1f s, in %s/tiles (index.json and meta.json "
               "updated; every region from the store)\n",
               outcome.tiles_baked, outcome.tiles_seconds, out_dir);
        tb_bake_outcome_free(&outcome);
        return TB_EXIT_OK;
    }
    printf("bake: %d of %d regions (%zu solved, %zu from the store) in %.1f s; outputs in %s "
           "(summary.txt, meta.json, planet_height.png, maps)\n",
           outcome.regions_solved, outcome.regions_total, outcome.dispatch.ran,
           outcome.dispatch.from_store, outcome.seconds, out_dir);
    if (outcome.tiles_baked > 0)
        printf("bake: %d detail tiles (%zu from the store) in %.1f s, in %s/tiles\n",
               outcome.tiles_baked, outcome.tiles_from_store, outcome.tiles_seconds, out_dir);
    tb_bake_outcome_free(&outcome);
    return TB_EXIT_OK;
}

int tb_cmd_bake(int argc, char **argv)
{
    return tb_verb_run_with_overrides(argc, argv, s_run);
}
