/* The job table; see jobtable.h. Jobs live in one array (index = job index); the dispatch order and
 * the unordered delivery queue are arrays of indices beside it. */
#include "coordinator/farm/jobtable.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/blob.h"
#include "common/log.h"
#include "common/version.h"

/* An outcome's text in the records: long enough for a job's error, short enough that a job's
 * record stays a few hundred bytes. */
#define S_TEXT_MAX 160

struct tb_jobtable_t {
    tb_jobtable_opts_t opts;
    tb_jobrec_t *jobs;
    size_t n, cap;
    size_t *order;
    bool sealed;
    /* delivery */
    size_t next_ordered; /* job order: the first job not yet pushed */
    size_t *done_fifo;   /* unordered: done, not yet pushed, oldest first */
    size_t fifo_head, fifo_n;
    size_t held;
    size_t held_bytes;      /* of the held results, in memory */
    size_t order_held_peak; /* job order: the most done results behind an unfinished job */
    /* counters */
    size_t n_done;
    double done_weight, done_cells, total_weight;
    int64_t failed_job;
};

static size_t s_mem_bytes(const tb_result_t *r)
{
    return r && !tb_result_mapped(r) ? tb_result_bytes(r) : 0;
}

static char *s_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

tb_jobtable_t *tb_jobtable_new(const tb_jobtable_opts_t *opts, tb_err_t *err)
{
    tb_jobtable_t *self = tb_calloc(1, sizeof *self, "the job table", err);
    if (!self)
        return NULL;
    self->opts = *opts;
    if (self->opts.max_failures <= 0)
        self->opts.max_failures = 3;
    if (self->opts.max_lost <= 0)
        self->opts.max_lost = 8;
    self->failed_job = -1;
    return self;
}

void tb_vote_free(tb_vote_t *v)
{
    tb_result_destroy(&v->result);
    free(v->blob);
    v->blob = NULL;
    if (v->sinking)
        tb_cache_sink_abort(&v->sink);
    v->sinking = false;
}

static void s_job_free(tb_jobrec_t *job)
{
    for (int k = 0; job->votes && k < job->votes->n; k++)
        tb_vote_free(&job->votes->v[k]);
    free(job->votes);
    free(job->label);
    free(job->spec);
    free(job->spec_blob);
    free(job->inputs);
    for (size_t k = 0; k < job->n_attempts; k++)
        free(job->attempts[k].text);
    free(job->attempts);
    free(job->failed_on);
    free(job->error);
    tb_result_destroy(&job->result);
}

void tb_jobtable_destroy(tb_jobtable_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_jobtable_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++)
        s_job_free(&self->jobs[i]);
    free(self->jobs);
    free(self->order);
    free(self->done_fifo);
    free(self);
    *self_p = NULL;
}

