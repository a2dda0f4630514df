/* The report page generator; see page.h. Sections, top to bottom (docs/report.md):
 *   banner      FINISHED / RUNNING / FAILED / INTERRUPTED, the planet, the time, the stale warning
 *   first       three cards an operator reads first: did it finish, is it terrain (the built-in
 *               gates of `terrain gate`, docs/gate.md), which worker was slow; and the preview
 *   live        phase, ETA, jobs (queued, running, done, failed), workers, failures
 *   verdict     every statistic of summary.txt as tables (docs/statistics.md), the coast block
 *               (docs/coast.md) or "skipped (--no-coast)"
 *   tiles       the detail tiles when the tiles phase ran (docs/tiles.md)
 *   histograms  inline SVG: slope by class, elevation, relief, slope-area with the fitted and the
 *               expected -m/n lines
 *   maps        every map as a thumbnail linking to the full image
 *   plan        the region and class tables
 *   timeline    a Gantt chart per worker of every attempt (retries and failures in their colours)
 *   record      build, manifest and input hashes, every output with its XXH3 and a link
 * Every number that meta.json also holds is printed through tb_html_meta_num, tagged with its path.
 */
#include "coordinator/report/page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fs.h"
#include "coordinator/gate/gate.h"
#include "coordinator/report/html.h"

#define S_NUM tb_html_meta_num

typedef struct {
    tb_html_t *h;
    const cJSON *doc;
    const tb_report_page_t *pg;
    bool partial;
    bool finished; /* a meta.json page */
} s_ctx_t;

static void s_iso(double unix_s, char *out, size_t n)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void s_duration(double s, char *out, size_t n)
{
    if (!isfinite(s) || s < 0)
        snprintf(out, n, "?");
    else if (s < 120)
        snprintf(out, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(out, n, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
    else
        snprintf(out, n, "%.0f h %02.0f min", floor(s / 3600), fmod(floor(s / 60), 60));
}

static bool s_image_exists(const s_ctx_t *c, const char *name)
{
    char path[4200];
    if (!c->pg->out_dir || tb_fs_join(path, sizeof path, c->pg->out_dir, name, NULL) != 0)
        return false;
    return tb_fs_exists(path);
}

/* ---- the weight of a job: box cells x steps (from the record, else from the plan) ---- */

static double s_job_weight(const cJSON *doc, const cJSON *job)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(job, "weight");
    if (cJSON_IsNumber(w))
        return w->valuedouble;
    const char *label = tb_json_str(job, "label", "");
    int id;
    if (sscanf(label, "region %d", &id) != 1)
        return NAN;
    char path[64];
    snprintf(path, sizeof path, "plan.regions.%d.box_cells", id - 1);
    return tb_json_num(doc, path) * tb_json_num(doc, "bake.steps");
}

/* Per worker: seconds of successful attempts and the weight they did; slowest = most ns per box
 * cell-step. */
typedef struct {
    char name[128];
    double ok_s, ok_weight, busy_s;
    double run_s, run_weight; /* running attempts: seconds so far, work done by their progress */
    int ok, failed, lost, running;
} s_worker_sum_t;

static int s_worker_sums(const cJSON *doc, s_worker_sum_t *out, int max)
{
    int n = 0;
    const cJSON *workers = tb_json_path(doc, "dispatch.workers");
    const cJSON *w;
    cJSON_ArrayForEach(w, workers)
    {
        const char *name = tb_json_str(w, "name", "?");
        int k;
        for (k = 0; k < n && strcmp(out[k].name, name) != 0; k++)
            ;
        if (k == n && n < max) {
            memset(&out[n], 0, sizeof out[n]);
            snprintf(out[n].name, sizeof out[n].name, "%s", name);
            n++;
        }
    }
    const cJSON *job;
    cJSON_ArrayForEach(job, tb_json_path(doc, "dispatch.jobs"))
    {
        double weight = s_job_weight(doc, job);
        const cJSON *a;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(job, "attempts"))
        {
            const char *name = tb_json_str(a, "worker", "?");
            int k;
            for (k = 0; k < n && strcmp(out[k].name, name) != 0; k++)
                ;
            if (k == n) {
                if (n == max)
                    continue;
                memset(&out[n], 0, sizeof out[n]);
                snprintf(out[n].name, sizeof out[n].name, "%s", name);
                n++;
            }
            const char *oc = tb_json_str(a, "outcome", "");
            double s = tb_json_num(a, "seconds");
            if (isfinite(s))
                out[k].busy_s += s;
            if (strcmp(oc, "ok") == 0) {
                out[k].ok++;
                out[k].ok_s += isfinite(s) ? s : 0;
                out[k].ok_weight += isfinite(weight) ? weight : 0;
            } else if (strcmp(oc, "running") == 0) {
                out[k].running++;
                double prog = tb_json_num(job, "progress");
                if (isfinite(s) && isfinite(weight) && prog >= 0.02) {
                    out[k].run_s += s;
                    out[k].run_weight += prog * weight;
                }
            } else if (strncmp(oc, "lost", 4) == 0) {
                out[k].lost++;
            } else {
                out[k].failed++;
            }
        }
    }
    return n;
}

/* ---- head and banner ---- */

static const char *s_state_word(const char *state)
{
    if (strcmp(state, "finished") == 0)
        return "FINISHED";
    if (strcmp(state, "running") == 0)
        return "RUNNING";
    if (strcmp(state, "interrupted") == 0)
        return "INTERRUPTED";
    return "FAILED";
}

static void s_head(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const tb_report_page_t *pg = c->pg;
    tb_html_printf(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n");
    if (strcmp(pg->state, "running") == 0)
        tb_html_printf(h, "<noscript><meta http-equiv=\"refresh\" content=\"%.0f\"></noscript>\n",
                       pg->interval_s > 1 ? pg->interval_s : 1);
    tb_html_printf(h, "<title>%s - ", s_state_word(pg->state));
    tb_html_text(h, tb_json_str(c->doc, "manifest.source",
                                tb_json_str(c->doc, "plan.manifest.source", "terrain bake")));
    tb_html_printf(h, " - terrain bake</title>\n<style>%s</style></head>\n", tb_report_css);
    double stale = fmax(60, 10 * pg->interval_s);
    tb_html_printf(h, "<body data-state=\"%s\" data-phase=\"", pg->state);
    tb_html_text(h, pg->phase ? pg->phase : "");
    tb_html_printf(h, "\" data-written-ms=\"%.0f\" data-refresh-s=\"%g\" data-stale-s=\"%g\">\n",
                   pg->written_unix * 1000, pg->interval_s, stale);
}

static bool s_verdict_failed(const s_ctx_t *c)
{
    double clip = tb_json_num(c->doc, "extent.clip_fraction");
    return isfinite(clip) && clip > 0.001;
}

static void s_banner(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const tb_report_page_t *pg = c->pg;
    const char *cls = pg->state;
    bool clip_fail = c->finished && s_verdict_failed(c);
    tb_html_printf(h,
                   "<header class=\"banner st-%s\" id=\"banner\"><h1><span "
                   "id=\"state-word\">%s</span>%s</h1>\n"
                   "<span class=\"sub\">",
                   clip_fail ? "failed" : cls, clip_fail ? "FAILED" : s_state_word(pg->state),
                   c->partial ? " <span class=\"badge\">PARTIAL</span>" : "");
    tb_html_text(
        h, tb_json_str(c->doc, "manifest.source", tb_json_str(c->doc, "plan.manifest.source", "")));
    tb_html_printf(h, " &middot; ");
    S_NUM(h, c->doc, "bake.steps", 1, 0, "steps");
    tb_html_printf(h, " &middot; ");
    S_NUM(h, c->doc, "bake.regions_solved", 1, 0, NULL);
    tb_html_printf(h, " of ");
    S_NUM(h, c->doc, "bake.regions_total", 1, 0, "regions");
    if (c->finished) {
        tb_html_printf(h, " &middot; ");
        S_NUM(h, c->doc, "bake.seconds", 1, 1, "s");
    }
    char when[64];
    s_iso(pg->written_unix, when, sizeof when);
    if (strcmp(pg->state, "running") == 0)
        tb_html_printf(h,
                       " &middot; phase <b>%s</b> &middot; page written %s (<span class=\"age\">"
                       "just now</span>)",
                       pg->phase ? pg->phase : "?", when);
    else
        tb_html_printf(h, " &middot; page written %s", when);
    tb_html_printf(h, "</span>\n<div id=\"stale\" hidden></div>");
    if (clip_fail)
        tb_html_printf(h, "<div class=\"sub\">the heightmap clips more than 0.1 %% of the planet's "
                          "cells: a failed bake (its outputs were written so the clipping can be "
                          "looked at)</div>");
    if (pg->error) {
        tb_html_printf(h, "<div class=\"sub\">the bake did not finish: ");
        tb_html_text(h, pg->error);
        tb_html_printf(h, "</div>");
    }
    tb_html_printf(h, "</header>\n<main>\n");
}

/* ---- the first screen ---- */

static void s_card_finish(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    tb_html_printf(h, "<div class=\"card\" id=\"card-finish\"><h2>Did it finish?</h2>");
    const char *state = c->pg->state;
    if (strcmp(state, "finished") == 0 && !s_verdict_failed(c))
        tb_html_printf(h, "<div class=\"big ok\">Yes%s</div>",
                       c->partial ? " (a PARTIAL bake: only some regions)" : "");
    else if (strcmp(state, "finished") == 0)
        tb_html_printf(h, "<div class=\"big bad\">Outputs written, but the bake failed (clipping)"
                          "</div>");
    else if (strcmp(state, "running") == 0)
        tb_html_printf(h, "<div class=\"big\" id=\"finish-big\">Not yet: running, phase %s</div>",
                       c->pg->phase ? c->pg->phase : "?");
    else
        tb_html_printf(h, "<div class=\"big bad\">No: %s</div>", state);
    int queued = 0, running = 0, done = 0, failed = 0, store = 0, n = 0;
    const cJSON *job;
    cJSON_ArrayForEach(job, tb_json_path(d, "dispatch.jobs"))
    {
        n++;
        const char *s = tb_json_str(
            job, "state", cJSON_IsTrue(cJSON_GetObjectItem(job, "done")) ? "done" : "queued");
        queued += strcmp(s, "queued") == 0;
        running += strcmp(s, "running") == 0;
        done += strcmp(s, "done") == 0;
        failed += strcmp(s, "failed") == 0;
        store += cJSON_IsTrue(cJSON_GetObjectItem(job, "from_store"));
    }
    tb_html_printf(h,
                   "<p>jobs: <b>%d</b> done (%d from the store), <b>%d</b> running, <b>%d</b> "
                   "queued, <b class=\"%s\">%d</b> failed, of %d</p>",
                   done, store, running, queued, failed ? "bad" : "", failed, n);
    if (tb_json_path(d, "dispatch.stats")) {
        tb_html_printf(h, "<p>attempts ");
        S_NUM(h, d, "dispatch.stats.attempts", 1, 0, NULL);
        tb_html_printf(h, ", lost ");
        S_NUM(h, d, "dispatch.stats.lost", 1, 0, NULL);
        tb_html_printf(h, ", failed ");
        S_NUM(h, d, "dispatch.stats.failed", 1, 0, NULL);
        tb_html_printf(h, "; dispatch ");
        S_NUM(h, d, "dispatch.seconds", 1, 1, "s");
        tb_html_printf(h, " (");
        tb_html_text(h, tb_json_str(d, "dispatch.mode", "?"));
        tb_html_printf(h, ")</p>");
    }
    if (c->pg->eta) {
        /* the ETA in seconds for a machine (tests/test_report_browser.sh compares it with the end)
         */
        double eta_s = tb_json_num(d, "live.progress.eta_s");
        tb_html_printf(h, "<p id=\"eta\"");
        if (isfinite(eta_s))
            tb_html_printf(h, " data-eta-s=\"%.3f\" data-eta-phase=\"%s\"", eta_s,
                           tb_json_str(d, "live.progress.phase", ""));
        tb_html_printf(h, ">");
        tb_html_text(h, c->pg->eta);
        tb_html_printf(h, "</p>");
    }
    tb_html_printf(h, "</div>\n");
}

typedef struct {
    int pass, fail, error, n;
} s_gate_tally_t;

static void s_gate_rows(s_ctx_t *c, const tb_gates_t *gates, const cJSON *stats, bool rows,
                        s_gate_tally_t *t)
{
    tb_html_t *h = c->h;
    memset(t, 0, sizeof *t);
    for (int i = 0; i < gates->n; i++) {
        const tb_gate_t *g = &gates->gate[i];
        double v = tb_gate_value(stats, g);
        tb_gate_check_t chk;
        tb_gate_check(g, v, NAN, &chk);
        t->n++;
        t->pass += chk.status == TB_GATE_PASS;
        t->fail += chk.status == TB_GATE_FAIL;
        t->error += chk.status == TB_GATE_ERROR;
        if (!rows)
            continue;
        char bound[96], val[64];
        tb_gate_bound_text(g, bound, sizeof bound);
        tb_gate_value_text(g, v, val, sizeof val);
        tb_html_printf(h, "<tr><td class=\"l\">%s</td><td>", g->name);
        tb_html_text(h, val);
        tb_html_printf(h, "</td><td>");
        tb_html_text(h, bound);
        tb_html_printf(h, "</td><td class=\"%s\">%s</td><td class=\"l muted\">",
                       chk.status == TB_GATE_PASS ? "ok" : "bad",
                       chk.status == TB_GATE_PASS ? "pass" : "FAIL");
        tb_html_text(h, chk.message);
        tb_html_printf(h, "</td></tr>\n");
    }
}

static void s_card_terrain(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    tb_html_printf(h, "<div class=\"card\" id=\"card-terrain\"><h2>Is it terrain?</h2>");
    const cJSON *stats = tb_json_path(d, "statistics");
    if (!c->finished || !cJSON_IsObject(stats)) {
        tb_html_printf(h, "<p class=\"muted\">The statistics come when the bake ends.</p></div>\n");
        return;
    }
    tb_gates_t gates;
    tb_err_t err;
    if (tb_gates_load(NULL, &gates, &err) == 0) {
        s_gate_tally_t t;
        s_gate_rows(c, &gates, stats, false, &t);
        tb_html_printf(h, "<div class=\"big %s\">%d of %d built-in gates pass</div>",
                       t.pass == t.n ? "ok" : "bad", t.pass, t.n);
        for (int i = 0; i < gates.n; i++) {
            tb_gate_check_t chk;
            tb_gate_check(&gates.gate[i], tb_gate_value(stats, &gates.gate[i]), NAN, &chk);
            if (chk.status != TB_GATE_PASS) {
                tb_html_printf(h, "<div class=\"bad\">");
                tb_html_text(h, chk.message);
                tb_html_printf(h, "</div>");
            }
        }
        tb_html_printf(h,
                       "<p class=\"muted\">the bounds of <code>terrain gate</code> "
                       "(docs/gate.md), measured on the 25 km demo at 50 to 400 steps; the "
                       "table is under <a href=\"#gates\">Gates</a>%s</p>",
                       c->partial ? "; a PARTIAL bake's numbers cover its regions only" : "");
    }
    tb_html_printf(h, "<table><tr><td class=\"l\">slope-area exponent</td><td>");
    S_NUM(h, d, "statistics.slope_area.exponent", 1, 3, NULL);
    tb_html_printf(h, " (expect ");
    S_NUM(h, d, "statistics.slope_area.expect", 1, 3, NULL);
    tb_html_printf(h, "), R2 ");
    S_NUM(h, d, "statistics.slope_area.r2", 1, 3, NULL);
    tb_html_printf(h, "</td></tr><tr><td class=\"l\">plain median slope</td><td>");
    S_NUM(h, d, "statistics.classes.0.slope_median_deg", 1, 1, "deg");
    tb_html_printf(h, "</td></tr><tr><td class=\"l\">land over 50 deg</td><td>");
    S_NUM(h, d, "statistics.slopes.over_50_share", 100, 2, "%");
    tb_html_printf(h, "</td></tr><tr><td class=\"l\">drainage density</td><td>");
    S_NUM(h, d, "statistics.drainage_density_per_km", 1, 2, "/km");
    tb_html_printf(h, "</td></tr><tr><td class=\"l\">clipped cells</td><td>");
    S_NUM(h, d, "extent.clip_fraction", 100, 3, "%");
    tb_html_printf(h, "</td></tr></table></div>\n");
}

/* The dispatches on the timeline: meta.json's (or the live document's) "timeline.dispatches", each
 * {phase, start_s from the bake's start, record: the path of its dispatch record}; a meta.json
 * written before the timeline existed has the solve's alone, at 0. */
typedef struct {
    const char *phase;
    double start_s;
    const cJSON *record;
} s_dispatch_t;

static int s_dispatches(const cJSON *doc, s_dispatch_t *out, int max)
{
    int n = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, tb_json_path(doc, "timeline.dispatches"))
    {
        const cJSON *rec = tb_json_path(doc, tb_json_str(d, "record", ""));
        if (n < max && cJSON_IsObject(rec))
            out[n++] = (s_dispatch_t){tb_json_str(d, "phase", "?"), tb_json_num(d, "start_s"), rec};
    }
    if (n == 0 && cJSON_IsObject(tb_json_path(doc, "dispatch")) && max > 0)
        out[n++] = (s_dispatch_t){"solve", 0, tb_json_path(doc, "dispatch")};
    return n;
}

