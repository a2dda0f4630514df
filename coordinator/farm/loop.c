/* The dispatch engine's event loop; see loop.h.
 *
 * One thread, one ROUTER. Jobs and workers point at each other only through a lease: a job holds
 * its lease holder's registry index, a worker the index of the job it holds, and both change only
 * in s_grant and s_lease_end, which keeps the fencing simple: a message about (job, attempt) from a
 * worker counts only if that worker holds exactly that lease. A job's result, once its last chunk
 * is in, is no longer the worker's business: the worker is free at once and a helper thread
 * decodes, checks and stores the result while the loop goes on.
 */
#include "coordinator/farm/loop.h"

#include <cJSON.h>
#include <czmq.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/blob.h"
#include "common/log.h"
#include "common/version.h"
#include "coordinator/farm/broker.h"
#include "coordinator/farm/jobwork.h"
#include "coordinator/farm/local_workers.h"
#include "coordinator/farm/tasks.h"

/* A turn reads at most this long before it does its housekeeping (heartbeats, leases). */
#define S_RECEIVE_BUDGET_S 0.05
/* A result in hand waits this long for a second worker before the coordinator runs the job
 * itself to verify it (a farm whose other workers have not joined yet, or a farm of one). Two
 * results that differ with no third worker are decided at once. */
#define S_VERIFY_WAIT_S 10.0
/* Default deadlines of the jobs that have none (s_deadline). */
#define S_DEADLINE_FLOOR_S 600.0
#define S_DEADLINE_FACTOR 20.0
#define S_MAX_KINDS 16
/* Spec chunks sent to one worker a turn. */
#define S_SPEC_CHUNKS_A_TURN 4

struct tb_loop_t {
    const tb_dispatch_opts_t *opts;
    pthread_mutex_t *mu;
    tb_registry_t *reg;
    tb_tasks_t *tasks;
    tb_broker_t *broker;
    void *sock;
    tb_local_workers_t *local;
    int local_next_name;
    int local_started; /* processes started, over the engine's life */
    bool open;
    pthread_t thread;
    bool thread_running;
    atomic_bool stop;
    char scratch_dir[4200]; /* large results without a store */
    /* the batch, while one runs */
    tb_loop_batch_t b;
    bool running;
    bool over;        /* the batch ended; waiting for tb_loop_end */
    size_t pipeline;  /* jobs started (prepping, ready, leased, verifying) */
    size_t order_lo;  /* the dispatch order before it is all done */
    size_t prep_next; /* the next job of the order to prepare */
    /* results on a helper thread: a worker's being decoded and checked (verifying), and store
     * lookups that may bring one (looking): they count against max_held before they land */
    size_t verifying, verifying_bytes, looking;
    /* verification by replication: results in hand waiting for another worker's (count, bytes in
     * memory; they count against max_held too), and the seed that picks the share verified */
    size_t votes_held, votes_bytes;
    uint64_t verify_seed;
    /* each kind's longest successful attempt, for the default deadlines */
    struct {
        const tb_job_kind_t *kind;
        double max_s;
    } costs[S_MAX_KINDS];
    size_t n_costs;
    bool has_fatal;
    tb_err_t fatal;
    double started_s;
    double no_worker_since_s;
    double last_wait_log_s;
    bool warned_no_join;
    uint32_t *live; /* the live workers' connection numbers, this turn */
    size_t n_live, cap_live;
    tb_warn_limit_t warn_unknown; /* peers that never said READY count as one */
    /* joins and departures: S_PEER_LINES lines a window, then counted (s_peer_event) */
    double peer_window_s;
    int peer_lines;
    long peer_joined, peer_left;
};

#define S_PEER_WINDOW_S 10.0
#define S_PEER_LINES 10

/* ---- small things ---- */

static void s_peer_hex(const void *id, size_t bytes, char *out, size_t n)
{
    size_t k = 0;
    const unsigned char *p = id;
    for (size_t i = 0; i < bytes && k + 3 < n && i < 8; i++, k += 2)
        snprintf(out + k, n - k, "%02x", p[i]);
    out[k] = '\0';
}

static uint64_t s_wire_id(const tb_loop_t *self, size_t index)
{
    return self->b.job_base + index;
}

static int s_send(tb_loop_t *self, tb_worker_t *w, const tb_msg_t *msg)
{
    tb_err_t err;
    if (tb_proto_send(self->sock, w->id, w->id_bytes, msg, ZMQ_DONTWAIT, &err) != 0)
        return -1;
    w->last_sent_s = tb_now_s();
    return 0;
}

static void s_send_bye(tb_loop_t *self, const unsigned char *id, size_t id_bytes,
                       tb_proto_bye_t code, const char *reason)
{
    tb_msg_t bye;
    tb_msg_init(&bye, TB_CMD_DISCONNECT);
    bye.code = code;
    tb_msg_set_text(bye.text, TB_PROTO_TEXT_MAX, reason);
    tb_err_t err;
    tb_proto_send(self->sock, id, id_bytes, &bye, ZMQ_DONTWAIT, &err);
}

static tb_jobrec_t *s_job(const tb_loop_t *self, int64_t index)
{
    return self->running && index >= 0 ? tb_jobtable_at(self->b.jobs, (size_t)index) : NULL;
}

static const char *s_job_label(const tb_loop_t *self, int64_t index)
{
    tb_jobrec_t *job = s_job(self, index);
    return job ? job->label : "a job of an earlier batch";
}

static void s_fatal(tb_loop_t *self, const tb_err_t *err)
{
    if (self->has_fatal)
        return;
    self->has_fatal = true;
    self->fatal = *err;
}

/* Says that a peer joined (`joined`) or left, unless S_PEER_LINES such lines were said in this
 * S_PEER_WINDOW_S window: then it is counted, and the counts are said once the window is over
 * (s_peer_summary). A connection storm of 2000 peers gives a few lines, not 5000. */
static void s_peer_summary(tb_loop_t *self, double now)
{
    if (now - self->peer_window_s < S_PEER_WINDOW_S)
        return;
    if (self->peer_joined || self->peer_left)
        tb_log_info("%ld more workers joined and %ld left in the last %.0f s", self->peer_joined,
                    self->peer_left, now - self->peer_window_s);
    self->peer_window_s = now;
    self->peer_lines = 0;
    self->peer_joined = self->peer_left = 0;
}

static void s_peer_event(tb_loop_t *self, bool joined, tb_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void s_peer_event(tb_loop_t *self, bool joined, tb_log_level_t level, const char *fmt, ...)
{
    s_peer_summary(self, tb_now_s());
    if (level == TB_LOG_INFO && self->peer_lines >= S_PEER_LINES) {
        if (joined)
            self->peer_joined++;
        else
            self->peer_left++;
        return;
    }
    self->peer_lines += level == TB_LOG_INFO;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    tb_log(level, "%s", line);
}

/* ---- leases ---- */

static void s_transfer_drop(tb_worker_t *w)
{
    tb_transfer_reset(&w->result_in);
    if (w->sinking)
        tb_cache_sink_abort(&w->sink);
    w->sinking = false;
}

static void s_blocklist(tb_loop_t *self, tb_worker_t *w);
static void s_worker_lost(tb_loop_t *self, tb_worker_t *w, const char *why);

/* Whether job `index` fails the run now (its failures, and every live worker tried it). */
static void s_check_failed(tb_loop_t *self, size_t index)
{
    if (tb_jobtable_check_failed(self->b.jobs, index, self->live, self->n_live))
        self->pipeline--;
}

static void s_decide(tb_loop_t *self, size_t index);

/* One of job `index`'s runs ended without a result to add (lost, failed, refused, discarded: the
 * caller has put the job back to READY): while others are under way the job stays LEASED to
 * them, else it decides on the results in hand, if any (s_decide). */
static void s_run_over(tb_loop_t *self, size_t index)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    if (job->runs > 0)
        job->runs--;
    s_decide(self, index);
}

/* Ends w's lease. `failure` counts against the job and the worker; `lost` against the job only. */
static void s_lease_end(tb_loop_t *self, tb_worker_t *w, tb_outcome_t outcome, const char *text,
                        bool failure, bool lost, const tb_err_t *job_err)
{
    if (w->job < 0)
        return;
    size_t index = (size_t)w->job;
    double seconds = tb_now_s() - w->lease_started_s;
    w->busy_s += seconds;
    w->job = -1;
    w->spec_next = w->spec_chunks = 0;
    s_transfer_drop(w);
    if (!self->running)
        return;
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    tb_jobtable_attempt_end(self->b.jobs, index, w->attempt, outcome, text, seconds);
    if (failure)
        self->b.stats->failed++;
    if (lost)
        self->b.stats->lost++;
    if (failure || lost)
        tb_jobtable_count_failure(self->b.jobs, index, w->conn_no, lost, failure ? job_err : NULL,
                                  text);
    else /* discarded (its worker quarantined): no failure of the job's */
        tb_jobtable_requeue(self->b.jobs, index);
    if (failure)
        w->failures++;
    s_run_over(self, index);
    s_check_failed(self, index);
    if (job->state == TB_JOB_READY)
        tb_log_info("%s attempt %u on %s: %s; it will run again", job->label, w->attempt, w->name,
                    text);
    if (failure && w->alive && w->failures >= self->opts->blocklist_after)
        s_blocklist(self, w);
}

static void s_worker_lost(tb_loop_t *self, tb_worker_t *w, const char *why)
{
    if (!w->alive)
        return;
    char outcome[256];
    snprintf(outcome, sizeof outcome, "lost: %s", why);
    w->alive = false;
    if (w->job >= 0)
        s_lease_end(self, w, TB_OUT_LOST, outcome, false, true, NULL);
    s_transfer_drop(w);
    s_peer_event(self, false, TB_LOG_INFO, "worker %s gone: %s", w->name, why);
}

static void s_blocklist(tb_loop_t *self, tb_worker_t *w)
{
    /* The connection (and with CURVE its key) is blocklisted, never the declared name: another
     * peer's bad messages under a name cannot shut out the worker that owns it. */
    tb_log_warn("worker %s blocklisted after %d failed attempts (its connection %s)", w->name,
                w->failures, w->conn);
    tb_registry_blocklist(self->reg, w->conn);
    s_send_bye(self, w->id, w->id_bytes, TB_BYE_REFUSED, "blocklisted after repeated failures");
    s_worker_lost(self, w, "blocklisted");
}