int64_t tb_jobtable_add(tb_jobtable_t *self, const char *kind_name, const void *spec,
                        size_t spec_bytes, tb_jobtable_spec_fn make_spec, void *spec_user,
                        const char *label, double weight, double cells, double deadline_s,
                        const uint64_t *inputs, size_t n_inputs, tb_err_t *err)
{
    const tb_job_kind_t *kind = tb_job_find(kind_name);
    if (!kind)
        return tb_err_set(err, TB_E_INVALID, "unknown job kind \"%s\"",
                          kind_name ? kind_name : "(null)");
    if (self->sealed)
        return tb_err_set(err, TB_E_INTERNAL, "a job added to a batch that has started");
    if (!spec && !make_spec)
        return tb_err_set(err, TB_E_INVALID, "%s job: neither spec bytes nor make_spec",
                          kind->name);
    if (spec && spec_bytes > kind->max_spec_bytes)
        return tb_err_set(err, TB_E_INVALID, "%s: spec of %zu bytes, more than the %zu allowed",
                          kind->name, spec_bytes, kind->max_spec_bytes);
    if (n_inputs > UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "%s: too many input hashes", kind->name);
    if (self->n == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 16;
        tb_jobrec_t *grown = realloc(self->jobs, cap * sizeof *grown);
        if (!grown)
            return tb_err_set(err, TB_E_NOMEM, "out of memory adding a job");
        self->jobs = grown;
        self->cap = cap;
    }
    size_t index = self->n;
    tb_jobrec_t *job = &self->jobs[index];
    memset(job, 0, sizeof *job);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "job %zu", index);
    job->kind = kind;
    job->label = s_strdup(label ? label : fallback);
    job->lazy = spec == NULL;
    job->make_spec = make_spec;
    job->spec_user = spec_user;
    job->weight = weight;
    job->cells = cells;
    job->deadline_s = (float)deadline_s;
    job->worker = -1;
    bool ok = job->label != NULL;
    if (ok && !job->lazy) {
        job->spec = malloc(spec_bytes ? spec_bytes : 1);
        ok = job->spec != NULL;
        if (ok && spec_bytes)
            memcpy(job->spec, spec, spec_bytes);
        job->spec_bytes = spec_bytes;
    }
    if (ok && job->lazy && n_inputs) {
        job->inputs = malloc(n_inputs * sizeof *job->inputs);
        ok = job->inputs != NULL;
        if (ok)
            memcpy(job->inputs, inputs, n_inputs * sizeof *job->inputs);
        job->n_inputs = (uint32_t)n_inputs;
    }
    if (!ok) {
        s_job_free(job);
        return tb_err_set(err, TB_E_NOMEM, "out of memory adding a job");
    }
    if (!job->lazy) {
        job->spec_xxh3 = XXH3_64bits(job->spec, spec_bytes);
        job->max_result_bytes = tb_job_result_bound(kind, job->spec, spec_bytes);
        tb_cache_key_make(&job->key, tb_build_id(), kind->name, job->spec, spec_bytes, inputs,
                          n_inputs);
        job->has_key = true;
    }
    self->total_weight += weight;
    self->n++;
    return (int64_t)index;
}

size_t tb_jobtable_count(const tb_jobtable_t *self)
{
    return self->n;
}

