/* The dispatch engine; see dispatch.h.
 *
 * One thread, one ROUTER, one event loop: receive everything waiting, reap local children, expire
 * leases, heartbeat, hand idle workers the largest eligible job, redraw the bar. Jobs and workers
 * live in arrays; a job points at its lease holder and a worker at the job it holds, and both
 * pointers change only in s_lease_grant and s_lease_end, which is what keeps the fencing simple:
 * a message about (job, attempt) from a worker counts only if that worker holds exactly that lease.
 */
#include "coordinator/dispatch.h"

#include <cJSON.h>
#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <xxhash.h>

#include "common/blob.h"
#include "common/log.h"
#include "common/pool.h"
#include "common/proto.h"
#include "common/version.h"
#include "coordinator/broker.h"
#include "coordinator/cache.h"
#include "coordinator/local_workers.h"
#include "jobs/job.h"

#define S_NAME_MAX 128
#define S_MAX_FAILED_ON 16

typedef enum { S_PENDING, S_LEASED, S_DONE, S_FAILED } s_state_t;

typedef struct {
    char *kind;
    void *spec;
    size_t spec_bytes;
    double weight;
    double cells;
    char *label;
    tb_cache_key_t key;
    char key_hex[33];
    size_t max_result_bytes;
    s_state_t state;
    void *spec_blob; /* encoded at the first dispatch, reused by every retry */
    size_t spec_blob_bytes;
    uint32_t last_attempt;
    tb_attempt_t *attempts;
    size_t n_attempts;
    size_t cap_attempts;
    char failed_on[S_MAX_FAILED_ON][S_NAME_MAX]; /* distinct workers it failed on */
    int n_failed_on;
    int failures;
    int lost;
    tb_err_t last_err;
    int64_t worker; /* the lease holder while S_LEASED */
    double progress;
    void *result;
    size_t result_bytes;
    uint64_t result_xxh3;
    bool from_store;
    char worker_name[S_NAME_MAX];
    double seconds;
} s_job_t;

typedef struct {
    unsigned char id[256];
    size_t id_bytes;
    char name[S_NAME_MAX];
    uint32_t threads;
    uint64_t memory_bytes;
    bool alive;
    double last_seen_s;
    double last_sent_s;
    int64_t job; /* the leased job, or -1 */
    uint32_t attempt;
    double lease_started_s;
    tb_transfer_t result_in;
    bool draining; /* a cancelled lease whose terminal message is still to come */
    uint64_t drain_job;
    uint32_t drain_attempt;
    int failures;
    int jobs_done;
    double busy_s;
    bool local;
} s_worker_t;

struct tb_dispatch_t {
    tb_dispatch_opts_t opts;
    s_job_t *jobs;
    size_t n_jobs;
    size_t cap_jobs;
    size_t *order; /* job indices, largest weight first */
    s_worker_t *workers;
    size_t n_workers;
    size_t cap_workers;
    char (*blocklist)[S_NAME_MAX];
    size_t n_blocklist;
    tb_broker_t *broker;
    void *sock;
    tb_local_workers_t *local;
    int local_next_name;
    int respawns;
    tb_cache_t *cache;
    tb_progress_t *bar;
    size_t n_done;
    size_t next_deliver;
    double total_weight;
    double done_weight;
    double done_cells;
    double started_s;
    int64_t failed_job; /* the job that failed the run, or -1 */
    tb_err_t fatal;     /* a run-ending error that is not a job's */
    bool has_fatal;
    double no_worker_since_s;
    double last_wait_log_s;
    bool warned_no_join;
    tb_dispatch_stats_t stats;
    bool ran;
};

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

int64_t tb_dispatch_add(tb_dispatch_t *self, const tb_job_desc_t *desc, tb_err_t *err)
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
    job->max_result_bytes = kind->max_result_bytes;
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

/* ---- records ---- */

static tb_attempt_t *s_attempt_new(s_job_t *job, const char *worker)
{
    if (job->n_attempts == job->cap_attempts) {
        size_t cap = job->cap_attempts ? 2 * job->cap_attempts : 4;
        tb_attempt_t *grown = realloc(job->attempts, cap * sizeof *grown);
        if (!grown)
            return NULL;
        job->attempts = grown;
        job->cap_attempts = cap;
    }
    tb_attempt_t *a = &job->attempts[job->n_attempts++];
    memset(a, 0, sizeof *a);
    a->attempt = ++job->last_attempt;
    snprintf(a->worker, sizeof a->worker, "%s", worker);
    snprintf(a->outcome, sizeof a->outcome, "running");
    a->started_s = tb_now_s();
    return a;
}

static tb_attempt_t *s_attempt_find(s_job_t *job, uint32_t attempt)
{
    for (size_t i = 0; i < job->n_attempts; i++)
        if (job->attempts[i].attempt == attempt)
            return &job->attempts[i];
    return NULL;
}

static void s_failed_on_add(s_job_t *job, const char *name)
{
    for (int i = 0; i < job->n_failed_on; i++)
        if (strcmp(job->failed_on[i], name) == 0)
            return;
    if (job->n_failed_on < S_MAX_FAILED_ON)
        snprintf(job->failed_on[job->n_failed_on++], S_NAME_MAX, "%s", name);
}

static bool s_failed_on(const s_job_t *job, const char *name)
{
    for (int i = 0; i < job->n_failed_on; i++)
        if (strcmp(job->failed_on[i], name) == 0)
            return true;
    return false;
}

/* ---- results ---- */

static void s_deliver(tb_dispatch_t *self)
{
    while (self->next_deliver < self->n_jobs && self->jobs[self->next_deliver].state == S_DONE) {
        s_job_t *job = &self->jobs[self->next_deliver];
        if (self->opts.on_result) {
            self->opts.on_result(self->opts.user, self->next_deliver, job->result,
                                 job->result_bytes);
            free(job->result);
            job->result = NULL;
        }
        self->next_deliver++;
    }
}