/* ---- which worker was slow: only beyond the measured noise ---- */

#define S_NOISE_MIN_JOBS 3 /* jobs of one kind a worker needs for its spread to be measured */
#define S_NOISE_FACTOR 3.0 /* a difference must exceed this many times the noise */

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double s_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, s_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    char name[128];
    double cost[512]; /* seconds per weight unit of each first attempt that succeeded */
    int n;
    double median, spread; /* spread: median absolute deviation over the median (NaN: < 3 jobs) */
} s_wcost_t;

/* One kind's verdict (a dispatch: its jobs are of one kind and one size measure). Returns the
 * number of workers judged; *slow and *fast their indices, *noise the run-to-run noise. */
static int s_judge(const cJSON *record, s_wcost_t *w, int max, int *slow, int *fast, double *noise)
{
    int n = 0;
    const cJSON *job;
    cJSON_ArrayForEach(job, cJSON_GetObjectItem(record, "jobs"))
    {
        double wt = tb_json_num(job, "weight");
        const cJSON *as = cJSON_GetObjectItemCaseSensitive(job, "attempts");
        const cJSON *a = cJSON_GetArrayItem(as, 0);
        if (!(wt > 0) || cJSON_GetArraySize(as) != 1 || !a ||
            strcmp(tb_json_str(a, "outcome", ""), "ok") != 0 || !(tb_json_num(a, "seconds") > 0))
            continue;
        const char *name = tb_json_str(a, "worker", "?");
        int k;
        for (k = 0; k < n && strcmp(w[k].name, name) != 0; k++)
            ;
        if (k == n) {
            if (n == max)
                continue;
            memset(&w[n], 0, sizeof w[n]);
            snprintf(w[n].name, sizeof w[n].name, "%s", name);
            n++;
        }
        if (w[k].n < 512)
            w[k].cost[w[k].n++] = tb_json_num(a, "seconds") / wt;
    }
    *slow = *fast = -1;
    *noise = NAN;
    for (int k = 0; k < n; k++) {
        double tmp[512];
        memcpy(tmp, w[k].cost, sizeof(double) * (size_t)w[k].n);
        w[k].median = s_median(tmp, w[k].n);
        w[k].spread = NAN;
        if (w[k].n >= S_NOISE_MIN_JOBS) {
            for (int i = 0; i < w[k].n; i++)
                tmp[i] = fabs(w[k].cost[i] - w[k].median);
            w[k].spread = s_median(tmp, w[k].n) / w[k].median;
            *noise = isfinite(*noise) ? fmax(*noise, w[k].spread) : w[k].spread;
        }
        if (*slow < 0 || w[k].median > w[*slow].median)
            *slow = k;
        if (*fast < 0 || w[k].median < w[*fast].median)
            *fast = k;
    }
    return n;
}

static void s_card_workers(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    tb_html_printf(h, "<div class=\"card\" id=\"card-workers\"><h2>Which worker was slow?</h2>");
    s_dispatch_t ds[16];
    int nd = s_dispatches(c->doc, ds, 16), judged = 0, named = 0;
    static s_wcost_t w[16][32];
    char lines[16][512];
    for (int k = 0; k < nd; k++) {
        int slow, fast;
        double noise;
        int n = s_judge(ds[k].record, w[k], 32, &slow, &fast, &noise);
        lines[k][0] = '\0';
        if (n < 2)
            continue;
        judged++;
        double diff = w[k][slow].median / w[k][fast].median - 1;
        bool beyond = isfinite(noise) && diff > S_NOISE_FACTOR * noise;
        named += beyond;
        if (!isfinite(noise))
            snprintf(lines[k], sizeof lines[k],
                     "%s: %s %.0f%% slower than %s, but no worker ran %d of its jobs, so the "
                     "noise is not measured: no verdict",
                     ds[k].phase, w[k][slow].name, 100 * diff, w[k][fast].name, S_NOISE_MIN_JOBS);
        else
            snprintf(lines[k], sizeof lines[k], "%s: %s %.0f%% slower than %s; noise %.1f%% %s",
                     ds[k].phase, w[k][slow].name, 100 * diff, w[k][fast].name, 100 * noise,
                     beyond ? "- beyond it: this worker is slow" : "- within it: none is slow");
    }
    if (named)
        tb_html_printf(h, "<div class=\"big bad\" id=\"slow-verdict\">a worker is slower than the "
                          "noise</div>");
    else if (judged)
        tb_html_printf(h, "<div class=\"big ok\" id=\"slow-verdict\">none beyond the noise</div>");
    else
        tb_html_printf(h, "<div class=\"big\" id=\"slow-verdict\">%s</div>",
                       c->finished ? "fewer than two workers ran jobs: nothing to compare"
                                   : "not enough finished jobs yet");
    tb_html_printf(h, "<ul class=\"slow-lines\">");
    for (int k = 0; k < nd; k++)
        if (lines[k][0]) {
            tb_html_printf(h, "<li>");
            tb_html_text(h, lines[k]);
            tb_html_printf(h, "</li>");
        }
    tb_html_printf(h,
                   "</ul><p class=\"muted\">Per phase, each worker's median seconds per unit of "
                   "work over its jobs that succeeded at the first attempt (a region's box cells x "
                   "steps, a tile's window cells with a land cell counting 1.9). The noise is "
                   "measured on the same run: the "
                   "largest spread (median absolute deviation over the median) of one worker's "
                   "jobs of that phase, among workers with at least %d; a worker is named slow "
                   "only when the difference exceeds %.0f times it. Jobs of one size (tiles) "
                   "measure it best; regions differ in size and carry a fixed start-up cost, so "
                   "their spread is wide and their verdict cautious.</p>\n",
                   S_NOISE_MIN_JOBS, S_NOISE_FACTOR);
    s_worker_sum_t ws[64];
    int n = s_worker_sums(c->doc, ws, 64);
    if (n > 0) {
        tb_html_printf(h, "<table><tr><th class=\"l\">worker</th><th>ok</th><th>failed</th>"
                          "<th>lost</th><th>busy</th></tr>");
        for (int i = 0; i < n; i++) {
            char busy[32];
            s_duration(ws[i].busy_s, busy, sizeof busy);
            tb_html_printf(h, "<tr><td class=\"l\">");
            tb_html_text(h, ws[i].name);
            tb_html_printf(h,
                           "%s</td><td>%d</td><td class=\"%s\">%d</td><td>%d</td><td>%s</td>"
                           "</tr>",
                           ws[i].running ? " (running)" : "", ws[i].ok, ws[i].failed ? "bad" : "",
                           ws[i].failed, ws[i].lost, busy);
        }
        tb_html_printf(h, "</table>");
    }
    tb_html_printf(h, "</div>\n");
}

