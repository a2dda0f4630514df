/* The tiles_select phase: which detail tiles this bake makes (docs/tiles.md). Every land or coast
 * tile of the lattice, or the ones --tiles-only names; in a partial bake (--only) only those that
 * are the whole bake's bytes (docs/tiles.md, "Tiles of a partial bake"): with the coastal pass,
 * which runs over the whole planet, none while some region is missing (neither solved nor stored:
 * the phase then names them and the tile phases are skipped), else the tiles holding land of the
 * regions this bake solved; without it, the tiles whose window holds only land that was composited.
 * The tiles' contents come from one pass over the class raster and the plan's landmass labels, a
 * band of rows at a time. Reads: plan, regions, classes, solved. Writes: tile_list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"

#define S_NAMED 8 /* missing regions named in the message; meta.json lists them all */

enum { S_LAND = 1, S_SEA = 2, S_SOLVED_LAND = 4 };

static const char *s_skip(const tb_bake_ctx_t *ctx)
{
    if (!ctx->opts->tiles)
        return "--no-tiles";
    if (ctx->opts->measure_margin)
        return ctx->opts->check_seams ? "--check-seams" : "--measure-margin";
    return NULL;
}

/* flags[tile] |= S_LAND, S_SEA, S_SOLVED_LAND (land of a region this bake solved, not borrowed) for
 * what its own cells hold, and land[tile] its land cells: one pass over the rows. */
static int s_contents(tb_bake_ctx_t *ctx, uint8_t *flags, int64_t *land, tb_err_t *err)
{
    const tb_tile_lattice_t *L = &ctx->plan.lattice;
    tb_planet_t *p = ctx->planet;
    uint8_t is_land[256];
    tb_tile_class_t cls[TB_TILE_MAX_CLASSES];
    int n_cls = tb_bake_tile_classes(ctx->plan.manifest, cls);
    for (int c = 0; c < 256; c++)
        is_land[c] = !cls[c < n_cls - 1 ? c : n_cls - 1].ocean;
    /* whether a landmass's region was selected, by landmass id (the plan's labels) */
    const tb_plan_t *plan = ctx->plan.plan;
    int n_lm = tb_plan_landmass_count(plan);
    uint8_t *mine = tb_calloc((size_t)n_lm + 1, 1, "landmass selection", err);
    if (!mine)
        return -1;
    for (int id = 1; id <= n_lm; id++) {
        int rid = tb_plan_landmass_region(plan, id);
        mine[id] = rid >= 1 && rid <= ctx->plan.n_regions && ctx->plan.selected[rid - 1];
    }
    const int32_t *labels = tb_plan_label_raster(plan)->data;
    const uint8_t *classes = tb_planet_cclasses(p);
    int64_t T = L->tile_geo_cells, w = L->geo_w;
    for (int64_t y = 0; y < L->geo_h; y++) {
        const uint8_t *crow = classes + (size_t)y * (size_t)w;
        const int32_t *lrow = labels + (size_t)y * (size_t)w;
        uint8_t *f = flags + (y / T) * L->cols;
        int64_t *n_land = land + (y / T) * L->cols;
        for (int64_t x = 0; x < w; x++) {
            int32_t lm = lrow[x];
            bool here = lm >= 1 && lm <= n_lm && mine[lm];
            bool on = is_land[crow[x]];
            f[x / T] |= on ? (uint8_t)(S_LAND | (here ? S_SOLVED_LAND : 0)) : (uint8_t)S_SEA;
            n_land[x / T] += on;
        }
        if ((y + 1) % T == 0 || y + 1 == L->geo_h) {
            tb_planet_release(p, TB_PLANET_CLASSES, y + 1 - T, y + 1);
            tb_planet_release(p, TB_PLANET_LABELS, y + 1 - T, y + 1);
        }
    }
    free(mine);
    return 0;
}

/* Without the coastal pass: whether every land cell tile `id`'s spec reads (its window and the
 * resampler's stencil, tb_tile_geo_window) was composited. 1, 0, or -1 with *err. */
