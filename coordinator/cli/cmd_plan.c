/* `terrain plan [MANIFEST] [--out DIR] [--seed N] [--circumference-km K] [--set KEY=VALUE]...`:
 * reads the painting, cuts the planet into regions, solves nothing. Prints the region and class
 * tables, what was dropped and the bake-time floor; writes plan.json, map_class.png,
 * map_regions.png and map_tiles.png to DIR. The files are made in memory and written to temporary
 * names first, so a failed plan leaves nothing under a final name (docs/bake.md). The plan's two
 * planet-sized rasters live meanwhile in unlinked files of DIR, mapped, so its memory is a band of
 * the planet at any size (docs/plan.md, "The streamed plan"). Exit status: 0 planned, 1 the outputs
 * could not be written, 2 bad usage or input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/args.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/png_io.h"
#include "coordinator/bake/bake.h"
#include "coordinator/bake/tiles_select.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"
#include "coordinator/maps/plan_maps.h"
#include "coordinator/bake/planet_input.h"
#include "jobs/detail/params.h"
#include "jobs/plan/limits.h"
#include "jobs/plan/plan.h"

#define S_USAGE                                                                                    \
    "terrain plan [MANIFEST] [--out DIR] [--seed N] [--circumference-km K] [--set KEY=VALUE]..."

static int s_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static void s_print_regions(FILE *out, const tb_plan_t *p)
{
    const tb_plan_summary_t *s = tb_plan_summary(p);
    const tb_manifest_t *m = tb_plan_manifest(p);
    fprintf(out,
            "regions: %d (ocean margin %g km = %lld cells; land dilated by %.1f cells to group)\n",
            tb_plan_region_count(p), m->regions.ocean_margin_km, (long long)s->margin_cells,
            s->margin_cells / 2.0);
    fprintf(out, "  %4s  %-16s %12s  %-24s %12s  %s\n", "id", "landmasses", "land cells",
            "box x0,y0 w x h", "box cells", "seam");
    for (int r = 0; r < tb_plan_region_count(p); r++) {
        const tb_plan_region_t *reg = tb_plan_region(p, r);
        char lms[64] = "", box[64];
        size_t len = 0;
        for (int k = 0; k < reg->n_landmasses && len < sizeof lms - 8; k++)
            len += (size_t)snprintf(lms + len, sizeof lms - len, "%s%d", k ? "," : "",
                                    reg->landmass_ids[k]);
        if (len >= sizeof lms - 8)
            snprintf(lms + sizeof lms - 8, 8, ",...");
        snprintf(box, sizeof box, "%lld,%lld %lldx%lld%s", (long long)reg->box.x0,
                 (long long)reg->box.y0, (long long)reg->box.w, (long long)reg->box.h,
                 tb_frame_wraps(&reg->box) ? " ring" : "");
        const char *seam = reg->straddles_seam ? "land" : reg->box_wraps ? "box" : "-";
        fprintf(out, "  %4d  %-16s %12lld  %-24s %12lld  %s\n", reg->id, lms,
                (long long)reg->land_cells, box, (long long)reg->box_cells, seam);
    }
    fprintf(out,
            "  land %lld cells (%.1f %% of the planet) in %lld region cells; largest region "
            "%lld cells\n",
            (long long)s->land_cells,
            100.0 * (double)s->land_cells / (double)(s->planet_w * s->planet_h),
            (long long)s->region_cells, (long long)s->largest_region_cells);
}

static void s_print_classes(FILE *out, const tb_plan_t *p)
{
    const tb_manifest_t *m = tb_plan_manifest(p);
    fprintf(out,
            "classes (K %g, m %g, n %g, talus %g deg, cell %g m; angles at one cell, "
            "massif/floor rate):\n",
            m->solve.k, m->solve.m, m->solve.n, m->solve.talus_deg, m->cell_m);
    fprintf(out, "  %-14s %11s  %-13s %6s  %-13s  %-13s  %8s  %s\n", "class", "cells",
            "uplift mm/yr", "k_mult", "divide deg", "typical deg", "U_max", "clamped");
    int clamped = 0;
    for (int k = 0; k < tb_plan_class_count(p); k++) {
        const tb_plan_class_row_t *r = tb_plan_class_row(p, k);
        char up[32], div[32], typ[32];
        snprintf(up, sizeof up, "%.3g/%.3g", r->massif_mm_yr, r->floor_mm_yr);
        snprintf(div, sizeof div, "%.1f/%.1f", r->divide_deg, r->floor_divide_deg);
        snprintf(typ, sizeof typ, "%.1f/%.1f", r->typical_deg, r->floor_typical_deg);
        const char *cl = r->floor_clamped ? "yes" : r->clamped ? "massifs only" : "-";
        clamped += r->clamped;
        fprintf(out, "  %-14s %11lld  %-13s %6.2f  %-13s  %-13s  %8.3f  %s\n",
                m->legend.classes[r->class_index].name, (long long)r->cells, up, r->k_mult, div,
                typ, r->u_max_mm_yr, cl);
    }
    fprintf(out,
            "  read `typical` (the median slope), not `divide` (the steepest a rate can make)");
    if (clamped)
        fprintf(out, ";\n  a clamped class is shaped by the repose clamp, not by erosion: above "
                     "U_max more uplift makes\n  no steeper ground, only more relief and a longer "
                     "bake");
    fprintf(out, "\n");
}

static void s_print(FILE *out, const tb_plan_t *p, int cores)
{
    const tb_plan_summary_t *s = tb_plan_summary(p);
    const tb_manifest_t *m = tb_plan_manifest(p);
    char seed[48] = "";
    if (!m->is_demo)
        snprintf(seed, sizeof seed, " (seed %llu)", (unsigned long long)m->seed);
    fprintf(out,
            "plan: %s%s: %lld x %lld cells of %g m (%g km round), painting %lld x %lld (%lld "
            "cell%s a pixel)\n",
            m->source, seed, (long long)s->planet_w, (long long)s->planet_h, m->cell_m,
            m->circumference_km, (long long)s->painting_w, (long long)s->painting_h,
            (long long)s->cells_per_pixel, s->cells_per_pixel == 1 ? "" : "s");
    const tb_classify_report_t *c = &s->classify;
    fprintf(out, "unmatched pixels: %lld (%.4f %%, legend allows %g %%)",
            (long long)c->unmatched_pixels, 100.0 * c->unmatched_fraction,
            100.0 * m->legend.max_unmatched_fraction);
    if (c->unmatched_pixels) {
        char colours[700];
        tb_classify_describe_unmatched(c, colours, sizeof colours);
        fprintf(out, "; dropped and filled from their neighbours in %d round%s: %s", c->fill_rounds,
                c->fill_rounds == 1 ? "" : "s", colours);
    }
    fprintf(out, "\nspeckle: %lld isolated pixel%s took their neighbours' class\n",
            (long long)c->speckle_pixels, c->speckle_pixels == 1 ? "" : "s");
    fprintf(out,
            "seam disagreement: %lld of %lld rows (%.2f %%) differ about land between x = 0 "
            "and x = %lld%s\n",
            (long long)s->seam_rows, (long long)s->planet_h, s->seam_percent,
            (long long)s->planet_w - 1,
            s->seam_percent > 1 ? "; paint round the edge: the two columns are neighbours" : "");
    fprintf(out,
            "landmasses: %lld found, %lld kept, %lld dropped under %g km2 (%lld cells, %.4f "
            "km2 in all)\n",
            (long long)s->landmasses_found, (long long)s->landmasses_kept, (long long)s->dropped,
            m->regions.min_landmass_km2, (long long)s->dropped_cells, s->dropped_area_km2);
    s_print_regions(out, p);
    s_print_classes(out, p);
    fprintf(out,
            "snapped wavelengths: massif %g km (asked %g), rock %g km (asked %g), fault grain "
            "%g km (asked %g)\n",
            m->massif.wavelength_snapped_km, m->massif.wavelength_km, m->rock.wavelength_snapped_km,
            m->rock.wavelength_km, m->faults.grain_wavelength_snapped_km,
            m->faults.grain_wavelength_km);
    double floor_s = tb_plan_estimate_floor_s(p, cores);
    double largest_s = (double)s->largest_region_cells * m->solve.steps * TB_PLAN_NS_PER_CELL_STEP *
                       1e-9 / (double)(cores < 1 ? 1 : cores);
    fprintf(out,
            "estimate: at least %.0f s on %d core%s (%lld region cells x %d steps x %g ns per "
            "cell-step on one thread, measured by scripts/bench solve, spread perfectly over "
            "the cores); the largest region alone is at least %.0f s on all of them.\n  A FLOOR: "
            "threads do not scale perfectly, and steep classes pay up to %d hillslope sub-steps "
            "a step.\n",
            floor_s, cores, cores == 1 ? "" : "s", (long long)s->region_cells, m->solve.steps,
            TB_PLAN_NS_PER_CELL_STEP, largest_s, m->solve.max_hillslope_substeps);
}

typedef struct {
    const char *name;
    void *data;
    size_t bytes;
} s_output_t;

/* Writes every output to a temporary name, then renames them all; on a failure before the renames
 * nothing has a final name. */