/* Job `index` is done with `data` (taken over). */
static void s_job_done(tb_dispatch_t *self, size_t index, void *data, size_t bytes,
                       const char *worker, double seconds, bool from_store)
{
    s_job_t *job = &self->jobs[index];
    job->state = S_DONE;
    job->result = data;
    job->result_bytes = bytes;
    job->result_xxh3 = XXH3_64bits(data, bytes);
    job->from_store = from_store;
    snprintf(job->worker_name, sizeof job->worker_name, "%s", worker);
    job->seconds = seconds;
    job->worker = -1;
    job->progress = 1;
    self->n_done++;
    self->done_weight += job->weight;
    self->done_cells += job->cells;
    if (from_store)
        self->stats.from_store++;
    else
        self->stats.ran++;
    s_deliver(self);
}

static void s_store(tb_dispatch_t *self, size_t index, const void *blob, size_t blob_bytes,
                    const void *raw, size_t raw_bytes)
{
    if (!self->cache)
        return;
    s_job_t *job = &self->jobs[index];
    tb_err_t err;
    int r = blob ? tb_cache_put_blob(self->cache, &job->key, blob, blob_bytes, &err)
                 : tb_cache_put(self->cache, &job->key, raw, raw_bytes, &err);
    if (r != 0)
        tb_log_warn("%s: result not stored: %s", job->label, err.msg);
    else
        tb_log_debug("%s: result stored as %s", job->label, job->key_hex);
}

static int s_load_store(tb_dispatch_t *self, tb_err_t *err)
{
    if (!self->opts.store_dir)
        return 0;
    self->cache = tb_cache_open(self->opts.store_dir, err);
    if (!self->cache)
        return -1;
    if (self->opts.fresh)
        return 0;
    for (size_t i = 0; i < self->n_jobs; i++) {
        s_job_t *job = &self->jobs[i];
        void *data;
        size_t bytes;
        tb_err_t e;
        int r = tb_cache_get(self->cache, &job->key, job->max_result_bytes, &data, &bytes, &e);
        if (r == 1) {
            s_job_done(self, i, data, bytes, "store", 0, true);
        } else if (r < 0) {
            self->stats.corrupt_store++;
            tb_log_warn("%s: stored result unusable, recomputing: %s", job->label, e.msg);
        }
    }
    if (self->stats.from_store)
        tb_log_info("%zu of %zu results reused from %s", self->stats.from_store, self->n_jobs,
                    self->opts.store_dir);
    return 0;
}

/* ---- progress ---- */

static void s_si(char *out, size_t n, double v)
{
    const char *units[] = {"", "k", "M", "G", "T"};
    int u = 0;
    while (v >= 1000 && u < 4) {
        v /= 1000;
        u++;
    }
    if (u)
        snprintf(out, n, "%.1f %s", v, units[u]);
    else
        snprintf(out, n, "%.0f", v);
}

static size_t s_alive(const tb_dispatch_t *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        n += self->workers[i].alive;
    return n;
}

static void s_progress(tb_dispatch_t *self)
{
    if (!self->bar)
        return;
    double partial = 0;
    for (size_t i = 0; i < self->n_jobs; i++)
        if (self->jobs[i].state == S_LEASED)
            partial += self->jobs[i].progress * self->jobs[i].weight;
    char cells[32], extra[160];
    s_si(cells, sizeof cells, self->done_cells);
    if (self->stats.mode[0] == 'i')
        snprintf(extra, sizeof extra, "%zu/%zu %s, %s cells", self->n_done, self->n_jobs,
                 self->opts.label, cells);
    else
        snprintf(extra, sizeof extra, "%zu/%zu %s, %s cells, %zu workers", self->n_done,
                 self->n_jobs, self->opts.label, cells, s_alive(self));
    tb_progress_update(self->bar, self->done_weight + partial, extra);
}

static void s_tick(const tb_dispatch_t *self)
{
    if (self->opts.on_tick)
        self->opts.on_tick(self->opts.user, self);
}

/* ---- in-process ---- */

typedef struct {
    tb_dispatch_t *self;
    s_job_t *job;
} s_inproc_t;

static bool s_inproc_progress(void *user, double fraction, const char *note)
{
    (void)note;
    s_inproc_t *ip = user;
    ip->job->progress = fraction;
    s_tick(ip->self);
    return ip->self->opts.interrupted && *ip->self->opts.interrupted;
}

static int s_run_in_process(tb_dispatch_t *self, tb_err_t *err)
{
    tb_pool_t *pool = tb_pool_new(self->opts.threads, err);
    if (!pool)
        return -1;
    int rc = 0;
    for (size_t k = 0; k < self->n_jobs; k++) {
        size_t i = k; /* job order: nothing runs in parallel, so order is free */
        s_job_t *job = &self->jobs[i];
        if (job->state == S_DONE)
            continue;
        if (self->opts.interrupted && *self->opts.interrupted) {
            rc = tb_err_set(err, TB_E_INTERRUPTED, "interrupted");
            break;
        }
        tb_attempt_t *a = s_attempt_new(job, "in-process");
        self->stats.attempts++;
        job->state = S_LEASED;
        s_inproc_t ip = {self, job};
        tb_job_ctx_t ctx = {.threads = tb_pool_threads(pool),
                            .pool = pool,
                            .progress = s_inproc_progress,
                            .user = &ip};
        tb_job_output_t out;
        double t0 = tb_now_s();
        tb_err_t e;
        int r = tb_job_run(job->kind, job->spec, job->spec_bytes, &ctx, &out, &e);
        double dt = tb_now_s() - t0;
        if (a) {
            a->seconds = dt;
            snprintf(a->outcome, sizeof a->outcome, "%s%s",
                     r == 0 ? "ok" : "failed: ", r == 0 ? "" : e.msg);
        }
        if (r != 0) {
            job->state = S_FAILED;
            job->last_err = e;
            self->stats.failed++;
            if (e.code == TB_E_INTERRUPTED && self->opts.interrupted && *self->opts.interrupted) {
                rc = tb_err_set(err, TB_E_INTERRUPTED, "interrupted");
            } else {
                *err = e;
                rc = tb_err_prefix(err, "%s failed", job->label);
            }
            break;
        }
        s_store(self, i, NULL, 0, out.data, out.bytes);
        s_job_done(self, i, out.data, out.bytes, "in-process", dt, false);
        s_progress(self);
        s_tick(self);
    }
    tb_pool_destroy(&pool);
    return rc;
}

