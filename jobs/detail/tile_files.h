/* The files of a tile, as bytes and images (docs/tiles.md, "Wiring it into the bake").
 *
 * Pure: a coordinator writes them (common/png_io.h, common/fs.h); nothing here opens a file. Every
 * picture is north-up like the planet's PNGs: y grows southward (docs/determinism.md), so row 0 of
 * a picture is the tile's row 0, its northern edge, and the rows are copied as they are. Names are
 * "<id>.png" (16-bit height in the planet's encoding), "<id>.r16" (the same samples, little-endian
 * 16-bit, north row first, for engines),
 * "<id>_flow.png", "<id>_wear.png", "<id>_deposit.png" (8-bit grey) and "<id>_splat.png" (RGBA).
 */
#ifndef TB_DETAIL_TILE_FILES_H
#define TB_DETAIL_TILE_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/png_io.h"
#include "jobs/detail/tile.h"

typedef enum {
    TB_TILE_FILE_HEIGHT = 0, /* <id>.png, 16-bit grey */
    TB_TILE_FILE_FLOW,       /* <id>_flow.png */
    TB_TILE_FILE_WEAR,       /* <id>_wear.png */
    TB_TILE_FILE_DEPOSIT,    /* <id>_deposit.png */
    TB_TILE_FILE_SPLAT,      /* <id>_splat.png, RGBA */
    TB_TILE_FILE_IMAGES      /* number of images */
} tb_tile_file_t;

/* The file name suffix of an image ("", "_flow", ...) with its ".png". */
const char *tb_tile_file_suffix(tb_tile_file_t which);

/* The image `which` of a result, north-up (row 0 first), into *out (allocated; free with
 * tb_image_free). */
int tb_tile_image(const tb_tile_result_t *r, tb_tile_file_t which, tb_image_t *out, tb_err_t *err);

/* The .r16 bytes (w x h little-endian u16, row 0 - the north - first) in a new buffer the caller
 * frees. */
int tb_tile_r16(const tb_tile_result_t *r, void **out, size_t *bytes, tb_err_t *err);

#endif
