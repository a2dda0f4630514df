/* Classification of a painted template, a row at a time: every pixel becomes a legend class.
 *
 * A pixel takes the legend colour nearest to it in RGB (Euclidean) when that colour lies within the
 * legend's tolerance; a pixel with no colour that close is UNMATCHED. Unmatched pixels are dropped
 * and counted, never snapped to the nearest colour (a JPEG halo round a coast must not become a
 * strip of some class because it happens to be nearest): each takes the class most common among its
 * matched 8-neighbours, repeated until none is left. When the unmatched share exceeds the legend's
 * max_unmatched_fraction the painting is refused, naming its most common unmatched colours with
 * pixel counts and an example position each. Then isolated pixels (all 8 neighbours of another
 * class) take their neighbours' most common class. X wraps (the painting is the cylinder), Y does
 * not. Every pass is order-independent: a round reads the state before it and writes after.
 *
 * Streamed (docs/plan.md, "The streamed plan"): tb_classify_row matches the painting's rows in
 * order and records each unmatched pixel with the matches of its eight neighbours, so the fill runs
 * in memory after the last row (tb_classify_finish) and its values are laid into the rows again on
 * a later pass (tb_classify_fill_row); the matcher holds three rows and the unmatched pixels, of
 * which there are at most max_unmatched_fraction of the painting (any more and it is refused, so
 * the matcher stops recording them). The despeckle is a function of three rows.
 *
 * Typical sizes: 3125 x 1000 (demo) to 37500 x 12000 (450 M pixels); matching goes through a
 * lazily filled 2^24-entry lookup table, so its cost is per pixel, not per pixel and class.
 */
#ifndef TB_PLAN_CLASSIFY_H
#define TB_PLAN_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"

#define TB_CLASSIFY_TOP_COLOURS 5

typedef struct {
    uint8_t rgb[3];
    int64_t pixels;
    int64_t example_x, example_y; /* the first such pixel in raster order (row 0 first) */
} tb_classify_colour_t;

typedef struct {
    int64_t pixels;           /* pixels in the painting */
    int64_t unmatched_pixels; /* pixels that matched no legend colour within the tolerance */
    double unmatched_fraction;
    int64_t unmatched_colours; /* distinct unmatched colours (a lower bound past 2^20) */
    int n_top;                 /* entries in top[] */
    tb_classify_colour_t top[TB_CLASSIFY_TOP_COLOURS]; /* most common unmatched, most first */
    int fill_rounds;        /* neighbour-filling rounds the unmatched pixels took */
    int64_t speckle_pixels; /* isolated pixels that took their neighbours' class */
} tb_classify_report_t;

typedef struct tb_classify_t tb_classify_t;

/* A matcher for a w x h painting against the legend (copied). NULL with *err when memory runs
 * out. */
tb_classify_t *tb_classify_new(const tb_legend_t *legend, int64_t w, int64_t h, tb_err_t *err);

/* Matches the next row of the painting (w RGB8 pixels, rows in order from 0) into classes (w
 * bytes: the class index or TB_CLASS_NONE). 0, or -1 with *err when memory runs out. */
int tb_classify_row(tb_classify_t *self, const uint8_t *rgb, uint8_t *classes, tb_err_t *err);

/* After the last row: the counts and the top colours into *report, then the refusal when the
 * unmatched share exceeds the legend's max_unmatched_fraction (TB_E_INVALID, the message names
 * painting_name, the share and the top colours), then the fill of the unmatched pixels (-1 with
 * TB_E_INVALID when no pixel matched at all). *report is filled even when the painting is refused
 * (speckle_pixels stays 0: the despeckle is the caller's, tb_classify_despeckle_row). */
int tb_classify_finish(tb_classify_t *self, const char *painting_name, tb_classify_report_t *report,
                       tb_err_t *err);

/* After finish: writes the fill's value over every TB_CLASS_NONE of row y (w classes, as
 * tb_classify_row made it). Rows may come in any order. */
void tb_classify_fill_row(const tb_classify_t *self, int64_t y, uint8_t *row);

/* Unmatched pixels recorded (what the matcher's memory grows with, 80 bytes each). */
int64_t tb_classify_recorded(const tb_classify_t *self);

/* Frees the matcher and sets *self_p to NULL; accepts NULL. */
void tb_classify_destroy(tb_classify_t **self_p);

/* The despeckle of one row: out (w) gets row with every isolated cell (each of its neighbours in
 * above, row and below holds another class) given its neighbours' most common class (ties to the
 * lower index), all decided on the input; above or below is NULL at a Y edge. X wraps when wrap_x.
 * out may not alias the inputs. Returns the number of cells changed. */
int64_t tb_classify_despeckle_row(const uint8_t *above, const uint8_t *row, const uint8_t *below,
                                  int64_t w, bool wrap_x, uint8_t *out);

/* Formats the unmatched colours of a report as "#rrggbb N px (e.g. x X, y Y), ..." into out. */
void tb_classify_describe_unmatched(const tb_classify_report_t *report, char *out, size_t n);

#endif