/* ---- workers ---- */

static void s_id_hex(const s_worker_t *w, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < w->id_bytes && k + 3 < n && i < 8; i++, k += 2)
        snprintf(out + k, n - k, "%02x", w->id[i]);
    out[k] = '\0';
}

static void s_peer_hex(const tb_proto_frame_t *id, char *out, size_t n)
{
    size_t k = 0;
    const unsigned char *p = id->data;
    for (size_t i = 0; i < id->bytes && k + 3 < n && i < 8; i++, k += 2)
        snprintf(out + k, n - k, "%02x", p[i]);
    out[k] = '\0';
}

static s_worker_t *s_worker_by_id(tb_dispatch_t *self, const tb_proto_frame_t *id)
{
    for (size_t i = 0; i < self->n_workers; i++) {
        s_worker_t *w = &self->workers[i];
        if (w->alive && w->id_bytes == id->bytes && memcmp(w->id, id->data, id->bytes) == 0)
            return w;
    }
    return NULL;
}

static s_worker_t *s_worker_by_name(tb_dispatch_t *self, const char *name)
{
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].alive && strcmp(self->workers[i].name, name) == 0)
            return &self->workers[i];
    return NULL;
}

static int s_send(tb_dispatch_t *self, s_worker_t *w, const tb_msg_t *msg)
{
    tb_err_t err;
    if (tb_proto_send(self->sock, w->id, w->id_bytes, msg, ZMQ_DONTWAIT, &err) != 0)
        return -1;
    w->last_sent_s = tb_now_s();
    return 0;
}

static void s_send_bye(tb_dispatch_t *self, const unsigned char *id, size_t id_bytes,
                       tb_proto_bye_t code, const char *reason)
{
    tb_msg_t bye;
    tb_msg_init(&bye, TB_CMD_DISCONNECT);
    bye.code = code;
    tb_msg_set_text(bye.text, TB_PROTO_TEXT_MAX, reason);
    tb_err_t err;
    tb_proto_send(self->sock, id, id_bytes, &bye, ZMQ_DONTWAIT, &err);
}

static void s_worker_lost(tb_dispatch_t *self, s_worker_t *w, const char *why);
static void s_blocklist(tb_dispatch_t *self, s_worker_t *w);

/* Ends w's lease. `failure` counts against the job and the worker; `lost` against the job only. */
static void s_lease_end(tb_dispatch_t *self, s_worker_t *w, const char *outcome, bool failure,
                        bool lost, const tb_err_t *job_err)
{
    if (w->job < 0)
        return;
    s_job_t *job = &self->jobs[w->job];
    size_t index = (size_t)w->job;
    tb_attempt_t *a = s_attempt_find(job, w->attempt);
    if (a) {
        snprintf(a->outcome, sizeof a->outcome, "%s", outcome);
        a->seconds = tb_now_s() - w->lease_started_s;
    }
    w->busy_s += tb_now_s() - w->lease_started_s;
    w->job = -1;
    tb_transfer_reset(&w->result_in);
    job->worker = -1;
    job->progress = 0;
    job->state = S_PENDING;
    if (failure) {
        self->stats.failed++;
        job->failures++;
        s_failed_on_add(job, w->name);
        if (job_err)
            job->last_err = *job_err;
        w->failures++;
        if (job->failures >= self->opts.max_failures) {
            job->state = S_FAILED;
            self->failed_job = (int64_t)index;
        }
    }
    if (lost) {
        self->stats.lost++;
        job->lost++;
        if (job->lost >= self->opts.max_lost) {
            job->state = S_FAILED;
            tb_err_set(&job->last_err, TB_E_JOB, "lost its worker %d times (last: %s)", job->lost,
                       outcome);
            self->failed_job = (int64_t)index;
        }
    }
    if (job->state == S_PENDING)
        tb_log_info("%s attempt %u on %s: %s; it will run again", job->label, w->attempt, w->name,
                    outcome);
    if (failure && w->alive && w->failures >= self->opts.blocklist_after)
        s_blocklist(self, w);
}

static void s_blocklist(tb_dispatch_t *self, s_worker_t *w)
{
    tb_log_warn("worker %s blocklisted after %d failed attempts", w->name, w->failures);
    char(*grown)[S_NAME_MAX] = realloc(self->blocklist, (self->n_blocklist + 1) * S_NAME_MAX);
    if (grown) {
        self->blocklist = grown;
        snprintf(self->blocklist[self->n_blocklist++], S_NAME_MAX, "%s", w->name);
    }
    s_send_bye(self, w->id, w->id_bytes, TB_BYE_REFUSED, "blocklisted after repeated failures");
    s_worker_lost(self, w, "blocklisted");
}

static bool s_blocklisted(const tb_dispatch_t *self, const char *name)
{
    for (size_t i = 0; i < self->n_blocklist; i++)
        if (strcmp(self->blocklist[i], name) == 0)
            return true;
    return false;
}

