/* `terrain solve-region [MANIFEST] --region ID [--steps N] [--out DIR] [--threads N]`: runs one
 * region of the plan in-process, without workers or the result store, and writes its 16-bit
 * heightmap (region_height.png, the region's box over the manifest's elevation range),
 * map_flow.png, map_basins.png, map_uplift.png (fault traces in cyan), preview.png and summary.txt
 * (its statistics, PARTIAL), so the solve can be looked at alone. Exit status 0, 1 when the solve
 * failed, 2 for bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/pool.h"
#include "coordinator/maps/bake_maps.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"
#include "coordinator/maps/map_uplift.h"
#include "coordinator/bake/planet_input.h"
#include "coordinator/farm/signals.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "jobs/stats/stats.h"
#include "jobs/uplift/uplift.h"

typedef struct {
    tb_progress_t *bar;
    volatile sig_atomic_t *interrupted;
} s_prog_t;

static bool s_progress(void *user, double fraction, const char *note)
{
    s_prog_t *p = user;
    tb_progress_update(p->bar, fraction, note);
    return p->interrupted && *p->interrupted;
}

static int s_write(const char *dir, const char *name, const tb_image_t *img, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, dir, name, err) != 0)
        return -1;
    return tb_png_write(path, img, 6, err);
}

static int s_outputs(const char *dir, const tb_manifest_t *m, const tb_region_spec_t *spec,
                     const tb_region_result_t *r, const uint8_t *classes, tb_err_t *err)
{
    const tb_frame_t *b = &r->box;
    size_t cells = (size_t)b->w * (size_t)b->h;
    float *h = malloc(cells * sizeof(float));
    if (!h)
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    for (size_t i = 0; i < cells; i++) {
        const tb_class_t *k = &m->legend.classes[classes[i]];
        h[i] = spec->solve_mask[i]         ? r->height_m[i]
               : k->kind == TB_CLASS_OCEAN ? (float)-k->depth_m
                                           : 0.0f;
    }
    tb_image_t img = {0};
    int rc = -1;
    tb_polyline_t *traces = NULL;
    size_t n_traces = 0;
    char path[4200];
    if (tb_map_height16(h, b->w, b->h, m->elevation_min_m, m->elevation_max_m, &img, NULL, err) ||
        s_write(dir, "region_height.png", &img, err))
        goto done;
    tb_image_free(&img);
    if (tb_map_flow(r->area_m2, spec->solve_mask, b->w, b->h, m->cell_m * m->cell_m, 1 << 30, NULL,
                    &img, err) ||
        s_write(dir, "map_flow.png", &img, err))
        goto done;
    tb_image_free(&img);
    if (tb_map_basins(r->basin, spec->solve_mask, b->w, b->h, 1 << 30, NULL, &img, err) ||
        s_write(dir, "map_basins.png", &img, err))
        goto done;
    tb_image_free(&img);
    float top_m = 1.0f; /* the ramp's top: the highest solved cell, as the bake's preview does */
    for (size_t i = 0; i < cells; i++)
        if (spec->solve_mask[i] && h[i] > top_m)
            top_m = h[i];
    if (tb_map_preview(h, b->w, b->h, m->cell_m, top_m, 1 << 30, NULL, &img, err) ||
        s_write(dir, "preview.png", &img, err))
        goto done;
    tb_image_free(&img);
    if (tb_uplift_fault_traces(m, b, &traces, &n_traces, err) ||
        tb_fs_join(path, sizeof path, dir, "map_uplift.png", err) ||
        tb_map_uplift_write(path, b, r->uplift_m_yr, traces, n_traces, err))
        goto done;
    rc = 0;
done:
    tb_uplift_traces_destroy(&traces, n_traces);
    tb_image_free(&img);
    free(h);
    return rc;
}