/* The live workers' connection numbers, for the failure rules. */
static void s_live_conns(tb_loop_t *self)
{
    self->n_live = 0;
    size_t n = tb_registry_count(self->reg);
    if (n > self->cap_live) {
        uint32_t *grown = realloc(self->live, n * sizeof *grown);
        if (!grown)
            return;
        self->live = grown;
        self->cap_live = n;
    }
    for (size_t i = 0; i < n; i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        if (w->alive)
            self->live[self->n_live++] = w->conn_no;
    }
}

/* Whether the connection conn_no gave job `index` one of the results in hand. */
static bool s_voted(const tb_jobrec_t *job, uint32_t conn_no)
{
    for (int k = 0; job->votes && k < job->votes->n; k++)
        if (job->votes->v[k].worker >= 0 && job->votes->v[k].conn_no == conn_no)
            return true;
    return false;
}

/* Whether job `index` may go to w: not to a connection that gave it a result in hand, nor to one it
 * failed on unless every live worker has failed it. */
static bool s_eligible(const tb_loop_t *self, size_t index, const tb_worker_t *w)
{
    /* a job run again to verify a result goes to another worker than the ones that gave one */
    if (s_voted(tb_jobtable_at(self->b.jobs, index), w->conn_no))
        return false;
    if (!tb_jobtable_failed_on(self->b.jobs, index, w->conn_no))
        return true;
    for (size_t i = 0; i < self->n_live; i++)
        if (!tb_jobtable_failed_on(self->b.jobs, index, self->live[i]))
            return false;
    return true;
}

/* Sends up to `max` more chunks of w's spec. */
static void s_send_spec(tb_loop_t *self, tb_worker_t *w, int max)
{
    tb_jobrec_t *job = s_job(self, w->job);
    if (!job)
        return;
    for (int k = 0; k < max && w->spec_next < w->spec_chunks; k++) {
        uint32_t c = w->spec_next;
        tb_msg_t m;
        tb_msg_init(&m, TB_CMD_JOB);
        m.job_id = s_wire_id(self, (size_t)w->job);
        m.attempt = w->attempt;
        snprintf(m.kind, sizeof m.kind, "%s", job->kind->name);
        m.chunk_index = c;
        m.chunk_count = w->spec_chunks;
        m.total_bytes = job->spec_blob_bytes;
        size_t off = (size_t)c * self->opts->chunk_bytes;
        m.chunk = (const unsigned char *)job->spec_blob + off;
        m.chunk_bytes = job->spec_blob_bytes - off < self->opts->chunk_bytes
                            ? job->spec_blob_bytes - off
                            : self->opts->chunk_bytes;
        if (s_send(self, w, &m) != 0) {
            if (errno == EAGAIN)
                return; /* its queue is full: the next turn */
            char why[160];
            snprintf(why, sizeof why, "cannot send the job: %s", zmq_strerror(errno));
            s_worker_lost(self, w, why);
            return;
        }
        w->spec_next++;
    }
}

/* A job's deadline: its own (the caller's estimate, or --job-timeout), else its kind's from the
 * measured cost: S_DEADLINE_FACTOR times the longest attempt of that kind this engine has seen
 * succeed, and never under S_DEADLINE_FLOOR_S (the first jobs of a kind, not yet measured). */
static double s_deadline(const tb_loop_t *self, const tb_jobrec_t *job)
{
    if (job->deadline_s > 0)
        return job->deadline_s;
    double d = S_DEADLINE_FLOOR_S;
    for (size_t k = 0; k < self->n_costs; k++)
        if (self->costs[k].kind == job->kind && S_DEADLINE_FACTOR * self->costs[k].max_s > d)
            d = S_DEADLINE_FACTOR * self->costs[k].max_s;
    return d;
}

static void s_grant(tb_loop_t *self, tb_worker_t *w, size_t index)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    uint32_t attempt = tb_jobtable_attempt_begin(self->b.jobs, index, w->index);
    if (attempt == 0) {
        tb_err_t e;
        tb_err_set(&e, TB_E_NOMEM, "out of memory recording an attempt");
        s_fatal(self, &e);
        return;
    }
    self->b.stats->attempts++;
    /* a second opinion on a result in hand, or a run beside another under way (probation) */
    if ((job->votes && job->votes->n > 0) || job->runs > 0) {
        tb_attempt_rec_t *a = tb_jobtable_attempt(self->b.jobs, index, attempt);
        if (a)
            a->verify = true;
        self->b.stats->verify_attempts++;
    }
    job->runs++;
    job->state = TB_JOB_LEASED;
    job->worker = w->index;
    job->progress = 0;
    job->progress_t0_s = 0;
    if (job->deadline_s <= 0)
        job->default_deadline_s = (float)s_deadline(self, job);
    w->job = (int64_t)index;
    w->attempt = attempt;
    w->lease_started_s = tb_now_s();
    /* The blob of the largest result this job's spec can produce (zstd's bound over it plus the
     * blob header): a larger announcement is refused before a byte is buffered. */
    size_t max = job->max_result_bytes;
    s_transfer_drop(w);
    tb_transfer_init(&w->result_in, (uint64_t)max + max / 128 + 4096 + TB_BLOB_HEADER_BYTES);
    w->spec_next = 0;
    w->spec_chunks = tb_proto_chunk_count(job->spec_blob_bytes, self->opts->chunk_bytes);
    pid_t pid = w->local
                    ? tb_local_workers_pid(self->local, tb_local_workers_find(self->local, w->name))
                    : 0;
    char pid_text[32] = "";
    if (pid > 0)
        snprintf(pid_text, sizeof pid_text, " (pid %ld)", (long)pid);
    tb_log(self->opts->verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
           "dispatch: job %zu (%s) attempt %u to %s%s", index, job->label, attempt, w->name,
           pid_text);
    s_send_spec(self, w, S_SPEC_CHUNKS_A_TURN);
}

/* ---- results ---- */

static void s_discard_task(tb_task_t *task);

/* The sink of a large result: its file is opened at the first bytes, so a refused announcement
 * leaves nothing behind. */
static int s_sink_write(void *user, const void *data, size_t bytes, tb_err_t *err)
{
    tb_worker_t *w = user;
    if (w->sink.fd < 0 && !w->sink.tmp_path[0] &&
        tb_cache_sink_open(&w->sink, w->sink_dir, &w->sink_key, err) != 0)
        return -1;
    return tb_cache_sink_write(&w->sink, data, bytes, err);
}

/* Whether the transfer starting with chunk m is a large result, to go to a file: its announced
 * blob, or the raw size its blob header (the chunk's first 32 bytes) claims. */
static bool s_is_large(const tb_loop_t *self, const tb_msg_t *m)
{
    size_t large = self->opts->large_result_bytes;
    if (m->total_bytes > large)
        return true;
    if (m->chunk_bytes < TB_BLOB_HEADER_BYTES)
        return false;
    const unsigned char *p = m->chunk;
    uint64_t raw = 0;
    for (int i = 7; i >= 0; i--)
        raw = (raw << 8) | p[8 + i];
    return raw > large;
}

/* ---- verification by replication (docs/distribution.md) ---- */

/* Whether job `index`'s result from w must wait for another worker's: verification is on and the
 * job has a result in hand already (this is a second opinion), its worker is not trusted yet, or
 * the job is in the share picked (by a seed of this run, so no worker can tell which). */
static bool s_needs_votes(const tb_loop_t *self, size_t index, const tb_worker_t *w)
{
    const tb_dispatch_opts_t *o = self->opts;
    if (o->verify == TB_VERIFY_OFF)
        return false;
    const tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    /* a result in hand, or another run under way (new workers sharing a job on probation): its
     * opinion is coming, so this result waits for it */
    if ((job->votes && job->votes->n > 0) || job->runs > 1)
        return true;
    /* this coordinator's own helpers, on its private socket, are trusted (but for `all`) */
    if (w->local && o->verify != TB_VERIFY_ALL)
        return false;
    if (w->trust != TB_TRUST_TRUSTED)
        return true;
    if (o->verify_share >= 1)
        return true;
    uint64_t pick[2] = {self->b.id, index};
    double u = (double)(XXH3_64bits_withSeed(pick, sizeof pick, self->verify_seed) >> 11) * 0x1p-53;
    return u < o->verify_share;
}

/* Whether a live worker that may verify job `index` exists (busy or not): not quarantined, and one
 * the job may go to (s_eligible: it gave no result in hand and did not fail it). Without one the
 * coordinator runs the job itself, so a farm of two whose second worker failed the replica does
 * not wait for ever. */
static bool s_other_worker(const tb_loop_t *self, size_t index)
{
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        const tb_worker_t *w = tb_registry_at(self->reg, i);
        if (w->alive && w->trust != TB_TRUST_QUARANTINED && s_eligible(self, index, w))
            return true;
    }
    return false;
}

/* No other worker can give job `index` the opinion it needs: the coordinator runs it itself on a
 * helper thread (rare: a farm of one worker, or two that disagree). */
static void s_tiebreak(tb_loop_t *self, size_t index)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    tb_tiebreak_t *t = calloc(1, sizeof *t);
    if (!t) {
        tb_err_t e;
        tb_err_set(&e, TB_E_NOMEM, "out of memory verifying a result");
        s_fatal(self, &e);
        return;
    }
    t->task.run = tb_tiebreak_run;
    t->batch = self->b.id;
    t->index = index;
    t->kind = job->kind;
    t->spec = job->spec;
    t->spec_bytes = job->spec_bytes;
    t->spec_blob = job->spec_blob;
    t->spec_blob_bytes = job->spec_blob_bytes;
    job->state = TB_JOB_VERIFYING;
    job->worker = -1;
    job->runs++;
    self->b.stats->tiebreaks++;
    tb_log_info("%s: no other worker can verify the result in hand: the coordinator runs it itself",
                job->label);
    tb_tasks_post(self->tasks, &t->task);
}

