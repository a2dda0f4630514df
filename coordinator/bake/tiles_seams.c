/* `terrain tiles OUT --check-seams [--at ID] [--margin N] [--size-km X]` (docs/tiles.md, "Seams
 * on a baked planet"): the tiles' seamlessness by construction, checked on the planet a bake made.
 * As for --measure-margin (tiles_margin.c), the bake's phases run again from the store and the
 * tiles phase hands its planet here instead of dispatching. A 2 x 2 block of tiles is computed as
 * four tile jobs (spec cut, encoded, run by the job kind "tile" and decoded: the path of a bake's
 * jobs, in-process) at the margin in use, and the tile of twice the size covering the block as one
 * more job at the same margin; their 16-bit heights, float heights and flow, wear, deposit and
 * splat maps are compared sample by sample. Prints the cells that differ, the largest difference
 * and how far from a tile edge the differences reach; *differ_out is the number of cells that
 * differ in any map (0: seamless). Nothing is written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/log.h"
#include "common/pool.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"
#include "jobs/detail/margin.h"
#include "jobs/detail/planet_inputs.h"

/* The geology cell holding the steepest 4-neighbour step (east, wrapping, and south, as
 * tb_tile_steepest measures it) among the land cells of the plan's largest landmass (most cells;
 * ties to the lower id). Falls back to every land cell when the plan's landmass raster does not
 * cover the planet. -1 when there is no land. */
static int s_steepest_point(tb_bake_ctx_t *ctx, const tb_tile_planet_t *src, const uint8_t *land,
                            int64_t *x_out, int64_t *y_out, double *deg, int32_t *mass_out,
                            int64_t *mass_cells)
{
    int64_t W = src->geo_w, H = src->geo_h;
    size_t cells = (size_t)W * (size_t)H;
    const tb_raster_t *g = ctx->plan.plan ? tb_plan_label_raster(ctx->plan.plan) : NULL;
    const int32_t *lab = NULL;
    int32_t best_id = 0;
    *mass_cells = 0;
    if (g && g->w == W && g->h == H) {
        lab = g->data;
        int32_t top = 0;
        for (size_t i = 0; i < cells; i++)
            top = lab[i] > top ? lab[i] : top;
        int64_t *count = top > 0 ? calloc((size_t)top + 1, sizeof *count) : NULL;
        if (count) {
            for (size_t i = 0; i < cells; i++)
                if (lab[i] > 0)
                    count[lab[i]]++;
            for (int32_t k = 1; k <= top; k++)
                if (count[k] > *mass_cells) {
                    *mass_cells = count[k];
                    best_id = k;
                }
            free(count);
        }
        if (best_id == 0)
            lab = NULL;
    }
    double best = -1;
    for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W; x++) {
            size_t at = tb_idx(W, x, y);
            if (!land[at] || (lab && lab[at] != best_id))
                continue;
            double s =
                fabs((double)src->height_m[tb_idx(W, tb_wrap(x + 1, W), y)] - src->height_m[at]);
            if (y + 1 < H) {
                double sn = fabs((double)src->height_m[tb_idx(W, x, y + 1)] - src->height_m[at]);
                s = sn > s ? sn : s;
            }
            if (s > best) {
                best = s;
                *x_out = x;
                *y_out = y;
            }
        }
    if (best < 0)
        return -1;
    *deg = atan(best / src->geo_cell_m) * 180.0 / M_PI;
    *mass_out = lab ? best_id : 0;
    return 0;
}

/* Runs tile `id` of lattice size p->size_km at p->margin_cells as a tile job: the spec cut and
 * encoded as the bake's tiles phase sends it, run by the job kind (what a worker does), the result
 * decoded as the coordinator reads it. */
static int s_job(const tb_tile_planet_t *planet, tb_tile_id_t id, const tb_manifest_t *m,
                 const tb_detail_params_t *p, const tb_tile_class_t *cls, int n_cls,
                 tb_pool_t *pool, tb_tile_result_t *out, tb_err_t *err)
{
    tb_tile_spec_owned_t spec;
    if (tb_tile_spec_cut(planet, id, m->seed, p, m->elevation_min_m, m->elevation_max_m, cls, n_cls,
                         &spec, err) != 0)
        return -1;
    void *bytes = NULL;
    size_t n = 0;
    int rc = tb_tile_spec_encode(&spec.spec, &bytes, &n, err);
    tb_tile_spec_free(&spec);
    if (rc != 0)
        return -1;
    tb_job_ctx_t jc = {.threads = tb_pool_threads(pool), .pool = pool};
    tb_job_output_t res = {0};
    rc = tb_job_run("tile", bytes, n, &jc, &res, err);
    free(bytes);
    if (rc != 0)
        return -1;
    rc = tb_tile_result_decode(res.data, res.bytes, out, err);
    free(res.data);
    return rc;
}

static double s_peak_mb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0;
}

