/* The live page of report.html and the bake's progress reports; see report.h.
 *
 * One writer thread does the slow work off the dispatch loops: every S_TICK_S it recomputes the
 * current phase's progress from the latest snapshot (coordinator/report/progress.h), moves the
 * terminal bar or prints a progress line (common/log.h), and every TB_REPORT_LIVE_INTERVAL_S it
 * rewrites the page. The dispatch loops only hand over snapshots of their records
 * (tb_report_live_tick, at most every S_SNAP_S, and whenever a job's state changes, so the last
 * state of each dispatch is kept). The mutex guards the document and the phase list.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/version.h"
#include "coordinator/report/html.h"
#include "coordinator/report/page.h"
#include "coordinator/report/progress.h"
#include "coordinator/report/report.h"
#include "coordinator/report/terrain.h"

#define S_TICK_S 0.5 /* the bar and the progress lines */
#define S_SNAP_S 0.5 /* snapshots of a dispatch record, at most */
#define S_MAX_PHASES 32

typedef struct {
    char name[32];
    double start_mono, end_mono; /* end 0 while it runs */
    double dispatch_mono;        /* when its dispatch started (0: none seen) */
    bool has_record;
} s_phase_t;

struct tb_report_live_t {
    char out_dir[4200];
    cJSON *doc; /* tool, plan, bake, dispatch (the current phase's), live.records.<phase> */
    const tb_plan_t *plan;
    tb_tile_lattice_t lattice;
    bool has_lattice;
    s_phase_t phases[S_MAX_PHASES];
    int n_phases;
    double started_unix, started_mono, last_write_mono, last_snap_mono;
    size_t last_sig;
    char progress_text[768];
    tb_progress_t *bar;
    bool warned, tile_warned;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_started, stop, write_now;
};

static double s_unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static s_phase_t *s_current(tb_report_live_t *self)
{
    return self->n_phases ? &self->phases[self->n_phases - 1] : NULL;
}

static const char *s_unit(const char *phase)
{
    return strcmp(phase, "solve") == 0 ? "regions" : strcmp(phase, "tiles") == 0 ? "tiles" : "jobs";
}

/* The current phase's progress sentence (and the bar), under the lock. */
static void s_progress_locked(tb_report_live_t *self, double now)
{
    s_phase_t *ph = s_current(self);
    if (!ph) {
        snprintf(self->progress_text, sizeof self->progress_text, "starting");
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "live.records.%s", ph->name);
    const cJSON *rec = tb_json_path(self->doc, path);
    tb_report_progress_t p;
    if (ph->has_record && tb_report_progress_of(rec, now - self->last_snap_mono, &p) == 0) {
        tb_report_progress_text(&p, ph->name, s_unit(ph->name), self->progress_text,
                                sizeof self->progress_text);
        tb_progress_update_eta(self->bar, p.fraction, p.measured ? p.eta_s : NAN,
                               self->progress_text);
        cJSON *live = cJSON_GetObjectItem(self->doc, "live");
        cJSON *pj = cJSON_CreateObject();
        cJSON_AddStringToObject(pj, "phase", ph->name);
        cJSON_AddNumberToObject(pj, "jobs", p.jobs);
        cJSON_AddNumberToObject(pj, "done", p.done + p.from_store);
        cJSON_AddNumberToObject(pj, "running", p.running);
        cJSON_AddNumberToObject(pj, "fraction", p.fraction);
        if (isfinite(p.eta_s) && p.measured)
            cJSON_AddNumberToObject(pj, "eta_s", p.eta_s);
        if (isfinite(p.job_s))
            cJSON_AddNumberToObject(pj, "job_s", p.job_s);
        cJSON_AddNumberToObject(pj, "workers", p.workers);
        cJSON_ReplaceItemInObject(live, "progress", pj);
    } else {
        snprintf(self->progress_text, sizeof self->progress_text,
                 "%s: running for %.0f s (no jobs: the phase's own work on the coordinator)",
                 ph->name, now - ph->start_mono);
        tb_progress_update_eta(self->bar, 0, NAN, self->progress_text);
        cJSON_ReplaceItemInObject(cJSON_GetObjectItem(self->doc, "live"), "progress",
                                  cJSON_CreateNull());
    }
}

/* The timeline for the page or meta.json: the phases and each dispatch's start, in seconds from the
 * bake's start, with where its record lies (`meta` paths, or the live document's). */
