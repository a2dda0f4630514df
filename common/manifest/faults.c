/* The manifest section "faults": Fault traces and their uplift (docs/uplift.md). See
 * common/manifest/section.h. */
#include "common/manifest/section.h"

#include "common/noise.h"

static const tb_mkey_t s_keys[] = {
    {"faults.per_1000_km2", TB_MKEY_DOUBLE, TB_MKEY_OFF(faults.per_1000_km2), 0, 0, 1e4, 40, 0,
     "Fault traces per 1000 km2 of planet surface, seeded over land and sea alike (only land takes "
     "the throw); 0 turns faults off."},
    {"faults.length_km", TB_MKEY_RANGE, TB_MKEY_OFF(faults.length_min_km),
     TB_MKEY_OFF(faults.length_max_km), 0.1, 1e4, 2, 12,
     "[shortest, longest] trace length; traces past 12 km break into en-echelon segments."},
    {"faults.uplift_mm_yr", TB_MKEY_DOUBLE, TB_MKEY_OFF(faults.uplift_mm_yr), 0, -100, 100, 0.05, 0,
     "Peak uplift rate added on land along a trace, tapered over the last sixth at each tip; U is "
     "never below 0."},
    {"faults.width_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(faults.width_km), 0, 0.05, 1e3, 1.0, 0,
     "Across-fault half-width: the envelope (1 - (d/w)^2)^2 reaches zero with zero gradient at "
     "this "
     "distance from the trace."},
    {"faults.grain_wavelength_km", TB_MKEY_DOUBLE, TB_MKEY_OFF(faults.grain_wavelength_km), 0, 0.1,
     1e5, 12.5, 0,
     "Wavelength of the grain field that sets fault strike; snapped to divide the circumference."},
};

static const char *const s_objects[] = {"faults", NULL};

static int s_check(tb_manifest_t *m, tb_err_t *err)
{
    if (m->faults.per_1000_km2 > 0 && m->faults.width_km * 1000.0 < 2 * m->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: faults.width_km %g is under two cells; a fault narrower than that "
                          "is a scarp the solve cannot undo",
                          m->source, m->faults.width_km);
    m->faults.grain_wavelength_snapped_km =
        tb_snap_wavelength(m->circumference_km, m->faults.grain_wavelength_km);
    return 0;
}

const tb_manifest_section_t tb_manifest_section_faults = {
    .name = "faults",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
