/* The manifest section "planet": The planet: its seed, size and cell, its painted template and the
 * heightmap's elevation range. See common/manifest/section.h. */
#include "common/manifest/section.h"

static const tb_mkey_t s_keys[] = {
    {"seed", TB_MKEY_SEED, TB_MKEY_OFF(seed), 0, 0, TB_MKEY_SEED_MAX, 7, 0,
     "Seed of every hash: massifs, rock, faults, router jitter."},
    {"circumference_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(circumference_km), 0, 0.1, 1e5, 25, 0,
     "Length of the equator; X wraps after it. Must be a whole number of cells and of tiles."},
    {"cell_m", TB_MKEY_DOUBLE, TB_MKEY_OFF(cell_m), 0, 0.5, 1000, 8, 0,
     "Geology cell edge. The solve always runs at this size; never coarsen it to save time."},
    {"template.painting", TB_MKEY_PATH, TB_MKEY_OFF(painting_path), 0, 0, 0, 0, 0,
     "Painted class image (PNG), relative to the manifest. Its width must divide the planet's "
     "cells."},
    {"template.legend", TB_MKEY_PATH, TB_MKEY_OFF(legend_path), 0, 0, 0, 0, 0,
     "Legend JSON saying what each colour means, relative to the manifest."},
    /* def 1 on a path key: optional */
    {"template.overlay", TB_MKEY_PATH, TB_MKEY_OFF(overlay_path), 0, 0, 0, 1, 0,
     "Optional overlay (RGBA PNG of the painting's size; alpha 0 is blank) of marks: written "
     "to overlay.json in world metres; coast_jitter marks make the coast wander. See "
     "docs/plan.md."},
    {"template.overlay_legend", TB_MKEY_PATH, TB_MKEY_OFF(overlay_legend_path), 0, 0, 0, 1, 0,
     "Legend JSON of the overlay's marks (blob, path, coast_jitter); required with "
     "template.overlay."},
    {"elevation_m", TB_MKEY_RANGE, TB_MKEY_OFF(elevation_min_m), TB_MKEY_OFF(elevation_max_m),
     -11000, 9000, -512, 1536,
     "[min, max] metres mapped to 0 and 65535 in planet_height.png; heights outside are clipped."},
};

static const char *const s_objects[] = {"template", NULL};

static int s_check(tb_manifest_t *m, tb_err_t *err)
{
    double circ_m = m->circumference_km * 1000.0, cells;
    if (!tb_manifest_whole(circ_m / m->cell_m, &cells) || cells < 1)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: circumference_km %g is %.6f cells of cell_m %g m, not a whole "
                          "number; choose a circumference that is a multiple of %g m",
                          m->source, m->circumference_km, circ_m / m->cell_m, m->cell_m, m->cell_m);
    m->planet_w = (int64_t)cells;
    if (!m->overlay_path[0] != !m->overlay_legend_path[0])
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %s: missing; template.overlay and template.overlay_legend come "
                          "together (the overlay's marks need their legend)",
                          m->source,
                          m->overlay_path[0] ? "template.overlay_legend" : "template.overlay");
    return 0;
}

const tb_manifest_section_t tb_manifest_section_planet = {
    .name = "planet",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
