/* The bake's phases, in the order they run (docs/architecture.md, the pipeline). A new phase is one
 * file coordinator/bake/phase_NAME.c defining `const tb_phase_t tb_phase_NAME`, and one line here.
 */
#include "coordinator/bake/phase.h"

#define S_PHASES(X)                                                                                \
    X(plan)         /* the input, the plan, the region and tile selection: classes */              \
    X(solve)        /* region jobs (and a partial bake's stored regions): land_m .. solved */      \
    X(composite)    /* ocean depths and composited land: composite_m */                            \
    X(coast)        /* the coastal pass over the cylinder: height_m, moved_m, exposure */          \
    X(outputs)      /* the heightmap, the maps of the solve, plan.json, summary.txt */             \
    X(maps)         /* map_slope, map_relief, map_erodibility, planet_height_low */                \
    X(tiles_select) /* the detail tiles to bake (a partial bake's rule) */                         \
    X(tiles)        /* tile jobs through the farm, each written as it arrives: out_dir/tiles */    \
    X(tiles_index)  /* tiles/index.json in lattice order; meta.json's "tiles" */                   \
    X(margin)       /* terrain tiles --measure-margin / --check-seams instead of the tiles */      \
    X(detail)       /* from out_dir/tiles: preview_detail*.png, summary.txt's detail block */

#define S_DECLARE(name) extern const tb_phase_t tb_phase_##name;
S_PHASES(S_DECLARE)
#undef S_DECLARE

#define S_ENTRY(name) &tb_phase_##name,
const tb_phase_t *const tb_bake_phases[] = {S_PHASES(S_ENTRY)};
#undef S_ENTRY
const int tb_bake_n_phases = (int)(sizeof tb_bake_phases / sizeof tb_bake_phases[0]);

_Static_assert(sizeof tb_bake_phases / sizeof tb_bake_phases[0] <= TB_BAKE_MAX_PHASES,
               "raise TB_BAKE_MAX_PHASES");
