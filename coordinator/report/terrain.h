/* The reduced copy of the detail tiles that report.html's 3D view draws (docs/report.md, "The 3D
 * view"), written as each tile's result is written, so it works whatever order tiles arrive in.
 *
 * Per tile, in OUT/report_terrain/ (a browser page opened from file:// may load scripts but not
 * read files, so the data are scripts):
 *   <id>.js    the heights and splat weights point-sampled every `stride` samples, at most 256 a
 *              side (250 x 250 for a 2500-sample tile: every 20 m at 2 m), about 0.2-0.3 MB;
 *   <id>_c.js  the same every `coarse stride` samples, at most 64 a side (50 x 50), for the view
 *              of a whole landmass, about 15 kB;
 *   <id>_g.js  every sample of the tile's centre, at most TB_TERRAIN_GROUND_MAX a side (512 m at
 *              2 m), for the walk camera: the ground at the scale a player stands on it, about
 *              0.15-0.2 MB;
 *   <id>.json  what the page's index needs: origin, size, strides, the ground level's samples,
 *              the tile's mean 2 m slope and land share (from the tile's own statistics), its
 *              height range, and whether it holds land of the plan's largest landmass.
 * A script calls tbTerrain({...}) with base64 of zlib-deflated little-endian u16 heights (over the
 * tile's own [min_m, max_m]) and RGBA splat bytes, row 0 the tile's north edge. The samples are the
 * tile's own values at the centre of each stride block (no averaging), so the drawn ground passes
 * through true 2 m heights at its vertices. Thread-safe: each call writes only its tile's files.
 */
#ifndef TB_REPORT_TERRAIN_H
#define TB_REPORT_TERRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/error.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/tile.h"
#include "jobs/plan/plan.h"

#define TB_TERRAIN_DIR "report_terrain"
#define TB_TERRAIN_FINE_MAX 256
#define TB_TERRAIN_COARSE_MAX 64
#define TB_TERRAIN_GROUND_MAX 256

/* The smallest divisor of n that leaves at most max samples a side (so strides tile seamlessly). */
int64_t tb_terrain_stride(int64_t n, int64_t max);

/* Writes the reduced copy of tile result r into out_dir/report_terrain/ (atomically). L is the
 * bake's lattice; plan (may be NULL) decides the largest-landmass flag. 0, or -1 with *err. */
int tb_terrain_write_tile(const char *out_dir, const tb_tile_lattice_t *L, const tb_plan_t *plan,
                          const tb_tile_result_t *r, tb_err_t *err);

/* The page's index of the reduced copies: for every tile of out_dir/tiles/index.json whose copy
 * is there, its .json entry; plus "steepest" (the id of the tile with at least 90 % land - or the
 * most land when none has - whose mean 2 m slope is largest) and "landmass" (the ids on the
 * largest landmass). NULL when there is no tile index or no copy (no 3D view). */
cJSON *tb_terrain_index(const char *out_dir);

#endif
