/* The tiles_index phase: tiles/index.json, the list of every tile this bake wrote in lattice order
 * with its origin, size, samples, encoding and the XXH3 of its files (written last, once every tile
 * is in, however their results arrived), and meta.json's "tiles" (counts, margins, parameters, the
 * dispatch record, the pooled detail statistics). After --tiles-only the re-run tiles' entries
 * replace theirs in the previous index (coordinator/bake/reuse.c). Reads: plan, tile_list,
 * tile_files, and previous when it was made. Writes: tiles. */
#include <stdlib.h>

#include "common/json.h"
#include "common/log.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"
#include "jobs/detail/erosion_droplets_beyer.h"

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    return ctx->tile_list.skip_reason;
}

/* The pooled detail statistics for meta.json: volumes, channel share, and the slope histogram per
 * class as counts a degree. */
static cJSON *s_stats_json(const tb_tile_stats_t *p, const tb_tile_lattice_t *L,
                           const tb_manifest_t *m)
{
    cJSON *o = cJSON_CreateObject();
    double cell_area = L->cell_m * L->cell_m;
    cJSON_AddNumberToObject(o, "cells", (double)p->cells);
    cJSON_AddNumberToObject(o, "land_cells", (double)p->land_cells);
    cJSON_AddNumberToObject(o, "eroded_m3", (double)p->eroded_q * TB_DROPLET_QUANTUM_M * cell_area);
    cJSON_AddNumberToObject(o, "deposited_m3",
                            (double)p->deposited_q * TB_DROPLET_QUANTUM_M * cell_area);
    cJSON_AddNumberToObject(o, "channel_share_of_land",
                            p->land_cells ? (double)p->channel_cells / (double)p->land_cells : 0);
    cJSON *hist = cJSON_AddObjectToObject(o, "slope_deg_histogram");
    for (int c = 0; c < p->n_classes; c++) {
        int64_t total = 0;
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            total += p->slope_hist[c][k];
        if (total == 0)
            continue;
        double v[TB_TILE_SLOPE_BINS];
        for (int k = 0; k < TB_TILE_SLOPE_BINS; k++)
            v[k] = (double)p->slope_hist[c][k];
        const char *name = c < m->legend.n_classes ? m->legend.classes[c].name : "unmatched";
        cJSON_AddItemToObject(hist, name, cJSON_CreateDoubleArray(v, TB_TILE_SLOPE_BINS));
    }
    return o;
}

/* The index's head: the lattice and the encoding. */
static void s_head(cJSON *index, const tb_bake_plan_t *pl)
{
    const tb_tile_lattice_t *L = &pl->lattice;
    const tb_manifest_t *m = pl->manifest;
    cJSON *lat = cJSON_AddObjectToObject(index, "lattice");
    cJSON_AddNumberToObject(lat, "cell_m", L->cell_m);
    cJSON_AddNumberToObject(lat, "tile_samples", (double)L->tile_cells);
    cJSON_AddNumberToObject(lat, "size_m", (double)L->tile_cells * L->cell_m);
    cJSON_AddNumberToObject(lat, "columns", (double)L->cols);
    cJSON_AddNumberToObject(lat, "rows", (double)L->rows);
    cJSON_AddNumberToObject(lat, "planet_samples_w", (double)L->lattice_w);
    cJSON_AddNumberToObject(lat, "planet_samples_h", (double)L->lattice_h);
    cJSON_AddStringToObject(lat, "last_row",
                            "partial when the planet's height is not a whole "
                            "number of tiles: its tiles are cut at the planet's "
                            "edge (y grows southward, row 0 is the north)");
    cJSON *enc = cJSON_AddObjectToObject(index, "encoding");
    double el[2] = {m->elevation_min_m, m->elevation_max_m};
    cJSON_AddItemToObject(enc, "elevation_m", cJSON_CreateDoubleArray(el, 2));
    cJSON_AddStringToObject(enc, "height",
                            "<id>.png: 16-bit grey, h = lo + v (hi - lo) / 65535; "
                            "<id>.r16: the same samples, little-endian u16");
    cJSON_AddStringToObject(enc, "rows",
                            "row 0 is the tile's north edge (y = origin), as in "
                            "planet_height.png");
    cJSON_AddStringToObject(enc, "maps",
                            "_flow, _wear, _deposit: 8-bit; _splat: RGBA rock, "
                            "grass, sediment, scree or snow (docs/tiles.md)");
    cJSON_AddNumberToObject(index, "margin_cells", pl->tile_params.margin_cells);
}

