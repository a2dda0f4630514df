/* The dispatch engine: messages; see dispatch_internal.h and dispatch.h. */
#include "coordinator/farm/dispatch_internal.h"

/* ---- messages ---- */

static void s_on_ready(tb_dispatch_t *self, const tb_proto_frame_t *id, const char *user_id,
                       const tb_msg_t *m)
{
    char hex[20];
    tb_dsp_peer_hex(id, hex, sizeof hex);
    if (id->bytes > sizeof((s_worker_t *)0)->id) {
        tb_log_warn("rejected READY from peer %s: routing id too long", hex);
        return;
    }
    char conn[S_NAME_MAX];
    tb_dsp_conn_id(id, user_id, conn, sizeof conn);
    if (strcmp(m->build_id, tb_build_id()) != 0) {
        char why[400];
        snprintf(why, sizeof why, "build id %s differs from the coordinator's %s", m->build_id,
                 tb_build_id());
        tb_log_warn("refused worker %s: %s", m->name, why);
        tb_dsp_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED, why);
        self->stats.workers_refused++;
        return;
    }
    if (tb_dsp_blocklisted(self, conn)) {
        tb_log_warn("refused worker %s (%s): blocklisted", m->name, conn);
        tb_dsp_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED,
                        "blocklisted after repeated failures");
        self->stats.workers_refused++;
        return;
    }
    /* Identity is the connection, not the declared name (docs/distribution.md, "Worker
     * identity"). A READY under the name of a live worker from another connection is refused and
     * changes nothing, unless the old connection is gone; the same CURVE key may take over its own
     * name at once (a worker that reconnected). The refused newcomer gets no answer: an honest
     * worker retries after its back-off. */
    s_worker_t *old = tb_dsp_worker_by_name(self, m->name);
    if (old && !(user_id && strcmp(old->conn, conn) == 0)) {
        /* An honest worker that reconnected has closed its old connection: a send to it fails
         * (ZMQ_ROUTER_MANDATORY), and the newcomer takes the name. A live one answers. */
        tb_msg_t probe;
        tb_msg_init(&probe, TB_CMD_HEARTBEAT);
        if (tb_dsp_send(self, old, &probe) != 0) {
            tb_dsp_worker_lost(self, old, "its connection is gone (it reconnected)");
            old = NULL;
        }
    }
    if (old && !(user_id && strcmp(old->conn, conn) == 0)) {
        tb_log_warn("refused READY from %s under the name %s: a live worker (%s) holds it", conn,
                    m->name, old->conn);
        self->stats.workers_refused++;
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
        tb_dsp_send_bye(self, id->data, id->bytes, TB_BYE_REFUSED,
                        "the names local-N belong to the coordinator's local helpers");
        self->stats.workers_refused++;
        return;
    }
    if (old)
        tb_dsp_worker_lost(self, old, "reconnected under a new connection");
    s_worker_t *w = tb_dsp_worker_add(self, id, conn, m, local);
    if (!w)
        return;
    tb_log(self->opts.verbose || !w->local ? TB_LOG_INFO : TB_LOG_DEBUG,
           "worker %s joined (%u threads, %.1f GiB)", w->name, w->threads,
           (double)w->memory_bytes / (1 << 30));
    tb_msg_t hb;
    tb_msg_init(&hb, TB_CMD_HEARTBEAT);
    tb_dsp_send(self, w, &hb);
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
        tb_dsp_lease_end(self, w, outcome, true, false, &err);
        return;
    }
    /* Verified before it is stored or used: it must answer this job's spec (docs/distribution.md,
     * "Verifying results"); anything else is a failed attempt by this worker. */
    if (tb_job_check_result(job->kind_def, job->spec, job->spec_bytes, data, bytes, &err) != 0) {
        tb_log_warn("rejected the result of %s attempt %u from %s: %s", job->label, w->attempt,
                    w->name, err.msg);
        char outcome[256];
        snprintf(outcome, sizeof outcome, "wrong result: %s", err.msg);
        free(blob);
        free(data);
        tb_dsp_lease_end(self, w, outcome, true, false, &err);
        return;
    }
    double seconds = tb_now_s() - w->lease_started_s;
    tb_attempt_t *a = tb_dsp_attempt_find(job, w->attempt);
    if (a) {
        snprintf(a->outcome, sizeof a->outcome, "ok");
        a->seconds = seconds;
    }
    tb_log(self->opts.verbose ? TB_LOG_INFO : TB_LOG_DEBUG,
           "%s attempt %u done by %s in %.2f s (%zu bytes)", job->label, w->attempt, w->name,
           seconds, bytes);
    tb_dsp_store(self, index, blob, blob_bytes, NULL, 0);
    free(blob);
    w->busy_s += seconds;
    w->jobs_done++;
    w->job = -1;
    tb_dsp_job_done(self, index, data, bytes, w->name, seconds, false);
}

