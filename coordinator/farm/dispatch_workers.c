/* The dispatch engine: workers, leases; see dispatch_internal.h and dispatch.h. */
#include "coordinator/farm/dispatch_internal.h"

/* ---- workers ---- */

void tb_dsp_id_hex(const s_worker_t *w, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < w->id_bytes && k + 3 < n && i < 8; i++, k += 2)
        snprintf(out + k, n - k, "%02x", w->id[i]);
    out[k] = '\0';
}

void tb_dsp_peer_hex(const tb_proto_frame_t *id, char *out, size_t n)
{
    size_t k = 0;
    const unsigned char *p = id->data;
    for (size_t i = 0; i < id->bytes && k + 3 < n && i < 8; i++, k += 2)
        snprintf(out + k, n - k, "%02x", p[i]);
    out[k] = '\0';
}

s_worker_t *tb_dsp_worker_by_id(tb_dispatch_t *self, const tb_proto_frame_t *id)
{
    for (size_t i = 0; i < self->n_workers; i++) {
        s_worker_t *w = &self->workers[i];
        if (w->alive && w->id_bytes == id->bytes && memcmp(w->id, id->data, id->bytes) == 0)
            return w;
    }
    return NULL;
}

void tb_dsp_conn_id(const tb_proto_frame_t *id, const char *user_id, char *out, size_t n)
{
    if (user_id)
        snprintf(out, n, "key:%.100s", user_id);
    else
        snprintf(out, n, "conn:%016llx", (unsigned long long)XXH3_64bits(id->data, id->bytes));
}

bool tb_dsp_warn_ok(tb_dsp_warn_limit_t *l, long *suppressed)
{
    /* Five warnings a 10-second window, then silence with a count. */
    double now = tb_now_s();
    *suppressed = 0;
    if (now - l->window_start_s >= 10) {
        l->window_start_s = now;
        l->in_window = 0;
    }
    if (l->in_window++ < 5) {
        *suppressed = l->suppressed;
        l->suppressed = 0;
        return true;
    }
    if (l->suppressed++ == 0)
        tb_log_warn("more than 5 warnings about one peer within 10 s: the rest are counted, not "
                    "shown");
    return false;
}

s_worker_t *tb_dsp_worker_by_name(tb_dispatch_t *self, const char *name)
{
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].alive && strcmp(self->workers[i].name, name) == 0)
            return &self->workers[i];
    return NULL;
}

int tb_dsp_send(tb_dispatch_t *self, s_worker_t *w, const tb_msg_t *msg)
{
    tb_err_t err;
    if (tb_proto_send(self->sock, w->id, w->id_bytes, msg, ZMQ_DONTWAIT, &err) != 0)
        return -1;
    w->last_sent_s = tb_now_s();
    return 0;
}

void tb_dsp_send_bye(tb_dispatch_t *self, const unsigned char *id, size_t id_bytes,
                     tb_proto_bye_t code, const char *reason)
{
    tb_msg_t bye;
    tb_msg_init(&bye, TB_CMD_DISCONNECT);
    bye.code = code;
    tb_msg_set_text(bye.text, TB_PROTO_TEXT_MAX, reason);
    tb_err_t err;
    tb_proto_send(self->sock, id, id_bytes, &bye, ZMQ_DONTWAIT, &err);
}

/* Ends w's lease. `failure` counts against the job and the worker; `lost` against the job only. */
void tb_dsp_lease_end(tb_dispatch_t *self, s_worker_t *w, const char *outcome, bool failure,
                      bool lost, const tb_err_t *job_err)
{
    if (w->job < 0)
        return;
    s_job_t *job = &self->jobs[w->job];
    size_t index = (size_t)w->job;
    tb_attempt_t *a = tb_dsp_attempt_find(job, w->attempt);
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
        tb_dsp_failed_on_add(self, job, w->conn);
        if (job_err)
            job->last_err = *job_err;
        w->failures++;
    }
    if (lost) {
        self->stats.lost++;
        job->lost++;
        /* A connection that lost the job has tried it too, for the rule below. */
        tb_dsp_failed_on_add(self, job, w->conn);
        tb_err_set(&job->lost_err, TB_E_JOB, "lost its worker %d times (last: %s)", job->lost,
                   outcome);
    }
    tb_dsp_check_failed(self, index);
    if (job->state == S_PENDING)
        tb_log_info("%s attempt %u on %s: %s; it will run again", job->label, w->attempt, w->name,
                    outcome);
    if (failure && w->alive && w->failures >= self->opts.blocklist_after)
        tb_dsp_blocklist(self, w);
}