static void s_worker_lost(tb_dispatch_t *self, s_worker_t *w, const char *why)
{
    if (!w->alive)
        return;
    char outcome[256];
    snprintf(outcome, sizeof outcome, "lost: %s", why);
    w->alive = false;
    if (w->job >= 0)
        s_lease_end(self, w, outcome, false, true, NULL);
    tb_transfer_reset(&w->result_in);
    tb_log_info("worker %s gone: %s", w->name, why);
}

static s_worker_t *s_worker_add(tb_dispatch_t *self, const tb_proto_frame_t *id,
                                const tb_msg_t *ready)
{
    if (self->n_workers == self->cap_workers) {
        size_t cap = self->cap_workers ? 2 * self->cap_workers : 8;
        s_worker_t *grown = realloc(self->workers, cap * sizeof *grown);
        if (!grown)
            return NULL;
        self->workers = grown;
        self->cap_workers = cap;
    }
    s_worker_t *w = &self->workers[self->n_workers++];
    memset(w, 0, sizeof *w);
    memcpy(w->id, id->data, id->bytes);
    w->id_bytes = id->bytes;
    snprintf(w->name, sizeof w->name, "%s", ready->name);
    w->threads = ready->threads;
    w->memory_bytes = ready->memory_bytes;
    w->alive = true;
    w->job = -1;
    w->last_seen_s = tb_now_s();
    w->local = tb_local_workers_find(self->local, ready->name) >= 0;
    bool seen_before = false;
    for (size_t i = 0; i + 1 < self->n_workers; i++)
        seen_before |= strcmp(self->workers[i].name, ready->name) == 0;
    if (!seen_before)
        self->stats.workers_seen++;
    size_t max = 0;
    for (size_t i = 0; i < self->n_jobs; i++)
        if (self->jobs[i].max_result_bytes > max)
            max = self->jobs[i].max_result_bytes;
    /* The blob of the largest result: zstd's bound over it plus the blob header. */
    tb_transfer_init(&w->result_in, max + max / 128 + 4096 + TB_BLOB_HEADER_BYTES);
    return w;
}

/* ---- leases ---- */

static void s_lease_grant(tb_dispatch_t *self, s_worker_t *w, size_t index)
{
    s_job_t *job = &self->jobs[index];
    tb_err_t err;
    if (!job->spec_blob && tb_blob_encode(job->spec, job->spec_bytes, 0, &job->spec_blob,
                                          &job->spec_blob_bytes, &err) != 0) {
        self->has_fatal = true;
        self->fatal = err;
        return;
    }
    tb_attempt_t *a = s_attempt_new(job, w->name);
    if (!a) {
        self->has_fatal = true;
        tb_err_set(&self->fatal, TB_E_NOMEM, "out of memory recording an attempt");
        return;
    }
    self->stats.attempts++;
    job->state = S_LEASED;
    job->worker = w - self->workers;
    job->progress = 0;
    w->job = (int64_t)index;
    w->attempt = a->attempt;
    w->lease_started_s = tb_now_s();
    pid_t pid = w->local
                    ? tb_local_workers_pid(self->local, tb_local_workers_find(self->local, w->name))
                    : 0;
    char pid_text[32] = "";
    if (pid > 0)
        snprintf(pid_text, sizeof pid_text, " (pid %ld)", (long)pid);
    tb_log(self->opts.verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
           "dispatch: job %zu (%s) attempt %u to %s%s", index, job->label, a->attempt, w->name,
           pid_text);
    uint32_t count = tb_proto_chunk_count(job->spec_blob_bytes, self->opts.chunk_bytes);
    const unsigned char *blob = job->spec_blob;
    for (uint32_t c = 0; c < count; c++) {
        tb_msg_t m;
        tb_msg_init(&m, TB_CMD_JOB);
        m.job_id = index;
        m.attempt = a->attempt;
        snprintf(m.kind, sizeof m.kind, "%s", job->kind);
        m.chunk_index = c;
        m.chunk_count = count;
        m.total_bytes = job->spec_blob_bytes;
        size_t off = (size_t)c * self->opts.chunk_bytes;
        m.chunk = blob + off;
        m.chunk_bytes = job->spec_blob_bytes - off < self->opts.chunk_bytes
                            ? job->spec_blob_bytes - off
                            : self->opts.chunk_bytes;
        if (s_send(self, w, &m) != 0) {
            char why[160];
            snprintf(why, sizeof why, "cannot send the job: %s", zmq_strerror(errno));
            s_worker_lost(self, w, why);
            return;
        }
    }
}

/* Whether job may go to w: not to a worker it failed on, unless every live worker has failed it. */
static bool s_eligible(const tb_dispatch_t *self, const s_job_t *job, const s_worker_t *w)
{
    if (!s_failed_on(job, w->name))
        return true;
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].alive && !s_failed_on(job, self->workers[i].name))
            return false;
    return true;
}

static void s_dispatch_pending(tb_dispatch_t *self)
{
    for (size_t i = 0; i < self->n_workers && !self->has_fatal; i++) {
        s_worker_t *w = &self->workers[i];
        if (!w->alive || w->job >= 0 || w->draining)
            continue;
        for (size_t k = 0; k < self->n_jobs; k++) {
            size_t j = self->order[k];
            if (self->jobs[j].state == S_PENDING && s_eligible(self, &self->jobs[j], w)) {
                s_lease_grant(self, w, j);
                break;
            }
        }
    }
}

/* ---- messages ---- */