static int s_write_all(const char *dir, s_output_t *outs, int n, tb_err_t *err)
{
    tb_fs_tmp_t tmp[8];
    int opened = 0, rc = 0;
    if (tb_fs_mkdir_p(dir, err) != 0)
        return -1;
    for (int k = 0; k < n && rc == 0; k++) {
        char path[TB_PATH_MAX];
        if (tb_fs_join(path, sizeof path, dir, outs[k].name, err) != 0 ||
            tb_fs_tmp_open(&tmp[k], path, err) != 0) {
            rc = -1;
            break;
        }
        opened++;
        if (fwrite(outs[k].data, 1, outs[k].bytes, tmp[k].fp) != outs[k].bytes ||
            fflush(tmp[k].fp) != 0)
            rc = tb_err_set(err, TB_E_IO, "%s: write failed", tmp[k].tmp_path);
    }
    if (rc != 0) {
        for (int k = 0; k < opened; k++)
            tb_fs_tmp_abort(&tmp[k]);
        return -1;
    }
    for (int k = 0; k < n; k++)
        if (tb_fs_tmp_commit(&tmp[k], err) != 0) {
            for (int q = k + 1; q < n; q++)
                tb_fs_tmp_abort(&tmp[q]);
            return -1;
        }
    return 0;
}

