/* The coastal pass in blocks: the planet cut into 2D windows, each run as one job of kind
 * "coast_block", whose interiors together give the whole-cylinder pass's heights, moved map and
 * exposure byte for byte, and whose tallies add up to its statistics exactly (docs/coast.md,
 * "Blocks"). So no worker's memory grows with the planet: a block's job holds its window only.
 *
 * How it is used (the coordinator's coast phase, or tb_coast_blocks_run in-process):
 *   1. tb_coast_layout_plan: the block layout for a planet, its coast parameters and a memory
 *      budget per job (the halo, each block's interior and window, each job's estimated peak).
 *   2. A round: for every block, tb_coast_block_cut (the spec bytes from views of the planet's
 *      arrays, its rows read where they are), dispatch as kind "coast_block", and
 *      tb_coast_block_scatter each result (the interior into the output arrays, its tally added).
 *      The input heights must stay as they were until every block of every round is cut.
 *   3. tb_coast_share_next on the summed tally: whether the round used the planet's fixed-point
 *      bits (its maps are then final), else the bits for the next round. Rounds: a probe that only
 *      asks the sources (totals_only), then one full round (and in a rare case one more); or, with
 *      the bits of an earlier bake of the same planet, one full round (checked the same way).
 *   4. tb_coast_stats_from_tally: the coast block of the verdict.
 *
 * Why rounds: the drifts share their sediment in fixed point with as many bits as the planet's
 * total of each drift's sources leaves (sediment.c), the one truly global quantity in the pass; a
 * block cannot see it, so the spec carries it and the results say what it was.
 *
 * Typical sizes: a 37500 x 12000 planet at 8 m and the default parameters has a halo of 1751 cells;
 * with an 8 GB budget it is 4 x 2 blocks of windows about 12900 x 7750 (1.8 times the planet's
 * cells in all).
 */
#ifndef TB_JOBS_COAST_BLOCKS_H
#define TB_JOBS_COAST_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/raster.h"
#include "jobs/coast/coast.h"

/* A rectangle of planet cells: columns x0 .. x0 + w - 1 taken modulo the planet's width (it may
 * cross the X seam; 0 <= x0 < W), rows y0 .. y0 + h - 1 (inside the planet: Y does not wrap). */
typedef struct {
    int64_t x0, y0, w, h;
} tb_coast_rect_t;

/* The halo in cells and the reaches it is the sum of (docs/coast.md, "Blocks": the proof): the
 * drifts (two tent supports each: a deposit reads the shares within one support, a share the
 * weights within one more), then the widest reach of what a weight reads at its own cell: its
 * carried exposure (the carry's box, the waterline's 3 x 3, the fetch's steps, the distances the
 * kinds were made from), its delta stretch (the bell's four boxes), its distance. */
typedef struct {
    int64_t second_drift; /* 2 x the second drift's tent support */
    int64_t first_drift;  /* 2 x the first drift's */
    int64_t carry;        /* the carry's box radius */
    int64_t waterline;    /* 1: a waterline cell's 3 x 3 */
    int64_t fetch;        /* the fetch sweeps' steps (their cap + 2, the bands' warm-up) */
    int64_t distances;    /* the distance transform's cap: d2 is exact within it */
    int64_t stretch;      /* the delta bell's reach */
    int64_t total;        /* the halo */
} tb_coast_halo_t;

/* The halo of the pass with these parameters on a planet of cell_m (p checked). */
void tb_coast_halo(const tb_coast_params_t *p, double cell_m, tb_coast_halo_t *out);

/* One block: the cells its result gives and the cells its spec carries. */
typedef struct {
    tb_coast_rect_t interior;
    /* the interior and the halo round it, clipped at the planet's Y edges; every column (x0 0, w
     * the planet's) when wraps */
    tb_coast_rect_t window;
    bool wraps;        /* the window is the whole circumference: X wraps in it as on the planet */
    size_t peak_bytes; /* its job's estimated peak memory (tb_coast_block_peak_bytes) */
} tb_coast_block_t;

/* A planet's blocks: nx across, ny down; block i is column i % nx, row i / nx. */
typedef struct {
    int64_t w, h;
    double cell_m;
    int64_t halo; /* cells */
    /* a probe's halo: without the second drift's reach, which a probe does not run (the whole
     * halo for a layout of tb_coast_layout_grid) */
    int64_t probe_halo;
    int64_t nx, ny;
    size_t n;
    tb_coast_block_t *blocks;
    size_t peak_bytes;   /* the largest block's estimate */
    double window_cells; /* every window's cells added up: the work, against w x h */
} tb_coast_layout_t;

