/* The manifest section "tiles": the detail tiles' lattice, margin and every pass parameter. The
 * pass keys are the one list of common/detail_keys.h, so the section, jobs/detail/params.c and the
 * tile job's spec never disagree on a default or a range. See common/manifest/section.h and
 * docs/tiles.md. */
#include "common/manifest/section.h"

static const tb_mkey_t s_keys[] = {
    {"tiles.size_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(tiles.size_km), 0, 0.1, 1e3, 5, 0,
     "Detail tile edge; must divide the circumference."},
    {"tiles.cell_m", TB_MKEY_DOUBLE, TB_MKEY_OFF(tiles.cell_m), 0, 0.1, 1e3, 2, 0,
     "Detail cell edge."},
    {"tiles.margin_cells", TB_MKEY_INT, TB_MKEY_OFF(tiles.margin_cells), 0, -1, 1e5, -1, 0,
     "Detail cells computed round each tile and thrown away. -1 (the default): the margin the "
     "passes require, which is the measured 136 cells at the default passes and their provable "
     "bound otherwise (docs/tiles.md, \"The margin\"). Less than that is refused unless "
     "tiles.force_margin is 1."},
    {"tiles.force_margin", TB_MKEY_INT, TB_MKEY_OFF(tiles.force_margin), 0, 0, 1, 0, 0,
     "1 accepts a tiles.margin_cells below the margin the passes require: tiles may then show "
     "seams."},
#define S_ROW(group, key, kind, field, lo, hi, def, margin, doc)                                   \
    {"tiles." #group "." #key, TB_MKEY_##kind, TB_MKEY_OFF(tiles.field), 0, lo, hi, def, 0, doc},
    TB_DETAIL_PASS_KEYS(S_ROW)
#undef S_ROW
};

static const char *const s_objects[] = {
    "tiles", "tiles.relief", "tiles.droplets", "tiles.shore", "tiles.thermal", "tiles.splat", NULL};

void tb_manifest_detail_params(const tb_manifest_t *m, tb_detail_params_t *p)
{
    p->size_km = m->tiles.size_km;
    p->cell_m = m->tiles.cell_m;
    p->margin_cells = m->tiles.margin_cells;
#define S_COPY(group, key, kind, field, lo, hi, def, margin, doc) p->field = m->tiles.field;
    TB_DETAIL_PASS_KEYS(S_COPY)
#undef S_COPY
}

static int s_check(tb_manifest_t *m, tb_err_t *err)
{
    const char *name = m->source;
    double tiles, tile_cells, tile_detail;
    if (!tb_manifest_whole(m->circumference_km / m->tiles.size_km, &tiles) || tiles < 1)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: circumference_km %g is %.6f tiles of tiles.size_km %g, not a whole "
                          "number",
                          name, m->circumference_km, m->circumference_km / m->tiles.size_km,
                          m->tiles.size_km);
    if (!tb_manifest_whole(m->tiles.size_km * 1000.0 / m->cell_m, &tile_cells))
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.size_km %g is %.6f geology cells of %g m, not a whole number",
                          name, m->tiles.size_km, m->tiles.size_km * 1000.0 / m->cell_m, m->cell_m);
    if (!tb_manifest_whole(m->tiles.size_km * 1000.0 / m->tiles.cell_m, &tile_detail))
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.size_km %g is %.6f detail cells of tiles.cell_m %g m, not a "
                          "whole number",
                          name, m->tiles.size_km, m->tiles.size_km * 1000.0 / m->tiles.cell_m,
                          m->tiles.cell_m);
    if (m->tiles.cell_m > m->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.cell_m %g is coarser than the geology cell_m %g", name,
                          m->tiles.cell_m, m->cell_m);
    /* (droplets.spawn_block dividing a tile's cells is checked where tiles are cut, by
     * tb_detail_params_check: a planet baked without tiles need not satisfy it) */
    if (m->tiles.splat_scree_deg >= m->tiles.splat_rock_deg)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.splat.scree_deg %g must be below tiles.splat.rock_deg %g",
                          name, m->tiles.splat_scree_deg, m->tiles.splat_rock_deg);
    /* The margin the passes require (docs/tiles.md, "The margin"): the measured one while every
     * key that shapes what crosses a window's edge is at the default it was measured with, else
     * the provable bound of the passes given. */
    tb_detail_params_t p;
    tb_manifest_detail_params(m, &p);
    const char *changed = NULL;
    double value = 0, measured_at = 0;
    int64_t need = tb_detail_required_margin(&p, &changed, &value, &measured_at);
    m->tiles.margin_required_cells = need;
    if (m->tiles.margin_cells == TB_TILES_MARGIN_AUTO)
        m->tiles.margin_cells = (int)need;
    if (m->tiles.margin_cells < need && !m->tiles.force_margin) {
        if (!changed)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: tiles.margin_cells %d is below the measured margin of %lld "
                              "cells, at which tiles agree with each other to the bit; set "
                              "tiles.force_margin to 1 to accept seams",
                              name, m->tiles.margin_cells, (long long)need);
        return tb_err_set(
            err, TB_E_INVALID,
            "%s: tiles.margin_cells %d is below %lld, the provable margin of these "
            "passes (droplets.rounds x (droplets.lifetime + droplets.carry_steps + "
            "droplets.brush_radius + 2) + 4 droplets.settle_cells + thermal.iterations + "
            "2, and never under the shore pass's reach); the measured %d cells "
            "holds only for the default passes, and %s is %g (measured at %g); raise "
            "tiles.margin_cells to %lld or set tiles.force_margin to 1 to accept "
            "seams",
            name, m->tiles.margin_cells, (long long)need, TB_TILES_MEASURED_MARGIN_CELLS, changed,
            value, measured_at, (long long)need);
    }
    m->tiles_around = (int64_t)tiles;
    return 0;
}

const tb_manifest_section_t tb_manifest_section_tiles = {
    .name = "tiles",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