tb_jobrec_t *tb_jobtable_at(const tb_jobtable_t *self, size_t i)
{
    return i < self->n ? &self->jobs[i] : NULL;
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

int tb_jobtable_seal(tb_jobtable_t *self, tb_err_t *err)
{
    size_t n = self->n ? self->n : 1;
    s_rank_t *rank = tb_calloc(n, sizeof *rank, "job order", err);
    free(self->order);
    self->order = tb_calloc(n, sizeof *self->order, "job order", err);
    free(self->done_fifo);
    self->done_fifo = tb_calloc(n, sizeof *self->done_fifo, "job order", err);
    if (!rank || !self->order || !self->done_fifo) {
        free(rank);
        return -1;
    }
    for (size_t i = 0; i < self->n; i++)
        rank[i] = (s_rank_t){self->jobs[i].weight, i};
    qsort(rank, self->n, sizeof *rank, s_compare_rank);
    for (size_t i = 0; i < self->n; i++)
        self->order[i] = rank[i].index;
    free(rank);
    self->sealed = true;
    return 0;
}

size_t tb_jobtable_order(const tb_jobtable_t *self, size_t k)
{
    return self->order[k];
}

int tb_jobtable_install_spec(tb_jobtable_t *self, size_t index, void **spec_p, size_t bytes,
                             uint64_t spec_xxh3, const tb_cache_key_t *key, size_t max_result,
                             tb_err_t *err)
{
    tb_jobrec_t *job = &self->jobs[index];
    void *spec = *spec_p;
    *spec_p = NULL;
    if (bytes > job->kind->max_spec_bytes) {
        free(spec);
        return tb_err_set(err, TB_E_INVALID, "%s: spec of %zu bytes, more than the %zu allowed",
                          job->label, bytes, job->kind->max_spec_bytes);
    }
    if (job->has_key && spec_xxh3 != job->spec_xxh3) {
        free(spec);
        return tb_err_set(err, TB_E_INTERNAL,
                          "%s: its spec was made again with other bytes (XXH3 %016llx, first "
                          "%016llx): make_spec must give the same bytes every time",
                          job->label, (unsigned long long)spec_xxh3,
                          (unsigned long long)job->spec_xxh3);
    }
    free(job->spec);
    job->spec = spec;
    job->spec_bytes = bytes;
    if (!job->has_key) {
        job->spec_xxh3 = spec_xxh3;
        job->max_result_bytes = max_result;
        job->key = *key;
        job->has_key = true;
        free(job->inputs);
        job->inputs = NULL;
        job->n_inputs = 0;
    }
    return 0;
}

void tb_jobtable_drop_spec(tb_jobtable_t *self, size_t index)
{
    tb_jobrec_t *job = &self->jobs[index];
    free(job->spec_blob);
    job->spec_blob = NULL;
    job->spec_blob_bytes = 0;
    if (job->lazy) {
        free(job->spec);
        job->spec = NULL;
        job->spec_bytes = 0;
    }
}

void tb_jobtable_keep_blob_only(tb_jobtable_t *self, size_t index)
{
    tb_jobrec_t *job = &self->jobs[index];
    if (job->lazy && job->spec_blob) {
        free(job->spec);
        job->spec = NULL;
    }
}

size_t tb_jobtable_specs_held(const tb_jobtable_t *self)
{
    size_t k = 0;
    for (size_t i = 0; i < self->n; i++)
        k += self->jobs[i].lazy && (self->jobs[i].spec != NULL || self->jobs[i].spec_blob != NULL);
    return k;
}

uint32_t tb_jobtable_attempt_begin(tb_jobtable_t *self, size_t index, int32_t worker)
{
    tb_jobrec_t *job = &self->jobs[index];
    if (job->n_attempts == job->cap_attempts) {
        if (job->cap_attempts >= UINT16_MAX / 2)
            return 0;
        uint16_t cap = job->cap_attempts ? (uint16_t)(2 * job->cap_attempts) : 2;
        tb_attempt_rec_t *grown = realloc(job->attempts, cap * sizeof *grown);
        if (!grown)
            return 0;
        job->attempts = grown;
        job->cap_attempts = cap;
    }
    tb_attempt_rec_t *a = &job->attempts[job->n_attempts++];
    memset(a, 0, sizeof *a);
    a->attempt = ++job->last_attempt;
    a->worker = worker;
    a->outcome = TB_OUT_RUNNING;
    a->started_s = tb_now_s();
    return a->attempt;
}

tb_attempt_rec_t *tb_jobtable_attempt(tb_jobtable_t *self, size_t index, uint32_t attempt)
{
    tb_jobrec_t *job = &self->jobs[index];
    for (size_t k = 0; k < job->n_attempts; k++)
        if (job->attempts[k].attempt == attempt)
            return &job->attempts[k];
    return NULL;
}

void tb_jobtable_attempt_end(tb_jobtable_t *self, size_t index, uint32_t attempt,
                             tb_outcome_t outcome, const char *text, double seconds)
{
    tb_attempt_rec_t *a = tb_jobtable_attempt(self, index, attempt);
    if (!a)
        return;
    a->outcome = (uint8_t)outcome;
    a->seconds = (float)seconds;
    free(a->text);
    a->text = NULL;
    if (outcome != TB_OUT_OK && outcome != TB_OUT_RUNNING && text) {
        char buf[S_TEXT_MAX];
        snprintf(buf, sizeof buf, "%s", text);
        a->text = s_strdup(buf);
    }
}

const char *tb_jobtable_outcome_text(const tb_attempt_rec_t *a)
{
    if (a->outcome == TB_OUT_OK)
        return "ok";
    if (a->outcome == TB_OUT_RUNNING)
        return "running";
    return a->text ? a->text : "failed";
}

static void s_failed_on_add(tb_jobrec_t *job, uint32_t conn_no)
{
    for (size_t k = 0; k < job->n_failed_on; k++)
        if (job->failed_on[k] == conn_no)
            return;
    if (job->n_failed_on == job->cap_failed_on) {
        if (job->cap_failed_on >= UINT16_MAX / 2)
            return;
        uint16_t cap = job->cap_failed_on ? (uint16_t)(2 * job->cap_failed_on) : 2;
        uint32_t *grown = realloc(job->failed_on, cap * sizeof *grown);
        if (!grown)
            return;
        job->failed_on = grown;
        job->cap_failed_on = cap;
    }
    job->failed_on[job->n_failed_on++] = conn_no;
}

bool tb_jobtable_failed_on(const tb_jobtable_t *self, size_t index, uint32_t conn_no)
{
    const tb_jobrec_t *job = &self->jobs[index];
    for (size_t k = 0; k < job->n_failed_on; k++)
        if (job->failed_on[k] == conn_no)
            return true;
    return false;
}

static void s_set_error(tb_jobrec_t *job, tb_errcode_t code, const char *msg)
{
    free(job->error);
    job->error = s_strdup(msg);
    job->error_code = (uint8_t)code;
}

void tb_jobtable_requeue(tb_jobtable_t *self, size_t index)
{
    tb_jobrec_t *job = &self->jobs[index];
    job->worker = -1;
    job->progress = 0;
    job->progress_t0_s = 0; /* and received_s: one clock */
    job->state = TB_JOB_READY;
}

uint16_t tb_peak_pack(uint64_t bytes)
{
    uint64_t kib = bytes >> 10;
    if (kib < 2048)
        return (uint16_t)kib;
    int e = 63 - __builtin_clzll((unsigned long long)kib) - 10; /* kib in [2^(10+e), 2^(11+e)) */
    if (e > 31)
        return UINT16_MAX;
    return (uint16_t)(((unsigned)e << 11) | (unsigned)((kib >> (e - 1)) - 2048));
}

uint64_t tb_peak_unpack(uint16_t code)
{
    unsigned e = code >> 11, m = code & 2047u;
    uint64_t kib = e == 0 ? m : (uint64_t)(2048 + m) << (e - 1);
    return kib << 10;
}

uint16_t tb_peak_pack_up(uint64_t bytes)
{
    uint16_t c = tb_peak_pack(bytes);
    /* the codes are in the order of their values: the next one is the next value up */
    return tb_peak_unpack(c) < bytes && c < UINT16_MAX ? (uint16_t)(c + 1) : c;
}

void tb_jobtable_peaks(const tb_jobtable_t *self, tb_jobtable_peaks_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < self->n; i++) {
        const tb_jobrec_t *job = &self->jobs[i];
        uint64_t bound = tb_peak_unpack(job->memory_bound);
        for (size_t k = 0; k < job->n_attempts; k++) {
            const tb_attempt_rec_t *a = &job->attempts[k];
            uint64_t peak = tb_peak_unpack(a->peak);
            if (a->peak == 0)
                continue;
            out->measured++;
            if (peak > out->peak) {
                out->peak = peak;
                out->peak_job = job;
                out->peak_at = a;
            }
            if (job->memory_bound == 0)
                continue;
            out->bounded++;
            out->over += peak > bound;
            double ratio = (double)peak / (double)bound;
            if (ratio > out->worst_ratio) {
                out->worst_ratio = ratio;
                out->worst_job = job;
                out->worst_at = a;
            }
        }
    }
}

