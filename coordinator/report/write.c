/* The two writers of report.html: the finished page from meta.json and the live page during a
 * bake; see report.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/version.h"
#include "coordinator/report/html.h"
#include "coordinator/report/page.h"
#include "coordinator/report/report.h"

#define S_MAX_META_BYTES ((size_t)256 << 20)

static double s_unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int s_write_page(const char *out_dir, const cJSON *doc, const tb_report_page_t *pg,
                        tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, out_dir, TB_REPORT_FILE, err) != 0)
        return -1;
    size_t n;
    char *text = tb_report_page(doc, pg, &n);
    if (!text)
        return tb_err_set(err, TB_E_NOMEM, "%s: out of memory writing the page", path);
    int rc = tb_fs_write_atomic(path, text, n, err);
    free(text);
    return rc;
}

static cJSON *s_read_json(const char *path, tb_err_t *err)
{
    char *text;
    size_t n;
    if (tb_fs_read_all(path, S_MAX_META_BYTES, &text, &n, err) != 0)
        return NULL;
    cJSON *doc = cJSON_ParseWithLength(text, n);
    free(text);
    if (!doc)
        tb_err_set(err, TB_E_FORMAT, "%s: not JSON", path);
    return doc;
}

/* The last path component of dir, without trailing slashes. */
static void s_basename(const char *dir, char *out, size_t n)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    snprintf(out, n, "%.*s", (int)(len - start), dir + start);
}

/* gate.json one level up, when `terrain gate` baked this directory: its entry for this seed. */
static const cJSON *s_gate_entry(const cJSON *gate, const char *out_dir, double seed)
{
    char mine[256], theirs[256];
    s_basename(out_dir, mine, sizeof mine);
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(gate, "seeds"))
    {
        s_basename(tb_json_str(s, "dir", ""), theirs, sizeof theirs);
        if (strcmp(mine, theirs) == 0 && tb_json_num(s, "seed") == seed)
            return s;
    }
    return NULL;
}

int tb_report_write(const char *out_dir, tb_err_t *err)
{
    char path[4200], gpath[4200];
    if (tb_fs_join(path, sizeof path, out_dir, "meta.json", err) != 0)
        return -1;
    if (!tb_fs_exists(path))
        return tb_err_set(err, TB_E_IO,
                          "%s: not found: %s holds no finished bake (a bake that did "
                          "not finish leaves only its last live %s)",
                          path, out_dir, TB_REPORT_FILE);
    cJSON *doc = s_read_json(path, err);
    if (!doc)
        return -1;
    if (!cJSON_IsObject(cJSON_GetObjectItem(doc, "bake")) ||
        !cJSON_IsObject(cJSON_GetObjectItem(doc, "dispatch"))) {
        cJSON_Delete(doc);
        return tb_err_set(err, TB_E_FORMAT,
                          "%s: not a bake's meta.json (no \"bake\" or "
                          "\"dispatch\" object)",
                          path);
    }
    cJSON *gate = NULL;
    tb_report_page_t pg = {.state = "finished", .written_unix = s_unix_now(), .out_dir = out_dir};
    if (tb_fs_join(gpath, sizeof gpath, out_dir, "../gate.json", NULL) == 0 &&
        tb_fs_exists(gpath)) {
        tb_err_t gerr;
        gate = s_read_json(gpath, &gerr);
        pg.gate = s_gate_entry(gate, out_dir, tb_json_num(doc, "manifest.seed"));
        pg.gate_source = "../gate.json";
    }
    int rc = s_write_page(out_dir, doc, &pg, err);
    cJSON_Delete(gate);
    cJSON_Delete(doc);
    return rc;
}

/* ---- the live page ---- */

struct tb_report_live_t {
    char out_dir[4200];
    cJSON *doc; /* tool, plan, bake; "dispatch" replaced by each snapshot */
    char phase[64];
    char trail[512]; /* the phases so far, comma-separated */
    double started_unix, started_mono, last_write_mono;
    bool warned;
};

