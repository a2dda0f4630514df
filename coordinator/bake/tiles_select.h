/* The detail tiles a bake makes, chosen before anything runs (docs/tiles.md, "Re-running chosen
 * tiles"): the pass parameters and lattice of a manifest, the check that a tile with its margin
 * fits the planet, and the parsing of a list of tile ids (`--tiles-only`, `terrain tiles --only`).
 * Internal to coordinator/bake/ and the verbs that drive it. */
#ifndef TB_BAKE_TILES_SELECT_H
#define TB_BAKE_TILES_SELECT_H

#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/params.h"
#include "jobs/detail/tile.h"
#include "jobs/uplift/uplift.h"

/* The pass parameters of the tiles phase (every key of the manifest's `tiles` section,
 * tb_manifest_detail_params) and the lattice over a planet of pw x ph geology cells. Refuses
 * (TB_E_INVALID, naming the numbers and the limit) a planet whose circumference cannot hold one
 * tile with its margin on both sides: the window of a tile would overlap itself round the cylinder.
 * 0 or -1. */
int tb_bake_tile_params(const tb_manifest_t *m, int64_t pw, int64_t ph, tb_detail_params_t *p,
                        tb_tile_lattice_t *L, tb_err_t *err);

/* The largest tile window's job (its stated bound, tb_tile_peak_bytes) against the memory a job may
 * take: TB_E_INVALID naming both and the ways out when it does not fit. 0 or -1. */
int tb_bake_check_tile_memory(const tb_tile_lattice_t *L, const tb_detail_params_t *p,
                              double job_memory_bytes, tb_err_t *err);

/* The tile class table the specs carry: the legend's, plus one ocean class for cells that matched
 * none. Returns the number of classes. */
int tb_bake_tile_classes(const tb_manifest_t *m, tb_tile_class_t cls[TB_TILE_MAX_CLASSES]);

/* The land mask of a class raster (cells values), as the tiles phase reads it: nonzero where the
 * class (or the unmatched class) is land. */
void tb_bake_tile_land(const tb_manifest_t *m, const uint8_t *classes, size_t cells, uint8_t *land);

/* Parses `text`, a comma-separated list of tile ids as printed ("c001r000") and ranges
 * "c000r000-c002r001" (the rectangle of columns 0..2 and rows 0..1, ocean tiles in it left out),
 * or "all" (every land and coast tile),
 * into sel[tb_tile_count(L)] (1 = chosen). An id that is not one, lies outside the lattice, or
 * names an ocean tile (none is baked) is refused with TB_E_INVALID naming `option`, the id and the
 * valid range. Returns the number chosen (>= 1), or -1. */
int tb_bake_tile_parse_list(const char *text, const char *option, const tb_tile_lattice_t *L,
                            const uint8_t *land, uint8_t *sel, tb_err_t *err);

/* Whether every geology cell tile `id`'s spec reads (its window of `margin` cells and the
 * resampler's stencil, tb_tile_geo_window) is ocean or was solved in this bake: then the tile of a
 * partial bake without the coastal pass is the same bytes as the whole bake's (docs/tiles.md,
 * "Tiles of a partial bake"). land and solved are planet-sized. 1, 0, or -1 with *err. */
int tb_bake_tile_covered(const tb_tile_lattice_t *L, tb_tile_id_t id, int margin,
                         const uint8_t *land, const uint8_t *solved, tb_err_t *err);

#endif
