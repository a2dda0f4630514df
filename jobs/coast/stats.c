/* The coast block of the verdict (docs/coast.md, "Reading the block"): its mergeable tally (integer
 * counts and histograms, so a planet's blocks add up to the whole pass's numbers exactly), the
 * statistics made from it, the budget check, the printed lines after the predecessor's, and the
 * JSON for meta.json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/methods.h"

double tb_coast_fx_units(const tb_coast_fx_t *f)
{
    /* the fractions' whole units first, so both parts are exact before the one rounding */
    uint64_t units = f->units + (f->frac >> 32), frac = f->frac & 0xFFFFFFFFu;
    return (double)units + ldexp((double)frac, -32);
}

int tb_coast_tally_init(tb_coast_tally_t *t, tb_err_t *err)
{
    memset(t, 0, sizeof *t);
    t->backshore_hist = calloc(TB_COAST_BACKSHORE_BINS, sizeof *t->backshore_hist);
    if (!t->backshore_hist)
        return tb_err_set(err, TB_E_NOMEM, "coast: out of memory for a tally's histogram");
    return 0;
}

void tb_coast_tally_free(tb_coast_tally_t *t)
{
    if (!t)
        return;
    free(t->backshore_hist);
    memset(t, 0, sizeof *t);
}

void tb_coast_tally_add(tb_coast_tally_t *sum, const tb_coast_tally_t *part)
{
#define S_ADD(f) sum->f += part->f
    S_ADD(cells);
    S_ADD(sea_cells);
    S_ADD(shelf_cells);
    S_ADD(waterline_cells);
    S_ADD(edges);
    S_ADD(drowned_cells);
    S_ADD(planed_cells);
    S_ADD(cut_units);
    S_ADD(mouths);
    S_ADD(river_units);
    S_ADD(beach_cells);
    S_ADD(backshore_cells);
    S_ADD(no_room_units);
    S_ADD(laid.units);
    S_ADD(laid.frac);
    S_ADD(full.units);
    S_ADD(full.frac);
    S_ADD(remainder.units);
    S_ADD(remainder.frac);
    S_ADD(sources[0]);
    S_ADD(sources[1]);
#undef S_ADD
    for (int e = 0; e < TB_COAST_EXPOSURE_BINS; e++)
        sum->exposure_hist[e] += part->exposure_hist[e];
    for (int b = 0; b < TB_COAST_BACKSHORE_BINS; b++)
        sum->backshore_hist[b] += part->backshore_hist[b];
}

/* The bin holding the share `at` of n counts (the first whose running count reaches ceil(at n),
 * at least 1), below `last`. */
static int64_t s_quantile_bin(const int64_t *hist, int64_t n, int64_t last, double at)
{
    int64_t need = (int64_t)ceil(at * (double)n), seen = 0, b = 0;
    while (n > 0 && b < last && seen + hist[b] < (need > 0 ? need : 1))
        seen += hist[b++];
    return b;
}

void tb_coast_stats_from_tally(const tb_coast_tally_t *t, double cell_m, tb_coast_stats_t *s)
{
    memset(s, 0, sizeof *s);
    double cell_m2 = cell_m * cell_m, unit_m3 = TB_COAST_UNIT_M * cell_m * cell_m;
    s->cells = t->cells;
    s->sea_cells = t->sea_cells;
    s->shelf_cells = t->shelf_cells;
    s->waterline_cells = t->waterline_cells;
    s->shore_km = (double)t->edges * cell_m / 1000.0;
    s->planed_m2 = (double)t->planed_cells * cell_m2;
    s->cut_m3 = (double)t->cut_units * TB_COAST_UNIT_M * cell_m2;
    s->mouths = t->mouths;
    s->river_m3 = (double)t->river_units * unit_m3;
    s->laid_m3 = tb_coast_fx_units(&t->laid) * unit_m3;
    s->unplaced_no_shallows_m3 = (double)t->no_room_units * unit_m3;
    s->unplaced_full_m3 = tb_coast_fx_units(&t->full) * unit_m3;
    s->unplaced_rounding_m3 = tb_coast_fx_units(&t->remainder) * unit_m3;
    s->unplaced_m3 = s->unplaced_no_shallows_m3 + s->unplaced_full_m3 + s->unplaced_rounding_m3;
    s->beach_m2 = (double)t->beach_cells * cell_m2;
    s->backshore_cells = t->backshore_cells;
    double *back[2] = {&s->backshore_median_m, &s->backshore_p90_m};
    const double back_at[2] = {0.5, 0.9};
    for (int k = 0; k < 2; k++) {
        int64_t b = s_quantile_bin(t->backshore_hist, t->backshore_cells,
                                   TB_COAST_BACKSHORE_BINS - 1, back_at[k]);
        *back[k] = t->backshore_cells > 0 ? ((double)b + 0.5) * TB_COAST_BACKSHORE_BIN_M : 0;
    }
    s->drowned_m2 = (double)t->drowned_cells * cell_m * cell_m;
    double *pct[3] = {&s->exposure_p10, &s->exposure_p50, &s->exposure_p90};
    const double at[3] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        int64_t e =
            s_quantile_bin(t->exposure_hist, t->waterline_cells, TB_COAST_EXPOSURE_ONE, at[k]);
        *pct[k] = t->waterline_cells > 0 ? (double)e / TB_COAST_EXPOSURE_ONE : 0;
    }
}