void tb_dsp_check_failed(tb_dispatch_t *self, size_t index)
{
    s_job_t *job = &self->jobs[index];
    bool by_failures = job->failures >= self->opts.max_failures;
    if (job->state != S_PENDING || (!by_failures && job->lost < self->opts.max_lost))
        return;
    /* A job fails the run only when every live worker has failed it too: failures from
     * connections that came and went (a peer cycling its name) cannot fail a bake while a worker
     * that has not tried the job is still there (docs/distribution.md). */
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].alive && !tb_dsp_failed_on(job, self->workers[i].conn))
            return;
    job->state = S_FAILED;
    job->failed_by_losses = !by_failures;
    if (!by_failures)
        job->last_err = job->lost_err;
    self->failed_job = (int64_t)index;
}

void tb_dsp_blocklist(tb_dispatch_t *self, s_worker_t *w)
{
    /* The connection (and with CURVE its key) is blocklisted, never the declared name: another
     * peer's bad messages under a name cannot shut out the worker that owns it. */
    tb_log_warn("worker %s blocklisted after %d failed attempts (its connection %s)", w->name,
                w->failures, w->conn);
    char(*grown)[S_NAME_MAX] = realloc(self->blocklist, (self->n_blocklist + 1) * S_NAME_MAX);
    if (grown) {
        self->blocklist = grown;
        snprintf(self->blocklist[self->n_blocklist++], S_NAME_MAX, "%s", w->conn);
    }
    tb_dsp_send_bye(self, w->id, w->id_bytes, TB_BYE_REFUSED,
                    "blocklisted after repeated failures");
    tb_dsp_worker_lost(self, w, "blocklisted");
}

bool tb_dsp_blocklisted(const tb_dispatch_t *self, const char *conn)
{
    for (size_t i = 0; i < self->n_blocklist; i++)
        if (strcmp(self->blocklist[i], conn) == 0)
            return true;
    return false;
}

void tb_dsp_worker_lost(tb_dispatch_t *self, s_worker_t *w, const char *why)
{
    if (!w->alive)
        return;
    char outcome[256];
    snprintf(outcome, sizeof outcome, "lost: %s", why);
    w->alive = false;
    if (w->job >= 0)
        tb_dsp_lease_end(self, w, outcome, false, true, NULL);
    tb_transfer_reset(&w->result_in);
    tb_log_info("worker %s gone: %s", w->name, why);
}

s_worker_t *tb_dsp_worker_add(tb_dispatch_t *self, const tb_proto_frame_t *id, const char *conn,
                              const tb_msg_t *ready, bool local)
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
    snprintf(w->conn, sizeof w->conn, "%s", conn);
    w->threads = ready->threads;
    w->memory_bytes = ready->memory_bytes;
    w->alive = true;
    w->job = -1;
    w->last_seen_s = tb_now_s();
    w->local = local;
    bool seen_before = false;
    for (size_t i = 0; i + 1 < self->n_workers; i++)
        seen_before |= strcmp(self->workers[i].name, ready->name) == 0;
    if (!seen_before)
        self->stats.workers_seen++;
    /* Accepts nothing until a lease sets the limit of its job's result (s_lease_grant). */
    tb_transfer_init(&w->result_in, 0);
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
    tb_attempt_t *a = tb_dsp_attempt_new(job, w->name);
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
    /* The blob of the largest result this job's spec can produce (zstd's bound over it plus the
     * blob header): a larger announcement is refused before a byte is buffered. */
    size_t max = job->max_result_bytes;
    tb_transfer_reset(&w->result_in);
    tb_transfer_init(&w->result_in, (uint64_t)max + max / 128 + 4096 + TB_BLOB_HEADER_BYTES);
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
        m.job_id = tb_dsp_wire_id(self, index);
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
        if (tb_dsp_send(self, w, &m) != 0) {
            char why[160];
            snprintf(why, sizeof why, "cannot send the job: %s", zmq_strerror(errno));
            tb_dsp_worker_lost(self, w, why);
            return;
        }
    }
}

/* Whether job may go to w: not to a worker it failed on, unless every live worker has failed it. */
static bool s_eligible(const tb_dispatch_t *self, const s_job_t *job, const s_worker_t *w)
{
    if (!tb_dsp_failed_on(job, w->conn))
        return true;
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].alive && !tb_dsp_failed_on(job, self->workers[i].conn))
            return false;
    return true;
}

void tb_dsp_dispatch_pending(tb_dispatch_t *self)
{
    for (size_t j = 0; j < self->n_jobs && self->failed_job < 0; j++)
        tb_dsp_check_failed(self, j);
    if (self->failed_job >= 0)
        return;
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