static void s_post_commit(tb_loop_t *self, size_t index, tb_vote_t *v, bool remove,
                          const tb_cache_key_t *key)
{
    tb_commit_t *c = self->b.cache ? calloc(1, sizeof *c) : NULL;
    if (!c) { /* no store (or no memory: not stored, recomputed next time); the result stays */
        if (v) {
            free(v->blob);
            v->blob = NULL;
            if (v->sinking)
                tb_cache_sink_abort(&v->sink);
            v->sinking = false;
        }
        return;
    }
    c->task.run = tb_commit_run;
    c->batch = self->b.id;
    c->index = index;
    c->cache = self->b.cache;
    c->key = *key;
    c->remove = remove;
    if (v) {
        c->blob = v->blob;
        c->blob_bytes = v->blob_bytes;
        c->sinking = v->sinking;
        c->sink = v->sink;
        v->blob = NULL;
        v->sinking = false;
    }
    tb_tasks_post(self->tasks, &c->task);
}

static size_t s_vote_mem(const tb_vote_t *v)
{
    return (v->result && !tb_result_mapped(v->result) ? tb_result_bytes(v->result) : 0) +
           v->blob_bytes;
}

/* Drops vote k of job `index` (its worker was quarantined). */
static void s_drop_vote(tb_loop_t *self, tb_jobrec_t *job, int k)
{
    tb_votes_t *vs = job->votes;
    self->votes_held--;
    self->votes_bytes -= s_vote_mem(&vs->v[k]);
    tb_vote_free(&vs->v[k]);
    vs->v[k] = vs->v[vs->n - 1];
    memset(&vs->v[vs->n - 1], 0, sizeof vs->v[0]);
    vs->n--;
}

static void s_quarantine(tb_loop_t *self, tb_worker_t *w, const char *label, const char *why)
{
    if (w->trust == TB_TRUST_QUARANTINED)
        return;
    w->trust = TB_TRUST_QUARANTINED;
    self->b.stats->quarantined++;
    tb_log_warn("worker %s (%s) quarantined for this bake: its result of %s %s; it gets no more "
                "work and its other results are not used",
                w->name, w->conn, label, why);
    if (w->job >= 0) {
        tb_msg_t cancel;
        tb_msg_init(&cancel, TB_CMD_CANCEL);
        cancel.job_id = s_wire_id(self, (size_t)w->job);
        cancel.attempt = w->attempt;
        w->draining = true;
        w->drain_job = cancel.job_id;
        w->drain_attempt = w->attempt;
        w->drain_since_s = tb_now_s();
        s_lease_end(self, w, TB_OUT_DISCARDED, "discarded: its worker was quarantined", false,
                    false, NULL);
        if (w->alive)
            s_send(self, w, &cancel);
    }
    /* its results in hand elsewhere are dropped (those jobs wait for other opinions); its results
     * already used unverified cannot be taken back: their store entries are removed and the run
     * fails, naming them, so that the next bake recomputes them */
    size_t used = 0;
    char first[96] = "";
    for (size_t j = 0; j < tb_jobtable_count(self->b.jobs); j++) {
        tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, j);
        for (int k = job->votes ? job->votes->n - 1 : -1; k >= 0; k--)
            if (job->votes->v[k].worker == w->index)
                s_drop_vote(self, job, k);
        if (job->state == TB_JOB_DONE && !job->from_store && !job->verified &&
            job->worker == w->index) {
            if (!used++)
                snprintf(first, sizeof first, "%s", job->label);
            s_post_commit(self, j, NULL, true, &job->key);
        }
    }
    /* and results of earlier batches (phases) of this engine: their jobs are gone from the table,
     * so their store entries cannot be named here */
    size_t earlier = (size_t)w->used_unverified > used ? (size_t)w->used_unverified - used : 0;
    if (earlier) {
        tb_err_t e;
        tb_err_set(&e, TB_E_JOB,
                   "worker %s was quarantined after %zu of its results of earlier phases of this "
                   "bake were used unverified: they may be wrong and are in the store; bake again "
                   "with --fresh",
                   w->name, earlier);
        s_fatal(self, &e);
    } else if (used) {
        tb_err_t e;
        tb_err_set(
            &e, TB_E_JOB,
            "worker %s was quarantined after %zu of its results were used unverified (%s%s); "
            "their store entries are removed: bake again to recompute them",
            w->name, used, first, used > 1 ? ", ..." : "");
        s_fatal(self, &e);
    }
}

/* Job `index` has the result of vote `win`, agreed by `agree` votes: the others' workers are
 * quarantined, the agreeing ones earn trust, the result is stored and used. */
static void s_accept(tb_loop_t *self, size_t index, int win)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    tb_votes_t *vs = job->votes;
    uint64_t h = vs->v[win].xxh3;
    /* the votes as they are now (quarantining a worker drops its votes from every job, this one's
     * too): the agreeing workers earn trust first, then the others are quarantined */
    struct {
        int32_t worker;
        uint32_t attempt;
        uint64_t xxh3;
    } seen[TB_MAX_VOTES];
    int n_seen = vs->n;
    for (int k = 0; k < n_seen; k++) {
        seen[k].worker = vs->v[k].worker;
        seen[k].attempt = vs->v[k].attempt;
        seen[k].xxh3 = vs->v[k].xxh3;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < n_seen; k++) {
            tb_worker_t *vw =
                seen[k].worker >= 0 ? tb_registry_at(self->reg, (size_t)seen[k].worker) : NULL;
            if (!vw && pass == 1 && seen[k].xxh3 != h)
                /* two workers agree against this coordinator's own run: the same spec gave other
                 * bits here, which only a broken build or a nondeterministic kernel can do */
                tb_log_warn("%s: the coordinator's own run (%016llx) disagrees with two workers "
                            "(%016llx): the same job gave other bits here - a determinism bug "
                            "(docs/determinism.md) or faulty memory on this machine",
                            job->label, (unsigned long long)seen[k].xxh3, (unsigned long long)h);
            if (!vw || (seen[k].xxh3 == h) != (pass == 0))
                continue;
            if (pass == 0) {
                if (++vw->agreed >= self->opts->verify_first && vw->trust == TB_TRUST_NEW) {
                    vw->trust = TB_TRUST_TRUSTED;
                    tb_log(self->opts->verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
                           "worker %s trusted: its result of %s agreed with another", vw->name,
                           job->label);
                }
                continue;
            }
            char why[160];
            snprintf(why, sizeof why, "(%016llx) is outside the majority (%016llx)",
                     (unsigned long long)seen[k].xxh3, (unsigned long long)h);
            tb_attempt_rec_t *a = tb_jobtable_attempt(self->b.jobs, index, seen[k].attempt);
            if (a) {
                a->outcome = TB_OUT_DISAGREED;
                free(a->text);
                char text[200];
                snprintf(text, sizeof text, "disagreed: %016llx, the majority %016llx",
                         (unsigned long long)seen[k].xxh3, (unsigned long long)h);
                a->text = strdup(text);
            }
            s_quarantine(self, vw, job->label, why);
        }
    /* quarantining may have dropped votes: find the winner again */
    vs = job->votes;
    win = -1;
    for (int k = 0; k < vs->n && win < 0; k++)
        if (vs->v[k].xxh3 == h)
            win = k;
    if (win < 0)
        return; /* (cannot happen: an agreeing worker is never quarantined here) */
    tb_vote_t *v = &vs->v[win];
    self->votes_held--;
    self->votes_bytes -= s_vote_mem(v);
    s_post_commit(self, index, v, false, &job->key);
    self->b.stats->ran++;
    self->b.stats->verified++;
    if (tb_result_mapped(v->result))
        self->b.stats->mapped++;
    job->verified = true;
    tb_log(self->opts->verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
           "%s verified: %d results agree (%016llx)", job->label, vs->n, (unsigned long long)h);
    int32_t producer = v->worker;
    double seconds = v->seconds;
    tb_jobtable_done(self->b.jobs, index, &v->result, h, producer, seconds, false);
    for (int k = 0; k < vs->n; k++) {
        if (k != win) {
            self->votes_held--;
            self->votes_bytes -= s_vote_mem(&vs->v[k]);
        }
        tb_vote_free(&vs->v[k]);
    }
    free(job->votes);
    job->votes = NULL;
    tb_jobtable_drop_spec(self->b.jobs, index);
    self->pipeline--;
}

/* Adds a checked result to job `index`'s votes (taken from the fields given) and decides: wait
 * for another opinion, accept the majority, or fail when three results all differ. */
static void s_add_vote(tb_loop_t *self, size_t index, tb_vote_t *in)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    if (!job->votes && !(job->votes = calloc(1, sizeof *job->votes))) {
        tb_vote_free(in);
        tb_err_t e;
        tb_err_set(&e, TB_E_NOMEM, "out of memory verifying a result");
        s_fatal(self, &e);
        return;
    }
    tb_votes_t *vs = job->votes;
    vs->v[vs->n++] = *in;
    memset(in, 0, sizeof *in);
    self->votes_held++;
    self->votes_bytes += s_vote_mem(&vs->v[vs->n - 1]);
    if (vs->n == 2 && vs->v[0].xxh3 != vs->v[1].xxh3) {
        self->b.stats->disagreements++;
        tb_log_warn("%s: two results differ (%016llx from %s, %016llx from %s): a third run "
                    "decides",
                    job->label, (unsigned long long)vs->v[0].xxh3,
                    tb_registry_name(self->reg, vs->v[0].worker), (unsigned long long)vs->v[1].xxh3,
                    tb_registry_name(self->reg, vs->v[1].worker));
    }
    s_decide(self, index);
}

/* Decides job `index` on its results in hand once none of its runs is under way (runs shared on
 * probation all vote before the majority is taken, so each of those workers is judged): two
 * that agree are accepted (the others' workers quarantined); three that all differ fail the run;
 * else the job is READY for another opinion. While runs are under way it stays LEASED. */
static void s_decide(tb_loop_t *self, size_t index)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    tb_votes_t *vs = job->votes;
    if (job->state == TB_JOB_DONE || job->state == TB_JOB_FAILED)
        return;
    if (job->runs > 0) {
        job->state = TB_JOB_LEASED;
        return;
    }
    if (!vs || vs->n == 0)
        return;
    for (int a = 0; a < vs->n; a++)
        for (int b = a + 1; b < vs->n; b++)
            if (vs->v[a].xxh3 == vs->v[b].xxh3) {
                s_accept(self, index, a);
                return;
            }
    if (vs->n == TB_MAX_VOTES) {
        tb_err_t e;
        tb_err_set(&e, TB_E_JOB, "%s: %d results and no two agree (%s, %s, %s)", job->label, vs->n,
                   tb_registry_name(self->reg, vs->v[0].worker),
                   tb_registry_name(self->reg, vs->v[1].worker),
                   vs->v[2].worker < 0 ? "the coordinator"
                                       : tb_registry_name(self->reg, vs->v[2].worker));
        s_fatal(self, &e);
        return;
    }
    job->state = TB_JOB_READY; /* to another worker */
    vs->waiting_since_s = tb_now_s();
}