static int s_covered(tb_bake_ctx_t *ctx, tb_tile_id_t id, tb_err_t *err)
{
    const tb_tile_lattice_t *L = &ctx->plan.lattice;
    tb_planet_t *p = ctx->planet;
    tb_frame_t win, geo;
    if (tb_tile_window(L, id, ctx->plan.tile_params.margin_cells, &win, err) != 0 ||
        tb_tile_geo_window(L, &win, &geo, err) != 0)
        return -1;
    uint8_t is_land[256];
    tb_tile_class_t cls[TB_TILE_MAX_CLASSES];
    int n_cls = tb_bake_tile_classes(ctx->plan.manifest, cls);
    for (int c = 0; c < 256; c++)
        is_land[c] = !cls[c < n_cls - 1 ? c : n_cls - 1].ocean;
    const uint8_t *classes = tb_planet_cclasses(p), *solved = tb_planet_csolved(p);
    int covered = 1;
    for (int64_t j = 0; j < geo.h && covered; j++)
        for (int64_t i = 0; i < geo.w; i++) {
            size_t at = tb_idx(L->geo_w, tb_frame_lattice_x(&geo, i), geo.y0 + j);
            if (is_land[classes[at]] && !solved[at]) {
                covered = 0;
                break;
            }
        }
    tb_planet_release(p, TB_PLANET_CLASSES, geo.y0, geo.y0 + geo.h);
    tb_planet_release(p, TB_PLANET_SOLVED, geo.y0, geo.y0 + geo.h);
    return covered;
}

/* A partial bake with the coastal pass and regions missing: the reason the tile phases are skipped,
 * and meta.json's "tiles" record of it. */
static int s_missing(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_bake_tile_list_t *t = &ctx->tile_list;
    const tb_bake_regions_t *r = &ctx->regions;
    char ids[256];
    size_t k = 0;
    ids[0] = '\0';
    for (int i = 0; i < r->n_missing && i < S_NAMED && k < sizeof ids; i++)
        k += (size_t)snprintf(ids + k, sizeof ids - k, "%s%d", i ? "," : "", r->missing[i]);
    if (r->n_missing > S_NAMED && k < sizeof ids)
        snprintf(ids + k, sizeof ids - k, " and %d more", r->n_missing - S_NAMED);
    snprintf(t->skip_text, sizeof t->skip_text,
             "a partial bake (%s) with the coastal pass: the pass runs over the whole planet, so "
             "its tiles need every region's land, and region%s %s (%d of %d) %s neither solved "
             "here nor stored in %s for this build; bake the whole planet (or --only those "
             "regions) into %s once and a partial bake there bakes its tiles, or bake with "
             "--no-coast (docs/tiles.md)",
             ctx->plan.partial ? ctx->plan.partial : "--only", r->n_missing > 1 ? "s" : "", ids,
             r->n_missing, ctx->plan.n_regions, r->n_missing > 1 ? "are" : "is",
             ctx->plan.store_dir, ctx->opts->out_dir);
    t->skip_reason = t->skip_text;
    cJSON *o = cJSON_CreateObject();
    cJSON *list = cJSON_CreateArray();
    if (!o || !list) {
        cJSON_Delete(o);
        cJSON_Delete(list);
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    }
    cJSON_AddStringToObject(o, "phase_skipped", t->skip_text);
    for (int i = 0; i < r->n_missing; i++)
        cJSON_AddItemToArray(list, cJSON_CreateNumber(r->missing[i]));
    cJSON_AddItemToObject(o, "regions_missing", list);
    cJSON_AddNumberToObject(o, "regions_missing_count", r->n_missing);
    cJSON_AddNumberToObject(o, "regions_total", ctx->plan.n_regions);
    t->skip_meta = o;
    return 0;
}

/* A partial bake's tile it cannot bake: listed with the reason (or, when --tiles-only named it, an
 * error: nothing was baked, exit 2). */
