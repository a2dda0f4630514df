/* The coastal pass: one pure function over the whole composited cylinder (docs/coast.md).
 *
 * It runs once over the planet, after the regions are composited, because fetch crosses straits and
 * the sediment budget must not be split (docs/coast.md, "Why one pass over the whole cylinder"). In
 * order, each method in its own file:
 *   bathymetry.c  shelf to a break depth, continental slope down to each ocean class's painted
 * depth, from the waterline's wrap-aware distance (common/edt.h); exposure.c    fetch over open
 * water along a fixed set of wave directions, crossing the X seam, blocked by land and offshore
 * shallows; a fixed physical normalisation; boxsum.c      the two box kernels over exact integers
 * (X wraps, Y zero-padded): the carried value (normalised) and the sediment drift (mass-conserving
 * redistribution); surf.c        a shore platform planed within an exposure-scaled reach, a cliff
 * behind it; sediment.c    cut plus river supply, drifted along the shore and laid in sheltered
 * shallows; stats.c       the coast block of the verdict; params.c      the `coast` manifest
 * section; pass.c        the pass in order; job.c the job kind "coast" and its wire format;
 * blocks.h, blocks.c, block_job.c  the pass in blocks of the planet with a proved halo, the job
 * kind "coast_block" (docs/coast.md, "Blocks").
 *
 * Determinism: every decision is a function of the cell's own data and of exact integer sums over
 * fixed neighbourhoods (the distance transform, the fetch recurrences and the box sums), so the
 * pass on a planet rolled by k columns gives the rolled result to the last bit, and any number of
 * threads gives the same bits. The statistics are integer tallies (tb_coast_tally_t), so any
 * split of the planet into blocks gives the same numbers.
 *
 * Memory: about 45 bytes a cell at the peak, the caller's heights and classes included
 * (docs/coast.md, "Cost").
 */
#ifndef TB_JOBS_COAST_H
#define TB_JOBS_COAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/coast_params.h"
#include "common/error.h"
#include "common/manifest.h"
#include "jobs/job.h"

/* The compass points of the wave directions (common/coast_params.h): bit k of
 * tb_coast_wave_mask() is direction k. */
enum {
    TB_COAST_N = 0,
    TB_COAST_NE,
    TB_COAST_E,
    TB_COAST_SE,
    TB_COAST_S,
    TB_COAST_SW,
    TB_COAST_W,
    TB_COAST_NW
};

/* The exposure map's value for a cell too far from the waterline to carry one. */
#define TB_COAST_NO_EXPOSURE 0xFFFFu
/* Exposure is stored in thousandths: 0 sheltered .. 1000 open. */
#define TB_COAST_EXPOSURE_ONE 1000

/* Per legend class: whether it is sea, and its painted depth (metres, positive) when it is. */
typedef struct {
    int n;
    bool ocean[TB_MAX_CLASSES];
    double depth_m[TB_MAX_CLASSES];
} tb_coast_classes_t;

/* The classes of a legend. */
void tb_coast_classes_from_legend(const tb_legend_t *legend, tb_coast_classes_t *out);

/* A river mouth: the lattice cell its basin drains into and the volume the solve eroded from the
 * basin (m3, docs/coast.md "River supply"). */
typedef struct {
    int64_t x, y;
    double eroded_m3;
} tb_coast_mouth_t;

