/* The dispatch engine; see dispatch.h. The engine is three parts with their own tests and this
 * facade: the job table (jobtable.h: states, attempts, failure rules, delivery order), the worker
 * and lease registry (registry.h) and the event loop (loop.h), with the helpers' work (jobwork.h),
 * their threads (tasks.h) and the hand-over to the caller (delivery.h). Here: the options, the
 * batches, the caller's side of a run (callbacks, progress bar), the in-process runner, and the
 * records.
 *
 * Locking: `mu` guards the job table and the registry; the loop holds it for each turn, the API
 * functions while they read or change them. Callbacks run on the caller's thread without it.
 */
#include "coordinator/farm/dispatch.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/log.h"
#include "common/pool.h"
#include "common/version.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/delivery.h"
#include "coordinator/farm/jobtable.h"
#include "coordinator/farm/jobwork.h"
#include "coordinator/farm/loop.h"
#include "coordinator/farm/proto.h"
#include "coordinator/farm/registry.h"

#define S_TICK_S 0.1

struct tb_dispatch_t {
    tb_dispatch_opts_t opts;
    pthread_mutex_t mu;
    tb_jobtable_t *jobs; /* the current batch */
    tb_loop_t *loop;     /* local and farm modes */
    tb_delivery_t *delivery;
    tb_cache_t *cache;
    tb_dispatch_stats_t stats;
    uint64_t job_base; /* the wire id of job 0 of this batch */
    uint64_t batch_id;
    bool ran;
    bool failed;
    bool batch_fresh;
    double started_s;
    tb_progress_t *bar;
    tb_attempt_t *scratch; /* tb_dispatch_record's attempts */
    size_t cap_scratch;
};

static int s_ncores(void)
{
    return tb_pool_default_threads();
}

static bool s_distributed(const tb_dispatch_t *self)
{
    return self->opts.bind || self->opts.workers > 0;
}

/* The caller finished with a result: the loop may start another job at once. */
static void s_wake_loop(void *user)
{
    tb_dispatch_t *self = user;
    if (self->loop)
        tb_loop_wake(self->loop);
}

static tb_jobtable_t *s_new_table(const tb_dispatch_t *self, bool unordered, tb_err_t *err)
{
    tb_jobtable_opts_t jo = {.max_failures = self->opts.max_failures,
                             .max_lost = self->opts.max_lost,
                             .unordered = unordered};
    return tb_jobtable_new(&jo, err);
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
    if (o->max_held == 0)
        o->max_held = 4;
    if (o->max_held_bytes == 0)
        o->max_held_bytes = (size_t)512 << 20;
    if (o->large_result_bytes == 0)
        o->large_result_bytes = (size_t)64 << 20;
    if (o->helper_threads <= 0)
        o->helper_threads = 2;
    if (o->verify == TB_VERIFY_AUTO) {
        /* a local bake's workers are this coordinator's own processes on a private socket */
        o->verify = o->bind ? TB_VERIFY_SHARE : TB_VERIFY_OFF;
        o->verify_share = TB_VERIFY_FARM_SHARE;
    }
    if (o->verify == TB_VERIFY_ALL)
        o->verify_share = 1;
    if (o->verify == TB_VERIFY_OFF)
        o->verify_share = 0;
    if (o->verify_first <= 0)
        o->verify_first = 1;
    if (!o->label)
        o->label = "jobs";
    pthread_mutex_init(&self->mu, NULL);
    self->stats.mode = o->bind ? "farm" : o->workers == 0 ? "in-process" : "local";
    self->jobs = s_new_table(self, o->unordered, err);
    self->delivery = tb_delivery_new(s_wake_loop, self, err);
    if (s_distributed(self))
        self->loop = tb_loop_new(&self->opts, &self->mu, err);
    if (!self->jobs || !self->delivery || (s_distributed(self) && !self->loop)) {
        tb_dispatch_destroy(&self);
        return NULL;
    }
    return self;
}

void tb_dispatch_destroy(tb_dispatch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_dispatch_t *self = *self_p;
    tb_dispatch_finish(self, true);
    tb_loop_destroy(&self->loop);
    tb_jobtable_destroy(&self->jobs);
    tb_delivery_destroy(&self->delivery);
    tb_cache_destroy(&self->cache);
    tb_progress_destroy(&self->bar);
    free(self->scratch);
    pthread_mutex_destroy(&self->mu);
    free(self);
    *self_p = NULL;
}

