/* What meta.json gains for the page: compact histograms and input hashes; see report.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/hist.h"
#include "coordinator/report/report.h"

#define S_MAX_BARS 48

static const char *s_bucket_name(int c)
{
    static const char *names[] = {"plain", "rolling", "mountain", "unclassified", "all land"};
    return names[c];
}

/* The smallest of 1, 2, 5 x 10^k that is a whole multiple of `quantum` and at least `want`. */
static double s_nice_width(double want, double quantum)
{
    if (!(want > quantum))
        return quantum;
    double p = pow(10, floor(log10(want)));
    for (int k = 0; k < 40; k++, p *= 10) {
        static const double mult[] = {1, 2, 5};
        for (int i = 0; i < 3; i++) {
            double w = mult[i] * p;
            if (w >= want && fabs(w / quantum - round(w / quantum)) < 1e-9)
                return w;
        }
    }
    return quantum * ceil(want / quantum);
}

typedef const tb_hist_t *(*s_hist_fn)(const tb_stats_t *, int);

/* One histogram family (slope, relief, elevation) re-binned to `width` from 0, n bars, per bucket
 * and summed for all land; values at or beyond n * width go to "beyond". */
static cJSON *s_family(const tb_stats_t *stats, s_hist_fn get, double width, int n,
                       const int *buckets, int n_buckets)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "lo", 0);
    cJSON_AddNumberToObject(o, "width", width);
    cJSON_AddNumberToObject(o, "bars", n);
    cJSON *classes = cJSON_AddArrayToObject(o, "classes");
    int64_t *all = calloc((size_t)n + 1, sizeof *all);
    int64_t *row = calloc((size_t)n + 1, sizeof *row);
    if (!all || !row) {
        free(all);
        free(row);
        cJSON_Delete(o);
        return NULL;
    }
    for (int bi = 0; bi <= n_buckets; bi++) {
        int c = bi < n_buckets ? buckets[bi] : TB_STATS_ALL;
        if (c == TB_STATS_ALL) {
            memcpy(row, all, ((size_t)n + 1) * sizeof *row);
        } else {
            memset(row, 0, ((size_t)n + 1) * sizeof *row);
            const tb_hist_t *hst = get(stats, c);
            int32_t nb = tb_hist_spec(hst)->nbins;
            for (int32_t k = -1; k <= nb; k++) {
                int64_t cnt = tb_hist_bin_count(hst, k);
                if (!cnt)
                    continue;
                /* the bin's midpoint decides its bar (width is a multiple of the bin width, so a
                 * bin lies in one bar; the midpoint keeps rounding of the edges out of it) */
                double mid =
                    k < 0 || k >= nb ? 0 : 0.5 * (tb_hist_edge(hst, k) + tb_hist_edge(hst, k + 1));
                int64_t bar = k >= nb ? n : (int64_t)floor(mid / width);
                row[bar < 0 ? 0 : bar > n ? n : bar] += cnt;
            }
            for (int i = 0; i <= n; i++)
                all[i] += row[i];
        }
        cJSON *cl = cJSON_CreateObject();
        cJSON_AddStringToObject(cl, "name", s_bucket_name(c));
        cJSON *counts = cJSON_AddArrayToObject(cl, "counts");
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(counts, cJSON_CreateNumber((double)row[i]));
        cJSON_AddNumberToObject(cl, "beyond", (double)row[n]);
        cJSON_AddItemToArray(classes, cl);
    }
    free(all);
    free(row);
    return o;
}

/* The largest value over the buckets (0 when all are empty). */
static double s_max(const tb_stats_t *stats, s_hist_fn get, const int *buckets, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        const tb_hist_t *hst = get(stats, buckets[i]);
        if (tb_hist_count(hst) > 0 && isfinite(tb_hist_max(hst)) && tb_hist_max(hst) > m)
            m = tb_hist_max(hst);
    }
    return m;
}

cJSON *tb_report_histograms_json(const tb_stats_t *stats)
{
    if (!stats)
        return cJSON_CreateNull();
    /* the buckets meta.json's statistics.classes lists: unclassified only when it holds land */
    int buckets[TB_STATS_NBUCKETS], nb = 0;
    for (int c = 0; c < TB_STATS_NBUCKETS; c++) {
        tb_stats_counts_t cnt;
        tb_stats_counts(stats, c, &cnt);
        if (c != TB_STATS_UNCLASSIFIED || cnt.land_cells > 0)
            buckets[nb++] = c;
    }
    const tb_stats_params_t *p = tb_stats_params(stats);
    cJSON *o = cJSON_CreateObject();
    cJSON *slope = s_family(stats, tb_stats_slope_hist, 1.0, 90, buckets, nb);
    double rmax = s_max(stats, tb_stats_relief_hist, buckets, nb);
    double rw = s_nice_width(rmax / S_MAX_BARS, p->relief_bin_m);
    int rn = (int)fmax(1, ceil(rmax / rw + 1e-12));
    if (rn * rw <= rmax)
        rn++;
    if (rn > S_MAX_BARS + 1)
        rn = S_MAX_BARS + 1;
    cJSON *relief = s_family(stats, tb_stats_relief_hist, rw, rn, buckets, nb);
    double emax = s_max(stats, tb_stats_elev_hist, buckets, nb);
    double ew = s_nice_width(emax / S_MAX_BARS, p->elev_bin_m);
    int en = (int)fmax(1, ceil(emax / ew + 1e-12));
    if (en * ew <= emax)
        en++;
    if (en > S_MAX_BARS + 1)
        en = S_MAX_BARS + 1;
    cJSON *elev = s_family(stats, tb_stats_elev_hist, ew, en, buckets, nb);
    if (!o || !slope || !relief || !elev) {
        cJSON_Delete(o);
        cJSON_Delete(slope);
        cJSON_Delete(relief);
        cJSON_Delete(elev);
        return NULL;
    }
    cJSON_AddItemToObject(o, "slope_deg", slope);
    cJSON_AddItemToObject(o, "relief_m", relief);
    cJSON_AddItemToObject(o, "elevation_m", elev);
    return o;
}

static void s_hex(cJSON *o, const char *key, uint64_t h)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cJSON_AddStringToObject(o, key, hex);
}

/* {"path": path, "xxh3": the file's} or {"path", "error"} when it cannot be read. */
static cJSON *s_file(const char *path)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", path);
    char *bytes;
    size_t n;
    tb_err_t err;
    if (tb_fs_read_all(path, (size_t)1 << 34, &bytes, &n, &err) != 0) {
        cJSON_AddStringToObject(o, "error", err.msg);
        return o;
    }
    s_hex(o, "xxh3", tb_xxh3(bytes, n));
    cJSON_AddNumberToObject(o, "bytes", (double)n);
    free(bytes);
    return o;
}

cJSON *tb_report_inputs_json(const tb_manifest_t *m, const tb_plan_t *plan)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char *mj = tb_manifest_to_json(m);
    if (mj) {
        s_hex(o, "resolved_manifest_xxh3", tb_xxh3(mj, strlen(mj)));
        free(mj);
    }
    s_hex(o, "class_raster_xxh3", tb_plan_class_raster_xxh3(plan));
    if (m->painting_path[0]) {
        cJSON_AddItemToObject(o, "manifest", s_file(m->source));
        cJSON_AddItemToObject(o, "painting", s_file(m->painting_path));
        if (m->legend_path[0])
            cJSON_AddItemToObject(o, "legend", s_file(m->legend_path));
    } else {
        cJSON_AddStringToObject(o, "source", m->source);
    }
    return o;
}
