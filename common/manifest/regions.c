/* The manifest section "regions": How the planet is cut into regions (docs/plan.md). See
 * common/manifest/section.h. */
#include "common/manifest/section.h"

static const tb_mkey_t s_keys[] = {
    {"regions.ocean_margin_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(regions.ocean_margin_km), 0, 0.016, 100,
     0.4, 0, "Ocean kept round each region's land; landmasses closer than this share a region."},
    {"regions.min_landmass_km2", TB_MKEY_DOUBLE, TB_MKEY_OFF(regions.min_landmass_km2), 0, 0, 1e6,
     0.05, 0, "Landmasses smaller than this are dropped to the surrounding ocean, and counted."},
};

static const char *const s_objects[] = {"regions", NULL};

static int s_check(tb_manifest_t *m, tb_err_t *err)
{
    if (m->regions.ocean_margin_km * 1000.0 < 2 * m->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: regions.ocean_margin_km %g is under two cells of %g m", m->source,
                          m->regions.ocean_margin_km, m->cell_m);
    return 0;
}

const tb_manifest_section_t tb_manifest_section_regions = {
    .name = "regions",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
