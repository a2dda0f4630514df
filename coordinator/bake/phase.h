/* The bake as a pipeline of phases that exchange declared artifacts (docs/architecture.md, "The
 * pipeline of a bake"): what a phase is, what an artifact is, and the context one bake's phases
 * share. Internal to coordinator/bake/.
 *
 * An artifact is a named product of exactly one phase: a planet-sized raster (coordinator/bake/
 * planet.h: a file in OUT/.planet, memory-mapped) or a small value held in the context (the plan,
 * the regions' statistics and river mouths, the coast's record, the extent, the tile lists). A
 * phase declares the artifacts it reads and writes as TB_ART_BIT masks; the driver (driver.c) runs
 * the phases in table order, refuses a phase that reads an artifact no earlier phase made, makes
 * the rasters a phase writes before running it, lets every raster's pages go after each phase, and
 * records each phase in meta.json ("phases": name, seconds, reads, writes, skipped). That no two
 * phases of the table write one artifact is checked by tests/test_phases.c
 * (tb_bake_check_producers).
 *
 * What is not an artifact is the bake's own machinery, which every phase may use: the options and
 * the outcome, the dispatch engine (one for the whole bake), the live report, the phase records,
 * and the record of files written (their hashes, and the phases' own sections of meta.json).
 */
#ifndef TB_BAKE_PHASE_H
#define TB_BAKE_PHASE_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/png_io.h"
#include "coordinator/bake/bake.h"
#include "coordinator/bake/planet.h"
#include "coordinator/bake/planet_input.h"
#include "coordinator/farm/dispatch.h"
#include "coordinator/report/report.h"
#include "jobs/coast/coast.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/params.h"
#include "jobs/detail/tile.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "jobs/stats/stats.h"
#include "jobs/uplift/uplift.h"

#define TB_BAKE_MAX_PHASES 16

/* The small artifacts, after the rasters of TB_PLANET_ARRAYS: X(ID, name, what it holds). */
#define TB_BAKE_VALUES(X)                                                                          \
    X(PLAN, plan, "the input, the plan, the probes, the region and tile selection")                \
    X(PREVIOUS, previous, "the complete bake in OUT before this run: its meta.json and index")     \
    X(REGIONS, regions, "the regions composited: statistics, river mouths, the solve's record")    \
    X(COAST, coast, "the coastal pass's statistics and record (not made with --no-coast)")         \
    X(EXTENT, extent, "the final heightmap's extent and clip fraction")                            \
    X(TILE_LIST, tile_list, "the detail tiles to bake, and the ones a partial bake cannot")        \
    X(TILE_FILES, tile_files, "the tiles baked: index entries, pooled statistics, record")         \
    X(TILES, tiles, "tiles/index.json written, and meta.json's \"tiles\"")

/* Every artifact: the rasters first (their ids are the planet arrays' ids), then the values. */
typedef enum {
#define TB_ART_X_RASTER(id, name, type, ext, fill, what) TB_ART_##id,
    TB_PLANET_ARRAYS(TB_ART_X_RASTER)
#undef TB_ART_X_RASTER
#define TB_ART_X_VALUE(id, name, what) TB_ART_##id,
        TB_BAKE_VALUES(TB_ART_X_VALUE)
#undef TB_ART_X_VALUE
            TB_ART_N
} tb_art_t;

_Static_assert(TB_ART_N <= 64, "artifacts are bits of a uint64_t");
_Static_assert((int)TB_ART_CLASSES == (int)TB_PLANET_CLASSES, "rasters first, as in planet.h");

#define TB_ART_BIT(id) ((uint64_t)1 << TB_ART_##id)
/* The rasters of an artifact mask, as a TB_PLANET_BIT mask. */
#define TB_ART_RASTERS(mask) ((uint32_t)((mask) & (((uint64_t)1 << TB_PLANET_N_ARRAYS) - 1)))

/* The artifact's name ("height_m", "regions"), for meta.json and messages. */
const char *tb_art_name(tb_art_t id);

/* PLAN: everything the plan phase decides. */
typedef struct {
    tb_planet_input_t input;
    tb_plan_t *plan;
    tb_planet_raster_user_t classes_user, labels_user; /* the plan's rasters' hook states */
    const tb_manifest_t *manifest;                     /* the plan's */
    int steps;                                         /* solve steps: --steps, or the manifest's */
    tb_uplift_probes_t probes;
    int n_regions;
    bool *selected;      /* [region index]: solved in this bake (--only) */
    int n_selected;      /* regions selected */
    const char *partial; /* "regions 2,3 of 4" for a partial bake, else NULL */
    char partial_text[256];
    char store_dir[4200]; /* out_dir/.cache */
    bool has_tiles;       /* the tiles' parameters and lattice below are set (not --no-tiles) */
    tb_detail_params_t tile_params;
    tb_tile_lattice_t lattice;
    tb_tile_rock_t tile_rock; /* what each tile job makes its rock multiplier from */
    uint8_t *tile_sel;        /* [lattice tile]: chosen by opts->tiles_only (NULL: every tile) */
    /* the overlay's features (template.overlay; NULL without one), for overlay.json and
     * map_overlay.png, and the painting pixels its coast jitter moved */
    tb_overlay_features_t *overlay;
    int64_t overlay_moved;
} tb_bake_plan_t;