int tb_bake_tiles_check_seams(tb_bake_ctx_t *ctx, const tb_tile_planet_t *src,
                              const tb_detail_params_t *p, const tb_tile_class_t *cls, int n_cls,
                              const uint8_t *land, tb_err_t *err)
{
    const tb_bake_opts_t *o = ctx->opts;
    const tb_manifest_t *m = ctx->plan.manifest;
    tb_detail_params_t ps = *p, pb;
    if (o->seams_size_km > 0)
        ps.size_km = o->seams_size_km;
    if (o->seams_margin >= 0)
        ps.margin_cells = o->seams_margin;
    pb = ps;
    pb.size_km = 2 * ps.size_km;
    ctx->out->bad_input = true; /* until the block is chosen: a refusal is exit 2 */
    tb_tile_lattice_t L, L2;
    if (tb_tile_lattice_make(&L, src->geo_w, src->geo_h, src->geo_cell_m, ps.size_km, ps.cell_m,
                             err) != 0)
        return tb_err_prefix(err, "--check-seams: tiles of %g km", ps.size_km);
    if (tb_tile_lattice_make(&L2, src->geo_w, src->geo_h, src->geo_cell_m, pb.size_km, pb.cell_m,
                             err) != 0)
        return tb_err_prefix(err,
                             "--check-seams: the one-piece tile is a tile of twice the size "
                             "(%g km), so the circumference must be a whole number of them; give "
                             "--size-km with a tile size whose double divides it",
                             pb.size_km);
    if (L.rows < 2)
        return tb_err_set(err, TB_E_INVALID,
                          "--check-seams: the planet has one row of %g km tiles (%lld detail rows "
                          "high): no 2 x 2 block; bake a taller planet or give a smaller "
                          "--size-km",
                          ps.size_km, (long long)L.lattice_h);
    if (tb_detail_params_check(&ps, "--check-seams", err) != 0 ||
        tb_detail_params_check(&pb, "--check-seams (the one-piece tile)", err) != 0)
        return -1;
    /* the block: the tile of twice the size; its shared corner is an odd lattice corner */
    tb_tile_id_t big;
    char how[256];
    if (o->seams_at) {
        tb_tile_id_t at;
        if (tb_tile_id_parse(o->seams_at, &L, &at, err) != 0)
            return tb_err_prefix(err, "--at (tiles of %g km)", ps.size_km);
        big = (tb_tile_id_t){at.col / 2, at.row / 2};
        if (2 * big.row + 1 >= L.rows)
            return tb_err_set(err, TB_E_INVALID,
                              "--at %s: the block of twice the size holding it (rows %lld and "
                              "%lld) has no second row on this planet (%lld rows)",
                              o->seams_at, (long long)(2 * big.row), (long long)(2 * big.row + 1),
                              (long long)L.rows);
        snprintf(how, sizeof how, "the block holding %s (--at)", o->seams_at);
    } else {
        int64_t gx = 0, gy = 0, mass_cells = 0;
        int32_t mass = 0;
        double deg = 0;
        if (s_steepest_point(ctx, src, land, &gx, &gy, &deg, &mass, &mass_cells) != 0)
            return tb_err_set(err, TB_E_INVALID, "--check-seams: the planet has no land");
        /* the steepest point in detail cells, and the corner (c T, r T) with c and r odd - the
         * centre of a tile of twice the size - nearest it (X wrapping; ties to the lower row,
         * then column) */
        double px = ((double)gx + 0.5) * src->geo_cell_m / ps.cell_m;
        double py = ((double)gy + 0.5) * src->geo_cell_m / ps.cell_m;
        double best = INFINITY, T = (double)L.tile_cells, C = (double)L.lattice_w;
        for (int64_t r = 1; r < L.rows; r += 2)
            for (int64_t c = 1; c < L.cols; c += 2) {
                double dx = fabs(c * T - px);
                dx = dx > C / 2 ? C - dx : dx;
                double dy = r * T - py, d = dx * dx + dy * dy;
                if (d < best) {
                    best = d;
                    big = (tb_tile_id_t){c / 2, r / 2};
                }
            }
        snprintf(how, sizeof how,
                 "the steepest point of %s%s (geology cell %lld,%lld, %.1f deg) is %.0f cells "
                 "from its shared corner",
                 mass ? "the largest landmass" : "the land", mass ? "" : " (no landmass raster)",
                 (long long)gx, (long long)gy, deg, sqrt(best));
        if (mass)
            snprintf(how + strlen(how), sizeof how - strlen(how), " (landmass %d, %lld cells)",
                     (int)mass, (long long)mass_cells);
    }
    ctx->out->bad_input = false;
    tb_tile_id_t ids[4];
    char names[4][TB_TILE_ID_MAX], big_name[TB_TILE_ID_MAX];
    for (int q = 0; q < 4; q++) {
        ids[q] = (tb_tile_id_t){2 * big.col + q % 2, 2 * big.row + q / 2};
        tb_tile_id_format(ids[q], names[q]);
    }
    tb_tile_id_format(big, big_name);
    tb_detail_params_t defaults;
    tb_detail_params_defaults(&defaults);
    int threads = o->dispatch.threads > 0 ? o->dispatch.threads : tb_pool_default_threads();
    printf("seams: block %s %s / %s %s of %g km tiles against tile %s of %g km in one piece, "
           "margin %d cells (in use %d, default %d), seed %llu, %d thread%s; %s\n",
           names[0], names[1], names[2], names[3], ps.size_km, big_name, pb.size_km,
           ps.margin_cells, p->margin_cells, defaults.margin_cells, (unsigned long long)m->seed,
           threads, threads == 1 ? "" : "s", how);
    fflush(stdout);
    tb_pool_t *pool = NULL;
    tb_tile_result_t whole = {0}, t = {0};
    int rc = -1;
    tb_tile_planet_t planet = *src; /* its rock: the inputs, which each tile job makes it from */
    pool = tb_pool_new(threads, err);
    if (!pool)
        goto done;
    double t0 = tb_now_s();
    if (s_job(&planet, big, m, &pb, cls, n_cls, pool, &whole, err) != 0)
        goto done;
    printf("  %s (%lld x %lld samples, one piece): %.1f s\n", big_name, (long long)whole.interior.w,
           (long long)whole.interior.h, tb_now_s() - t0);
    fflush(stdout);
    int64_t W = whole.interior.w, total = 0, u16 = 0, maps = 0, edge = 0, reach = -1;
    int64_t dmax_u16 = 0;
    double dmax_m = 0;
    for (int q = 0; q < 4; q++) {
        t0 = tb_now_s();
        if (s_job(&planet, ids[q], m, &ps, cls, n_cls, pool, &t, err) != 0)
            goto done;
        int64_t ox = tb_wrap(t.interior.x0 - whole.interior.x0, L.lattice_w);
        int64_t oy = t.interior.y0 - whole.interior.y0, w = t.interior.w, h = t.interior.h;
        int64_t q_differ = 0;
        for (int64_t j = 0; j < h; j++)
            for (int64_t i = 0; i < w; i++) {
                size_t a = (size_t)(j * w + i), b = (size_t)((j + oy) * W + i + ox);
                double dm = fabs((double)t.height_m[a] - whole.height_m[b]);
                int64_t du = llabs((int64_t)t.height_u16[a] - (int64_t)whole.height_u16[b]);
                bool hu = du != 0;
                bool mp = t.flow[a] != whole.flow[b] || t.wear[a] != whole.wear[b] ||
                          t.deposit[a] != whole.deposit[b] ||
                          memcmp(&t.splat[4 * a], &whole.splat[4 * b], 4) != 0;
                bool any = hu || mp || memcmp(&t.height_m[a], &whole.height_m[b], 4) != 0;
                dmax_m = dm > dmax_m ? dm : dmax_m;
                dmax_u16 = du > dmax_u16 ? du : dmax_u16;
                u16 += hu;
                maps += mp;
                if (!any)
                    continue;
                q_differ++;
                /* distance to the nearest of this tile's edges inside the block (the seams) */
                int64_t d = INT64_MAX;
                if (q % 2 == 0)
                    d = w - 1 - i;
                else
                    d = i;
                int64_t dy = q / 2 == 0 ? h - 1 - j : j;
                d = dy < d ? dy : d;
                reach = d > reach ? d : reach;
                edge += d == 0;
            }
        total += q_differ;
        printf("  %s (%lld x %lld samples, own job): %lld cells differ, %.1f s\n", names[q],
               (long long)w, (long long)h, (long long)q_differ, tb_now_s() - t0);
        fflush(stdout);
        tb_tile_result_free(&t);
    }
    double n_cells = (double)whole.interior.w * (double)whole.interior.h;
    if (total == 0)
        printf("seams: identical: the four tiles, each its own job at a margin of %d cells, are "
               "byte for byte the one-piece tile in every map (%.0f samples: 16-bit and float "
               "heights, flow, wear, deposit, splat); peak memory %.0f MB\n",
               ps.margin_cells, n_cells, s_peak_mb());
    else
        printf("seams: DIFFER at a margin of %d cells: %lld of %.0f cells (%.4f %%) differ in some "
               "map; 16-bit heights differ in %lld cells by up to %lld step%s (%.4f m; largest "
               "float difference %.6f m); flow/wear/deposit/splat differ in %lld cells; %lld "
               "differing cells lie on the shared edges and the differences reach %lld cells in "
               "from them; peak memory %.0f MB\n",
               ps.margin_cells, (long long)total, n_cells, 100.0 * (double)total / n_cells,
               (long long)u16, (long long)dmax_u16, dmax_u16 == 1 ? "" : "s",
               (double)dmax_u16 * (m->elevation_max_m - m->elevation_min_m) / 65535.0, dmax_m,
               (long long)maps, (long long)edge, (long long)reach, s_peak_mb());
    fflush(stdout);
    ctx->out->seams_differ = total;
    rc = 0;
done:
    tb_tile_result_free(&t);
    tb_tile_result_free(&whole);
    tb_pool_destroy(&pool);
    return rc;
}
