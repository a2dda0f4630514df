/* The bake; see bake.h. Composite rule: planet arrays start as the painting says (ocean at its class
 * depth, land at sea level until solved), and each region's result writes exactly the cells of its
 * own land (its solve mask), in region-id order as the dispatch engine delivers them, so no margin
 * cell of one region ever overwrites another's land. */
#include "coordinator/bake.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/pool.h"
#include "common/version.h"
#include "coordinator/bake_maps.h"
#include "coordinator/map_uplift.h"
#include "coordinator/plan_maps.h"
#include "coordinator/report/maps.h"
#include "coordinator/report/report.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "jobs/uplift/uplift.h"

#define S_MAP_MAX_WIDTH 4096

typedef struct {
    const tb_plan_t *plan;
    int64_t w, h;
    float *height;      /* solved land, 0 elsewhere: what the statistics see */
    float *area;
    int32_t *basin;
    float *uplift;
    uint8_t *solved;    /* 1 where a region's result was composited */
    tb_stats_t *stats;  /* merged in job (= region id) order */
    const int *job_region; /* job index -> region index */
    bool failed;
    tb_err_t err;
    tb_report_live_t *live; /* report.html while the bake runs (docs/report.md) */
} s_composite_t;

static void s_on_tick(void *user, const tb_dispatch_t *d)
{
    tb_report_live_tick(((s_composite_t *)user)->live, d);
}

static void s_on_result(void *user, size_t index, const void *data, size_t bytes)
{
    s_composite_t *c = user;
    if (c->failed)
        return;
    int ri = c->job_region[index];
    const tb_plan_region_t *reg = tb_plan_region(c->plan, ri);
    tb_region_result_t r;
    tb_grid_t *mask = NULL;
    tb_stats_t *st = NULL;
    if (tb_region_result_decode(data, bytes, &r, &c->err) != 0)
        goto fail;
    if (r.box.x0 != reg->box.x0 || r.box.y0 != reg->box.y0 || r.box.w != reg->box.w ||
        r.box.h != reg->box.h) {
        tb_err_set(&c->err, TB_E_FORMAT, "region %d: the result is for another box", reg->id);
        goto fail;
    }
    if (tb_plan_region_grids(c->plan, ri, NULL, &mask, &c->err) != 0)
        goto fail;
    const uint8_t *m = tb_grid_cu8(mask);
    for (int64_t j = 0; j < r.box.h; j++)
        for (int64_t i = 0; i < r.box.w; i++) {
            size_t bi = tb_idx(r.box.w, i, j);
            if (!m[bi])
                continue;
            size_t pi = tb_idx(c->w, tb_frame_lattice_x(&r.box, i), r.box.y0 + j);
            c->height[pi] = r.height_m[bi];
            c->area[pi] = r.area_m2[bi];
            c->basin[pi] = r.basin[bi];
            c->uplift[pi] = r.uplift_m_yr[bi];
            c->solved[pi] = 1;
        }
    st = tb_stats_decode(r.stats, r.stats_bytes, &c->err);
    if (!st || tb_stats_merge(c->stats, st, &c->err) != 0)
        goto fail;
    tb_stats_destroy(&st);
    tb_grid_destroy(&mask);
    tb_region_result_free(&r);
    return;
fail:
    tb_err_prefix(&c->err, "region %d", reg->id);
    c->failed = true;
    tb_stats_destroy(&st);
    tb_grid_destroy(&mask);
    tb_region_result_free(&r);
}

/* Writes an image atomically and records its XXH3 in `hashes` under `name`. */
static int s_write_png(const char *dir, const char *name, const tb_image_t *img, cJSON *hashes,
                       tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, dir, name, err) != 0)
        return -1;
    unsigned char *bytes;
    size_t n;
    if (tb_png_encode(img, 6, &bytes, &n, err) != 0)
        return tb_err_prefix(err, "%s", path);
    int rc = tb_fs_write_atomic(path, bytes, n, err);
    if (rc == 0) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(bytes, n));
        cJSON_AddStringToObject(hashes, name, hex);
    }
    free(bytes);
    return rc;
}

/* Records the XXH3 of a file another module wrote (map_uplift.png) in `hashes` under `name`. */
static int s_hash_file(const char *path, const char *name, cJSON *hashes, tb_err_t *err)
{
    char *bytes;
    size_t n;
    if (tb_fs_read_all(path, (size_t)1 << 34, &bytes, &n, err) != 0)
        return -1;
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(bytes, n));
    cJSON_AddStringToObject(hashes, name, hex);
    free(bytes);
    return 0;
}

