/* libpng plumbing shared by the two files that call libpng (common/png_io.c, whole images and the
 * band writer; common/png_rows.c, the row reader), defined in png_io.c. Not an interface for
 * anything else: every other file reads and writes PNGs through png_io.h and png_rows.h.
 *
 * libpng reports errors by longjmp: a read or write struct made with tb_png_on_error as its error
 * function and a tb_png_errctx_t as its error pointer leaves libpng's message in msg and jumps to
 * the caller's setjmp frame; warnings are dropped.
 */
#ifndef TB_PNG_LIBPNG_H
#define TB_PNG_LIBPNG_H

#include <png.h>

#include "common/png_io.h"

typedef struct {
    const char *name;
    char msg[512];
} tb_png_errctx_t;

void tb_png_on_error(png_structp png, png_const_charp msg);
void tb_png_on_warning(png_structp png, png_const_charp msg);

/* "8-bit grey", "16-bit grey", "8-bit RGB", "8-bit RGBA": for messages. */
const char *tb_png_format_name(tb_png_format_t f);

/* Sets the transforms that turn the file's colour type and depth into `want` (palette and grey to
 * RGB, 8-bit grey to 16 by v * 257, 16-bit colour to 8 by its high byte, 16-bit grey in host
 * order); returns a complaint when that would invent data, or NULL. */
const char *tb_png_set_transforms(png_structp png, png_infop info, tb_png_format_t want);

#endif