int64_t tb_dispatch_add(tb_dispatch_t *self, const tb_job_desc_t *desc, tb_err_t *err)
{
    double deadline = self->opts.job_timeout_s > 0 ? self->opts.job_timeout_s
                      : desc->deadline_s > 0       ? desc->deadline_s
                                                   : 0;
    /* No lock: between batches the loop never reads the job table, and the caller adds jobs on its
     * own thread; an eager spec's hash and key are made here, not on the loop. */
    int64_t r = -1;
    if (self->ran)
        tb_err_set(err, TB_E_INTERNAL,
                   "tb_dispatch_add after tb_dispatch_run (tb_dispatch_next_batch first)");
    else
        r = tb_jobtable_add(self->jobs, desc->kind, desc->spec, desc->spec_bytes, desc->make_spec,
                            desc->spec_user, desc->label, desc->weight, desc->cells, deadline,
                            desc->input_hashes, desc->n_inputs, err);
    if (r >= 0 && desc->memory_bytes > 0)
        tb_jobtable_at(self->jobs, (size_t)r)->memory_bound = tb_peak_pack_up(
            desc->memory_bytes >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)desc->memory_bytes);
    return r;
}

size_t tb_dispatch_count(const tb_dispatch_t *self)
{
    return tb_jobtable_count(self->jobs);
}

int tb_dispatch_next_batch(tb_dispatch_t *self, const tb_dispatch_batch_t *batch, tb_err_t *err)
{
    if (!self->opts.batches)
        return tb_err_set(err, TB_E_INTERNAL,
                          "tb_dispatch_next_batch on an engine without "
                          "batches");
    pthread_mutex_lock(&self->mu);
    size_t n = tb_jobtable_count(self->jobs), done = tb_jobtable_done_count(self->jobs);
    if (n > 0 && (!self->ran || done < n || self->failed)) {
        pthread_mutex_unlock(&self->mu);
        return tb_err_set(err, TB_E_INTERNAL,
                          "tb_dispatch_next_batch: the %s batch has not "
                          "finished (%zu of %zu jobs done)",
                          self->opts.label, done, n);
    }
    tb_jobtable_t *fresh = s_new_table(self, batch && batch->unordered, err);
    if (!fresh) {
        pthread_mutex_unlock(&self->mu);
        return -1;
    }
    tb_jobtable_destroy(&self->jobs);
    self->jobs = fresh;
    self->job_base += n;
    const char *mode = self->stats.mode;
    memset(&self->stats, 0, sizeof self->stats);
    self->stats.mode = mode;
    self->ran = false;
    self->started_s = 0;
    self->opts.label = batch && batch->label ? batch->label : "jobs";
    self->opts.on_result = batch ? batch->on_result : NULL;
    self->opts.on_take = batch ? batch->on_take : NULL;
    self->opts.on_tick = batch ? batch->on_tick : NULL;
    self->opts.user = batch ? batch->user : NULL;
    self->opts.unordered = batch && batch->unordered;
    self->batch_fresh = batch && batch->fresh;
    pthread_mutex_unlock(&self->mu);
    return 0;
}

void tb_dispatch_finish(tb_dispatch_t *self, bool failed)
{
    if (!self || !self->loop)
        return;
    tb_loop_close(self->loop, failed);
}

/* ---- the caller's side of a run ---- */

static bool s_has_callback(const tb_dispatch_t *self)
{
    return self->opts.on_result || self->opts.on_take;
}

/* Hands one result to the caller's callback; frees it unless on_take took it. */
static void s_call_back(tb_dispatch_t *self, size_t index, tb_result_t *r)
{
    if (!r)
        return;
    if (self->opts.on_take) {
        self->opts.on_take(self->opts.user, index, r);
        return;
    }
    if (self->opts.on_result)
        self->opts.on_result(self->opts.user, index, tb_result_data(r), tb_result_bytes(r));
    tb_result_destroy(&r);
}

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