/* A worker's checked result that must wait for another opinion. */
static void s_vote(tb_loop_t *self, tb_verify_t *v, tb_worker_t *w)
{
    tb_jobtable_attempt_end(self->b.jobs, v->index, v->attempt, TB_OUT_OK, NULL, v->seconds);
    tb_attempt_rec_t *a = tb_jobtable_attempt(self->b.jobs, v->index, v->attempt);
    if (a)
        a->result_xxh3 = v->result_xxh3;
    w->jobs_done++;
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, v->index);
    if (w->trust == TB_TRUST_QUARANTINED) { /* caught while its result was being checked */
        job->state = TB_JOB_READY;
        s_run_over(self, v->index);
        return;
    }
    if (job->runs > 0)
        job->runs--;
    tb_vote_t in = {.worker = w->index,
                    .conn_no = w->conn_no,
                    .attempt = v->attempt,
                    .xxh3 = v->result_xxh3,
                    .seconds = v->seconds,
                    .result = v->result,
                    .blob = v->blob,
                    .blob_bytes = v->blob_bytes,
                    .sinking = v->sinking,
                    .sink = v->sink};
    v->result = NULL;
    v->blob = NULL;
    v->sinking = false;
    s_add_vote(self, v->index, &in);
}

/* A commit or a tie-break a helper finished. */
static void s_collect_verification(tb_loop_t *self, tb_task_t *t)
{
    if (t->run == tb_commit_run) {
        tb_commit_t *c = (tb_commit_t *)t;
        if (c->rc != 0)
            tb_log_warn("%s: %s: %s",
                        c->remove ? "cannot remove a store entry" : "result not stored",
                        self->running && c->batch == self->b.id
                            ? tb_jobtable_at(self->b.jobs, c->index)->label
                            : "a job of an earlier batch",
                        c->err.msg);
        return;
    }
    tb_tiebreak_t *tb = (tb_tiebreak_t *)t;
    if (!self->running || self->over || tb->batch != self->b.id)
        return;
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, tb->index);
    if (tb->rc != 0) {
        tb_err_t e = tb->err;
        tb_err_prefix(&e, "%s: the coordinator's own run to verify it", job->label);
        s_fatal(self, &e);
        return;
    }
    if (job->runs > 0)
        job->runs--;
    tb_vote_t in = {.worker = -1,
                    .xxh3 = tb->result_xxh3,
                    .seconds = tb->seconds,
                    .result = tb->result,
                    .blob = tb->blob,
                    .blob_bytes = tb->blob_bytes};
    tb->result = NULL;
    tb->blob = NULL;
    s_add_vote(self, tb->index, &in);
}

static void s_on_result_complete(tb_loop_t *self, tb_worker_t *w)
{
    size_t index = (size_t)w->job;
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    tb_verify_t *v = calloc(1, sizeof *v);
    if (!v) {
        tb_err_t e;
        tb_err_set(&e, TB_E_NOMEM, "out of memory taking a result");
        s_fatal(self, &e);
        return;
    }
    v->task.run = tb_verify_run;
    v->batch = self->b.id;
    v->index = index;
    v->attempt = w->attempt;
    v->worker = w->index;
    v->seconds = tb_now_s() - w->lease_started_s;
    v->kind = job->kind;
    v->spec = job->spec;
    v->spec_bytes = job->spec_bytes;
    v->spec_blob = job->spec_blob;
    v->spec_blob_bytes = job->spec_blob_bytes;
    v->max_result = job->max_result_bytes;
    v->large_bytes = self->opts->large_result_bytes;
    v->scratch_dir = self->b.cache ? tb_cache_dir(self->b.cache) : self->scratch_dir;
    v->cache = self->b.cache;
    v->key = job->key;
    v->hold = s_needs_votes(self, v->index, w);
    if (w->sinking) {
        v->sinking = true;
        v->sink = w->sink;
        w->sink.fd = -1;
        w->sink.tmp_path[0] = '\0';
        w->sinking = false;
        tb_transfer_reset(&w->result_in);
    } else {
        v->blob = tb_transfer_take(&w->result_in, &v->blob_bytes);
    }
    tb_log(self->opts->verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
           "%s attempt %u received from %s in %.2f s (%zu bytes)", job->label, w->attempt, w->name,
           v->seconds, v->sinking ? (size_t)v->sink.blob_bytes : v->blob_bytes);
    /* The worker is free; the result is the helpers' until it is checked (and stored). */
    w->busy_s += v->seconds;
    w->job = -1;
    w->spec_next = w->spec_chunks = 0;
    job->state = TB_JOB_VERIFYING;
    job->worker = w->index;
    job->received_s = tb_now_s();
    self->verifying++;
    self->verifying_bytes += v->sinking ? 0 : v->blob_bytes;
    tb_tasks_post(self->tasks, &v->task);
}

/* A kind's longest successful attempt so far, for its default deadline (s_deadline). */
static void s_measured(tb_loop_t *self, const tb_job_kind_t *kind, double seconds)
{
    size_t k = 0;
    while (k < self->n_costs && self->costs[k].kind != kind)
        k++;
    if (k == self->n_costs) {
        if (k == S_MAX_KINDS)
            return;
        self->costs[self->n_costs].kind = kind;
        self->costs[self->n_costs++].max_s = 0;
    }
    if (seconds > self->costs[k].max_s)
        self->costs[k].max_s = seconds;
}

/* A helper checked a result. */
static void s_verified(tb_loop_t *self, tb_verify_t *v)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, v->index);
    tb_worker_t *w = tb_registry_at(self->reg, (size_t)v->worker);
    if (v->rc != 0) {
        tb_log_warn("rejected the result of %s attempt %u from %s: %s", job->label, v->attempt,
                    w->name, v->err.msg);
        char outcome[TB_ERR_MSG_MAX + 32];
        snprintf(outcome, sizeof outcome, "%s: %s",
                 v->outcome == TB_OUT_CORRUPT ? "corrupt result" : "wrong result", v->err.msg);
        tb_jobtable_attempt_end(self->b.jobs, v->index, v->attempt, v->outcome, outcome,
                                v->seconds);
        self->b.stats->failed++;
        tb_jobtable_count_failure(self->b.jobs, v->index, w->conn_no, false, &v->err, outcome);
        w->failures++;
        s_run_over(self, v->index);
        s_check_failed(self, v->index);
        if (job->state == TB_JOB_READY)
            tb_log_info("%s attempt %u on %s: %s; it will run again", job->label, v->attempt,
                        w->name, outcome);
        if (w->alive && w->failures >= self->opts->blocklist_after)
            s_blocklist(self, w);
        return;
    }
    s_measured(self, job->kind, v->seconds);
    if (v->hold) {
        s_vote(self, v, w);
        return;
    }
    if (w->trust == TB_TRUST_QUARANTINED) {
        /* caught while this result was being checked (and maybe stored): not used, its store
         * entry removed, the job runs again on another worker */
        tb_jobtable_attempt_end(self->b.jobs, v->index, v->attempt, TB_OUT_DISCARDED,
                                "discarded: its worker was quarantined", v->seconds);
        if (v->store_rc == 0)
            s_post_commit(self, v->index, NULL, true, &job->key);
        tb_jobtable_requeue(self->b.jobs, v->index);
        s_run_over(self, v->index);
        return;
    }
    if (job->runs > 0)
        job->runs--;
    w->used_unverified++;
    if (v->store_rc != 0)
        tb_log_warn("%s: result not stored: %s", job->label, v->store_err.msg);
    tb_jobtable_attempt_end(self->b.jobs, v->index, v->attempt, TB_OUT_OK, NULL, v->seconds);
    tb_attempt_rec_t *a = tb_jobtable_attempt(self->b.jobs, v->index, v->attempt);
    if (a)
        a->result_xxh3 = v->result_xxh3;
    tb_log(self->opts->verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
           "%s attempt %u done by %s in %.2f s (%zu bytes)", job->label, v->attempt, w->name,
           v->seconds, tb_result_bytes(v->result));
    w->jobs_done++;
    self->b.stats->ran++;
    if (tb_result_mapped(v->result))
        self->b.stats->mapped++;
    tb_jobtable_done(self->b.jobs, v->index, &v->result, v->result_xxh3, w->index, v->seconds,
                     false);
    tb_jobtable_drop_spec(self->b.jobs, v->index);
    self->pipeline--;
}

/* A helper prepared a job. */
static void s_prepped(tb_loop_t *self, tb_prep_t *p)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, p->index);
    tb_err_t err;
    if (p->rc != 0) {
        err = p->err;
        tb_err_prefix(&err, "%s", job->label);
        s_fatal(self, &err);
        return;
    }
    if (p->made && tb_jobtable_install_spec(self->b.jobs, p->index, &p->made, p->made_bytes,
                                            p->spec_xxh3, &p->key, p->max_result, &err) != 0) {
        s_fatal(self, &err);
        return;
    }
    if (p->found < 0) {
        self->b.stats->corrupt_store++;
        tb_log_warn("%s: stored result unusable, recomputing: %s", job->label, p->store_err.msg);
    }
    if (p->found == 1) {
        self->b.stats->from_store++;
        if (tb_result_mapped(p->result))
            self->b.stats->mapped++;
        tb_jobtable_done(self->b.jobs, p->index, &p->result, p->result_xxh3, -1, 0, true);
        tb_jobtable_drop_spec(self->b.jobs, p->index);
        self->pipeline--;
        return;
    }
    free(job->spec_blob);
    job->spec_blob = p->blob;
    job->spec_blob_bytes = p->blob_bytes;
    p->blob = NULL;
    /* from here the compressed spec is enough: a check decodes it (jobwork.c) */
    tb_jobtable_keep_blob_only(self->b.jobs, p->index);
    job->state = TB_JOB_READY;
}

