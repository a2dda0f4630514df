/* The margin measurement; see margin.h. */
#include "jobs/detail/margin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

static int s_run(const tb_tile_planet_t *planet, tb_tile_id_t id, uint64_t seed,
                 const tb_detail_params_t *params, int64_t margin, double lo, double hi,
                 const tb_tile_class_t *classes, int n_classes, tb_pool_t *pool,
                 tb_tile_result_t *out, tb_err_t *err)
{
    tb_detail_params_t p = *params;
    p.margin_cells = (int)margin;
    tb_tile_spec_owned_t spec;
    if (tb_tile_spec_cut(planet, id, seed, &p, lo, hi, classes, n_classes, &spec, err) != 0)
        return -1;
    int rc = tb_tile_compute(&spec.spec, pool, out, err);
    tb_tile_spec_free(&spec);
    return rc;
}

int tb_tile_margin_measure(const tb_tile_planet_t *planet, tb_tile_id_t id, uint64_t seed,
                           const tb_detail_params_t *params, double elevation_min_m,
                           double elevation_max_m, const tb_tile_class_t *classes, int n_classes,
                           const int64_t *margins, int n, int64_t ref_margin, tb_margin_row_t *rows,
                           tb_pool_t *pool, tb_err_t *err)
{
    tb_tile_result_t ref;
    if (s_run(planet, id, seed, params, ref_margin, elevation_min_m, elevation_max_m, classes,
              n_classes, pool, &ref, err) != 0)
        return tb_err_prefix(err, "margin reference %lld", (long long)ref_margin);
    size_t cells = (size_t)ref.interior.w * (size_t)ref.interior.h;
    for (int k = 0; k < n; k++) {
        tb_tile_result_t r;
        double t0 = tb_now_s();
        if (s_run(planet, id, seed, params, margins[k], elevation_min_m, elevation_max_m, classes,
                  n_classes, pool, &r, err) != 0) {
            tb_tile_result_free(&ref);
            return tb_err_prefix(err, "margin %lld", (long long)margins[k]);
        }
        tb_margin_row_t *row = &rows[k];
        memset(row, 0, sizeof *row);
        row->seconds = tb_now_s() - t0;
        row->margin = margins[k];
        for (size_t i = 0; i < cells; i++) {
            double d = fabs((double)r.height_m[i] - (double)ref.height_m[i]);
            row->max_abs_diff_m = d > row->max_abs_diff_m ? d : row->max_abs_diff_m;
            row->cells_differ += r.height_u16[i] != ref.height_u16[i];
        }
        row->share_differ = (double)row->cells_differ / (double)cells;
        tb_tile_result_free(&r);
    }
    tb_tile_result_free(&ref);
    return 0;
}

int tb_tile_steepest(const tb_tile_lattice_t *L, const float *height_m, const uint8_t *land,
                     tb_tile_id_t *out, double *slope_deg)
{
    double best = -1;
    int64_t T = L->tile_geo_cells;
    for (int64_t r = 0; r < L->rows; r++)
        for (int64_t c = 0; c < L->cols; c++) {
            int64_t y1 = (r + 1) * T > L->geo_h ? L->geo_h : (r + 1) * T;
            for (int64_t y = r * T; y < y1; y++)
                for (int64_t x = c * T; x < (c + 1) * T; x++) {
                    size_t at = tb_idx(L->geo_w, x, y);
                    if (!land[at])
                        continue;
                    size_t e = tb_idx(L->geo_w, tb_wrap(x + 1, L->geo_w), y);
                    double s = fabs((double)height_m[e] - height_m[at]);
                    if (y + 1 < L->geo_h) {
                        double sn =
                            fabs((double)height_m[tb_idx(L->geo_w, x, y + 1)] - height_m[at]);
                        s = sn > s ? sn : s;
                    }
                    if (s > best) {
                        best = s;
                        out->col = c;
                        out->row = r;
                    }
                }
        }
    if (best < 0)
        return -1;
    if (slope_deg)
        *slope_deg = atan(best / L->geo_cell_m) * 180.0 / M_PI;
    return 0;
}
