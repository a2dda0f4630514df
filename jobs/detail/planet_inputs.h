/* What a coordinator needs, beside the composited heights and drainage area, to cut tile specs
 * from a baked planet: the class table from the legend and the rock erodibility multiplier of the
 * geology cells of a window (docs/tiles.md, "The tile job").
 *
 * The rock multiplier is the uplift module's own (jobs/uplift/uplift.h): the lithology field at the
 * cell's world centre, ranked through the planet probes' quantiles, mapped to rock.k_range - a pure
 * function of world position, the same number the solve used in its K. About 1 us a cell (one fBm),
 * so 0.55 s for a default tile's window (measured, loaded machine); a planet-wide raster is not
 * needed.
 */
#ifndef TB_DETAIL_PLANET_INPUTS_H
#define TB_DETAIL_PLANET_INPUTS_H

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"
#include "jobs/detail/tile.h"
#include "jobs/uplift/uplift.h"

/* The tile class table of a legend, in legend order: ocean classes flagged, every relief
 * multiplier 1 (the amplitude per class kind is tiles.relief.*). Returns the number of classes. */
int tb_tile_classes_from_legend(const tb_legend_t *legend,
                                tb_tile_class_t out[TB_TILE_MAX_CLASSES]);

/* The rock erodibility multiplier at every cell of `geo` (a frame on the geology lattice) into
 * out (geo->w x geo->h). m must be finished; p its probes. Returns 0, or -1 with *err when the
 * probes are of another planet. */
int tb_tile_rock_k(const tb_manifest_t *m, const tb_uplift_probes_t *p, const tb_frame_t *geo,
                   float *out, tb_err_t *err);

#endif
