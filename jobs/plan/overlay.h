/* The overlay: a second painting of the planet, of marks rather than classes (docs/plan.md, "The
 * overlay").
 *
 * An overlay is an RGBA PNG of exactly the painting's size with a legend of marks
 * (template.overlay and template.overlay_legend). A pixel whose alpha is 0 is blank: most of the
 * sheet is nothing. Any other pixel takes the mark whose colour is nearest in RGB when that colour
 * lies within the overlay legend's tolerance; a pixel with no mark that close is UNMATCHED: dropped
 * and counted, never snapped to the nearest mark (a JPEG halo round a road would become road). One
 * painting, one colour a pixel: marks never overlap, so a row of the overlay is a row of mark
 * indices (TB_OVERLAY_BLANK, 1..n_marks, TB_OVERLAY_UNMATCHED).
 *
 * Marks are of three kinds:
 *   - "blob": every 8-connected piece (X wraps) is a feature with its centre, area, equivalent
 *     radius and extent in world metres;
 *   - "path": every piece is a feature with its ordered polyline in world metres (the longest
 *     geodesic path through the piece's pixels, simplified to within half a pixel), its length and
 *     how many pixels lie off that polyline (a branch);
 *   - "coast_jitter": a blob to overlay.json and the one mark a pass reads: the plan's coast mask
 *     wanders by up to its coast_jitter_px pixels where it is painted (tb_coast_jitter_t below).
 * Nothing but the coast jitter reads the overlay back: overlay.json is what an engine places
 * things from.
 *
 * Everything here streams a row at a time: the features hold one connected-components stream per
 * mark (jobs/plan/ccl.h, O(width) each), a record per piece, and the pixels of path marks only
 * (paths are thin; at most TB_OVERLAY_MAX_PATH_PIXELS). The jitter holds 2 R + 1 rows of the
 * painting and of the overlay, R the largest coast_jitter_px.
 */
#ifndef TB_PLAN_OVERLAY_H
#define TB_PLAN_OVERLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "common/png_rows.h"

#define TB_OVERLAY_MAX_MARKS 253
#define TB_OVERLAY_BLANK 0
#define TB_OVERLAY_UNMATCHED 255
#define TB_OVERLAY_MAX_JITTER_PX 32
#define TB_OVERLAY_MAX_PATH_PIXELS ((int64_t)1 << 24)
#define TB_OVERLAY_TOLERANCE_DEFAULT 24.0

typedef enum { TB_MARK_BLOB = 0, TB_MARK_PATH = 1, TB_MARK_COAST_JITTER = 2 } tb_mark_kind_t;

typedef struct {
    char name[TB_NAME_MAX];
    uint8_t rgb[3];
    tb_mark_kind_t kind;
    double coast_jitter_px; /* coast_jitter marks: how far the coast may wander, pixels, 0..32 */
} tb_mark_t;

typedef struct {
    int n_marks;
    tb_mark_t marks[TB_OVERLAY_MAX_MARKS];
    double tolerance; /* largest RGB distance at which a pixel still takes a mark */
} tb_overlay_legend_t;

/* Parses overlay legend JSON: {"tolerance": T (optional, 0..441.7, default 24), "marks": [{"name",
 * "colour" ("#rrggbb" or [r, g, b]), "kind" ("blob", "path" or "coast_jitter"), "coast_jitter_px"
 * (coast_jitter marks only, 0..32)}, ...]} with 1..253 marks, distinct names and colours. Errors
 * name the file (name) and the key. 0, or -1 with *err. */
int tb_overlay_legend_parse(const char *json, const char *name, tb_overlay_legend_t *out,
                            tb_err_t *err);

/* Reads and parses an overlay legend file (at most 16 MB). 0 or -1 with *err naming the file. */
int tb_overlay_legend_load(const char *path, tb_overlay_legend_t *out, tb_err_t *err);

/* The largest coast_jitter_px of the legend's coast_jitter marks, rounded up (0: none). */
int tb_overlay_jitter_reach(const tb_overlay_legend_t *legend);

/* Matches a row of w RGBA8 pixels to mark indices (out: w bytes). Returns the row's unmatched
 * pixels. */
int64_t tb_overlay_match_row(const tb_overlay_legend_t *legend, const uint8_t *rgba, int64_t w,
                             uint8_t *out);

/* ---- features ---- */

typedef struct tb_overlay_features_t tb_overlay_features_t;

/* Features of a w x h overlay whose pixels are pixel_m metres on a side (the planet's cell_m times
 * its cells a pixel), X wrapping. NULL with *err when memory runs out. */
tb_overlay_features_t *tb_overlay_features_new(const tb_overlay_legend_t *legend, int64_t w,
                                               int64_t h, double pixel_m, tb_err_t *err);