/* The progress bar and on_tick, on the caller's thread. */
static void s_tick(tb_dispatch_t *self)
{
    if (self->opts.on_tick)
        self->opts.on_tick(self->opts.user, self);
    if (!self->bar)
        return;
    pthread_mutex_lock(&self->mu);
    double partial = 0;
    size_t n = tb_jobtable_count(self->jobs);
    for (size_t i = 0; i < n; i++) {
        const tb_jobrec_t *job = tb_jobtable_at(self->jobs, i);
        if (job->state == TB_JOB_LEASED)
            partial += job->progress * job->weight;
    }
    double done_w = tb_jobtable_done_weight(self->jobs);
    char cells[32], extra[160];
    s_si(cells, sizeof cells, tb_jobtable_done_cells(self->jobs));
    size_t done = tb_jobtable_done_count(self->jobs);
    size_t alive = self->loop ? tb_registry_alive(tb_loop_registry(self->loop)) : 0;
    pthread_mutex_unlock(&self->mu);
    if (!self->loop)
        snprintf(extra, sizeof extra, "%zu/%zu %s, %s cells", done, n, self->opts.label, cells);
    else
        snprintf(extra, sizeof extra, "%zu/%zu %s, %s cells, %zu workers", done, n,
                 self->opts.label, cells, alive);
    tb_progress_update(self->bar, done_w + partial, extra);
}

static int s_run_distributed(tb_dispatch_t *self, tb_err_t *err)
{
    if (!tb_loop_is_open(self->loop) && tb_loop_open(self->loop, err) != 0)
        return -1;
    tb_delivery_reset(self->delivery);
    tb_loop_batch_t b = {.jobs = self->jobs,
                         .delivery = self->delivery,
                         .keep = !s_has_callback(self),
                         .job_base = self->job_base,
                         .id = ++self->batch_id,
                         .fresh = self->opts.fresh || self->batch_fresh,
                         .label = self->opts.label,
                         .cache = self->cache,
                         .stats = &self->stats};
    pthread_mutex_lock(&self->mu);
    tb_loop_begin(self->loop, &b);
    pthread_mutex_unlock(&self->mu);
    int rc = 0;
    double last_tick = 0;
    for (;;) {
        size_t index;
        tb_result_t *r = NULL;
        int closed_rc = 0;
        tb_delivery_event_t ev =
            tb_delivery_wait(self->delivery, S_TICK_S, &index, &r, &closed_rc, err);
        if (ev == TB_DELIVERY_CLOSED) {
            rc = closed_rc;
            break;
        }
        if (ev == TB_DELIVERY_ITEM) {
            size_t bytes = r && !tb_result_mapped(r) ? tb_result_bytes(r) : 0;
            s_call_back(self, index, r);
            tb_delivery_finished(self->delivery, bytes);
        }
        if (tb_now_s() - last_tick >= S_TICK_S) {
            last_tick = tb_now_s();
            s_tick(self);
        }
    }
    pthread_mutex_lock(&self->mu);
    tb_loop_end(self->loop);
    pthread_mutex_unlock(&self->mu);
    return rc;
}

/* ---- in-process ---- */

typedef struct {
    tb_dispatch_t *self;
    tb_jobrec_t *job;
} s_inproc_t;

static bool s_inproc_progress(void *user, double fraction, const char *note)
{
    (void)note;
    s_inproc_t *ip = user;
    tb_jobrec_progress(ip->job, fraction);
    if (ip->self->opts.on_tick)
        ip->self->opts.on_tick(ip->self->opts.user, ip->self);
    return ip->self->opts.interrupted && *ip->self->opts.interrupted;
}

/* Makes (lazy), looks up and, when it is not stored, runs job i on this thread. 1 when it is done
 * (*result set), 0 never, -1 with *err. */