static void s_first(s_ctx_t *c)
{
    tb_html_printf(c->h, "<div class=\"cards\" id=\"first\">\n");
    s_card_finish(c);
    s_card_terrain(c);
    s_card_workers(c);
    if (c->finished && s_image_exists(c, "preview.png"))
        tb_html_printf(c->h, "<div class=\"card preview\"><h2>preview.png</h2><a href=\"preview.png"
                             "\"><img src=\"preview.png\" alt=\"hillshaded preview\"></a></div>\n");
    tb_html_printf(c->h, "</div>\n");
}

/* ---- jobs and workers ---- */

static void s_jobs_table(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    const cJSON *jobs = tb_json_path(d, "dispatch.jobs");
    if (!cJSON_IsArray(jobs))
        return;
    tb_html_printf(h,
                   "<h3>Jobs</h3><table id=\"jobs\"><tr><th class=\"l\">job</th><th class=\"l\">"
                   "state</th><th class=\"l\">worker</th><th>attempt</th><th>progress</th>"
                   "<th>seconds</th><th>ns / cell-step</th><th class=\"l\">attempts</th></tr>\n");
    int i = 0;
    const cJSON *job;
    cJSON_ArrayForEach(job, jobs)
    {
        bool done = cJSON_IsTrue(cJSON_GetObjectItem(job, "done"));
        const char *state = tb_json_str(job, "state", done ? "done" : "queued");
        bool store = cJSON_IsTrue(cJSON_GetObjectItem(job, "from_store"));
        const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(job, "attempts");
        int na = cJSON_GetArraySize(attempts);
        const cJSON *last = na ? cJSON_GetArrayItem(attempts, na - 1) : NULL;
        tb_html_printf(h, "<tr class=\"job-%s\"><td class=\"l\">", state);
        tb_html_text(h, tb_json_str(job, "label", "?"));
        tb_html_printf(h, "</td><td class=\"l\">%s%s</td><td class=\"l\">", state,
                       store ? " (from the store)" : "");
        char path[96];
        if (strcmp(state, "running") == 0 && last) {
            tb_html_text(h, tb_json_str(last, "worker", "?"));
            tb_html_printf(h,
                           "</td><td>%.0f</td><td><span class=\"pbar\"><i style=\"width:%.0f%%\">"
                           "</i></span> %.0f%%</td><td>%.1f</td><td></td>",
                           tb_json_num(last, "attempt"), 100 * tb_json_num(job, "progress"),
                           100 * tb_json_num(job, "progress"), tb_json_num(last, "seconds"));
        } else if (done) {
            snprintf(path, sizeof path, "dispatch.jobs.%d.worker", i);
            tb_html_text(h, tb_json_str(job, "worker", "?"));
            tb_html_printf(h, "</td><td>%d</td><td>100%%</td><td>", na);
            snprintf(path, sizeof path, "dispatch.jobs.%d.seconds", i);
            S_NUM(h, d, path, 1, 2, NULL);
            double wgt = s_job_weight(d, job), s = tb_json_num(job, "seconds");
            tb_html_printf(h, "</td><td>");
            if (!store && wgt > 0 && s > 0)
                tb_html_printf(h, "%.0f", s * 1e9 / wgt);
            tb_html_printf(h, "</td>");
        } else {
            tb_html_printf(h, "</td><td>%d</td><td></td><td></td><td></td>", na);
        }
        tb_html_printf(h, "<td class=\"l\">");
        const cJSON *a;
        int k = 0;
        cJSON_ArrayForEach(a, attempts)
        {
            const char *oc = tb_json_str(a, "outcome", "");
            tb_html_printf(h, "%s#%.0f: <span class=\"%s\">", k++ ? "<br>" : "",
                           tb_json_num(a, "attempt"),
                           strcmp(oc, "ok") == 0        ? "ok"
                           : strcmp(oc, "running") == 0 ? ""
                                                        : "bad");
            tb_html_text(h, tb_json_str(a, "worker", "?"));
            tb_html_printf(h, " ");
            tb_html_text(h, oc);
            tb_html_printf(h, "</span>");
        }
        const char *error = tb_json_str(job, "error", NULL);
        if (error && error[0]) {
            tb_html_printf(h, "<div class=\"err\">");
            tb_html_text(h, error);
            tb_html_printf(h, "</div>");
        }
        tb_html_printf(h, "</td></tr>\n");
        i++;
    }
    tb_html_printf(h, "</table>\n");
}

static void s_workers_table(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    const cJSON *workers = tb_json_path(d, "dispatch.workers");
    if (!cJSON_IsArray(workers) || cJSON_GetArraySize(workers) == 0)
        return;
    tb_html_printf(h, "<h3>Workers</h3><table id=\"workers\"><tr><th class=\"l\">worker</th>"
                      "<th class=\"l\">state</th><th>threads</th><th>memory GiB</th><th>jobs done"
                      "</th><th>failures</th><th>busy s (ended attempts)</th></tr>\n");
    int i = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, workers)
    {
        char p[96];
        const cJSON *alive = cJSON_GetObjectItem(w, "alive");
        const char *job = tb_json_str(w, "job", NULL);
        tb_html_printf(h, "<tr><td class=\"l\">");
        tb_html_text(h, tb_json_str(w, "name", "?"));
        tb_html_printf(h, "</td><td class=\"l\">");
        if (cJSON_IsTrue(cJSON_GetObjectItem(w, "blocklisted")))
            tb_html_printf(h, "<span class=\"bad\">blocklisted</span>");
        else if (!cJSON_IsBool(alive))
            tb_html_printf(h, "-");
        else if (!cJSON_IsTrue(alive))
            tb_html_printf(h, "%s", c->finished ? "finished" : "gone");
        else if (job) {
            tb_html_printf(h, "running ");
            tb_html_text(h, job);
            tb_html_printf(h, " (attempt %.0f)", tb_json_num(w, "attempt"));
        } else
            tb_html_printf(h, "idle");
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "dispatch.workers.%d.threads", i);
        S_NUM(h, d, p, 1, 0, NULL);
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "dispatch.workers.%d.memory_bytes", i);
        S_NUM(h, d, p, 1.0 / (1 << 30), 1, NULL);
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "dispatch.workers.%d.jobs_done", i);
        S_NUM(h, d, p, 1, 0, NULL);
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "dispatch.workers.%d.failures", i);
        S_NUM(h, d, p, 1, 0, NULL);
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "dispatch.workers.%d.busy_seconds", i);
        S_NUM(h, d, p, 1, 2, NULL);
        tb_html_printf(h, "</td></tr>\n");
        i++;
    }
    tb_html_printf(h, "</table>\n");
}

static void s_failures(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    bool any = false;
    const cJSON *job;
    cJSON_ArrayForEach(job, tb_json_path(c->doc, "dispatch.jobs"))
    {
        const cJSON *a;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(job, "attempts"))
        {
            const char *oc = tb_json_str(a, "outcome", "");
            if (strcmp(oc, "ok") == 0 || strcmp(oc, "running") == 0)
                continue;
            if (!any)
                tb_html_printf(h, "<h3 class=\"bad\">Failures</h3><ul id=\"failures\">");
            any = true;
            tb_html_printf(h, "<li>");
            tb_html_text(h, tb_json_str(job, "label", "?"));
            tb_html_printf(h, " attempt %.0f on ", tb_json_num(a, "attempt"));
            tb_html_text(h, tb_json_str(a, "worker", "?"));
            tb_html_printf(h, " after %.1f s: <span class=\"err\">", tb_json_num(a, "seconds"));
            tb_html_text(h, oc);
            tb_html_printf(h, "</span></li>\n");
        }
    }
    if (any)
        tb_html_printf(h, "</ul>\n");
}

/* ---- the timeline (Gantt) of every dispatch ---- */

/* An attempt's class: its outcome, and "verify" for a verification attempt (a second run of a job
 * to compare hashes, docs/distribution.md: drawn once the farm makes them, marked by the attempt's
 * "verify": true or "kind": "verify"). */
static const char *s_attempt_class(const cJSON *a)
{
    const char *oc = tb_json_str(a, "outcome", "");
    if (cJSON_IsTrue(cJSON_GetObjectItem(a, "verify")) ||
        strcmp(tb_json_str(a, "kind", ""), "verify") == 0)
        return "verify";
    return strcmp(oc, "ok") == 0         ? (tb_json_num(a, "attempt") > 1 ? "retry" : "ok")
           : strcmp(oc, "running") == 0  ? "running"
           : strncmp(oc, "lost", 4) == 0 ? "lost"
                                         : "failed";
}

