/* What every command starts from: the finished manifest and the painting of the planet, as rows.
 *
 * With a manifest path, the manifest and its legend are read and checked (common/manifest.h) and
 * the painting's header is read and checked against the planet before a pixel is decoded: its
 * width must divide the planet's cells (each painted pixel then covers a square of whole cells)
 * and the planet it makes must fit TB_INPUT_MAX_PIXELS. With none, the built-in demo planet
 * (jobs/plan/demo.h) is made from the seed and circumference. Either way the painting is offered
 * as a row source (common/png_rows.h) that the plan reads once, row by row: a PNG decoded
 * progressively, or the demo painted band by band. Nothing here holds the whole painting.
 *
 * The planet is planet_w x planet_h cells, planet_h = painting_h * (planet_w / painting_w).
 *
 * tb_raster_map_temp gives a command the memory the plan writes its rasters into
 * (jobs/plan/plan.h): a file in a directory, mapped, whose released rows leave the process's
 * memory and come back from the file when read again.
 */
#ifndef TB_PLANET_INPUT_H
#define TB_PLANET_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "common/png_rows.h"
#include "common/raster.h"
#include "jobs/plan/demo.h"
#include "jobs/plan/overlay.h"

/* Largest planet planned, in cells, and painting read, in pixels (2^31). */
#define TB_INPUT_MAX_PIXELS ((uint64_t)1 << 31)

typedef struct {
    bool has_seed; /* --seed given: overrides the manifest's seed, or seeds the demo */
    uint64_t seed;
    bool has_circumference; /* --circumference-km given: the demo planet only */
    double circumference_km;
    /* --set KEY=VALUE (common/manifest.h), applied to the manifest file's keys or the demo
     * planet's before the sections' checks run; NULL or empty: none. Not owned. */
    const tb_overrides_t *overrides;
} tb_input_options_t;

typedef struct {
    tb_manifest_t manifest; /* finished */
    int64_t planet_w, planet_h;
    int64_t painting_w, painting_h;
    tb_png_rows_t *png;      /* the painting file's reader, or */
    tb_demo_painter_t *demo; /* the demo painting's painter */
    /* the overlay (template.overlay), when the manifest has one: its reader, its legend, the
     * features its rows are folded into and the painting's rows with the coast jitter, which
     * tb_planet_input_rows hands out instead of the painting's own (jobs/plan/overlay.h) */
    tb_png_rows_t *overlay_png;
    tb_overlay_legend_t *overlay_legend;
    tb_overlay_features_t *overlay;
    tb_coast_jitter_t *jitter;
} tb_planet_input_t;

/* Loads the planet of manifest_path (NULL: the demo planet of opt's seed, default 7, and
 * circumference, default 25 km), with opt's overrides applied. opt may be NULL. --seed with an
 * override of `seed` is refused (give one); on the demo planet `--set seed=N` is --seed N (the
 * painting follows the seed). Fills *out, which the caller frees with
 * tb_planet_input_free. Returns 0, or -1 with *err naming the file, key or value (TB_E_IO for a
 * missing file, TB_E_FORMAT for a broken PNG header or JSON, TB_E_INVALID for a value or a
 * combination that is refused: --circumference-km with a manifest, a painting width that does not
 * divide the planet, a planet over TB_INPUT_MAX_PIXELS cells). A PNG broken past its header fails
 * the read that meets it, in the plan.
 */
int tb_planet_input_load(const char *manifest_path, const tb_input_options_t *opt,
                         tb_planet_input_t *out, tb_err_t *err);

/* The painting's rows (RGB8, painting_w x painting_h), owned by *in: each row once, in order. With
 * an overlay, the rows carry its coast jitter and reading them reads the overlay too. */
const tb_row_source_t *tb_planet_input_rows(tb_planet_input_t *in);

/* After the plan has read every row: the overlay's features, finished (every overlay row read,
 * pieces resolved, paths built), handed to the caller, who destroys them; *moved gets the painting
 * pixels the coast jitter changed. *out is NULL when the planet has no overlay. 0, or -1 with *err
 * naming the overlay. map_factor (>= 1) is the reduction of map_overlay.png, kept as rows pass:
 * call tb_planet_input_overlay_map first, before the plan reads a row. */
int tb_planet_input_take_overlay(tb_planet_input_t *in, tb_overlay_features_t **out, int64_t *moved,
                                 tb_err_t *err);
int tb_planet_input_overlay_map(tb_planet_input_t *in, int64_t map_factor, tb_err_t *err);

/* Closes the painting and clears *in; accepts a zeroed or freed struct. */
void tb_planet_input_free(tb_planet_input_t *in);

/* A w x h raster of elem_bytes cells in a new file of directory dir (named PREFIX.tmp.PID.N),
 * mapped shared and unlinked at once, so nothing is left behind however the process ends; its
 * release hook drops the released rows' pages from the process (the kernel keeps their bytes in
 * the file's pages and brings them back when read). Its cells start at zero. 0, or -1 with *err
 * (TB_E_IO naming the file). Unmap with tb_raster_unmap. */
int tb_raster_map_temp(tb_raster_t *r, const char *dir, const char *prefix, int64_t w, int64_t h,
                       size_t elem_bytes, tb_err_t *err);

/* Unmaps a raster of tb_raster_map_temp and clears it; accepts a zeroed one. */
void tb_raster_unmap(tb_raster_t *r);

#endif
