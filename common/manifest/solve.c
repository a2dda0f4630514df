/* The manifest section "solve": The constants of the geology solve (docs/solve.md). See
 * common/manifest/section.h. */
#include "common/manifest/section.h"

static const tb_mkey_t s_keys[] = {
    {"solve.steps", TB_MKEY_INT, TB_MKEY_OFF(solve.steps), 0, 1, 1e6, 1000, 0,
     "Number of solve steps."},
    {"solve.dt_yr", TB_MKEY_DOUBLE, TB_MKEY_OFF(solve.dt_yr), 0, 1, 1e7, 1000, 0,
     "Years per step."},
    {"solve.k", TB_MKEY_DOUBLE, TB_MKEY_OFF(solve.k), 0, 1e-12, 1, 5e-5, 0,
     "Stream-power erodibility K (per class multiplied by k_mult and the rock field)."},
    {"solve.m", TB_MKEY_DOUBLE, TB_MKEY_OFF(solve.m), 0, 0.05, 2, 0.5, 0,
     "Stream-power exponent on drainage area."},
    {"solve.n", TB_MKEY_DOUBLE, TB_MKEY_OFF(solve.n), 0, 0.5, 4, 1, 0,
     "Stream-power exponent on slope; n other than 1 is solved by Newton iterations."},
    {"solve.diffusion_m2_yr", TB_MKEY_DOUBLE, TB_MKEY_OFF(solve.diffusion_m2_yr), 0, 0, 10, 0.02, 0,
     "Nonlinear hillslope diffusivity D; 0 turns hillslope diffusion off."},
    {"solve.talus_deg", TB_MKEY_DOUBLE, TB_MKEY_OFF(solve.talus_deg), 0, 1, 89, 35, 0,
     "Angle of repose: the critical slope of the diffusion and the repose clamp."},
    {"solve.max_hillslope_substeps", TB_MKEY_INT, TB_MKEY_OFF(solve.max_hillslope_substeps), 0, 1,
     1024, 24, 0, "Cap on explicit hillslope sub-steps in one step."},
    {"solve.mfd_exponent", TB_MKEY_DOUBLE, TB_MKEY_OFF(solve.mfd_exponent), 0, 0, 100, 1, 0,
     "Multiple-flow-direction partition exponent for drainage area; 0 means D8."},
};

static const char *const s_objects[] = {"solve", NULL};

const tb_manifest_section_t tb_manifest_section_solve = {
    .name = "solve",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
};
