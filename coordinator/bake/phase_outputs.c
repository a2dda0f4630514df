/* The outputs phase: the extent of the final heightmap (after the coast) against the manifest's
 * elevation_m (the clip fraction the bake is judged on), then the pictures and texts of a bake in
 * out_dir, each written to a temporary name and renamed, its XXH3 recorded for meta.json
 * (docs/bake.md lists them): planet_height.png, map_flow.png, map_basins.png, preview.png,
 * map_class.png, map_regions.png, map_uplift.png, plan.json and summary.txt with the coast block
 * (also printed unless quiet); the coast phase writes its own two maps. Reads: every planet array.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "coordinator/bake/phase.h"
#include "coordinator/maps/bake_maps.h"
#include "coordinator/maps/map_uplift.h"
#include "coordinator/maps/plan_maps.h"

#define S_MAP_MAX_WIDTH 4096

/* The heightmap and the maps of the solve: flow, basins, preview. */
static int s_planet_maps(tb_bake_ctx_t *ctx, tb_image_t *img, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->manifest;
    const tb_planet_t *p = ctx->planet;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    const float *height = tb_planet_cheight_m(p);
    if (tb_map_height16(height, w, h, m->elevation_min_m, m->elevation_max_m, img, &ctx->clipped,
                        err) != 0 ||
        tb_bake_write_png(ctx, "planet_height.png", img, err) != 0)
        return -1;
    tb_image_free(img);
    double cell_area = m->cell_m * m->cell_m;
    if (tb_map_flow(tb_planet_carea_m2(p), tb_planet_csolved(p), w, h, cell_area, S_MAP_MAX_WIDTH,
                    img, err) != 0 ||
        tb_bake_write_png(ctx, "map_flow.png", img, err) != 0 ||
        tb_bake_check_interrupted(ctx, err) != 0)
        return -1;
    tb_image_free(img);
    if (tb_map_basins(tb_planet_cbasin(p), tb_planet_csolved(p), w, h, S_MAP_MAX_WIDTH, img, err) !=
            0 ||
        tb_bake_write_png(ctx, "map_basins.png", img, err) != 0)
        return -1;
    tb_image_free(img);
    double land_top = fmax(1.0, ctx->out->extent.max_m);
    if (tb_map_preview(height, w, h, m->cell_m, land_top, S_MAP_MAX_WIDTH, img, err) != 0 ||
        tb_bake_write_png(ctx, "preview.png", img, err) != 0 ||
        tb_bake_check_interrupted(ctx, err) != 0)
        return -1;
    tb_image_free(img);
    return 0;
}

/* The maps of the plan (classes, regions) and of the uplift field with its fault traces. */
static int s_plan_maps(tb_bake_ctx_t *ctx, tb_image_t *img, tb_err_t *err)
{
    if (tb_plan_map_class(ctx->plan, S_MAP_MAX_WIDTH, img, err) != 0 ||
        tb_bake_write_png(ctx, "map_class.png", img, err) != 0)
        return -1;
    tb_image_free(img);
    if (tb_plan_map_regions(ctx->plan, S_MAP_MAX_WIDTH, img, err) != 0 ||
        tb_bake_write_png(ctx, "map_regions.png", img, err) != 0)
        return -1;
    tb_image_free(img);
    const tb_planet_t *p = ctx->planet;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    tb_frame_t pf;
    tb_polyline_t *traces = NULL;
    size_t n_traces = 0;
    char path[4200];
    int rc = -1;
    if (tb_frame_make(&pf, w, h, ctx->manifest->cell_m, 0, 0, w, h, err) == 0 &&
        tb_uplift_fault_traces(ctx->manifest, &pf, &traces, &n_traces, err) == 0 &&
        tb_fs_join(path, sizeof path, ctx->opts->out_dir, "map_uplift.png", err) == 0 &&
        tb_map_uplift_write(path, &pf, tb_planet_cuplift_m_yr(p), traces, n_traces, err) == 0 &&
        tb_bake_hash_file(ctx, "map_uplift.png", err) == 0)
        rc = 0;
    tb_uplift_traces_destroy(&traces, n_traces);
    return rc;
}

/* The extent of height_m against elevation_m, and the share of cells the 16-bit encoding clips. */
static int s_extent(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->manifest;
    size_t cells = tb_planet_cells(ctx->planet);
    tb_bake_outcome_t *out = ctx->out;
    if (tb_stats_extent_measure(tb_planet_cheight_m(ctx->planet), cells, m->elevation_min_m,
                                m->elevation_max_m, &out->extent, err) != 0)
        return -1;
    out->clip_fraction = (double)out->extent.clipped / (double)cells;
    return 0;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_image_t img = {0};
    int rc = -1;
    if (s_extent(ctx, err) != 0 || s_planet_maps(ctx, &img, err) != 0 ||
        s_plan_maps(ctx, &img, err) != 0 || tb_bake_check_interrupted(ctx, err) != 0)
        goto done;
    char *text = tb_plan_to_json(ctx->plan);
    int trc = text ? tb_bake_write_text(ctx, "plan.json", text, err)
                   : tb_err_set(err, TB_E_NOMEM, "out of memory writing plan.json");
    free(text);
    if (trc != 0 || tb_bake_summary_write(ctx, false, err) != 0)
        goto done;
    rc = 0;
done:
    tb_image_free(&img);
    return rc;
}

const tb_phase_t tb_phase_outputs = {
    .name = "outputs",
    .reads = TB_PLANET_BIT(CLASSES) | TB_PLANET_BIT(HEIGHT_M) | TB_PLANET_BIT(AREA_M2) |
             TB_PLANET_BIT(BASIN) | TB_PLANET_BIT(UPLIFT_M_YR) | TB_PLANET_BIT(SOLVED),
    .writes = 0,
    .writes_files = true,
    .kept_on_reuse = true,
    .run = s_run,
};
