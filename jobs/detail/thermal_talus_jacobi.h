/* Thermal weathering to the talus angle at the detail cell, Jacobi style (Musgrave, Kolb and Mace
 * 1989, "The synthesis and rendering of eroded fractal terrains", with the outflow split of Olsen
 * 2004, "Realtime procedural terrain generation").
 *
 * Method: in each iteration every cell i looks at its 8 neighbours j (common/grid.h's table) and
 * the excess e_ij = h_i - h_j - tan(talus) d_ij (d_ij = 1 or sqrt 2 cells, in metres); if the
 * largest excess E_i is positive it sheds rate x E_i, split over the neighbours in proportion to
 * their positive excess. All of an iteration's moves are computed from the heights before it (two
 * buffers), and each cell's new height is its old height minus its outflow plus the inflows from
 * its 8 neighbours added in neighbour order, so the result does not depend on the order cells are
 * visited, nor on the thread that visits them. Mass is conserved to rounding (every move leaves one
 * cell and enters another).
 *
 * Units: metres. Pre: h is the window's w x h heights. Post: after `iterations` iterations, slopes
 * above the talus are reduced (how far is measured in tests/test_detail.c and docs/tiles.md);
 * neighbours outside the window are ignored, so an error spreads one cell inward per iteration from
 * the window's edge (the margin bound counts it). Determinism: same bits on any pool.
 */
#ifndef TB_DETAIL_THERMAL_TALUS_JACOBI_H
#define TB_DETAIL_THERMAL_TALUS_JACOBI_H

#include "common/error.h"
#include "common/grid.h"
#include "common/pool.h"

/* Runs `iterations` Jacobi iterations on h (w x h doubles, in place) with cells of cell_m metres.
 * scratch is 2 w h doubles the caller owns (or NULL: allocated here). Returns 0 or -1 (memory). */
int tb_thermal_talus_jacobi(double *h, int64_t w, int64_t hgt, double cell_m, double talus_deg,
                            double rate, int iterations, double *scratch, tb_pool_t *pool,
                            tb_err_t *err);

/* The largest slope, in degrees, between 8-neighbours over the cells [i0, i1) x [j0, j1) of a
 * w-wide grid (neighbours must lie inside the grid). */
double tb_thermal_max_slope_deg(const double *h, int64_t w, double cell_m, int64_t i0, int64_t i1,
                                int64_t j0, int64_t j1);

#endif