void tb_jobrec_progress(tb_jobrec_t *job, double fraction)
{
    if (!(fraction >= 0 && fraction <= 1))
        return;
    double now = tb_now_s();
    if (job->state == TB_JOB_LEASED && (job->progress_t0_s <= 0 || fraction < job->progress)) {
        job->progress_t0_s = now;
        job->progress_p0 = job->rate_p1 = (float)fraction;
        job->rate_t1 = job->rate_t_last = 0;
    } else if (job->state == TB_JOB_LEASED) {
        /* the newer anchor becomes the older once it is a window old, and now the newer one: the
         * rate is always over one to two windows, the latest */
        double t1 = job->progress_t0_s + job->rate_t1;
        if (job->rate_t1 <= 0) {
            job->rate_t1 = (float)(now - job->progress_t0_s);
            job->rate_p1 = (float)fraction;
        } else if (now - t1 >= TB_JOB_RATE_WINDOW_S) {
            job->progress_t0_s = t1;
            job->progress_p0 = job->rate_p1;
            job->rate_t1 = (float)(now - t1);
            job->rate_p1 = (float)fraction;
        }
        job->rate_t_last = (float)(now - job->progress_t0_s);
    }
    job->progress = (float)fraction;
}

void tb_jobtable_count_failure(tb_jobtable_t *self, size_t index, uint32_t conn_no, bool lost,
                               const tb_err_t *job_err, const char *outcome)
{
    tb_jobrec_t *job = &self->jobs[index];
    /* A connection that lost the job has tried it too, for the rule of tb_jobtable_check_failed. */
    s_failed_on_add(job, conn_no);
    if (lost) {
        job->lost++;
        if (!job->error || job->failures == 0) {
            char msg[TB_ERR_MSG_MAX];
            snprintf(msg, sizeof msg, "lost its worker %d times (last: %s)", job->lost,
                     outcome ? outcome : "?");
            s_set_error(job, TB_E_JOB, msg);
        }
    } else {
        job->failures++;
        if (job_err)
            s_set_error(job, job_err->code == TB_OK ? TB_E_JOB : job_err->code, job_err->msg);
    }
    job->worker = -1;
    job->progress = 0;
    job->progress_t0_s = 0; /* and received_s: one clock */
    job->state = TB_JOB_READY;
}

