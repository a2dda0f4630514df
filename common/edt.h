/* Exact squared Euclidean distance transforms of binary masks, with optional X wrap.
 *
 * tb_edt_squared is the separable lower-envelope transform of Felzenszwalb & Huttenlocher
 * ("Distance Transforms of Sampled Functions", Theory of Computing 8, 2012): a pass down every
 * column gives the vertical distance to the nearest feature, then the lower envelope of parabolas
 * along every row gives the exact squared distance. On the planet X wraps (the distance across the
 * seam is the short way round) and Y does not. tb_edt_dilate answers the question the plan asks,
 * "within r of a feature?", with the same column pass and a row pass specialised to a threshold;
 * its result is exactly (tb_edt_squared <= radius2) and the tests hold it to that.
 *
 * Typical sizes: the demo planet 3125 x 1000, the predecessor's planet 12500 x 6076 (76 M cells).
 * Distances are in cells; results never depend on the number of threads (rows are independent and
 * every value is an integer).
 */
#ifndef TB_EDT_H
#define TB_EDT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/pool.h"

/* The squared distance reported for a cell when the mask has no feature at all. */
#define TB_EDT_FAR UINT32_MAX

/* Squared Euclidean distance, in cells squared, from every cell of the w x h row-major mask to the
 * nearest cell whose mask value is non-zero (0 on a feature), into d2_out (w * h values, caller
 * owned; may not alias mask). With wrap_x, column w - 1 neighbours column 0. threads >= 1 (values
 * above 1 split rows and columns across pthreads; the result is identical). Returns 0, or -1 with
 * *err set when the grid is too large for 32-bit squared distances or memory runs out. */
int tb_edt_squared(const uint8_t *mask, int64_t w, int64_t h, bool wrap_x, int threads,
                   uint32_t *d2_out, tb_err_t *err);

/* Euclidean dilation: out[i] = 1 when some feature cell lies within squared distance radius2 (cells
 * squared) of cell i, else 0; exactly tb_edt_squared(...) <= radius2. out may alias mask (the mask
 * is read in full before out is written). radius2 >= 0; threads as above. Returns 0 or -1 with
 * *err set. */
int tb_edt_dilate(const uint8_t *mask, int64_t w, int64_t h, bool wrap_x, int64_t radius2,
                  int threads, uint8_t *out, tb_err_t *err);

/* Called once for every row of tb_edt_squared_both as soon as that row's distances are final, on
 * the thread that made them: d2_row is row y of the output (w values). Rows are handed out in
 * aligned chunks of TB_EDT_CHUNK_ROWS, every chunk on one thread and its rows in order, so a
 * callback may keep per-chunk state (a row of 16 x 16 blocks) without locks. It may rewrite row y
 * of the mask: the transform has read that row for the last time. */
typedef void (*tb_edt_row_fn)(void *ctx, int64_t y, const uint32_t *d2_row, int thread);
#define TB_EDT_CHUNK_ROWS 16

/* The squared distance from every cell to the nearest cell of the other kind, both ways in one
 * transform: a cell whose mask is 0 gets its squared distance to the nearest non-zero cell (what
 * tb_edt_squared(mask) gives it), a non-zero cell its squared distance to the nearest zero cell
 * (what tb_edt_squared of the inverted mask gives it), into d2_out (w * h, caller owned, may not
 * alias the mask). cap2[0] (zero cells) and cap2[1] (non-zero cells) bound what is asked: a cell
 * whose squared distance is above the cap of its kind gets TB_EDT_FAR, every other cell the exact
 * value (UINT32_MAX: no cap). With wrap_x, column w - 1 neighbours column 0. pool: its threads
 * split the columns and the rows (NULL: the calling thread); the result is the same on any number.
 * row_fn (may be NULL) is called for every row as above. Returns 0, or -1 with *err set when the
 * grid is too large for 32-bit squared distances or memory runs out. */
int tb_edt_squared_both(const uint8_t *mask, int64_t w, int64_t h, bool wrap_x,
                        const uint32_t cap2[2], tb_pool_t *pool, uint32_t *d2_out,
                        tb_edt_row_fn row_fn, void *row_ctx, tb_err_t *err);

#endif
