/* The printed verdict block and its JSON twin (docs/statistics.md).
 *
 *   slopes: 54% under 15 deg, 77% under 30, 0.3% over 50, median 11.2 deg
 *   slope-area: exponent -0.384 (expect -0.500), R2 0.225 over 12 bins
 *   hypsometric integral 0.107 (concave: over-eroded); drainage density 0.48 /km
 *   by uplift class:
 *   plain 0.00..0.10 mm/yr 42% of land slope 0.8 deg median, 2.8 P90 relief 9 m/504 m at talus 1%
 *   ...
 *   by painted class:
 *   range 4% of land slope 24.0 deg median, 33.1 P90, 22% under 15 relief 160 m/504 m at talus 6%
 *   ...
 *   elevation: -912 .. 486 m, clip 0.000% of cells outside elevation_m [-1024, 1024]
 *
 * Both are built from tb_stats_summarise, so the text and meta.json can never disagree. A partial
 * bake prefixes every line with PARTIAL, because its ground statistics are only the solved regions
 * while its extent is the whole cylinder.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "jobs/stats/stats.h"

#define S_MIN_JUDGED_BINS 10 /* fewer fit bins cannot judge a change (docs/statistics.md) */

typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
    const char *prefix;
} s_text_t;

static void s_line(s_text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void s_line(s_text_t *t, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t need = strlen(t->prefix) + strlen(line) + 2;
    if (t->failed)
        return;
    if (t->len + need > t->cap) {
        size_t cap = (t->cap ? t->cap : 1024) * 2 + need;
        char *buf = realloc(t->buf, cap);
        if (!buf) {
            t->failed = true;
            return;
        }
        t->buf = buf;
        t->cap = cap;
    }
    t->len += (size_t)snprintf(t->buf + t->len, t->cap - t->len, "%s%s\n", t->prefix, line);
}

static const char *s_hypsometric_reading(double hi)
{
    if (!(hi == hi))
        return "no relief";
    if (hi >= 0.6)
        return "convex: young";
    if (hi >= 0.35)
        return "S-shaped: mature";
    return "concave: over-eroded";
}

static const char *s_bucket_name(int c)
{
    static const char *names[] = {"plain", "rolling", "mountain", "unclassified", "all land"};
    return c >= 0 && c <= TB_STATS_NBUCKETS ? names[c] : "?";
}

/* "plain 0.00..0.10 mm/yr", "mountain 0.50.. up mm/yr", "unclassified (no uplift field)". */
static void s_class_label(const tb_stats_params_t *p, int c, char *out, size_t n)
{
    const double *e = p->uplift_edges_mm_yr;
    switch (c) {
    case TB_STATS_PLAIN:
        snprintf(out, n, "plain %.2f..%.2f mm/yr", fmin(0, e[0]), e[0]);
        break;
    case TB_STATS_ROLLING:
        snprintf(out, n, "rolling %.2f..%.2f mm/yr", e[0], e[1]);
        break;
    case TB_STATS_MOUNTAIN:
        snprintf(out, n, "mountain %.2f.. up mm/yr", e[1]);
        break;
    case TB_STATS_UNCLASSIFIED:
        snprintf(out, n, "unclassified (no uplift field)");
        break;
    default:
        snprintf(out, n, "all land");
        break;
    }
}

static void s_class_line(s_text_t *t, const tb_stats_params_t *p, const tb_stats_summary_t *sum,
                         int c)
{
    const tb_stats_bucket_summary_t *b = &sum->bucket[c];
    char label[96];
    s_class_label(p, c, label, sizeof label);
    if (b->land_cells == 0) {
        s_line(t, "%s 0%% of land", label);
        return;
    }
    s_line(t,
           "%s %.0f%% of land slope %.1f deg median, %.1f P90 relief %.0f m/%.0f m at talus %.0f%%",
           label, 100 * b->land_share, b->slope_median_deg, b->slope_p90_deg, b->relief_median_m,
           sum->relief_window_m, 100 * b->near_repose_share);
}

/* One painted class: the uplift line's numbers plus the share under 15 degrees, and the class's
 * own slope-area fits when it has them: over all cells (the same area bins as the "slope-area"
 * line) and over its channel cells (steepest descent, from the class's own hillslope-channel
 * break). */
static void s_painted_line(s_text_t *t, const char *name, const tb_stats_bucket_summary_t *b,
                           double window_m)
{
    char fit[224] = "";
    if (b->fit.bins >= 2 && b->fit.exponent == b->fit.exponent)
        snprintf(fit, sizeof fit, " slope-area %.3f R2 %.3f over %d bins", b->fit.exponent,
                 b->fit.r2, (int)b->fit.bins);
    const tb_stats_fit_t *cf = &b->channel_fit;
    if (cf->bins >= 2 && cf->exponent == cf->exponent) {
        size_t used = strlen(fit);
        snprintf(fit + used, sizeof fit - used,
                 "; channels %.3f R2 %.3f over %d bins from %.0f m2 (break %.0f m2)", cf->exponent,
                 cf->r2, (int)cf->bins, cf->min_area_m2, cf->turn_area_m2);
    }
    s_line(
        t,
        "%s %.0f%% of land slope %.1f deg median, %.1f P90, %.0f%% under 15 relief %.0f m/%.0f m "
        "at talus %.0f%%%s",
        name, 100 * b->land_share, b->slope_median_deg, b->slope_p90_deg, 100 * b->slope_under15,
        b->relief_median_m, window_m, 100 * b->near_repose_share, fit);
}

static void s_fit_line(s_text_t *t, const char *what, const tb_stats_fit_t *f)
{
    if (f->bins < 2 || !(f->exponent == f->exponent))
        s_line(t, "%s: %d bins of channel cells qualify, too few for a fit (expect %.3f)", what,
               (int)f->bins, f->expect);
    else
        s_line(t, "%s: exponent %.3f (expect %.3f), R2 %.3f over %d bins%s", what, f->exponent,
               f->expect, f->r2, (int)f->bins,
               f->bins < S_MIN_JUDGED_BINS ? " (too few to judge a change)" : "");
}

char *tb_stats_report_text(const tb_stats_t *self, const tb_stats_extent_t *extent,
                           const char *partial)
{
    tb_stats_summary_t *sum = malloc(sizeof *sum);
    if (!sum)
        return NULL;
    tb_stats_summarise(self, sum);
    const tb_stats_params_t *p = tb_stats_params(self);
    const tb_stats_bucket_summary_t *all = &sum->bucket[TB_STATS_ALL];
    s_text_t t = {.prefix = partial ? "PARTIAL " : ""};
    if (partial)
        s_line(&t,
               "bake of %s only: the ground statistics cover those regions, the extent the "
               "whole planet",
               partial);
    if (all->land_cells == 0) {
        s_line(&t, "slopes: no land counted");
    } else {
        s_line(&t, "slopes: %.0f%% under 15 deg, %.0f%% under 30, %.1f%% over 50, median %.1f deg",
               100 * all->slope_under15, 100 * all->slope_under30, 100 * all->slope_over50,
               all->slope_median_deg);
        if (sum->area_cells == 0) {
            s_line(&t, "slope-area: no drainage area given");
        } else {
            s_fit_line(&t, "slope-area", &all->fit);
            char what[160];
            snprintf(what, sizeof what,
                     "slope-area, channel cells (steepest descent, A >= %.0f m2, the break at "
                     "%.0f m2)",
                     all->channel_fit.min_area_m2, all->channel_fit.turn_area_m2);
            s_fit_line(&t, what, &all->channel_fit);
        }
        char density[64];
        if (sum->area_cells == 0)
            snprintf(density, sizeof density, "n/a (no drainage area)");
        else
            snprintf(density, sizeof density, "%.2f /km", all->drainage_density_per_km);
        s_line(&t, "hypsometric integral %.3f (%s); drainage density %s", all->hypsometric_integral,
               s_hypsometric_reading(all->hypsometric_integral), density);
        s_line(&t, "by uplift class:");
        if (sum->classified_cells > 0)
            for (int c = TB_STATS_PLAIN; c <= TB_STATS_MOUNTAIN; c++)
                s_class_line(&t, p, sum, c);
        if (sum->bucket[TB_STATS_UNCLASSIFIED].land_cells > 0)
            s_class_line(&t, p, sum, TB_STATS_UNCLASSIFIED);
        s_class_line(&t, p, sum, TB_STATS_ALL);
        int nc = tb_stats_class_count(self);
        if (nc > 0) {
            s_line(&t, "by painted class:");
            tb_stats_bucket_summary_t *cb = malloc(sizeof *cb);
            if (!cb)
                t.failed = true;
            for (int c = 0; cb && c < nc; c++) {
                tb_stats_summarise_class(self, c, cb);
                s_painted_line(&t, tb_stats_class_name(self, c), cb, sum->relief_window_m);
            }
            free(cb);
        }
    }
    if (sum->edge_cells > 0)
        s_line(&t,
               "WARNING %lld land cells lie within %.0f m of an inner box edge: their relief "
               "read sea level beyond it",
               (long long)sum->edge_cells, (sum->relief_window_m - p->cell_m) / 2);
    if (extent) {
        double clip = extent->cells > 0 ? (double)extent->clipped / (double)extent->cells : NAN;
        s_line(&t,
               "elevation: %.0f .. %.0f m, clip %.3f%% of cells outside elevation_m [%.0f, %.0f]",
               extent->min_m, extent->max_m, 100 * clip, extent->range_lo_m, extent->range_hi_m);
    }
    free(sum);
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    return t.buf ? t.buf : strdup("");
}

/* A number, or null where it is NaN or infinite (JSON has neither). */
static void s_num(cJSON *obj, const char *name, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(obj, name, v);
    else
        cJSON_AddNullToObject(obj, name);
}

static cJSON *s_fit_json(const tb_stats_fit_t *f)
{
    cJSON *o = cJSON_CreateObject();
    s_num(o, "exponent", f->exponent);
    s_num(o, "expect", f->expect);
    s_num(o, "intercept", f->intercept);
    s_num(o, "r2", f->r2);
    cJSON_AddNumberToObject(o, "bins", f->bins);
    s_num(o, "min_area_m2", f->min_area_m2);
    if (f->turn_area_m2 == f->turn_area_m2)
        s_num(o, "turn_area_m2", f->turn_area_m2);
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    for (int32_t i = 0; pts && i < f->bins; i++) {
        cJSON *pt = cJSON_CreateObject();
        s_num(pt, "area_m2", f->area_m2[i]);
        s_num(pt, "median_slope", f->median_slope[i]);
        cJSON_AddNumberToObject(pt, "cells", (double)f->cells[i]);
        cJSON_AddItemToArray(pts, pt);
    }
    return o;
}

static void s_summary_json(cJSON *o, const tb_stats_bucket_summary_t *b);

static cJSON *s_bucket_json(const tb_stats_params_t *p, const tb_stats_summary_t *sum, int c)
{
    const tb_stats_bucket_summary_t *b = &sum->bucket[c];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s_bucket_name(c));
    if (c <= TB_STATS_MOUNTAIN) {
        s_num(o, "uplift_min_mm_yr", c == 0 ? -INFINITY : p->uplift_edges_mm_yr[c - 1]);
        s_num(o, "uplift_max_mm_yr", c == 2 ? INFINITY : p->uplift_edges_mm_yr[c]);
    }
    s_summary_json(o, b);
    return o;
}

