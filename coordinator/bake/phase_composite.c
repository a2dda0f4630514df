/* The composite phase: the planet heightmap before the coast, ocean at its painted class depth and
 * land as composited (sea level where no region was; tb_bake_composite_heights), a band of rows at
 * a time, each let go once written. Reads: plan, classes, land_m. Writes: composite_m. Later phases
 * do not change it: the coast makes height_m from it. */
#include "coordinator/bake/phase.h"

void tb_bake_composite_heights(const tb_manifest_t *m, const uint8_t *classes, const float *land_m,
                               float *height_m, size_t cells)
{
    for (size_t i = 0; i < cells; i++) {
        const tb_class_t *k = &m->legend.classes[classes[i]];
        height_m[i] = k->kind == TB_CLASS_OCEAN ? (float)-k->depth_m : land_m[i];
    }
}

#define S_BAND_CELLS ((size_t)4 << 20) /* 4 M cells a band: 36 MB of the three rasters */

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    (void)err;
    tb_planet_t *p = ctx->planet;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    int64_t band = (int64_t)(S_BAND_CELLS / (size_t)w) + 1;
    const uint8_t *classes = tb_planet_cclasses(p);
    const float *land = tb_planet_cland_m(p);
    float *height = tb_planet_composite_m(p);
    for (int64_t y = 0; y < h; y += band) {
        int64_t y1 = y + band < h ? y + band : h;
        size_t at = (size_t)y * (size_t)w;
        tb_bake_composite_heights(ctx->plan.manifest, classes + at, land + at, height + at,
                                  (size_t)(y1 - y) * (size_t)w);
        tb_planet_release(p, TB_PLANET_CLASSES, y, y1);
        tb_planet_release(p, TB_PLANET_LAND_M, y, y1);
        tb_planet_release(p, TB_PLANET_COMPOSITE_M, y, y1);
    }
    return 0;
}

const tb_phase_t tb_phase_composite = {
    .name = "composite",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(CLASSES) | TB_ART_BIT(LAND_M),
    .writes = TB_ART_BIT(COMPOSITE_M),
    .run = s_run,
};
