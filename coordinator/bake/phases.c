/* The bake's phases, in the order they run (docs/architecture.md, the pipeline). A new phase is one
 * file coordinator/bake/phase_NAME.c and one line here. */
#include "coordinator/bake/phase.h"

const tb_phase_t *const tb_bake_phases[] = {
    &tb_phase_plan,  /* the input, the plan, the region selection: classes */
    &tb_phase_solve, /* region jobs through the farm, composited: land_m, area, basins, uplift */
    &tb_phase_composite, /* ocean depths and solved land: the heightmap and its extent */
    &tb_phase_outputs,   /* the heightmap, the maps, plan.json and summary.txt */
};
const int tb_bake_n_phases = (int)(sizeof tb_bake_phases / sizeof tb_bake_phases[0]);

_Static_assert(sizeof tb_bake_phases / sizeof tb_bake_phases[0] <= TB_BAKE_MAX_PHASES,
               "raise TB_BAKE_MAX_PHASES");