static void s_discard_task(tb_task_t *task)
{
    /* every task starts with its tb_task_t; run tells them apart */
    if (task->run == tb_commit_run) {
        tb_commit_t *c = (tb_commit_t *)task;
        free(c->blob);
        if (c->sinking)
            tb_cache_sink_abort(&c->sink);
        free(c);
    } else if (task->run == tb_tiebreak_run) {
        tb_tiebreak_t *t = (tb_tiebreak_t *)task;
        tb_result_destroy(&t->result);
        free(t->blob);
        free(t);
    } else if (task->run == tb_prep_run) {
        tb_prep_t *p = (tb_prep_t *)task;
        free(p->made);
        free(p->blob);
        tb_result_destroy(&p->result);
        free(p);
    } else {
        tb_verify_t *v = (tb_verify_t *)task;
        free(v->blob);
        if (v->sinking)
            tb_cache_sink_abort(&v->sink);
        tb_result_destroy(&v->result);
        free(v);
    }
}

static void s_collect(tb_loop_t *self)
{
    tb_task_t *t;
    while ((t = tb_tasks_take(self->tasks)) != NULL) {
        if (t->run == tb_commit_run || t->run == tb_tiebreak_run) {
            s_collect_verification(self, t);
            s_discard_task(t);
            continue;
        }
        bool prep = t->run == tb_prep_run;
        if (prep) {
            tb_prep_t *p = (tb_prep_t *)t;
            self->looking -= p->lookup && p->cache;
        } else {
            self->verifying--;
            self->verifying_bytes -=
                ((tb_verify_t *)t)->sinking ? 0 : ((tb_verify_t *)t)->blob_bytes;
        }
        uint64_t batch = prep ? ((tb_prep_t *)t)->batch : ((tb_verify_t *)t)->batch;
        if (self->running && !self->over && batch == self->b.id) {
            if (prep)
                s_prepped(self, (tb_prep_t *)t);
            else
                s_verified(self, (tb_verify_t *)t);
        }
        s_discard_task(t);
    }
}

/* ---- messages ---- */

static void s_on_ready(tb_loop_t *self, const tb_proto_frame_t *id, const char *user_id,
                       const tb_msg_t *m)
{
    char hex[20];
    s_peer_hex(id->data, id->bytes, hex, sizeof hex);
    if (id->bytes > sizeof((tb_worker_t *)0)->id) {
        tb_log_warn("rejected READY from peer %s: routing id too long", hex);
        return;
    }
    char conn[TB_WORKER_NAME_MAX];
    tb_registry_conn_id(id->data, id->bytes, user_id, conn, sizeof conn);
    tb_dispatch_stats_t *stats = self->running ? self->b.stats : NULL;
    if (strcmp(m->build_id, tb_build_id()) != 0) {
        char why[400];
        snprintf(why, sizeof why, "build id %s differs from the coordinator's %s", m->build_id,
                 tb_build_id());
        tb_log_warn("refused worker %s: %s", m->name, why);
        s_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED, why);
        if (stats)
            stats->workers_refused++;
        return;
    }
    if (tb_registry_blocklisted(self->reg, conn)) {
        tb_log_warn("refused worker %s (%s): blocklisted", m->name, conn);
        s_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED,
                   "blocklisted after repeated failures");
        if (stats)
            stats->workers_refused++;
        return;
    }
    /* Identity is the connection, not the declared name (docs/distribution.md, "Worker
     * identity"). A READY under the name of a live worker from another connection is refused and
     * changes nothing, unless the old connection is gone; the same CURVE key may take over its own
     * name at once (a worker that reconnected). The refused newcomer gets no answer: an honest
     * worker retries after its back-off. */
    tb_worker_t *old = tb_registry_by_name(self->reg, m->name);
    if (old && !(user_id && strcmp(old->conn, conn) == 0)) {
        /* An honest worker that reconnected has closed its old connection: a send to it fails
         * (ZMQ_ROUTER_MANDATORY), and the newcomer takes the name. A live one answers. */
        tb_msg_t probe;
        tb_msg_init(&probe, TB_CMD_HEARTBEAT);
        if (s_send(self, old, &probe) != 0) {
            s_worker_lost(self, old, "its connection is gone (it reconnected)");
            old = NULL;
        }
    }
    if (old && !(user_id && strcmp(old->conn, conn) == 0)) {
        tb_log_warn("refused READY from %s under the name %s: a live worker (%s) holds it", conn,
                    m->name, old->conn);
        if (stats)
            stats->workers_refused++;
        return;
    }
    /* A local helper is known by the routing id this coordinator handed it (local_workers.h),
     * never by its declared name; the helpers' names are theirs alone, so a peer that declares one
     * first cannot pass for the helper nor keep it out. */
    bool local = tb_local_workers_owns(self->local, m->name, id->data, id->bytes);
    if (!local && tb_local_workers_reserved(m->name)) {
        tb_log_warn("refused READY from %s under the name %s: the names local-N belong to this "
                    "coordinator's local helpers",
                    conn, m->name);
        s_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED,
                   "the names local-N belong to the coordinator's local helpers");
        if (stats)
            stats->workers_refused++;
        return;
    }
    if (old)
        s_worker_lost(self, old, "reconnected under a new connection");
    tb_worker_t *w = tb_registry_add(self->reg, id->data, id->bytes, conn, m->name, m->threads,
                                     m->memory_bytes, local);
    if (!w)
        return;
    if (w->local)
        w->trust = TB_TRUST_TRUSTED; /* one of this coordinator's processes */
    s_peer_event(self, true, self->opts->verbose || !w->local ? TB_LOG_INFO : TB_LOG_DEBUG,
                 "worker %s joined (%u threads, %.1f GiB)", w->name, w->threads,
                 (double)w->memory_bytes / (1 << 30));
    tb_msg_t hb;
    tb_msg_init(&hb, TB_CMD_HEARTBEAT);
    s_send(self, w, &hb);
}

/* Whether (job, attempt) is the live lease held by w. */
static bool s_holds(const tb_loop_t *self, const tb_worker_t *w, const tb_msg_t *m)
{
    return self->running && w->job >= 0 && s_wire_id(self, (size_t)w->job) == m->job_id &&
           w->attempt == m->attempt;
}

/* A terminal message for the attempt w was told to drop: the worker is free again. */
static bool s_drained(tb_worker_t *w, const tb_msg_t *m, bool terminal)
{
    if (!w->draining || w->drain_job != m->job_id || w->drain_attempt != m->attempt)
        return false;
    if (terminal)
        w->draining = false;
    return true;
}

static void s_reject(tb_worker_t *w, const tb_msg_t *m, const char *why)
{
    long skipped;
    if (!tb_warn_ok(&w->warn, &skipped))
        return;
    if (skipped)
        tb_log_warn("%ld warnings about %s not shown", skipped, w->name);
    tb_log_warn("rejected %s for job %llu attempt %u from %s: %s", tb_proto_cmd_name(m->cmd),
                (unsigned long long)m->job_id, m->attempt, w->name, why);
}

/* The worker's peak memory for the attempt it holds, as its RESULT or FAIL says (bounded by the
 * decoder: TB_PROTO_PEAK_MAX); for the records only, nothing is decided by it. */
static void s_note_peak(tb_loop_t *self, const tb_worker_t *w, const tb_msg_t *m)
{
    tb_attempt_rec_t *a = tb_jobtable_attempt(self->b.jobs, (size_t)w->job, w->attempt);
    if (!a || m->peak_rss_bytes == 0)
        return;
    const tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, (size_t)w->job);
    uint64_t bound = tb_peak_unpack(job->memory_bound), before = tb_peak_unpack(a->peak);
    a->peak = tb_peak_pack(m->peak_rss_bytes);
    /* said once an attempt: when its peak first crosses the bound (RESULT chunks repeat it) */
    if (job->memory_bound && tb_peak_unpack(a->peak) > bound && before <= bound)
        tb_log_warn("%s: %s peaked at %.0f MB, over its stated bound of %.0f MB (docs/"
                    "distribution.md, \"Peak memory\")",
                    w->name, job->label, (double)tb_peak_unpack(a->peak) / 1e6,
                    (double)bound / 1e6);
}

static void s_on_result_chunk(tb_loop_t *self, tb_worker_t *w, const tb_msg_t *m)
{
    if (!s_holds(self, w, m)) {
        bool last = m->chunk_index + 1 == m->chunk_count;
        if (s_drained(w, m, last))
            return;
        if (m->chunk_index == 0)
            s_reject(w, m, "not leased to it (a stale attempt or another worker's job)");
        /* A worker runs one job at a time: the lease holder answering another (job, attempt) has
         * dropped its lease's answer, and would hold the job for ever while it heartbeats. The
         * lease ends as a failure and the job runs again at once. */
        if (last && self->running && w->job >= 0) {
            char outcome[200];
            snprintf(
                outcome, sizeof outcome,
                "bad answer: a RESULT for job %llu attempt %u, not its lease (job %llu attempt "
                "%u)",
                (unsigned long long)m->job_id, m->attempt,
                (unsigned long long)s_wire_id(self, (size_t)w->job), w->attempt);
            tb_err_t err;
            tb_err_set(&err, TB_E_JOB, "%s", outcome);
            s_lease_end(self, w, TB_OUT_BAD_TRANSFER, outcome, true, false, &err);
        }
        return;
    }
    s_note_peak(self, w, m);
    if (!w->result_in.started && m->chunk_index == 0 && s_is_large(self, m)) {
        tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, (size_t)w->job);
        w->sinking = true;
        w->sink.fd = -1;
        w->sink.tmp_path[0] = '\0';
        w->sink_key = job->key;
        w->sink_dir = self->b.cache ? tb_cache_dir(self->b.cache) : self->scratch_dir;
        tb_transfer_set_sink(&w->result_in, s_sink_write, w);
    }
    tb_err_t err;
    bool sinking = w->sinking;
    int r = tb_transfer_add(&w->result_in, m, &err);
    if (r < 0 && sinking && err.code == TB_E_IO) {
        /* our disk, not the worker's fault: a result too large to hold has nowhere to go */
        tb_err_prefix(&err, "%s: cannot write its large result", s_job_label(self, w->job));
        s_transfer_drop(w);
        s_fatal(self, &err);
        return;
    }
    if (r < 0) {
        tb_log_warn("rejected a RESULT chunk from %s: %s", w->name, err.msg);
        char outcome[TB_ERR_MSG_MAX + 32];
        snprintf(outcome, sizeof outcome, "bad transfer: %s", err.msg);
        s_lease_end(self, w, TB_OUT_BAD_TRANSFER, outcome, true, false, &err);
    } else if (r == 1) {
        s_on_result_complete(self, w);
    }
}