static void s_timeline(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    s_dispatch_t ds[16];
    int nd = s_dispatches(c->doc, ds, 16);
    char names[64][128];
    int nw = 0, attempts = 0;
    bool have_start = true;
    double tmax = 0;
    for (int k = 0; k < nd; k++) {
        const cJSON *w;
        cJSON_ArrayForEach(w, cJSON_GetObjectItem(ds[k].record, "workers"))
        {
            const char *name = tb_json_str(w, "name", "?");
            int r;
            for (r = 0; r < nw && strcmp(names[r], name) != 0; r++)
                ;
            if (r == nw && nw < 64)
                snprintf(names[nw++], sizeof names[0], "%s", name);
        }
        const cJSON *job;
        cJSON_ArrayForEach(job, cJSON_GetObjectItem(ds[k].record, "jobs"))
        {
            const cJSON *a;
            cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(job, "attempts"))
            {
                double s = tb_json_num(a, "start_s"), dur = tb_json_num(a, "seconds");
                const char *name = tb_json_str(a, "worker", "?");
                int r;
                for (r = 0; r < nw && strcmp(names[r], name) != 0; r++)
                    ;
                if (r == nw && nw < 64)
                    snprintf(names[nw++], sizeof names[0], "%s", name);
                attempts++;
                if (!isfinite(s))
                    have_start = false;
                else if (isfinite(dur))
                    tmax = fmax(tmax, ds[k].start_s + s + dur);
            }
        }
    }
    const cJSON *ph;
    cJSON_ArrayForEach(ph, tb_json_path(c->doc, "timeline.phases"))
    {
        double e = tb_json_num(ph, "start_s") + tb_json_num(ph, "seconds");
        if (isfinite(e))
            tmax = fmax(tmax, e);
    }
    tb_html_printf(h, "<section id=\"timeline\"><h2>Job timeline</h2>\n");
    if (attempts == 0 || nw == 0) {
        tb_html_printf(h, "<p class=\"muted\">No attempt has run%s.</p></section>\n",
                       c->finished ? " (every result came from the store)" : " yet");
        return;
    }
    if (!have_start) {
        tb_html_printf(h, "<p class=\"muted\">This meta.json has no attempt start times (written "
                          "before the report existed): no timeline.</p></section>\n");
        return;
    }
    if (!(tmax > 0))
        tmax = 1;
    const int left = 90, width = 860, row = 26, top = 22;
    int height = top + nw * row + 30;
    tb_html_printf(h,
                   "<svg data-chart=\"timeline\" data-attempts=\"%d\" width=\"%d\" height=\"%d\" "
                   "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"job timeline per worker\">\n",
                   attempts, left + width + 10, height, left + width + 10, height);
    /* the phases as bands behind the bars, named above them */
    int pi = 0;
    cJSON_ArrayForEach(ph, tb_json_path(c->doc, "timeline.phases"))
    {
        double s = tb_json_num(ph, "start_s"), dur = tb_json_num(ph, "seconds");
        if (!isfinite(s) || !isfinite(dur))
            continue;
        double x = left + width * s / tmax, wd = width * dur / tmax;
        tb_html_printf(h,
                       "<rect class=\"phase-band%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                       "height=\"%d\"><title>",
                       pi++ % 2 ? " odd" : "", x, top - 14, fmax(wd, 0.5), nw * row + 14);
        tb_html_text(h, tb_json_str(ph, "name", "?"));
        tb_html_printf(h, ": %.2f s from %.2f s</title></rect>\n", dur, s);
        if (wd > 30) {
            tb_html_printf(h, "<text x=\"%.1f\" y=\"%d\" class=\"phase-name\">", x + 2, top - 4);
            tb_html_text(h, tb_json_str(ph, "name", "?"));
            tb_html_printf(h, "</text>\n");
        }
    }
    for (int i = 0; i < nw; i++) {
        tb_html_printf(h, "<text x=\"4\" y=\"%d\">", top + i * row + 17);
        tb_html_text(h, names[i]);
        tb_html_printf(h,
                       "</text><line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" "
                       "stroke-dasharray=\"2 3\"/>\n",
                       left, left + width, top + i * row + row, top + i * row + row);
    }
    for (int k = 0; k < nd; k++) {
        const cJSON *job;
        cJSON_ArrayForEach(job, cJSON_GetObjectItem(ds[k].record, "jobs"))
        {
            const cJSON *a;
            cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(job, "attempts"))
            {
                const char *wn = tb_json_str(a, "worker", "?"), *oc = tb_json_str(a, "outcome", "");
                int r;
                for (r = 0; r < nw && strcmp(names[r], wn) != 0; r++)
                    ;
                if (r == nw)
                    continue;
                double s = ds[k].start_s + tb_json_num(a, "start_s"),
                       dur = tb_json_num(a, "seconds");
                double x = left + width * s / tmax, wd = fmax(2, width * dur / tmax);
                tb_html_printf(h,
                               "<rect class=\"att att-%s k-%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                               "height=\"%d\" rx=\"2\"><title>",
                               s_attempt_class(a), ds[k].phase, x, top + r * row + 3, wd, row - 6);
                tb_html_printf(h, "%s: ", ds[k].phase);
                tb_html_text(h, tb_json_str(job, "label", "?"));
                tb_html_printf(h, " attempt %.0f on ", tb_json_num(a, "attempt"));
                tb_html_text(h, wn);
                tb_html_printf(h, ": %.2f s from %.2f s, ", dur, s);
                tb_html_text(h, oc);
                tb_html_printf(h, "</title></rect>\n");
                char label[64];
                snprintf(label, sizeof label, "%s", tb_json_str(job, "label", ""));
                if (wd > 6.5 * (double)strlen(label))
                    tb_html_printf(h,
                                   "<text x=\"%.1f\" y=\"%d\" style=\"fill:#fff\" "
                                   "pointer-events=\"none\">",
                                   x + 3, top + r * row + 17);
                if (wd > 6.5 * (double)strlen(label)) {
                    tb_html_text(h, label);
                    tb_html_printf(h, "</text>\n");
                }
            }
        }
    }
    int axis_y = top + nw * row + 4;
    tb_html_printf(h, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", left,
                   left + width, axis_y, axis_y);
    for (int k = 0; k <= 5; k++) {
        double tt = tmax * k / 5;
        tb_html_printf(h, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%.1f s</text>\n",
                       left + width * (double)k / 5, axis_y + 14, tt);
    }
    tb_html_printf(
        h, "</svg>\n<p class=\"muted\">Every job of every phase (solve regions, the coast "
           "job, tiles; verifications once the farm makes them), by worker, in seconds from "
           "the start of the bake; the phases are the bands behind. "
           "<span style=\"color:#4a7fd4\">&#9632;</span> first attempt ok "
           "(<span style=\"color:#2e5fa8\">&#9632;</span> a region, "
           "<span style=\"color:#4a7fd4\">&#9632;</span> a tile, "
           "<span style=\"color:#1f3f70\">&#9632;</span> the coast) "
           "<span style=\"color:#e08a1e\">&#9632;</span> retry ok "
           "<span style=\"color:#c8372d\">&#9632;</span> failed "
           "<span style=\"color:#7d4c8c\">&#9632;</span> worker lost "
           "<span style=\"color:#3a9a4a\">&#9632;</span> running "
           "<span style=\"color:#17a2a2\">&#9632;</span> verification. Results from the "
           "store ran nowhere and are not drawn.</p>\n");
    s_jobs_table(c);
    tb_html_printf(h, "</section>\n");
}

/* ---- the tile lattice, coloured by each tile's state ---- */

static void s_lattice_map(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const tb_tile_lattice_t *L = c->pg->lattice;
    const cJSON *rec = tb_json_path(c->doc, c->finished ? "tiles.dispatch" : "live.records.tiles");
    if (!L || L->cols <= 0 || L->rows <= 0 || !cJSON_IsObject(rec) || L->cols * L->rows > 40000)
        return;
    size_t n = (size_t)(L->cols * L->rows);
    /* a tile's state: its CSS class (t-NAME) and what its title says */
    static const struct {
        const char *name, *says;
    } kinds[] = {{"none", "no tile job (ocean, or not chosen)"},
                 {"queued", "queued"},
                 {"running", "running on a worker"},
                 {"done", "done"},
                 {"store", "from the store"},
                 {"failed", "failed"},
                 {"coord", "its result on the coordinator (checked and written)"}};
    enum { S_NONE, S_QUEUED, S_RUNNING, S_DONE, S_STORE, S_FAILED, S_COORD, S_KINDS };
    uint8_t *state = calloc(n, 1); /* per tile its kind: S_NONE, no job (ocean, or not chosen) */
    if (!state)
        return;
    const cJSON *job;
    cJSON_ArrayForEach(job, cJSON_GetObjectItem(rec, "jobs"))
    {
        int col, row;
        if (sscanf(tb_json_str(job, "label", ""), "tile c%dr%d", &col, &row) != 2 || col < 0 ||
            row < 0 || col >= L->cols || row >= L->rows)
            continue;
        const char *st = tb_json_str(
            job, "state", cJSON_IsTrue(cJSON_GetObjectItem(job, "done")) ? "done" : "queued");
        /* a running job whose result arrived is on the coordinator (checked, written) */
        bool store = cJSON_IsTrue(cJSON_GetObjectItem(job, "from_store"));
        bool received = cJSON_IsTrue(cJSON_GetObjectItem(job, "received"));
        int k = store                        ? S_STORE
                : strcmp(st, "done") == 0    ? S_DONE
                : strcmp(st, "failed") == 0  ? S_FAILED
                : strcmp(st, "queued") == 0  ? S_QUEUED
                : strcmp(st, "running") == 0 ? (received ? S_COORD : S_RUNNING)
                                             : S_NONE;
        state[(size_t)row * (size_t)L->cols + (size_t)col] = (uint8_t)k;
    }
    int cell = (int)fmax(6, fmin(28, 560.0 / (double)(L->cols > L->rows ? L->cols : L->rows)));
    int counts[S_KINDS] = {0};
    tb_html_printf(h,
                   "<h3 id=\"lattice-title\">The tile lattice</h3><svg id=\"lattice\" "
                   "data-chart=\"lattice\" width=\"%lld\" height=\"%lld\" role=\"img\" "
                   "aria-label=\"tile states\">\n",
                   (long long)(L->cols * cell + 1), (long long)(L->rows * cell + 1));
    for (int64_t r = 0; r < L->rows; r++)
        for (int64_t col = 0; col < L->cols; col++) {
            int k = state[r * L->cols + col];
            counts[k]++;
            tb_html_printf(h,
                           "<rect class=\"tile t-%s\" data-tile=\"c%03lldr%03lld\" x=\"%lld\" "
                           "y=\"%lld\" width=\"%d\" height=\"%d\"><title>c%03lldr%03lld: %s"
                           "</title></rect>\n",
                           kinds[k].name, (long long)col, (long long)r, (long long)(col * cell),
                           (long long)(r * cell), cell - 1, cell - 1, (long long)col, (long long)r,
                           kinds[k].says);
        }
    tb_html_printf(h,
                   "</svg><p class=\"muted\" id=\"lattice-counts\">%lld x %lld tiles, north up: "
                   "<span class=\"sw t-done\"></span> done %d <span class=\"sw t-store\"></span> "
                   "from the store %d <span class=\"sw t-coord\"></span> on the coordinator %d "
                   "<span class=\"sw t-running\"></span> running %d "
                   "<span class=\"sw t-queued\"></span> queued %d <span class=\"sw t-failed\">"
                   "</span> failed %d <span class=\"sw t-none\"></span> no job %d%s</p>\n",
                   (long long)L->cols, (long long)L->rows, counts[S_DONE], counts[S_STORE],
                   counts[S_COORD], counts[S_RUNNING], counts[S_QUEUED], counts[S_FAILED],
                   counts[S_NONE], c->pg->terrain ? "; click a tile to see it in 3D" : "");
    free(state);
}

/* ---- the 3D view (coordinator/report/assets/view3d.js) ---- */

static void s_view3d(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *idx = c->pg->terrain;
    if (!idx)
        return;
    tb_html_printf(h, "<section id=\"view3d\"><h2>The ground in 3D</h2>\n"
                      "<div class=\"view3d-bar\"><button data-view=\"steepest\">the steepest land "
                      "tile (");
    tb_html_text(h, tb_json_str(idx, "steepest", "?"));
    tb_html_printf(h, ")</button> <button data-view=\"landmass\">the largest landmass</button> "
                      "&middot; camera <button data-mode=\"orbit\" class=\"on\">orbit</button> "
                      "<button data-mode=\"walk\">walk (eyes 1.7 m up)</button> &middot; "
                      "vertical exaggeration <input class=\"view3d-exag\" type=\"range\" "
                      "min=\"1\" max=\"10\" step=\"0.5\" value=\"1\"> <span "
                      "class=\"view3d-exag-value\">1.0x</span></div>\n"
                      "<div class=\"view3d-frame\"></div><p class=\"view3d-status muted\">the 3D "
                      "view needs JavaScript and WebGL</p>\n<p class=\"muted\">The heights are a "
                      "reduced copy of the tiles (report_terrain/: every tile's own 2 m heights "
                      "and splat weights taken every few samples, at most 256 a side for one tile "
                      "and 64 for the landmass; docs/report.md), at true vertical scale unless "
                      "exaggerated; the colour is the splat map (rock grey, grass green, sediment "
                      "sand, scree or snow white); the sun stands fixed in the north-west, 35 "
                      "degrees up. Orbit: drag to turn, wheel to zoom. Walk: click the view, then "
                      "the arrow keys or WASD (shift: faster), drag to look. Pick any tile on the "
                      "lattice map above. The steepest tile is ");
    tb_html_text(h, tb_json_str(idx, "steepest_rule", ""));
    tb_html_printf(h, ".</p>\n");
    /* the index, with the circumference so a landmass across the seam stays whole */
    cJSON *copy = cJSON_Duplicate(idx, true);
    if (copy && c->pg->lattice && c->pg->lattice->tile_cells > 0)
        cJSON_AddNumberToObject(copy, "circumference_m",
                                (double)c->pg->lattice->cols * (double)c->pg->lattice->tile_cells *
                                    c->pg->lattice->cell_m);
    char *json = copy ? cJSON_PrintUnformatted(copy) : NULL;
    cJSON_Delete(copy);
    tb_html_printf(h, "<script type=\"application/json\" id=\"terrain-index\">");
    /* JSON inside a script element: only "</" could end it early */
    for (const char *p = json ? json : "{}"; *p; p++)
        if (p[0] == '<' && p[1] == '/')
            tb_html_printf(h, "<\\");
        else
            tb_html_printf(h, "%c", *p);
    free(json);
    tb_html_printf(h, "</script>\n</section>\n");
}

/* ---- the coast (docs/coast.md, "Reading the block") and the detail tiles (docs/tiles.md) ---- */