/* meta.json's "tiles" of a bake that made its tiles. */
static cJSON *s_meta(tb_bake_ctx_t *ctx)
{
    const tb_bake_plan_t *pl = &ctx->plan;
    const tb_bake_tile_list_t *list = &ctx->tile_list;
    const tb_bake_tile_files_t *files = &ctx->tile_files;
    const tb_manifest_t *m = pl->manifest;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "tiles", list->n);
    cJSON_AddNumberToObject(t, "land", list->n_land);
    cJSON_AddNumberToObject(t, "coast", list->n_coast);
    cJSON_AddNumberToObject(t, "lattice_tiles", (double)tb_tile_count(&pl->lattice));
    if (ctx->out->partial) {
        cJSON_AddItemToObject(t, "skipped",
                              list->skipped ? cJSON_Duplicate(list->skipped, true)
                                            : cJSON_CreateArray());
        cJSON_AddNumberToObject(t, "regions_from_store", ctx->regions.borrowed);
        cJSON_AddStringToObject(t, "selection",
                                !ctx->opts->no_coast
                                    ? "the tiles holding land of the regions this bake solved, "
                                      "over the coast of the whole composite"
                                    : "every tile whose window holds only land this bake "
                                      "solved or the store holds");
    }
    cJSON_AddNumberToObject(t, "margin_cells", pl->tile_params.margin_cells);
    cJSON_AddNumberToObject(t, "margin_measured_cells", TB_TILES_MEASURED_MARGIN_CELLS);
    cJSON_AddNumberToObject(t, "margin_required_cells", (double)m->tiles.margin_required_cells);
    cJSON_AddNumberToObject(t, "margin_forced", m->tiles.force_margin);
    cJSON_AddNumberToObject(t, "margin_bound_cells",
                            (double)tb_detail_margin_bound(&pl->tile_params));
    cJSON_AddNumberToObject(t, "from_store", (double)files->from_store);
    cJSON_AddNumberToObject(t, "kept", files->kept); /* a rerun's, as they were (docs/bake.md) */
    cJSON_AddNumberToObject(t, "seconds", files->seconds);
    cJSON_AddItemToObject(t, "parameters", tb_detail_params_to_json(&pl->tile_params));
    cJSON_AddItemToObject(t, "detail_statistics", s_stats_json(&files->pooled, &pl->lattice, m));
    cJSON_AddItemToObject(t, "dispatch", cJSON_Duplicate(files->record, true));
    return t;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    double t0 = tb_now_s();
    cJSON *index = cJSON_CreateObject(), *rerun = NULL;
    cJSON *tiles = cJSON_Duplicate(ctx->tile_files.entries, true);
    int rc = -1;
    if (!index || !tiles) {
        tb_err_set(err, TB_E_NOMEM, "out of memory for tiles/index.json");
        goto done;
    }
    s_head(index, &ctx->plan);
    if (ctx->plan.tile_sel) {
        /* --tiles-only: only the chosen tiles' entries change (coordinator/bake/reuse.c) */
        rerun = tb_bake_tiles_merge(ctx, &tiles, err);
        if (!rerun)
            goto done;
    }
    int n_index = cJSON_GetArraySize(tiles);
    cJSON_AddItemToObject(index, "tiles", tiles);
    tiles = NULL;
    char *text = tb_json_print(index, true);
    if (!text || tb_bake_write_text(ctx, "tiles/index.json", text, err) != 0) {
        free(text);
        goto done;
    }
    free(text);
    if (rerun) {
        cJSON_AddNumberToObject(rerun, "seconds", ctx->tile_files.seconds + tb_now_s() - t0);
        cJSON_AddItemToObject(rerun, "dispatch", cJSON_Duplicate(ctx->tile_files.record, true));
        ctx->tiles.meta = tb_bake_tiles_rerun_meta(ctx, rerun, n_index);
        rerun = NULL; /* taken over */
    } else {
        ctx->tiles.meta = s_meta(ctx);
    }
    rc = ctx->tiles.meta ? 0 : tb_err_set(err, TB_E_NOMEM, "out of memory");
done:
    cJSON_Delete(rerun);
    cJSON_Delete(tiles);
    cJSON_Delete(index);
    return rc;
}

const tb_phase_t tb_phase_tiles_index = {
    .name = "tiles_index",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(TILE_LIST) | TB_ART_BIT(TILE_FILES),
    .reads_maybe = TB_ART_BIT(PREVIOUS),
    .writes = TB_ART_BIT(TILES),
    .writes_files = true,
    .skip = s_skip,
    .run = s_run,
};