static void s_summary_json(cJSON *o, const tb_stats_bucket_summary_t *b)
{
    cJSON_AddNumberToObject(o, "land_cells", (double)b->land_cells);
    s_num(o, "land_share", b->land_share);
    s_num(o, "slope_under_15_share", b->slope_under15);
    s_num(o, "slope_under_30_share", b->slope_under30);
    s_num(o, "slope_over_50_share", b->slope_over50);
    s_num(o, "slope_median_deg", b->slope_median_deg);
    s_num(o, "slope_p90_deg", b->slope_p90_deg);
    s_num(o, "relief_median_m", b->relief_median_m);
    s_num(o, "relief_p90_m", b->relief_p90_m);
    s_num(o, "near_repose_share", b->near_repose_share);
    s_num(o, "elevation_min_m", b->elev_min_m);
    s_num(o, "elevation_max_m", b->elev_max_m);
    s_num(o, "elevation_mean_m", b->elev_mean_m);
    s_num(o, "elevation_median_m", b->elev_median_m);
    s_num(o, "hypsometric_integral", b->hypsometric_integral);
    s_num(o, "drainage_density_per_km", b->drainage_density_per_km);
    cJSON_AddItemToObject(o, "slope_area", s_fit_json(&b->fit));
    cJSON_AddItemToObject(o, "slope_area_channels", s_fit_json(&b->channel_fit));
}