/* Whether (job, attempt) is the live lease held by w. */
static bool s_holds(const tb_dispatch_t *self, const s_worker_t *w, const tb_msg_t *m)
{
    return w->job >= 0 && tb_dsp_wire_id(self, (size_t)w->job) == m->job_id &&
           w->attempt == m->attempt;
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

static void s_reject(s_worker_t *w, const tb_msg_t *m, const char *why)
{
    long skipped;
    if (!tb_dsp_warn_ok(&w->warn, &skipped))
        return;
    if (skipped)
        tb_log_warn("%ld warnings about %s not shown", skipped, w->name);
    tb_log_warn("rejected %s for job %llu attempt %u from %s: %s", tb_proto_cmd_name(m->cmd),
                (unsigned long long)m->job_id, m->attempt, w->name, why);
}

static void s_on_message(tb_dispatch_t *self, s_worker_t *w, const tb_msg_t *m)
{
    switch (m->cmd) {
    case TB_CMD_HEARTBEAT:
        return;
    case TB_CMD_READY:
        s_reject(w, m, "already registered (a connection says READY once)");
        return;
    case TB_CMD_PROGRESS:
        if (s_holds(self, w, m))
            self->jobs[w->job].progress = m->fraction_ppm / 1e6;
        return;
    case TB_CMD_RESULT: {
        if (!s_holds(self, w, m)) {
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
            tb_dsp_lease_end(self, w, outcome, true, false, &err);
        } else if (r == 1) {
            s_on_result_complete(self, w);
        }
        return;
    }
    case TB_CMD_FAIL: {
        if (!s_holds(self, w, m)) {
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
        tb_dsp_lease_end(self, w, outcome, true, false, &err);
        return;
    }
    case TB_CMD_DISCONNECT: {
        char why[TB_PROTO_TEXT_MAX + 32];
        snprintf(why, sizeof why, "left (%s)", m->text);
        tb_dsp_worker_lost(self, w, why);
        return;
    }
    default:
        s_reject(w, m, "workers may not send it");
        if (++w->failures >= self->opts.blocklist_after)
            tb_dsp_blocklist(self, w);
        return;
    }
}

void tb_dsp_receive(tb_dispatch_t *self)
{
    for (int k = 0; k < 1000; k++) {
        tb_proto_rx_t rx;
        if (tb_proto_recv(self->sock, &rx, ZMQ_DONTWAIT) != 0)
            return;
        tb_proto_frame_t id = tb_proto_rx_frame(&rx, 0);
        char hex[20];
        tb_dsp_peer_hex(&id, hex, sizeof hex);
        s_worker_t *w = rx.n_frames ? tb_dsp_worker_by_id(self, &id) : NULL;
        if (w)
            w->last_seen_s = tb_now_s(); /* any message counts as a heartbeat */
        tb_msg_t m;
        tb_err_t err;
        long skipped = 0;
        if (tb_proto_rx_decode(&rx, 1, &m, &err) != 0) {
            if (w) {
                if (tb_dsp_warn_ok(&w->warn, &skipped))
                    tb_log_warn("rejected a message from worker %s: %s", w->name, err.msg);
                if (++w->failures >= self->opts.blocklist_after)
                    tb_dsp_blocklist(self, w);
            } else if (tb_dsp_warn_ok(&self->warn_unknown, &skipped)) {
                tb_log_warn("rejected a message from unknown peer %s: %s", hex, err.msg);
            }
        } else if (m.cmd == TB_CMD_READY && !w) {
            s_on_ready(self, &id, tb_proto_rx_user_id(&rx), &m);
        } else if (!w) {
            /* Heartbeats and progress from a peer this coordinator lost or never met (one that
             * was declared dead, or served a previous coordinator) are routine; anything else
             * from it is worth a warning. */
            bool routine = m.cmd == TB_CMD_HEARTBEAT || m.cmd == TB_CMD_PROGRESS;
            if (routine || tb_dsp_warn_ok(&self->warn_unknown, &skipped))
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
