/* The files of a tile, as bytes and images (docs/tiles.md, "Wiring it into the bake").
 *
 * Pure: a coordinator writes them (common/png_io.h, common/fs.h); nothing here opens a file. Every
 * picture is north-up like the planet's PNGs: y grows southward (docs/determinism.md), so row 0 of
 * a picture is the tile's row 0, its northern edge, and the rows are copied as they are. Names are
 * "<id>.png" (16-bit height in the planet's encoding), "<id>.r16" (the same samples, little-endian
 * 16-bit, north row first, for engines),
 * "<id>_flow.png", "<id>_wear.png", "<id>_deposit.png" (8-bit grey) and "<id>_splat.png" (RGBA),
 * and "<id>.f32z": the float heights in metres, losslessly compressed (below), which is what
 * `terrain export` reads, because the 16-bit encoding over the manifest's elevation range (3.1 cm a
 * step on the demo) is already terraced on the plains and nothing downstream can undo that.
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

/* The float heights file, "<id>.f32z" (docs/export.md, "The float heights of a tile"): a 16-byte
 * header - "TBHF", format version 1, width and height as little-endian u32 - then a blob
 * (common/blob.h: zstd with the XXH3 of what it decompresses to) of the residuals of a 2-D
 * Lorenzo predictor (left + up - up-left, on the float bits mapped to order-preserving u32,
 * modular, zigzagged), stored as four byte planes. Lossless: decoding gives back every float bit
 * for bit (NaN payloads included). 34 to 51 % of the raw 25 MB on the demo's tiles (zstd level 3),
 * against 88 to 91 % for zstd over the raw floats. */
#define TB_TILE_F32Z_SUFFIX ".f32z"
#define TB_TILE_F32Z_HEADER_BYTES 16

/* Encodes w x h floats (row-major, row 0 first) into a new buffer the caller frees. 0 or -1. */
int tb_tile_f32z_encode(const float *height_m, int64_t w, int64_t h, void **out, size_t *bytes,
                        tb_err_t *err);
/* The float heights of a result, as tb_tile_f32z_encode. */
int tb_tile_f32z(const tb_tile_result_t *r, void **out, size_t *bytes, tb_err_t *err);
/* The width and height a .f32z file's header declares (checked: magic, version, sizes of 1 to
 * 2^20 a side), without decompressing anything. `name` is used in messages. 0, or -1 with
 * TB_E_FORMAT. */
int tb_tile_f32z_peek(const void *data, size_t bytes, const char *name, int64_t *w, int64_t *h,
                      tb_err_t *err);
/* Decodes .f32z bytes (untrusted: from a disk) into out[w * h], which the caller allocated for
 * exactly the w x h it expects; a file of another size is TB_E_FORMAT, a damaged frame
 * TB_E_FORMAT or TB_E_CHECKSUM, never a crash. 0 or -1. */
int tb_tile_f32z_decode(const void *data, size_t bytes, const char *name, int64_t w, int64_t h,
                        float *out, tb_err_t *err);

#endif
