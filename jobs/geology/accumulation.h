/* Drainage area: multiple-flow-direction accumulation in Kahn order, and D8 along the stack.
 *
 * MFD partition (Freeman 1991, Computers & Geosciences 17; Quinn et al. 1991, Hydrological
 * Processes 5; Holmgren 1994, Hydrological Processes 8): a cell sends its area to every strictly
 * lower neighbour k in proportion to w_k = tan(beta_k)^p * L_k, tan(beta_k) the slope to k and L_k
 * the contour length (1/2 cell cardinal, sqrt(2)/4 cell diagonal, Quinn). p is the MFD exponent;
 * p = 0 means D8 and is served by the stack instead.
 *
 * Order (docs/solve.md): Kahn's algorithm (Kahn 1962) over the flow graph - count each cell's
 * strictly higher solved neighbours, release a cell when its count reaches zero. No elevation sort.
 * The sum is a PULL: when a cell is processed it adds q_n * w(n -> c) over its higher neighbours in
 * the fixed neighbour order, where q_n = A_n / W_n was stored by n. So a cell's area is the same
 * float sum in every processing order, every box and every partition into threads.
 *
 * The walk sweeps the rows: a row's cells with nothing above them (listed by the count pass) and
 * the cells the previous row freed in it are chased depth-first, and so is every cell they free in
 * the rows already reached; a cell freed in the next row waits for it. (Measured: a window that
 * sends releases far behind the sweep to a later sweep in the other direction, for locality, was
 * slower at every width, 8 rows by 40 %.)
 *
 * Threads (docs/solve.md). The MFD graph does not split into independent drainage basins (a divide
 * cell sends area to both sides), so the walk is split by bands of rows (topology.h), each walked
 * by one thread: a release into another band's first or last row is an atomic decrement, and the
 * cell it frees is handed to that band's inbox; band 0 sweeps up and band 1 down from their shared
 * boundary first, so what they hand each other is ready early. Counts and pulls are the same float
 * operations as with one band, so the areas are the same bits for any number of bands.
 *
 * Fixed cells take the area delivered to them (gathered in neighbour order), so the area arriving
 * at the sea equals the solved area: drainage closes.
 */
#ifndef TB_GEOLOGY_ACCUMULATION_H
#define TB_GEOLOGY_ACCUMULATION_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/pool.h"
#include "jobs/geology/spl.h"
#include "jobs/geology/topology.h"

typedef struct tb_accum_t tb_accum_t;

/* A workspace for boxes of up to `cells` cells, rows of up to w (about 13 bytes a cell). NULL with
 * *err on failure. */
tb_accum_t *tb_accum_new(size_t cells, int64_t w, tb_err_t *err);

/* Frees the workspace and sets *self_p to NULL; accepts NULL. */
void tb_accum_destroy(tb_accum_t **self_p);

/* Readies the workspace for a classification of the box (call again whenever node changes). */
void tb_accum_prepare(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node);

/* Lists the fixed cells that border a solved cell (the outlets drainage can reach) into coast[]
 * (capacity: the box), in raster order; returns their number. Static for a solve mask. */
size_t tb_accum_coast(const tb_topo_t *t, const uint8_t *node, int32_t *coast);

/* Each band's walk goes over its rows in column strips of 2^TB_ACCUM_STRIP_LOG2 columns: a strip's
 * rows are swept and the cells freed in them chased. A cell freed by the band is chased in
 * whichever strip it lies (it is ready); a cell handed over by a neighbouring band waits for its
 * strip's turn (a later pass over the strips when the strip has had its turn), so it is chased
 * among rows the cache holds. A chase runs down a river into rows the sweep left tens of rows
 * before; in a strip those rows are a strip's width of bytes back, not a box's (docs/solve.md).
 * Boxes narrower than two strips sweep whole rows. Cost only: the areas are the same bits. */
#define TB_ACCUM_STRIP_LOG2 10

/* Strips of 2^log2_columns columns for the walk (0 or 1: whole rows; strips are at least 4 columns
 * wide); for tests. */
void tb_accum_set_strips(tb_accum_t *self, int log2_columns);

/* The last walk's passes over its strips, the most of any band's (0 when it swept whole rows); with
 * several bands a band's passes include those it made after waiting for its neighbours. */
int tb_accum_strip_passes(const tb_accum_t *self);

/* MFD drainage area in m2 of every solved cell (its own cell included) and of every coast cell (the
 * area it receives), on a surface where every solved cell has a strictly lower neighbour (after the
 * sink resolution). Other fixed cells are left untouched. When order is not NULL it receives the
 * solved cells in processing order (capacity: the box): every cell after all its higher
 * neighbours, so reversed it puts every D8 receiver before its donors - the stream-power update
 * walks it instead of a stack. Returns the number of solved cells that had nowhere to send their
 * area (0 on a resolved surface); their area is lost, not invented; SIZE_MAX when memory runs out.
 * One thread. */
size_t tb_accum_mfd_kahn(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                         double exponent, const int32_t *coast, size_t ncoast, float *area_m2,
                         int32_t *order);

/* The same on `pool`, one band of rows per thread (bands[0..nbands) cover the inner rows; NULL pool
 * or one band: the caller's thread). order (not NULL) receives band b's processing order at
 * order[seg_start[b] .. seg_start[b] + seg_count[b]) (the bands' solved cells, in band order), each
 * segment a Kahn order of its band: a cell comes after every higher neighbour of its own band, and
 * after one of another band only in real time (see tb_spl_erode_bands). wait_s[2 b] (may be NULL)
 * receives the seconds band b's thread spent waiting for other bands, wait_s[2 b + 1] its whole
 * walk. Same bits as one thread. The bands wait on each other, so there must be no more bands than
 * the pool has threads; SIZE_MAX when there are (nothing is computed), or when memory runs out (the
 * areas and the order are then incomplete).
 *
 * area_seq (may be NULL; capacity: the box; only with order) receives the solved cells' areas in
 * the order's places, area_seq[i] that of cell order[i]; area_m2 then gets only the coast cells',
 * and tb_accum_place puts the others in place. The walk writes them in sequence: written into the
 * box, they were scattered over the rows the chase is in (docs/solve.md). Without area_seq the
 * workspace keeps its own, and its own order too when order is NULL (4 bytes a cell each, made on
 * first need), and area_m2 gets every area. */
size_t tb_accum_mfd_bands(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                          double exponent, const int32_t *coast, size_t ncoast, float *area_m2,
                          int32_t *order, float *area_seq, size_t *seg_start, size_t *seg_count,
                          tb_pool_t *pool, const tb_band_t *bands, int nbands, double *wait_s);

/* area_m2[order[i]] = area_seq[i] for i in each segment [seg_start[s], seg_start[s] +
 * seg_count[s]), s < nsegs. */
void tb_accum_place(const int32_t *order, const float *area_seq, const size_t *seg_start,
                    const size_t *seg_count, int nsegs, float *area_m2);

/* D8 drainage area along the stack (reverse order: donors before receivers), coast cells gathered
 * in neighbour order. */
void tb_accum_d8_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                       const tb_stack_t *stack, const int32_t *coast, size_t ncoast,
                       float *area_m2);

/* D8 drainage area of the coast cells coast[from, to) from the areas of the solved cells. */
void tb_accum_d8_coast(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                       const int32_t *coast, size_t from, size_t to, float *area_m2);

#endif