static int s_inproc_job(tb_dispatch_t *self, tb_pool_t *pool, size_t i, tb_err_t *err)
{
    tb_jobrec_t *job = tb_jobtable_at(self->jobs, i);
    tb_prep_t p = {.index = i,
                   .kind = job->kind,
                   .make_spec = job->lazy ? job->make_spec : NULL,
                   .spec_user = job->spec_user,
                   .inputs = job->inputs,
                   .n_inputs = job->n_inputs,
                   .spec = job->spec,
                   .spec_bytes = job->spec_bytes,
                   .has_key = job->has_key,
                   .key = job->key,
                   .max_result = job->max_result_bytes,
                   .cache = self->cache,
                   .lookup = self->cache && !self->opts.fresh && !self->batch_fresh,
                   .large_bytes = self->opts.large_result_bytes};
    tb_prep_run(&p.task);
    if (p.rc != 0) {
        *err = p.err;
        return tb_err_prefix(err, "%s", job->label);
    }
    pthread_mutex_lock(&self->mu);
    int ir = p.made ? tb_jobtable_install_spec(self->jobs, i, &p.made, p.made_bytes, p.spec_xxh3,
                                               &p.key, p.max_result, err)
                    : 0;
    pthread_mutex_unlock(&self->mu);
    if (ir != 0)
        return -1;
    if (p.found < 0) {
        self->stats.corrupt_store++;
        tb_log_warn("%s: stored result unusable, recomputing: %s", job->label, p.store_err.msg);
    }
    if (p.found == 1) {
        self->stats.from_store++;
        self->stats.mapped += tb_result_mapped(p.result);
        pthread_mutex_lock(&self->mu);
        tb_jobtable_done(self->jobs, i, &p.result, p.result_xxh3, -1, 0, true);
        tb_jobtable_drop_spec(self->jobs, i);
        pthread_mutex_unlock(&self->mu);
        return 1;
    }
    uint32_t attempt = tb_jobtable_attempt_begin(self->jobs, i, -1);
    self->stats.attempts++;
    job->state = TB_JOB_LEASED;
    job->progress_t0_s = 0;
    s_inproc_t ip = {self, job};
    tb_job_ctx_t ctx = {
        .threads = tb_pool_threads(pool), .pool = pool, .progress = s_inproc_progress, .user = &ip};
    tb_job_output_t out;
    double t0 = tb_now_s();
    tb_err_t e;
    int r = tb_job_run(job->kind->name, job->spec, job->spec_bytes, &ctx, &out, &e);
    double dt = tb_now_s() - t0;
    if (r != 0) {
        char outcome[TB_ERR_MSG_MAX + 16];
        snprintf(outcome, sizeof outcome, "failed: %s", e.msg);
        tb_jobtable_attempt_end(self->jobs, i, attempt, TB_OUT_FAILED, outcome, dt);
        job->state = TB_JOB_FAILED;
        free(job->error);
        job->error = malloc(strlen(e.msg) + 1);
        if (job->error)
            memcpy(job->error, e.msg, strlen(e.msg) + 1);
        job->error_code = (uint8_t)e.code;
        self->stats.failed++;
        if (e.code == TB_E_INTERRUPTED && self->opts.interrupted && *self->opts.interrupted)
            return tb_err_set(err, TB_E_INTERRUPTED, "interrupted");
        *err = e;
        return tb_err_prefix(err, "%s failed", job->label);
    }
    /* the same check as a worker's result, before it is stored or used: an answer of this
     * process's that fails it is a bug, and must not land either */
    if (tb_job_check_result(job->kind, job->spec, job->spec_bytes, out.data, out.bytes, &e) != 0) {
        char outcome[TB_ERR_MSG_MAX + 16];
        snprintf(outcome, sizeof outcome, "wrong result: %s", e.msg);
        tb_jobtable_attempt_end(self->jobs, i, attempt, TB_OUT_WRONG, outcome, dt);
        job->state = TB_JOB_FAILED;
        self->stats.failed++;
        free(out.data);
        *err = e;
        err->code = TB_E_INTERNAL;
        return tb_err_prefix(err, "%s: its in-process result fails its check", job->label);
    }
    tb_jobtable_attempt_end(self->jobs, i, attempt, TB_OUT_OK, NULL, dt);
    if (self->cache) {
        tb_err_t se;
        if (tb_cache_put(self->cache, &job->key, out.data, out.bytes, &se) != 0)
            tb_log_warn("%s: result not stored: %s", job->label, se.msg);
        else
            tb_log_debug("%s: result stored", job->label);
    }
    uint64_t xxh3 = XXH3_64bits(out.data, out.bytes);
    tb_result_t *res = tb_result_from_memory(&out.data, out.bytes, err);
    if (!res)
        return -1;
    tb_attempt_rec_t *a = tb_jobtable_attempt(self->jobs, i, attempt);
    if (a)
        a->result_xxh3 = xxh3;
    self->stats.ran++;
    pthread_mutex_lock(&self->mu);
    tb_jobtable_done(self->jobs, i, &res, xxh3, -1, dt, false);
    tb_jobtable_drop_spec(self->jobs, i);
    pthread_mutex_unlock(&self->mu);
    return 1;
}

