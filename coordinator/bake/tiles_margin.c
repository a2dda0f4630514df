/* `terrain tiles OUT --measure-margin` (docs/tiles.md, "The margin"): the margin measured on a
 * baked planet rather than on the bench's synthetic mountains. The tiles phase, with the composite
 * rebuilt from the store, hands its planet here instead of dispatching tiles. Three sample tiles -
 * the planet's steepest land tile and two more land tiles - are cut at a smaller tile size (what a
 * margin does at a tile's edge does not depend on the interior's size; jobs/detail/margin.h), each
 * computed at increasing margins against a reference at twice the provable bound, in-process on
 * this machine's pool; per margin, the largest height difference and the share of interior cells
 * whose 16-bit sample differs are printed, then the smallest margin from which every sample is
 * identical (16-bit, and float), the provable bound and the margin in use. Nothing is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/pool.h"
#include "coordinator/bake/phase.h"
#include "coordinator/bake/tiles_select.h"
#include "jobs/detail/margin.h"
#include "jobs/detail/planet_inputs.h"

#define S_SAMPLES 3
#define S_MAX_MARGINS 40

/* The sample tile size: the smallest whole number of geology cells (and of detail cells) dividing
 * the circumference whose edge is at least 0.4 km (the bench's sample), e.g. 1 km on the 25 km
 * demo planet (3125 cells of 8 m: 0.4 km, 50 cells, does not divide it). 0 when none does. */
static double s_auto_sample_km(const tb_tile_lattice_t *L)
{
    for (int64_t k = 1; k <= L->geo_w; k++) {
        double km = (double)k * L->geo_cell_m / 1000.0;
        double cells = (double)k * L->geo_cell_m / L->cell_m;
        if (L->geo_w % k == 0 && km >= 0.4 - 1e-9 && cells == (double)(int64_t)cells)
            return km;
    }
    return 0;
}

/* The first tile of content `want` from `start` (a tile index) on, wrapping, that is not in
 * ids[0..n); -1 when there is none. */
static int64_t s_pick(const tb_tile_lattice_t *L, const uint8_t *land, int64_t start,
                      tb_tile_content_t want, const tb_tile_id_t *ids, int n)
{
    int64_t total = tb_tile_count(L);
    for (int64_t j = 0; j < total; j++) {
        int64_t k = (start + j) % total;
        tb_tile_id_t t = {k % L->cols, k / L->cols};
        bool taken = false;
        for (int i = 0; i < n; i++)
            taken = taken || (ids[i].col == t.col && ids[i].row == t.row);
        if (!taken && tb_tile_content(L, t, land) == want)
            return k;
    }
    return -1;
}