static void s_on_ready(tb_dispatch_t *self, const tb_proto_frame_t *id, const tb_msg_t *m)
{
    char hex[20];
    s_peer_hex(id, hex, sizeof hex);
    if (id->bytes > sizeof((s_worker_t *)0)->id) {
        tb_log_warn("rejected READY from peer %s: routing id too long", hex);
        return;
    }
    if (strcmp(m->build_id, tb_build_id()) != 0) {
        char why[400];
        snprintf(why, sizeof why, "build id %s differs from the coordinator's %s", m->build_id,
                 tb_build_id());
        tb_log_warn("refused worker %s: %s", m->name, why);
        s_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED, why);
        self->stats.workers_refused++;
        return;
    }
    if (s_blocklisted(self, m->name)) {
        tb_log_warn("refused worker %s: blocklisted", m->name);
        s_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED,
                   "blocklisted after repeated failures");
        self->stats.workers_refused++;
        return;
    }
    /* A worker that reconnects comes back under a new routing id and the same name: the old
     * connection is dead, whatever its heartbeat deadline says. */
    s_worker_t *old = s_worker_by_name(self, m->name);
    if (old)
        s_worker_lost(self, old, "reconnected under a new connection");
    s_worker_t *w = s_worker_add(self, id, m);
    if (!w)
        return;
    tb_log(self->opts.verbose || !w->local ? TB_LOG_INFO : TB_LOG_DEBUG,
           "worker %s joined (%u threads, %.1f GiB)", w->name, w->threads,
           (double)w->memory_bytes / (1 << 30));
    tb_msg_t hb;
    tb_msg_init(&hb, TB_CMD_HEARTBEAT);
    s_send(self, w, &hb);
}

static void s_on_result_complete(tb_dispatch_t *self, s_worker_t *w)
{
    size_t index = (size_t)w->job;
    s_job_t *job = &self->jobs[index];
    size_t blob_bytes;
    void *blob = tb_transfer_take(&w->result_in, &blob_bytes);
    void *data;
    size_t bytes;
    tb_err_t err;
    if (tb_blob_decode(blob, blob_bytes, job->max_result_bytes, &data, &bytes, &err) != 0) {
        tb_log_warn("rejected the result of %s attempt %u from %s: %s", job->label, w->attempt,
                    w->name, err.msg);
        char outcome[256];
        snprintf(outcome, sizeof outcome, "corrupt result: %s", err.msg);
        free(blob);
        s_lease_end(self, w, outcome, true, false, &err);
        return;
    }
    double seconds = tb_now_s() - w->lease_started_s;
    tb_attempt_t *a = s_attempt_find(job, w->attempt);
    if (a) {
        snprintf(a->outcome, sizeof a->outcome, "ok");
        a->seconds = seconds;
    }
    tb_log(self->opts.verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
           "%s attempt %u done by %s in %.2f s (%zu bytes)", job->label, w->attempt, w->name,
           seconds, bytes);
    s_store(self, index, blob, blob_bytes, NULL, 0);
    free(blob);
    w->busy_s += seconds;
    w->jobs_done++;
    w->job = -1;
    s_job_done(self, index, data, bytes, w->name, seconds, false);
}

/* Whether (job, attempt) is the live lease held by w. */
static bool s_holds(const s_worker_t *w, const tb_msg_t *m)
{
    return w->job >= 0 && (uint64_t)w->job == m->job_id && w->attempt == m->attempt;
}

/* A terminal message for the attempt w was told to drop: the worker is free again. */
static bool s_drained(s_worker_t *w, const tb_msg_t *m, bool terminal)
{
    if (!w->draining || w->drain_job != m->job_id || w->drain_attempt != m->attempt)
        return false;
    if (terminal)
        w->draining = false;
    return true;
}

static void s_reject(const s_worker_t *w, const tb_msg_t *m, const char *why)
{
    tb_log_warn("rejected %s for job %llu attempt %u from %s: %s", tb_proto_cmd_name(m->cmd),
                (unsigned long long)m->job_id, m->attempt, w->name, why);
}

static void s_on_message(tb_dispatch_t *self, s_worker_t *w, const tb_msg_t *m)
{
    switch (m->cmd) {
    case TB_CMD_HEARTBEAT:
        return;
    case TB_CMD_READY:
        tb_log_warn("rejected READY from %s: already registered", w->name);
        return;
    case TB_CMD_PROGRESS:
        if (s_holds(w, m))
            self->jobs[w->job].progress = m->fraction_ppm / 1e6;
        return;
    case TB_CMD_RESULT: {
        if (!s_holds(w, m)) {
            bool last = m->chunk_index + 1 == m->chunk_count;
            if (!s_drained(w, m, last) && m->chunk_index == 0)
                s_reject(w, m, "not leased to it (a stale attempt or another worker's job)");
            return;
        }
        tb_err_t err;
        int r = tb_transfer_add(&w->result_in, m, &err);
        if (r < 0) {
            tb_log_warn("rejected a RESULT chunk from %s: %s", w->name, err.msg);
            char outcome[256];
            snprintf(outcome, sizeof outcome, "bad transfer: %s", err.msg);
            s_lease_end(self, w, outcome, true, false, &err);
        } else if (r == 1) {
            s_on_result_complete(self, w);
        }
        return;
    }
    case TB_CMD_FAIL: {
        if (!s_holds(w, m)) {
            if (!s_drained(w, m, true))
                s_reject(w, m, "not leased to it");
            return;
        }
        tb_err_t err;
        err.code = m->code > TB_E_INTERNAL || m->code == TB_OK ? TB_E_JOB : (tb_errcode_t)m->code;
        snprintf(err.msg, sizeof err.msg, "%s", m->text);
        char outcome[256];
        snprintf(outcome, sizeof outcome, "failed: %s", m->text);
        tb_log_warn("%s attempt %u failed on %s: %s", self->jobs[w->job].label, w->attempt, w->name,
                    m->text);
        s_lease_end(self, w, outcome, true, false, &err);
        return;
    }
    case TB_CMD_DISCONNECT: {
        char why[TB_PROTO_TEXT_MAX + 32];
        snprintf(why, sizeof why, "left (%s)", m->text);
        s_worker_lost(self, w, why);
        return;
    }
    default:
        tb_log_warn("rejected %s from %s: workers may not send it", tb_proto_cmd_name(m->cmd),
                    w->name);
        w->failures++;
        return;
    }
}