/* The detail tile lattice of a plan and the content of each tile (docs/tiles.md), read from the
 * plan's class raster once; *content is allocated. Returns the number of land and coast tiles, or
 * -1. */
static int s_tiles(const tb_plan_t *p, tb_tile_lattice_t *L, tb_detail_params_t *dp,
                   uint8_t **content, tb_err_t *err)
{
    const tb_manifest_t *m = tb_plan_manifest(p);
    const tb_plan_summary_t *s = tb_plan_summary(p);
    *content = NULL;
    tb_detail_params_defaults(dp);
    tb_manifest_detail_params(m, dp);
    if (tb_tile_lattice_make(L, s->planet_w, s->planet_h, m->cell_m, dp->size_km, dp->cell_m,
                             err) != 0)
        return -1;
    *content = malloc((size_t)tb_tile_count(L));
    if (!*content)
        return tb_err_set(err, TB_E_NOMEM, "plan: out of memory for the tile census");
    int n = tb_plan_tile_census(p, L, *content);
    if (n < 0)
        tb_err_set(err, TB_E_INTERNAL,
                   "plan: the tile lattice (%lld x %lld cells) is not the plan's planet",
                   (long long)L->geo_w, (long long)L->geo_h);
    return n;
}

/* overlay.json and map_overlay.png of a planet with an overlay, into outs[0..1]. */
static int s_render_overlay(const tb_plan_t *p, const tb_overlay_features_t *ov, s_output_t outs[2],
                            tb_err_t *err)
{
    outs[0].name = "overlay.json";
    outs[1].name = "map_overlay.png";
    char *json = tb_overlay_features_json(ov, tb_plan_manifest(p)->overlay_path);
    if (!json)
        return tb_err_set(err, TB_E_NOMEM, "plan: out of memory writing overlay.json");
    outs[0].data = json;
    outs[0].bytes = strlen(json);
    int64_t mw, mh;
    const uint8_t *marks = tb_overlay_features_map(ov, &mw, &mh);
    tb_image_t img;
    if (tb_plan_map_overlay(p, tb_overlay_features_legend(ov), marks, mw, mh, TB_PLAN_MAP_MAX_WIDTH,
                            &img, err) != 0)
        return -1;
    unsigned char *png;
    int rc = tb_png_encode(&img, 1, &png, &outs[1].bytes, err);
    tb_image_free(&img);
    outs[1].data = png;
    return rc;
}

