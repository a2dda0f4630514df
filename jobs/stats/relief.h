/* Local relief: max - min of height over a square window, in O(1) work per cell.
 *
 * The window is (2r + 1) x (2r + 1) cells centred on the cell; r comes from a window width in
 * metres (tb_relief_radius_cells). Relief is separable - the max over a square is the max over rows
 * of the max over columns - and each 1-D running max/min is the van Herk / Gil-Werman algorithm
 * (van Herk 1992, Pattern Recognition Letters 13; Gil & Werman 1993, IEEE PAMI 15): cut the line
 * into blocks of k = 2r + 1, take a prefix max forward and a suffix max backward inside each block,
 * and the max over any window of k is max(suffix[start], prefix[start + k - 1]). Three comparisons
 * per cell per pass whatever r is, against (2r+1)^2 for a plain window (63^2 = 3969 at 8 m cells).
 *
 * Outside the box is sea level: cells beyond the box's rows, and beyond its columns unless the box
 * wraps (tb_frame_wraps: column w-1 neighbours column 0), read as 0 m. A region box that holds
 * every cell within r of its land therefore gives its land the same relief as the whole planet
 * does.
 *
 * The streaming form (tb_relief_begin / _block / _row) serves the statistics pass, which needs one
 * row at a time: the workspace holds the suffix max and min of one block of k rows and a running
 * prefix (about 8 k w bytes; 3 MB for a box 6000 cells wide at r = 31), never a box-sized copy. It
 * is reused across calls; one per thread.
 */
#ifndef TB_RELIEF_H
#define TB_RELIEF_H

#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"

typedef struct tb_relief_t tb_relief_t;

/* The half-width r of the odd window of (2r + 1) cells nearest to window_m: r = round((window_m /
 * cell_m - 1) / 2), at least 1. 500 m at 8 m cells is r = 31, a window of 63 cells = 504 m. */
int64_t tb_relief_radius_cells(double window_m, double cell_m);

/* An empty workspace (buffers grow on first use). NULL with *err set when memory runs out. */
tb_relief_t *tb_relief_new(tb_err_t *err);
/* Frees the workspace; sets *self_p to NULL; accepts NULL. */
void tb_relief_destroy(tb_relief_t **self_p);

/* Starts streaming the relief of `height_m` (box->w x box->h, row-major, finite) at radius r >= 1.
 * The workspace borrows height_m until the next begin. Returns 0, or -1 with *err set (invalid box,
 * r < 1, out of memory). */
int tb_relief_begin(tb_relief_t *self, const tb_frame_t *box, const float *height_m, int64_t radius,
                    tb_err_t *err);
/* Prepares output rows [b k, b k + k) (k = 2r + 1): the suffix half of the vertical pass. */
void tb_relief_block(tb_relief_t *self, int64_t b);
/* The relief of row j, which must lie in the block last prepared; rows are cheapest asked in
 * increasing order (the prefix half of the vertical pass runs as they come). The row (box->w
 * floats) is owned by the workspace and valid until the next call. */
const float *tb_relief_row(tb_relief_t *self, int64_t j);

/* The relief of every cell of the box into relief_m (box->w x box->h), e.g. for map_relief.png.
 * Returns 0, or -1 with *err set. */
int tb_relief_grid(const tb_frame_t *box, const float *height_m, int64_t radius, float *relief_m,
                   tb_err_t *err);

#endif
