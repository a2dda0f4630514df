/* The coast block of the verdict (docs/coast.md, "Reading the block"): the budget check, the
 * printed lines after the predecessor's, and the JSON for meta.json. */
#include <math.h>
#include <stdio.h>

#include "jobs/coast/coast.h"

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