static int s_run(int argc, char **argv, tb_overrides_t *overrides)
{
    const char *out_dir = "out/region";
    int64_t region = 0, steps = 0, seed = 0, threads = 0;
    double circumference_km = 0;
    bool seed_given = false, circ_given = false, region_given = false;
    const tb_opt_t opts[] = {
        {"region", TB_OPT_INT, &region, &region_given, "ID", "region id from `terrain plan`"},
        TB_VERB_OPT_STEPS(&steps),
        TB_VERB_OPT_SET(overrides),
        {"out", TB_OPT_STRING, &out_dir, NULL, "DIR", "output directory (out/region)"},
        TB_VERB_OPT_THREADS(&threads, "threads (default: all cores)"),
        TB_VERB_OPT_SEED(&seed, &seed_given, "seed (default: the manifest's, or 7)"),
        TB_VERB_OPT_CIRCUMFERENCE(&circumference_km, &circ_given,
                                  "demo planet only: its circumference (25)"),
    };
    tb_verb_t v = {
        .name = "solve-region",
        .usage = "terrain solve-region [MANIFEST] --region ID [--steps N] [--set KEY=VALUE]... "
                 "[--out DIR]",
        TB_VERB_OPTS(opts),
        .max_positional = 1};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    if (!region_given)
        return tb_verb_usage(&v, "--region ID is required (usage: %s)", v.usage);
    if (steps > 0 && tb_overrides_has(overrides, "solve.steps"))
        return tb_verb_usage(&v, "--steps %lld and --set %s: both set the steps; give one",
                             (long long)steps, tb_overrides_arg(overrides, "solve.steps"));
    if (threads > tb_pool_max_threads())
        return tb_verb_usage(&v, "--threads %lld: expected 0..%d (%d x the cores; 0: all cores)",
                             (long long)threads, tb_pool_max_threads(), TB_POOL_MAX_PER_CORE);
    tb_err_t err;
    tb_input_options_t io = {.has_seed = seed_given,
                             .seed = (uint64_t)seed,
                             .has_circumference = circ_given,
                             .circumference_km = circumference_km,
                             .overrides = overrides};
    tb_planet_input_t in;
    if (tb_planet_input_load(v.n_positional ? v.positional[0] : NULL, &io, &in, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    status = TB_EXIT_USAGE;
    int nthreads = threads > 0 ? (int)threads : tb_pool_default_threads();
    /* the plan's rasters on its heap: a region this tool solves in-process is far larger */
    tb_plan_t *plan =
        tb_plan_new(&in.manifest, tb_planet_input_rows(&in), NULL, NULL, nthreads, &err);
    tb_grid_t *classes = NULL, *mask = NULL;
    tb_pool_t *pool = NULL;
    tb_region_result_t r = {0};
    tb_stats_t *st = NULL;
    if (!plan)
        goto fail;
    const tb_manifest_t *m = tb_plan_manifest(plan);
    if (region < 1 || region > tb_plan_region_count(plan)) {
        tb_err_set(&err, TB_E_INVALID,
                   "--region %lld: no such region; this planet has regions 1..%d",
                   (long long)region, tb_plan_region_count(plan));
        goto fail;
    }
    tb_uplift_probes_t probes;
    const tb_plan_region_t *reg = tb_plan_region(plan, (int)region - 1);
    if (tb_uplift_probes_compute(m, &probes, &err) != 0 ||
        tb_plan_region_grids(plan, (int)region - 1, &classes, &mask, &err) != 0 ||
        tb_fs_mkdir_p(out_dir, &err) != 0)
        goto fail;
    status = 1;
    pool = tb_pool_new(nthreads, &err);
    if (!pool)
        goto fail;
    tb_region_spec_t spec = {.region_id = reg->id,
                             .box = reg->box,
                             .steps = steps > 0 ? (int)steps : m->solve.steps,
                             .manifest = m,
                             .probes = &probes,
                             .classes = tb_grid_cu8(classes),
                             .solve_mask = tb_grid_cu8(mask)};
    tb_log_info("region %d: %lld land cells in a %lld x %lld box, %d steps, %d threads", reg->id,
                (long long)reg->land_cells, (long long)reg->box.w, (long long)reg->box.h,
                spec.steps, nthreads);
    s_prog_t prog = {tb_progress_new("solve", 1.0), tb_signals_catch()};
    double t0 = tb_now_s();
    int rc = tb_region_solve(&spec, pool, s_progress, &prog, &r, &err);
    tb_progress_destroy(&prog.bar);
    if (rc != 0)
        goto fail;
    double secs = tb_now_s() - t0;
    if (s_outputs(out_dir, m, &spec, &r, tb_grid_cu8(classes), &err) != 0)
        goto fail;
    st = tb_stats_decode(r.stats, r.stats_bytes, &err);
    char note[64];
    snprintf(note, sizeof note, "region %d of %d", reg->id, tb_plan_region_count(plan));
    char *text = st ? tb_stats_report_text(st, NULL, note) : NULL;
    char path[4200];
    if (!text || tb_fs_join(path, sizeof path, out_dir, "summary.txt", &err) != 0 ||
        tb_fs_write_atomic(path, text, strlen(text), &err) != 0) {
        free(text);
        goto fail;
    }
    fputs(text, stdout);
    free(text);
    printf(
        "solve-region: region %d, %d steps in %.1f s (%.1f ns per box cell-step); outputs in %s\n",
        reg->id, spec.steps, secs, secs * 1e9 / ((double)reg->box_cells * spec.steps), out_dir);
    status = TB_EXIT_OK;
fail:
    if (status != TB_EXIT_OK)
        status = tb_verb_error(&v, status, &err);
    tb_stats_destroy(&st);
    tb_region_result_free(&r);
    tb_pool_destroy(&pool);
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    tb_plan_destroy(&plan);
    tb_planet_input_free(&in);
    return status;
}

int tb_cmd_solve_region(int argc, char **argv)
{
    return tb_verb_run_with_overrides(argc, argv, s_run);
}