static int s_run_in_process(tb_dispatch_t *self, tb_err_t *err)
{
    tb_pool_t *pool = tb_pool_new(self->opts.threads, err);
    if (!pool)
        return -1;
    int rc = 0;
    bool keep = !s_has_callback(self);
    size_t n = tb_jobtable_count(self->jobs);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (self->opts.interrupted && *self->opts.interrupted) {
            rc = tb_err_set(err, TB_E_INTERRUPTED, "interrupted");
            break;
        }
        if (s_inproc_job(self, pool, i, err) < 0) {
            rc = -1;
            self->failed = true;
            break;
        }
        tb_result_t *r;
        int64_t index;
        while ((index = tb_jobtable_next_delivery(self->jobs, keep, &r)) >= 0)
            s_call_back(self, (size_t)index, r);
        s_tick(self);
    }
    tb_pool_destroy(&pool);
    return rc;
}

int tb_dispatch_run(tb_dispatch_t *self, tb_err_t *err)
{
    if (self->ran)
        return tb_err_set(err, TB_E_INTERNAL,
                          self->opts.batches ? "tb_dispatch_run called twice in one batch "
                                               "(tb_dispatch_next_batch first)"
                                             : "tb_dispatch_run called twice");
    pthread_mutex_lock(&self->mu);
    self->ran = true;
    self->started_s = tb_now_s();
    self->stats.jobs = tb_jobtable_count(self->jobs);
    int rc = tb_jobtable_seal(self->jobs, err);
    pthread_mutex_unlock(&self->mu);
    if (rc == 0 && self->opts.store_dir && !self->cache) {
        self->cache = tb_cache_open(self->opts.store_dir, err);
        rc = self->cache ? 0 : -1;
    }
    size_t n = tb_jobtable_count(self->jobs);
    if (rc == 0 && n > 0) {
        self->bar = tb_progress_new(self->opts.label, tb_jobtable_total_weight(self->jobs) > 0
                                                          ? tb_jobtable_total_weight(self->jobs)
                                                          : 1);
        rc = s_distributed(self) ? s_run_distributed(self, err) : s_run_in_process(self, err);
        tb_progress_destroy(&self->bar);
    }
    if (self->stats.from_store)
        tb_log_info("%zu of %zu results reused from %s", self->stats.from_store, n,
                    self->opts.store_dir);
    self->stats.seconds = tb_now_s() - self->started_s;
    if (rc != 0)
        self->failed = true;
    /* with batches the workers stay for the next one, kept by the loop; a failed batch dismisses
     * them (docs/distribution.md) */
    if (self->loop && (rc != 0 || !self->opts.batches))
        tb_loop_close(self->loop, rc != 0);
    return rc;
}

/* ---- accessors ---- */

const void *tb_dispatch_result(const tb_dispatch_t *self, size_t i, size_t *bytes)
{
    const tb_jobrec_t *job = tb_jobtable_at(self->jobs, i);
    if (!job || job->state != TB_JOB_DONE || !job->result) {
        *bytes = 0;
        return NULL;
    }
    *bytes = tb_result_bytes(job->result);
    return tb_result_data(job->result);
}

tb_result_t *tb_dispatch_take_result(tb_dispatch_t *self, size_t i)
{
    tb_jobrec_t *job = tb_jobtable_at(self->jobs, i);
    if (!job || job->state != TB_JOB_DONE)
        return NULL;
    tb_result_t *r = job->result;
    job->result = NULL;
    return r;
}

static const char *s_name_of(void *user, int32_t worker)
{
    const tb_dispatch_t *self = user;
    return self->loop ? tb_registry_name(tb_loop_registry(self->loop), worker) : "in-process";
}