/* The coast block (docs/coast.md, "Reading the block"). Volumes in m3, areas in m2. */
typedef struct {
    int64_t cells, sea_cells, shelf_cells, waterline_cells;
    double shore_km;    /* land-sea cell edges x cell edge */
    double planed_m2;   /* land the surf lowered */
    double cut_m3;      /* volume the surf removed */
    int64_t mouths;     /* river mouths that delivered sediment */
    double river_m3;    /* volume the mouths delivered (river_share of what was eroded) */
    double laid_m3;     /* sediment laid in the shallows */
    double unplaced_m3; /* sediment that found no room; the three parts below */
    double unplaced_no_shallows_m3; /* no shallow within the drift kernel of its source */
    double unplaced_full_m3;        /* the shallows it reached were full */
    double unplaced_rounding_m3;    /* the fixed-point remainder of the redistribution */
    double beach_m2;                /* sea the sediment raised above sea level */
    double backshore_median_m, backshore_p90_m; /* land one to two surf reaches inland */
    int64_t backshore_cells;
    double drowned_m2;                               /* land the pass left at or below sea level */
    double exposure_p10, exposure_p50, exposure_p90; /* over waterline cells, 0..1 */
} tb_coast_stats_t;

/* An exact sum of non-negative sediment quantities that are not whole units (what a cell laid, what
 * found its places full, the fixed-point remainders): whole units, and the fractions rounded to
 * 2^-32 of a unit each. Integers, so any grouping of the cells gives the same sum (docs/coast.md,
 * "Blocks"). */
typedef struct {
    uint64_t units; /* whole units */
    uint64_t frac;  /* 2^-32 units (below 2^63 for up to 2^31 cells) */
} tb_coast_fx_t;

/* The sum's value in units. */
double tb_coast_fx_units(const tb_coast_fx_t *f);

#define TB_COAST_EXPOSURE_BINS (TB_COAST_EXPOSURE_ONE + 1)
/* Backshore heights in decimetres, 0 .. 10 km; higher land counts in the last bin. */
#define TB_COAST_BACKSHORE_BINS 100001
#define TB_COAST_BACKSHORE_BIN_M 0.1

/* The coast block in a mergeable form: integer counts over a set of cells (a block's interior, or
 * the planet), from which tb_coast_stats_from_tally makes the statistics. Two tallies of disjoint
 * cells add up (tb_coast_tally_add) to the tally of their union, exactly, in any order. Every count
 * belongs to one cell: a land-sea edge to its west or south cell (the edge to x + 1, and to y + 1),
 * a deposit to the cell laid, an unplaced part to the source or the cell it was left at, a mouth to
 * its cell. Units: cells, sediment units (TB_COAST_UNIT_M over one cell). */
typedef struct {
    int64_t cells, sea_cells, shelf_cells, waterline_cells, edges, drowned_cells;
    int64_t planed_cells, cut_units, mouths, river_units, beach_cells, backshore_cells;
    int64_t no_room_units;               /* unplaced: no shallow within the drift of its source */
    tb_coast_fx_t laid, full, remainder; /* laid; unplaced: places full; the fixed-point rest */
    /* the drifts' sources: [0] the first drift's (cut + river), [1] the whole units the first
     * left for the second; they fix the drifts' fixed-point bits (tb_coast_share_t) */
    int64_t sources[2];
    int64_t exposure_hist[TB_COAST_EXPOSURE_BINS]; /* waterline cells by exposure, thousandths */
    int64_t *backshore_hist; /* TB_COAST_BACKSHORE_BINS, owned (tb_coast_tally_init) */
} tb_coast_tally_t;

/* An empty tally (its histogram allocated). Returns 0 or -1 with *err (out of memory). */
int tb_coast_tally_init(tb_coast_tally_t *t, tb_err_t *err);
void tb_coast_tally_free(tb_coast_tally_t *t);
/* Adds part into sum (integers: any order gives the same sum). */
void tb_coast_tally_add(tb_coast_tally_t *sum, const tb_coast_tally_t *part);
/* The statistics of a tally on a planet of cell_m (the percentiles from the histograms). */
void tb_coast_stats_from_tally(const tb_coast_tally_t *t, double cell_m, tb_coast_stats_t *out);

/* The relative mismatch |laid + unplaced - (cut + river)| / max(cut + river, 1 m3). */
double tb_coast_budget_error(const tb_coast_stats_t *s);

/* The printed block: three lines ending in newlines, like the predecessor's, into buf. */
void tb_coast_stats_format(const tb_coast_stats_t *s, char *buf, size_t n);

