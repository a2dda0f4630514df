/* The manifest section "rock": The lithology field (docs/uplift.md). See common/manifest/section.h.
 */
#include "common/manifest/section.h"

#include "common/noise.h"

static const tb_mkey_t s_keys[] = {
    {"rock.wavelength_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(rock.wavelength_km), 0, 0.05, 1e5, 3, 0,
     "Wavelength of the lithology field; snapped to divide the circumference."},
    {"rock.k_range", TB_MKEY_RANGE, TB_MKEY_OFF(rock.k_min_mult), TB_MKEY_OFF(rock.k_max_mult),
     0.01, 100, 0.6, 1.6,
     "[hardest, softest] erodibility multiplier of the rock field's four rock types."},
    {"rock.softness", TB_MKEY_DOUBLE, TB_MKEY_OFF(rock.softness), 0, 0, 0.5, 0.15, 0,
     "Rank-space width over which one rock grades into the next, pointwise (0 is a hard boundary; "
     "capped at one band, 0.25)."},
};

static const char *const s_objects[] = {"rock", NULL};

static int s_check(tb_manifest_t *m, tb_err_t *err)
{
    (void)err;
    m->rock.wavelength_snapped_km = tb_snap_wavelength(m->circumference_km, m->rock.wavelength_km);
    return 0;
}

const tb_manifest_section_t tb_manifest_section_rock = {
    .name = "rock",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
