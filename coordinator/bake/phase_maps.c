/* The maps phase: map_slope.png, map_relief.png, map_erodibility.png and planet_height_low.png
 * (coordinator/report/maps.h, docs/report.md), each written atomically with its XXH3 recorded for
 * meta.json. Reads: land_m (what the statistics saw), height_m, uplift_m_yr (to check the
 * erodibility field is built from the solve's own uplift), solved. */
#include "coordinator/bake/phase.h"
#include "coordinator/report/maps.h"

#define S_MAP_MAX_WIDTH 4096

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_planet_t *p = ctx->planet;
    if (tb_bake_check_interrupted(ctx, err) != 0)
        return -1;
    return tb_report_maps_write(ctx->opts->out_dir, ctx->plan, &ctx->probes, ctx->selected,
                                tb_planet_cland_m(p), tb_planet_cheight_m(p),
                                tb_planet_cuplift_m_yr(p), tb_planet_csolved(p), tb_planet_w(p),
                                tb_planet_h(p), S_MAP_MAX_WIDTH, ctx->hashes, err);
}

const tb_phase_t tb_phase_maps = {
    .name = "maps",
    .reads = TB_PLANET_BIT(LAND_M) | TB_PLANET_BIT(HEIGHT_M) | TB_PLANET_BIT(UPLIFT_M_YR) |
             TB_PLANET_BIT(SOLVED),
    .writes = 0,
    .writes_files = true,
    .kept_on_reuse = true,
    .run = s_run,
};
