/* `terrain bake` as a function: plan the planet, solve its regions as jobs through the dispatch
 * engine, composite them in region order, and write the outputs (docs/bake.md). The bake is a
 * pipeline of phases (coordinator/bake/phase.h, docs/architecture.md).
 *
 * The gate (`terrain gate`) and the tests call tb_bake_run directly; the verb only parses options
 * and prints. Outputs go to opts->out_dir, each written to a temporary name and renamed, meta.json
 * last, so a directory with a meta.json holds a complete bake. Results are kept in out_dir/.cache,
 * so a rerun reuses every region already solved.
 */
#ifndef TB_BAKE_H
#define TB_BAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/farm/dispatch.h"
#include "coordinator/bake/planet_input.h"
#include "jobs/stats/stats.h"

#define TB_BAKE_MAX_ONLY 4096
/* A coast block job's memory at most. Its spec, 5 bytes a window cell, is cut by the coordinator,
 * two at once on its helper threads, compressed and sent; the result is checked against the head of
 * the compressed spec alone (tb_job_kind_t.spec_head_bytes), so the coordinator holds a raw spec
 * only while it cuts it. 2.4 GB a job keeps a spec under 200 MB (the 300 km demo: 24 x 2 blocks,
 * windows 4.19 times the planet's cells, against 20 x 6 and 7.05 at the former 1.8 GB, when each
 * check decoded the whole spec again); at 3 GB the kernel's first touch of each job's fresh memory
 * cost more than the smaller halo saved (bench_coast, docs/coast.md "What blocks cost"). The
 * blocks' bytes do not depend on it. */
#define TB_BAKE_COAST_JOB_MAX 2.4e9

/* The memory one job may take by default: three quarters of this machine's (the workers of a
 * local bake run here; a farm's are told with --job-memory-gb). */
double tb_bake_default_job_memory(void);

/* A bake whose heightmap clips more than this share of cells fails (docs/traps.md). */
#define TB_BAKE_MAX_CLIP_FRACTION 0.001

typedef struct {
    const char *manifest_path; /* NULL: the demo planet */
    tb_input_options_t input;  /* --seed, --circumference-km */
    const char *out_dir;       /* required */
    /* --store: the result store's directory (NULL: OUT/.cache); bakes of one build may share one
     * (docs/bake.md, "The result store") */
    const char *store_dir;
    const int64_t *only; /* region ids to solve; NULL = all */
    int n_only;
    int steps; /* > 0 overrides solve.steps */
    tb_dispatch_opts_t
        dispatch;     /* workers, threads, bind ...; store_dir and callbacks are set here */
    bool quiet;       /* no tables on stdout (the gate prints its own) */
    bool no_incision; /* test-only: stream-power incision off (a negative control) */
    bool no_coast;    /* --no-coast: skip the coastal pass (docs/coast.md) */
    /* --job-memory-gb: the memory one job may take on a worker, bytes (0: TB_BAKE_JOB_MEMORY of
     * this machine). A region whose solve needs more is refused by the plan; the coast is cut into
     * blocks whose jobs fit it (and TB_BAKE_COAST_JOB_MAX, the coordinator's share of a spec). */
    double job_memory_bytes;
    bool tiles; /* run the tiles phase (docs/tiles.md): `terrain bake` sets it
                   unless --no-tiles; library callers opt in */
    /* Re-running chosen tiles against the complete bake in out_dir (docs/tiles.md, "Re-running
     * chosen tiles"): tile ids and ranges as tiles_select.h parses them. Every region and the
     * coast must come from the store (else TB_E_INVALID before anything is written), the outputs
     * and maps are left as they are, the chosen tiles are computed afresh and replace their files
     * and index entries, and meta.json keeps everything but its "tiles" section and those files'
     * hashes. NULL: every tile. */
    const char *tiles_only;
    const char *tiles_only_option; /* how the user spelled it, for messages; NULL: --tiles-only */
    /* `terrain tiles OUT --measure-margin`: like tiles_only (everything from the store, nothing
     * of the bake rewritten), but instead of baking tiles the tiles phase measures the margin on
     * the planet's steepest land tile and two more (jobs/detail/margin.h) with sample tiles of
     * margin_sample_km, and prints the table; no file is written. */
    bool measure_margin;
    double margin_sample_km; /* 0: 0.4 km, as the bench */
    /* `terrain tiles OUT --check-seams`: rides on measure_margin's path (set both: everything from
     * the store, nothing written), but the tiles phase checks the seams of a 2 x 2 block instead
     * (coordinator/bake/tiles_seams.c): seams_at names a tile of the block (NULL: the block round
     * the steepest point of the largest landmass), seams_margin the margin (-1: the one in use),
     * seams_size_km the tile size (0: the bake's). The outcome's seams_differ says what it found.
     */
    bool check_seams;
    const char *seams_at;
    int seams_margin;
    double seams_size_km;
} tb_bake_opts_t;

typedef struct {
    bool bad_input; /* failed before anything ran: the manifest, painting or options */
    bool partial;   /* --only */
    int regions_solved, regions_total;
    int64_t land_cells_solved;
    tb_stats_extent_t extent;
    double clip_fraction;
    tb_stats_t *stats; /* merged in region order; owned by the caller (tb_stats_destroy) */
    double seconds;
    tb_dispatch_stats_t dispatch; /* jobs, from_store, ran, attempts ... (filled once dispatched) */
    int tiles_baked;              /* detail tiles written to out_dir/tiles (0 when skipped) */
    size_t tiles_from_store;      /* of them, taken from the result store */
    double tiles_seconds;
    int64_t seams_differ; /* check_seams: cells of the block that differ in some map (0: none) */
    char summary_path[4200];
    char meta_path[4200];
} tb_bake_outcome_t;

/* Runs a bake. Returns 0 when every job ran and the outputs are written; -1 with *err set
 * otherwise. A bake whose clip fraction exceeds TB_BAKE_MAX_CLIP_FRACTION writes its outputs, then
 * returns -1 (TB_E_INVALID) naming the fraction. *out is filled as far as the bake got; free its
 * stats with tb_bake_outcome_free. */
int tb_bake_run(const tb_bake_opts_t *opts, tb_bake_outcome_t *out, tb_err_t *err);

void tb_bake_outcome_free(tb_bake_outcome_t *out);

#endif
