/* The geology solve of one box: uplift and stream-power erosion, step by step (docs/solve.md).
 *
 * A step, in order:
 *   1. uplift: h += U dt on solved cells;
 *   2. D8 receivers, tie-break jitter hashed from (seed, lattice cell, step)   receivers.h
 *   3. sink resolution, priority-flood + epsilon where there are pits          sinks.h
 *   4. drainage area: MFD in Kahn order, which also gives the order of step 5;  accumulation.h
 *      at exponent 0, D8 along the Braun & Willett stack (tree per river mouth) spl.h
 *   5. implicit stream-power incision, receivers first (A from step 4)         spl.h
 *   6. nonlinear hillslope diffusion, per-cell sub-step rates                   hillslope.h
 *   7. the repose clamp, a monotone fixed point with jittered allowance         clamp.h
 * Fixed cells (the box ring, and every cell the solve mask does not mark 1) are held at 0 m.
 *
 * docs/determinism.md: every random number is a hash of lattice coordinates and the step; every
 * kernel's result on a cell depends only on cells of its own landmass (fixed cells separate
 * landmasses and nothing crosses them), never on processing order, the box or a statistic of the
 * box. So a landmass gives the same bits in its own box, in a larger box beside other landmasses
 * and in a box across the seam (tests/test_geology.c). Workspaces are allocated once, by _new, for
 * the box; a step allocates nothing except when the sinks' lake lists first grow.
 *
 * Memory: about 94 bytes a cell of workspace, plus the caller's height, uplift, K and mask.
 */
#ifndef TB_GEOLOGY_GEOLOGY_H
#define TB_GEOLOGY_GEOLOGY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"
#include "common/pool.h"
#include "jobs/geology/hillslope.h"

/* The most bands (threads) a step is split into. */
#define TB_GEOLOGY_MAX_BANDS TB_TOPO_MAX_BANDS

/* Switches beyond the manifest's physics, for tests, negative controls and measurement. */
typedef struct {
    bool stream_power;    /* incision on (`terrain gate --test-no-incision` turns it off) */
    bool hillslope;       /* diffusion on (also off when diffusion_m2_yr is 0) */
    bool clamp;           /* repose clamp on */
    double router_jitter; /* relative tie-break jitter of the D8 router; 5e-4 */
    double clamp_jitter;  /* allowance jitter of the clamp; 0.05 */
    tb_hillslope_bound_t hillslope_bound; /* TB_HILLSLOPE_BOUND_CELL; others are controls */
} tb_geology_options_t;

/* Per-phase seconds and counters accumulated over every run of a solve, for the benchmark. */
typedef struct {
    double uplift_route_s, sinks_s, stack_s, accumulation_s, spl_s, hillslope_s, clamp_s;
    int64_t steps;               /* steps run */
    int64_t cell_steps;          /* solved cells x steps */
    int64_t pit_steps;           /* steps that found at least one pit */
    int64_t pits;                /* pits found by the router, summed over steps */
    int64_t closed_cells;        /* cells flooded, summed over steps */
    int64_t sink_lakes;          /* lakes grown, summed over steps */
    int64_t sink_band_lakes;     /* ... of them by band workers, in parallel */
    int64_t sink_fallbacks;      /* steps whose pits ended in the closed-basin flood */
    int64_t hillslope_updates;   /* hillslope cell updates, summed over sub-steps and steps */
    int64_t clamp_moves;         /* cells lowered by the clamp */
    int hillslope_max_rate;      /* highest hillslope rate seen */
    double serial_s;             /* wall seconds spent on one thread (the sinks' serial pass) */
    double wait_s;               /* thread-seconds the band walks spent waiting for each other */
    int64_t largest_basin_cells; /* D8: the largest tree of each step, summed over steps */
    int bands;                   /* bands of rows the last run was split into (1 per thread) */
} tb_geology_phases_t;

typedef struct tb_geology_t tb_geology_t;

/* The default options: everything on, per-cell hillslope bound. */
void tb_geology_options_defaults(tb_geology_options_t *o);

/* Workspaces for a box, allocated once per solve, with default options. p is copied; seed keys
 * every hash. Returns NULL with *err naming the problem (a box under 3 x 3 or over 2^31 cells,
 * physics out of range, no memory). The caller owns the result. */
tb_geology_t *tb_geology_new(const tb_frame_t *box, const tb_solve_params_t *p, uint64_t seed,
                             tb_err_t *err);

/* Runs the following runs on `pool` (borrowed: it must outlive the runs; NULL, the default: the
 * caller's thread). Any pool gives the same bits (tests/test_threads.c). */
void tb_geology_set_pool(tb_geology_t *g, tb_pool_t *pool);

/* Replaces the options. Returns 0, or -1 with *err when a jitter is outside [0, 0.5). */
int tb_geology_set_options(tb_geology_t *g, const tb_geology_options_t *o, tb_err_t *err);

/* Frees everything and sets *self_p to NULL; accepts NULL. */
void tb_geology_destroy(tb_geology_t **self_p);

/* Runs steps [step0, step0 + steps). solve_mask: 1 = solved, anything else = held at 0 m (ocean,
 * other regions' land); the ring of the box is held whatever the mask says. uplift_m_yr: U per cell
 * (m/yr, finite); k: K per cell (positive, finite, on solved cells); height_m: box-sized, in/out,
 * fixed cells are set to 0. All arrays are box-sized, row-major, owned by the caller. progress (may
 * be NULL) is called after each step with the number of the next step (step0 + steps done);
 * returning non-zero cancels the run (-1, TB_E_INTERRUPTED, heights as of the last whole step).
 * Returns 0, or -1 with *err naming the cell or value; after a run that failed (not cancelled) the
 * maps below are NULL until a run succeeds. */
int tb_geology_run(tb_geology_t *g, const uint8_t *solve_mask, const float *uplift_m_yr,
                   const float *k, float *height_m, int64_t step0, int steps,
                   int (*progress)(void *ud, int64_t step_done), void *ud, tb_err_t *err);

/* Drainage area in m2 from the last step (MFD, or D8 at exponent 0), box-sized: a solved cell's own
 * cell included; a fixed cell holds what it received from the land (0 when nothing drains into it).
 * Owned by g, valid until the next run; NULL before the first step. */
const float *tb_geology_area_m2(const tb_geology_t *g);

/* The drainage basin of every cell after the last run: the index of the fixed cell its D8 path ends
 * in, -1 for fixed cells. Owned by g; NULL before the first step. */
const int32_t *tb_geology_basin(const tb_geology_t *g);

/* The D8 receiver of every cell at the last step (the index of the neighbour, -1 for fixed cells).
 * Owned by g; NULL before the first step. */
const int32_t *tb_geology_receiver(const tb_geology_t *g);

/* Per-phase seconds and counters accumulated so far. */
void tb_geology_phase_times(const tb_geology_t *g, tb_geology_phases_t *out);

#endif
