/* The outputs phase: the pictures and texts of a bake in out_dir, each written to a temporary name
 * and renamed, its XXH3 recorded for meta.json (docs/bake.md lists them): planet_height.png,
 * map_flow.png, map_basins.png, preview.png, map_class.png, map_regions.png, map_uplift.png,
 * plan.json and summary.txt with the coast block (also printed unless quiet); the coast phase
 * writes its own two maps. Reads: plan, regions, extent, coast (when made), and the rasters
 * classes, height_m, area_m2, basin, uplift_m_yr, solved. */
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

#define S_BAND_CELLS ((size_t)4 << 20) /* rows of the heightmap encoded at a time */

/* planet_height.png: 16 bits over elevation_m, a band of rows at a time (never the whole image). */
static int s_heightmap(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    tb_planet_t *p = ctx->planet;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    int64_t band = (int64_t)(S_BAND_CELLS / (size_t)w) + 1;
    if (!(m->elevation_max_m > m->elevation_min_m))
        return tb_err_set(err, TB_E_INVALID, "heightmap: empty elevation range %g..%g",
                          m->elevation_min_m, m->elevation_max_m);
    uint16_t *rows = tb_malloc((size_t)band * (size_t)w * sizeof *rows, "heightmap rows", err);
    tb_png_writer_t *wr = rows ? tb_bake_png_open(ctx, "planet_height.png", (uint32_t)w,
                                                  (uint32_t)h, TB_PNG_GRAY16, err)
                               : NULL;
    int rc = wr ? 0 : -1;
    for (int64_t y = 0; y < h && rc == 0; y += band) {
        int64_t n = y + band < h ? band : h - y;
        tb_map_height16_rows(tb_planet_cheight_m(p) + (size_t)y * (size_t)w, (size_t)(n * w),
                             m->elevation_min_m, m->elevation_max_m, rows);
        tb_planet_release(p, TB_PLANET_HEIGHT_M, y, y + n);
        rc = tb_png_writer_rows(wr, rows, (uint32_t)n, err);
    }
    if (rc == 0)
        rc = tb_bake_png_close(ctx, "planet_height.png", &wr, err);
    tb_png_writer_abort(&wr);
    free(rows);
    return rc;
}

/* The heightmap and the maps of the solve: flow, basins, preview. */
static int s_planet_maps(tb_bake_ctx_t *ctx, tb_image_t *img, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    tb_planet_t *p = ctx->planet;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    tb_rows_hook_t done = tb_planet_rows_hook(p);
    if (s_heightmap(ctx, err) != 0)
        return -1;
    double cell_area = m->cell_m * m->cell_m;
    if (tb_map_flow(tb_planet_carea_m2(p), tb_planet_csolved(p), w, h, cell_area, S_MAP_MAX_WIDTH,
                    &done, img, err) != 0 ||
        tb_bake_write_png(ctx, "map_flow.png", img, err) != 0 ||
        tb_bake_check_interrupted(ctx, err) != 0)
        return -1;
    tb_image_free(img);
    if (tb_map_basins(tb_planet_cbasin(p), tb_planet_csolved(p), w, h, S_MAP_MAX_WIDTH, &done, img,
                      err) != 0 ||
        tb_bake_write_png(ctx, "map_basins.png", img, err) != 0)
        return -1;
    tb_image_free(img);
    double land_top = fmax(1.0, ctx->extent.max_m);
    if (tb_map_preview(tb_planet_cheight_m(p), w, h, m->cell_m, land_top, S_MAP_MAX_WIDTH, &done,
                       img, err) != 0 ||
        tb_bake_write_png(ctx, "preview.png", img, err) != 0 ||
        tb_bake_check_interrupted(ctx, err) != 0)
        return -1;
    tb_image_free(img);
    return 0;
}

/* The maps of the plan (classes, regions) and of the uplift field with its fault traces. */
static int s_plan_maps(tb_bake_ctx_t *ctx, tb_image_t *img, tb_err_t *err)
{
    const tb_plan_t *plan = ctx->plan.plan;
    if (tb_plan_map_class(plan, S_MAP_MAX_WIDTH, img, err) != 0 ||
        tb_bake_write_png(ctx, "map_class.png", img, err) != 0)
        return -1;
    tb_image_free(img);
    if (tb_plan_map_regions(plan, S_MAP_MAX_WIDTH, img, err) != 0 ||
        tb_bake_write_png(ctx, "map_regions.png", img, err) != 0)
        return -1;
    tb_image_free(img);
    const tb_overlay_features_t *ov = ctx->plan.overlay;
    if (ov) {
        int64_t mw, mh;
        const uint8_t *marks = tb_overlay_features_map(ov, &mw, &mh);
        char *json = tb_overlay_features_json(ov, ctx->plan.manifest->overlay_path);
        int rc = json ? tb_bake_write_text(ctx, "overlay.json", json, err)
                      : tb_err_set(err, TB_E_NOMEM, "out of memory writing overlay.json");
        free(json);
        if (rc != 0 ||
            tb_plan_map_overlay(plan, tb_overlay_features_legend(ov), marks, mw, mh,
                                S_MAP_MAX_WIDTH, img, err) != 0 ||
            tb_bake_write_png(ctx, "map_overlay.png", img, err) != 0)
            return -1;
        tb_image_free(img);
    }
    tb_planet_t *p = ctx->planet;
    int64_t w = tb_planet_w(p), h = tb_planet_h(p);
    tb_rows_hook_t done = tb_planet_rows_hook(p);
    tb_frame_t pf;
    tb_polyline_t *traces = NULL;
    size_t n_traces = 0;
    char path[4200];
    int rc = -1;
    if (tb_frame_make(&pf, w, h, ctx->plan.manifest->cell_m, 0, 0, w, h, err) == 0 &&
        tb_uplift_fault_traces(ctx->plan.manifest, &pf, &traces, &n_traces, err) == 0 &&
        tb_fs_join(path, sizeof path, ctx->opts->out_dir, "map_uplift.png", err) == 0 &&
        tb_map_uplift_write_rows(path, &pf, tb_planet_cuplift_m_yr(p), traces, n_traces, 0, &done,
                                 err) == 0 &&
        tb_bake_hash_file(ctx, "map_uplift.png", err) == 0)
        rc = 0;
    tb_uplift_traces_destroy(&traces, n_traces);
    return rc;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_image_t img = {0};
    int rc = -1;
    if (s_planet_maps(ctx, &img, err) != 0 || s_plan_maps(ctx, &img, err) != 0 ||
        tb_bake_check_interrupted(ctx, err) != 0)
        goto done;
    char *text = tb_plan_to_json(ctx->plan.plan);
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
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(REGIONS) | TB_ART_BIT(EXTENT) | TB_ART_BIT(CLASSES) |
             TB_ART_BIT(HEIGHT_M) | TB_ART_BIT(AREA_M2) | TB_ART_BIT(BASIN) |
             TB_ART_BIT(UPLIFT_M_YR) | TB_ART_BIT(SOLVED),
    .reads_maybe = TB_ART_BIT(COAST),
    .writes_files = true,
    .reusable = true,
    .kept_on_reuse = true,
    .run = s_run,
};