static void s_receive(tb_dispatch_t *self)
{
    for (int k = 0; k < 1000; k++) {
        tb_proto_rx_t rx;
        if (tb_proto_recv(self->sock, &rx, ZMQ_DONTWAIT) != 0)
            return;
        tb_proto_frame_t id = tb_proto_rx_frame(&rx, 0);
        char hex[20];
        s_peer_hex(&id, hex, sizeof hex);
        s_worker_t *w = rx.n_frames ? s_worker_by_id(self, &id) : NULL;
        if (w)
            w->last_seen_s = tb_now_s(); /* any message counts as a heartbeat */
        tb_msg_t m;
        tb_err_t err;
        if (tb_proto_rx_decode(&rx, 1, &m, &err) != 0) {
            if (w) {
                tb_log_warn("rejected a message from worker %s: %s", w->name, err.msg);
                if (++w->failures >= self->opts.blocklist_after)
                    s_blocklist(self, w);
            } else {
                tb_log_warn("rejected a message from unknown peer %s: %s", hex, err.msg);
            }
        } else if (m.cmd == TB_CMD_READY && !w) {
            s_on_ready(self, &id, &m);
        } else if (!w) {
            /* Heartbeats and progress from a peer this coordinator lost or never met (one that
             * was declared dead, or served a previous coordinator) are routine; anything else
             * from it is worth a warning. */
            bool routine = m.cmd == TB_CMD_HEARTBEAT || m.cmd == TB_CMD_PROGRESS;
            tb_log(routine ? TB_LOG_DEBUG : TB_LOG_WARN,
                   "rejected %s from unknown peer %s: not registered (READY first)",
                   tb_proto_cmd_name(m.cmd), hex);
        } else {
            s_on_message(self, w, &m);
        }
        tb_proto_rx_close(&rx);
    }
}

/* ---- housekeeping ---- */

/* Expires leases. `busy_s` is how long this turn of the loop spent on our own work (storing
 * results, the on_result callback) before getting here: time in which we were not listening does
 * not count against the workers. */
static void s_expire(tb_dispatch_t *self, double busy_s)
{
    double now = tb_now_s();
    double dead_s = self->opts.liveness * self->opts.heartbeat_ms / 1000.0;
    for (size_t i = 0; i < self->n_workers; i++) {
        s_worker_t *w = &self->workers[i];
        if (!w->alive)
            continue;
        if (now - w->last_seen_s - busy_s > dead_s) {
            char why[96];
            snprintf(why, sizeof why, "silent for %.1f s", now - w->last_seen_s);
            s_worker_lost(self, w, why);
            continue;
        }
        if (w->job >= 0 && self->opts.job_timeout_s > 0 &&
            now - w->lease_started_s > self->opts.job_timeout_s) {
            tb_msg_t cancel;
            tb_msg_init(&cancel, TB_CMD_CANCEL);
            cancel.job_id = (uint64_t)w->job;
            cancel.attempt = w->attempt;
            w->draining = true;
            w->drain_job = (uint64_t)w->job;
            w->drain_attempt = w->attempt;
            char outcome[96];
            snprintf(outcome, sizeof outcome, "timed out after %.1f s", self->opts.job_timeout_s);
            tb_err_t err;
            tb_err_set(&err, TB_E_JOB, "%s", outcome);
            s_lease_end(self, w, outcome, true, false, &err);
            if (w->alive && s_send(self, w, &cancel) != 0)
                s_worker_lost(self, w, "unreachable");
        }
    }
}

static void s_heartbeat(tb_dispatch_t *self)
{
    double now = tb_now_s(), hb_s = self->opts.heartbeat_ms / 1000.0;
    for (size_t i = 0; i < self->n_workers; i++) {
        s_worker_t *w = &self->workers[i];
        if (!w->alive || now - w->last_sent_s < hb_s)
            continue;
        tb_msg_t hb;
        tb_msg_init(&hb, TB_CMD_HEARTBEAT);
        if (s_send(self, w, &hb) != 0 && errno == EHOSTUNREACH)
            s_worker_lost(self, w, "unreachable");
    }
}

static size_t s_unfinished(const tb_dispatch_t *self)
{
    return self->n_jobs - self->n_done;
}

static int s_spawn_local(tb_dispatch_t *self, tb_err_t *err)
{
    char name[32], threads[16], hb[16], live[16], give_up[32], chunk[32];
    snprintf(chunk, sizeof chunk, "%zu",
             self->opts.chunk_bytes / 1024 ? self->opts.chunk_bytes / 1024 : 1);
    snprintf(name, sizeof name, "local-%d", ++self->local_next_name);
    snprintf(threads, sizeof threads, "%d", self->opts.threads);
    snprintf(hb, sizeof hb, "%d", self->opts.heartbeat_ms);
    snprintf(live, sizeof live, "%d", self->opts.liveness);
    /* Belt and braces beside PR_SET_PDEATHSIG: a worker alone for this long exits by itself. */
    snprintf(give_up, sizeof give_up, "%.0f",
             10 + 5.0 * self->opts.liveness * self->opts.heartbeat_ms / 1000.0);
    const char *args[] = {"--threads",
                          threads,
                          "--heartbeat-ms",
                          hb,
                          "--liveness",
                          live,
                          "--backoff-ms",
                          hb,
                          "--give-up-s",
                          give_up,
                          "--chunk-kib",
                          chunk,
                          self->opts.verbose ? "--verbose" : "--quiet",
                          NULL};
    return tb_local_workers_spawn(self->local, name, args, err) < 0 ? -1 : 0;
}

