/* Mosaics of a bake's detail tiles (docs/tiles.md, "Stitching"): any rectangle of the detail
 * lattice, in samples, read from OUT/tiles/index.json and the tile files beside it - nothing else
 * of the bake. `terrain stitch` and the bake's detail phase (preview_detail.png, the 2 m crop) use
 * it.
 *
 * A tile's interior is a pure function of the planet (docs/tiles.md, "The margin"), so the mosaic
 * is the tiles' samples copied side by side: no blending, no resampling, and a rectangle equal to a
 * tile is that tile's samples. X wraps (a rectangle may run past the east edge and go on at x = 0);
 * Y does not. Every file is checked against the XXH3 the index gives before one of its samples is
 * used. A tile of the lattice that the index does not list (an ocean tile: only land and coast
 * tiles are baked) is filled with the caller's value and counted.
 *
 * The detail lattice convention is common/grid.h's: sample (I, J) covers world metres
 * [I cell, (I + 1) cell) x [J cell, (J + 1) cell), its centre at ((I + 0.5) cell, (J + 0.5) cell);
 * y grows southward, row 0 is the north.
 */
#ifndef TB_MAPS_TILE_MOSAIC_H
#define TB_MAPS_TILE_MOSAIC_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* The largest rectangle a mosaic makes: 2^26 samples (8192 x 8192, 16.4 km square at 2 m), 128 MiB
 * of 16-bit heights. */
#define TB_MOSAIC_MAX_SAMPLES ((int64_t)1 << 26)

typedef struct tb_mosaic tb_mosaic_t; /* a bake's tile index, opened */

typedef struct {
    double cell_m;           /* detail sample edge, metres */
    int64_t tile_samples;    /* samples along a (full) tile edge */
    int64_t cols, rows;      /* tiles around the planet; tile rows (the last may be partial) */
    int64_t planet_w;        /* samples round the circumference (X wraps) */
    int64_t planet_h;        /* samples from the north edge to the south edge */
    double elev_lo, elev_hi; /* the 16-bit encoding: h = lo + v (hi - lo) / 65535 */
    int64_t n_tiles;         /* tiles the index lists (baked) */
} tb_mosaic_info_t;

/* A rectangle of the detail lattice in samples: columns x0 .. x0 + w - 1 taken modulo planet_w
 * (0 <= x0 < planet_w, 1 <= w <= planet_w), rows y0 .. y0 + h - 1 (inside the planet). */
typedef struct {
    int64_t x0, y0, w, h;
} tb_mosaic_rect_t;

/* The layers a mosaic reads: the heights from <id>.r16 (the same samples as <id>.png), the 8-bit
 * maps from <id>_flow.png, <id>_wear.png, <id>_deposit.png, and the splat weightmap (RGBA, four
 * bytes a sample) from <id>_splat.png. */
typedef enum {
    TB_MOSAIC_HEIGHT = 0,
    TB_MOSAIC_FLOW,
    TB_MOSAIC_WEAR,
    TB_MOSAIC_DEPOSIT,
    TB_MOSAIC_SPLAT
} tb_mosaic_layer_t;

/* Bytes a sample of a layer: 2 (heights), 4 (splat) or 1 (the 8-bit maps). */
size_t tb_mosaic_layer_bytes(tb_mosaic_layer_t layer);

/* Opens out_dir/tiles/index.json and checks it: the lattice, the encoding, and every tile's id,
 * column, row and samples against the lattice (an id that is not the one its column and row print,
 * a tile listed twice, a size that is not the tile's: TB_E_FORMAT naming the index and the tile).
 * TB_E_IO when the index cannot be read. */
int tb_mosaic_open(const char *out_dir, tb_mosaic_t **out, tb_err_t *err);
/* The same from the index's bytes in memory (text[0..n), no terminator needed); the tile files
 * are looked for in out_dir/tiles. What tests/fuzz/fuzz_tile_index.c drives. */
int tb_mosaic_parse(const char *out_dir, const char *text, size_t n, tb_mosaic_t **out,
                    tb_err_t *err);
void tb_mosaic_close(tb_mosaic_t **m);
void tb_mosaic_info(const tb_mosaic_t *m, tb_mosaic_info_t *out);

/* Whether the index lists tile (col, row) (false outside the lattice). */
bool tb_mosaic_has_tile(const tb_mosaic_t *m, int64_t col, int64_t row);

/* Reads tiles/<id><suffix> of listed tile (col, row) into a new buffer *data of *n bytes (the
 * caller frees it), checked against the XXH3 the index gives for it: TB_E_INVALID when the index
 * does not list the tile, TB_E_FORMAT when it lists no such file for it, TB_E_IO when the file is
 * missing or unreadable, TB_E_CHECKSUM when its XXH3 is not the index's; every message names the
 * file. `terrain export` reads the tiles' float heights (.f32z) and splat maps through it. */
int tb_mosaic_read_file(const tb_mosaic_t *m, int64_t col, int64_t row, const char *suffix,
                        char **data, size_t *n, tb_err_t *err);
/* Whether the index lists a file named <id><suffix> for tile (col, row). */
bool tb_mosaic_lists_file(const tb_mosaic_t *m, int64_t col, int64_t row, const char *suffix);

/* The samples whose centres lie in the area [x0_m, x0_m + w_m) x [y0_m, y0_m + h_m) of world
 * metres (x east, y south, from the planet's north-west corner); x0_m is taken modulo the
 * circumference. Pure. TB_E_INVALID naming the value when w_m or h_m is not positive, the area is
 * wider than the circumference, runs past the planet's north or south edge, holds no sample
 * centre, or holds more than max_samples samples. */
int tb_mosaic_area_samples(const tb_mosaic_info_t *info, double x0_m, double y0_m, double w_m,
                           double h_m, int64_t max_samples, tb_mosaic_rect_t *out, tb_err_t *err);

/* The 16-bit sample of `metres` in the index's encoding (rounded, clipped to 0..65535). Pure. */
uint16_t tb_mosaic_encode_m(const tb_mosaic_info_t *info, double metres);

/* Stitches `layer` over rect r into out (r.w * r.h samples, row-major, row 0 the north; uint16_t
 * for TB_MOSAIC_HEIGHT, uint8_t for the maps, four bytes R, G, B, A for the splat). Samples of
 * tiles the index does not list get `fill` (truncated to a byte for the maps, every byte of a
 * splat sample); *filled (may be NULL) gets their count. Reads one tile at a
 * time. -1 with *err: TB_E_INVALID for a rectangle outside the lattice or over
 * TB_MOSAIC_MAX_SAMPLES; TB_E_IO naming the file when a listed tile's file is missing or
 * unreadable; TB_E_CHECKSUM naming it when its XXH3 is not the index's; TB_E_FORMAT when its size
 * or picture is not the tile's. */
int tb_mosaic_stitch(const tb_mosaic_t *m, tb_mosaic_layer_t layer, tb_mosaic_rect_t r,
                     uint16_t fill, void *out, int64_t *filled, tb_err_t *err);

/* Hillshade of a height raster: `in` is (w + 2) x (h + 2) 16-bit samples in the index's encoding
 * (a one-sample border round the w x h cells to shade), `out` w x h shades 0..1: Lambert's cosine
 * of the surface normal (central differences over 2 cells of cell_m, heights times z_exag) with a
 * light from the north-west (azimuth 315 degrees, 45 degrees up); flat ground is 0.707. Pure. */
void tb_mosaic_hillshade(const tb_mosaic_info_t *info, const uint16_t *in, int64_t w, int64_t h,
                         double z_exag, float *out);

#endif
