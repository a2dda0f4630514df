/* A synthetic planet for the statistics' tests and benchmark: fractal land rising out of a sea at
 * exactly 0 m, a D8 drainage area over it, and an uplift field that spans all three classes.
 *
 * It is a fixture, not a landscape model: the heights are fBm of gradient noise (common/noise.h,
 * wrapping exactly at the seam) cut at a sea level, and the drainage area is the plain D8
 * accumulation of those heights (every cell passes its area, starting at one cell's, to its
 * steepest lower neighbour; pits keep theirs). What it gives a test is realistic *variety* - slopes
 * from flat to steep, channels spanning orders of magnitude of area, every uplift class, coasts,
 * the seam - at any size, as a pure function of (frame, seed). A few million cells take a second or
 * two.
 */
#ifndef TB_STATS_SYNTHETIC_H
#define TB_STATS_SYNTHETIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"

typedef struct {
    float *height_m;    /* frame->w x frame->h; sea cells exactly 0 */
    float *area_m2;     /* D8 drainage area, including the cell itself */
    float *uplift_m_yr; /* 0 .. 1 mm/yr, as metres per year */
    size_t cells;
} tb_synth_t;

/* Fills *out over the frame, whose lattice must be the whole planet's (the noise wraps at
 * lattice_w * cell_m). relief_m scales the land's height. Returns 0, or -1 with *err set; on
 * success the caller frees with tb_synth_free. */
int tb_synth_planet(const tb_frame_t *frame, uint64_t seed, double relief_m, tb_synth_t *out,
                    tb_err_t *err);
/* Frees the arrays and zeroes *s; accepts NULL. */
void tb_synth_free(tb_synth_t *s);

/* The fixtures' pit filling (this one and jobs/detail/synthetic.h): a priority-flood (Barnes,
 * Lehman and Mulla 2014, with an epsilon: a filled cell rises one float step above the cell that
 * reached it) over a w x h grid of heights, from every cell at or below sea_max_m and the first
 * and last rows, X wrapping when `wraps`, so every cell drains to the sea or an edge row. Ties pop
 * by index, so the result is deterministic. When order is not NULL it receives the w h cells in the
 * order they popped (lowest first: reversed, a valid order for a D8 accumulation). Returns 0, or
 * -1 with *err set (out of memory; more than 2^32 - 1 cells). */
int tb_synth_fill(float *height_m, int64_t w, int64_t h, bool wraps, float sea_max_m,
                  uint32_t *order, tb_err_t *err);

#endif
