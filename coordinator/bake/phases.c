/* The bake's phases, in the order they run (docs/architecture.md, the pipeline). A new phase is one
 * file coordinator/bake/phase_NAME.c defining `const tb_phase_t tb_phase_NAME`, and one line here.
 */
#include "coordinator/bake/phase.h"

#define S_PHASES(X)                                                                                \
    X(plan)      /* the input, the plan, the region selection: classes */                          \
    X(solve)     /* region jobs through the farm, composited: land_m, area, basins, uplift */      \
    X(composite) /* ocean depths and solved land: the heightmap */                                 \
    X(coast)     /* one coast job over the whole cylinder: shelf, surf, sediment; its maps */      \
    X(outputs)   /* the extent; the heightmap, the maps, plan.json and summary.txt */              \
    X(maps)      /* map_slope, map_relief, map_erodibility, planet_height_low (docs/report.md) */  \
    X(whole)     /* a partial bake's tiles: the stored regions borrowed, the whole coast again */  \
    X(tiles)     /* detail tile jobs through the farm: out_dir/tiles (docs/tiles.md) */            \
    X(detail)    /* from out_dir/tiles: preview_detail*.png, summary.txt's detail block */

#define S_DECLARE(name) extern const tb_phase_t tb_phase_##name;
S_PHASES(S_DECLARE)
#undef S_DECLARE

#define S_ENTRY(name) &tb_phase_##name,
const tb_phase_t *const tb_bake_phases[] = {S_PHASES(S_ENTRY)};
#undef S_ENTRY
const int tb_bake_n_phases = (int)(sizeof tb_bake_phases / sizeof tb_bake_phases[0]);

_Static_assert(sizeof tb_bake_phases / sizeof tb_bake_phases[0] <= TB_BAKE_MAX_PHASES,
               "raise TB_BAKE_MAX_PHASES");