static cJSON *s_timeline_locked(const tb_report_live_t *self, bool meta_paths)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "started_unix", self->started_unix);
    cJSON *phases = cJSON_AddArrayToObject(t, "phases");
    cJSON *ds = cJSON_AddArrayToObject(t, "dispatches");
    double now = tb_now_s();
    for (int i = 0; i < self->n_phases; i++) {
        const s_phase_t *ph = &self->phases[i];
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", ph->name);
        cJSON_AddNumberToObject(p, "start_s", ph->start_mono - self->started_mono);
        cJSON_AddNumberToObject(p, "seconds",
                                (ph->end_mono > 0 ? ph->end_mono : now) - ph->start_mono);
        cJSON_AddItemToArray(phases, p);
        if (!ph->has_record)
            continue;
        char path[64];
        if (meta_paths)
            snprintf(path, sizeof path, "%s", strcmp(ph->name, "solve") == 0 ? "dispatch" : "");
        if (meta_paths && !path[0])
            snprintf(path, sizeof path, "%s.dispatch", ph->name);
        if (!meta_paths)
            snprintf(path, sizeof path, "live.records.%s", ph->name);
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "phase", ph->name);
        cJSON_AddNumberToObject(d, "start_s", ph->dispatch_mono - self->started_mono);
        cJSON_AddStringToObject(d, "record", path);
        cJSON_AddItemToArray(ds, d);
    }
    return t;
}

static void s_trail(const tb_report_live_t *self, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < self->n_phases && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", k ? "," : "", self->phases[i].name);
    if (!out[0])
        snprintf(out, n, "starting");
}

/* Builds the page under the lock and writes it outside. */
static void s_write(tb_report_live_t *self, const char *state, const char *error)
{
    pthread_mutex_lock(&self->mu);
    double now = tb_now_s();
    s_progress_locked(self, now);
    cJSON_ReplaceItemInObject(self->doc, "timeline", s_timeline_locked(self, false));
    char trail[1024];
    s_trail(self, trail, sizeof trail);
    s_phase_t *ph = s_current(self);
    tb_report_page_t pg = {.state = state,
                           .phase = ph ? ph->name : "starting",
                           .trail = trail,
                           .error = error,
                           .eta = self->progress_text,
                           .written_unix = s_unix_now(),
                           .started_unix = self->started_unix,
                           .interval_s = TB_REPORT_LIVE_INTERVAL_S,
                           .out_dir = self->out_dir,
                           .lattice = self->has_lattice ? &self->lattice : NULL};
    size_t n = 0;
    char *text = tb_report_page(self->doc, &pg, &n);
    self->last_write_mono = now;
    self->write_now = false;
    pthread_mutex_unlock(&self->mu);
    tb_err_t err;
    int rc = text ? tb_report_page_save(self->out_dir, text, n, &err)
                  : tb_err_set(&err, TB_E_NOMEM, "out of memory writing the page");
    free(text);
    if (rc != 0 && !self->warned) {
        tb_log_warn("the live report page was not written (the bake goes on): %s", err.msg);
        self->warned = true;
    }
}

static void *s_thread(void *arg)
{
    tb_report_live_t *self = arg;
    pthread_mutex_lock(&self->mu);
    while (!self->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)(S_TICK_S * 1e9);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        if (!self->write_now)
            pthread_cond_timedwait(&self->cv, &self->mu, &ts);
        if (self->stop)
            break;
        double now = tb_now_s();
        bool write = self->write_now || now - self->last_write_mono >= TB_REPORT_LIVE_INTERVAL_S;
        if (write) {
            pthread_mutex_unlock(&self->mu);
            s_write(self, "running", NULL);
            pthread_mutex_lock(&self->mu);
        } else {
            s_progress_locked(self, now);
        }
    }
    pthread_mutex_unlock(&self->mu);
    return NULL;
}

tb_report_live_t *tb_report_live_new(const char *out_dir, const tb_plan_t *plan, int steps,
                                     int regions_solved)
{
    tb_report_live_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    snprintf(self->out_dir, sizeof self->out_dir, "%s", out_dir);
    self->plan = plan;
    self->started_unix = s_unix_now();
    self->started_mono = tb_now_s();
    pthread_mutex_init(&self->mu, NULL);
    pthread_cond_init(&self->cv, NULL);
    self->doc = cJSON_CreateObject();
    char *pj = tb_plan_to_json(plan);
    cJSON *pl = pj ? cJSON_Parse(pj) : NULL;
    free(pj);
    if (!self->doc || !pl) {
        cJSON_Delete(pl);
        tb_report_live_destroy(&self);
        return NULL;
    }
    const tb_manifest_t *m = tb_plan_manifest(plan);
    const tb_raster_t *labels = tb_plan_label_raster(plan);
    tb_err_t lerr;
    self->has_lattice = m && labels &&
                        tb_tile_lattice_make(&self->lattice, labels->w, labels->h, m->cell_m,
                                             m->tiles.size_km, m->tiles.cell_m, &lerr) == 0;
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
    cJSON *live = cJSON_AddObjectToObject(self->doc, "live");
    cJSON_AddObjectToObject(live, "records");
    cJSON_AddNullToObject(live, "progress");
    cJSON_AddNullToObject(self->doc, "timeline");
    self->bar = tb_progress_new("bake", 1);
    s_write(self, "running", NULL);
    self->thread_started = pthread_create(&self->thread, NULL, s_thread, self) == 0;
    return self;
}