static void s_write_live(tb_report_live_t *self, const char *state, const char *error)
{
    char eta[512] = "";
    const cJSON *jobs = tb_json_path(self->doc, "dispatch.jobs");
    if (strcmp(state, "running") == 0 && strcmp(self->phase, "solve") == 0 && jobs) {
        double total = 0, store = 0, done = 0, part = 0;
        const cJSON *j;
        cJSON_ArrayForEach(j, jobs)
        {
            double w = tb_json_num(j, "weight");
            if (!isfinite(w))
                continue;
            const char *s = tb_json_str(j, "state", "");
            total += w;
            if (cJSON_IsTrue(cJSON_GetObjectItem(j, "from_store")))
                store += w;
            else if (strcmp(s, "done") == 0)
                done += w;
            else if (strcmp(s, "running") == 0)
                part += w * fmin(1, fmax(0, tb_json_num(j, "progress")));
        }
        double todo = total - store, elapsed = tb_json_num(self->doc, "dispatch.seconds");
        double frac = todo > 0 ? (done + part) / todo : 1;
        if (todo > 0 && frac >= 0.02 && elapsed >= 2) {
            double left = elapsed * (1 - frac) / frac;
            char when[32];
            time_t t = (time_t)(s_unix_now() + left);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(when, sizeof when, "%H:%M:%S UTC", &tm);
            snprintf(eta, sizeof eta,
                     "ETA about %.0f s (%s) for the solve, then the outputs: %.0f%% of the solve's "
                     "work (box cells x steps, results from the store left out) done in %.0f s, "
                     "counting running jobs by their progress, and the rest assumed to go at the "
                     "same rate",
                     left, when, 100 * frac, elapsed);
        } else {
            snprintf(eta, sizeof eta,
                     "ETA not known yet: %.0f%% of the solve's work done in "
                     "%.0f s, too little to extrapolate (the plan's floor on one core: %.0f s at "
                     "the manifest's steps)",
                     100 * frac, isfinite(elapsed) ? elapsed : 0,
                     tb_json_num(self->doc, "plan.estimate.one_core_floor_s"));
        }
    } else if (strcmp(state, "running") == 0 && jobs) {
        snprintf(eta, sizeof eta,
                 "The solve is done; compositing and writing the outputs (seconds "
                 "on the demo planet).");
    }
    tb_report_page_t pg = {.state = state,
                           .phase = self->phase,
                           .trail = self->trail,
                           .error = error,
                           .eta = eta[0] ? eta : NULL,
                           .written_unix = s_unix_now(),
                           .started_unix = self->started_unix,
                           .interval_s = TB_REPORT_LIVE_INTERVAL_S,
                           .out_dir = self->out_dir};
    tb_err_t err;
    if (s_write_page(self->out_dir, self->doc, &pg, &err) != 0 && !self->warned) {
        tb_log_warn("the live report page was not written (the bake goes on): %s", err.msg);
        self->warned = true;
    }
    self->last_write_mono = tb_now_s();
}

static void s_snapshot(tb_report_live_t *self, const tb_dispatch_t *d)
{
    if (!d)
        return;
    cJSON *snap = tb_dispatch_record_json(d);
    if (snap)
        cJSON_ReplaceItemInObject(self->doc, "dispatch", snap);
}

tb_report_live_t *tb_report_live_new(const char *out_dir, const tb_plan_t *plan, int steps,
                                     int regions_solved)
{
    tb_report_live_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    snprintf(self->out_dir, sizeof self->out_dir, "%s", out_dir);
    snprintf(self->phase, sizeof self->phase, "starting");
    snprintf(self->trail, sizeof self->trail, "starting");
    self->started_unix = s_unix_now();
    self->started_mono = tb_now_s();
    self->doc = cJSON_CreateObject();
    char *pj = tb_plan_to_json(plan);
    cJSON *pl = pj ? cJSON_Parse(pj) : NULL;
    free(pj);
    if (!self->doc || !pl) {
        cJSON_Delete(pl);
        cJSON_Delete(self->doc);
        free(self);
        return NULL;
    }
    cJSON *tool = cJSON_AddObjectToObject(self->doc, "tool");
    cJSON_AddStringToObject(tool, "version", tb_version());
    cJSON_AddStringToObject(tool, "build_id", tb_build_id());
    cJSON_AddItemToObject(self->doc, "plan", pl);
    cJSON *bake = cJSON_AddObjectToObject(self->doc, "bake");
    cJSON_AddNumberToObject(bake, "steps", steps);
    cJSON_AddNumberToObject(bake, "regions_solved", regions_solved);
    cJSON_AddNumberToObject(bake, "regions_total", tb_plan_region_count(plan));
    cJSON_AddBoolToObject(bake, "partial", regions_solved < tb_plan_region_count(plan));
    cJSON_AddNullToObject(self->doc, "dispatch");
    s_write_live(self, "running", NULL);
    return self;
}

void tb_report_live_phase(tb_report_live_t *self, const char *phase, const tb_dispatch_t *d)
{
    if (!self)
        return;
    if (strcmp(self->trail, "starting") == 0)
        self->trail[0] = '\0';
    if (strcmp(self->phase, phase) != 0 || !self->trail[0]) {
        size_t k = strlen(self->trail);
        snprintf(self->trail + k, sizeof self->trail - k, "%s%s", k ? "," : "", phase);
    }
    snprintf(self->phase, sizeof self->phase, "%s", phase);
    s_snapshot(self, d);
    s_write_live(self, "running", NULL);
}

void tb_report_live_tick(tb_report_live_t *self, const tb_dispatch_t *d)
{
    if (!self || tb_now_s() - self->last_write_mono < TB_REPORT_LIVE_INTERVAL_S)
        return;
    s_snapshot(self, d);
    s_write_live(self, "running", NULL);
}

void tb_report_live_finish(tb_report_live_t *self, const tb_dispatch_t *d, bool meta_written,
                           const tb_err_t *err)
{
    if (!self)
        return;
    s_snapshot(self, d);
    if (meta_written) {
        tb_err_t e;
        if (tb_report_write(self->out_dir, &e) != 0)
            tb_log_warn("report.html was not written: %s", e.msg);
        return;
    }
    bool interrupted = err && err->code == TB_E_INTERRUPTED;
    s_write_live(self, interrupted ? "interrupted" : "failed",
                 err && err->msg[0] ? err->msg
                                    : "the bake stopped before its outputs were written");
}

void tb_report_live_destroy(tb_report_live_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    cJSON_Delete((*self_p)->doc);
    free(*self_p);
    *self_p = NULL;
}