bool tb_jobtable_check_failed(tb_jobtable_t *self, size_t index, const uint32_t *live,
                              size_t n_live)
{
    tb_jobrec_t *job = &self->jobs[index];
    bool by_failures = job->failures >= self->opts.max_failures;
    if (job->state != TB_JOB_READY || (!by_failures && job->lost < self->opts.max_lost))
        return false;
    /* A job fails the run only when every live worker has failed it too: failures from
     * connections that came and went (a peer cycling its name) cannot fail a bake while a worker
     * that has not tried the job is still there (docs/distribution.md). */
    for (size_t i = 0; i < n_live; i++)
        if (!tb_jobtable_failed_on(self, index, live[i]))
            return false;
    job->state = TB_JOB_FAILED;
    job->failed_by_losses = !by_failures;
    if (!by_failures) {
        char msg[TB_ERR_MSG_MAX];
        const char *last =
            job->n_attempts ? tb_jobtable_outcome_text(&job->attempts[job->n_attempts - 1]) : "?";
        snprintf(msg, sizeof msg, "lost its worker %d times (last: %s)", job->lost, last);
        s_set_error(job, TB_E_JOB, msg);
    }
    if (self->failed_job < 0)
        self->failed_job = (int64_t)index;
    return true;
}

int64_t tb_jobtable_failed_job(const tb_jobtable_t *self)
{
    return self->failed_job;
}

void tb_jobtable_failure(const tb_jobtable_t *self, tb_err_t *err)
{
    if (self->failed_job < 0) {
        tb_err_set(err, TB_E_INTERNAL, "no job failed");
        return;
    }
    const tb_jobrec_t *job = &self->jobs[self->failed_job];
    tb_err_set(err, job->error_code == TB_OK ? TB_E_JOB : (tb_errcode_t)job->error_code, "%s",
               job->error ? job->error : "failed");
    if (!job->failed_by_losses)
        tb_err_prefix(err, "%s failed %d times (on %d different workers)", job->label,
                      job->failures, job->n_failed_on);
    else /* its error says how often it lost its worker */
        tb_err_prefix(err, "%s", job->label);
}

void tb_jobtable_done(tb_jobtable_t *self, size_t index, tb_result_t **result_p, uint64_t xxh3,
                      int32_t worker, double seconds, bool from_store)
{
    tb_jobrec_t *job = &self->jobs[index];
    job->state = TB_JOB_DONE;
    job->result = *result_p;
    *result_p = NULL;
    job->result_bytes = job->result ? tb_result_bytes(job->result) : 0;
    job->result_xxh3 = xxh3;
    job->from_store = from_store;
    job->worker = worker;
    job->seconds = (float)seconds;
    job->progress = 1;
    if (job->received_s > 0)
        job->take_in_s = (float)(tb_now_s() - job->received_s);
    job->received_s = 0;
    self->n_done++;
    self->done_weight += job->weight;
    self->done_cells += job->cells;
    self->held++;
    self->held_bytes += s_mem_bytes(job->result);
    if (self->opts.unordered) {
        self->done_fifo[(self->fifo_head + self->fifo_n++) % self->n] = index;
        return;
    }
    /* held for order: the held ones past the first unfinished job (the run of done ones before it
     * may go now; it is held results long at most) */
    size_t first = self->next_ordered;
    while (first < self->n && self->jobs[first].state == TB_JOB_DONE)
        first++;
    size_t behind = self->held - (first - self->next_ordered);
    if (first < self->n && behind > self->order_held_peak)
        self->order_held_peak = behind;
}

