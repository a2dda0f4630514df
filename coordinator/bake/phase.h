/* The bake as a pipeline of phases (docs/architecture.md, the pipeline): what a phase is, and the
 * context every phase of one bake shares. Internal to coordinator/bake/.
 *
 * A phase is one file coordinator/bake/phase_NAME.c exporting one const tb_phase_t, listed once in
 * the table of coordinator/bake/phases.c. It declares the planet arrays it reads and writes
 * (TB_PLANET_BIT masks, coordinator/bake/planet.h); the driver (driver.c) runs the phases in table
 * order, provides the arrays each writes, refuses a phase that reads an array no earlier phase
 * wrote, times each, and records each in meta.json ("phases": name, seconds, reads, writes,
 * skipped).
 */
#ifndef TB_BAKE_PHASE_H
#define TB_BAKE_PHASE_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/bake/bake.h"
#include "coordinator/bake/planet.h"
#include "coordinator/bake/planet_input.h"
#include "coordinator/farm/dispatch.h"
#include "coordinator/report/report.h"
#include "jobs/detail/tile.h"
#include "jobs/coast/coast.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "jobs/stats/stats.h"
#include "jobs/uplift/uplift.h"

#define TB_BAKE_MAX_PHASES 16

/* What one phase did, for meta.json. */
typedef struct {
    const char *name;
    double seconds;
    uint32_t reads, writes;
    bool ran;
    const char *skipped; /* the reason, when skipped */
} tb_phase_record_t;

/* Everything one bake's phases share. Each field says which phase fills it. */
typedef struct {
    const tb_bake_opts_t *opts;
    tb_bake_outcome_t *out;
    double started_s;
    /* plan */
    tb_planet_input_t input;
    tb_plan_t *plan;
    const tb_manifest_t *manifest; /* the plan's */
    int steps;                     /* solve steps: --steps, or the manifest's */
    tb_uplift_probes_t probes;
    bool *selected;       /* [region index]: solved in this bake (--only) */
    char store_dir[4200]; /* out_dir/.cache */
    tb_planet_t *planet;
    uint8_t *tile_sel;   /* [lattice tile]: chosen by opts->tiles_only (NULL: every tile) */
    cJSON *before_meta;  /* tiles_only, measure_margin: out_dir/meta.json as it was; owned */
    cJSON *before_index; /* tiles_only: out_dir/tiles/index.json as it was; owned */
    /* solve */
    tb_dispatch_t *dispatch; /* the solve's engine; in farm mode the bake's one engine, which
                                serves the coast and tiles phases too (tb_bake_dispatch) */
    cJSON *solve_record;     /* the solve's dispatch record for meta.json, taken after its run */
    tb_stats_t *stats;       /* merged in region order; moved to out->stats at the end */
    const char *partial;     /* "regions 2,3 of 4" for a partial bake, else NULL */
    char partial_text[256];
    tb_region_mouth_t *mouths; /* the regions' river mouths, in region order */
    size_t n_mouths, cap_mouths;
    /* coast */
    bool coast_ran;
    tb_coast_stats_t coast_stats;
    double coast_s;      /* the coast phase's seconds */
    cJSON *coast_record; /* the coast job's dispatch record, for meta.json */
    /* outputs */
    int64_t clipped;      /* heightmap cells outside elevation_m */
    cJSON *hashes;        /* output file name -> XXH3 (hex), in writing order */
    cJSON *meta_sections; /* tb_bake_meta_add: the phases' own sections of meta.json */
    /* whole: the planet a partial bake's tiles read (phase_whole.c, docs/tiles.md "Tiles of a
     * partial bake"); NULL in a whole bake, where the tiles read the planet itself */
    float *whole_height_m;    /* the composite with the stored regions' land, after the coast of
                                 the whole composite when the coastal pass is on; owned */
    float *whole_area_m2;     /* drainage area, the same way; owned */
    uint16_t *whole_exposure; /* the coast of the whole composite's exposure and moved_m, for the */
    float *whole_moved_m;     /* tiles' shore pass; owned; NULL without the coastal pass */
    uint8_t *whole_known;    /* 1 where the land is solved here or borrowed from the store; owned */
    int whole_borrowed;      /* regions whose stored results were borrowed */
    cJSON *whole_coast;      /* the coast of the whole composite, for meta.json's "tiles"; owned */
    char whole_missing[768]; /* non-empty: why the tiles phase is skipped (regions missing) */
    cJSON *tiles_skip_meta;  /* meta.json's "tiles" when skipped for those regions; owned */
    /* tiles */
    cJSON *tiles_meta; /* meta.json's "tiles" (NULL when the phase did not run); owned */
    /* the driver */
    tb_report_live_t *live; /* report.html while the bake runs, from the end of the plan */
    tb_phase_record_t records[TB_BAKE_MAX_PHASES];
    int n_records;
} tb_bake_ctx_t;