/* PREVIOUS: what a bake that reuses its outputs (--tiles-only, terrain tiles) found in OUT. */
typedef struct {
    cJSON *meta;  /* out_dir/meta.json as it was; owned */
    cJSON *index; /* tiles_only: out_dir/tiles/index.json as it was; owned */
} tb_bake_previous_t;

/* REGIONS: what the solve phase put in the rasters land_m .. solved. */
typedef struct {
    tb_stats_t *stats;         /* of the regions solved here, merged in region order */
    tb_region_mouth_t *mouths; /* river mouths of every region composited, in region order */
    size_t n_mouths, cap_mouths;
    int solved;   /* regions solved here (or taken from the store as this bake's own) */
    int borrowed; /* a partial bake's other regions, composited from the store */
    int *missing; /* ids of the regions neither (a partial bake's), in id order */
    int n_missing;
    cJSON *record; /* the solve's dispatch record, for meta.json; owned */
} tb_bake_regions_t;

/* COAST: the coastal pass. */
typedef struct {
    tb_coast_stats_t stats;
    double seconds;
    cJSON *record;          /* the coast job's dispatch record; owned */
    int blocks, rounds;     /* the layout's blocks; the rounds run, a probe included */
    bool probed;            /* the first round was a probe */
    bool known;             /* the first round took the previous bake's bits (s_known_share) */
    tb_coast_share_t share; /* the final round's bits ({-1, -1}: one whole block) */
} tb_bake_coast_t;

/* TILE_LIST: the detail tiles this bake makes (docs/tiles.md). */
typedef struct {
    tb_tile_id_t *ids; /* in lattice order (row, then column) */
    float *land_share; /* per listed tile: the share of its interior's geology cells that is land */
    int n;
    int n_land, n_coast;     /* land and coast tiles of the lattice (the selection aside) */
    cJSON *skipped;          /* a partial bake's tiles it cannot bake, with the reason; owned */
    const char *skip_reason; /* set: the tiles phases are skipped (a partial bake's regions are
                                missing), this says why */
    char skip_text[768];
    cJSON *skip_meta; /* meta.json's "tiles" when skipped so; owned */
} tb_bake_tile_list_t;

/* TILE_FILES: the tiles written to out_dir/tiles. */
typedef struct {
    cJSON *entries; /* the index's entries, one per tile of the list, in list order; owned */
    tb_tile_stats_t pooled;
    int written;
    int kept; /* a rerun's tiles kept as they were (the same spec and files) */
    size_t from_store;
    double seconds;
    cJSON *record; /* the tile jobs' dispatch record; owned */
} tb_bake_tile_files_t;

/* TILES: the index written; meta.json's "tiles" section. */
typedef struct {
    cJSON *meta; /* owned */
} tb_bake_tiles_t;

/* What one phase did, for meta.json. */
typedef struct {
    const char *name;
    double seconds;
    uint64_t reads, writes, writes_maybe;
    uint64_t input_key; /* the hash of what it read (the artifacts' hashes, the tool id) */
    cJSON *files;       /* the names of the files it wrote (or kept), for meta.json; owned */
    bool unchanged;     /* skipped: its files were the previous bake's and still are */
    bool ran;
    const char *skipped;   /* the reason, when skipped */
    char skip_text[256];   /* the reason, when the driver made it */
    const char *cause;     /* then: the skip of another phase that started it */
    const char *note;      /* what the phase said of how it ran (tb_bake_note), or NULL */
    double peak_rss_bytes; /* the coordinator's peak resident memory while it ran (0: unknown) */
} tb_phase_record_t;

/* Everything one bake's phases share: the artifacts (each filled by its one producer) and the
 * machinery. */