int tb_coast_share_bits(int64_t units)
{
    return units > 0 ? 61 - (64 - __builtin_clzll((unsigned long long)units)) : 61;
}

double tb_coast_budget_error(const tb_coast_stats_t *s)
{
    double in = s->cut_m3 + s->river_m3, out = s->laid_m3 + s->unplaced_m3;
    return fabs(out - in) / (in > 1 ? in : 1);
}

void tb_coast_stats_format(const tb_coast_stats_t *s, char *buf, size_t n)
{
    double sea = s->cells ? 100.0 * (double)s->sea_cells / (double)s->cells : 0;
    double shelf = s->sea_cells ? 100.0 * (double)s->shelf_cells / (double)s->sea_cells : 0;
    double supplied = s->cut_m3 + s->river_m3;
    double unplaced = supplied > 0 ? 100.0 * s->unplaced_m3 / supplied : 0;
    snprintf(buf, n,
             "coast: %.0f km of shoreline, %.0f%% sea, shelf %.0f%% of it; surf planed %.2f km2 "
             "and cut %.2f Mm3,\n"
             "%lld river mouths delivered %.2f Mm3, %.2f Mm3 laid (%.1f%% unplaced) as %.2f km2 "
             "of new beach;\n"
             "backshore %.1f m median, %.1f m P90, %.2f km2 drowned; shore exposure %.2f / %.2f / "
             "%.2f (p10/p50/p90)\n",
             s->shore_km, sea, shelf, s->planed_m2 / 1e6, s->cut_m3 / 1e6, (long long)s->mouths,
             s->river_m3 / 1e6, s->laid_m3 / 1e6, unplaced, s->beach_m2 / 1e6,
             s->backshore_median_m, s->backshore_p90_m, s->drowned_m2 / 1e6, s->exposure_p10,
             s->exposure_p50, s->exposure_p90);
}

cJSON *tb_coast_stats_to_json(const tb_coast_stats_t *s)
{
    cJSON *o = cJSON_CreateObject();
    double supplied = s->cut_m3 + s->river_m3;
    cJSON_AddNumberToObject(o, "shoreline_km", s->shore_km);
    cJSON_AddNumberToObject(o, "sea_share", s->cells ? (double)s->sea_cells / (double)s->cells : 0);
    cJSON_AddNumberToObject(o, "shelf_share",
                            s->sea_cells ? (double)s->shelf_cells / (double)s->sea_cells : 0);
    cJSON_AddNumberToObject(o, "waterline_cells", (double)s->waterline_cells);
    cJSON_AddNumberToObject(o, "planed_km2", s->planed_m2 / 1e6);
    cJSON_AddNumberToObject(o, "cut_mm3", s->cut_m3 / 1e6);
    cJSON_AddNumberToObject(o, "river_mouths", (double)s->mouths);
    cJSON_AddNumberToObject(o, "river_mm3", s->river_m3 / 1e6);
    cJSON_AddNumberToObject(o, "laid_mm3", s->laid_m3 / 1e6);
    cJSON_AddNumberToObject(o, "unplaced_mm3", s->unplaced_m3 / 1e6);
    cJSON_AddNumberToObject(o, "unplaced_share", supplied > 0 ? s->unplaced_m3 / supplied : 0);
    cJSON_AddNumberToObject(o, "unplaced_no_shallows_mm3", s->unplaced_no_shallows_m3 / 1e6);
    cJSON_AddNumberToObject(o, "unplaced_full_mm3", s->unplaced_full_m3 / 1e6);
    cJSON_AddNumberToObject(o, "unplaced_rounding_mm3", s->unplaced_rounding_m3 / 1e6);
    cJSON_AddNumberToObject(o, "budget_relative_error", tb_coast_budget_error(s));
    cJSON_AddNumberToObject(o, "beach_km2", s->beach_m2 / 1e6);
    cJSON_AddNumberToObject(o, "backshore_median_m", s->backshore_median_m);
    cJSON_AddNumberToObject(o, "backshore_p90_m", s->backshore_p90_m);
    cJSON_AddNumberToObject(o, "drowned_km2", s->drowned_m2 / 1e6);
    cJSON_AddNumberToObject(o, "exposure_p10", s->exposure_p10);
    cJSON_AddNumberToObject(o, "exposure_p50", s->exposure_p50);
    cJSON_AddNumberToObject(o, "exposure_p90", s->exposure_p90);
    return o;
}