/* One row of a table of tagged numbers. */
typedef struct {
    const char *label, *path, *unit;
    double scale;
    int dec;
} s_row_t;

static void s_rows(s_ctx_t *c, const s_row_t *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tb_html_printf(c->h, "<tr><td class=\"l\">%s</td><td>", rows[i].label);
        S_NUM(c->h, c->doc, rows[i].path, rows[i].scale, rows[i].dec, rows[i].unit);
        tb_html_printf(c->h, "</td></tr>");
    }
}

/* A phase's dispatch record (`prefix` is "coast.dispatch" or "tiles.dispatch") in a few tagged
 * numbers: its jobs are not on the job timeline, whose seconds count from the solve's dispatch. */
static void s_dispatch_rows(s_ctx_t *c, const char *prefix)
{
    static const struct {
        const char *label, *key, *unit;
        int dec;
    } k[] = {
        {"jobs", "stats.jobs", NULL, 0},
        {"from the store", "stats.from_store", NULL, 0},
        {"ran", "stats.ran", NULL, 0},
        {"attempts", "stats.attempts", NULL, 0},
        {"failed attempts", "stats.failed", NULL, 0},
        {"workers lost", "stats.lost", NULL, 0},
        {"dispatch", "seconds", "s", 1},
    };
    char p[128];
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        snprintf(p, sizeof p, "%s.%s", prefix, k[i].key);
        tb_html_printf(c->h, "<tr><td class=\"l\">%s</td><td>", k[i].label);
        S_NUM(c->h, c->doc, p, 1, k[i].dec, k[i].unit);
        tb_html_printf(c->h, "</td></tr>");
    }
}

/* The coast block of the verdict: absent in a meta.json written before the pass existed (nothing
 * shown), null with --no-coast. */
static void s_coast(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *coast = tb_json_path(c->doc, "coast");
    if (!coast)
        return;
    tb_html_printf(h, "<h3 id=\"coast\">Coast%s</h3>\n", c->partial ? " (PARTIAL)" : "");
    if (!cJSON_IsObject(coast)) {
        tb_html_printf(h, "<p class=\"muted\" id=\"coast-skipped\">The coastal pass: skipped "
                          "(--no-coast). Every coast is a step from the land to its class's "
                          "painted depth.</p>\n");
        return;
    }
    if (c->partial)
        tb_html_printf(h, "<p class=\"warn\">PARTIAL bake: the pass ran over the whole planet, "
                          "with the land of the regions not solved at 0 m. Never compare these "
                          "numbers with a whole planet's.</p>\n");
    tb_html_printf(h, "<p class=\"muted\">What the coastal pass did (docs/coast.md, \"Reading the "
                      "block\"): read laid and unplaced first.</p>\n<div class=\"charts\"><div>"
                      "<h4>Shore</h4><table>");
    static const s_row_t shore[] = {
        {"shoreline", "coast.shoreline_km", "km", 1, 1},
        {"sea (share of cells)", "coast.sea_share", "%", 100, 1},
        {"shelf (share of the sea)", "coast.shelf_share", "%", 100, 1},
        {"waterline cells", "coast.waterline_cells", NULL, 1, 0},
        {"exposure p10", "coast.exposure_p10", NULL, 1, 2},
        {"exposure p50", "coast.exposure_p50", NULL, 1, 2},
        {"exposure p90", "coast.exposure_p90", NULL, 1, 2},
        {"backshore median", "coast.backshore_median_m", "m", 1, 1},
        {"backshore P90", "coast.backshore_p90_m", "m", 1, 1},
        {"drowned", "coast.drowned_km2", "km2", 1, 2},
    };
    s_rows(c, shore, sizeof shore / sizeof shore[0]);
    tb_html_printf(h, "</table></div><div><h4>Sediment</h4><table>");
    static const s_row_t sed[] = {
        {"surf planed", "coast.planed_km2", "km2", 1, 2},
        {"surf cut", "coast.cut_mm3", "Mm3", 1, 2},
        {"river mouths", "coast.river_mouths", NULL, 1, 0},
        {"delivered by rivers", "coast.river_mm3", "Mm3", 1, 2},
        {"laid", "coast.laid_mm3", "Mm3", 1, 2},
        {"unplaced", "coast.unplaced_mm3", "Mm3", 1, -1},
        {"unplaced (share of cut + delivered)", "coast.unplaced_share", "%", 100, 1},
        {"&nbsp;&nbsp;no shallows in reach", "coast.unplaced_no_shallows_mm3", "Mm3", 1, -1},
        {"&nbsp;&nbsp;shallows full", "coast.unplaced_full_mm3", "Mm3", 1, -1},
        {"&nbsp;&nbsp;rounding", "coast.unplaced_rounding_mm3", "Mm3", 1, -1},
        {"budget relative error", "coast.budget_relative_error", NULL, 1, -1},
        {"new beach", "coast.beach_km2", "km2", 1, 2},
    };
    s_rows(c, sed, sizeof sed / sizeof sed[0]);
    tb_html_printf(h, "</table>");
    double unplaced = tb_json_num(c->doc, "coast.unplaced_share");
    if (unplaced > 0.05)
        tb_html_printf(h, "<p class=\"warn\">Over 5 %% of the sediment was not placed: it has "
                          "nowhere to go and the deposition gates are wrong (docs/coast.md).</p>");
    tb_html_printf(h, "</div><div><h4>The coast job</h4><table>");
    /* blocks and rounds: a rerun on the same inputs runs one round (docs/coast.md, "In the bake")
     */
    static const s_row_t job[] = {{"phase", "coast.seconds", "s", 1, 1},
                                  {"blocks", "coast.blocks", NULL, 1, 0},
                                  {"rounds (a probe included)", "coast.rounds", NULL, 1, 0}};
    s_rows(c, job, sizeof job / sizeof job[0]);
    s_dispatch_rows(c, "coast.dispatch");
    const cJSON *j0 = tb_json_path(c->doc, "coast.dispatch.jobs.0");
    if (j0) {
        tb_html_printf(h, "<tr><td class=\"l\">worker</td><td>");
        tb_html_text(h, tb_json_str(j0, "worker", "?"));
        tb_html_printf(h, "</td></tr><tr><td class=\"l\">job seconds</td><td>");
        S_NUM(h, c->doc, "coast.dispatch.jobs.0.seconds", 1, 2, "s");
        tb_html_printf(h, "</td></tr>");
    }
    tb_html_printf(h, "</table></div></div>\n");
}

/* The per-class slope histogram of the tiles (1-degree bins) in a few figures read off it. */
static void s_tile_slopes(s_ctx_t *c, const cJSON *hist)
{
    tb_html_t *h = c->h;
    tb_html_printf(h, "<table id=\"tile-slopes\"><tr><th class=\"l\">class</th><th>cells</th>"
                      "<th>slope median</th><th>P90</th><th>&lt;15</th><th>&lt;30</th>"
                      "<th>&gt;50</th></tr>\n");
    const cJSON *cl;
    cJSON_ArrayForEach(cl, hist)
    {
        double total = 0, under15 = 0, under30 = 0, over50 = 0;
        int bins = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, cl)
        {
            double n = cJSON_IsNumber(v) ? v->valuedouble : 0;
            total += n;
            under15 += bins < 15 ? n : 0;
            under30 += bins < 30 ? n : 0;
            over50 += bins >= 50 ? n : 0;
            bins++;
        }
        if (!(total > 0))
            continue;
        /* the bin where the running count passes half and nine tenths (its upper edge) */
        double run = 0, med = NAN, p90 = NAN;
        int b = 0;
        cJSON_ArrayForEach(v, cl)
        {
            run += cJSON_IsNumber(v) ? v->valuedouble : 0;
            b++;
            if (isnan(med) && run >= 0.5 * total)
                med = b;
            if (isnan(p90) && run >= 0.9 * total)
                p90 = b;
        }
        tb_html_printf(h, "<tr><td class=\"l\">");
        tb_html_text(h, cl->string ? cl->string : "?");
        tb_html_printf(h,
                       "</td><td>%.0f</td><td>&le;%.0f&nbsp;deg</td><td>&le;%.0f&nbsp;deg</td>"
                       "<td>%.1f%%</td><td>%.1f%%</td><td>%.2f%%</td></tr>\n",
                       total, med, p90, 100 * under15 / total, 100 * under30 / total,
                       100 * over50 / total);
    }
    tb_html_printf(h,
                   "</table><p class=\"muted\">Read off meta.json's "
                   "<code>tiles.detail_statistics.slope_deg_histogram</code> (1-degree bins, "
                   "every tile's 2 m cells pooled): a median is the upper edge of its bin.</p>\n");
}

/* A whole-number parameter prints whole (100000, not 1e+05), the others in three figures. */
static int s_param_decimals(const cJSON *v)
{
    return v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 1e15 ? 0 : -1;
}

/* The detail tiles, when the tiles phase ran (meta.json "tiles"); nothing otherwise. */
static void s_tiles(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *tiles = tb_json_path(c->doc, "tiles");
    if (!cJSON_IsObject(tiles))
        return;
    const cJSON *skipped = tb_json_path(c->doc, "tiles.phase_skipped"); /* a partial bake's */
    if (cJSON_IsString(skipped)) {
        tb_html_printf(h, "<section id=\"tiles\"><h2>Detail tiles</h2>\n<p>Not baked: ");
        tb_html_text(h, skipped->valuestring);
        tb_html_printf(h, "</p></section>\n");
        return;
    }
    tb_html_printf(h, "<section id=\"tiles\"><h2>Detail tiles</h2>\n<p>Every tile is listed, "
                      "with its origin, size, encoding and the XXH3 of its files, in "
                      "<a href=\"tiles/index.json\">tiles/index.json</a> (docs/tiles.md).</p>\n"
                      "<div class=\"charts\"><div><h4>Tiles</h4><table>");
    static const s_row_t counts[] = {
        {"tiles baked", "tiles.tiles", NULL, 1, 0},
        {"land", "tiles.land", NULL, 1, 0},
        {"coast", "tiles.coast", NULL, 1, 0},
        {"from the store", "tiles.from_store", NULL, 1, 0},
        {"tiles of the lattice", "tiles.lattice_tiles", NULL, 1, 0},
        {"margin used", "tiles.margin_cells", "cells", 1, 0},
        {"margin measured", "tiles.margin_measured_cells", "cells", 1, 0},
        {"margin bound", "tiles.margin_bound_cells", "cells", 1, 0},
        {"phase", "tiles.seconds", "s", 1, 1},
    };
    s_rows(c, counts, sizeof counts / sizeof counts[0]);
    if (cJSON_IsTrue(tb_json_path(c->doc, "tiles.margin_forced")) ||
        tb_json_num(c->doc, "tiles.margin_forced") > 0)
        tb_html_printf(h, "<tr><td class=\"l\" colspan=\"2\"><span class=\"warn\">margin forced "
                          "below the measured one (tiles.force_margin)</span></td></tr>");
    tb_html_printf(h, "</table></div><div><h4>Detail statistics</h4><table>");
    static const s_row_t st[] = {
        {"cells", "tiles.detail_statistics.cells", NULL, 1, 0},
        {"land cells", "tiles.detail_statistics.land_cells", NULL, 1, 0},
        {"eroded", "tiles.detail_statistics.eroded_m3", "m3", 1, 0},
        {"deposited", "tiles.detail_statistics.deposited_m3", "m3", 1, 0},
        {"channels (share of land)", "tiles.detail_statistics.channel_share_of_land", "%", 100, 2},
    };
    s_rows(c, st, sizeof st / sizeof st[0]);
    tb_html_printf(h, "</table>\n");
    const cJSON *hist = tb_json_path(c->doc, "tiles.detail_statistics.slope_deg_histogram");
    if (cJSON_IsObject(hist))
        s_tile_slopes(c, hist);
    tb_html_printf(h, "</div><div><h4>Dispatch</h4><table>");
    s_dispatch_rows(c, "tiles.dispatch");
    tb_html_printf(h, "</table></div><div><h4>Parameters</h4><table>");
    const cJSON *g;
    char p[256];
    cJSON_ArrayForEach(g, tb_json_path(c->doc, "tiles.parameters"))
    {
        const cJSON *k, *group = cJSON_IsObject(g) ? g : NULL;
        if (cJSON_IsNumber(g)) {
            snprintf(p, sizeof p, "tiles.parameters.%s", g->string);
            tb_html_printf(h, "<tr><td class=\"l\">");
            tb_html_text(h, g->string);
            tb_html_printf(h, "</td><td>");
            S_NUM(h, c->doc, p, 1, s_param_decimals(g), NULL);
            tb_html_printf(h, "</td></tr>");
        }
        cJSON_ArrayForEach(k, group)
        {
            if (!cJSON_IsNumber(k))
                continue;
            snprintf(p, sizeof p, "tiles.parameters.%s.%s", g->string, k->string);
            tb_html_printf(h, "<tr><td class=\"l\">");
            tb_html_text(h, g->string);
            tb_html_printf(h, ".");
            tb_html_text(h, k->string);
            tb_html_printf(h, "</td><td>");
            S_NUM(h, c->doc, p, 1, s_param_decimals(k), NULL);
            tb_html_printf(h, "</td></tr>");
        }
    }
    tb_html_printf(h, "</table></div></div></section>\n");
}

