/* The plan phase: reads the manifest and painting (or makes the demo planet), plans the regions
 * (jobs/plan/plan.h), checks --only against them, and sets up the output directory and the planet,
 * whose classes are the plan's. Writes: classes. */
#include <string.h>

#include "common/fs.h"
#include "common/pool.h"
#include "coordinator/bake/phase.h"

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    if (tb_planet_input_load(o->manifest_path, &o->input, &ctx->input, err) != 0)
        return -1;
    int threads = o->dispatch.threads > 0 ? o->dispatch.threads : tb_pool_default_threads();
    ctx->plan = tb_plan_new(&ctx->input.manifest, &ctx->input.painting, threads, err);
    if (!ctx->plan)
        return -1;
    const tb_manifest_t *m = ctx->manifest = tb_plan_manifest(ctx->plan);
    ctx->steps = o->steps > 0 ? o->steps : m->solve.steps;
    if (tb_uplift_probes_compute(m, &ctx->probes, err) != 0)
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
