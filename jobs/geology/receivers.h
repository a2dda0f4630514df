/* The D8 router: steepest-descent receivers (O'Callaghan & Mark 1984) with a per-step tie-break
 * jitter hashed from the world position (docs/solve.md).
 *
 * Each solved cell's receiver is the strictly lower neighbour k that maximises
 *     s_k * (1 + J * v_k),   s_k = (h_c - h_k) / dist_k,
 * where v_k in [-1, 1] is byte k of tb_hash_cell(key, lattice x, lattice y) and the key is derived
 * per step (TB_SALT_ROUTER_JITTER). A static jitter re-carves the same grooves a thousand times;
 * one that changes every step averages out. The hash is only taken when the two steepest slopes are
 * within the jitter of each other (otherwise it cannot change the answer), so the common case costs
 * nothing. A cell with no strictly lower neighbour is a pit and gets TB_DIR_NONE.
 *
 * Invariant: a receiver depends only on the cell's 3 x 3 heights, its lattice position and the
 * step, so it is the same in every box and in any processing order.
 */
#ifndef TB_GEOLOGY_RECEIVERS_H
#define TB_GEOLOGY_RECEIVERS_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/geology/topology.h"

typedef struct {
    uint64_t key;     /* tb_hash_key(seed, TB_SALT_ROUTER_JITTER, step) */
    double amplitude; /* J, relative; 0 turns the jitter off (ties go to the first direction) */
} tb_router_jitter_t;

/* D8 receivers of the cells of row j (0 < j < h-1): dir[c] in 0..7 (tb_nb order) or TB_DIR_NONE
 * for fixed cells and pits. Solved pits are appended to pits[*npits] (capacity: the row). */
void tb_receivers_d8_row(const tb_topo_t *t, const uint8_t *node, const float *h,
                         const tb_router_jitter_t *jit, int64_t j, uint8_t *dir, int32_t *pits,
                         size_t *npits);

/* D8 receivers of the whole box (the ring gets TB_DIR_NONE). Writes the pits to pits[] (capacity:
 * the box) and returns their number. */
size_t tb_receivers_d8(const tb_topo_t *t, const uint8_t *node, const float *h,
                       const tb_router_jitter_t *jit, uint8_t *dir, int32_t *pits);

/* D8 receivers of the listed solved cells only (after sink resolution raised some of them). Returns
 * how many of them are still pits (0 after a correct fill). */
size_t tb_receivers_d8_cells(const tb_topo_t *t, const uint8_t *node, const float *h,
                             const tb_router_jitter_t *jit, const int32_t *cells, size_t count,
                             uint8_t *dir);

/* D8 receivers after solved cell p alone rose (a one-cell lake): p's, then those of its solved
 * neighbours that drained into p, in neighbour order (no other receiver can change: the rise only
 * lowers the others' slopes to p, which were not their steepest). The same results as
 * tb_receivers_d8_cells on p and on those neighbours, in one call. Writes those neighbours that are
 * now pits to pits[] (capacity 8, in neighbour order) and returns their number. */
size_t tb_receivers_d8_after_rise(const tb_topo_t *t, const uint8_t *node, const float *h,
                                  const tb_router_jitter_t *jit, size_t p, uint8_t *dir,
                                  int32_t *pits);

#endif