/* The estimated peak memory of a block job (bytes; measured, docs/coast.md "Blocks"): the spec's
 * bytes and their decoded copy, the pass's work memory over the window, the result's bytes of the
 * interior, and a fixed part (the process, tables, the tally). */
size_t tb_coast_block_peak_bytes(int64_t window_cells, int64_t interior_cells);

/* The layout of a w x h planet of cell_m for these parameters whose every job's estimated peak is
 * at most budget_bytes, with as few windows' cells in all as any grid of blocks gives (then as few
 * blocks): one block (the planet itself) when it fits. Rows of whole width are the case nx = 1. 0,
 * or -1 with *err naming the numbers (TB_E_INVALID: no block of one cell fits the budget; bad
 * parameters for the planet). Free with tb_coast_layout_free. */
int tb_coast_layout_plan(int64_t w, int64_t h, double cell_m, const tb_coast_params_t *p,
                         size_t budget_bytes, tb_coast_layout_t *out, tb_err_t *err);

/* The layout of nx x ny blocks of near-equal interiors with this halo (tests and benches: any halo,
 * the negative controls a smaller one). */
int tb_coast_layout_grid(int64_t w, int64_t h, double cell_m, int64_t halo, int64_t nx, int64_t ny,
                         tb_coast_layout_t *out, tb_err_t *err);
void tb_coast_layout_free(tb_coast_layout_t *l);

/* Whether the layout is one block covering the planet: its job then takes its own bits
 * (tb_coast_share_t -1) and one round is the pass. */
bool tb_coast_layout_is_whole(const tb_coast_layout_t *l);

/* ---- the job "coast_block" ---- */

/* A block job's inputs; arrays borrowed. Coordinates are the planet's. */
typedef struct {
    int64_t planet_w, planet_h;
    double cell_m;
    tb_coast_rect_t window, interior; /* the interior inside the window */
    bool wraps;                       /* the window is every column */
    tb_coast_share_t share;           /* the planet's bits (-1: the window is the planet) */
    /* a probe: the result carries the tally, no maps, and the first drift is shared with the
     * window's own bits (share is not read) */
    bool totals_only;
    tb_coast_params_t params;
    tb_coast_classes_t legend;
    const float *height_m;          /* window.w x window.h, row-major from (window.x0, window.y0) */
    const uint8_t *classes;         /* the same */
    const tb_coast_mouth_t *mouths; /* those inside the window (planet cells), any order */
    size_t n_mouths;
} tb_coast_block_spec_t;

/* A decoded block spec owning its arrays. */
typedef struct {
    tb_coast_block_spec_t spec;
    float *height_m;
    uint8_t *classes;
    tb_coast_mouth_t *mouths;
} tb_coast_block_spec_owned_t;

/* A block job's result; arrays owned (NULL in a probe's). */
typedef struct {
    uint64_t spec_xxh3; /* XXH3-64 of the spec bytes it answers */
    tb_coast_rect_t interior;
    bool totals_only;
    float *height_m; /* interior.w x interior.h */
    float *moved_m;
    uint16_t *exposure;
    tb_coast_tally_t tally; /* the interior's */
} tb_coast_block_result_t;

/* Canonical spec bytes (mouths sorted by y, x and merged; checked to lie in the window) into a new
 * buffer the caller frees. */
int tb_coast_block_spec_encode(const tb_coast_block_spec_t *spec, void **out, size_t *bytes,
                               tb_err_t *err);
/* Decodes untrusted spec bytes; free with tb_coast_block_spec_free. */
int tb_coast_block_spec_decode(const void *data, size_t bytes, tb_coast_block_spec_owned_t *out,
                               tb_err_t *err);
void tb_coast_block_spec_free(tb_coast_block_spec_owned_t *s);

/* Runs a block spec in-process (what the job kind runs), result into *out (free with
 * tb_coast_block_result_free); spec_xxh3 is left 0. */
int tb_coast_block_solve(const tb_coast_block_spec_t *spec, int threads,
                         bool (*progress)(void *user, double fraction, const char *note),
                         void *user, tb_coast_block_result_t *out, tb_err_t *err);

int tb_coast_block_result_encode(const tb_coast_block_result_t *r, void **out, size_t *bytes,
                                 tb_err_t *err);
/* Decodes untrusted result bytes (its tally initialised). */
int tb_coast_block_result_decode(const void *data, size_t bytes, tb_coast_block_result_t *out,
                                 tb_err_t *err);