int64_t tb_jobtable_next_delivery(tb_jobtable_t *self, bool keep, tb_result_t **result_p)
{
    *result_p = NULL;
    int64_t index = -1;
    if (self->opts.unordered) {
        if (self->fifo_n == 0)
            return -1;
        index = (int64_t)self->done_fifo[self->fifo_head];
        self->fifo_head = (self->fifo_head + 1) % self->n;
        self->fifo_n--;
    } else {
        if (self->next_ordered >= self->n || self->jobs[self->next_ordered].state != TB_JOB_DONE)
            return -1;
        index = (int64_t)self->next_ordered++;
    }
    tb_jobrec_t *job = &self->jobs[index];
    job->pushed = true;
    self->held--;
    self->held_bytes -= s_mem_bytes(job->result);
    if (!keep) {
        *result_p = job->result;
        job->result = NULL;
    }
    return index;
}

size_t tb_jobtable_held(const tb_jobtable_t *self)
{
    return self->held;
}

int64_t tb_jobtable_next_wanted(const tb_jobtable_t *self)
{
    return self->opts.unordered || self->next_ordered >= self->n ? -1 : (int64_t)self->next_ordered;
}

size_t tb_jobtable_held_bytes(const tb_jobtable_t *self)
{
    return self->held_bytes;
}

size_t tb_jobtable_order_held_peak(const tb_jobtable_t *self)
{
    return self->order_held_peak;
}

bool tb_jobtable_may_start(const tb_jobtable_t *self, size_t index, bool at_bound)
{
    if (!at_bound)
        return true;
    return !self->opts.unordered && index == self->next_ordered;
}

int64_t tb_jobtable_probation_job(const tb_jobtable_t *self, bool at_bound,
                                  bool (*may_run)(void *user, size_t index), void *user)
{
    for (size_t k = self->n; k-- > 0;) {
        size_t j = self->order[k];
        const tb_jobrec_t *job = &self->jobs[j];
        int in_hand = job->votes ? job->votes->n : 0;
        switch (job->state) {
        case TB_JOB_PREPPING:
            return -1;
        case TB_JOB_READY:
            if (tb_jobtable_may_start(self, j, at_bound) && may_run(user, j))
                return (int64_t)j;
            break;
        case TB_JOB_LEASED:
        case TB_JOB_VERIFYING:
            if (job->runs > 0 && job->runs + in_hand < TB_MAX_VOTES &&
                tb_jobtable_may_start(self, j, at_bound) && may_run(user, j))
                return (int64_t)j;
            break;
        default: /* QUEUED (prepared on request), DONE, FAILED */
            break;
        }
    }
    return -1;
}

int64_t tb_jobtable_probation_prep(const tb_jobtable_t *self)
{
    for (size_t k = self->n; k-- > 0;) {
        size_t j = self->order[k];
        uint8_t st = self->jobs[j].state;
        if (st == TB_JOB_QUEUED)
            return (int64_t)j;
        if (st == TB_JOB_READY || st == TB_JOB_PREPPING)
            return -1;
    }
    return -1;
}

size_t tb_jobtable_done_count(const tb_jobtable_t *self)
{
    return self->n_done;
}

double tb_jobtable_done_weight(const tb_jobtable_t *self)
{
    return self->done_weight;
}

double tb_jobtable_done_cells(const tb_jobtable_t *self)
{
    return self->done_cells;
}

double tb_jobtable_total_weight(const tb_jobtable_t *self)
{
    return self->total_weight;
}

const char *tb_job_state_name(tb_job_state_t s)
{
    switch (s) {
    case TB_JOB_LEASED:
    case TB_JOB_VERIFYING:
        return "running";
    case TB_JOB_DONE:
        return "done";
    case TB_JOB_FAILED:
        return "failed";
    default:
        return "queued";
    }
}

static cJSON *s_attempt_json(const tb_attempt_rec_t *a, const char *(*name_of)(void *, int32_t),
                             void *user, double t0)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "attempt", a->attempt);
    cJSON_AddStringToObject(o, "worker",
                            a->worker < 0 ? "in-process"
                            : name_of     ? name_of(user, a->worker)
                                          : "?");
    cJSON_AddStringToObject(o, "outcome", tb_jobtable_outcome_text(a));
    if (a->verify)
        cJSON_AddBoolToObject(o, "verify", true);
    bool running = a->outcome == TB_OUT_RUNNING;
    cJSON_AddNumberToObject(o, "seconds", running ? tb_now_s() - a->started_s : a->seconds);
    cJSON_AddNumberToObject(o, "start_s", a->started_s - t0);
    if (a->peak > 0)
        cJSON_AddNumberToObject(o, "peak_rss_bytes", (double)tb_peak_unpack(a->peak));
    return o;
}