/* ---- the verdict ---- */

static void s_partial_badge(s_ctx_t *c)
{
    if (c->partial)
        tb_html_printf(c->h, " <span class=\"badge\">PARTIAL</span>");
}

static void s_verdict(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    const cJSON *stats = tb_json_path(d, "statistics");
    if (!cJSON_IsObject(stats))
        return;
    tb_html_printf(h, "<section id=\"verdict\"><h2>The verdict");
    s_partial_badge(c);
    tb_html_printf(h, "</h2>\n");
    if (c->partial) {
        tb_html_printf(h, "<p class=\"warn\">PARTIAL bake of ");
        tb_html_text(h, tb_json_str(d, "statistics.partial", "?"));
        tb_html_printf(h, " only: the ground statistics cover those regions, the extent the whole "
                          "planet. Never compare these numbers with a whole planet's.</p>\n");
    }
    tb_html_printf(h, "<p class=\"muted\">Every number of summary.txt (docs/statistics.md says "
                      "what each means).</p>\n<div class=\"charts\"><div>");
    tb_html_printf(h, "<h3>Slopes%s</h3><table><tr><th class=\"l\">all land</th><th></th></tr>",
                   c->partial ? " (PARTIAL)" : "");
    static const struct {
        const char *label, *path, *unit;
        double scale;
        int dec;
    } top[] = {
        {"under 15 deg", "statistics.slopes.under_15_share", "%", 100, 1},
        {"under 30 deg", "statistics.slopes.under_30_share", "%", 100, 1},
        {"over 50 deg", "statistics.slopes.over_50_share", "%", 100, 2},
        {"median", "statistics.slopes.median_deg", "deg", 1, 1},
        {"90th percentile", "statistics.slopes.p90_deg", "deg", 1, 1},
        {"land cells", "statistics.land_cells", NULL, 1, 0},
        {"land area", "statistics.land_area_km2", "km2", 1, 2},
        {"edge cells (0 in a sound bake)", "statistics.edge_cells", NULL, 1, 0},
    };
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        tb_html_printf(h, "<tr><td class=\"l\">%s</td><td>", top[i].label);
        S_NUM(h, d, top[i].path, top[i].scale, top[i].dec, top[i].unit);
        tb_html_printf(h, "</td></tr>");
    }
    tb_html_printf(h, "</table></div><div><h3>Slope-area, landscape%s</h3><table>",
                   c->partial ? " (PARTIAL)" : "");
    static const struct {
        const char *label, *path, *unit;
        int dec;
    } fit[] = {
        {"slope-area exponent", "statistics.slope_area.exponent", NULL, 3},
        {"expected (-m/n)", "statistics.slope_area.expect", NULL, 3},
        {"R2", "statistics.slope_area.r2", NULL, 3},
        {"area bins fitted", "statistics.slope_area.bins", NULL, 0},
        {"intercept (log10 S at 1 m2)", "statistics.slope_area.intercept", NULL, 3},
        {"hypsometric integral", "statistics.hypsometric_integral", NULL, 3},
        {"drainage density", "statistics.drainage_density_per_km", "/km", 2},
    };
    for (size_t i = 0; i < sizeof fit / sizeof fit[0]; i++) {
        tb_html_printf(h, "<tr><td class=\"l\">%s</td><td>", fit[i].label);
        S_NUM(h, d, fit[i].path, 1, fit[i].dec, fit[i].unit);
        if (strcmp(fit[i].path, "statistics.hypsometric_integral") == 0) {
            tb_html_printf(h, " (");
            tb_html_text(h, tb_json_str(d, "statistics.hypsometric_reading", ""));
            tb_html_printf(h, ")");
        }
        double bins = tb_json_num(d, "statistics.slope_area.bins");
        if (strcmp(fit[i].path, "statistics.slope_area.bins") == 0 && bins < 10)
            tb_html_printf(h, " <span class=\"warn\">too few to judge a change</span>");
        tb_html_printf(h, "</td></tr>");
    }
    tb_html_printf(h, "</table></div><div><h3>Elevation (the whole planet)</h3><table>");
    static const struct {
        const char *label, *path, *unit;
        double scale;
        int dec;
    } el[] = {
        {"lowest", "statistics.elevation.min_m", "m", 1, 1},
        {"highest", "statistics.elevation.max_m", "m", 1, 1},
        {"clipped cells", "statistics.elevation.clipped_cells", NULL, 1, 0},
        {"clip fraction (fails above 0.1 %)", "statistics.elevation.clip_fraction", "%", 100, 3},
        {"elevation_m low", "statistics.elevation.range_lo_m", "m", 1, 0},
        {"elevation_m high", "statistics.elevation.range_hi_m", "m", 1, 0},
    };
    for (size_t i = 0; i < sizeof el / sizeof el[0]; i++) {
        tb_html_printf(h, "<tr><td class=\"l\">%s</td><td>", el[i].label);
        S_NUM(h, d, el[i].path, el[i].scale, el[i].dec, el[i].unit);
        tb_html_printf(h, "</td></tr>");
    }
    tb_html_printf(h, "</table></div></div>\n<h3>By uplift class%s</h3>\n",
                   c->partial ? " (PARTIAL)" : "");
    tb_html_printf(h, "<table id=\"classes\"><tr><th class=\"l\">class</th><th>uplift mm/yr</th>"
                      "<th>share of land</th><th>land cells</th><th>slope median</th><th>P90</th>"
                      "<th>&lt;15</th><th>&lt;30</th><th>&gt;50</th><th>relief median</th>"
                      "<th>P90</th><th>at talus</th><th>elev. min</th><th>mean</th><th>median</th>"
                      "<th>max</th><th>hypso.</th><th>drainage /km</th></tr>\n");
    int nc = cJSON_GetArraySize(tb_json_path(d, "statistics.classes"));
    for (int i = 0; i <= nc; i++) {
        char base[64], p[128];
        if (i < nc)
            snprintf(base, sizeof base, "statistics.classes.%d", i);
        else
            snprintf(base, sizeof base, "statistics.all_land");
        tb_html_printf(h, "<tr><td class=\"l\">");
        snprintf(p, sizeof p, "%s.name", base);
        tb_html_text(h, tb_json_str(d, p, "?"));
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "%s.uplift_min_mm_yr", base);
        if (tb_json_path(d, p)) {
            S_NUM(h, d, p, 1, 2, NULL);
            tb_html_printf(h, " .. ");
            snprintf(p, sizeof p, "%s.uplift_max_mm_yr", base);
            S_NUM(h, d, p, 1, 2, NULL);
        }
        static const struct {
            const char *key, *unit;
            double scale;
            int dec;
        } col[] = {
            {"land_share", "%", 100, 1},           {"land_cells", NULL, 1, 0},
            {"slope_median_deg", "deg", 1, 1},     {"slope_p90_deg", "deg", 1, 1},
            {"slope_under_15_share", "%", 100, 1}, {"slope_under_30_share", "%", 100, 1},
            {"slope_over_50_share", "%", 100, 2},  {"relief_median_m", "m", 1, 1},
            {"relief_p90_m", "m", 1, 1},           {"near_repose_share", "%", 100, 1},
            {"elevation_min_m", "m", 1, 1},        {"elevation_mean_m", "m", 1, 1},
            {"elevation_median_m", "m", 1, 1},     {"elevation_max_m", "m", 1, 1},
            {"hypsometric_integral", NULL, 1, 3},  {"drainage_density_per_km", NULL, 1, 2},
        };
        for (size_t k = 0; k < sizeof col / sizeof col[0]; k++) {
            tb_html_printf(h, "</td><td>");
            snprintf(p, sizeof p, "%s.%s", base, col[k].key);
            S_NUM(h, d, p, col[k].scale, col[k].dec, col[k].unit);
        }
        tb_html_printf(h, "</td></tr>\n");
    }
    tb_html_printf(h, "</table><p class=\"muted\">Relief over a window of ");
    S_NUM(h, d, "statistics.params.relief_window_m", 1, 0, "m");
    tb_html_printf(h, "; at talus = within ");
    S_NUM(h, d, "statistics.params.repose_band_deg", 1, 0, "deg");
    tb_html_printf(h, " of the repose angle ");
    S_NUM(h, d, "statistics.params.talus_deg", 1, 0, "deg");
    tb_html_printf(h, ". Read the plain line first: its median slope should be a degree or "
                      "less.</p>\n");
    s_coast(c);
    /* the gates */
    tb_gates_t gates;
    tb_err_t err;
    tb_html_printf(h, "<h3 id=\"gates\">Gates</h3>\n");
    if (c->pg->gate) {
        const cJSON *g = c->pg->gate;
        bool pass = true;
        const cJSON *chk;
        cJSON_ArrayForEach(chk, cJSON_GetObjectItem(g, "checks")) pass &=
            strcmp(tb_json_str(chk, "status", ""), "pass") == 0;
        tb_html_printf(h,
                       "<p>This bake was run by <code>terrain gate</code>: seed %.0f <b class="
                       "\"%s\">%s</b> (from ",
                       tb_json_num(g, "seed"), pass ? "ok" : "bad", pass ? "PASS" : "FAIL");
        tb_html_text(h, c->pg->gate_source ? c->pg->gate_source : "gate.json");
        tb_html_printf(h, ")</p><table><tr><th class=\"l\">gate</th><th>value</th><th>bound</th>"
                          "<th>baseline</th><th class=\"l\">result</th></tr>\n");
        cJSON_ArrayForEach(chk, cJSON_GetObjectItem(g, "checks"))
        {
            const char *status = tb_json_str(chk, "status", "?");
            tb_html_printf(h, "<tr><td class=\"l\">");
            tb_html_text(h, tb_json_str(chk, "gate", "?"));
            tb_html_printf(h, "</td><td>%.4g</td><td>", tb_json_num(chk, "value"));
            tb_html_text(h, tb_json_str(chk, "bound", ""));
            tb_html_printf(h, "</td><td>%.4g</td><td class=\"l %s\">", tb_json_num(chk, "baseline"),
                           strcmp(status, "pass") == 0 ? "ok" : "bad");
            tb_html_text(h, status);
            tb_html_printf(h, " ");
            tb_html_text(h, tb_json_str(chk, "message", ""));
            tb_html_printf(h, "</td></tr>\n");
        }
        tb_html_printf(h, "</table>\n");
    }
    if (tb_gates_load(NULL, &gates, &err) == 0) {
        tb_html_printf(h,
                       "<p class=\"muted\">The built-in gates of <code>terrain gate</code> "
                       "(docs/gate.md) on this bake's statistics:</p><table id=\"builtin-gates\">"
                       "<tr><th class=\"l\">gate</th><th>value</th><th>bound</th><th>result</th>"
                       "<th class=\"l\">why not</th></tr>\n");
        s_gate_tally_t t;
        s_gate_rows(c, &gates, stats, true, &t);
        tb_html_printf(h, "</table>\n");
    }
    tb_html_printf(h, "</section>\n");
}