/* The block as a JSON object (caller owns). */
cJSON *tb_coast_stats_to_json(const tb_coast_stats_t *s);

/* The planet the pass runs over: W x H cells of cell_m, X wraps. */
typedef struct {
    int64_t w, h;
    double cell_m;
    float *height_m;        /* in/out: composited heights; land as solved, sea at any value */
    const uint8_t *classes; /* legend class per cell, < classes->n */
    const tb_coast_classes_t *legend;
    const tb_coast_mouth_t *mouths;
    size_t n_mouths;
} tb_coast_planet_t;

/* What the pass writes besides the heights. Arrays are planet-sized and owned by the caller. */
typedef struct {
    float *moved_m;     /* height change by surf (negative) and sediment (positive); the sea
                           floor's reshaping is not in it */
    uint16_t *exposure; /* thousandths, TB_COAST_NO_EXPOSURE beyond carry_m of the waterline */
    tb_coast_stats_t stats;
} tb_coast_maps_t;

/* The phases of the pass, for the benchmark's breakdown. */
enum {
    TB_COAST_PHASE_DISTANCES = 0,
    TB_COAST_PHASE_BATHYMETRY,
    TB_COAST_PHASE_EXPOSURE,
    TB_COAST_PHASE_CARRY,
    TB_COAST_PHASE_SURF,
    TB_COAST_PHASE_SEDIMENT,
    TB_COAST_PHASE_STATS,
    TB_COAST_PHASES
};
extern const char *const tb_coast_phase_names[TB_COAST_PHASES];

/* Test and benchmark switches; nothing here changes a result except the negative control. */
typedef struct {
    bool leak_one_deposit; /* drop the first cell's deposit without counting it anywhere */
    bool short_warmup;     /* the fetch sweep's bands start half the warm-up they need early */
    double phase_cpu_s[TB_COAST_PHASES];  /* filled by the pass: this thread's CPU seconds */
    double phase_wall_s[TB_COAST_PHASES]; /* and the wall seconds (all threads at work) */
} tb_coast_debug_t;

/* The fixed-point bits of the two drifts' shares (sediment.c): 61 minus the bit length of the
 * planet's total source units of that drift, so they are planet-level quantities a window of the
 * planet cannot see. -1: take them from the planet run's own totals (only right when it is the
 * whole planet). tb_coast_share_bits gives them from the planet's sources. */
typedef struct {
    int bits[2];
} tb_coast_share_t;

/* The bits of a drift whose sources total `units` (0 <= units < 2^61; 61 for none). */
int tb_coast_share_bits(int64_t units);

/* How tb_coast_run_window runs a window of a planet (jobs/coast/blocks.h): which of its cells the
 * tally counts (a rectangle in the window's own coordinates), the drifts' bits, and whether to stop
 * after the first drift (a round that only asks the sources: the maps are then not final).
 * late_margin > 0: the phases after the carry (the surf, the delta stretch, the drifts, the ground
 * statistics) run only over the counted cells and late_margin cells round them (clipped to the
 * window; its columns all kept when keep_x, a window that is the planet's whole width), and the
 * maps and heights are then the pass's only in the counted cells (docs/coast.md, "Blocks": the late
 * window). The margin must hold the reach of those phases, tb_coast_halo's second drift + first
 * drift + stretch (a probe: first drift + stretch); 0: every phase over the whole window. */
typedef struct {
    int64_t x0, y0, w, h;
    tb_coast_share_t share;
    bool totals_only;
    int64_t late_margin;
    bool keep_x;
} tb_coast_window_t;

/* The whole pass (pass.c): heights rewritten in place, maps and statistics filled. threads >= 1
 * (every phase splits; same bits, docs/coast.md "Threads"). debug may be NULL. progress may be
 * NULL; returning true cancels (TB_E_INTERRUPTED). Returns 0 or -1 with *err set (a bad input names
 * the cell). */
