/* The plan phase: reads the manifest and painting (or makes the demo planet), plans the regions
 * (jobs/plan/plan.h), checks --only and the tiles against them, and sets up the output directory
 * and the planet, whose classes are the plan's; in a bake that reuses its outputs, reads the
 * previous bake and checks it is this planet's. Writes: plan, previous (reuse only), classes,
 * labels. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/pool.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"
#include "coordinator/maps/plan_maps.h"
#include "coordinator/report/terrain.h"
#include "jobs/plan/limits.h"

/* The tiles of this bake, checked before anything is written (docs/tiles.md): the lattice fits the
 * planet, and --tiles-only names land or coast tiles of it. */
static int s_tiles(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    tb_bake_plan_t *pl = &ctx->plan;
    if (!o->tiles)
        return o->tiles_only || o->measure_margin
                   ? tb_err_set(err, TB_E_INVALID,
                                "--tiles-only and --measure-margin make tiles; --no-tiles "
                                "makes none: give one or the other")
                   : 0;
    if (tb_bake_tile_params(pl->manifest, pl->input.planet_w, pl->input.planet_h, &pl->tile_params,
                            &pl->lattice, err) != 0)
        return -1;
    /* memory known before it is needed: refused before the solve spends hours */
    if (tb_bake_check_tile_memory(&pl->lattice, &pl->tile_params, tb_bake_job_memory(ctx), err) !=
        0)
        return -1;
    pl->has_tiles = true;
    tb_tile_rock_of(pl->manifest, &pl->probes, &pl->tile_rock);
    if (tb_bake_reuses_outputs(ctx) && o->dispatch.fresh)
        return tb_err_set(err, TB_E_INVALID,
                          "--fresh with --tiles-only or terrain tiles: the chosen tiles are "
                          "computed afresh anyway, and --fresh would re-solve every region");
    if (!o->tiles_only)
        return 0;
    size_t cells = (size_t)(pl->input.planet_w * pl->input.planet_h);
    uint8_t *land = tb_malloc(cells, "tile land mask", err);
    pl->tile_sel = tb_malloc((size_t)tb_tile_count(&pl->lattice), "tile selection", err);
    if (!land || !pl->tile_sel) {
        free(land);
        return -1;
    }
    tb_bake_tile_land(pl->manifest, tb_plan_class_raster(pl->plan)->data, cells, land);
    int n = tb_bake_tile_parse_list(o->tiles_only,
                                    o->tiles_only_option ? o->tiles_only_option : "--tiles-only",
                                    &pl->lattice, land, pl->tile_sel, err);
    free(land);
    return n < 0 ? -1 : 0;
}

/* "regions 2,3 of 4" for a partial bake: the selected region ids in increasing order. */
static void s_partial_note(const bool *selected, int n_selected, int total, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "region%s ", n_selected > 1 ? "s" : "");
    for (int ri = 0, first = 1; ri < total && k < n; ri++)
        if (selected[ri]) {
            k += (size_t)snprintf(out + k, n - k, "%s%d", first ? "" : ",", ri + 1);
            first = 0;
        }
    if (k < n)
        snprintf(out + k, n - k, " of %d", total);
}

/* --only: region ids are 1..n in plan order; it may repeat an id or list them in any order, and
 * one that names every region is a whole bake. */
static int s_select(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    tb_bake_plan_t *pl = &ctx->plan;
    int n_regions = pl->n_regions = tb_plan_region_count(pl->plan);
    ctx->out->regions_total = n_regions;
    pl->selected = tb_calloc((size_t)n_regions + 1, sizeof(bool), "region selection", err);
    if (!pl->selected)
        return -1;
    for (int i = 0; i < o->n_only; i++) {
        if (o->only[i] < 1 || o->only[i] > n_regions)
            return tb_err_set(err, TB_E_INVALID,
                              "--only %lld: no such region; this planet has regions 1..%d (see "
                              "`terrain plan`)",
                              (long long)o->only[i], n_regions);
        pl->selected[o->only[i] - 1] = true;
    }
    for (int ri = 0; ri < n_regions; ri++) {
        if (o->n_only == 0)
            pl->selected[ri] = true;
        pl->n_selected += pl->selected[ri];
    }
    ctx->out->partial = pl->n_selected < n_regions;
    if (ctx->out->partial) {
        s_partial_note(pl->selected, pl->n_selected, n_regions, pl->partial_text,
                       sizeof pl->partial_text);
        pl->partial = pl->partial_text;
    }
    return 0;
}

/* The plan's hash (its artifact's identity for the phases after it): what it decided - the plan
 * as plan.json has it (resolved manifest, regions, landmasses), the steps, the selection and the
 * options that change what the later phases make. */
static int s_plan_hash(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_plan_t *pl = &ctx->plan;
    const tb_bake_opts_t *o = ctx->opts;
    char *plan = tb_plan_to_json(pl->plan);
    if (!plan)
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    size_t n = strlen(plan);
    uint64_t v[6] = {tb_xxh3(plan, n), (uint64_t)pl->steps,
                     o->no_coast,      o->no_incision,
                     o->tiles,         tb_xxh3(pl->selected, (size_t)pl->n_regions)};
    free(plan);
    ctx->art_hash[TB_ART_PLAN] = tb_xxh3(v, sizeof v);
    return 0;
}

/* The plan, into a planet whose class and landmass rasters the plan writes: OUT and OUT/.planet
 * are made first, so both go to their files a band at a time and leave the coordinator's memory. */
