/* The whole phase: the planet a partial bake's tiles read (docs/tiles.md, "Tiles of a partial
 * bake"). Runs only in a partial bake (--only) with tiles; a whole bake's tiles read the planet.
 *
 * The land of every region this bake did not solve but whose result of this build the store holds
 * is written, as the solve composites it, into copies of the land heights and drainage area
 * (coordinator/bake/tiles_partial.c), and the composite rule gives the whole bake's composite
 * wherever the land is so known. Without the coastal pass that is what the tiles read: the tiles
 * phase bakes the tiles whose windows hold only known land. With it, the pass runs over the whole
 * planet, so the tiles need every region: when each one is solved here or stored, the coast job
 * runs over that whole composite with every region's river mouths - the same spec bytes as the
 * whole bake's coast job, so the same store key (after a whole bake it is a store hit) - and its
 * heights are what the tiles read; when some are neither, ctx->whole_missing names them and the
 * tiles phase is skipped with that reason (meta.json's "tiles" says which). Nothing here touches
 * the planet: the partial bake's own outputs, its coast included, keep its regions only. Reads:
 * classes, land_m, area_m2, solved. Writes no planet array (ctx->whole_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/bake/phase.h"

#define S_NAMED 8 /* missing regions named in the message; meta.json lists them all */

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    if (!ctx->opts->tiles)
        return "--no-tiles";
    if (!ctx->out->partial)
        return "a whole bake: the tiles read its planet";
    return NULL;
}

/* The skip reason for the tiles phase and meta.json's "tiles" record of it. */
static int s_missing(tb_bake_ctx_t *ctx, const int *missing, int n_missing, tb_err_t *err)
{
    int total = tb_plan_region_count(ctx->plan);
    char ids[256];
    size_t k = 0;
    ids[0] = '\0';
    for (int i = 0; i < n_missing && i < S_NAMED && k < sizeof ids; i++)
        k += (size_t)snprintf(ids + k, sizeof ids - k, "%s%d", i ? "," : "", missing[i]);
    if (n_missing > S_NAMED && k < sizeof ids)
        snprintf(ids + k, sizeof ids - k, " and %d more", n_missing - S_NAMED);
    snprintf(ctx->whole_missing, sizeof ctx->whole_missing,
             "a partial bake (%s) with the coastal pass: the pass runs over the whole planet, so "
             "its tiles need every region's land, and region%s %s (%d of %d) %s neither solved "
             "here nor stored in %s for this build; bake the whole planet (or --only those "
             "regions) into %s once and a partial bake there bakes its tiles, or bake with "
             "--no-coast (docs/tiles.md)",
             ctx->partial ? ctx->partial : "--only", n_missing > 1 ? "s" : "", ids, n_missing,
             total, n_missing > 1 ? "are" : "is", ctx->store_dir, ctx->opts->out_dir);
    cJSON *o = cJSON_CreateObject();
    cJSON *list = cJSON_CreateArray();
    if (!o || !list) {
        cJSON_Delete(o);
        cJSON_Delete(list);
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    }
    cJSON_AddStringToObject(o, "phase_skipped", ctx->whole_missing);
    for (int i = 0; i < n_missing; i++)
        cJSON_AddItemToArray(list, cJSON_CreateNumber(missing[i]));
    cJSON_AddItemToObject(o, "regions_missing", list);
    cJSON_AddNumberToObject(o, "regions_missing_count", n_missing);
    cJSON_AddNumberToObject(o, "regions_total", total);
    ctx->tiles_skip_meta = o;
    return 0;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    double t0 = tb_now_s();
    const tb_planet_t *p = ctx->planet;
    size_t cells = tb_planet_cells(p);
    bool coast = !ctx->opts->no_coast;
    int n_regions = tb_plan_region_count(ctx->plan);
    float *height = tb_malloc(cells * sizeof *height, "whole-planet heights", err);
    float *area = tb_malloc(cells * sizeof *area, "whole-planet areas", err);
    uint8_t *known = tb_malloc(cells, "whole-planet land known", err);
    int *missing = tb_calloc((size_t)n_regions + 1, sizeof *missing, "missing regions", err);
    tb_region_mouth_t *mouths = NULL;
    size_t n_mouths = 0;
    int n_missing = 0;
    void *spec = NULL;
    size_t n = 0;
    tb_coast_result_t r = {0};
    cJSON *record = NULL;
    int rc = -1;
    if (!height || !area || !known || !missing)
        goto done;
    /* the land goes into `height`, which the composite rule then turns into heights in place */
    if (tb_bake_tiles_borrow(ctx, coast, height, area, known, coast ? &mouths : NULL, &n_mouths,
                             missing, &n_missing, &ctx->whole_borrowed, err) != 0)
        goto done;
    if (coast && n_missing > 0) {
        rc = s_missing(ctx, missing, n_missing, err);
        goto done;
    }
    tb_bake_composite_heights(ctx->manifest, tb_planet_cclasses(p), height, height, cells);
    if (!ctx->opts->quiet)
        tb_log_info("partial bake: the tiles borrow %d stored region(s)%s", ctx->whole_borrowed,
                    coast ? "; the coastal pass runs again over the whole composite" : "");
    if (coast) {
        if (tb_bake_coast_spec(ctx, height, mouths, n_mouths, &spec, &n, err) != 0 ||
            tb_bake_coast_job(ctx, spec, n, "coast of the whole composite", &r, &record, err) != 0)
            goto done;
        memcpy(height, r.height_m, cells * sizeof *height);
        ctx->whole_exposure = r.exposure; /* the tiles' shore pass reads them */
        ctx->whole_moved_m = r.moved_m;
        r.exposure = NULL;
        r.moved_m = NULL;
        cJSON *c = cJSON_CreateObject();
        if (!c) {
            tb_err_set(err, TB_E_NOMEM, "out of memory");
            goto done;
        }
        cJSON_AddStringToObject(c, "over",
                                "the whole composite: this bake's regions and the stored ones, "
                                "with every region's river mouths (the whole bake's coast job)");
        cJSON_AddNumberToObject(c, "seconds", tb_now_s() - t0);
        cJSON_AddItemToObject(c, "dispatch", record);
        record = NULL;
        ctx->whole_coast = c;
    }
    ctx->whole_height_m = height;
    ctx->whole_area_m2 = area;
    ctx->whole_known = known;
    height = area = NULL;
    known = NULL;
    rc = 0;
done:
    cJSON_Delete(record);
    tb_coast_result_free(&r);
    free(spec);
    free(mouths);
    free(missing);
    free(height);
    free(area);
    free(known);
    if (rc != 0)
        tb_err_prefix(err, "the whole planet for the tiles");
    return rc;
}

const tb_phase_t tb_phase_whole = {
    .name = "whole",
    .reads = TB_PLANET_BIT(CLASSES) | TB_PLANET_BIT(LAND_M) | TB_PLANET_BIT(AREA_M2) |
             TB_PLANET_BIT(SOLVED),
    .writes = 0,
    .skip = s_skip,
    .run = s_run,
};
