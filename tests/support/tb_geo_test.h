/* Helpers shared by the geology suites: boxes, masks and terrains built from world-keyed hashes, so
 * one landmass can be laid into differently placed boxes and compared cell by cell. */
#ifndef TB_GEO_TEST_H
#define TB_GEO_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/grid.h"
#include "common/manifest.h"

/* A box on a lattice (aborts the test on a bad frame). */
tb_frame_t tb_geo_box(int64_t lattice_w, int64_t lattice_h, int64_t x0, int64_t y0, int64_t w,
                      int64_t h);

/* Box-sized arrays, zeroed; free with free(). */
float *tb_geo_floats(const tb_frame_t *box);
uint8_t *tb_geo_bytes(const tb_frame_t *box);

/* Hash noise in [0, amplitude) at each cell's lattice position. */
void tb_geo_noise(const tb_frame_t *box, uint64_t seed, double amplitude, float *out);

/* Sets out[c] = value for every cell whose lattice position lies in the ellipse centred on lattice
 * (cx, cy) with radii (rx, ry) (x distance taken across the seam). */
void tb_geo_ellipse(const tb_frame_t *box, double cx, double cy, double rx, double ry, float value,
                    float *out);
void tb_geo_ellipse_u8(const tb_frame_t *box, double cx, double cy, double rx, double ry,
                       uint8_t value, uint8_t *out);

/* The manifest's default solve parameters. */
tb_solve_params_t tb_geo_default_params(void);

/* Index in box b of the cell at local (i, j) of box a, or -1 when b does not contain it. */
int64_t tb_geo_map(const tb_frame_t *a, int64_t i, int64_t j, const tb_frame_t *b);

#endif