void tb_report_live_phase(tb_report_live_t *self, const char *phase, const tb_dispatch_t *d)
{
    (void)d; /* each phase's own engine reports through tb_report_live_tick */
    if (!self)
        return;
    pthread_mutex_lock(&self->mu);
    double now = tb_now_s();
    s_phase_t *cur = s_current(self);
    if (cur && cur->end_mono == 0)
        cur->end_mono = now;
    if (self->n_phases < S_MAX_PHASES) {
        s_phase_t *ph = &self->phases[self->n_phases++];
        memset(ph, 0, sizeof *ph);
        snprintf(ph->name, sizeof ph->name, "%s", phase);
        ph->start_mono = now;
    }
    tb_progress_reset(self->bar, phase, 1);
    self->last_sig = (size_t)-1;
    self->write_now = true;
    pthread_cond_signal(&self->cv);
    pthread_mutex_unlock(&self->mu);
    if (!self->thread_started)
        s_write(self, "running", NULL);
}

void tb_report_live_tick(tb_report_live_t *self, const tb_dispatch_t *d)
{
    if (!self || !d)
        return;
    tb_dispatch_stats_t st;
    tb_dispatch_stats(d, &st);
    /* a job's state changed: keep that snapshot, so each dispatch's last state is on the page */
    size_t sig = st.ran * 1000003u + st.from_store * 1009u + st.attempts * 31u + st.failed;
    double now = tb_now_s();
    pthread_mutex_lock(&self->mu);
    bool skip = sig == self->last_sig && now - self->last_snap_mono < S_SNAP_S;
    pthread_mutex_unlock(&self->mu);
    if (skip)
        return;
    cJSON *snap = tb_dispatch_record_json(d);
    if (!snap)
        return;
    pthread_mutex_lock(&self->mu);
    s_phase_t *ph = s_current(self);
    if (!ph) {
        pthread_mutex_unlock(&self->mu);
        cJSON_Delete(snap);
        return;
    }
    self->last_sig = sig;
    self->last_snap_mono = now;
    if (!ph->has_record)
        ph->dispatch_mono = now - fmax(0, tb_json_num(snap, "seconds"));
    ph->has_record = true;
    cJSON *records = cJSON_GetObjectItem(cJSON_GetObjectItem(self->doc, "live"), "records");
    if (cJSON_GetObjectItem(records, ph->name))
        cJSON_ReplaceItemInObject(records, ph->name, cJSON_Duplicate(snap, true));
    else
        cJSON_AddItemToObject(records, ph->name, cJSON_Duplicate(snap, true));
    cJSON_ReplaceItemInObject(self->doc, "dispatch", snap);
    pthread_mutex_unlock(&self->mu);
}

void tb_report_live_tile(tb_report_live_t *self, const tb_tile_result_t *r)
{
    if (!self || !r || !self->has_lattice)
        return;
    tb_err_t err;
    if (tb_terrain_write_tile(self->out_dir, &self->lattice, self->plan, r, &err) != 0) {
        pthread_mutex_lock(&self->mu);
        bool warn = !self->tile_warned;
        self->tile_warned = true;
        pthread_mutex_unlock(&self->mu);
        if (warn)
            tb_log_warn("the 3D view's copy of a tile was not written (the bake goes on): %s",
                        err.msg);
    }
}

cJSON *tb_report_live_timeline_json(tb_report_live_t *self)
{
    if (!self)
        return NULL;
    pthread_mutex_lock(&self->mu);
    cJSON *t = s_timeline_locked(self, true);
    pthread_mutex_unlock(&self->mu);
    return t;
}

static void s_stop(tb_report_live_t *self)
{
    if (!self->thread_started)
        return;
    pthread_mutex_lock(&self->mu);
    self->stop = true;
    pthread_cond_signal(&self->cv);
    pthread_mutex_unlock(&self->mu);
    pthread_join(self->thread, NULL);
    self->thread_started = false;
}

void tb_report_live_finish(tb_report_live_t *self, const tb_dispatch_t *d, bool meta_written,
                           const tb_err_t *err)
{
    if (!self)
        return;
    (void)d;
    s_stop(self);
    pthread_mutex_lock(&self->mu);
    s_phase_t *cur = s_current(self);
    if (cur && cur->end_mono == 0)
        cur->end_mono = tb_now_s();
    pthread_mutex_unlock(&self->mu);
    tb_progress_destroy(&self->bar);
    if (meta_written) {
        tb_err_t e;
        if (tb_report_write(self->out_dir, &e) != 0)
            tb_log_warn("report.html was not written: %s", e.msg);
        return;
    }
    bool interrupted = err && err->code == TB_E_INTERRUPTED;
    s_write(self, interrupted ? "interrupted" : "failed",
            err && err->msg[0] ? err->msg : "the bake stopped before its outputs were written");
}

void tb_report_live_destroy(tb_report_live_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_report_live_t *self = *self_p;
    s_stop(self);
    tb_progress_destroy(&self->bar);
    cJSON_Delete(self->doc);
    pthread_mutex_destroy(&self->mu);
    pthread_cond_destroy(&self->cv);
    free(self);
    *self_p = NULL;
}