/* Renders the four outputs of a plan into memory; the tile census is the caller's. */
static int s_render(const tb_plan_t *p, const tb_tile_lattice_t *L, const uint8_t *content,
                    s_output_t outs[4], tb_err_t *err)
{
    memset(outs, 0, sizeof *outs * 4);
    outs[0].name = "plan.json";
    outs[1].name = "map_class.png";
    outs[2].name = "map_regions.png";
    outs[3].name = "map_tiles.png";
    char *json = tb_plan_to_json(p);
    if (!json)
        return tb_err_set(err, TB_E_NOMEM, "plan: out of memory writing plan.json");
    outs[0].data = json;
    outs[0].bytes = strlen(json);
    for (int k = 1; k < 4; k++) {
        tb_image_t img;
        int rc = k == 1   ? tb_plan_map_class(p, TB_PLAN_MAP_MAX_WIDTH, &img, err)
                 : k == 2 ? tb_plan_map_regions(p, TB_PLAN_MAP_MAX_WIDTH, &img, err)
                          : tb_plan_map_tiles(p, L, content, TB_PLAN_MAP_MAX_WIDTH, &img, err);
        if (rc != 0)
            return -1;
        unsigned char *png;
        rc = tb_png_encode(&img, 1, &png, &outs[k].bytes, err);
        tb_image_free(&img);
        if (rc != 0)
            return -1;
        outs[k].data = png;
    }
    return 0;
}

/* The tile lines of the plan: count, land and coast, estimate, and what the bake would refuse of
 * them (their lattice, their jobs' memory against job_memory_bytes). */
static void s_print_tiles(FILE *out, const tb_plan_t *p, const tb_tile_lattice_t *Lp,
                          const tb_detail_params_t *dpp, const uint8_t *content, int cores,
                          double job_memory_bytes)
{
    const tb_tile_lattice_t L = *Lp;
    const tb_detail_params_t dp = *dpp;
    tb_err_t err;
    int64_t land = 0, coast = 0;
    for (int64_t k = 0; k < tb_tile_count(&L); k++) {
        land += content[k] == TB_TILE_LAND;
        coast += content[k] == TB_TILE_COAST;
    }
    int64_t n = land + coast;
    double each = tb_detail_tile_seconds(&dp);
    fprintf(out,
            "tiles: %lld of %g km at %g m (%lld x %lld samples; %lld columns x %lld rows%s), %lld "
            "land and %lld coast to bake, margin %d; about %.1f s a tile on one core, %.0f s on "
            "%d core%s (map_tiles.png)\n",
            (long long)tb_tile_count(&L), dp.size_km, dp.cell_m, (long long)L.tile_cells,
            (long long)L.tile_cells, (long long)L.cols, (long long)L.rows,
            L.lattice_h % L.tile_cells ? ", the last row partial" : "", (long long)land,
            (long long)coast, dp.margin_cells, each, each * (double)n / (cores < 1 ? 1 : cores),
            cores, cores == 1 ? "" : "s");
    /* the bake refuses a planet a tile and its margin do not fit round (docs/tiles.md) */
    tb_detail_params_t bp;
    tb_tile_lattice_t bl;
    if (tb_bake_tile_params(tb_plan_manifest(p), L.geo_w, L.geo_h, &bp, &bl, &err) != 0)
        fprintf(out, "tiles: %s\n", err.msg);
    else if (tb_bake_check_tile_memory(&bl, &bp, job_memory_bytes, &err) != 0)
        fprintf(out, "tiles: the bake refuses them: %s\n", err.msg);
}