/* Reaps local workers that exited; replaces them while work remains and the budget allows. */
static void s_check_local(tb_dispatch_t *self)
{
    if (!self->local)
        return;
    int status, slot;
    while ((slot = tb_local_workers_reap(self->local, &status)) >= 0) {
        const char *name = tb_local_workers_name(self->local, slot);
        char why[128];
        if (WIFSIGNALED(status))
            snprintf(why, sizeof why, "process killed by signal %d", WTERMSIG(status));
        else
            snprintf(why, sizeof why, "process exited with status %d", WEXITSTATUS(status));
        s_worker_t *w = s_worker_by_name(self, name);
        if (w)
            s_worker_lost(self, w, why);
        else
            tb_log_warn("local worker %s: %s", name, why);
        if (s_unfinished(self) > (size_t)tb_local_workers_running(self->local) &&
            tb_local_workers_running(self->local) < self->opts.workers) {
            if (self->respawns >= self->opts.max_respawns) {
                /* Farm mode waits for farm workers; local mode has nobody else to wait for. */
                if (!self->opts.bind && tb_local_workers_running(self->local) == 0 &&
                    !self->has_fatal) {
                    self->has_fatal = true;
                    tb_err_set(&self->fatal, TB_E_JOB,
                               "every local worker has exited and %d were restarted already "
                               "(last: %s, %s)",
                               self->respawns, name, why);
                }
                continue;
            }
            self->respawns++;
            tb_err_t err;
            if (s_spawn_local(self, &err) != 0)
                tb_log_warn("cannot start a replacement worker: %s", err.msg);
        }
    }
}

static void s_check_no_workers(tb_dispatch_t *self)
{
    double now = tb_now_s();
    if (s_alive(self) > 0) {
        self->no_worker_since_s = 0;
        return;
    }
    if (self->no_worker_since_s == 0)
        self->no_worker_since_s = now;
    if (self->local && self->stats.workers_seen == 0 && !self->warned_no_join &&
        now - self->started_s > 10) {
        self->warned_no_join = true;
        tb_log_warn("no local worker has connected after 10 s; is the worker program right? "
                    "(--worker-program, $TB_WORKER_PROGRAM)");
    }
    if (self->opts.bind && now - self->last_wait_log_s > 10) {
        self->last_wait_log_s = now;
        tb_log_info("waiting for workers on %s (%zu of %zu %s left)",
                    tb_broker_endpoint(self->broker), s_unfinished(self), self->n_jobs,
                    self->opts.label);
    }
    bool starting = self->local && tb_local_workers_running(self->local) > 0;
    if (self->opts.wait_workers_s > 0 && !starting &&
        now - self->no_worker_since_s > self->opts.wait_workers_s && !self->has_fatal) {
        self->has_fatal = true;
        tb_err_set(&self->fatal, TB_E_JOB, "no worker connected for %.0f s",
                   self->opts.wait_workers_s);
    }
}

/* Tells every worker the run is over, then stops the local ones. */
static void s_teardown(tb_dispatch_t *self, bool failed)
{
    int told_local = 0;
    if (self->sock && (!self->opts.keep_workers || self->local)) {
        for (size_t i = 0; i < self->n_workers; i++) {
            s_worker_t *w = &self->workers[i];
            if (!w->alive || (self->opts.keep_workers && !w->local))
                continue;
            s_send_bye(self, w->id, w->id_bytes, TB_BYE_DONE,
                       failed ? "the run failed" : "the run is complete");
            w->alive = false;
            told_local += w->local;
        }
    }
    if (self->local) {
        /* Workers leave on DISCONNECT within a poll interval; the socket must stay open until
         * they have read it. One that never joined (still starting) cannot be told: SIGTERM. */
        bool all_told = told_local >= tb_local_workers_running(self->local);
        tb_local_workers_stop(self->local, all_told ? 2.0 : 0.2);
    }
    tb_broker_destroy(&self->broker, 200);
    self->sock = NULL;
    tb_local_workers_destroy(&self->local);
}

typedef struct {
    double weight;
    size_t index;
} s_rank_t;