static int s_write_text(const char *dir, const char *name, const char *text, cJSON *hashes,
                        tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, dir, name, err) != 0)
        return -1;
    size_t n = strlen(text);
    if (tb_fs_write_atomic(path, text, n, err) != 0)
        return -1;
    if (hashes) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_xxh3(text, n));
        cJSON_AddStringToObject(hashes, name, hex);
    }
    return 0;
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

/* TB_E_INTERRUPTED when the program's SIGINT/SIGTERM flag is up: the outputs stop before meta.json,
 * so the directory never claims a bake that was interrupted. */
static int s_check_interrupted(const tb_bake_opts_t *o, tb_err_t *err)
{
    if (o->dispatch.interrupted && *o->dispatch.interrupted)
        return tb_err_set(err, TB_E_INTERRUPTED, "interrupted while writing the outputs");
    return 0;
}

static int s_write_outputs(const tb_bake_opts_t *o, const tb_plan_t *plan, s_composite_t *c,
                           const float *planet, tb_dispatch_t *d, tb_bake_outcome_t *out,
                           const bool *selected, const char *partial, double started_s, int steps,
                           const tb_uplift_probes_t *probes, tb_err_t *err)
{
    const tb_manifest_t *m = tb_plan_manifest(plan);
    const char *dir = o->out_dir;
    cJSON *hashes = cJSON_CreateObject();
    tb_image_t img = {0};
    int rc = -1;
    char *text = NULL;
    int64_t clipped;
    char meta_path[4200];
    /* meta.json is written last and says the directory holds a complete bake: an older one goes
     * before any output is replaced, so a bake that stops half-way never sits beside it */
    if (tb_fs_join(meta_path, sizeof meta_path, dir, "meta.json", err) != 0)
        goto done;
    if (unlink(meta_path) != 0 && errno != ENOENT) {
        tb_err_set(err, TB_E_IO, "%s: cannot remove the previous bake's record: %s", meta_path,
                   strerror(errno));
        goto done;
    }
    if (tb_map_height16(planet, c->w, c->h, m->elevation_min_m, m->elevation_max_m, &img, &clipped,
                        err) != 0 ||
        s_write_png(dir, "planet_height.png", &img, hashes, err) != 0)
        goto done;
    tb_image_free(&img);
    double cell_area = m->cell_m * m->cell_m;
    if (tb_map_flow(c->area, c->solved, c->w, c->h, cell_area, S_MAP_MAX_WIDTH, &img, err) != 0 ||
        s_write_png(dir, "map_flow.png", &img, hashes, err) != 0 || s_check_interrupted(o, err))
        goto done;
    tb_image_free(&img);
    if (tb_map_basins(c->basin, c->solved, c->w, c->h, S_MAP_MAX_WIDTH, &img, err) != 0 ||
        s_write_png(dir, "map_basins.png", &img, hashes, err) != 0)
        goto done;
    tb_image_free(&img);
    double land_top = fmax(1.0, out->extent.max_m);
    if (tb_map_preview(planet, c->w, c->h, m->cell_m, land_top, S_MAP_MAX_WIDTH, &img, err) != 0 ||
        s_write_png(dir, "preview.png", &img, hashes, err) != 0 || s_check_interrupted(o, err))
        goto done;
    tb_image_free(&img);
    if (tb_plan_map_class(plan, S_MAP_MAX_WIDTH, &img, err) != 0 ||
        s_write_png(dir, "map_class.png", &img, hashes, err) != 0)
        goto done;
    tb_image_free(&img);
    if (tb_plan_map_regions(plan, S_MAP_MAX_WIDTH, &img, err) != 0 ||
        s_write_png(dir, "map_regions.png", &img, hashes, err) != 0)
        goto done;
    tb_image_free(&img);
    {
        tb_frame_t pf;
        tb_polyline_t *traces = NULL;
        size_t n_traces = 0;
        char path[4200];
        if (tb_frame_make(&pf, c->w, c->h, m->cell_m, 0, 0, c->w, c->h, err) != 0 ||
            tb_uplift_fault_traces(m, &pf, &traces, &n_traces, err) != 0 ||
            tb_fs_join(path, sizeof path, dir, "map_uplift.png", err) != 0 ||
            tb_map_uplift_write(path, &pf, c->uplift, traces, n_traces, err) != 0 ||
            s_hash_file(path, "map_uplift.png", hashes, err) != 0) {
            tb_uplift_traces_destroy(&traces, n_traces);
            goto done;
        }
        tb_uplift_traces_destroy(&traces, n_traces);
    }
    if (s_check_interrupted(o, err) != 0 ||
        tb_report_maps_write(dir, plan, probes, selected, c->height, planet, c->uplift, c->solved,
                             c->w, c->h, S_MAP_MAX_WIDTH, hashes, err) != 0 ||
        s_check_interrupted(o, err) != 0)
        goto done;
    text = tb_plan_to_json(plan);
    if (!text || s_write_text(dir, "plan.json", text, hashes, err) != 0)
        goto done;
    free(text);
    /* the verdict */
    text = tb_stats_report_text(c->stats, &out->extent, partial);
    if (!text) {
        tb_err_set(err, TB_E_NOMEM, "out of memory printing the summary");
        goto done;
    }
    {
        char head[1024];
        snprintf(head, sizeof head,
                 "terrain bake %s: %s, %lld x %lld cells of %g m, %d steps of %g yr, %d of %d "
                 "regions%s\n",
                 tb_build_id(), m->source, (long long)c->w, (long long)c->h, m->cell_m, steps,
                 m->solve.dt_yr, out->regions_solved, out->regions_total,
                 partial ? " (PARTIAL)" : "");
        size_t n = strlen(head) + strlen(text) + 1;
        char *all = malloc(n);
        if (!all) {
            tb_err_set(err, TB_E_NOMEM, "out of memory");
            goto done;
        }
        snprintf(all, n, "%s%s", head, text);
        free(text);
        text = all;
    }
    if (s_write_text(dir, "summary.txt", text, hashes, err) != 0)
        goto done;
    tb_fs_join(out->summary_path, sizeof out->summary_path, dir, "summary.txt", NULL);
    if (!o->quiet)
        fputs(text, stdout);
    free(text);
    text = NULL;
    /* meta.json, last: its presence says the bake is complete */
    if (s_check_interrupted(o, err) != 0)
        goto done;
    {
        cJSON *meta = cJSON_CreateObject();
        cJSON *tool = cJSON_AddObjectToObject(meta, "tool");
        cJSON_AddStringToObject(tool, "version", tb_version());
        cJSON_AddStringToObject(tool, "build_id", tb_build_id());
        char *mj = tb_manifest_to_json(m);
        cJSON_AddItemToObject(meta, "manifest", mj ? cJSON_Parse(mj) : cJSON_CreateNull());
        free(mj);
        char *pj = tb_plan_to_json(plan);
        cJSON_AddItemToObject(meta, "plan", pj ? cJSON_Parse(pj) : cJSON_CreateNull());
        free(pj);
        cJSON *bake = cJSON_AddObjectToObject(meta, "bake");
        cJSON_AddNumberToObject(bake, "steps", steps);
        cJSON_AddBoolToObject(bake, "partial", partial != NULL);
        cJSON *only = cJSON_AddArrayToObject(bake, "only");
        for (int ri = 0; o->n_only > 0 && ri < out->regions_total; ri++)
            if (selected[ri])
                cJSON_AddItemToArray(only, cJSON_CreateNumber(ri + 1));
        cJSON_AddNumberToObject(bake, "regions_solved", out->regions_solved);
        cJSON_AddNumberToObject(bake, "regions_total", out->regions_total);
        cJSON_AddNumberToObject(bake, "seconds", tb_now_s() - started_s);
        if (o->no_incision)
            cJSON_AddBoolToObject(bake, "test_no_incision", true);
        cJSON *extent = cJSON_AddObjectToObject(meta, "extent");
        cJSON_AddNumberToObject(extent, "min_m", out->extent.min_m);
        cJSON_AddNumberToObject(extent, "max_m", out->extent.max_m);
        cJSON_AddNumberToObject(extent, "clipped_cells", (double)clipped);
        cJSON_AddNumberToObject(extent, "clip_fraction", out->clip_fraction);
        cJSON_AddItemToObject(meta, "dispatch", tb_dispatch_record_json(d));
        cJSON *stats = tb_stats_report_json(c->stats, &out->extent, partial);
        cJSON_AddItemToObject(meta, "statistics", stats ? stats : cJSON_CreateNull());
        cJSON_AddItemToObject(meta, "histograms", tb_report_histograms_json(c->stats));
        cJSON_AddItemToObject(meta, "inputs", tb_report_inputs_json(m, plan));
        cJSON_AddItemToObject(meta, "outputs", hashes);
        hashes = NULL;
        text = cJSON_Print(meta);
        cJSON_Delete(meta);
        if (!text || s_write_text(dir, "meta.json", text, NULL, err) != 0)
            goto done;
        snprintf(out->meta_path, sizeof out->meta_path, "%s", meta_path);
    }
    rc = 0;
done:
    free(text);
    tb_image_free(&img);
    cJSON_Delete(hashes);
    return rc;
}

