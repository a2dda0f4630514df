/* Classification of a painted template: every pixel becomes a legend class.
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
 * Typical sizes: 3125 x 1000 (demo) to 12500 x 6076 (76 M pixels); classification goes through a
 * lazily filled 2^24-entry lookup table, so its cost is per pixel, not per pixel and class.
 */
#ifndef TB_PLAN_CLASSIFY_H
#define TB_PLAN_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "common/image.h"

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

/* Matches every pixel of an RGB8 painting to the legend: classes_out[i] (w * h, caller owned) is
 * the class index or TB_CLASS_NONE. Fills the unmatched counts and top colours of *report (the
 * other fields are zeroed). Returns 0, or -1 with *err when the image is not RGB8 or memory runs
 * out. */
int tb_classify_match(const tb_image_t *painting, const tb_legend_t *legend, uint8_t *classes_out,
                      tb_classify_report_t *report, tb_err_t *err);

/* Gives every TB_CLASS_NONE cell the most common class among its matched 8-neighbours (ties go to
 * the lower class index), in rounds until none is left; *rounds gets the count. Returns 0, or -1
 * with *err when no cell is matched at all (nothing to fill from) or memory runs out. */
int tb_classify_fill_unmatched(uint8_t *classes, int64_t w, int64_t h, bool wrap_x, int *rounds,
                               tb_err_t *err);

/* Gives every isolated cell (each of its 8 neighbours holds another class) its neighbours' most
 * common class (ties to the lower index), all decided on the input; returns the number changed, or
 * -1 with *err when memory runs out. */
int64_t tb_classify_despeckle(uint8_t *classes, int64_t w, int64_t h, bool wrap_x, tb_err_t *err);

/* The whole step: match, refuse when the unmatched share exceeds legend->max_unmatched_fraction
 * (TB_E_INVALID, the message names painting_name, the share and the top colours), fill, despeckle.
 * X wraps. classes_out as in tb_classify_match; *report is filled even when the painting is
 * refused.
 */
int tb_classify_painting(const tb_image_t *painting, const char *painting_name,
                         const tb_legend_t *legend, uint8_t *classes_out,
                         tb_classify_report_t *report, tb_err_t *err);

/* Formats the unmatched colours of a report as "#rrggbb N px (e.g. x X, y Y), ..." into out. */
void tb_classify_describe_unmatched(const tb_classify_report_t *report, char *out, size_t n);

#endif