/* ---- histograms ---- */

/* A bar chart of one class's counts, as a share of its land per bar. */
static void s_bars(s_ctx_t *c, const char *chart, const char *source, const char *title,
                   const cJSON *counts, double width, const char *unit, const cJSON *beyond)
{
    tb_html_t *h = c->h;
    int n = cJSON_GetArraySize(counts);
    double total = 0, top = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, counts)
    {
        total += v->valuedouble;
        top = fmax(top, v->valuedouble);
    }
    if (cJSON_IsNumber(beyond))
        total += beyond->valuedouble;
    const int W = 420, H = 170, L = 44, B = 26, T = 16, R = 8;
    double pw = W - L - R, ph = H - B - T;
    tb_html_printf(h,
                   "<figure><svg data-chart=\"%s\" data-source=\"%s\" data-bars=\"%d\" "
                   "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
                   chart, source, n, W, H, W, H);
    tb_html_printf(h, "<text x=\"%d\" y=\"11\">", L);
    tb_html_text(h, title);
    tb_html_printf(h, "</text>\n");
    double ymax = total > 0 ? 100 * top / total : 1;
    if (!(ymax > 0))
        ymax = 1;
    int i = 0;
    cJSON_ArrayForEach(v, counts)
    {
        double share = total > 0 ? 100 * v->valuedouble / total : 0;
        double bh = ph * share / ymax;
        tb_html_printf(h,
                       "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\">"
                       "<title>%g..%g %s: %.0f cells (%.2f%%)</title></rect>\n",
                       L + pw * i / n, T + ph - bh, fmax(0.5, pw / n - (n < 60 ? 1 : 0)), bh,
                       width * i, width * (i + 1), unit, v->valuedouble, share);
        i++;
    }
    tb_html_printf(h,
                   "<line class=\"axis\" x1=\"%d\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>"
                   "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.0f\"/>\n",
                   L, L + pw, T + ph, T + ph, L, L, T, T + ph);
    tb_html_printf(h,
                   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.2g%%</text>"
                   "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">0</text>\n",
                   L - 3, T + 8, ymax, L - 3, T + ph);
    for (int k = 0; k <= 4; k++)
        tb_html_printf(h, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%.3g</text>\n",
                       L + pw * k / 4, H - 12, width * n * k / 4);
    tb_html_printf(h, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"end\">", L + pw, H - 1);
    tb_html_text(h, unit);
    tb_html_printf(h, "</text></svg><figcaption>");
    tb_html_printf(h, "%.0f cells; bars of %g %s; share of the class's land per bar", total, width,
                   unit);
    if (cJSON_IsNumber(beyond) && beyond->valuedouble > 0)
        tb_html_printf(h, "; %.0f cells beyond the last bar", beyond->valuedouble);
    tb_html_printf(h, "</figcaption></figure>\n");
}

static void s_family(s_ctx_t *c, const char *key, const char *name, const char *unit,
                     bool per_class)
{
    char path[96];
    snprintf(path, sizeof path, "histograms.%s", key);
    const cJSON *fam = tb_json_path(c->doc, path);
    const cJSON *classes = cJSON_GetObjectItem(fam, "classes");
    double width = tb_json_num(fam, "width");
    int i = 0;
    const cJSON *cl;
    cJSON_ArrayForEach(cl, classes)
    {
        const char *cname = tb_json_str(cl, "name", "?");
        bool all = strcmp(cname, "all land") == 0;
        if (per_class || all) {
            char title[160], source[128];
            snprintf(title, sizeof title, "%s, %s%s", name, cname, c->partial ? " (PARTIAL)" : "");
            snprintf(source, sizeof source, "histograms.%s.classes.%d.counts", key, i);
            s_bars(c, key, source, title, cJSON_GetObjectItem(cl, "counts"), width, unit,
                   cJSON_GetObjectItem(cl, "beyond"));
        }
        i++;
    }
}

static void s_slope_area(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    const cJSON *pts = tb_json_path(d, "statistics.slope_area.points");
    int n = cJSON_GetArraySize(pts);
    double a = tb_json_num(d, "statistics.slope_area.intercept");
    double b = tb_json_num(d, "statistics.slope_area.exponent");
    double e = tb_json_num(d, "statistics.slope_area.expect");
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY, sx = 0, sy = 0;
    int used = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, pts)
    {
        double x = log10(tb_json_num(p, "area_m2")), y = log10(tb_json_num(p, "median_slope"));
        if (!isfinite(x) || !isfinite(y))
            continue;
        xmin = fmin(xmin, x), xmax = fmax(xmax, x), ymin = fmin(ymin, y), ymax = fmax(ymax, y);
        sx += x, sy += y, used++;
    }
    const int W = 420, H = 240, L = 44, B = 28, T = 16, R = 10;
    double pw = W - L - R, ph = H - B - T;
    tb_html_printf(h,
                   "<figure><svg data-chart=\"slope_area\" data-source=\"statistics.slope_area."
                   "points\" data-points=\"%d\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                   "role=\"img\">\n<text x=\"%d\" y=\"11\">slope-area: median channel slope "
                   "against drainage area%s</text>\n",
                   n, W, H, W, H, L, c->partial ? " (PARTIAL)" : "");
    if (used > 0) {
        if (xmax - xmin < 0.5)
            xmin -= 0.25, xmax += 0.25;
        double pad = fmax(0.1, 0.08 * (ymax - ymin));
        ymin -= pad, ymax += pad;
        /* keep both lines in view over the points' area range */
        double cx = sx / used, cy = sy / used;
        for (int k = 0; k < 2; k++) {
            double x = k ? xmax : xmin;
            if (isfinite(a) && isfinite(b))
                ymin = fmin(ymin, a + b * x), ymax = fmax(ymax, a + b * x);
            if (isfinite(e))
                ymin = fmin(ymin, cy + e * (x - cx)), ymax = fmax(ymax, cy + e * (x - cx));
        }
#define SX(x) (L + pw * ((x)-xmin) / (xmax - xmin))
#define SY(y) (T + ph - ph * ((y)-ymin) / (ymax - ymin))
        cJSON_ArrayForEach(p, pts)
        {
            double x = log10(tb_json_num(p, "area_m2")), y = log10(tb_json_num(p, "median_slope"));
            if (!isfinite(x) || !isfinite(y))
                continue;
            tb_html_printf(h,
                           "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>A %.3g "
                           "m2, S %.3g, %.0f cells</title></circle>\n",
                           SX(x), SY(y), pow(10, x), pow(10, y), tb_json_num(p, "cells"));
        }
        if (isfinite(a) && isfinite(b))
            tb_html_printf(h,
                           "<line class=\"fit\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
                           "<title>fit: exponent %.3f</title></line>\n",
                           SX(xmin), SY(a + b * xmin), SX(xmax), SY(a + b * xmax), b);
        if (isfinite(e))
            tb_html_printf(h,
                           "<line class=\"expect\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                           "y2=\"%.1f\"><title>expected -m/n = %.3f through the points' "
                           "centroid</title></line>\n",
                           SX(xmin), SY(cy + e * (xmin - cx)), SX(xmax), SY(cy + e * (xmax - cx)),
                           e);
        tb_html_printf(h,
                       "<line class=\"axis\" x1=\"%d\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>"
                       "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.0f\"/>\n",
                       L, L + pw, T + ph, T + ph, L, L, T, T + ph);
        for (int k = 0; k <= 4; k++) {
            double x = xmin + (xmax - xmin) * k / 4, y = ymin + (ymax - ymin) * k / 4;
            tb_html_printf(h,
                           "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%.2g</text>"
                           "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">%.2g</text>\n",
                           SX(x), H - 14, pow(10, x), L - 3, SY(y) + 3, pow(10, y));
        }
#undef SX
#undef SY
        tb_html_printf(h,
                       "<text x=\"%.0f\" y=\"%d\" text-anchor=\"end\">drainage area m2 (log)"
                       "</text>\n",
                       L + pw, H - 2);
    } else {
        tb_html_printf(h, "<text x=\"%d\" y=\"60\">no area bin qualified for the fit</text>\n", L);
    }
    tb_html_printf(h,
                   "</svg><figcaption><span style=\"color:#b3261e\">&#9473;</span> the fit "
                   "(exponent %.3f, R2 %.3f) <span style=\"color:#23784a\">&#9476;</span> the "
                   "stream-power expectation -m/n = %.3f, drawn through the points' centroid. "
                   "One point per area bin: its geometric centre against the median slope of "
                   "its cells.</figcaption></figure>\n",
                   b, tb_json_num(d, "statistics.slope_area.r2"), e);
}

static void s_histograms(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    if (!cJSON_IsObject(tb_json_path(c->doc, "statistics")))
        return;
    tb_html_printf(h, "<section id=\"histograms\"><h2>Histograms");
    s_partial_badge(c);
    tb_html_printf(h, "</h2>\n");
    if (!cJSON_IsObject(tb_json_path(c->doc, "histograms")))
        tb_html_printf(h, "<p class=\"muted\">This meta.json holds no histograms (written before "
                          "the report existed); the slope-area points are drawn.</p>\n");
    tb_html_printf(h, "<h3>Slope by uplift class</h3><div class=\"charts\">\n");
    s_family(c, "slope_deg", "slope", "deg", true);
    tb_html_printf(h, "</div><h3>Elevation, relief and the slope-area law</h3><div class="
                      "\"charts\">\n");
    s_family(c, "elevation_m", "land elevation", "m", false);
    s_family(c, "relief_m", "local relief", "m", false);
    s_slope_area(c);
    tb_html_printf(h, "</div></section>\n");
}

/* ---- maps ---- */

static void s_maps(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    static const struct {
        const char *file, *what;
    } maps[] = {
        {"preview.png", "hillshaded preview"},
        {"map_slope.png", "slope, degrees"},
        {"map_relief.png", "local relief, m"},
        {"map_flow.png", "drainage area (rivers)"},
        {"map_basins.png", "drainage basins"},
        {"map_uplift.png", "rock uplift, mm/yr, faults in cyan"},
        {"map_erodibility.png", "erodibility K"},
        {"map_class.png", "legend classes"},
        {"map_regions.png", "regions"},
        {"map_coast.png", "what the coastal pass moved: cut cool, laid warm"},
        {"map_exposure.png", "shore exposure, sheltered violet to open yellow"},
        {"preview_detail.png", "the 2 m tiles of the largest landmass, hillshaded, reduced"},
        {"preview_detail_crop.png", "2 m at full size: the steepest tile, deposits in sand"},
        {"planet_height_low.png", "reduced 16-bit heightmap"},
        {"planet_height.png", "the 16-bit heightmap"},
    };
    tb_html_printf(h, "<section id=\"maps\"><h2>Maps</h2><div class=\"thumbs\">\n");
    int shown = 0;
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        if (!s_image_exists(c, maps[i].file))
            continue;
        /* the full heightmap is large: link it, show the reduced one */
        bool big = strcmp(maps[i].file, "planet_height.png") == 0 &&
                   s_image_exists(c, "planet_height_low.png");
        tb_html_printf(h, "<a href=\"%s\" title=\"open at full size\">", maps[i].file);
        if (!big)
            tb_html_printf(h, "<img src=\"%s\" loading=\"eager\" alt=\"%s\">", maps[i].file,
                           maps[i].what);
        tb_html_printf(h, "%s<br><span class=\"muted\">%s</span></a>\n", maps[i].file,
                       maps[i].what);
        shown++;
    }
    if (!shown)
        tb_html_printf(h, "<p class=\"muted\">No map has been written.</p>");
    tb_html_printf(h, "</div><p class=\"muted\">Every map has planet row j at image row j; X wraps "
                      "(docs/bake.md). map_slope, map_relief and map_erodibility carry a legend "
                      "strip below the planet.</p></section>\n");
}

