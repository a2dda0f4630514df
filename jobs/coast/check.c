/* The checks both coast job kinds make of their results' maps and the whole-planet kind of its
 * statistics (docs/distribution.md, "Verifying results"): cheap invariants a wrong result breaks,
 * read in one pass over a possibly mapped result, which is let go as it is read. */
#include <math.h>
#include <string.h>

#include "jobs/coast/methods.h"
#include "jobs/job.h"

int tb_coast_check_maps(const uint8_t *maps, int64_t x0, int64_t y0, int64_t w, int64_t h,
                        const char *what, tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    const size_t chunk = (size_t)1 << 20; /* cells between tb_job_result_done calls */
    for (size_t i = 0; i < cells; i++) {
        float z, m;
        uint16_t e;
        if (i % chunk == 0 && i > 0) {
            /* the maps' cells before i are read: a mapped result lets them go */
            tb_job_result_done(maps + 4 * (i - chunk), 4 * chunk);
            tb_job_result_done(maps + 4 * cells + 4 * (i - chunk), 4 * chunk);
            tb_job_result_done(maps + 8 * cells + 2 * (i - chunk), 2 * chunk);
        }
        memcpy(&z, maps + 4 * i, 4);
        memcpy(&m, maps + 4 * cells + 4 * i, 4);
        memcpy(&e, maps + 8 * cells + 2 * i, 2);
        if (!isfinite(z) || !isfinite(m) || fabsf(z) > TB_COAST_CHECK_MAX_M ||
            fabsf(m) > TB_COAST_CHECK_MAX_M ||
            (e > TB_COAST_EXPOSURE_ONE && e != TB_COAST_NO_EXPOSURE))
            return tb_err_set(err, TB_E_CHECKSUM,
                              "%s: cell %zu (%lld,%lld) has height %g, moved %g, exposure %u (of "
                              "%d)",
                              what, i, (long long)(x0 + (int64_t)(i % (size_t)w)),
                              (long long)(y0 + (int64_t)(i / (size_t)w)), (double)z, (double)m,
                              (unsigned)e, TB_COAST_EXPOSURE_ONE);
    }
    return 0;
}

static bool s_volume(double v)
{
    return isfinite(v) && v >= 0;
}

int tb_coast_check_stats(const tb_coast_stats_t *s, int64_t w, int64_t h, double cell_m,
                         uint64_t n_mouths, tb_err_t *err)
{
    int64_t cells = w * h;
    double area_m2 = (double)cells * cell_m * cell_m;
    if (s->cells != cells)
        return tb_err_set(err, TB_E_CHECKSUM, "coast result: statistics of %lld cells for %lld",
                          (long long)s->cells, (long long)cells);
    const int64_t counts[] = {s->sea_cells, s->shelf_cells, s->waterline_cells, s->backshore_cells};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
        if (counts[k] < 0 || counts[k] > cells)
            return tb_err_set(err, TB_E_CHECKSUM,
                              "coast result: cell count %zu is %lld, outside 0..%lld", k,
                              (long long)counts[k], (long long)cells);
    if (s->mouths < 0 || (uint64_t)s->mouths > n_mouths)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast result: %lld mouths delivered, of %llu in its spec",
                          (long long)s->mouths, (unsigned long long)n_mouths);
    /* a land-sea edge is a cell edge: at most two a cell (east and north) */
    if (!s_volume(s->shore_km) || s->shore_km > 2.0 * (double)cells * cell_m / 1000 * (1 + 1e-9))
        return tb_err_set(err, TB_E_CHECKSUM, "coast result: %g km of shore on %lld cells",
                          s->shore_km, (long long)cells);
    const double areas[] = {s->planed_m2, s->beach_m2, s->drowned_m2};
    for (size_t k = 0; k < sizeof areas / sizeof *areas; k++)
        if (!s_volume(areas[k]) || areas[k] > area_m2 * (1 + 1e-9))
            return tb_err_set(err, TB_E_CHECKSUM,
                              "coast result: area %zu is %g m2, outside 0..%g (the planet)", k,
                              areas[k], area_m2);
    const double volumes[] = {s->cut_m3,
                              s->river_m3,
                              s->laid_m3,
                              s->unplaced_m3,
                              s->unplaced_full_m3,
                              s->unplaced_no_shallows_m3,
                              s->unplaced_rounding_m3};
    for (size_t k = 0; k < sizeof volumes / sizeof *volumes; k++)
        if (!s_volume(volumes[k]))
            return tb_err_set(err, TB_E_CHECKSUM, "coast result: volume %zu is %g m3", k,
                              volumes[k]);
    /* the sediment's budget: what was laid and what found no room is what was cut and supplied
     * (counted in integer units, closing to 2e-15 as doubles: docs/coast.md), and the unplaced
     * volume is its three parts */
    double parts = s->unplaced_no_shallows_m3 + s->unplaced_full_m3 + s->unplaced_rounding_m3;
    if (fabs(parts - s->unplaced_m3) > 1e-12 * (parts > 1 ? parts : 1) ||
        tb_coast_budget_error(s) > TB_COAST_CHECK_BUDGET)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast result: the sediment does not add up: laid %g + unplaced %g "
                          "(parts %g) m3 against cut %g + river %g m3",
                          s->laid_m3, s->unplaced_m3, parts, s->cut_m3, s->river_m3);
    const double ex[] = {s->exposure_p10, s->exposure_p50, s->exposure_p90};
    for (size_t k = 0; k < 3; k++)
        if (!(ex[k] >= 0 && ex[k] <= 1) || (k > 0 && ex[k] < ex[k - 1]))
            return tb_err_set(err, TB_E_CHECKSUM,
                              "coast result: exposure percentiles %g, %g, %g (0..1, rising)", ex[0],
                              ex[1], ex[2]);
    if (!isfinite(s->backshore_median_m) || !isfinite(s->backshore_p90_m) ||
        s->backshore_p90_m < s->backshore_median_m)
        return tb_err_set(err, TB_E_CHECKSUM,
                          "coast result: backshore median %g m above its P90 %g m",
                          s->backshore_median_m, s->backshore_p90_m);
    return 0;
}
