/* The bake's tiles as rows of the detail lattice, for the export (internal to
 * coordinator/export/). A small cache of decoded bake tiles - float heights from <id>.f32z, RGBA
 * splat weights from <id>_splat.png - each file read through the mosaic (checked against the
 * index's XXH3) when it is first needed and dropped least recently used, so the memory is the
 * cache's capacity whatever the area: capacity x 25 MB for 2500-sample tiles of either kind.
 * Tiles the index does not list (ocean: not baked) give the fill height and an all-sediment
 * splat (the splat rule's ocean), counted; the caller refuses them first unless asked to fill. */
#ifndef TB_EXPORT_SOURCE_H
#define TB_EXPORT_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/maps/tile_mosaic.h"

typedef struct tb_export_source tb_export_source_t;

/* A source over an open mosaic (borrowed: it must outlive the source) holding at most `capacity`
 * decoded tiles (at least 2). NULL with *err when out of memory. */
tb_export_source_t *tb_export_source_new(const tb_mosaic_t *m, int capacity, float fill_m,
                                         tb_err_t *err);
void tb_export_source_destroy(tb_export_source_t **self_p);

/* n heights (metres) of lattice row y from column x (taken modulo planet_w, going east across the
 * seam) into out. 0, or -1 with *err naming the file that could not be used. */
int tb_export_source_heights(tb_export_source_t *s, int64_t x, int64_t y, int64_t n, float *out,
                             tb_err_t *err);
/* The same for the splat weights: 4 bytes a sample (rock, grass, sediment, scree or snow), which
 * sum to 255. */
int tb_export_source_splat(tb_export_source_t *s, int64_t x, int64_t y, int64_t n, uint8_t *out,
                           tb_err_t *err);
/* Samples served from unbaked tiles so far, and bake files decoded so far. */
int64_t tb_export_source_filled(const tb_export_source_t *s);
int64_t tb_export_source_loads(const tb_export_source_t *s);

#endif
