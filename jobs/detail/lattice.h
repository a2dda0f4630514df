/* The detail tile lattice: the planet cut into square tiles of detail cells (docs/tiles.md).
 *
 * The detail lattice covers the same cylinder as the geology lattice at a finer cell (2 m against
 * 8 m by default), with the one centre convention of common/grid.h: detail cell (I, J) has its
 * centre at ((I + 0.5) cell_m, (J + 0.5) cell_m). Tiles are `tile_cells` detail cells square (2500
 * by default, 5 km), column c covering detail columns [c T, (c + 1) T) and row r detail rows [r T,
 * (r + 1) T). X wraps: the circumference is a whole number of tiles (the manifest refuses anything
 * else). Y does not: the rows cover the planet's height, and when that height is not a whole number
 * of tiles the LAST row is partial - its tiles keep the full width and are cut off at the planet's
 * north edge, with h = lattice_h - r T rows. Nothing is ever sampled beyond the planet.
 *
 * A tile id is (column, row), printed "c%03dr%03d" ("c012r003"; more digits when a planet needs
 * them); it depends on nothing but the lattice, so a tile keeps its id and its file names across
 * bakes.
 */
#ifndef TB_DETAIL_LATTICE_H
#define TB_DETAIL_LATTICE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"

typedef struct {
    int64_t geo_w, geo_h;   /* the geology lattice, cells */
    double geo_cell_m;      /* geology cell edge, metres */
    double cell_m;          /* detail cell edge, metres */
    int64_t tile_cells;     /* detail cells along a tile edge */
    int64_t tile_geo_cells; /* geology cells along a tile edge */
    int64_t lattice_w;      /* detail cells around the circumference */
    int64_t lattice_h;      /* detail cells from the north edge (y = 0) to the south edge */
    int64_t cols, rows;     /* tiles around; tile rows (the last may be partial) */
} tb_tile_lattice_t;

typedef struct {
    int64_t col, row;
} tb_tile_id_t;

/* What a tile's own ground (its interior, no margin) holds, read from the geology land mask. */
typedef enum { TB_TILE_OCEAN = 0, TB_TILE_LAND = 1, TB_TILE_COAST = 2 } tb_tile_content_t;

#define TB_TILE_ID_MAX 48 /* bytes of a printed id, with its terminator */

/* Builds the lattice of tiles of `size_km` at `cell_m` over a geology lattice of geo_w x geo_h
 * cells of geo_cell_m. Returns 0, or -1 with *err naming the numbers when the circumference is not
 * a whole number of tiles, a tile not a whole number of geology and of detail cells, or the detail
 * cell coarser than the geology cell. */
int tb_tile_lattice_make(tb_tile_lattice_t *out, int64_t geo_w, int64_t geo_h, double geo_cell_m,
                         double size_km, double cell_m, tb_err_t *err);

/* Tiles in the lattice (cols x rows). */
int64_t tb_tile_count(const tb_tile_lattice_t *L);

/* Prints an id ("c012r003") into out[TB_TILE_ID_MAX]. */
void tb_tile_id_format(tb_tile_id_t id, char out[TB_TILE_ID_MAX]);

/* Parses a printed id; 0, or -1 with *err naming the text when it is not "c<digits>r<digits>" or
 * lies outside the lattice (L may be NULL to check only the form). */
int tb_tile_id_parse(const char *text, const tb_tile_lattice_t *L, tb_tile_id_t *out,
                     tb_err_t *err);

/* The tile's own cells as a frame on the detail lattice (the last row may be short). -1 with *err
 * when the id is outside the lattice. */
int tb_tile_interior(const tb_tile_lattice_t *L, tb_tile_id_t id, tb_frame_t *out, tb_err_t *err);

/* The interior grown by `margin` cells on every side, X wrapping, Y clipped to the planet (the
 * clip is a fact of the world, the same for every tile). -1 when the id is outside the lattice or
 * the window would be wider than the circumference. */
int tb_tile_window(const tb_tile_lattice_t *L, tb_tile_id_t id, int64_t margin, tb_frame_t *out,
                   tb_err_t *err);

/* World metres of the tile's corner at its smallest x and y, the north-west one (not a cell
 * centre). */
void tb_tile_origin_m(const tb_tile_lattice_t *L, tb_tile_id_t id, double *x_m, double *y_m);

/* The geology cells a detail window reads: every cell in the 4 x 4 stencil of the cubic resampler
 * (resample_catmull_rom.h) of any of its cells, X wrapping, Y clipped to the planet (the resampler
 * clamps rows there). A frame on the geology lattice. */
int tb_tile_geo_window(const tb_tile_lattice_t *L, const tb_frame_t *detail, tb_frame_t *out,
                       tb_err_t *err);

/* Whether the tile's own geology cells hold land, ocean or both. land is a planet-sized geology
 * mask (geo_w x geo_h, row-major, nonzero = land). */
tb_tile_content_t tb_tile_content(const tb_tile_lattice_t *L, tb_tile_id_t id, const uint8_t *land);

#endif
