/* Hydraulic erosion by droplets after Beyer 2015 ("Implementation of a method for hydraulic
 * erosion", Bachelor's thesis, TU Munich), made a pure function of world position (docs/tiles.md).
 *
 * Method (Beyer's particle model): a droplet carries water, speed, a direction and sediment. Each
 * step it reads the height and gradient under it by bilinear interpolation of the four nearest cell
 * centres, turns its direction toward the downhill gradient (keeping `inertia` of the old one),
 * moves exactly one cell, and compares the new height with the old: going up it fills the step with
 * sediment; otherwise it erodes the free part of its capacity
 * c = max(-dh, min_slope) x speed x water x capacity (at most -dh) over a brush of `brush_radius`
 * cells round the old position, or deposits the excess over c at the old position's four nodes.
 * Speed follows the drop (sqrt(v^2 - dh g)) and water evaporates. Why Beyer rather than Mei et al.
 * 2007's grid model: the droplets cut rills and gullies at the detail cell, where a shallow-water
 * grid smooths them over its pipe model's stability limit; their cost follows the droplet count,
 * not the cell count times iterations; and their reach is bounded by lifetime x step, which gives
 * the margin a provable bound.
 *
 * What makes it a function of world position, not of the window it was run in:
 * - spawns: the world detail lattice is cut into spawn_block x spawn_block blocks; in round r block
 *   (bx, by) spawns one droplet whose cell offset, sub-cell position and water are
 *   tb_hash(seed, TB_SALT_TILE_SPAWN, bx, by, r); a window runs the droplets spawned inside it;
 * - a droplet with no gradient and no momentum takes a direction from
 *   tb_hash_cell(tb_hash_key(seed, TB_SALT_TILE_JITTER, r) XOR step, spawn x, spawn y);
 * - rounds: every droplet of round r reads the heights H_r left by rounds < r (from a float copy:
 *   a deterministic rounding of a deterministic value) and none other, so the droplets of one
 *   round are independent of each other and of their order;
 * - sums: each droplet's erosion and deposit are quantised to 2^-24 m and added as integers into
 *   per-cell totals, so the sum is exact and the same in any order, thread or tile; then
 *   H_{r+1} = H_0 + (deposited - eroded) 2^-24 for every cell;
 * - positions are kept as an integer cell plus a fraction in [0, 1), so the arithmetic of a droplet
 *   does not depend on where the window's origin lies.
 * A droplet whose next position or brush would leave the window stops there, and its sediment is
 * counted as carried off (off the window: the margin makes that invisible in a tile's interior, and
 * where the window ends at the planet's north or south edge, off the land). What a droplet still
 * carries when its lifetime ends goes on down the steepest descent for up to carry_steps more
 * cells, laid where its capacity falls and filling the pits it meets, or all of it where it joins
 * one of the solve's channels, and what is left after that is laid over the brush (Beyer's droplet
 * ends its path without laying its load, and the load leaves the model with it; here that would be
 * sediment lost on land: docs/tiles.md, "Sediment accounting"). Droplets run on into the sea and
 * deposit there like anywhere. So, exactly in integers: eroded = deposited + carried off the
 * window's edge.
 *
 * The deposit of all rounds then settles over a tent of settle_cells twice (exact integers), a
 * sheet over the low ground rather than a speckle of one-cell heaps; the heights are made again
 * from it.
 *
 * Gullies: from the second round on, a droplet's capacity is multiplied by
 * 1 + converge x log2(1 + W), W the water of the rounds before through its nearest node (a
 * snapshot between rounds), so the paths many droplets took erode deeper: Beyer's sequential
 * droplets get that feedback from each other's grooves, rounds of independent droplets get it
 * from this term.
 *
 * Units: heights in metres, positions in detail cells, one step = one cell. Pre: h0 is the window's
 * heights (w x h). Post: h_out = H_rounds; eroded_q, deposited_q (2^-24 m) and water_q (droplet
 * water through a cell, 1/256 units, summed over rounds and steps) per cell. Determinism: the same
 * bits for any pool size (integer sums) and for any window holding the same droplets.
 */
#ifndef TB_DETAIL_EROSION_DROPLETS_BEYER_H
#define TB_DETAIL_EROSION_DROPLETS_BEYER_H

#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/pool.h"
#include "jobs/detail/params.h"

#define TB_DROPLET_QUANTUM_M                                                                       \
    (1.0 / 16777216.0)              /* 2^-24 m: one unit of eroded_q and deposited_q               \
                                     */
#define TB_DROPLET_WATER_UNIT 256.0 /* water_q units per unit of droplet water */

/* Totals over the window, in TB_DROPLET_QUANTUM_M units (times cell area for a volume). */
typedef struct {
    int64_t eroded_q;
    int64_t deposited_q;
    int64_t carried_edge_q;  /* sediment of droplets that left the window (or the planet) */
    int64_t deposited_end_q; /* the part of deposited_q laid by droplets whose lifetime ended */
    int64_t droplets;        /* droplets run, all rounds */
    int64_t steps;           /* droplet steps run, all rounds */
    int64_t carry_steps;     /* steps of the loads carried on after a lifetime ended (this and the
                                next are not encoded in a tile result: diagnostics) */
    int64_t deposited_channel_q; /* the part of deposited_q a carried load laid where it joined
                                    one of the solve's channels */
} tb_droplet_budget_t;

/* Runs every round of droplets over the window `win` (a frame on the detail lattice). h0 and h_out
 * are w x h doubles (h_out may not alias h0); log10_area (w x h, may be NULL) is the solve's
 * drainage area, log10 m2, at the window's cells: a carried load that reaches
 * relief.channel_area_m2 joins the channel there; eroded_q, deposited_q, water_q are w x h and are
 * zeroed here. pool may be NULL. Returns 0, or -1 with *err (memory). */
int tb_erosion_droplets_beyer(const tb_detail_params_t *p, uint64_t seed, const tb_frame_t *win,
                              const double *h0, const double *log10_area, double *h_out,
                              int64_t *eroded_q, int64_t *deposited_q, int64_t *water_q,
                              tb_droplet_budget_t *budget, tb_pool_t *pool, tb_err_t *err);

#endif
