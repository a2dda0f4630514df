/* The manifest section "tiles": The detail tiles: their edge and cell. See
 * common/manifest/section.h. */
#include "common/manifest/section.h"

static const tb_mkey_t s_keys[] = {
    {"tiles.size_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(tiles.size_km), 0, 0.1, 1e3, 5, 0,
     "Detail tile edge; must divide the circumference."},
    {"tiles.cell_m", TB_MKEY_DOUBLE, TB_MKEY_OFF(tiles.cell_m), 0, 0.1, 1e3, 2, 0,
     "Detail cell edge."},
    {"tiles.margin_cells", TB_MKEY_INT, TB_MKEY_OFF(tiles.margin_cells), 0, 0, 1e5,
     TB_TILES_MEASURED_MARGIN_CELLS, 0,
     "Detail cells computed round each tile and thrown away; the default is the measured margin "
     "(docs/tiles.md), and less is refused unless tiles.force_margin is 1."},
    {"tiles.force_margin", TB_MKEY_INT, TB_MKEY_OFF(tiles.force_margin), 0, 0, 1, 0, 0,
     "1 accepts a tiles.margin_cells below the measured margin: tiles may then show seams."},
};

static const char *const s_objects[] = {"tiles", NULL};

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
    if (m->tiles.margin_cells < TB_TILES_MEASURED_MARGIN_CELLS && !m->tiles.force_margin)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.margin_cells %d is below the measured margin of %d cells, at "
                          "which tiles agree with each other to the bit; set tiles.force_margin to "
                          "1 to accept seams",
                          name, m->tiles.margin_cells, TB_TILES_MEASURED_MARGIN_CELLS);
    m->tiles_around = (int64_t)tiles;
    return 0;
}

const tb_manifest_section_t tb_manifest_section_tiles = {
    .name = "tiles",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