typedef struct {
    const tb_bake_opts_t *opts;
    tb_bake_outcome_t *out;
    double started_s;
    double peak_rss_bytes; /* the coordinator's peak resident memory, over the phases so far */
    uint64_t made;         /* artifacts made so far */
    /* each artifact's hash once made: a raster's the XXH3 of its cells, a value's what its producer
     * set or the producer's input key (a pure function of the inputs it was made from) */
    uint64_t art_hash[TB_ART_N];
    /* the artifacts */
    tb_planet_t *planet; /* the rasters (made by the plan phase, filled by their producers) */
    tb_bake_plan_t plan;
    tb_bake_previous_t previous;
    tb_bake_regions_t regions;
    tb_bake_coast_t coast;
    tb_stats_extent_t extent;
    tb_bake_tile_list_t tile_list;
    tb_bake_tile_files_t tile_files;
    tb_bake_tiles_t tiles;
    /* the machinery */
    tb_dispatch_t *dispatch; /* the bake's one engine (tb_bake_dispatch) */
    cJSON *hashes;           /* output file name -> XXH3 (hex), in writing order */
    cJSON *meta_sections;    /* tb_bake_meta_add: the phases' own sections of meta.json */
    tb_report_live_t *live;  /* report.html while the bake runs, from the end of the plan */
    tb_phase_record_t records[TB_BAKE_MAX_PHASES];
    int n_records;
} tb_bake_ctx_t;

typedef struct {
    const char *name;
    uint64_t reads;        /* TB_ART_BIT masks: what it needs made before it */
    uint64_t reads_maybe;  /* what it reads when it was made (moved_m, exposure, coast) */
    uint64_t writes;       /* what it makes (the driver checks the rasters) */
    uint64_t writes_maybe; /* what it makes in some bakes only (the coast's moved_m) */
    bool writes_files;     /* writes into out_dir: the previous meta.json goes before it runs */
    /* Its only products are files: when the previous bake in out_dir recorded this phase with the
     * same input key and every file it wrote still has the hash meta.json gives it, the phase is
     * skipped as unchanged and its files kept (docs/bake.md, "Resume"). */
    bool reusable;
    /* Skipped in a bake that reuses its outputs (--tiles-only, terrain tiles): what it writes is
     * the bake's, kept as it is (coordinator/bake/reuse.c). */
    bool kept_on_reuse;
    /* Optional: a reason to skip this phase in this bake, or NULL to run. A skipped phase makes
     * none of its writes, and the driver skips a later phase that reads one of them, saying why. */
    const char *(*skip)(const tb_bake_ctx_t *ctx);
    /* Runs the phase: 0, or -1 with *err set. */
    int (*run)(tb_bake_ctx_t *ctx, tb_err_t *err);
} tb_phase_t;

/* The phases, in the order they run (coordinator/bake/phases.c). A phase file defines its
 * `const tb_phase_t tb_phase_NAME`; phases.c declares it. */
extern const tb_phase_t *const tb_bake_phases[];
extern const int tb_bake_n_phases;

/* Refuses (TB_E_INTERNAL, naming both) a table in which two phases write one artifact. */
int tb_bake_check_producers(const tb_phase_t *const *phases, int n, tb_err_t *err);

/* Runs phases[0..n) on ctx as tb_bake_run does (the driver's checks, rasters, timing, records in
 * ctx->records); 0, or -1 with *err set (by the phase, or by the driver naming the phase).
 * tb_bake_run calls it with tb_bake_phases; the tests call it with their own tables. */
int tb_bake_run_phases(tb_bake_ctx_t *ctx, const tb_phase_t *const *phases, int n, tb_err_t *err);

/* Frees the artifacts of ctx (not the machinery); accepts a zeroed context. */
void tb_bake_ctx_free_artifacts(tb_bake_ctx_t *ctx);

/* The dispatch engine of a phase, with the batch's callbacks, label and delivery order: the bake's
 * one engine, ctx->dispatch, made by the first phase that dispatches and moved on to a new batch
 * for each later one, in every mode, so the same socket, the same workers (local ones started once)
 * and the same store serve every phase; they are dismissed once, when the bake ends
 * (docs/distribution.md, "One engine across the phases"). NULL with *err set on failure. */
tb_dispatch_t *tb_bake_dispatch(tb_bake_ctx_t *ctx, const tb_dispatch_batch_t *batch,
                                tb_err_t *err);

/* The memory one job may take on a worker (--job-memory-gb, else tb_bake_default_job_memory). */
double tb_bake_job_memory(const tb_bake_ctx_t *ctx);

/* Notes (a static string) in the running phase's record, for meta.json's "phases" and the log:
 * how it ran when that is not the usual way ("--no-coast: the heightmap is the composite"). */
void tb_bake_note(tb_bake_ctx_t *ctx, const char *note);

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

/* The composite rule (coordinator/bake/phase_composite.c): ocean at its class's painted depth, land
 * at land_m, for `cells` cells. height may be land_m (in place). */
void tb_bake_composite_heights(const tb_manifest_t *m, const uint8_t *classes, const float *land_m,
                               float *height_m, size_t cells);

/* In a bake that reuses its outputs: 0 when the result store holds a result of this build for the
 * job (kind, spec), else -1 with *err (TB_E_INVALID) naming `label` (coordinator/bake/reuse.c). */
int tb_bake_require_stored(const tb_bake_ctx_t *ctx, const char *kind, const void *spec, size_t n,
                           const char *label, tb_err_t *err);

