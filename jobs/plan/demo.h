/* The built-in demo planet: what every command plans and bakes when no manifest is given.
 *
 * A pure function of (seed, circumference): a finished manifest with its legend (three land
 * classes: a lowland with massifs, a highland and a steep range; a shallow shelf and a deep ocean)
 * and a painting at one pixel per geology cell, W = circumference / cell_m wide and about 0.32 W
 * tall (3125 x 1000 at 25 km). Its layout is fixed so that it exercises every path of the plan on
 * every seed: a tall main continent with a highland core and a range, a medium island straddling
 * the X seam, two islands closer than the ocean margin (one region), a small island, and speckle
 * islets under the minimum landmass size (dropped). Land is about 30 % of the planet and stays at
 * least eight cells from the Y edges. The shapes are periodic noise in world metres
 * (common/noise.h), so coastlines are smooth, wrap exactly and change with the seed; the structural
 * guarantees hold for circumferences from 10 km up (tests/test_demo.c checks them on several
 * seeds).
 *
 * At 25 km the regions hold about 1.5 M cells, sized for a 2-core machine.
 */
#ifndef TB_PLAN_DEMO_H
#define TB_PLAN_DEMO_H

#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "common/image.h"

#define TB_DEMO_SEED 7
#define TB_DEMO_CIRCUMFERENCE_KM 25.0

/* Fills *m with the demo manifest for (seed, circumference_km), finished (tb_manifest_finish), with
 * its legend, is_demo true, source "(demo planet, seed N)" and no template paths, and *painting
 * with an RGB8 image at one pixel per cell. The caller frees the painting with tb_image_free.
 * Returns 0, or -1 with *err set when the circumference is not a whole number of cells and of tiles
 * (the manifest's own message) or memory runs out. */
int tb_demo_planet(uint64_t seed, double circumference_km, tb_manifest_t *m, tb_image_t *painting,
                   tb_err_t *err);

/* The demo manifest alone (finished), as tb_demo_planet makes it. */
int tb_demo_manifest(uint64_t seed, double circumference_km, tb_manifest_t *m, tb_err_t *err);

/* Paints the demo layout at any size w x h (one pixel per cell of m->cell_m; w * cell_m should be
 * the circumference for the noise to wrap) with the legend colours of the demo manifest *m. Used by
 * tb_demo_planet and by benchmarks that need a planet of another shape (12500 x 6076). */
int tb_demo_paint(uint64_t seed, const tb_manifest_t *m, int64_t w, int64_t h, tb_image_t *painting,
                  tb_err_t *err);

#endif