static int s_compare_rank(const void *a_, const void *b_)
{
    const s_rank_t *a = a_, *b = b_;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* self->order: job indices, largest weight first, ties in job order. */
static int s_order_jobs(tb_dispatch_t *self, tb_err_t *err)
{
    size_t n = self->n_jobs ? self->n_jobs : 1;
    s_rank_t *rank = tb_calloc(n, sizeof *rank, "job order", err);
    self->order = tb_calloc(n, sizeof *self->order, "job order", err);
    if (!rank || !self->order) {
        free(rank);
        return -1;
    }
    for (size_t i = 0; i < self->n_jobs; i++) {
        rank[i].weight = self->jobs[i].weight;
        rank[i].index = i;
    }
    qsort(rank, self->n_jobs, sizeof *rank, s_compare_rank);
    for (size_t i = 0; i < self->n_jobs; i++)
        self->order[i] = rank[i].index;
    free(rank);
    return 0;
}

static int s_run_distributed(tb_dispatch_t *self, tb_err_t *err)
{
    tb_dispatch_opts_t *o = &self->opts;
    if (s_order_jobs(self, err) != 0)
        return -1;

    if (o->workers > 0) {
        self->local = tb_local_workers_new(o->worker_program, err);
        if (!self->local)
            return -1;
    }
    tb_broker_opts_t bo = {.bind = o->bind,
                           .local_endpoint =
                               self->local ? tb_local_workers_endpoint(self->local) : NULL,
                           .insecure = o->insecure,
                           .curve_cert = o->curve_cert,
                           .curve_clients = o->curve_clients};
    self->broker = tb_broker_new(&bo, err);
    if (!self->broker) {
        tb_local_workers_destroy(&self->local);
        return -1;
    }
    self->sock = tb_broker_socket(self->broker);
    if (o->bind) {
        tb_log_info("listening for workers on %s%s", tb_broker_endpoint(self->broker),
                    tb_broker_secure(self->broker) ? " (CURVE)" : "");
        if (tb_broker_secure(self->broker))
            tb_log_info("workers connect with --server-key %s", tb_broker_public_key(self->broker));
        if (o->on_listening)
            o->on_listening(o->user, tb_broker_endpoint(self->broker));
    }
    int n_local = o->workers;
    if ((size_t)n_local > s_unfinished(self))
        n_local = (int)s_unfinished(self);
    for (int i = 0; i < n_local; i++)
        if (s_spawn_local(self, err) != 0) {
            s_teardown(self, true);
            return -1;
        }
    int rc = 0;
    while (self->n_done < self->n_jobs) {
        if (o->interrupted && *o->interrupted) {
            rc = tb_err_set(err, TB_E_INTERRUPTED, "interrupted with %zu of %zu %s done",
                            self->n_done, self->n_jobs, o->label);
            break;
        }
        zmq_pollitem_t item = {self->sock, 0, ZMQ_POLLIN, 0};
        long timeout = o->heartbeat_ms / 4 < 100 ? o->heartbeat_ms / 4 : 100;
        if (zmq_poll(&item, 1, timeout < 1 ? 1 : timeout) < 0 && zmq_errno() != EINTR) {
            rc = tb_err_set(err, TB_E_IO, "zmq_poll: %s", zmq_strerror(zmq_errno()));
            break;
        }
        double turn_s = tb_now_s();
        if (item.revents & ZMQ_POLLIN)
            s_receive(self);
        s_check_local(self);
        s_expire(self, tb_now_s() - turn_s);
        s_heartbeat(self);
        if (self->failed_job < 0 && !self->has_fatal)
            s_dispatch_pending(self);
        s_check_no_workers(self);
        s_progress(self);
        s_tick(self);
        if (self->failed_job >= 0) {
            s_job_t *job = &self->jobs[self->failed_job];
            *err = job->last_err;
            if (err->code == TB_OK)
                err->code = TB_E_JOB;
            rc = tb_err_prefix(err, "%s failed %d times (on %d different workers)", job->label,
                               job->failures + job->lost, job->n_failed_on);
            break;
        }
        if (self->has_fatal) {
            *err = self->fatal;
            rc = -1;
            break;
        }
    }
    s_teardown(self, rc != 0);
    return rc;
}

int tb_dispatch_run(tb_dispatch_t *self, tb_err_t *err)
{
    if (self->ran)
        return tb_err_set(err, TB_E_INTERNAL, "tb_dispatch_run called twice");
    self->ran = true;
    self->started_s = tb_now_s();
    self->stats.jobs = self->n_jobs;
    for (size_t i = 0; i < self->n_jobs; i++)
        self->total_weight += self->jobs[i].weight;
    int rc = s_load_store(self, err);
    /* The default of one local worker per core, but never more workers than jobs left to run: a
     * worker beyond that would only sit idle holding a process (docs/distribution.md, defaults). */
    size_t left = self->n_jobs - self->n_done;
    if (!self->opts.workers_given && !self->opts.bind && left > 0 &&
        (size_t)self->opts.workers > left)
        self->opts.workers = (int)left;
    if (rc == 0 && self->n_done < self->n_jobs) {
        self->bar =
            tb_progress_new(self->opts.label, self->total_weight > 0 ? self->total_weight : 1);
        tb_progress_update(self->bar, self->done_weight, NULL);
        rc = self->opts.bind || self->opts.workers > 0 ? s_run_distributed(self, err)
                                                       : s_run_in_process(self, err);
        tb_progress_destroy(&self->bar);
    }
    self->stats.seconds = tb_now_s() - self->started_s;
    return rc;
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
    *stats = self->stats;
}

cJSON *tb_dispatch_record_json(const tb_dispatch_t *self)
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
        s_id_hex(w, hex, sizeof hex);
        cJSON_AddStringToObject(o, "name", w->name);
        cJSON_AddNumberToObject(o, "threads", w->threads);
        cJSON_AddNumberToObject(o, "memory_bytes", (double)w->memory_bytes);
        cJSON_AddNumberToObject(o, "jobs_done", w->jobs_done);
        cJSON_AddNumberToObject(o, "failures", w->failures);
        cJSON_AddNumberToObject(o, "busy_seconds", w->busy_s);
        cJSON_AddBoolToObject(o, "local", w->local);
        cJSON_AddBoolToObject(o, "blocklisted", s_blocklisted(self, w->name));
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
        cJSON_AddStringToObject(o, "result_xxh3", r.done ? xxh : "");
        cJSON *attempts = cJSON_AddArrayToObject(o, "attempts");
        for (size_t k = 0; k < r.n_attempts; k++) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddNumberToObject(a, "attempt", r.attempts[k].attempt);
            cJSON_AddStringToObject(a, "worker", r.attempts[k].worker);
            cJSON_AddStringToObject(a, "outcome", r.attempts[k].outcome);
            bool running = strcmp(r.attempts[k].outcome, "running") == 0;
            cJSON_AddNumberToObject(a, "seconds", running ? tb_now_s() - r.attempts[k].started_s
                                                          : r.attempts[k].seconds);
            cJSON_AddNumberToObject(a, "start_s", r.attempts[k].started_s - self->started_s);
            cJSON_AddItemToArray(attempts, a);
        }
        cJSON_AddItemToArray(jobs, o);
    }
    return root;
}