void tb_dispatch_record(const tb_dispatch_t *self_, size_t i, tb_job_record_t *rec)
{
    tb_dispatch_t *self = (tb_dispatch_t *)self_;
    memset(rec, 0, sizeof *rec);
    pthread_mutex_lock(&self->mu);
    const tb_jobrec_t *job = tb_jobtable_at(self->jobs, i);
    if (!job) {
        pthread_mutex_unlock(&self->mu);
        return;
    }
    rec->label = job->label;
    rec->kind = job->kind->name;
    if (job->has_key)
        tb_cache_key_hex(&job->key, rec->key_hex);
    rec->done = job->state == TB_JOB_DONE;
    rec->from_store = job->from_store;
    rec->worker = !rec->done        ? ""
                  : job->from_store ? "store"
                  : job->worker < 0 ? "in-process"
                                    : s_name_of(self, job->worker);
    rec->seconds = job->seconds;
    rec->result_bytes = job->result_bytes;
    rec->result_xxh3 = job->result_xxh3;
    if (job->n_attempts > self->cap_scratch) {
        tb_attempt_t *grown = realloc(self->scratch, job->n_attempts * sizeof *grown);
        if (grown) {
            self->scratch = grown;
            self->cap_scratch = job->n_attempts;
        }
    }
    size_t n = job->n_attempts <= self->cap_scratch ? job->n_attempts : self->cap_scratch;
    for (size_t k = 0; k < n; k++) {
        const tb_attempt_rec_t *a = &job->attempts[k];
        tb_attempt_t *o = &self->scratch[k];
        memset(o, 0, sizeof *o);
        o->attempt = a->attempt;
        snprintf(o->worker, sizeof o->worker, "%s",
                 a->worker < 0 ? "in-process" : s_name_of(self, a->worker));
        snprintf(o->outcome, sizeof o->outcome, "%s", tb_jobtable_outcome_text(a));
        o->seconds = a->seconds;
        o->started_s = a->started_s;
    }
    rec->n_attempts = n;
    rec->attempts = self->scratch;
    pthread_mutex_unlock(&self->mu);
}

void tb_dispatch_stats(const tb_dispatch_t *self, tb_dispatch_stats_t *stats)
{
    pthread_mutex_t *mu = (pthread_mutex_t *)&self->mu;
    pthread_mutex_lock(mu);
    *stats = self->stats;
    if (self->loop) {
        stats->workers_seen = tb_registry_names_seen(tb_loop_registry(self->loop));
        stats->local_started = (size_t)tb_loop_local_started(self->loop);
    }
    pthread_mutex_unlock(mu);
}