static int s_plan(tb_bake_ctx_t *ctx, const char *planet_dir, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    tb_bake_plan_t *pl = &ctx->plan;
    if (tb_fs_mkdir_p(o->out_dir, err) != 0)
        return -1;
    /* The directories the bake writes inside OUT, refused up front when one is a symbolic link
     * (each is refused again where it is made; the store and OUT/.planet refuse theirs). */
    static const char *const inside[] = {"tiles", "report_assets", TB_TERRAIN_DIR};
    for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
        char dir[4200];
        if (tb_fs_join(dir, sizeof dir, o->out_dir, inside[i], err) != 0 ||
            tb_fs_refuse_link(dir, NULL, err) != 0)
            return -1;
    }
    /* The store: OUT/.cache, or elsewhere only when --store says so (docs/bake.md, "The result
     * store"); one given is refused up front when it cannot be a directory of ours. */
    if (o->store_dir) {
        struct stat st;
        if (strlen(o->store_dir) >= sizeof pl->store_dir)
            return tb_err_set(err, TB_E_INVALID, "--store %s: the path is too long", o->store_dir);
        if (tb_fs_refuse_link(o->store_dir, "--store, the result store", err) != 0)
            return -1;
        if (stat(o->store_dir, &st) == 0 && !S_ISDIR(st.st_mode))
            return tb_err_set(err, TB_E_INVALID, "--store %s: is a %s, expected a directory",
                              o->store_dir, tb_fs_kind_name(st.st_mode));
        snprintf(pl->store_dir, sizeof pl->store_dir, "%s", o->store_dir);
    } else if (tb_fs_join(pl->store_dir, sizeof pl->store_dir, o->out_dir, ".cache", err) != 0) {
        return -1;
    }
    ctx->planet = tb_planet_new(pl->input.planet_w, pl->input.planet_h, planet_dir, err);
    if (!ctx->planet ||
        tb_planet_provide(ctx->planet, TB_PLANET_BIT(CLASSES) | TB_PLANET_BIT(LABELS), err) != 0)
        return -1;
    tb_raster_t classes = tb_planet_raster(ctx->planet, TB_PLANET_CLASSES, &pl->classes_user);
    tb_raster_t labels = tb_planet_raster(ctx->planet, TB_PLANET_LABELS, &pl->labels_user);
    int threads = o->dispatch.threads > 0 ? o->dispatch.threads : tb_pool_default_threads();
    if (tb_planet_input_overlay_map(
            &pl->input, tb_plan_map_factor(pl->input.planet_w, TB_PLAN_MAP_MAX_WIDTH), err) != 0)
        return -1;
    pl->plan = tb_plan_new(&pl->input.manifest, tb_planet_input_rows(&pl->input), &classes, &labels,
                           threads, err);
    if (!pl->plan ||
        tb_planet_input_take_overlay(&pl->input, &pl->overlay, &pl->overlay_moved, err) != 0 ||
        tb_plan_check_land_and_sea(pl->plan, err) != 0)
        return -1;
    if (pl->overlay) {
        char line[512];
        tb_overlay_features_line(pl->overlay, line, sizeof line);
        tb_log_info("%s; the coast jitter moved %lld painting pixels", line,
                    (long long)pl->overlay_moved);
    }
    const tb_manifest_t *m = pl->manifest = tb_plan_manifest(pl->plan);
    pl->steps = o->steps > 0 ? o->steps : m->solve.steps;
    if (tb_uplift_probes_compute(m, &pl->probes, err) != 0 ||
        tb_plan_check_jobs(pl->plan, &pl->probes, err) != 0 ||
        tb_plan_check_limits(pl->plan, tb_bake_job_memory(ctx), err) != 0 ||
        s_select(ctx, err) != 0 || s_tiles(ctx, err) != 0)
        return -1;
    if (tb_bake_reuses_outputs(ctx)) {
        if (tb_bake_reuse_check(ctx, err) != 0)
            return -1;
        ctx->made |= TB_ART_BIT(PREVIOUS);
    } else if (tb_bake_previous_read(ctx)) {
        ctx->made |= TB_ART_BIT(PREVIOUS); /* a rerun keeps what did not change (docs/bake.md) */
    }
    return s_plan_hash(ctx, err);
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    tb_bake_plan_t *pl = &ctx->plan;
    if (tb_planet_input_load(o->manifest_path, &o->input, &pl->input, err) != 0 ||
        tb_bake_check_inputs(ctx, tb_bake_output_names, tb_bake_n_output_names, err) != 0)
        return -1;
    char planet_dir[4200];
    if (tb_fs_join(planet_dir, sizeof planet_dir, o->out_dir, ".planet", err) != 0)
        return -1;
    bool had_out = tb_fs_exists(o->out_dir), had_planet = tb_fs_exists(planet_dir);
    if (s_plan(ctx, planet_dir, err) == 0)
        return 0;
    /* a plan refused leaves no directory it made (only the plan's rasters are in it by now) */
    if (!had_planet)
        tb_planet_discard(&ctx->planet);
    if (!had_out)
        rmdir(o->out_dir);
    return -1;
}

const tb_phase_t tb_phase_plan = {
    .name = "plan",
    .writes = TB_ART_BIT(PLAN) | TB_ART_BIT(CLASSES) | TB_ART_BIT(LABELS),
    .writes_maybe = TB_ART_BIT(PREVIOUS),
    .run = s_run,
};