typedef struct {
    const char *name;
    uint32_t reads; /* TB_PLANET_BIT masks */
    uint32_t writes;
    bool writes_files; /* writes into out_dir: the previous meta.json goes before it runs */
    /* Skipped in a bake that reuses its outputs (--tiles-only, terrain tiles): what it writes is
     * the bake's, kept as it is (coordinator/bake/reuse.c). */
    bool kept_on_reuse;
    /* Optional: a reason to skip this phase in this bake (e.g. a partial bake), or NULL to run. */
    const char *(*skip)(const tb_bake_ctx_t *ctx);
    /* Runs the phase: 0, or -1 with *err set. */
    int (*run)(tb_bake_ctx_t *ctx, tb_err_t *err);
} tb_phase_t;

/* The phases, in the order they run (coordinator/bake/phases.c). A phase file defines its
 * `const tb_phase_t tb_phase_NAME`; phases.c declares it. */
extern const tb_phase_t *const tb_bake_phases[];
extern const int tb_bake_n_phases;

/* Runs phases[0..n) on ctx as tb_bake_run does (the driver's checks, allocation, timing, records in
 * ctx->records); 0, or -1 with *err set (by the phase, or by the driver naming the phase).
 * tb_bake_run calls it with tb_bake_phases; the tests call it with their own tables. */
int tb_bake_run_phases(tb_bake_ctx_t *ctx, const tb_phase_t *const *phases, int n, tb_err_t *err);

/* The dispatch engine of a phase after the solve (coast, tiles), with the batch's callbacks and
 * label. In farm mode (--bind) it is the bake's one engine, ctx->dispatch, moved on to a new batch:
 * the same socket and the same connected workers serve every phase, and they are dismissed once,
 * when the bake ends (docs/distribution.md, "One engine across the phases"); *owned is then false.
 * Otherwise it is a new engine with the bake's options and the store, *owned true: the caller
 * destroys it. NULL with *err set on failure. */
tb_dispatch_t *tb_bake_dispatch(tb_bake_ctx_t *ctx, const tb_dispatch_batch_t *batch, bool *owned,
                                tb_err_t *err);

/* TB_E_INTERRUPTED when the program's SIGINT/SIGTERM flag is up: a phase checks it between its
 * steps, so an interrupted bake stops before meta.json. */
int tb_bake_check_interrupted(const tb_bake_ctx_t *ctx, tb_err_t *err);

/* Whether the bake only reads what out_dir holds (opts->tiles_only or opts->measure_margin): the
 * previous meta.json stays, the outputs and maps are not rewritten, every region and the coast
 * must be in the store. */
bool tb_bake_reuses_outputs(const tb_bake_ctx_t *ctx);

/* The canonical spec of region index ri's job (coordinator/bake/phase_solve.c): the bytes that key
 * its result in the store. 0, or -1 with *err. */
int tb_bake_region_spec(const tb_bake_ctx_t *ctx, int ri, void **bytes, size_t *n, tb_err_t *err);

/* A partial bake's tiles (coordinator/bake/tiles_partial.c): land_m and area_m2 get copies of the
 * planet's land heights and drainage area with the land of every region this bake did not solve but
 * whose result of this build is in the store written in as the solve composites it, known the mask
 * of land so known (solved or stored), *mouths (malloc'd, caller frees; may be NULL when not
 * wanted) the river mouths of every region solved or borrowed. missing[] (room for every region)
 * gets the ids of the regions neither solved nor stored, *n_missing their count; with
 * stop_if_missing, a region absent from the store ends the look-up before any stored result is
 * decoded (the coastal pass needs them all). *n_borrowed gets the number of stored regions used.
 * 0, or -1 with *err. */
int tb_bake_tiles_borrow(const tb_bake_ctx_t *ctx, bool stop_if_missing, float *land_m,
                         float *area_m2, uint8_t *known, tb_region_mouth_t **mouths,
                         size_t *n_mouths, int *missing, int *n_missing, int *n_borrowed,
                         tb_err_t *err);

/* The composite rule (coordinator/bake/phase_composite.c): ocean at its class's painted depth, land
 * at land_m. height may be land_m (in place). */
void tb_bake_composite_heights(const tb_manifest_t *m, const uint8_t *classes, const float *land_m,
                               float *height_m, size_t cells);

/* The coast job (coordinator/bake/phase_coast.c): the canonical spec of the coastal pass over
 * height_m (the planet's classes, the manifest's coast section) with these river mouths, and its
 * run through the dispatch engine under `label` - in a bake that reuses its outputs only from the
 * store (else TB_E_INVALID, ctx->out->bad_input set) - decoded into *r (tb_coast_result_free) and
 * checked to be the planet's size (else TB_E_FORMAT), with the dispatch record in *record (may be
 * NULL on failure; caller deletes). 0, or -1 with *err. */
int tb_bake_coast_spec(const tb_bake_ctx_t *ctx, const float *height_m,
                       const tb_region_mouth_t *mouths, size_t n_mouths, void **bytes, size_t *n,
                       tb_err_t *err);
int tb_bake_coast_job(tb_bake_ctx_t *ctx, const void *spec, size_t n, const char *label,
                      tb_coast_result_t *r, cJSON **record, tb_err_t *err);

/* In a bake that reuses its outputs: 0 when the result store holds a result of this build for the
 * job (kind, spec), else -1 with *err (TB_E_INVALID) naming `label` (coordinator/bake/reuse.c). */