/* Adds the next row of mark indices (rows in order from 0). 0, or -1 with *err (memory; path
 * pixels over TB_OVERLAY_MAX_PATH_PIXELS). */
int tb_overlay_features_row(tb_overlay_features_t *self, const uint8_t *marks, tb_err_t *err);

/* After the last row: resolves the pieces and builds the paths' polylines. 0 or -1. */
int tb_overlay_features_finish(tb_overlay_features_t *self, tb_err_t *err);

typedef struct {
    int64_t marked_pixels;            /* pixels of any mark */
    int64_t unmatched_pixels;         /* pixels of no mark within the tolerance: dropped */
    int64_t unmatched_x, unmatched_y; /* the first unmatched pixel in raster order, or -1 */
    int64_t pieces;                   /* features of every mark */
} tb_overlay_counts_t;

/* Counts so far (unmatched pixels are added by the caller through tb_overlay_features_unmatched).
 */
tb_overlay_counts_t tb_overlay_features_counts(const tb_overlay_features_t *self);

/* Adds n unmatched pixels of row y, the first at column x (what tb_overlay_match_row counted). */
void tb_overlay_features_unmatched(tb_overlay_features_t *self, int64_t y, int64_t x, int64_t n);

/* overlay.json (docs/plan.md, "The overlay") as a new string the caller frees, or NULL when memory
 * runs out. source names the overlay file. Call after tb_overlay_features_finish. */
char *tb_overlay_features_json(const tb_overlay_features_t *self, const char *source);

/* One line for the plan's report: "overlay: N marks, P pieces (...), U unmatched pixels dropped".
 */
void tb_overlay_features_line(const tb_overlay_features_t *self, char *buf, size_t n);

/* A reduced copy of the marks kept as the rows go by, for map_overlay.png: the planet map of a
 * W x H cell planet sampled down by f (ceil(W / f) x ceil(H / f) pixels, each the cell at
 * min(x f + f / 2, W - 1), likewise in y, as coordinator/maps/plan_maps.h samples), through k
 * cells a pixel. Call before the first row. 0 or -1. */
int tb_overlay_features_keep_map(tb_overlay_features_t *self, int64_t f, int64_t k, int64_t W,
                                 int64_t H, tb_err_t *err);
const uint8_t *tb_overlay_features_map(const tb_overlay_features_t *self, int64_t *mw, int64_t *mh);

const tb_overlay_legend_t *tb_overlay_features_legend(const tb_overlay_features_t *self);

void tb_overlay_features_destroy(tb_overlay_features_t **self_p);

/* ---- the coast jitter: the painting's rows with the coast wandering where a mark says ---- */

/* A row source of the painting (RGB8) whose land-sea line is displaced by a noise field where
 * coast_jitter marks are painted, reading the painting and the overlay (RGBA8, the same size) a row
 * at a time, with the overlay's rows handed to `features` (may be NULL) as they are read; each
 * overlay row is read once, all of them by the time the last painting row is handed out.
 *
 * Pixel p takes the painting's pixel at p + round(a d(p)) when that pixel is of the other kind
 * (land against ocean, by the class legend), and keeps its own otherwise: only the waterline moves.
 * d is a vector of two periodic fBm noises in [-1, 1] at p's world centre (wavelength 4 R pixels,
 * snapped to the circumference), seeded from the manifest's seed: a pure function of world
 * position. a is p's mark's coast_jitter_px when p is marked coast_jitter; an unmarked (or
 * otherwise marked) pixel takes its instruction from the far side of the waterline - the mark at p
 * + round(R d(p)) when that pixel is of the other kind and marked coast_jitter - and 0 otherwise:
 * a stroke along the land instructs the water beside it, and a stroke never overrules itself.
 * Pixels of no class colour (unmatched) neither move nor are moved to. X wraps, Y is clamped. */
typedef struct tb_coast_jitter_t tb_coast_jitter_t;

tb_coast_jitter_t *tb_coast_jitter_new(const tb_manifest_t *m, int64_t cells_per_pixel,
                                       const tb_overlay_legend_t *legend,
                                       const tb_row_source_t *painting,
                                       const tb_row_source_t *overlay,
                                       tb_overlay_features_t *features, tb_err_t *err);

const tb_row_source_t *tb_coast_jitter_rows(tb_coast_jitter_t *self);

/* Reads whatever overlay rows are left (none once every painting row was read). 0 or -1. */
int tb_coast_jitter_drain(tb_coast_jitter_t *self, tb_err_t *err);

/* Painting pixels the jitter changed so far. */
int64_t tb_coast_jitter_moved(const tb_coast_jitter_t *self);

void tb_coast_jitter_destroy(tb_coast_jitter_t **self_p);

#endif
