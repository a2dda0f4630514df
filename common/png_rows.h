/* Images a row at a time, so that no process holds a planet-sized picture (docs/plan.md, "The
 * streamed plan").
 *
 * A row source hands out the rows of an image in order, from row 0, each row once: the plan reads
 * its painting through one (jobs/plan/plan.h). Three kinds exist: an image already in memory
 * (tb_image_rows, for small planets and tests), a PNG file decoded progressively with libpng's row
 * API (tb_png_rows_open: a few rows of memory whatever the image's size), and the demo painting
 * generated band by band (jobs/plan/demo.h). The other direction, a PNG written band by band to a
 * temporary name and renamed when complete, is tb_png_writer_t (common/png_io.h).
 *
 * Interlaced (Adam7) PNGs are refused: their rows only exist once the whole image is decoded. The
 * message names the file and says to save it without interlacing.
 */
#ifndef TB_PNG_ROWS_H
#define TB_PNG_ROWS_H

#include <stdint.h>

#include "common/error.h"
#include "common/image.h"
#include "common/png_io.h" /* tb_png_writer_t: a PNG written band by band */

typedef struct tb_row_source_t tb_row_source_t;
struct tb_row_source_t {
    int64_t w, h;           /* pixels a row, rows */
    tb_png_format_t format; /* of the rows handed out */
    const char *name;       /* names the source in messages: a path, "the demo painting" */
    /* Copies the next n rows (the first call starts at row 0) into out, n * w pixels of
     * tb_png_format_bytes(format) bytes. Returns 0, or -1 with *err naming the source. Asking for
     * rows past h is an error. */
    int (*read)(void *user, int64_t n, void *out, tb_err_t *err);
    void *user;
};

/* Reads the next n rows of src into out (the source's own read, with the count checked). */
int tb_row_source_read(const tb_row_source_t *src, int64_t n, void *out, tb_err_t *err);

/* A row source over an image in memory; *self holds the position and must outlive the source it
 * returns (a pointer into *self). name may be NULL ("the image"). */
typedef struct {
    tb_row_source_t src;
    const tb_image_t *img;
    int64_t next; /* the row the next read starts at */
} tb_image_rows_t;
const tb_row_source_t *tb_image_rows(tb_image_rows_t *self, const tb_image_t *img,
                                     const char *name);

/* Reads every row of src into a new image (RGB8 etc. as the source's format; free with
 * tb_image_free). For small images only: the whole picture is in memory. 0 or -1 with *err. */
int tb_row_source_to_image(const tb_row_source_t *src, tb_image_t *out, tb_err_t *err);

/* Writes every row of src to the PNG file `path` at zlib level `compression`, 64 rows at a time
 * through tb_png_writer_t (to a temporary name, renamed when complete): the bytes tb_png_write
 * makes of the whole image, in the memory of a band. 0 or -1 with *err. */
int tb_row_source_write_png(const tb_row_source_t *src, const char *path, int compression,
                            tb_err_t *err);

/* ---- a PNG file, decoded row by row ---- */

typedef struct tb_png_rows_t tb_png_rows_t;

/* The size a PNG's header (IHDR) declares, from its first 33 bytes alone: what a caller checks
 * before anything else of the file is read (a regular file only, as tb_png_rows_open). 0, or -1
 * with *err (TB_E_IO, TB_E_INVALID for a FIFO or a directory, TB_E_FORMAT for no PNG header). */
int tb_png_rows_peek(const char *path, uint32_t *w, uint32_t *h, tb_err_t *err);

/* Opens `path` and reads its header and every chunk before the pixels (no pixel is decoded), with
 * the transforms of tb_png_read to `want`. Refuses (TB_E_INVALID) an image of more than max_pixels
 * and (TB_E_FORMAT) an interlaced one, a broken header or a colour type that cannot become `want`;
 * TB_E_IO when the file cannot be opened. Returns a reader the caller destroys, or NULL with *err.
 */
tb_png_rows_t *tb_png_rows_open(const char *path, tb_png_format_t want, uint64_t max_pixels,
                                tb_err_t *err);

/* The reader's rows as a row source (owned by the reader; w and h are the image's). A broken or
 * truncated file fails the read that meets it, naming the file. */
const tb_row_source_t *tb_png_rows_source(tb_png_rows_t *self);

/* Closes the file and frees the reader; accepts NULL and sets *self_p to NULL. */
void tb_png_rows_destroy(tb_png_rows_t **self_p);

#endif
