/* The maps phase: map_slope.png, map_relief.png, map_erodibility.png and planet_height_low.png
 * (coordinator/report/maps.h, docs/report.md), each written atomically with its XXH3 recorded for
 * meta.json. Reads: plan, land_m (what the statistics saw), height_m, uplift_m_yr (to check the
 * erodibility field is built from the solve's own uplift), solved. */
#include "coordinator/bake/phase.h"
#include "coordinator/report/maps.h"

#define S_MAP_MAX_WIDTH 4096

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_planet_t *p = ctx->planet;
    if (tb_bake_check_interrupted(ctx, err) != 0)
        return -1;
    tb_rows_hook_t done = tb_planet_rows_hook(p);
    tb_report_maps_in_t in = {.plan = ctx->plan.plan,
                              .probes = &ctx->plan.probes,
                              .land_m = tb_planet_cland_m(p),
                              .planet_m = tb_planet_cheight_m(p),
                              .uplift_m_yr = tb_planet_cuplift_m_yr(p),
                              .solved = tb_planet_csolved(p),
                              .classes = tb_planet_cclasses(p),
                              .w = tb_planet_w(p),
                              .h = tb_planet_h(p),
                              .cell_m = ctx->plan.manifest->cell_m,
                              .done = &done};
    cJSON *hashes = cJSON_CreateObject();
    if (!hashes)
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    int rc = tb_report_maps_write(ctx->opts->out_dir, &in, S_MAP_MAX_WIDTH, hashes, err);
    for (const cJSON *h = hashes->child; h; h = h->next)
        tb_bake_record_file(ctx, h->string, h->valuestring);
    cJSON_Delete(hashes);
    return rc;
}

const tb_phase_t tb_phase_maps = {
    .name = "maps",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(CLASSES) | TB_ART_BIT(LAND_M) | TB_ART_BIT(HEIGHT_M) |
             TB_ART_BIT(UPLIFT_M_YR) | TB_ART_BIT(SOLVED),
    .writes_files = true,
    .reusable = true,
    .kept_on_reuse = true,
    .run = s_run,
};
