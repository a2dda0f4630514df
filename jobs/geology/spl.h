/* The implicit stream-power update of Braun & Willett (2013), "A very efficient O(n), implicit and
 * parallel method to solve the stream power equation governing fluvial incision and landscape
 * evolution", Geomorphology 180-181, on the D8 receiver tree, and the stack it walks.
 *
 * The stack lists every solved cell with its receiver before it. It is built tree by tree: a
 * "mouth" is a solved cell whose receiver is a fixed cell (the outlet); mouths are taken in raster
 * order and each mouth's D8 tree is listed depth-first, so every tree is one contiguous range of
 * the stack (tree_start). Trees are independent for the update (an outlet never moves), which the
 * solve splits across threads. A box of N cells needs about 12 N bytes here.
 *
 * The update solves, for each cell i with receiver r (already updated), the implicit equation
 *     h_i' - h_i + K_i dt A_i^m ((h_i' - h_r') / L_ir)^n = 0
 * exactly for n = 1 and by safeguarded Newton iteration otherwise. A cell not above its receiver is
 * left alone (no deposition). The result on a cell depends only on its own values and its
 * receiver's new height, so any order that puts receivers first gives the same bits.
 */
#ifndef TB_GEOLOGY_SPL_H
#define TB_GEOLOGY_SPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "jobs/geology/topology.h"

typedef struct {
    int32_t *order;      /* solved cells, receivers first; capacity: the box */
    size_t count;        /* cells listed */
    int32_t *tree_start; /* start of each mouth's tree in order; tree_start[ntrees] == count */
    size_t ntrees;
    int32_t *scratch; /* the depth-first walk's own stack; capacity: the box */
} tb_stack_t;

/* Builds the stack from the D8 directions (every solved cell must drain to a fixed cell: run the
 * router and the sink resolution first). Returns the number of solved cells listed; a number below
 * the solved count means some cell does not reach a fixed cell (a bug upstream). */
size_t tb_spl_build_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                          tb_stack_t *stack);

typedef struct {
    double m, n;  /* stream-power exponents on area and slope */
    double dt_yr; /* years per step */
} tb_spl_params_t;

/* Erodes h in place along an order that lists every solved cell after its D8 receiver: cells
 * order[0..count) when step is +1 (the stack), order[count-1..0] when step is -1 (the MFD Kahn
 * order reversed). k is K per cell (1/yr m^(1-2m)), area_m2 the drainage area used for A (MFD or
 * D8). Any such order gives the same bits. Returns the Newton iterations spent (0 for n = 1). */
int64_t tb_spl_erode_braun_willett(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                                   const int32_t *order, size_t count, int step,
                                   const float *area_m2, const float *k, const tb_spl_params_t *p,
                                   float *h);

/* The same update on `pool`, one band of rows per thread, each walking its segment of an MFD Kahn
 * order in reverse (tb_accum_mfd_bands: band b's cells are order[seg_start[b] ..
 * seg_start[b] + seg_count[b])), with the areas in the order's places: area_seq[i] is the area
 * of cell order[i] (tb_accum_mfd_bands' area_seq), so they are read in sequence. A cell whose
 * receiver lies in another band waits until that band has written the receiver: flag[r] (one byte a
 * cell, all 0 before a run's first call) is set to `epoch` (1 or 2, alternating from call to call)
 * with release order once band-boundary cell r is done. No wait can deadlock: each band's segment
 * is in the order its cells were processed, and a receiver was processed after its donors. Same
 * bits as tb_spl_erode_braun_willett. Returns the Newton iterations; wait_s[b] (may be NULL)
 * receives the seconds band b waited. -1 (nothing done) when there are more bands than the pool has
 * threads, or than TB_TOPO_MAX_BANDS. */
int64_t tb_spl_erode_bands(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                           const int32_t *order, const size_t *seg_start, const size_t *seg_count,
                           const float *area_seq, const float *k, const tb_spl_params_t *p,
                           float *h, uint8_t *flag, uint8_t epoch, tb_pool_t *pool,
                           const tb_band_t *bands, int nbands, double *wait_s);

/* Per-thread scratch of the basin-parallel D8 step: a tree's stack and its walk. Grown on demand
 * and kept, so a solve allocates only in its first steps. */
typedef struct {
    int32_t *order, *todo;
    size_t cap;
} tb_spl_scratch_t;

void tb_spl_scratch_free(tb_spl_scratch_t *s);

/* The D8 step by drainage basin (Braun & Willett 2013: the trees of different river mouths are
 * independent). mouths[0..nmouths) are the solved cells whose receiver is fixed; tasks[0..ntasks]
 * cuts them into ranges (task i is mouths[tasks[i] .. tasks[i + 1])), handed to the threads in
 * task order, so put the largest basins first. For each tree: the stack (depth-first from the
 * mouth, the same as tb_spl_build_stack's), the D8 drainage area (donors before receivers), then,
 * when p is not NULL, the implicit update. tree_cells[m] receives the size of mouth m's tree.
 * scratch[thread] must exist for every thread of the pool. Same bits as the stack, area and
 * update of the one-thread path. Returns the Newton iterations, or -1 when scratch cannot grow. */
int64_t tb_spl_basins(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                      const int32_t *mouths, const size_t *tasks, size_t ntasks, float *area_m2,
                      const float *k, const tb_spl_params_t *p, float *h, int32_t *tree_cells,
                      tb_spl_scratch_t *scratch, tb_pool_t *pool);

#endif