int tb_coast_run(const tb_coast_params_t *p, tb_coast_planet_t *planet, tb_coast_maps_t *maps,
                 int threads, tb_coast_debug_t *debug,
                 bool (*progress)(void *user, double fraction, const char *note), void *user,
                 tb_err_t *err);

/* The pass over a window of a planet as if it were the planet (X wraps round the window, its Y
 * edges are the window's), with the tally counting only win's rectangle and the drifts' bits from
 * win (NULL: the whole window, its own bits): what a block job runs (jobs/coast/blocks.h). The
 * tally is filled (tb_coast_tally_init first); maps->stats is the tally's statistics. */
int tb_coast_run_window(const tb_coast_params_t *p, tb_coast_planet_t *planet,
                        tb_coast_maps_t *maps, int threads, tb_coast_debug_t *debug,
                        bool (*progress)(void *user, double fraction, const char *note), void *user,
                        const tb_coast_window_t *win, tb_coast_tally_t *tally, tb_err_t *err);

/* ---- the job "coast" (job.c) ---- */

/* A coast job's inputs; arrays borrowed. */
typedef struct {
    int64_t w, h;
    double cell_m;
    tb_coast_params_t params;
    tb_coast_classes_t legend;
    const float *height_m;
    const uint8_t *classes;
    const tb_coast_mouth_t *mouths;
    size_t n_mouths;
} tb_coast_spec_t;

/* A decoded spec owning its arrays. */
typedef struct {
    tb_coast_spec_t spec;
    float *height_m;
    uint8_t *classes;
    tb_coast_mouth_t *mouths;
} tb_coast_spec_owned_t;

/* A coast job's result; arrays owned. */
typedef struct {
    uint64_t spec_xxh3; /* XXH3-64 of the spec bytes this result answers (set by the job kind) */
    int64_t w, h;
    float *height_m;
    float *moved_m;
    uint16_t *exposure;
    tb_coast_stats_t stats;
} tb_coast_result_t;

/* Canonical spec bytes (mouths sorted by y, x and merged), into a new buffer the caller frees. */
int tb_coast_spec_encode(const tb_coast_spec_t *spec, void **out, size_t *bytes, tb_err_t *err);
/* Decodes untrusted spec bytes; free with tb_coast_spec_free. */
int tb_coast_spec_decode(const void *data, size_t bytes, tb_coast_spec_owned_t *out, tb_err_t *err);
void tb_coast_spec_free(tb_coast_spec_owned_t *s);

/* Runs a spec in-process. Fills *out; free with tb_coast_result_free. */
int tb_coast_solve(const tb_coast_spec_t *spec, int threads,
                   bool (*progress)(void *user, double fraction, const char *note), void *user,
                   tb_coast_result_t *out, tb_err_t *err);

int tb_coast_result_encode(const tb_coast_result_t *r, void **out, size_t *bytes, tb_err_t *err);
int tb_coast_result_decode(const void *data, size_t bytes, tb_coast_result_t *out, tb_err_t *err);
void tb_coast_result_free(tb_coast_result_t *r);

/* The most cells a coast job takes: 2^31 (the predecessor's planet is 76 M). */
#define TB_COAST_MAX_CELLS ((int64_t)1 << 31)
/* The most river mouths in a spec. */
#define TB_COAST_MAX_MOUTHS ((int64_t)1 << 24)

/* The most bytes the result of these spec bytes can take (0 when they are not a coast spec): the
 * kind's result_bound (docs/distribution.md, "Verifying results"). Reads the spec's header only. */
size_t tb_coast_result_bound(const void *spec, size_t spec_bytes);

/* The job kind "coast" (jobs/job.h): its result echoes the XXH3-64 of its spec (spec_xxh3), and its
 * check_result compares that and the planet's size with the spec. */
extern const tb_job_kind_t tb_job_kind_coast;

#endif
