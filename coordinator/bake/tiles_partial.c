/* A partial bake's tiles borrow the stored regions it did not solve (docs/tiles.md, "Tiles of a
 * partial bake"). Without the coastal pass the composite is local - ocean at its class's depth,
 * each region's land as it solved it - so a region's result of this build in the store, found by
 * the key of its canonical spec as the solve would dispatch it, is that region's land in the whole
 * bake too. Its cells are written into copies of the heights and areas the tiles read, never into
 * the planet: the partial bake's own outputs keep its regions only. A stored result is checked like
 * the dispatch engine checks one (its checksum in tb_cache_get, the kind's check, the decoder, the
 * box); one that fails is not used (the tiles it would cover are skipped). */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/version.h"
#include "coordinator/bake/phase.h"
#include "coordinator/farm/cache.h"
#include "jobs/job.h"
#include "jobs/region.h"

/* Writes region ri's stored result, when there is a usable one, into the arrays; 1 when it did. */
static int s_borrow(const tb_bake_ctx_t *ctx, tb_cache_t *cache, int ri, float *height_m,
                    float *area_m2, uint8_t *known, tb_err_t *err)
{
    const tb_job_kind_t *kind = tb_job_find("region");
    void *spec = NULL, *data = NULL;
    size_t n = 0, bytes = 0;
    tb_grid_t *mask = NULL;
    tb_region_result_t r;
    bool decoded = false;
    int rc = -1;
    if (!kind || tb_bake_region_spec(ctx, ri, &spec, &n, err) != 0)
        goto done;
    tb_cache_key_t key;
    tb_cache_key_make(&key, tb_build_id(), "region", spec, n, NULL, 0);
    tb_err_t e;
    int got = tb_cache_get(cache, &key, tb_job_result_bound(kind, spec, n), &data, &bytes, &e);
    const tb_plan_region_t *reg = tb_plan_region(ctx->plan, ri);
    if (got <= 0 || tb_job_check_result(kind, spec, n, data, bytes, &e) != 0 ||
        tb_region_result_decode(data, bytes, &r, &e) != 0) {
        if (got != 0)
            tb_log_warn("region %d: stored result unusable for the tiles: %s", reg->id, e.msg);
        rc = 0;
        goto done;
    }
    decoded = true;
    if (r.box.x0 != reg->box.x0 || r.box.y0 != reg->box.y0 || r.box.w != reg->box.w ||
        r.box.h != reg->box.h) {
        rc = 0;
        goto done;
    }
    if (tb_plan_region_grids(ctx->plan, ri, NULL, &mask, err) != 0)
        goto done;
    const uint8_t *m = tb_grid_cu8(mask);
    int64_t w = tb_planet_w(ctx->planet);
    for (int64_t j = 0; j < r.box.h; j++)
        for (int64_t i = 0; i < r.box.w; i++) {
            size_t bi = tb_idx(r.box.w, i, j);
            if (!m[bi])
                continue;
            size_t pi = tb_idx(w, tb_frame_lattice_x(&r.box, i), r.box.y0 + j);
            /* the composite phase: a land cell's height is its solved height */
            height_m[pi] = r.height_m[bi];
            area_m2[pi] = r.area_m2[bi];
            known[pi] = 1;
        }
    rc = 1;
done:
    if (decoded)
        tb_region_result_free(&r);
    tb_grid_destroy(&mask);
    free(data);
    free(spec);
    return rc;
}

int tb_bake_tiles_borrow(const tb_bake_ctx_t *ctx, float *height_m, float *area_m2, uint8_t *known,
                         int *n_borrowed, tb_err_t *err)
{
    const tb_planet_t *p = ctx->planet;
    size_t cells = tb_planet_cells(p);
    memcpy(height_m, tb_planet_cheight_m(p), cells * sizeof *height_m);
    memcpy(area_m2, tb_planet_carea_m2(p), cells * sizeof *area_m2);
    memcpy(known, tb_planet_csolved(p), cells);
    *n_borrowed = 0;
    if (!ctx->opts->no_coast)
        return 0; /* the coast runs over the whole composite: nothing is local (docs/tiles.md) */
    tb_cache_t *cache = tb_cache_open(ctx->store_dir, err);
    if (!cache)
        return -1;
    int rc = 0;
    for (int ri = 0; ri < tb_plan_region_count(ctx->plan) && rc == 0; ri++) {
        if (ctx->selected[ri])
            continue;
        int b = s_borrow(ctx, cache, ri, height_m, area_m2, known, err);
        if (b < 0)
            rc = -1;
        *n_borrowed += b > 0;
    }
    tb_cache_destroy(&cache);
    return rc;
}