/* ---- plan ---- */

static void s_plan(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    const cJSON *regions = tb_json_path(d, "plan.regions");
    if (!cJSON_IsArray(regions))
        return;
    tb_html_printf(h, "<section id=\"plan\"><h2>The plan</h2><p>");
    S_NUM(h, d, "plan.summary.planet_w", 1, 0, NULL);
    tb_html_printf(h, " x ");
    S_NUM(h, d, "plan.summary.planet_h", 1, 0, "cells");
    tb_html_printf(h, " of ");
    S_NUM(h, d, "plan.summary.cell_m", 1, 0, "m");
    tb_html_printf(h, "; land ");
    S_NUM(h, d, "plan.summary.land_fraction", 100, 1, "%");
    tb_html_printf(h, " (");
    S_NUM(h, d, "plan.summary.land_cells", 1, 0, "cells");
    tb_html_printf(h, "); ");
    S_NUM(h, d, "plan.summary.landmasses.kept", 1, 0, "landmasses");
    tb_html_printf(h, " kept, ");
    S_NUM(h, d, "plan.summary.landmasses.dropped", 1, 0, NULL);
    tb_html_printf(h, " dropped; unmatched painting pixels ");
    S_NUM(h, d, "plan.summary.unmatched.pixels", 1, 0, NULL);
    tb_html_printf(h, "; seam disagreement ");
    S_NUM(h, d, "plan.summary.seam_disagreement.percent", 1, 2, "%");
    tb_html_printf(h, "; floor on one core ");
    S_NUM(h, d, "plan.estimate.one_core_floor_s", 1, 1, "s");
    tb_html_printf(h, " at the manifest's ");
    S_NUM(h, d, "plan.estimate.steps", 1, 0, "steps");
    tb_html_printf(h, ".</p>\n<h3>Regions</h3><table id=\"regions\"><tr><th>id</th><th>box x0</th>"
                      "<th>y0</th><th>w</th><th>h</th><th>land cells</th><th>box cells</th>"
                      "<th class=\"l\">landmasses</th><th class=\"l\">cells per class</th>"
                      "<th class=\"l\">solved</th></tr>\n");
    const cJSON *only = tb_json_path(d, "bake.only");
    int i = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, regions)
    {
        char p[96];
        tb_html_printf(h, "<tr><td>");
        snprintf(p, sizeof p, "plan.regions.%d.id", i);
        S_NUM(h, d, p, 1, 0, NULL);
        static const char *box[] = {"x0", "y0", "w", "h"};
        for (int k = 0; k < 4; k++) {
            tb_html_printf(h, "</td><td>");
            snprintf(p, sizeof p, "plan.regions.%d.box.%s", i, box[k]);
            S_NUM(h, d, p, 1, 0, NULL);
        }
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "plan.regions.%d.land_cells", i);
        S_NUM(h, d, p, 1, 0, NULL);
        tb_html_printf(h, "</td><td>");
        snprintf(p, sizeof p, "plan.regions.%d.box_cells", i);
        S_NUM(h, d, p, 1, 0, NULL);
        tb_html_printf(h, "</td><td class=\"l\">");
        const cJSON *lm;
        int k = 0;
        cJSON_ArrayForEach(lm, cJSON_GetObjectItem(r, "landmasses"))
            tb_html_printf(h, "%s%.0f", k++ ? "," : "", lm->valuedouble);
        tb_html_printf(h, "</td><td class=\"l\">");
        k = 0;
        cJSON_ArrayForEach(lm, cJSON_GetObjectItem(r, "class_cells"))
        {
            tb_html_printf(h, "%s", k++ ? ", " : "");
            tb_html_text(h, lm->string);
            tb_html_printf(h, " %.0f", lm->valuedouble);
        }
        bool solved = cJSON_GetArraySize(only) == 0;
        const cJSON *o;
        cJSON_ArrayForEach(o, only) solved |= (int)o->valuedouble == i + 1;
        tb_html_printf(h, "</td><td class=\"l\">%s</td></tr>\n", solved ? "yes" : "no");
        i++;
    }
    tb_html_printf(h, "</table>\n<h3>Classes</h3><table id=\"plan-classes\"><tr><th class=\"l\">"
                      "class</th><th>cells</th><th>uplift mm/yr</th><th>floor mm/yr</th><th>k_mult"
                      "</th><th>divide deg</th><th>typical deg</th><th>U max mm/yr</th>"
                      "<th class=\"l\">clamped</th></tr>\n");
    i = 0;
    const cJSON *cl;
    cJSON_ArrayForEach(cl, tb_json_path(d, "plan.classes"))
    {
        char p[96];
        tb_html_printf(h, "<tr><td class=\"l\">");
        tb_html_text(h, tb_json_str(cl, "name", "?"));
        static const struct {
            const char *key;
            int dec;
        } col[] = {{"cells", 0},      {"uplift_mm_yr", 3}, {"floor_mm_yr", 3}, {"k_mult", 2},
                   {"divide_deg", 1}, {"typical_deg", 1},  {"u_max_mm_yr", 3}};
        for (size_t k = 0; k < sizeof col / sizeof col[0]; k++) {
            tb_html_printf(h, "</td><td>");
            snprintf(p, sizeof p, "plan.classes.%d.%s", i, col[k].key);
            S_NUM(h, d, p, 1, col[k].dec, NULL);
        }
        bool clamped = cJSON_IsTrue(cJSON_GetObjectItem(cl, "clamped"));
        tb_html_printf(h, "</td><td class=\"l %s\">%s</td></tr>\n", clamped ? "warn" : "",
                       clamped ? "the repose clamp shapes it" : "no");
        i++;
    }
    tb_html_printf(h, "</table><p class=\"muted\">docs/plan.md explains the columns.</p>"
                      "</section>\n");
}

/* ---- the record ---- */

static void s_record(s_ctx_t *c)
{
    tb_html_t *h = c->h;
    const cJSON *d = c->doc;
    tb_html_printf(h, "<section id=\"record\"><h2>The record</h2><table><tr><td class=\"l\">build"
                      "</td><td class=\"l\"><code>");
    tb_html_text(h, tb_json_str(d, "tool.build_id", "?"));
    tb_html_printf(h, "</code> (version ");
    tb_html_text(h, tb_json_str(d, "tool.version", "?"));
    tb_html_printf(h, ")</td></tr><tr><td class=\"l\">manifest</td><td class=\"l\">");
    tb_html_text(h, tb_json_str(d, "manifest.source", tb_json_str(d, "plan.manifest.source", "?")));
    tb_html_printf(h, ", seed ");
    S_NUM(h, d, c->finished ? "manifest.seed" : "plan.manifest.seed", 1, 0, NULL);
    tb_html_printf(h, "</td></tr>\n");
    const cJSON *inputs = tb_json_path(d, "inputs");
    const cJSON *it;
    cJSON_ArrayForEach(it, inputs)
    {
        tb_html_printf(h, "<tr><td class=\"l\">");
        tb_html_text(h, it->string);
        tb_html_printf(h, "</td><td class=\"l\"><code>");
        if (cJSON_IsString(it)) {
            tb_html_text(h, it->valuestring);
        } else {
            tb_html_text(h, tb_json_str(it, "xxh3", tb_json_str(it, "error", "?")));
            tb_html_printf(h, "</code> ");
            tb_html_text(h, tb_json_str(it, "path", ""));
            tb_html_printf(h, "<code>");
        }
        tb_html_printf(h, "</code></td></tr>\n");
    }
    tb_html_printf(h, "</table>\n");
    const cJSON *outputs = tb_json_path(d, "outputs");
    if (cJSON_IsObject(outputs)) {
        tb_html_printf(h, "<h3>Outputs</h3><table id=\"outputs\"><tr><th class=\"l\">file</th>"
                          "<th class=\"l\">XXH3-64</th></tr>\n");
        cJSON_ArrayForEach(it, outputs)
        {
            tb_html_printf(h, "<tr><td class=\"l\"><a href=\"");
            tb_html_text(h, it->string);
            tb_html_printf(h, "\">");
            tb_html_text(h, it->string);
            tb_html_printf(h, "</a></td><td class=\"l\"><code>");
            tb_html_text(h, cJSON_IsString(it) ? it->valuestring : "?");
            tb_html_printf(h, "</code></td></tr>\n");
        }
        tb_html_printf(h, "<tr><td class=\"l\"><a href=\"meta.json\">meta.json</a></td>"
                          "<td class=\"l muted\">the record itself</td></tr></table>\n");
        tb_html_printf(h, "<p class=\"muted\">Two bakes made the same planet when their "
                          "planet_height.png hashes are equal (docs/bake.md).</p>\n");
    }
    tb_html_printf(h, "</section>\n");
}

char *tb_report_page(const cJSON *doc, const tb_report_page_t *pg, size_t *len)
{
    tb_html_t h = {0};
    s_ctx_t c = {.h = &h, .doc = doc, .pg = pg};
    c.finished = strcmp(pg->state, "finished") == 0;
    c.partial = cJSON_IsTrue(tb_json_path(doc, "bake.partial"));
    s_head(&c);
    s_banner(&c);
    s_first(&c);
    if (!c.finished) {
        tb_html_printf(&h, "<section id=\"live\"><h2>The bake %s</h2>\n",
                       strcmp(pg->state, "running") == 0 ? "as it runs" : "when it stopped");
        if (pg->started_unix > 0) {
            char when[64], dur[32];
            s_iso(pg->started_unix, when, sizeof when);
            s_duration(pg->written_unix - pg->started_unix, dur, sizeof dur);
            tb_html_printf(&h,
                           "<p>started %s, %s before this page was written; phase <b>%s</b>"
                           "</p>\n",
                           when, dur, pg->phase ? pg->phase : "?");
        }
        /* the phases so far, comma-separated, the last one the current */
        tb_html_printf(&h, "<p id=\"phases\">");
        const char *t = pg->trail && pg->trail[0] ? pg->trail : (pg->phase ? pg->phase : "");
        while (*t) {
            size_t n = strcspn(t, ",");
            bool last = t[n] == '\0';
            tb_html_printf(&h, "<span class=\"%s\">%.*s%s</span>%s", last ? "big" : "ok", (int)n, t,
                           last ? (strcmp(pg->state, "running") == 0 ? " (now)" : " (stopped here)")
                                : " &#10003;",
                           last ? "" : " &rarr; ");
            t += n + !last;
        }
        tb_html_printf(&h, " &rarr; <span class=\"muted\">the finished page</span></p>\n");
        s_failures(&c);
        s_workers_table(&c);
        tb_html_printf(&h, "</section>\n");
    }
    if (!c.finished)
        s_lattice_map(&c);
    s_verdict(&c);
    s_tiles(&c);
    if (c.finished) {
        s_lattice_map(&c);
        s_view3d(&c);
    }
    s_histograms(&c);
    if (c.finished)
        s_maps(&c);
    s_timeline(&c);
    if (c.finished) {
        tb_html_printf(&h, "<section id=\"dispatch\"><h2>Workers</h2>");
        s_failures(&c);
        s_workers_table(&c);
        tb_html_printf(&h, "</section>\n");
    }
    s_plan(&c);
    s_record(&c);
    tb_html_printf(&h, "</main>\n");
    if (c.finished && pg->terrain) /* classic scripts: a page from file:// may not import modules */
        tb_html_printf(&h, "<script src=\"report_assets/three.js\"></script>\n"
                           "<script src=\"report_assets/view3d.js\"></script>\n");
    tb_html_printf(&h, "<script>%s</script>\n</body></html>\n", tb_report_js);
    return tb_html_take(&h, len);
}
