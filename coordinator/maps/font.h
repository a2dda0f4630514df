/* A small built-in bitmap font for labels on maps (region ids on map_regions.png).
 *
 * 5 x 7 glyphs for digits, capital and lower-case letters (each drawn as written, so a tile id
 * such as c001r000 reads on map_tiles.png as `terrain plan` prints it) and - . : / % # and space; a
 * glyph is seven rows of five bits, bit 4 the leftmost column, row 0 the top. Text is drawn scaled
 * by a whole factor with a one-unit outline so it reads on any background; with X wrap the text
 * continues across the right edge of the image onto the left, as the planet does.
 */
#ifndef TB_COORD_FONT_H
#define TB_COORD_FONT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/png_io.h"

#define TB_FONT_W 5
#define TB_FONT_H 7

/* The seven rows of character c, or NULL when the font has no glyph for it. */
const uint8_t *tb_font_glyph(char c);

/* Pixels a text takes at a scale: each glyph is 5 wide plus 1 of spacing, times scale (the last
 * glyph's spacing excluded). */
int64_t tb_font_text_width(const char *text, int scale);

/* Draws text into an RGB8 image centred on pixel (cx, cy), each font pixel a scale x scale square
 * in `fill`, with a scale-wide border in `outline` round every lit font pixel. Characters without a
 * glyph draw as blanks. Pixels outside the image are skipped in Y, and in X unless wrap_x. */
void tb_font_draw_centred(tb_image_t *img, const char *text, int64_t cx, int64_t cy, int scale,
                          const uint8_t fill[3], const uint8_t outline[3], bool wrap_x);

#endif