/* The plan phase's part of a bake that reuses its outputs: reads out_dir/meta.json (and the tile
 * index for tiles_only) into ctx->previous and refuses, with TB_E_INVALID, a directory that holds
 * no complete bake or a bake of another planet (resolved manifest, class raster, steps, coast,
 * --only). */
int tb_bake_reuse_check(tb_bake_ctx_t *ctx, tb_err_t *err);

/* Any other bake: reads out_dir/meta.json and tiles/index.json when they are there and parse (a
 * rerun into a directory keeps the files and tiles that did not change: docs/bake.md, "Resume")
 * into ctx->previous; true when meta.json was. */
bool tb_bake_previous_read(tb_bake_ctx_t *ctx);
/* The previous bake's meta.json record of phase `name` when it had this input key (its
 * "phases" entry), else NULL: what a rerun may keep of that phase (driver.c, phase_coast.c). */
const cJSON *tb_bake_previous_phase(const tb_bake_ctx_t *ctx, const char *name, uint64_t input_key);

/* The driver's last step in such a bake: out_dir/meta.json as it was, with "tiles" replaced by
 * ctx->tiles.meta and the hashes of every file this run wrote (ctx->hashes) put in "outputs".
 * Nothing when measure_margin. */
int tb_bake_reuse_meta_write(tb_bake_ctx_t *ctx, tb_err_t *err);

/* --tiles-only: merges the entries of the tiles just re-run (*tiles, an array in tile order, taken
 * over) into the previous index's "tiles" array, which replaces *tiles; returns the "rerun" record
 * for meta.json (ids, computed, unchanged, changed), or NULL with *err. */
cJSON *tb_bake_tiles_merge(tb_bake_ctx_t *ctx, cJSON **tiles, tb_err_t *err);

/* --tiles-only: meta.json's "tiles" as it was, with "rerun" (taken over) and the count of tiles the
 * index now lists. NULL when out of memory. */
cJSON *tb_bake_tiles_rerun_meta(tb_bake_ctx_t *ctx, cJSON *rerun, int n_index);

/* The planet the tile jobs are cut from (coordinator/bake/phase_tiles.c): the final heights, the
 * drainage area and the class raster (the index into the tile class table *cls of *n_cls classes,
 * tb_bake_tile_classes), all borrowed from ctx->planet; with `land`, a planet-sized land mask
 * (malloc'd, the caller frees it; for the margin's tools). 0 or -1. */
int tb_bake_tile_planet(tb_bake_ctx_t *ctx, tb_tile_planet_t *src, tb_tile_class_t *cls, int *n_cls,
                        uint8_t **land, tb_err_t *err);

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
/* A PNG of out_dir/NAME written a band of rows at a time (common/png_io.h, the same bytes as
 * tb_bake_write_png of the whole image); its XXH3 is recorded when tb_bake_png_close renames it
 * into place. Abort with tb_png_writer_abort. NULL / -1 with *err. */
tb_png_writer_t *tb_bake_png_open(tb_bake_ctx_t *ctx, const char *name, uint32_t w, uint32_t h,
                                  tb_png_format_t format, tb_err_t *err);
int tb_bake_png_close(tb_bake_ctx_t *ctx, const char *name, tb_png_writer_t **wr, tb_err_t *err);
/* Records out_dir/NAME, a file another module wrote and hashed (hex: 16 hex digits). */
void tb_bake_record_file(tb_bake_ctx_t *ctx, const char *name, const char *hex);
/* Records the XXH3 of out_dir/NAME, a file another module wrote. */
int tb_bake_hash_file(tb_bake_ctx_t *ctx, const char *name, tb_err_t *err);

/* Writes out_dir/summary.txt (coordinator/bake/summary.c): the head line, the statistics, the coast
 * block and, when ctx->tiles.meta is set, the detail block (docs/tiles.md). Written whole to a
 * temporary name and renamed, so the detail phase may write it again. Printed unless quiet: all of
 * it, or only the detail block when print_detail_only. */
int tb_bake_summary_write(tb_bake_ctx_t *ctx, bool print_detail_only, tb_err_t *err);

/* Adds `item` (taken over) to meta.json as the top-level section `key`; a key the bake already
 * writes is refused (TB_E_INTERNAL). 0 or -1. */
int tb_bake_meta_add(tb_bake_ctx_t *ctx, const char *key, cJSON *item, tb_err_t *err);

/* Writes out_dir/meta.json (coordinator/bake/meta.c): the tool, manifest, plan, bake, extent,
 * dispatch (the solve's), statistics, the phases' own sections, phases and outputs. Its presence
 * says the directory holds a complete bake.
 */
int tb_bake_meta_write(tb_bake_ctx_t *ctx, tb_err_t *err);

#endif
