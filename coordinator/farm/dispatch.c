/* The dispatch engine; see dispatch.h.
 *
 * One thread, one ROUTER, one event loop: receive everything waiting, reap local children, expire
 * leases, heartbeat, hand idle workers the largest eligible job, redraw the bar. Jobs and workers
 * live in arrays; a job points at its lease holder and a worker at the job it holds, and both
 * pointers change only in s_lease_grant and tb_dsp_lease_end, which is what keeps the fencing
 * simple: a message about (job, attempt) from a worker counts only if that worker holds exactly
 * that lease.
 */
#include "coordinator/farm/dispatch_internal.h"

/* ---- setup ---- */

static int s_ncores(void)
{
    return tb_pool_default_threads();
}

tb_dispatch_t *tb_dispatch_new(const tb_dispatch_opts_t *opts, tb_err_t *err)
{
    tb_dispatch_t *self = tb_calloc(1, sizeof *self, "the dispatcher", err);
    if (!self)
        return NULL;
    self->opts = *opts;
    tb_dispatch_opts_t *o = &self->opts;
    if (!o->workers_given)
        o->workers = o->bind ? 0 : s_ncores();
    if (o->workers < 0 || o->workers > 1024 || o->threads < 0 || o->threads > 4096) {
        tb_err_set(err, TB_E_INVALID, "--workers %d / --threads %d out of range (0..1024, 0..4096)",
                   o->workers, o->threads);
        free(self);
        return NULL;
    }
    if (o->threads <= 0)
        o->threads = s_ncores();
    if (o->heartbeat_ms <= 0)
        o->heartbeat_ms = 1000;
    if (o->liveness <= 0)
        o->liveness = 3;
    if (o->chunk_bytes == 0 || o->chunk_bytes > TB_PROTO_CHUNK_MAX)
        o->chunk_bytes = TB_PROTO_CHUNK_DEFAULT;
    if (o->max_failures <= 0)
        o->max_failures = 3;
    if (o->blocklist_after <= 0)
        o->blocklist_after = 3;
    if (o->max_lost <= 0)
        o->max_lost = 8;
    if (o->max_respawns <= 0)
        o->max_respawns = 2 * (o->workers > 0 ? o->workers : 1);
    if (!o->label)
        o->label = "jobs";
    self->failed_job = -1;
    pthread_mutex_init(&self->mu, NULL);
    atomic_init(&self->idle_stop, false);
    self->stats.mode = o->bind ? "farm" : o->workers == 0 ? "in-process" : "local";
    return self;
}

static void s_job_free(s_job_t *job)
{
    free(job->kind);
    free(job->spec);
    free(job->label);
    free(job->spec_blob);
    free(job->attempts);
    free(job->result);
}

void tb_dispatch_destroy(tb_dispatch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_dispatch_t *self = *self_p;
    tb_dispatch_finish(self, true);
    for (size_t i = 0; i < self->n_jobs; i++)
        s_job_free(&self->jobs[i]);
    for (size_t i = 0; i < self->n_workers; i++)
        tb_transfer_reset(&self->workers[i].result_in);
    free(self->jobs);
    free(self->order);
    free(self->workers);
    free(self->blocklist);
    tb_progress_destroy(&self->bar);
    tb_broker_destroy(&self->broker, 0);
    tb_local_workers_destroy(&self->local);
    tb_cache_destroy(&self->cache);
    pthread_mutex_destroy(&self->mu);
    free(self);
    *self_p = NULL;
}

