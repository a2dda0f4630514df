/* The composite phase: the planet heightmap, ocean at its painted class depth and land as solved
 * (sea level where no region was solved; tb_bake_composite_heights, which a partial bake's tiles
 * use too). Reads: classes, land_m. Writes: height_m. Later phases
 * may change height_m (the coast); its extent is measured by the outputs phase, from the final
 * heights. */
#include "coordinator/bake/phase.h"

void tb_bake_composite_heights(const tb_manifest_t *m, const uint8_t *classes, const float *land_m,
                               float *height_m, size_t cells)
{
    for (size_t i = 0; i < cells; i++) {
        const tb_class_t *k = &m->legend.classes[classes[i]];
        height_m[i] = k->kind == TB_CLASS_OCEAN ? (float)-k->depth_m : land_m[i];
    }
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->manifest;
    tb_planet_t *p = ctx->planet;
    size_t cells = tb_planet_cells(p);
    float *height = tb_planet_height_m(p);
    tb_bake_composite_heights(m, tb_planet_cclasses(p), tb_planet_cland_m(p), height, cells);
    tb_bake_outcome_t *out = ctx->out;
    if (tb_stats_extent_measure(height, cells, m->elevation_min_m, m->elevation_max_m, &out->extent,
                                err) != 0)
        return -1;
    out->clip_fraction = (double)out->extent.clipped / (double)cells;
    return 0;
}

const tb_phase_t tb_phase_composite = {
    .name = "composite",
    .reads = TB_PLANET_BIT(CLASSES) | TB_PLANET_BIT(LAND_M),
    .writes = TB_PLANET_BIT(HEIGHT_M),
    .run = s_run,
};
