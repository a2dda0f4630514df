/* Drainage area: multiple-flow-direction accumulation in Kahn order, and D8 along the stack.
 *
 * MFD partition (Freeman 1991, Computers & Geosciences 17; Quinn et al. 1991, Hydrological
 * Processes 5; Holmgren 1994, Hydrological Processes 8): a cell sends its area to every strictly
 * lower neighbour k in proportion to w_k = tan(beta_k)^p * L_k, tan(beta_k) the slope to k and L_k
 * the contour length (1/2 cell cardinal, sqrt(2)/4 cell diagonal, Quinn). p is the MFD exponent;
 * p = 0 means D8 and is served by the stack instead.
 *
 * Order (reference 4.B2): Kahn's algorithm (Kahn 1962) over the flow graph - count each cell's
 * strictly higher solved neighbours, release a cell when its count reaches zero. No elevation sort.
 * The sum is a PULL: when a cell is processed it adds q_n * w(n -> c) over its higher neighbours in
 * the fixed neighbour order, where q_n = A_n / W_n was stored by n. So a cell's area is the same
 * float sum in every processing order and every box, and a parallel version (atomic release
 * counters, issue 4) gives the same bits. Cells are released by a raster scan that chases each
 * release depth-first, which keeps the walk local in memory. float32 is enough (reference 4.B2).
 *
 * Fixed cells take the area delivered to them (gathered in neighbour order), so the area arriving
 * at the sea equals the solved area: drainage closes.
 */
#ifndef TB_GEOLOGY_ACCUMULATION_H
#define TB_GEOLOGY_ACCUMULATION_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "jobs/geology/spl.h"
#include "jobs/geology/topology.h"

typedef struct tb_accum_t tb_accum_t;

/* A workspace for boxes of up to `cells` cells, rows of up to w (about 9 bytes a cell). NULL with
 * *err on failure. */
tb_accum_t *tb_accum_new(size_t cells, int64_t w, tb_err_t *err);

/* Frees the workspace and sets *self_p to NULL; accepts NULL. */
void tb_accum_destroy(tb_accum_t **self_p);

/* Readies the workspace for a classification of the box (call again whenever node changes). */
void tb_accum_prepare(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node);

/* Lists the fixed cells that border a solved cell (the outlets drainage can reach) into coast[]
 * (capacity: the box), in raster order; returns their number. Static for a solve mask. */
size_t tb_accum_coast(const tb_topo_t *t, const uint8_t *node, int32_t *coast);

/* MFD drainage area in m2 of every solved cell (its own cell included) and of every coast cell (the
 * area it receives), on a surface where every solved cell has a strictly lower neighbour (after the
 * sink resolution). Other fixed cells are left untouched. When order is not NULL it receives the
 * solved cells in processing order (capacity: the box): every cell after all its higher
 * neighbours, so reversed it puts every D8 receiver before its donors - the stream-power update
 * walks it instead of a stack. Returns the number of solved cells that had nowhere to send their
 * area (0 on a resolved surface); their area is lost, not invented. */
size_t tb_accum_mfd_kahn(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                         double exponent, const int32_t *coast, size_t ncoast, float *area_m2,
                         int32_t *order);

/* D8 drainage area along the stack (reverse order: donors before receivers), coast cells gathered
 * in neighbour order. */
void tb_accum_d8_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                       const tb_stack_t *stack, const int32_t *coast, size_t ncoast,
                       float *area_m2);

#endif
