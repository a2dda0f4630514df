/* tb_noise_fbm over a window of cells, bit for bit, at a few table lookups per octave.
 *
 * tb_noise_fbm hashes four lattice nodes and takes a cos and a sin for each, per octave per sample:
 * about 1 us a cell at four octaves. Over a window the nodes repeat, so this caches each node's
 * gradient once and per column (per row) the lattice coordinate, fraction and fade of every octave,
 * then evaluates with exactly tb_noise_fbm's operations in its order. The result is the same double
 * as tb_noise_fbm at the cell centre in every window, which keeps U and K exact across frames
 * (test_uplift compares the two over windows straddling the seam). Windows of a few hundred columns
 * by a few thousand rows; the tables are a few hundred kilobytes.
 */
#ifndef TB_FBM_WINDOW_H
#define TB_FBM_WINDOW_H

#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/noise.h"

#define TB_FBM_WINDOW_MAX_OCTAVES 8

typedef struct {
    int64_t periods;       /* nodes around the circumference at this octave */
    int64_t nx, ny;        /* table size in nodes */
    int64_t iy_start;      /* node row of table row 0 */
    double *gx, *gy;       /* node gradients (cos, sin), nx * ny */
    int32_t *col_slot;     /* per window column: table column of its left node */
    int32_t *col_slot1;    /* per window column: table column of its right node */
    double *col_f, *col_s; /* per window column: fraction and fade */
    int32_t *row_slot;     /* per window row: table row of its lower node */
    double *row_f, *row_s;
} tb_fbm_octave_t;

typedef struct {
    int octaves;
    double gain;
    int64_t w, h; /* window size in cells */
    tb_fbm_octave_t oct[TB_FBM_WINDOW_MAX_OCTAVES];
} tb_fbm_window_t;

/* Prepares the window of columns i0..i1-1 and rows j0..j1-1 of `frame` for the noise `n`.
 * Returns 0, or -1 with *err set (octaves out of 1..MAX, memory). Free with tb_fbm_window_free. */
int tb_fbm_window_init(tb_fbm_window_t *win, const tb_noise_t *n, int octaves, double gain,
                       const tb_frame_t *frame, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                       tb_err_t *err);
void tb_fbm_window_free(tb_fbm_window_t *win);

/* tb_noise_fbm at the centre of window cell (i, j) (relative to i0, j0), the same bits. */
double tb_fbm_window_eval(const tb_fbm_window_t *win, int64_t i, int64_t j);

#endif
