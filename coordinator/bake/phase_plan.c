/* The plan phase: reads the manifest and painting (or makes the demo planet), plans the regions
 * (jobs/plan/plan.h), checks --only against them, and sets up the output directory and the planet,
 * whose classes are the plan's. Writes: classes. */
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/pool.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"

/* The tiles of this bake, checked before anything is written (docs/tiles.md): the lattice fits the
 * planet, and --tiles-only names land or coast tiles of it. */
static int s_tiles(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    if (!o->tiles)
        return o->tiles_only || o->measure_margin
                   ? tb_err_set(err, TB_E_INVALID,
                                "--tiles-only and --measure-margin make tiles; --no-tiles "
                                "makes none: give one or the other")
                   : 0;
    tb_detail_params_t p;
    tb_tile_lattice_t L;
    if (tb_bake_tile_params(ctx->manifest, ctx->input.planet_w, ctx->input.planet_h, &p, &L, err) !=
        0)
        return -1;
    if (tb_bake_reuses_outputs(ctx) && o->dispatch.fresh)
        return tb_err_set(err, TB_E_INVALID,
                          "--fresh with --tiles-only or terrain tiles: the chosen tiles are "
                          "computed afresh anyway, and --fresh would re-solve every region");
    if (!o->tiles_only)
        return 0;
    size_t cells = (size_t)(ctx->input.planet_w * ctx->input.planet_h);
    uint8_t *land = tb_malloc(cells, "tile land mask", err);
    ctx->tile_sel = tb_malloc((size_t)tb_tile_count(&L), "tile selection", err);
    if (!land || !ctx->tile_sel) {
        free(land);
        return -1;
    }
    tb_bake_tile_land(ctx->manifest, tb_grid_cu8(tb_plan_classes(ctx->plan)), cells, land);
    int n = tb_bake_tile_parse_list(o->tiles_only,
                                    o->tiles_only_option ? o->tiles_only_option : "--tiles-only",
                                    &L, land, ctx->tile_sel, err);
    free(land);
    return n < 0 ? -1 : 0;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    if (tb_planet_input_load(o->manifest_path, &o->input, &ctx->input, err) != 0)
        return -1;
    int threads = o->dispatch.threads > 0 ? o->dispatch.threads : tb_pool_default_threads();
    ctx->plan = tb_plan_new(&ctx->input.manifest, &ctx->input.painting, threads, err);
    if (!ctx->plan || tb_plan_check_land_and_sea(ctx->plan, err) != 0)
        return -1;
    const tb_manifest_t *m = ctx->manifest = tb_plan_manifest(ctx->plan);
    ctx->steps = o->steps > 0 ? o->steps : m->solve.steps;
    if (tb_uplift_probes_compute(m, &ctx->probes, err) != 0 ||
        tb_plan_check_jobs(ctx->plan, &ctx->probes, err) != 0)
        return -1;
    int n_regions = tb_plan_region_count(ctx->plan);
    ctx->out->regions_total = n_regions;
    /* region ids are 1..n in plan order; --only may repeat an id or list them in any order */
    ctx->selected = tb_calloc((size_t)n_regions + 1, sizeof(bool), "region selection", err);
    if (!ctx->selected)
        return -1;
    for (int i = 0; i < o->n_only; i++) {
        if (o->only[i] < 1 || o->only[i] > n_regions)
            return tb_err_set(err, TB_E_INVALID,
                              "--only %lld: no such region; this planet has regions 1..%d (see "
                              "`terrain plan`)",
                              (long long)o->only[i], n_regions);
        ctx->selected[o->only[i] - 1] = true;
    }
    for (int ri = 0; ri < n_regions; ri++)
        if (o->n_only == 0)
            ctx->selected[ri] = true;
    if (tb_bake_check_inputs(ctx, tb_bake_output_names, tb_bake_n_output_names, err) != 0 ||
        s_tiles(ctx, err) != 0)
        return -1;
    if (tb_bake_reuses_outputs(ctx) &&
        (tb_fs_join(ctx->store_dir, sizeof ctx->store_dir, o->out_dir, ".cache", err) != 0 ||
         tb_bake_reuse_check(ctx, err) != 0))
        return -1;
    if (tb_fs_mkdir_p(o->out_dir, err) != 0 ||
        tb_fs_join(ctx->store_dir, sizeof ctx->store_dir, o->out_dir, ".cache", err) != 0)
        return -1;
    ctx->planet = tb_planet_new(ctx->input.planet_w, ctx->input.planet_h, err);
    if (!ctx->planet || tb_planet_provide(ctx->planet, TB_PLANET_BIT(CLASSES), err) != 0)
        return -1;
    memcpy(tb_planet_classes(ctx->planet), tb_grid_cu8(tb_plan_classes(ctx->plan)),
           tb_planet_cells(ctx->planet));
    return 0;
}

const tb_phase_t tb_phase_plan = {
    .name = "plan",
    .reads = 0,
    .writes = TB_PLANET_BIT(CLASSES),
    .run = s_run,
};