/* The plan's two rasters, in files of out_dir that vanish with the process (planet_input.h). */
static int s_map_rasters(const char *out_dir, const tb_planet_input_t *in, tb_raster_t *classes,
                         tb_raster_t *labels, tb_err_t *err)
{
    if (tb_raster_map_temp(classes, out_dir, ".plan-classes", in->planet_w, in->planet_h, 1, err) !=
        0)
        return -1;
    if (tb_raster_map_temp(labels, out_dir, ".plan-labels", in->planet_w, in->planet_h, 4, err) !=
        0) {
        tb_raster_unmap(classes);
        return -1;
    }
    return 0;
}

static int s_run(int argc, char **argv, tb_overrides_t *overrides)
{
    const char *out_dir = "out/plan";
    int64_t seed = 0;
    double km = 0, job_memory_gb = 0;
    bool seed_given = false, km_given = false;
    const tb_opt_t opts[] = {
        {"out", TB_OPT_STRING, &out_dir, NULL, "DIR", "where the plan goes (default out/plan)"},
        TB_VERB_OPT_SET(overrides),
        TB_VERB_OPT_SEED(&seed, &seed_given,
                         "seed of the demo planet (default 7), or overriding the manifest's"),
        TB_VERB_OPT_CIRCUMFERENCE(&km, &km_given,
                                  "circumference of the demo planet (default 25); a manifest sets "
                                  "its own"),
        {"job-memory-gb", TB_OPT_DOUBLE, &job_memory_gb, NULL, "G",
         "the memory one job may take on a worker, as `terrain bake` takes it (default: 3/4 of "
         "this machine's): a region needing more is refused",
         TB_OPT_DRANGE(0.01, 1e6)},
    };
    tb_verb_t v = {.name = "plan", .usage = S_USAGE, TB_VERB_OPTS(opts), .max_positional = 1};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    tb_input_options_t opt = {seed_given, (uint64_t)seed, km_given, km, overrides};
    tb_planet_input_t in;
    double t0 = tb_now_s();
    if (tb_planet_input_load(v.n_positional ? v.positional[0] : NULL, &opt, &in, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    const char *names[] = {"plan.json",     "map_class.png", "map_regions.png",
                           "map_tiles.png", "overlay.json",  "map_overlay.png"};
    const char *inputs[] = {v.n_positional ? v.positional[0] : NULL, in.manifest.legend_path,
                            in.manifest.painting_path, in.manifest.overlay_path,
                            in.manifest.overlay_legend_path};
    struct stat out_st;
    bool not_dir = stat(out_dir, &out_st) == 0 && !S_ISDIR(out_st.st_mode);
    if (not_dir)
        tb_err_set(&err, TB_E_INVALID, "--out %s: exists and is not a directory", out_dir);
    if (not_dir || tb_fs_check_outputs(out_dir, names, 6, inputs, 5, &err) != 0 ||
        tb_planet_input_overlay_map(&in, tb_plan_map_factor(in.planet_w, TB_PLAN_MAP_MAX_WIDTH),
                                    &err) != 0) {
        tb_planet_input_free(&in);
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    }
    int cores = s_cores();
    /* the rasters live in the output directory; made here, it goes again if the plan fails */
    bool made_dir = !tb_fs_exists(out_dir);
    tb_raster_t classes, labels;
    if (tb_fs_mkdir_p(out_dir, &err) != 0 || s_map_rasters(out_dir, &in, &classes, &labels, &err)) {
        tb_planet_input_free(&in);
        if (made_dir)
            rmdir(out_dir); /* only when empty (the rasters' files are unlinked when made) */
        return tb_verb_error(&v, TB_EXIT_FAILED, &err);
    }
    double t1 = tb_now_s();
    tb_plan_t *p = tb_plan_new(&in.manifest, tb_planet_input_rows(&in), &classes, &labels,
                               cores < 2 ? cores : 2, &err);
    tb_overlay_features_t *ov = NULL;
    int64_t jitter_moved = 0;
    if (p && tb_planet_input_take_overlay(&in, &ov, &jitter_moved, &err) != 0)
        tb_plan_destroy(&p);
    tb_planet_input_free(&in);
    tb_uplift_probes_t probes;
    if (p &&
        (tb_plan_check_land_and_sea(p, &err) != 0 ||
         tb_uplift_probes_compute(tb_plan_manifest(p), &probes, &err) != 0 ||
         tb_plan_check_jobs(p, &probes, &err) != 0 ||
         tb_plan_check_limits(
             p, job_memory_gb > 0 ? job_memory_gb * 1e9 : tb_bake_default_job_memory(), &err) != 0))
        tb_plan_destroy(&p);
    if (!p) {
        tb_overlay_features_destroy(&ov);
        tb_raster_unmap(&classes);
        tb_raster_unmap(&labels);
        if (made_dir)
            rmdir(out_dir); /* only when empty: it held nothing but the vanished rasters */
        tb_err_prefix(&err, "nothing written to %s", out_dir);
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    }
    double t2 = tb_now_s();
    tb_tile_lattice_t L;
    tb_detail_params_t dp;
    uint8_t *content = NULL;
    s_output_t outs[6] = {{0}};
    int n_outs = ov ? 6 : 4;
    int rc = s_tiles(p, &L, &dp, &content, &err) < 0 ? -1 : 0;
    if (rc == 0)
        rc = s_render(p, &L, content, outs, &err);
    if (rc == 0 && ov)
        rc = s_render_overlay(p, ov, outs + 4, &err);
    if (rc == 0)
        rc = s_write_all(out_dir, outs, n_outs, &err);
    for (int k = 0; k < 6; k++)
        free(outs[k].data);
    if (rc != 0) {
        tb_overlay_features_destroy(&ov);
        free(content);
        tb_plan_destroy(&p);
        tb_raster_unmap(&classes);
        tb_raster_unmap(&labels);
        return tb_verb_error(&v, TB_EXIT_FAILED, &err);
    }
    s_print(stdout, p, cores);
    if (ov) {
        char line[512];
        tb_overlay_features_line(ov, line, sizeof line);
        printf("%s; the coast jitter moved %lld painting pixels (overlay.json, map_overlay.png)\n",
               line, (long long)jitter_moved);
        tb_overlay_features_destroy(&ov);
    }
    if (tb_overrides_count(overrides) > 0) {
        char given[1024];
        tb_overrides_describe(overrides, given, sizeof given);
        printf("overrides: %s (plan.json's manifest holds them)\n", given);
    }
    s_print_tiles(stdout, p, &L, &dp, content, cores,
                  job_memory_gb > 0 ? job_memory_gb * 1e9 : tb_bake_default_job_memory());
    free(content);
    printf("wrote %s/plan.json, map_class.png, map_regions.png and map_tiles.png%s\n", out_dir,
           n_outs > 4 ? ", overlay.json and map_overlay.png" : "");
    fflush(stdout);
    tb_log_info("planned in %.2f s (input %.2f s, plan %.2f s, maps and writing %.2f s)",
                tb_now_s() - t0, t1 - t0, t2 - t1, tb_now_s() - t2);
    tb_plan_destroy(&p);
    tb_raster_unmap(&classes);
    tb_raster_unmap(&labels);
    return 0;
}

int tb_cmd_plan(int argc, char **argv)
{
    return tb_verb_run_with_overrides(argc, argv, s_run);
}