static void s_on_message(tb_loop_t *self, tb_worker_t *w, const tb_msg_t *m)
{
    switch (m->cmd) {
    case TB_CMD_HEARTBEAT:
        return;
    case TB_CMD_READY:
        s_reject(w, m, "already registered (a connection says READY once)");
        return;
    case TB_CMD_PROGRESS:
        if (s_holds(self, w, m))
            tb_jobrec_progress(s_job(self, w->job), m->fraction_ppm / 1e6);
        return;
    case TB_CMD_RESULT:
        s_on_result_chunk(self, w, m);
        return;
    case TB_CMD_FAIL: {
        if (!s_holds(self, w, m)) {
            if (!s_drained(w, m, true))
                s_reject(w, m, "not leased to it");
            return;
        }
        s_note_peak(self, w, m);
        tb_err_t err;
        err.code = m->code > TB_E_INTERNAL || m->code == TB_OK ? TB_E_JOB : (tb_errcode_t)m->code;
        snprintf(err.msg, sizeof err.msg, "%s", m->text);
        char outcome[TB_PROTO_TEXT_MAX + 32];
        snprintf(outcome, sizeof outcome, "failed: %s", m->text);
        tb_log_warn("%s attempt %u failed on %s: %s", s_job_label(self, w->job), w->attempt,
                    w->name, m->text);
        s_lease_end(self, w, TB_OUT_FAILED, outcome, true, false, &err);
        return;
    }
    case TB_CMD_DISCONNECT: {
        char why[TB_PROTO_TEXT_MAX + 32];
        snprintf(why, sizeof why, "left (%s)", m->text);
        s_worker_lost(self, w, why);
        return;
    }
    default:
        s_reject(w, m, "workers may not send it");
        if (++w->failures >= self->opts->blocklist_after)
            s_blocklist(self, w);
        return;
    }
}

static void s_receive(tb_loop_t *self)
{
    double until = tb_now_s() + S_RECEIVE_BUDGET_S;
    for (int k = 0; k < 4096 && tb_now_s() < until; k++) {
        tb_proto_rx_t rx;
        if (tb_proto_recv(self->sock, &rx, ZMQ_DONTWAIT) != 0)
            return;
        tb_proto_frame_t id = tb_proto_rx_frame(&rx, 0);
        char hex[20];
        s_peer_hex(id.data, id.bytes, hex, sizeof hex);
        tb_worker_t *w = rx.n_frames ? tb_registry_by_id(self->reg, id.data, id.bytes) : NULL;
        if (w)
            w->last_seen_s = tb_now_s(); /* any message counts as a heartbeat */
        tb_msg_t m;
        tb_err_t err;
        long skipped = 0;
        if (tb_proto_rx_decode(&rx, 1, &m, &err) != 0) {
            if (w) {
                if (tb_warn_ok(&w->warn, &skipped))
                    tb_log_warn("rejected a message from worker %s: %s", w->name, err.msg);
                if (++w->failures >= self->opts->blocklist_after)
                    s_blocklist(self, w);
            } else if (tb_warn_ok(&self->warn_unknown, &skipped)) {
                tb_log_warn("rejected a message from unknown peer %s: %s", hex, err.msg);
            }
        } else if (m.cmd == TB_CMD_READY && !w) {
            s_on_ready(self, &id, tb_proto_rx_user_id(&rx), &m);
        } else if (!w) {
            /* Heartbeats and progress from a peer this coordinator lost or never met (one that
             * was declared dead, or served a previous coordinator) are routine; anything else
             * from it is worth a warning. */
            bool routine = m.cmd == TB_CMD_HEARTBEAT || m.cmd == TB_CMD_PROGRESS;
            if (routine || tb_warn_ok(&self->warn_unknown, &skipped))
                tb_log(routine ? TB_LOG_DEBUG : TB_LOG_WARN,
                       "rejected %s from unknown peer %s: not registered (READY first)",
                       tb_proto_cmd_name(m.cmd), hex);
        } else {
            s_on_message(self, w, &m);
        }
        if (skipped)
            tb_log_warn("%ld similar warnings not shown (at most 5 every 10 s a peer)", skipped);
        tb_proto_rx_close(&rx);
    }
}

/* ---- housekeeping ---- */

/* Expires leases. `busy_s` is how long this turn spent on our own work before getting here: time
 * in which we were not listening does not count against the workers. */
static void s_expire(tb_loop_t *self, double busy_s)
{
    double now = tb_now_s();
    double dead_s = self->opts->liveness * self->opts->heartbeat_ms / 1000.0;
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        if (!w->alive)
            continue;
        if (now - w->last_seen_s - busy_s > dead_s) {
            char why[96];
            snprintf(why, sizeof why, "silent for %.1f s", now - w->last_seen_s);
            s_worker_lost(self, w, why);
            continue;
        }
        /* a cancelled attempt whose worker never says it stopped (its answer was dropped, or it
         * ignores CANCEL) holds the worker back one liveness window, no longer: its late answer
         * is fenced off anyway */
        if (w->draining && now - w->drain_since_s > dead_s) {
            w->draining = false;
            tb_log(self->opts->verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
                   "worker %s: no answer to the cancel of job %llu attempt %u in %.1f s; it gets "
                   "work again",
                   w->name, (unsigned long long)w->drain_job, w->drain_attempt, dead_s);
        }
        tb_jobrec_t *job = s_job(self, w->job);
        double deadline_s = job ? s_deadline(self, job) : 0;
        if (job && deadline_s > 0 && now - w->lease_started_s > deadline_s) {
            tb_msg_t cancel;
            tb_msg_init(&cancel, TB_CMD_CANCEL);
            cancel.job_id = s_wire_id(self, (size_t)w->job);
            cancel.attempt = w->attempt;
            w->draining = true;
            w->drain_job = cancel.job_id;
            w->drain_attempt = w->attempt;
            w->drain_since_s = now;
            char outcome[96];
            snprintf(outcome, sizeof outcome, "timed out after %.1f s", deadline_s);
            tb_err_t err;
            tb_err_set(&err, TB_E_JOB, "%s", outcome);
            s_lease_end(self, w, TB_OUT_TIMED_OUT, outcome, true, false, &err);
            if (w->alive && s_send(self, w, &cancel) != 0)
                s_worker_lost(self, w, "unreachable");
        }
    }
}

static void s_heartbeat(tb_loop_t *self)
{
    double now = tb_now_s(), hb_s = self->opts->heartbeat_ms / 1000.0;
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        if (!w->alive || now - w->last_sent_s < hb_s)
            continue;
        tb_msg_t hb;
        tb_msg_init(&hb, TB_CMD_HEARTBEAT);
        if (s_send(self, w, &hb) != 0 && errno == EHOSTUNREACH)
            s_worker_lost(self, w, "unreachable");
    }
}

static size_t s_unfinished(const tb_loop_t *self)
{
    if (!self->running)
        return 0;
    return tb_jobtable_count(self->b.jobs) - tb_jobtable_done_count(self->b.jobs);
}

static int s_spawn_local(tb_loop_t *self, tb_err_t *err)
{
    const tb_dispatch_opts_t *o = self->opts;
    char name[32], threads[16], hb[16], live[16], give_up[32], chunk[32];
    snprintf(chunk, sizeof chunk, "%zu", o->chunk_bytes / 1024 ? o->chunk_bytes / 1024 : 1);
    snprintf(name, sizeof name, "local-%d", ++self->local_next_name);
    snprintf(threads, sizeof threads, "%d", o->threads);
    snprintf(hb, sizeof hb, "%d", o->heartbeat_ms);
    snprintf(live, sizeof live, "%d", o->liveness);
    /* Belt and braces beside PR_SET_PDEATHSIG: a worker alone for this long exits by itself. */
    snprintf(give_up, sizeof give_up, "%.0f", 10 + 5.0 * o->liveness * o->heartbeat_ms / 1000.0);
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
                          o->verbose ? "--verbose" : "--quiet",
                          NULL};
    if (tb_local_workers_spawn(self->local, name, args, err) < 0)
        return -1;
    self->local_started++;
    return 0;
}

/* Reaps local workers that exited. Their jobs run again; replacements start as the work needs
 * them (s_spawn_for_work). */
static void s_check_local(tb_loop_t *self)
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
        tb_worker_t *w = tb_registry_by_name(self->reg, name);
        if (w && w->local)
            s_worker_lost(self, w, why);
        else
            tb_log_warn("local worker %s: %s", name, why);
        if (!self->opts->bind && self->running && !self->over && s_unfinished(self) > 0 &&
            tb_local_workers_running(self->local) == 0 &&
            tb_local_workers_count(self->local) >= self->opts->workers + self->opts->max_respawns) {
            /* Farm mode waits for farm workers; local mode has nobody else to wait for. */
            tb_err_t e;
            tb_err_set(&e, TB_E_JOB,
                       "every local worker has exited and %d were restarted already (last: %s, "
                       "%s)",
                       tb_local_workers_count(self->local) - self->opts->workers, name, why);
            s_fatal(self, &e);
        }
    }
}

/* Starts a local worker when jobs are ready and no idle or starting worker can take them, up to
 * `workers` at once and workers + max_respawns in all. */
static void s_spawn_for_work(tb_loop_t *self, size_t ready_left)
{
    if (!self->local || ready_left == 0)
        return;
    int joined = 0;
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        joined += w->alive && w->local;
    }
    for (;;) {
        int running = tb_local_workers_running(self->local);
        int starting = running > joined ? running - joined : 0;
        if ((size_t)starting >= ready_left || running >= self->opts->workers ||
            tb_local_workers_count(self->local) >= self->opts->workers + self->opts->max_respawns)
            return;
        tb_err_t err;
        if (s_spawn_local(self, &err) != 0) {
            tb_log_warn("cannot start a local worker: %s", err.msg);
            return;
        }
    }
}