static char *s_strdup(const char *s, tb_err_t *err)
{
    size_t n = strlen(s) + 1;
    char *d = tb_malloc(n, "a string", err);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int64_t s_add(tb_dispatch_t *self, const tb_job_desc_t *desc, tb_err_t *err);

int64_t tb_dispatch_add(tb_dispatch_t *self, const tb_job_desc_t *desc, tb_err_t *err)
{
    /* between batches the idle thread may be registering workers: the lock keeps it apart */
    pthread_mutex_lock(&self->mu);
    int64_t r = s_add(self, desc, err);
    pthread_mutex_unlock(&self->mu);
    return r;
}

static int64_t s_add(tb_dispatch_t *self, const tb_job_desc_t *desc, tb_err_t *err)
{
    const tb_job_kind_t *kind = tb_job_find(desc->kind);
    if (!kind)
        return tb_err_set(err, TB_E_INVALID, "unknown job kind \"%s\"",
                          desc->kind ? desc->kind : "(null)");
    if (desc->spec_bytes > kind->max_spec_bytes)
        return tb_err_set(err, TB_E_INVALID, "%s: spec of %zu bytes, more than the %zu allowed",
                          kind->name, desc->spec_bytes, kind->max_spec_bytes);
    if (self->n_jobs == self->cap_jobs) {
        size_t cap = self->cap_jobs ? 2 * self->cap_jobs : 16;
        s_job_t *grown = realloc(self->jobs, cap * sizeof *grown);
        if (!grown)
            return tb_err_set(err, TB_E_NOMEM, "out of memory adding a job");
        self->jobs = grown;
        self->cap_jobs = cap;
    }
    size_t index = self->n_jobs;
    s_job_t *job = &self->jobs[index];
    memset(job, 0, sizeof *job);
    char label[64];
    snprintf(label, sizeof label, "job %zu", index);
    job->kind = s_strdup(kind->name, err);
    job->label = s_strdup(desc->label ? desc->label : label, err);
    job->spec = tb_malloc(desc->spec_bytes, "a job spec", err);
    if (!job->kind || !job->label || !job->spec) {
        s_job_free(job);
        return -1;
    }
    if (desc->spec_bytes)
        memcpy(job->spec, desc->spec, desc->spec_bytes);
    job->spec_bytes = desc->spec_bytes;
    job->weight = desc->weight;
    job->cells = desc->cells;
    job->max_result_bytes = tb_job_result_bound(kind, desc->spec, desc->spec_bytes);
    job->kind_def = kind;
    job->deadline_s = self->opts.job_timeout_s > 0 ? self->opts.job_timeout_s
                      : desc->deadline_s > 0       ? desc->deadline_s
                                                   : 0;
    job->worker = -1;
    tb_cache_key_make(&job->key, tb_build_id(), kind->name, desc->spec, desc->spec_bytes,
                      desc->input_hashes, desc->n_inputs);
    tb_cache_key_hex(&job->key, job->key_hex);
    self->n_jobs++;
    return (int64_t)index;
}

size_t tb_dispatch_count(const tb_dispatch_t *self)
{
    return self->n_jobs;
}

int tb_dispatch_next_batch(tb_dispatch_t *self, const tb_dispatch_batch_t *batch, tb_err_t *err)
{
    if (!self->opts.batches)
        return tb_err_set(err, TB_E_INTERNAL,
                          "tb_dispatch_next_batch on an engine without "
                          "batches");
    pthread_mutex_lock(&self->mu);
    if (self->n_jobs > 0 && (!self->ran || self->n_done < self->n_jobs)) {
        pthread_mutex_unlock(&self->mu);
        return tb_err_set(err, TB_E_INTERNAL,
                          "tb_dispatch_next_batch: the %s batch has not "
                          "finished (%zu of %zu jobs done)",
                          self->opts.label, self->n_done, self->n_jobs);
    }
    for (size_t i = 0; i < self->n_jobs; i++)
        s_job_free(&self->jobs[i]);
    self->job_base += self->n_jobs;
    self->n_jobs = 0;
    free(self->order);
    self->order = NULL;
    self->n_done = 0;
    self->next_deliver = 0;
    self->total_weight = self->done_weight = self->done_cells = 0;
    self->started_s = 0;
    self->failed_job = -1;
    self->no_worker_since_s = 0;
    size_t seen = self->stats.workers_seen;
    const char *mode = self->stats.mode;
    memset(&self->stats, 0, sizeof self->stats);
    self->stats.workers_seen = seen;
    self->stats.mode = mode;
    self->ran = false;
    self->opts.label = batch && batch->label ? batch->label : "jobs";
    self->opts.on_result = batch ? batch->on_result : NULL;
    self->opts.on_tick = batch ? batch->on_tick : NULL;
    self->opts.user = batch ? batch->user : NULL;
    self->batch_fresh = batch && batch->fresh;
    pthread_mutex_unlock(&self->mu);
    return 0;
}

/* ---- accessors ---- */

const void *tb_dispatch_result(const tb_dispatch_t *self, size_t i, size_t *bytes)
{
    if (i >= self->n_jobs || self->jobs[i].state != S_DONE) {
        *bytes = 0;
        return NULL;
    }
    *bytes = self->jobs[i].result_bytes;
    return self->jobs[i].result;
}

void tb_dispatch_record(const tb_dispatch_t *self, size_t i, tb_job_record_t *rec)
{
    memset(rec, 0, sizeof *rec);
    if (i >= self->n_jobs)
        return;
    const s_job_t *job = &self->jobs[i];
    rec->label = job->label;
    rec->kind = job->kind;
    memcpy(rec->key_hex, job->key_hex, sizeof rec->key_hex);
    rec->done = job->state == S_DONE;
    rec->from_store = job->from_store;
    rec->worker = job->worker_name;
    rec->seconds = job->seconds;
    rec->result_bytes = job->result_bytes;
    rec->result_xxh3 = job->result_xxh3;
    rec->n_attempts = job->n_attempts;
    rec->attempts = job->attempts;
}

void tb_dispatch_stats(const tb_dispatch_t *self, tb_dispatch_stats_t *stats)
{
    pthread_mutex_t *mu = (pthread_mutex_t *)&self->mu;
    pthread_mutex_lock(mu);
    *stats = self->stats;
    pthread_mutex_unlock(mu);
}

static cJSON *s_record_json(const tb_dispatch_t *self);

cJSON *tb_dispatch_record_json(const tb_dispatch_t *self)
{
    /* the idle thread between batches changes the workers table: the lock keeps it apart */
    pthread_mutex_t *mu = (pthread_mutex_t *)&self->mu;
    pthread_mutex_lock(mu);
    cJSON *root = s_record_json(self);
    pthread_mutex_unlock(mu);
    return root;
}

static cJSON *s_record_json(const tb_dispatch_t *self)
{
    cJSON *root = cJSON_CreateObject();
    const tb_dispatch_stats_t *s = &self->stats;
    cJSON_AddStringToObject(root, "mode", s->mode);
    bool live = self->started_s > 0 && s->seconds == 0;
    cJSON_AddNumberToObject(root, "seconds", live ? tb_now_s() - self->started_s : s->seconds);
    cJSON *st = cJSON_AddObjectToObject(root, "stats");
    cJSON_AddNumberToObject(st, "jobs", (double)s->jobs);
    cJSON_AddNumberToObject(st, "from_store", (double)s->from_store);
    cJSON_AddNumberToObject(st, "ran", (double)s->ran);
    cJSON_AddNumberToObject(st, "attempts", (double)s->attempts);
    cJSON_AddNumberToObject(st, "lost", (double)s->lost);
    cJSON_AddNumberToObject(st, "failed", (double)s->failed);
    cJSON_AddNumberToObject(st, "corrupt_store", (double)s->corrupt_store);
    cJSON_AddNumberToObject(st, "workers_seen", (double)s->workers_seen);
    cJSON_AddNumberToObject(st, "workers_refused", (double)s->workers_refused);
    cJSON *workers = cJSON_AddArrayToObject(root, "workers");
    for (size_t i = 0; i < self->n_workers; i++) {
        const s_worker_t *w = &self->workers[i];
        cJSON *o = cJSON_CreateObject();
        char hex[20];
        tb_dsp_id_hex(w, hex, sizeof hex);
        cJSON_AddStringToObject(o, "name", w->name);
        cJSON_AddNumberToObject(o, "threads", w->threads);
        cJSON_AddNumberToObject(o, "memory_bytes", (double)w->memory_bytes);
        cJSON_AddNumberToObject(o, "jobs_done", w->jobs_done);
        cJSON_AddNumberToObject(o, "failures", w->failures);
        cJSON_AddNumberToObject(o, "busy_seconds", w->busy_s);
        cJSON_AddBoolToObject(o, "local", w->local);
        cJSON_AddBoolToObject(o, "blocklisted", tb_dsp_blocklisted(self, w->conn));
        cJSON_AddBoolToObject(o, "alive", w->alive);
        if (w->alive && w->job >= 0) {
            cJSON_AddStringToObject(o, "job", self->jobs[w->job].label);
            cJSON_AddNumberToObject(o, "attempt", w->attempt);
        }
        cJSON_AddItemToArray(workers, o);
    }
    cJSON *jobs = cJSON_AddArrayToObject(root, "jobs");
    for (size_t i = 0; i < self->n_jobs; i++) {
        tb_job_record_t r;
        tb_dispatch_record(self, i, &r);
        cJSON *o = cJSON_CreateObject();
        char xxh[20];
        snprintf(xxh, sizeof xxh, "%016llx", (unsigned long long)r.result_xxh3);
        cJSON_AddNumberToObject(o, "index", (double)i);
        cJSON_AddStringToObject(o, "label", r.label);
        cJSON_AddStringToObject(o, "kind", r.kind);
        cJSON_AddStringToObject(o, "key", r.key_hex);
        cJSON_AddBoolToObject(o, "done", r.done);
        const s_job_t *job = &self->jobs[i];
        static const char *states[] = {"queued", "running", "done", "failed"};
        cJSON_AddStringToObject(o, "state", states[job->state]);
        cJSON_AddNumberToObject(o, "weight", job->weight);
        cJSON_AddNumberToObject(o, "cells", job->cells);
        cJSON_AddNumberToObject(o, "progress", job->progress);
        if (job->state == S_FAILED || (job->state != S_DONE && job->last_err.code != TB_OK))
            cJSON_AddStringToObject(o, "error", job->last_err.msg);
        cJSON_AddBoolToObject(o, "from_store", r.from_store);
        cJSON_AddStringToObject(o, "worker", r.worker);
        cJSON_AddNumberToObject(o, "seconds", r.seconds);
        cJSON_AddNumberToObject(o, "result_bytes", (double)r.result_bytes);
        cJSON_AddNumberToObject(o, "deadline_s", self->jobs[i].deadline_s);
        cJSON_AddStringToObject(o, "result_xxh3", r.done ? xxh : "");
        cJSON *attempts = cJSON_AddArrayToObject(o, "attempts");
        for (size_t k = 0; k < r.n_attempts; k++) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddNumberToObject(a, "attempt", r.attempts[k].attempt);
            cJSON_AddStringToObject(a, "worker", r.attempts[k].worker);
            cJSON_AddStringToObject(a, "outcome", r.attempts[k].outcome);
            bool running = strcmp(r.attempts[k].outcome, "running") == 0;
            cJSON_AddNumberToObject(a, "seconds",
                                    running ? tb_now_s() - r.attempts[k].started_s
                                            : r.attempts[k].seconds);
            cJSON_AddNumberToObject(a, "start_s", r.attempts[k].started_s - self->started_s);
            cJSON_AddItemToArray(attempts, a);
        }
        cJSON_AddItemToArray(jobs, o);
    }
    return root;
}