int tb_bake_tiles_measure(tb_bake_ctx_t *ctx, const tb_tile_planet_t *src,
                          const tb_detail_params_t *p, const tb_tile_class_t *cls, int n_cls,
                          const uint8_t *land, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    tb_detail_params_t q = *p;
    tb_tile_lattice_t L;
    if (tb_tile_lattice_make(&L, src->geo_w, src->geo_h, src->geo_cell_m, p->size_km, p->cell_m,
                             err) != 0)
        return -1;
    q.size_km =
        ctx->opts->margin_sample_km > 0 ? ctx->opts->margin_sample_km : s_auto_sample_km(&L);
    if (!(q.size_km > 0))
        return tb_err_set(err, TB_E_INVALID,
                          "--measure-margin: no sample tile of at least 0.4 km divides this "
                          "planet's circumference; give --sample-km");
    if (tb_tile_lattice_make(&L, src->geo_w, src->geo_h, src->geo_cell_m, q.size_km, q.cell_m,
                             err) != 0)
        return tb_err_prefix(err, "--sample-km %g", q.size_km);
    int64_t bound = tb_detail_margin_bound(&q), ref = 2 * bound;
    if (L.tile_cells + 2 * ref > L.lattice_w)
        return tb_err_set(err, TB_E_INVALID,
                          "--measure-margin: the reference window (a %lld-cell sample tile and "
                          "twice the provable bound, %lld cells, on both sides) is wider than "
                          "the planet's circumference of %lld cells",
                          (long long)L.tile_cells, (long long)ref, (long long)L.lattice_w);
    /* the samples: the steepest land tile, then the first land tile from a third and from two
     * thirds of the way through the lattice (row by row), as the bench picks them */
    tb_tile_id_t ids[S_SAMPLES];
    double deg = 0;
    if (tb_tile_steepest(&L, src->height_m, land, &ids[0], &deg) != 0)
        return tb_err_set(err, TB_E_INVALID, "--measure-margin: the planet has no land");
    int n_ids = 1;
    for (int s = 1; s < S_SAMPLES; s++) {
        int64_t k = s_pick(&L, land, tb_tile_count(&L) * s / S_SAMPLES, TB_TILE_LAND, ids, n_ids);
        if (k < 0)
            k = s_pick(&L, land, tb_tile_count(&L) * s / S_SAMPLES, TB_TILE_COAST, ids, n_ids);
        if (k < 0)
            break;
        ids[n_ids++] = (tb_tile_id_t){k % L.cols, k / L.cols};
    }
    tb_pool_t *pool = NULL;
    int rc = -1;
    tb_tile_planet_t planet = *src; /* its rock: the inputs, which each tile job makes it from */
    int threads =
        ctx->opts->dispatch.threads > 0 ? ctx->opts->dispatch.threads : tb_pool_default_threads();
    pool = tb_pool_new(threads, err);
    if (!pool)
        goto done;
    int64_t margins[S_MAX_MARGINS];
    int n = 0;
    for (int64_t mg = 0; mg <= bound && n < S_MAX_MARGINS; mg += mg < 32 ? 4 : 8)
        margins[n++] = mg;
    tb_margin_row_t rows[S_SAMPLES][S_MAX_MARGINS];
    printf("margin: sample tiles of %g km (%lld x %lld samples at %g m) on %s, seed %llu; "
           "provable bound %lld cells (%d rounds x (%d steps + 1 + brush %d + 1) + %d thermal + "
           "2); reference at %lld; %d thread%s\n",
           q.size_km, (long long)L.tile_cells, (long long)L.tile_cells, q.cell_m, m->source,
           (unsigned long long)m->seed, (long long)bound, q.droplet_rounds, q.droplet_lifetime,
           q.droplet_brush_radius, q.thermal_iterations, (long long)ref, threads,
           threads == 1 ? "" : "s");
    fflush(stdout);
    for (int s = 0; s < n_ids; s++) {
        double t0 = tb_now_s();
        if (tb_tile_margin_measure(&planet, ids[s], m->seed, &q, m->elevation_min_m,
                                   m->elevation_max_m, cls, n_cls, margins, n, ref, rows[s], pool,
                                   err) != 0)
            goto done;
        char name[TB_TILE_ID_MAX];
        tb_tile_id_format(ids[s], name);
        printf("sample %d: %s%s, %s (%.1f s)\n", s + 1, name, s == 0 ? " (steepest)" : "",
               tb_tile_content(&L, ids[s], land) == TB_TILE_LAND ? "land" : "coast",
               tb_now_s() - t0);
        if (s == 0)
            printf("  (steepest geology slope %.1f deg)\n", deg);
        fflush(stdout);
    }
    printf("%7s", "margin");
    for (int s = 0; s < n_ids; s++)
        printf("  %12s %10s", s == 0 ? "steepest dh" : "max dh m", "16-bit");
    printf("\n");
    int64_t clean = 0, exact = 0;
    for (int s = 0; s < n_ids; s++) {
        int64_t first_clean = -1, first_exact = -1;
        for (int k = 0; k < n; k++) {
            if (rows[s][k].cells_differ != 0)
                first_clean = -1;
            else if (first_clean < 0)
                first_clean = rows[s][k].margin;
            if (rows[s][k].max_abs_diff_m != 0)
                first_exact = -1;
            else if (first_exact < 0)
                first_exact = rows[s][k].margin;
        }
        /* still differing at the bound: not reached (-1), whatever the other samples say */
        clean = (first_clean < 0 || clean < 0) ? -1 : (first_clean > clean ? first_clean : clean);
        exact = (first_exact < 0 || exact < 0) ? -1 : (first_exact > exact ? first_exact : exact);
    }
    for (int k = 0; k < n; k++) {
        printf("%7lld", (long long)margins[k]);
        for (int s = 0; s < n_ids; s++)
            printf("  %12.3g %9.4f%%", rows[s][k].max_abs_diff_m, 100.0 * rows[s][k].share_differ);
        printf("\n");
    }
    tb_detail_params_t defaults;
    tb_detail_params_defaults(&defaults);
    char c_text[64], e_text[64];
    snprintf(c_text, sizeof c_text, clean < 0 ? "not reached by the bound" : "%lld cells",
             (long long)clean);
    snprintf(e_text, sizeof e_text, exact < 0 ? "not reached by the bound" : "%lld cells",
             (long long)exact);
    printf("measured margin: %s for identical 16-bit interiors on every sample from there on, %s "
           "for identical float heights; provable bound %lld; margin in use %d (default %d): %s\n",
           c_text, e_text, (long long)bound, p->margin_cells, defaults.margin_cells,
           exact >= 0 && p->margin_cells >= exact   ? "covers the float-exact margin"
           : clean >= 0 && p->margin_cells >= clean ? "covers the 16-bit margin only"
                                                    : "BELOW the measured margin");
    fflush(stdout);
    rc = 0;
done:
    tb_pool_destroy(&pool);
    return rc;
}