static int s_cannot(tb_bake_ctx_t *ctx, tb_tile_id_t id, bool coast, tb_err_t *err)
{
    char name[TB_TILE_ID_MAX];
    tb_tile_id_format(id, name);
    const char *why = coast ? "it holds no land of the regions this partial bake solved"
                            : "its window (the tile, its margin and the resampler's stencil) "
                              "reaches land of a region this partial bake did not solve and the "
                              "store does not hold";
    if (ctx->plan.tile_sel) {
        ctx->out->bad_input = true;
        return tb_err_set(err, TB_E_INVALID, "%s %s: %s (%s)",
                          ctx->opts->tiles_only_option ? ctx->opts->tiles_only_option
                                                       : "--tiles-only",
                          name, why, ctx->plan.partial ? ctx->plan.partial : "--only");
    }
    tb_bake_tile_list_t *t = &ctx->tile_list;
    if (!t->skipped)
        t->skipped = cJSON_CreateArray();
    cJSON *e = cJSON_CreateObject();
    if (!t->skipped || !e) {
        cJSON_Delete(e);
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    }
    cJSON_AddStringToObject(e, "id", name);
    cJSON_AddStringToObject(e, "reason", why);
    cJSON_AddItemToArray(t->skipped, e);
    return 0;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    const tb_tile_lattice_t *L = &ctx->plan.lattice;
    tb_bake_tile_list_t *t = &ctx->tile_list;
    bool partial = ctx->out->partial, coast = !ctx->opts->no_coast;
    int64_t n_tiles = tb_tile_count(L);
    uint8_t *flags = tb_calloc((size_t)n_tiles + 1, 1, "tile contents", err);
    int64_t *land = tb_calloc((size_t)n_tiles + 1, sizeof *land, "tile land cells", err);
    t->ids = tb_calloc((size_t)n_tiles + 1, sizeof *t->ids, "tile list", err);
    t->land_share = tb_calloc((size_t)n_tiles + 1, sizeof *t->land_share, "tile list", err);
    int rc = -1;
    if (!flags || !land || !t->ids || !t->land_share || s_contents(ctx, flags, land, err) != 0)
        goto done;
    if (partial && coast && ctx->regions.n_missing > 0) {
        rc = s_missing(ctx, err);
        goto done;
    }
    for (int64_t row = 0; row < L->rows; row++)
        for (int64_t col = 0; col < L->cols; col++) {
            int64_t k = row * L->cols + col;
            if (!(flags[k] & S_LAND))
                continue; /* ocean: nothing to bake */
            bool is_coast = flags[k] & S_SEA;
            t->n_land += !is_coast;
            t->n_coast += is_coast;
            if (ctx->plan.tile_sel && !ctx->plan.tile_sel[k])
                continue;
            tb_tile_id_t id = {col, row};
            if (partial) {
                int ok = coast ? (flags[k] & S_SOLVED_LAND) != 0 : s_covered(ctx, id, err);
                if (ok < 0)
                    goto done;
                if (!ok) {
                    if (s_cannot(ctx, id, coast, err) != 0)
                        goto done;
                    continue;
                }
            }
            int64_t T = L->tile_geo_cells, h = L->geo_h - row * T < T ? L->geo_h - row * T : T;
            t->land_share[t->n] = (float)((double)land[k] / (double)(T * h));
            t->ids[t->n++] = id;
        }
    if (partial && !ctx->opts->quiet && t->skipped)
        tb_log_info("partial bake: %d tile(s) skipped: %s", cJSON_GetArraySize(t->skipped),
                    coast ? "they hold no land of its regions"
                          : "their windows reach land neither solved here nor stored");
    rc = 0;
done:
    free(flags);
    free(land);
    return rc;
}

const tb_phase_t tb_phase_tiles_select = {
    .name = "tiles_select",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(REGIONS) | TB_ART_BIT(CLASSES) | TB_ART_BIT(LABELS) |
             TB_ART_BIT(SOLVED),
    .writes = TB_ART_BIT(TILE_LIST),
    .skip = s_skip,
    .run = s_run,
};
