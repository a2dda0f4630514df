/* The margin phase: `terrain tiles OUT --measure-margin` and `--check-seams`, in place of the tile
 * phases (docs/tiles.md, "Re-running chosen tiles"): every region and the coast come from the
 * store, nothing of the bake is rewritten, and the planet's tiles are measured (tiles_margin.c) or
 * a 2 x 2 block's seams checked (tiles_seams.c) instead of baked. Reads: plan, height_m, area_m2,
 * classes. Writes: nothing (it prints its table). */
#include <stdlib.h>

#include "coordinator/bake/phase.h"

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    return ctx->opts->measure_margin ? NULL : "no --measure-margin or --check-seams";
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_tile_class_t cls[TB_TILE_MAX_CLASSES];
    int n_cls;
    uint8_t *land = NULL;
    tb_tile_planet_t src;
    if (tb_bake_tile_planet(ctx, &src, cls, &n_cls, &land, err) != 0)
        return -1;
    const tb_detail_params_t *p = &ctx->plan.tile_params;
    int rc = ctx->opts->check_seams ? tb_bake_tiles_check_seams(ctx, &src, p, cls, n_cls, land, err)
                                    : tb_bake_tiles_measure(ctx, &src, p, cls, n_cls, land, err);
    free(land);
    return rc;
}

const tb_phase_t tb_phase_margin = {
    .name = "margin",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(HEIGHT_M) | TB_ART_BIT(AREA_M2) | TB_ART_BIT(CLASSES),
    .skip = s_skip,
    .run = s_run,
};