void tb_coast_block_result_free(tb_coast_block_result_t *r);

/* The job kind "coast_block" (jobs/job.h): its result echoes the XXH3-64 of its spec, and its
 * check_result compares that, the interior and the probe flag with the spec. */
extern const tb_job_kind_t tb_job_kind_coast_block;

/* ---- the coordinator's side: cut, scatter, rounds ---- */

/* Read-only views of the planet's arrays: row y (planet row) of the heights at
 * height_m + (y - row0) * stride, of the classes at classes + (y - row0) * stride; the view must
 * hold every row of the windows it is asked to cut (row0 0 and stride w for whole arrays, memory
 * mapped or not; a band of rows read from a file: row0 its first row). */
typedef struct {
    const float *height_m;
    const uint8_t *classes;
    size_t stride; /* elements between rows, >= the planet's w */
    int64_t row0;
    /* optional: told of the planet row [y, y + 1) once a cut has read it, so a mapped planet may
     * let it go while the window is cut (a 300 km planet's block window is 281 MB of rows; zero:
     * nothing is told). Called on the cutting thread, maybe on two at once. */
    tb_rows_hook_t done;
} tb_coast_view_t;

/* Writable views of the outputs, the same way. */
typedef struct {
    float *height_m;
    float *moved_m;
    uint16_t *exposure;
    size_t stride;
    int64_t row0;
    /* optional: told of the planet rows [y0, y1) (the interior's) once the scatter has written
     * them, so a mapped planet may let them go (zero: nothing is told) */
    tb_rows_hook_t done;
} tb_coast_out_view_t;

/* The spec bytes of block `block` of layout l, read from the planet's arrays through view (X
 * wrapping across the seam), with the mouths of the planet (any order; those in the window are
 * taken) and the round's share bits (ignored for a whole layout: its job takes its own) and probe
 * flag (a probe's window is its interior and the layout's probe_halo round it: the view must hold
 * its rows, which are the full window's or fewer). The caller frees *spec. 0 or -1 with *err. */
int tb_coast_block_cut(const tb_coast_layout_t *l, size_t block, const tb_coast_view_t *view,
                       const tb_coast_mouth_t *mouths, size_t n_mouths, const tb_coast_params_t *p,
                       const tb_coast_classes_t *legend, const tb_coast_share_t *share,
                       bool totals_only, void **spec, size_t *bytes, tb_err_t *err);

/* Checks the result bytes of block `block` (its interior, the probe flag) and writes its interior
 * into out (X wrapping; nothing for a probe's), and adds its tally into *sum (tb_coast_tally_init
 * first). Untrusted bytes: a bad result is -1 with *err and nothing written. out may be NULL (the
 * tally only). */
int tb_coast_block_scatter(const tb_coast_layout_t *l, size_t block, const void *result,
                           size_t bytes, bool totals_only, const tb_coast_out_view_t *out,
                           tb_coast_tally_t *sum, tb_err_t *err);

/* After a round: the planet's bits from the sum of every block's tally (their sources), into
 * *next; *final when the round used exactly those bits (`used`) and was not a probe, so its maps
 * are the whole pass's. -1 with *err when the planet's sources reach 2^61 units (the whole pass
 * refuses that too). A round with the first drift's bits right gives the second drift's exactly,
 * so at most two full rounds follow any first round. */
int tb_coast_share_next(const tb_coast_tally_t *sum, const tb_coast_share_t *used, bool totals_only,
                        tb_coast_share_t *next, bool *final, tb_err_t *err);

/* ---- in-process ---- */

/* What tb_coast_blocks_run did. */
typedef struct {
    int rounds;             /* every round run, a probe included */
    bool probed;            /* the first round was a probe */
    tb_coast_share_t share; /* the bits of the final round */
    size_t largest_spec_bytes, largest_result_bytes;
} tb_coast_blocks_report_t;

/* The pass over the planet in the layout's blocks, each through the job kind "coast_block" (spec
 * bytes in, result bytes out, as a worker runs it), rounds as above: with known bits (an earlier
 * bake's; NULL: none) a full round first, else a probe. planet->height_m is rewritten, maps filled,
 * maps->stats from the summed tally: the bits of tb_coast_run's. threads: each job's. */
int tb_coast_blocks_run(const tb_coast_params_t *p, tb_coast_planet_t *planet,
                        tb_coast_maps_t *maps, const tb_coast_layout_t *layout,
                        const tb_coast_share_t *known, int threads,
                        tb_coast_blocks_report_t *report, tb_err_t *err);

#endif