static void s_check_no_workers(tb_loop_t *self)
{
    double now = tb_now_s();
    if (tb_registry_alive(self->reg) > 0) {
        self->no_worker_since_s = 0;
        return;
    }
    if (self->no_worker_since_s == 0)
        self->no_worker_since_s = now;
    if (self->local && tb_registry_count(self->reg) == 0 && !self->warned_no_join &&
        tb_local_workers_count(self->local) > 0 && now - self->started_s > 10) {
        self->warned_no_join = true;
        tb_log_warn("no local worker has connected after 10 s; is the worker program right? "
                    "(--worker-program, $TB_WORKER_PROGRAM)");
    }
    if (self->opts->bind && now - self->last_wait_log_s > 10) {
        self->last_wait_log_s = now;
        tb_log_info("waiting for workers on %s (%zu of %zu %s left)",
                    tb_broker_endpoint(self->broker), s_unfinished(self),
                    tb_jobtable_count(self->b.jobs), self->b.label);
    }
    bool starting = self->local && tb_local_workers_running(self->local) > 0;
    if (self->opts->wait_workers_s > 0 && !starting &&
        now - self->no_worker_since_s > self->opts->wait_workers_s) {
        tb_err_t e;
        tb_err_set(&e, TB_E_JOB, "no worker connected for %.0f s", self->opts->wait_workers_s);
        s_fatal(self, &e);
    }
}

/* ---- the batch ---- */

/* Whether the results waiting for the caller have reached the bounds: the ones queued or in its
 * callback, the ones held for job order, and the ones a helper is decoding and checking (they land
 * without asking; counting them only once they land let a turn dispatch a job for every worker
 * while as many results were still being checked). `lookups`: store lookups in flight count too
 * (for starting more of them, not for dispatching to an idle worker). */
static bool s_at_bound(tb_loop_t *self, bool lookups)
{
    if (self->b.keep)
        return false;
    size_t count, bytes;
    tb_delivery_outstanding(self->b.delivery, &count, &bytes);
    count += tb_jobtable_held(self->b.jobs) + self->verifying + self->votes_held;
    bytes += tb_jobtable_held_bytes(self->b.jobs) + self->verifying_bytes + self->votes_bytes;
    if (count > self->b.stats->held_peak)
        self->b.stats->held_peak = count;
    size_t order = tb_jobtable_order_held_peak(self->b.jobs);
    if (order > self->b.stats->order_peak)
        self->b.stats->order_peak = order;
    if (lookups)
        count += self->looking;
    return count >= self->opts->max_held || bytes >= self->opts->max_held_bytes;
}

static size_t s_spec_bound(const tb_loop_t *self)
{
    if (self->opts->max_specs)
        return self->opts->max_specs;
    size_t alive = tb_registry_alive(self->reg), workers = (size_t)self->opts->workers;
    return (alive > workers ? alive : workers) + 2;
}

static void s_post_prep(tb_loop_t *self, size_t index)
{
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    tb_prep_t *p = calloc(1, sizeof *p);
    if (!p) {
        tb_err_t e;
        tb_err_set(&e, TB_E_NOMEM, "out of memory preparing a job");
        s_fatal(self, &e);
        return;
    }
    p->task.run = tb_prep_run;
    p->batch = self->b.id;
    p->index = index;
    p->kind = job->kind;
    p->make_spec = job->lazy ? job->make_spec : NULL;
    p->spec_user = job->spec_user;
    p->inputs = job->inputs;
    p->n_inputs = job->n_inputs;
    p->spec = job->spec;
    p->spec_bytes = job->spec_bytes;
    p->has_key = job->has_key;
    p->key = job->key;
    p->max_result = job->max_result_bytes;
    p->cache = self->b.cache;
    p->lookup = self->b.cache && !self->b.fresh;
    p->large_bytes = self->opts->large_result_bytes;
    p->want_blob = true;
    job->state = TB_JOB_PREPPING;
    self->pipeline++;
    self->looking += p->lookup && p->cache;
    tb_tasks_post(self->tasks, &p->task);
}

static bool s_idle(const tb_worker_t *w);
static bool s_on_probation(const tb_loop_t *self, const tb_worker_t *w);

/* Whether an idle worker is on probation. */
static bool s_probation_idle(const tb_loop_t *self)
{
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        const tb_worker_t *w = tb_registry_at(self->reg, i);
        if (s_idle(w) && s_on_probation(self, w))
            return true;
    }
    return false;
}

/* Starts preparing jobs, in dispatch order, while the pipeline has room and the caller keeps up
 * (a store lookup may bring a result: the ones in flight count against the bound). */
static void s_prep(tb_loop_t *self)
{
    size_t n = tb_jobtable_count(self->b.jobs), bound = s_spec_bound(self);
    bool at_bound = s_at_bound(self, true);
    while (self->prep_next < n && self->pipeline < bound && !at_bound) {
        size_t index = tb_jobtable_order(self->b.jobs, self->prep_next);
        self->prep_next++;
        if (tb_jobtable_at(self->b.jobs, index)->state == TB_JOB_QUEUED) {
            s_post_prep(self, index);
            at_bound = s_at_bound(self, true);
        }
    }
    /* In job order, the job the caller waits for starts even when the results held reach their
     * bound (the one case a made spec more than max_specs is held): otherwise the held results
     * could never go and delivery never move again. */
    int64_t wanted = at_bound ? tb_jobtable_next_wanted(self->b.jobs) : -1;
    if (wanted >= 0 && tb_jobtable_at(self->b.jobs, (size_t)wanted)->state == TB_JOB_QUEUED)
        s_post_prep(self, (size_t)wanted);
    /* A worker on probation runs the smallest job (s_dispatch), which the order above prepares
     * last: prepare it now, one spec beyond the bound (below the bound on held results). */
    int64_t smallest =
        !at_bound && s_probation_idle(self) ? tb_jobtable_probation_prep(self->b.jobs) : -1;
    if (smallest >= 0)
        s_post_prep(self, (size_t)smallest);
    size_t held = tb_jobtable_specs_held(self->b.jobs);
    if (held > self->b.stats->specs_peak)
        self->b.stats->specs_peak = held;
}

static bool s_idle(const tb_worker_t *w)
{
    return w->alive && w->job < 0 && !w->draining && w->trust != TB_TRUST_QUARANTINED;
}

/* Whether w's results are all run twice for now: verification is on, w is not trusted yet. */
static bool s_on_probation(const tb_loop_t *self, const tb_worker_t *w)
{
    return self->opts->verify != TB_VERIFY_OFF && w->trust == TB_TRUST_NEW && !w->local;
}

typedef struct {
    tb_loop_t *self;
    const tb_worker_t *w;
} s_probation_t;

/* Whether attempt rec is running; *worker gets who runs it (NULL: no longer in the registry). */
static bool s_running_worker(const tb_loop_t *self, const tb_attempt_rec_t *rec,
                             const tb_worker_t **worker)
{
    if (rec->outcome != TB_OUT_RUNNING)
        return false;
    *worker = rec->worker >= 0 ? tb_registry_at(self->reg, (size_t)rec->worker) : NULL;
    return true;
}

/* tb_jobtable_probation_job's rule for worker p->w on probation: it may take job `index` if it
 * may run it at all (s_eligible), is not running it already (a result of its own being checked),
 * and, when the job is under way, every run and result in hand of it is by a worker on probation
 * too: sharing a job on probation verifies new workers against each other, never against a run
 * that would have been checked alone. */
static bool s_probation_may_run(void *user, size_t index)
{
    const s_probation_t *p = user;
    tb_loop_t *self = p->self;
    tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, index);
    if (!s_eligible(self, index, p->w))
        return false;
    for (uint16_t a = 0; a < job->n_attempts; a++) {
        const tb_worker_t *other;
        if (!s_running_worker(self, &job->attempts[a], &other))
            continue;
        if (!other || other->conn_no == p->w->conn_no || !s_on_probation(self, other))
            return false;
    }
    for (int k = 0; job->votes && k < job->votes->n; k++) {
        int32_t vw = job->votes->v[k].worker;
        if (vw < 0 || !s_on_probation(self, tb_registry_at(self->reg, (size_t)vw)))
            return false;
    }
    return true;
}

/* Whether w, on probation, waits for the verdict on a result it gave (in hand, or being checked):
 * of a job whose runs are under way on workers on probation only (a job they share), decided as
 * soon as those finish (they started together on the smallest job). Another job started now
 * would run twice for nothing: the verdict makes w trusted. */
static bool s_awaiting_verdict(const tb_loop_t *self, const tb_worker_t *w)
{
    size_t n = tb_jobtable_count(self->b.jobs);
    for (size_t k = self->order_lo; k < n; k++) {
        const tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, tb_jobtable_order(self->b.jobs, k));
        if (job->runs == 0)
            continue;
        bool mine = s_voted(job, w->conn_no), shared = true;
        for (uint16_t a = 0; a < job->n_attempts; a++) {
            const tb_worker_t *other;
            if (!s_running_worker(self, &job->attempts[a], &other))
                continue;
            if (other && other->conn_no == w->conn_no)
                mine = true;
            else if (!other || !s_on_probation(self, other))
                shared = false;
        }
        if (mine && shared)
            return true;
    }
    return false;
}

/* Hands idle workers the largest eligible ready job; returns how many ready jobs are left that
 * nobody took. */