int tb_bake_require_stored(const tb_bake_ctx_t *ctx, const char *kind, const void *spec, size_t n,
                           const char *label, tb_err_t *err);

/* The plan phase's part of a bake that reuses its outputs: reads out_dir/meta.json (and the tile
 * index for tiles_only) into ctx and refuses, with TB_E_INVALID, a directory that holds no complete
 * bake or a bake of another planet (resolved manifest, class raster, steps, coast, --only). */
int tb_bake_reuse_check(tb_bake_ctx_t *ctx, tb_err_t *err);

/* The driver's last step in such a bake: out_dir/meta.json as it was, with "tiles" replaced by
 * ctx->tiles_meta and the hashes of every file this run wrote (ctx->hashes) put in "outputs".
 * Nothing when measure_margin. */
int tb_bake_reuse_meta_write(tb_bake_ctx_t *ctx, tb_err_t *err);

/* --tiles-only: merges the entries of the tiles just re-run (*tiles, an array in tile order, taken
 * over) into the previous index's "tiles" array, which replaces *tiles; returns the "rerun" record
 * for meta.json (ids, computed, unchanged, changed), or NULL with *err. */
cJSON *tb_bake_tiles_merge(tb_bake_ctx_t *ctx, cJSON **tiles, tb_err_t *err);

/* --tiles-only: meta.json's "tiles" as it was, with "rerun" (taken over) and the count of tiles the
 * index now lists. NULL when out of memory. */
cJSON *tb_bake_tiles_rerun_meta(tb_bake_ctx_t *ctx, cJSON *rerun, int n_index);

/* `terrain tiles --measure-margin` (coordinator/bake/tiles_margin.c): measures the margin on this
 * planet's steepest land tile and two more, with sample tiles, and prints the table. */
int tb_bake_tiles_measure(tb_bake_ctx_t *ctx, const tb_tile_planet_t *src,
                          const tb_detail_params_t *p, const tb_tile_class_t *cls, int n_cls,
                          const uint8_t *land, tb_err_t *err);

/* `terrain tiles --check-seams` (coordinator/bake/tiles_seams.c): computes a 2 x 2 block of tiles
 * as four tile jobs and the tile of twice the size as one, compares them and prints what differs;
 * sets ctx->out->seams_differ. */
int tb_bake_tiles_check_seams(tb_bake_ctx_t *ctx, const tb_tile_planet_t *src,
                              const tb_detail_params_t *p, const tb_tile_class_t *cls, int n_cls,
                              const uint8_t *land, tb_err_t *err);

/* The output writers (coordinator/bake/outputs.c): each writes out_dir/NAME atomically and records
 * its XXH3 in ctx->hashes under NAME. */
/* The names the bake writes into out_dir (a phase that writes another adds it here), and the check
 * that none of them is one of the bake's inputs (manifest, legend, painting): the plan phase checks
 * them all before anything is written, and the writers check each again (docs/bake.md). */
extern const char *const tb_bake_output_names[];
extern const size_t tb_bake_n_output_names;
int tb_bake_check_inputs(const tb_bake_ctx_t *ctx, const char *const *names, size_t n_names,
                         tb_err_t *err);
int tb_bake_write_png(tb_bake_ctx_t *ctx, const char *name, const tb_image_t *img, tb_err_t *err);
int tb_bake_write_text(tb_bake_ctx_t *ctx, const char *name, const char *text, tb_err_t *err);
/* Writes bytes already encoded (a PNG, an .r16) to out_dir/NAME atomically and records its XXH3;
 * *xxh3 (may be NULL) gets the hash. */
int tb_bake_write_bytes(tb_bake_ctx_t *ctx, const char *name, const void *bytes, size_t n,
                        uint64_t *xxh3, tb_err_t *err);
/* Records the XXH3 of out_dir/NAME, a file another module wrote. */
int tb_bake_hash_file(tb_bake_ctx_t *ctx, const char *name, tb_err_t *err);

/* Writes out_dir/summary.txt (coordinator/bake/summary.c): the head line, the statistics, the coast
 * block and, when ctx->tiles_meta is set, the detail block (docs/tiles.md). Written whole to a
 * temporary name and renamed, so the detail phase may write it again. Printed unless quiet: all of
 * it, or only the detail block when print_detail_only. */
int tb_bake_summary_write(tb_bake_ctx_t *ctx, bool print_detail_only, tb_err_t *err);

/* Adds `item` (taken over) to meta.json as the top-level section `key` (e.g. "coast": the coast
 * phase's statistics and its dispatch record); a key the bake already writes is refused
 * (TB_E_INTERNAL). 0 or -1. */
int tb_bake_meta_add(tb_bake_ctx_t *ctx, const char *key, cJSON *item, tb_err_t *err);

/* Writes out_dir/meta.json (coordinator/bake/meta.c): the tool, manifest, plan, bake, extent,
 * dispatch (the solve's), statistics, the phases' own sections, phases and outputs. Its presence
 * says the directory holds a complete bake.
 */
int tb_bake_meta_write(tb_bake_ctx_t *ctx, tb_err_t *err);

#endif
