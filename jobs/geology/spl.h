/* The implicit stream-power update of Braun & Willett (2013), "A very efficient O(n), implicit and
 * parallel method to solve the stream power equation governing fluvial incision and landscape
 * evolution", Geomorphology 180-181, on the D8 receiver tree, and the stack it walks.
 *
 * The stack lists every solved cell with its receiver before it. It is built tree by tree: a "mouth"
 * is a solved cell whose receiver is a fixed cell (the outlet); mouths are taken in raster order and
 * each mouth's D8 tree is listed depth-first, so every tree is one contiguous range of the stack
 * (tree_start). Trees are independent for the update (an outlet never moves), which is what issue 4
 * splits across threads. A box of N cells needs about 12 N bytes here.
 *
 * The update solves, for each cell i with receiver r (already updated), the implicit equation
 *     h_i' - h_i + K_i dt A_i^m ((h_i' - h_r') / L_ir)^n = 0
 * exactly for n = 1 and by safeguarded Newton iteration otherwise. A cell not above its receiver is
 * left alone (no deposition). The result on a cell depends only on its own values and its receiver's
 * new height, so any order that puts receivers first gives the same bits.
 */
#ifndef TB_GEOLOGY_SPL_H
#define TB_GEOLOGY_SPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/geology/topology.h"

typedef struct {
    int32_t *order;      /* solved cells, receivers first; capacity: the box */
    size_t count;        /* cells listed */
    int32_t *tree_start; /* start of each mouth's tree in order; tree_start[ntrees] == count */
    size_t ntrees;
    int32_t *scratch;    /* the depth-first walk's own stack; capacity: the box */
} tb_stack_t;

/* Builds the stack from the D8 directions (every solved cell must drain to a fixed cell: run the
 * router and the sink resolution first). Returns the number of solved cells listed; a number below
 * the solved count means some cell does not reach a fixed cell (a bug upstream). */
size_t tb_spl_build_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                          tb_stack_t *stack);

typedef struct {
    double m, n;    /* stream-power exponents on area and slope */
    double dt_yr;   /* years per step */
} tb_spl_params_t;

/* Erodes h in place along an order that lists every solved cell after its D8 receiver: cells
 * order[0..count) when step is +1 (the stack), order[count-1..0] when step is -1 (the MFD Kahn
 * order reversed). k is K per cell (1/yr m^(1-2m)), area_m2 the drainage area used for A (MFD or
 * D8). Any such order gives the same bits. Returns the Newton iterations spent (0 for n = 1). */
int64_t tb_spl_erode_braun_willett(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                                   const int32_t *order, size_t count, int step,
                                   const float *area_m2, const float *k, const tb_spl_params_t *p,
                                   float *h);

#endif