cJSON *tb_stats_report_json(const tb_stats_t *self, const tb_stats_extent_t *extent,
                            const char *partial)
{
    tb_stats_summary_t *sum = malloc(sizeof *sum);
    cJSON *o = cJSON_CreateObject();
    if (!sum || !o) {
        free(sum);
        cJSON_Delete(o);
        return NULL;
    }
    tb_stats_summarise(self, sum);
    const tb_stats_params_t *p = tb_stats_params(self);
    const tb_stats_bucket_summary_t *all = &sum->bucket[TB_STATS_ALL];
    if (partial)
        cJSON_AddStringToObject(o, "partial", partial);
    else
        cJSON_AddFalseToObject(o, "partial");
    cJSON_AddNumberToObject(o, "land_cells", (double)all->land_cells);
    cJSON_AddNumberToObject(o, "edge_cells", (double)sum->edge_cells);
    s_num(o, "land_area_km2", (double)all->land_cells * p->cell_m * p->cell_m * 1e-6);
    cJSON *slopes = cJSON_AddObjectToObject(o, "slopes");
    if (slopes) {
        s_num(slopes, "under_15_share", all->slope_under15);
        s_num(slopes, "under_30_share", all->slope_under30);
        s_num(slopes, "over_50_share", all->slope_over50);
        s_num(slopes, "median_deg", all->slope_median_deg);
        s_num(slopes, "p90_deg", all->slope_p90_deg);
    }
    cJSON_AddItemToObject(o, "slope_area", s_fit_json(&all->fit));
    cJSON_AddItemToObject(o, "slope_area_channels", s_fit_json(&all->channel_fit));
    s_num(o, "hypsometric_integral", all->hypsometric_integral);
    cJSON_AddStringToObject(o, "hypsometric_reading",
                            s_hypsometric_reading(all->hypsometric_integral));
    s_num(o, "drainage_density_per_km", all->drainage_density_per_km);
    cJSON *params = cJSON_AddObjectToObject(o, "params");
    if (params) {
        s_num(params, "cell_m", p->cell_m);
        s_num(params, "talus_deg", p->talus_deg);
        s_num(params, "repose_band_deg", p->repose_band_deg);
        s_num(params, "relief_window_m", sum->relief_window_m);
        s_num(params, "channel_area_m2", p->channel_area_m2);
        s_num(params, "fit_min_area_m2", p->fit_min_area_m2);
        s_num(params, "channel_fit_min_area_m2", p->channel_fit_min_area_m2);
        cJSON_AddNumberToObject(params, "fit_min_bin_cells", p->fit_min_bin_cells);
        s_num(params, "slope_bin_deg", p->slope_bin_deg);
        s_num(params, "relief_bin_m", p->relief_bin_m);
        s_num(params, "elevation_bin_m", p->elev_bin_m);
    }
    cJSON *classes = cJSON_AddArrayToObject(o, "classes");
    for (int c = 0; classes && c < TB_STATS_NBUCKETS; c++)
        if (c != TB_STATS_UNCLASSIFIED || sum->bucket[c].land_cells > 0)
            cJSON_AddItemToArray(classes, s_bucket_json(p, sum, c));
    cJSON_AddItemToObject(o, "all_land", s_bucket_json(p, sum, TB_STATS_ALL));
    cJSON *painted = cJSON_AddArrayToObject(o, "painted_classes");
    tb_stats_bucket_summary_t *cb = malloc(sizeof *cb);
    for (int c = 0; painted && cb && c < tb_stats_class_count(self); c++) {
        tb_stats_summarise_class(self, c, cb);
        cJSON *co = cJSON_CreateObject();
        cJSON_AddStringToObject(co, "name", tb_stats_class_name(self, c));
        s_summary_json(co, cb);
        /* the share of the class's land in each whole degree of slope, 0-1 .. 89-90: the shape
         * near the repose angle (a spike or a shoulder, docs/solve.md) is read off this */
        const tb_hist_t *sh = tb_stats_class_slope_hist(self, c);
        cJSON *deg = cJSON_AddArrayToObject(co, "slope_share_by_deg");
        for (int d = 0; deg && d < 90; d++)
            cJSON_AddItemToArray(deg, cJSON_CreateNumber(tb_hist_fraction_below(sh, d + 1) -
                                                         tb_hist_fraction_below(sh, d)));
        cJSON_AddItemToArray(painted, co);
    }
    free(cb);
    if (extent) {
        cJSON *e = cJSON_AddObjectToObject(o, "elevation");
        if (e) {
            s_num(e, "min_m", extent->min_m);
            s_num(e, "max_m", extent->max_m);
            cJSON_AddNumberToObject(e, "cells", (double)extent->cells);
            cJSON_AddNumberToObject(e, "clipped_cells", (double)extent->clipped);
            s_num(e, "clip_fraction",
                  extent->cells > 0 ? (double)extent->clipped / (double)extent->cells : NAN);
            s_num(e, "range_lo_m", extent->range_lo_m);
            s_num(e, "range_hi_m", extent->range_hi_m);
        }
    }
    free(sum);
    return o;
}