void tb_bake_outcome_free(tb_bake_outcome_t *out)
{
    if (out)
        tb_stats_destroy(&out->stats);
}

int tb_bake_run(const tb_bake_opts_t *o, tb_bake_outcome_t *out, tb_err_t *err)
{
    double started = tb_now_s();
    memset(out, 0, sizeof *out);
    tb_planet_input_t in = {0};
    tb_plan_t *plan = NULL;
    tb_dispatch_t *d = NULL;
    s_composite_t c = {0};
    int *job_region = NULL;
    bool *selected = NULL;
    float *planet = NULL;
    int rc = -1;
    out->bad_input = true; /* until the jobs are dispatched */
    if (tb_planet_input_load(o->manifest_path, &o->input, &in, err) != 0)
        return -1;
    int threads = o->dispatch.threads > 0 ? o->dispatch.threads : tb_pool_default_threads();
    plan = tb_plan_new(&in.manifest, &in.painting, threads, err);
    if (!plan)
        goto done;
    const tb_manifest_t *m = tb_plan_manifest(plan);
    int steps = o->steps > 0 ? o->steps : m->solve.steps;
    tb_uplift_probes_t probes;
    if (tb_uplift_probes_compute(m, &probes, err) != 0)
        goto done;
    int n_regions = tb_plan_region_count(plan);
    out->regions_total = n_regions;
    /* region ids are 1..n in plan order; --only may repeat an id or list them in any order */
    selected = tb_calloc((size_t)n_regions + 1, sizeof(bool), "region selection", err);
    if (!selected)
        goto done;
    for (int i = 0; i < o->n_only; i++) {
        if (o->only[i] < 1 || o->only[i] > n_regions) {
            tb_err_set(err, TB_E_INVALID, "--only %lld: no such region; this planet has regions "
                       "1..%d (see `terrain plan`)", (long long)o->only[i], n_regions);
            goto done;
        }
        selected[o->only[i] - 1] = true;
    }
    for (int ri = 0; ri < n_regions; ri++)
        if (o->n_only == 0)
            selected[ri] = true;
    if (tb_fs_mkdir_p(o->out_dir, err) != 0)
        goto done;
    char store[4200];
    if (tb_fs_join(store, sizeof store, o->out_dir, ".cache", err) != 0)
        goto done;
    c.plan = plan;
    c.w = in.planet_w;
    c.h = in.planet_h;
    size_t cells = (size_t)c.w * (size_t)c.h;
    c.height = tb_calloc(cells, sizeof(float), "planet heights", err);
    c.area = tb_calloc(cells, sizeof(float), "planet drainage area", err);
    c.basin = tb_malloc(cells * sizeof(int32_t), "planet basins", err);
    c.uplift = tb_calloc(cells, sizeof(float), "planet uplift", err);
    c.solved = tb_calloc(cells, 1, "planet solved mask", err);
    job_region = tb_calloc((size_t)n_regions + 1, sizeof(int), "job list", err);
    if (!c.height || !c.area || !c.basin || !c.uplift || !c.solved || !job_region)
        goto done;
    memset(c.basin, 0xff, cells * sizeof(int32_t));
    c.job_region = job_region;
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, m->cell_m);
    sp.talus_deg = m->solve.talus_deg;
    sp.m = m->solve.m;
    sp.n = m->solve.n;
    c.stats = tb_stats_new(&sp, err);
    if (!c.stats)
        goto done;

    tb_dispatch_opts_t dopts = o->dispatch;
    dopts.store_dir = store;
    dopts.on_result = s_on_result;
    dopts.on_tick = s_on_tick;
    dopts.user = &c;
    if (!dopts.label)
        dopts.label = "regions";
    d = tb_dispatch_new(&dopts, err);
    if (!d)
        goto done;
    int n_jobs = 0;
    for (int ri = 0; ri < n_regions; ri++) {
        const tb_plan_region_t *reg = tb_plan_region(plan, ri);
        if (!selected[ri])
            continue;
        tb_grid_t *classes = NULL, *mask = NULL;
        if (tb_plan_region_grids(plan, ri, &classes, &mask, err) != 0)
            goto done;
        tb_region_spec_t spec = {.region_id = reg->id,
                                 .box = reg->box,
                                 .steps = steps,
                                 .manifest = m,
                                 .probes = &probes,
                                 .classes = tb_grid_cu8(classes),
                                 .solve_mask = tb_grid_cu8(mask),
                                 .no_incision = o->no_incision};
        void *bytes;
        size_t n;
        int erc = tb_region_spec_encode(&spec, &bytes, &n, err);
        tb_grid_destroy(&classes);
        tb_grid_destroy(&mask);
        if (erc != 0)
            goto done;
        char label[32];
        snprintf(label, sizeof label, "region %d", reg->id);
        tb_job_desc_t desc = {.kind = "region",
                              .spec = bytes,
                              .spec_bytes = n,
                              .weight = (double)reg->box_cells * steps,
                              .cells = (double)reg->land_cells,
                              .label = label};
        int64_t idx = tb_dispatch_add(d, &desc, err);
        free(bytes);
        if (idx < 0)
            goto done;
        job_region[idx] = ri;
        n_jobs++;
        out->land_cells_solved += reg->land_cells;
    }
    out->regions_solved = n_jobs;
    /* an --only that names every region is a whole bake */
    out->partial = n_jobs < n_regions;
    out->bad_input = false;
    c.live = tb_report_live_new(o->out_dir, plan, steps, n_jobs);
    tb_report_live_phase(c.live, "solve", d);
    if (!o->quiet)
        tb_log_info("baking %d of %d regions, %d steps, into %s", n_jobs, n_regions, steps,
                    o->out_dir);
    int drc = tb_dispatch_run(d, err);
    tb_dispatch_stats(d, &out->dispatch);
    if (drc != 0)
        goto done;
    if (c.failed) {
        *err = c.err;
        goto done;
    }
    tb_report_live_phase(c.live, "write outputs", d);
    /* the planet: ocean at its painted depth, land as solved (sea level where not solved) */
    planet = tb_malloc(cells * sizeof(float), "planet heightmap", err);
    if (!planet)
        goto done;
    const uint8_t *cls = tb_grid_cu8(tb_plan_classes(plan));
    for (size_t i = 0; i < cells; i++) {
        const tb_class_t *k = &m->legend.classes[cls[i]];
        planet[i] = k->kind == TB_CLASS_OCEAN ? (float)-k->depth_m : c.height[i];
    }
    if (tb_stats_extent_measure(planet, cells, m->elevation_min_m, m->elevation_max_m, &out->extent,
                                err) != 0)
        goto done;
    out->clip_fraction = (double)out->extent.clipped / (double)cells;
    char partial[256];
    if (out->partial)
        s_partial_note(selected, n_jobs, n_regions, partial, sizeof partial);
    if (s_write_outputs(o, plan, &c, planet, d, out, selected, out->partial ? partial : NULL,
                        started, steps, &probes, err) != 0)
        goto done;
    out->seconds = tb_now_s() - started;
    if (out->clip_fraction > TB_BAKE_MAX_CLIP_FRACTION) {
        tb_err_set(err, TB_E_INVALID,
                   "%.3f %% of the planet's cells lie outside elevation_m [%g, %g] (%g .. %g m) and "
                   "were clipped; more than %.1f %% fails the bake: widen elevation_m in the "
                   "manifest or lower the uplift",
                   out->clip_fraction * 100, m->elevation_min_m, m->elevation_max_m,
                   out->extent.min_m, out->extent.max_m, TB_BAKE_MAX_CLIP_FRACTION * 100);
        goto done;
    }
    rc = 0;
done:
    tb_report_live_finish(c.live, d, out->meta_path[0] != '\0', rc == 0 ? NULL : err);
    tb_report_live_destroy(&c.live);
    out->stats = c.stats;
    c.stats = NULL;
    free(planet);
    free(c.height);
    free(c.area);
    free(c.basin);
    free(c.uplift);
    free(c.solved);
    free(job_region);
    free(selected);
    tb_dispatch_destroy(&d);
    tb_plan_destroy(&plan);
    tb_planet_input_free(&in);
    return rc;
}
