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
#include "common/png_rows.h"

#define TB_DEMO_SEED 7
#define TB_DEMO_CIRCUMFERENCE_KM 25.0

/* Fills *m with the demo manifest for (seed, circumference_km), finished (tb_manifest_finish), with
 * its legend, is_demo true, source "(demo planet, seed N)" and no template paths, and *painting
 * with an RGB8 image at one pixel per cell: the whole painting in memory, for small planets (tests,
 * benchmarks); a command streams it instead (tb_demo_painter_new). The caller frees the painting
 * with tb_image_free. Returns 0, or -1 with *err set when the circumference is not a whole number
 * of cells and of tiles (the manifest's own message) or memory runs out. */
int tb_demo_planet(uint64_t seed, double circumference_km, tb_manifest_t *m, tb_image_t *painting,
                   tb_err_t *err);

/* The demo manifest alone (finished), as tb_demo_planet makes it. */
int tb_demo_manifest(uint64_t seed, double circumference_km, tb_manifest_t *m, tb_err_t *err);

/* The height of the demo painting of a planet planet_w cells round: 0.32 of it, rounded. */
int64_t tb_demo_painting_h(int64_t planet_w);

/* The demo painting, made band by band as its rows are read.
 *
 * Every pixel is a pure function of (seed, planet size, position): the blobs' fields and the noise
 * are evaluated at world positions, and the shelf is the ocean within about 54 cells of land, so a
 * band needs only that many rows of land either side of it (its halo). The painter holds a band of
 * band_rows rows and its halos (about 6 bytes a cell of them) and the sample rows of each coastal
 * noise that they read, never the planet: the painting of the 300 km planet (37500 x 12000) is made
 * in about 100 MB. The pixels are the same whatever band_rows is (tests/test_demo.c). */
typedef struct tb_demo_painter_t tb_demo_painter_t;

/* A painter of the demo layout at any size w x h (one pixel per cell of m->cell_m; w * cell_m
 * should be the circumference for the noise to wrap) in the legend colours of the demo manifest
 * *m; band_rows <= 0 takes TB_DEMO_BAND_ROWS; threads >= 1 paint a band's rows (the pixels do not
 * depend on them). NULL with *err for a size too small to paint, a legend that is not the demo's,
 * or no memory or threads. */
#define TB_DEMO_BAND_ROWS 256
tb_demo_painter_t *tb_demo_painter_new(uint64_t seed, const tb_manifest_t *m, int64_t w, int64_t h,
                                       int64_t band_rows, int threads, tb_err_t *err);

/* The painting's rows (RGB8, w x h; owned by the painter; each row once, in order). */
const tb_row_source_t *tb_demo_painter_rows(tb_demo_painter_t *self);

/* Frees the painter and sets *self_p to NULL; accepts NULL. */
void tb_demo_painter_destroy(tb_demo_painter_t **self_p);

#endif