cJSON *tb_jobtable_job_json(const tb_jobtable_t *self, size_t i,
                            const char *(*name_of)(void *user, int32_t worker), void *user,
                            double t0)
{
    const tb_jobrec_t *job = &self->jobs[i];
    cJSON *o = cJSON_CreateObject();
    char key[33] = "", xxh[20];
    if (job->has_key)
        tb_cache_key_hex(&job->key, key);
    snprintf(xxh, sizeof xxh, "%016llx", (unsigned long long)job->result_xxh3);
    bool done = job->state == TB_JOB_DONE;
    cJSON_AddNumberToObject(o, "index", (double)i);
    cJSON_AddStringToObject(o, "label", job->label);
    cJSON_AddStringToObject(o, "kind", job->kind->name);
    cJSON_AddStringToObject(o, "key", key);
    cJSON_AddBoolToObject(o, "done", done);
    cJSON_AddStringToObject(o, "state", tb_job_state_name((tb_job_state_t)job->state));
    cJSON_AddNumberToObject(o, "weight", job->weight);
    cJSON_AddNumberToObject(o, "cells", job->cells);
    if (job->memory_bound)
        cJSON_AddNumberToObject(o, "memory_bound_bytes", (double)tb_peak_unpack(job->memory_bound));
    else
        cJSON_AddNullToObject(o, "memory_bound_bytes");
    cJSON_AddNumberToObject(o, "progress", job->progress);
    if (job->state == TB_JOB_FAILED || (!done && job->error))
        cJSON_AddStringToObject(o, "error", job->error ? job->error : "failed");
    cJSON_AddBoolToObject(o, "from_store", job->from_store);
    if (job->verified)
        cJSON_AddBoolToObject(o, "verified", true);
    /* its result is in the coordinator's hands (checked, stored), no longer on a worker (a second
     * opinion of it on another worker is not seen here: the cost model then sees that worker free)
     */
    if (job->state == TB_JOB_VERIFYING && job->received_s > 0 && job->worker >= 0)
        cJSON_AddBoolToObject(o, "received", true);
    if (done && job->take_in_s > 0)
        cJSON_AddNumberToObject(o, "take_in_s", job->take_in_s);
    if (job->state == TB_JOB_LEASED && job->progress_t0_s > 0) {
        cJSON *r = cJSON_AddObjectToObject(o, "progress_rate");
        /* the rate over [older anchor, latest report]; the report's age beside it, so a page
         * written between two reports neither counts that wait as slowness nor as work left */
        double last = job->progress_t0_s + job->rate_t_last;
        cJSON_AddNumberToObject(r, "from", job->progress_p0);
        cJSON_AddNumberToObject(r, "since_s", job->rate_t_last);
        cJSON_AddNumberToObject(r, "age_s", tb_now_s() - last);
    }
    const char *who = !done             ? ""
                      : job->from_store ? "store"
                      : job->worker < 0 ? "in-process"
                      : name_of         ? name_of(user, job->worker)
                                        : "?";
    cJSON_AddStringToObject(o, "worker", who);
    cJSON_AddNumberToObject(o, "seconds", job->seconds);
    cJSON_AddNumberToObject(o, "result_bytes", (double)job->result_bytes);
    cJSON_AddNumberToObject(o, "deadline_s",
                            job->deadline_s > 0 ? job->deadline_s : job->default_deadline_s);
    cJSON_AddStringToObject(o, "result_xxh3", done ? xxh : "");
    cJSON *attempts = cJSON_AddArrayToObject(o, "attempts");
    size_t n = job->n_attempts, keep = TB_JOBTABLE_RECORD_ATTEMPTS;
    for (size_t k = 0; k < n; k++) {
        /* the first half and the last half of the bound: how it started and how it ended */
        if (n > keep && k >= keep / 2 && k < n - keep / 2)
            continue;
        cJSON_AddItemToArray(attempts, s_attempt_json(&job->attempts[k], name_of, user, t0));
    }
    if (n > keep)
        cJSON_AddNumberToObject(o, "attempts_omitted", (double)(n - keep));
    return o;
}
