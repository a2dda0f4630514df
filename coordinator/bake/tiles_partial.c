/* A partial bake's tiles borrow the stored regions it did not solve (docs/tiles.md, "Tiles of a
 * partial bake"). A region's result of this build in the store, found by the key of its canonical
 * spec as the solve would dispatch it, is that region in the whole bake too: its land cells are
 * written into copies of the land heights and drainage area as the solve phase composites them,
 * never into the planet (the partial bake's own outputs keep its regions only), and its river
 * mouths are kept for the coast of the whole composite (coordinator/bake/phase_whole.c). A stored
 * result is checked like the dispatch engine checks one (its checksum in tb_cache_get, the kind's
 * check, the decoder, the box); one that fails is not used (its region counts as missing). */
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/version.h"
#include "coordinator/bake/phase.h"
#include "coordinator/farm/cache.h"
#include "jobs/job.h"
#include "jobs/region.h"

typedef struct {
    tb_region_mouth_t *m;
    size_t n, cap;
} s_mouths_t;

static int s_add_mouths(s_mouths_t *out, const tb_region_mouth_t *m, size_t n, tb_err_t *err)
{
    if (out->n + n > out->cap) {
        size_t cap = (out->n + n) * 2 + 16;
        tb_region_mouth_t *g = realloc(out->m, cap * sizeof *g);
        if (!g)
            return tb_err_set(err, TB_E_NOMEM, "out of memory for %zu river mouths", cap);
        out->m = g;
        out->cap = cap;
    }
    if (n)
        memcpy(out->m + out->n, m, n * sizeof *m);
    out->n += n;
    return 0;
}

/* The key of region ri's result and whether the store has a file for it. */
static int s_stored(const tb_bake_ctx_t *ctx, tb_cache_t *cache, int ri, bool *present,
                    tb_err_t *err)
{
    void *spec = NULL;
    size_t n = 0;
    if (tb_bake_region_spec(ctx, ri, &spec, &n, err) != 0)
        return -1;
    tb_cache_key_t key;
    tb_cache_key_make(&key, tb_build_id(), "region", spec, n, NULL, 0);
    free(spec);
    char path[4300];
    tb_cache_path(cache, &key, path, sizeof path);
    *present = tb_fs_exists(path);
    return 0;
}

/* Writes region ri's stored result, when there is a usable one, into the arrays and its mouths into
 * *mouths; 1 when it did, 0 when there is none usable, -1 on error. */
static int s_borrow(const tb_bake_ctx_t *ctx, tb_cache_t *cache, int ri, float *land_m,
                    float *area_m2, uint8_t *known, s_mouths_t *mouths, tb_err_t *err)
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
        tb_log_warn("region %d: stored result unusable for the tiles: it is for another box",
                    reg->id);
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
            /* the solve phase's composite: a land cell's height and area are its region's */
            land_m[pi] = r.height_m[bi];
            area_m2[pi] = r.area_m2[bi];
            known[pi] = 1;
        }
    if (mouths && s_add_mouths(mouths, r.mouths, r.n_mouths, err) != 0)
        goto done;
    rc = 1;
done:
    if (decoded)
        tb_region_result_free(&r);
    tb_grid_destroy(&mask);
    free(data);
    free(spec);
    return rc;
}

int tb_bake_tiles_borrow(const tb_bake_ctx_t *ctx, bool stop_if_missing, float *land_m,
                         float *area_m2, uint8_t *known, tb_region_mouth_t **mouths,
                         size_t *n_mouths, int *missing, int *n_missing, int *n_borrowed,
                         tb_err_t *err)
{
    const tb_planet_t *p = ctx->planet;
    size_t cells = tb_planet_cells(p);
    int n_regions = tb_plan_region_count(ctx->plan);
    memcpy(land_m, tb_planet_cland_m(p), cells * sizeof *land_m);
    memcpy(area_m2, tb_planet_carea_m2(p), cells * sizeof *area_m2);
    memcpy(known, tb_planet_csolved(p), cells);
    *n_borrowed = 0;
    *n_missing = 0;
    s_mouths_t mo = {0};
    if (mouths) {
        *mouths = NULL;
        *n_mouths = 0;
        /* the mouths of the regions solved here (the coast spec sorts them: order is free) */
        if (s_add_mouths(&mo, ctx->mouths, ctx->n_mouths, err) != 0)
            return -1;
    }
    tb_cache_t *cache = tb_cache_open(ctx->store_dir, err);
    if (!cache) {
        free(mo.m);
        return -1;
    }
    int rc = 0;
    if (stop_if_missing) {
        /* every region is needed: name the absent ones without decoding any stored result */
        for (int ri = 0; ri < n_regions && rc == 0; ri++) {
            bool present = false;
            if (ctx->selected[ri])
                continue;
            if (s_stored(ctx, cache, ri, &present, err) != 0)
                rc = -1;
            else if (!present)
                missing[(*n_missing)++] = tb_plan_region(ctx->plan, ri)->id;
        }
        if (rc != 0 || *n_missing > 0)
            goto done;
    }
    for (int ri = 0; ri < n_regions && rc == 0; ri++) {
        if (ctx->selected[ri])
            continue;
        int b = s_borrow(ctx, cache, ri, land_m, area_m2, known, mouths ? &mo : NULL, err);
        if (b < 0)
            rc = -1;
        else if (b == 0)
            missing[(*n_missing)++] = tb_plan_region(ctx->plan, ri)->id;
        *n_borrowed += b > 0;
    }
done:
    tb_cache_destroy(&cache);
    if (rc == 0 && mouths) {
        *mouths = mo.m;
        *n_mouths = mo.n;
    } else {
        free(mo.m);
    }
    return rc;
}
