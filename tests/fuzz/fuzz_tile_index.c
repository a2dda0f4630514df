/* libFuzzer target for a bake's tiles/index.json as `terrain stitch` and the detail phase read it
 * (coordinator/maps/tile_mosaic.h, tb_mosaic_parse). Whatever the bytes, parsing either fails with
 * an error or gives a mosaic whose lattice holds together: every listed tile lies inside it, and
 * the area of the whole planet converts to a rectangle inside the lattice. No tile file is read
 * (the directory does not exist).
 *
 *   build-fuzz/fuzz_tile_index -max_total_time=60 tests/fuzz/corpus-tile_index
 * tests/fuzz/seeds/tile_index
 *
 * The seeds: the index of the 10 km demo planet's bake (two tiles), and a 3 x 2 lattice with a
 * partial last row. */
#include <stdint.h>
#include <stdlib.h>

#include "coordinator/maps/tile_mosaic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    tb_mosaic_t *m;
    if (tb_mosaic_parse("/nonexistent-fuzz-dir", (const char *)data, size, &m, &err) != 0)
        return 0;
    tb_mosaic_info_t I;
    tb_mosaic_info(m, &I);
    if (I.cols < 1 || I.rows < 1 || I.planet_w != I.cols * I.tile_samples || !(I.cell_m > 0))
        abort();
    tb_mosaic_rect_t r;
    if (tb_mosaic_area_samples(&I, 0, 0, (double)I.planet_w * I.cell_m,
                               (double)I.planet_h * I.cell_m, INT64_MAX, &r, &err) == 0 &&
        (r.x0 != 0 || r.y0 != 0 || r.w != I.planet_w || r.h != I.planet_h))
        abort();
    int64_t listed = 0;
    for (int64_t row = 0; row < I.rows && row < 64; row++)
        for (int64_t col = 0; col < I.cols && col < 64; col++)
            listed += tb_mosaic_has_tile(m, col, row);
    if (listed > I.n_tiles)
        abort();
    /* a rectangle of one sample in a listed tile reads a file that is not there: an error */
    uint16_t v;
    if (I.n_tiles > 0 && tb_mosaic_has_tile(m, 0, 0) &&
        tb_mosaic_stitch(m, TB_MOSAIC_HEIGHT, (tb_mosaic_rect_t){0, 0, 1, 1}, 0, &v, NULL, &err) ==
            0)
        abort();
    tb_mosaic_close(&m);
    return 0;
}