cJSON *tb_dispatch_record_json(const tb_dispatch_t *self_)
{
    tb_dispatch_t *self = (tb_dispatch_t *)self_;
    tb_dispatch_stats_t s;
    tb_dispatch_stats(self, &s);
    pthread_mutex_lock(&self->mu);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "mode", s.mode);
    bool live = self->started_s > 0 && s.seconds == 0;
    cJSON_AddNumberToObject(root, "seconds", live ? tb_now_s() - self->started_s : s.seconds);
    /* the caller's own time with each result (a tile's files written): the coordinator's share of
     * the cost model (report/progress.h) */
    size_t finished = 0, outstanding = 0;
    double busy_s = 0;
    tb_delivery_service(self->delivery, &finished, &busy_s, &outstanding);
    cJSON *co = cJSON_AddObjectToObject(root, "coordinator");
    cJSON_AddNumberToObject(co, "results", (double)finished);
    cJSON_AddNumberToObject(co, "seconds", busy_s);
    cJSON_AddNumberToObject(co, "outstanding", (double)outstanding);
    /* the largest peak memory a worker reported for an attempt of this dispatch (RESULT, FAIL),
     * and the peaks against their jobs' stated bounds */
    tb_jobtable_peaks_t pk;
    tb_jobtable_peaks(self->jobs, &pk);
    if (pk.peak_job) {
        cJSON *wp = cJSON_AddObjectToObject(root, "worker_peak");
        cJSON_AddNumberToObject(wp, "bytes", (double)pk.peak);
        cJSON_AddStringToObject(wp, "job", pk.peak_job->label);
        cJSON_AddStringToObject(wp, "worker",
                                pk.peak_at->worker < 0 ? "in-process"
                                                       : s_name_of(self, pk.peak_at->worker));
        if (pk.peak_job->memory_bound)
            cJSON_AddNumberToObject(wp, "bound_bytes",
                                    (double)tb_peak_unpack(pk.peak_job->memory_bound));
        else
            cJSON_AddNullToObject(wp, "bound_bytes");
        cJSON_AddNumberToObject(wp, "attempts", (double)pk.measured);
        cJSON_AddNumberToObject(wp, "bounded", (double)pk.bounded);
        cJSON_AddNumberToObject(wp, "over_bound", (double)pk.over);
        if (pk.worst_job) {
            cJSON *wr = cJSON_AddObjectToObject(wp, "closest");
            cJSON_AddStringToObject(wr, "job", pk.worst_job->label);
            cJSON_AddNumberToObject(wr, "bytes", (double)tb_peak_unpack(pk.worst_at->peak));
            cJSON_AddNumberToObject(wr, "bound_bytes",
                                    (double)tb_peak_unpack(pk.worst_job->memory_bound));
            cJSON_AddNumberToObject(wr, "ratio", pk.worst_ratio);
        } else {
            cJSON_AddNullToObject(wp, "closest");
        }
    } else {
        cJSON_AddNullToObject(root, "worker_peak");
    }
    cJSON *st = cJSON_AddObjectToObject(root, "stats");
    cJSON_AddNumberToObject(st, "jobs", (double)s.jobs);
    cJSON_AddNumberToObject(st, "from_store", (double)s.from_store);
    cJSON_AddNumberToObject(st, "ran", (double)s.ran);
    cJSON_AddNumberToObject(st, "attempts", (double)s.attempts);
    cJSON_AddNumberToObject(st, "lost", (double)s.lost);
    cJSON_AddNumberToObject(st, "failed", (double)s.failed);
    cJSON_AddNumberToObject(st, "corrupt_store", (double)s.corrupt_store);
    cJSON_AddNumberToObject(st, "workers_seen", (double)s.workers_seen);
    cJSON_AddNumberToObject(st, "workers_refused", (double)s.workers_refused);
    cJSON_AddNumberToObject(st, "held_peak", (double)s.held_peak);
    cJSON_AddNumberToObject(st, "order_peak", (double)s.order_peak);
    cJSON_AddNumberToObject(st, "specs_peak", (double)s.specs_peak);
    cJSON_AddNumberToObject(st, "mapped", (double)s.mapped);
    cJSON_AddNumberToObject(st, "verified", (double)s.verified);
    cJSON_AddNumberToObject(st, "verify_attempts", (double)s.verify_attempts);
    cJSON_AddNumberToObject(st, "disagreements", (double)s.disagreements);
    cJSON_AddNumberToObject(st, "tiebreaks", (double)s.tiebreaks);
    cJSON *ver = cJSON_AddObjectToObject(root, "verify");
    cJSON_AddStringToObject(ver, "mode",
                            self->opts.verify == TB_VERIFY_OFF   ? "off"
                            : self->opts.verify == TB_VERIFY_ALL ? "all"
                                                                 : "share");
    cJSON_AddNumberToObject(ver, "share", self->opts.verify_share);
    cJSON_AddNumberToObject(ver, "first", self->opts.verify_first);
    /* the workers quarantined for this bake (outside a majority), by name */
    cJSON *quar = cJSON_AddArrayToObject(root, "quarantined");
    const tb_registry_t *reg = self->loop ? tb_loop_registry(self->loop) : NULL;
    cJSON *workers = reg ? tb_registry_json(reg) : cJSON_CreateArray();
    for (size_t i = 0; reg && i < tb_registry_count(reg); i++)
        if (tb_registry_at(reg, i)->trust == TB_TRUST_QUARANTINED)
            cJSON_AddItemToArray(quar, cJSON_CreateString(tb_registry_at(reg, i)->name));
    for (size_t i = 0; reg && i < tb_registry_count(reg); i++) {
        const tb_worker_t *w = tb_registry_at(reg, i);
        const tb_jobrec_t *job = w->job >= 0 ? tb_jobtable_at(self->jobs, (size_t)w->job) : NULL;
        if (w->alive && job) {
            cJSON *o = cJSON_GetArrayItem(workers, (int)i);
            cJSON_AddStringToObject(o, "job", job->label);
            cJSON_AddNumberToObject(o, "attempt", w->attempt);
        }
    }
    cJSON_AddItemToObject(root, "workers", workers);
    cJSON *jobs = cJSON_AddArrayToObject(root, "jobs");
    for (size_t i = 0; i < tb_jobtable_count(self->jobs); i++)
        cJSON_AddItemToArray(jobs,
                             tb_jobtable_job_json(self->jobs, i, s_name_of, self, self->started_s));
    pthread_mutex_unlock(&self->mu);
    return root;
}