static size_t s_dispatch(tb_loop_t *self, bool at_bound)
{
    size_t n = tb_jobtable_count(self->b.jobs);
    while (self->order_lo < n) {
        uint8_t st =
            tb_jobtable_at(self->b.jobs, tb_jobtable_order(self->b.jobs, self->order_lo))->state;
        if (st != TB_JOB_DONE && st != TB_JOB_FAILED)
            break;
        self->order_lo++;
    }
    for (size_t k = self->order_lo; k < n; k++) {
        size_t j = tb_jobtable_order(self->b.jobs, k);
        if (tb_jobtable_at(self->b.jobs, j)->state == TB_JOB_READY)
            s_check_failed(self, j);
    }
    if (tb_jobtable_failed_job(self->b.jobs) >= 0)
        return 0;
    /* Largest first to the trusted workers. A worker on probation (verification on, not trusted
     * yet) takes second opinions of any size, and otherwise the smallest jobs (second pass): all
     * its results until its first agreement are run twice, so they should cost little. */
    for (size_t k = self->order_lo; k < n && !self->has_fatal; k++) {
        size_t j = tb_jobtable_order(self->b.jobs, k);
        tb_jobrec_t *job = tb_jobtable_at(self->b.jobs, j);
        /* a second opinion on a result in hand may always start: it is what lets that result
         * (counted against the bound) go */
        bool replica = job->votes && job->votes->n > 0;
        if (job->state != TB_JOB_READY ||
            (!replica && !tb_jobtable_may_start(self->b.jobs, j, at_bound)))
            continue;
        tb_worker_t *taker = NULL;
        for (size_t i = 0; i < tb_registry_count(self->reg) && !taker; i++) {
            tb_worker_t *w = tb_registry_at(self->reg, i);
            if (s_idle(w) && (replica || !s_on_probation(self, w)) && s_eligible(self, j, w))
                taker = w;
        }
        if (taker)
            s_grant(self, taker, j);
        else if (replica && !s_other_worker(self, j) &&
                 (job->votes->n > 1 || tb_now_s() - job->votes->waiting_since_s > S_VERIFY_WAIT_S))
            s_tiebreak(self, j);
    }
    for (size_t i = 0; i < tb_registry_count(self->reg) && !self->has_fatal; i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        if (!s_idle(w) || !s_on_probation(self, w) || s_awaiting_verdict(self, w))
            continue;
        s_probation_t p = {self, w};
        int64_t j = tb_jobtable_probation_job(self->b.jobs, at_bound, s_probation_may_run, &p);
        if (j >= 0)
            s_grant(self, w, (size_t)j);
    }
    size_t ready = 0;
    for (size_t k = self->order_lo; k < n; k++) {
        size_t j = tb_jobtable_order(self->b.jobs, k);
        ready += tb_jobtable_at(self->b.jobs, j)->state == TB_JOB_READY &&
                 tb_jobtable_may_start(self->b.jobs, j, at_bound);
    }
    return ready;
}

static void s_deliver(tb_loop_t *self)
{
    tb_result_t *r;
    int64_t index;
    while ((index = tb_jobtable_next_delivery(self->b.jobs, self->b.keep, &r)) >= 0)
        tb_delivery_push(self->b.delivery, (size_t)index, r);
}

static void s_batch_turn(tb_loop_t *self)
{
    const tb_dispatch_opts_t *o = self->opts;
    tb_err_t err;
    if (o->interrupted && *o->interrupted) {
        tb_err_set(&err, TB_E_INTERRUPTED, "interrupted with %zu of %zu %s done",
                   tb_jobtable_done_count(self->b.jobs), tb_jobtable_count(self->b.jobs),
                   self->b.label);
        s_fatal(self, &err);
    }
    s_live_conns(self);
    s_deliver(self);
    size_t ready = 0;
    if (!self->has_fatal) {
        s_prep(self);
        ready = s_dispatch(self, s_at_bound(self, false));
    }
    s_spawn_for_work(self, ready);
    if (s_unfinished(self) > 0)
        s_check_no_workers(self);
    if (tb_jobtable_failed_job(self->b.jobs) >= 0) {
        tb_jobtable_failure(self->b.jobs, &err);
        tb_delivery_close(self->b.delivery, -1, &err);
        self->over = true;
    } else if (self->has_fatal) {
        tb_delivery_close(self->b.delivery, -1, &self->fatal);
        self->over = true;
    } else if (s_unfinished(self) == 0 && tb_jobtable_held(self->b.jobs) == 0) {
        tb_delivery_close(self->b.delivery, 0, NULL);
        self->over = true;
    }
}

/* ---- the thread ---- */

static void s_turn(tb_loop_t *self)
{
    double turn_s = tb_now_s();
    s_collect(self);
    s_receive(self);
    s_check_local(self);
    tb_broker_poll_events(self->broker);
    s_expire(self, tb_now_s() - turn_s);
    s_heartbeat(self);
    s_peer_summary(self, tb_now_s());
    if (self->running && !self->over)
        s_batch_turn(self);
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        if (w->alive && w->job >= 0 && w->spec_next < w->spec_chunks)
            s_send_spec(self, w, S_SPEC_CHUNKS_A_TURN);
    }
}

static void *s_main(void *arg)
{
    tb_loop_t *self = arg;
    while (!atomic_load(&self->stop)) {
        zmq_pollitem_t items[2] = {{self->sock, 0, ZMQ_POLLIN, 0},
                                   {NULL, tb_tasks_wake_fd(self->tasks), ZMQ_POLLIN, 0}};
        long timeout = self->opts->heartbeat_ms / 4 < 100 ? self->opts->heartbeat_ms / 4 : 100;
        bool sending = false;
        for (size_t i = 0; i < tb_registry_count(self->reg) && !sending; i++) {
            tb_worker_t *w = tb_registry_at(self->reg, i);
            sending = w->alive && w->job >= 0 && w->spec_next < w->spec_chunks;
        }
        if (sending)
            timeout = 1;
        zmq_poll(items, 2, timeout < 1 ? 1 : timeout);
        pthread_mutex_lock(self->mu);
        s_turn(self);
        pthread_mutex_unlock(self->mu);
    }
    return NULL;
}

/* ---- the API ---- */

tb_loop_t *tb_loop_new(const tb_dispatch_opts_t *opts, pthread_mutex_t *mu, tb_err_t *err)
{
    tb_loop_t *self = tb_calloc(1, sizeof *self, "the dispatch loop", err);
    if (!self)
        return NULL;
    self->opts = opts;
    self->mu = mu;
    atomic_init(&self->stop, false);
    self->reg = tb_registry_new(err);
    if (!self->reg) {
        free(self);
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(self->scratch_dir, sizeof self->scratch_dir, "%s",
             opts->store_dir ? opts->store_dir
             : tmp && *tmp   ? tmp
                             : "/tmp");
    return self;
}

void tb_loop_destroy(tb_loop_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_loop_t *self = *self_p;
    tb_loop_close(self, true);
    tb_registry_destroy(&self->reg);
    free(self->live);
    free(self);
    *self_p = NULL;
}

bool tb_loop_is_open(const tb_loop_t *self)
{
    return self->open;
}

void tb_loop_wake(tb_loop_t *self)
{
    if (self->open && self->tasks)
        tb_tasks_wake(self->tasks);
}

const tb_registry_t *tb_loop_registry(const tb_loop_t *self)
{
    return self->reg;
}

int tb_loop_local_started(const tb_loop_t *self)
{
    return self->local_started;
}

int tb_loop_open(tb_loop_t *self, tb_err_t *err)
{
    const tb_dispatch_opts_t *o = self->opts;
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
    self->tasks = tb_tasks_new(o->helper_threads, err);
    if (!self->tasks) {
        tb_broker_destroy(&self->broker, 0);
        tb_local_workers_destroy(&self->local);
        return -1;
    }
    self->sock = tb_broker_socket(self->broker);
    self->open = true;
    /* which trusted results are verified: unpredictable to a worker (no output bit depends on it)
     */
    uint64_t entropy[3] = {(uint64_t)(tb_now_s() * 1e9), (uint64_t)getpid(),
                           (uint64_t)(uintptr_t)self};
    self->verify_seed = XXH3_64bits(entropy, sizeof entropy);
    if (o->bind) {
        tb_log_info("listening for workers on %s%s", tb_broker_endpoint(self->broker),
                    tb_broker_secure(self->broker) ? " (CURVE)" : "");
        if (tb_broker_secure(self->broker))
            tb_log_info("workers connect with --server-key %s", tb_broker_public_key(self->broker));
        if (o->on_listening)
            o->on_listening(o->listening_user ? o->listening_user : o->user,
                            tb_broker_endpoint(self->broker));
    }
    atomic_store(&self->stop, false);
    /* the program's SIGINT and SIGTERM go to its own threads, never to this one */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&self->thread, NULL, s_main, self);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        tb_loop_close(self, true);
        return tb_err_set(err, TB_E_INTERNAL, "cannot start the dispatch loop's thread");
    }
    self->thread_running = true;
    return 0;
}

void tb_loop_begin(tb_loop_t *self, const tb_loop_batch_t *batch)
{
    self->b = *batch;
    self->votes_held = self->votes_bytes = 0; /* the last batch's went with its job table */
    self->running = true;
    self->over = false;
    self->pipeline = 0;
    self->order_lo = 0;
    self->prep_next = 0;
    self->has_fatal = false;
    self->started_s = tb_now_s();
    self->no_worker_since_s = 0;
    if (self->tasks)
        tb_tasks_wake(self->tasks);
}

void tb_loop_end(tb_loop_t *self)
{
    self->running = false;
    self->over = false;
    /* a lease of the ended batch (there is none after a success) cannot outlive it */
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        w->job = -1;
        w->spec_next = w->spec_chunks = 0;
        s_transfer_drop(w);
    }
    memset(&self->b, 0, sizeof self->b);
}

/* Tells every worker the run is over, then stops the local ones. */
static void s_teardown(tb_loop_t *self, bool failed)
{
    int told_local = 0;
    s_peer_summary(self, self->peer_window_s + S_PEER_WINDOW_S); /* what is still counted */
    for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
        tb_worker_t *w = tb_registry_at(self->reg, i);
        if (w->warn.suppressed)
            tb_log_warn("%ld warnings about %s not shown", w->warn.suppressed, w->name);
    }
    if (self->warn_unknown.suppressed)
        tb_log_warn("%ld warnings about unregistered peers not shown",
                    self->warn_unknown.suppressed);
    if (self->sock && (!self->opts->keep_workers || self->local)) {
        for (size_t i = 0; i < tb_registry_count(self->reg); i++) {
            tb_worker_t *w = tb_registry_at(self->reg, i);
            if (!w->alive || (self->opts->keep_workers && !w->local))
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

void tb_loop_close(tb_loop_t *self, bool failed)
{
    if (!self || !self->open)
        return;
    if (self->thread_running) {
        atomic_store(&self->stop, true);
        tb_tasks_wake(self->tasks);
        pthread_join(self->thread, NULL);
        self->thread_running = false;
    }
    tb_tasks_destroy(&self->tasks, s_discard_task);
    s_teardown(self, failed);
    self->open = false;
    self->running = false;
}
