/* The manifest section "massif": The planet-wide massif fabric (docs/uplift.md). See
 * common/manifest/section.h. */
#include "common/manifest/section.h"

#include "common/noise.h"

static const tb_mkey_t s_keys[] = {
    {"massif.wavelength_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(massif.wavelength_km), 0, 0.05, 1e5, 2.5,
     0,
     "Wavelength of the planet-wide massif fabric, cut per class at a planet quantile; snapped to "
     "divide the circumference. Keep it well under a landmass."},
};

static const char *const s_objects[] = {"massif", NULL};

static int s_check(tb_manifest_t *m, tb_err_t *err)
{
    (void)err;
    m->massif.wavelength_snapped_km =
        tb_snap_wavelength(m->circumference_km, m->massif.wavelength_km);
    return 0;
}

const tb_manifest_section_t tb_manifest_section_massif = {
    .name = "massif",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
