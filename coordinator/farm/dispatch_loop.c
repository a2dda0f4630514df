/* The dispatch engine: housekeeping; see dispatch_internal.h and dispatch.h. */
#include "coordinator/farm/dispatch_internal.h"

#include <signal.h>

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
            tb_dsp_worker_lost(self, w, why);
            continue;
        }
        double deadline_s = w->job >= 0 ? self->jobs[w->job].deadline_s : 0;
        if (w->job >= 0 && deadline_s > 0 && now - w->lease_started_s > deadline_s) {
            tb_msg_t cancel;
            tb_msg_init(&cancel, TB_CMD_CANCEL);
            cancel.job_id = tb_dsp_wire_id(self, (size_t)w->job);
            cancel.attempt = w->attempt;
            w->draining = true;
            w->drain_job = cancel.job_id;
            w->drain_attempt = w->attempt;
            char outcome[96];
            snprintf(outcome, sizeof outcome, "timed out after %.1f s", deadline_s);
            tb_err_t err;
            tb_err_set(&err, TB_E_JOB, "%s", outcome);
            tb_dsp_lease_end(self, w, outcome, true, false, &err);
            if (w->alive && tb_dsp_send(self, w, &cancel) != 0)
                tb_dsp_worker_lost(self, w, "unreachable");
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
        if (tb_dsp_send(self, w, &hb) != 0 && errno == EHOSTUNREACH)
            tb_dsp_worker_lost(self, w, "unreachable");
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
        s_worker_t *w = tb_dsp_worker_by_name(self, name);
        if (w)
            tb_dsp_worker_lost(self, w, why);
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
    if (tb_dsp_alive(self) > 0) {
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
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].warn.suppressed)
            tb_log_warn("%ld warnings about %s not shown", self->workers[i].warn.suppressed,
                        self->workers[i].name);
    if (self->warn_unknown.suppressed)
        tb_log_warn("%ld warnings about unregistered peers not shown",
                    self->warn_unknown.suppressed);
    if (self->sock && (!self->opts.keep_workers || self->local)) {
        for (size_t i = 0; i < self->n_workers; i++) {
            s_worker_t *w = &self->workers[i];
            if (!w->alive || (self->opts.keep_workers && !w->local))
                continue;
            tb_dsp_send_bye(self, w->id, w->id_bytes, TB_BYE_DONE,
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
    self->open = false;
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

/* Binds the socket and makes the local workers' directory: once an engine (the first batch that
 * has jobs to run). */
static int s_open(tb_dispatch_t *self, tb_err_t *err)
{
    tb_dispatch_opts_t *o = &self->opts;
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
    self->open = true;
    if (o->bind) {
        tb_log_info("listening for workers on %s%s", tb_broker_endpoint(self->broker),
                    tb_broker_secure(self->broker) ? " (CURVE)" : "");
        if (tb_broker_secure(self->broker))
            tb_log_info("workers connect with --server-key %s", tb_broker_public_key(self->broker));
        if (o->on_listening)
            o->on_listening(o->listening_user ? o->listening_user : o->user,
                            tb_broker_endpoint(self->broker));
    }
    return 0;
}

/* One turn of the loop between batches: registers newcomers, answers and sends heartbeats, notices
 * workers that die; nothing is dispatched. */
static void *s_idle_main(void *user)
{
    tb_dispatch_t *self = user;
    while (!atomic_load(&self->idle_stop)) {
        zmq_pollitem_t item = {self->sock, 0, ZMQ_POLLIN, 0};
        long timeout = self->opts.heartbeat_ms / 4 < 100 ? self->opts.heartbeat_ms / 4 : 100;
        zmq_poll(&item, 1, timeout < 1 ? 1 : timeout);
        pthread_mutex_lock(&self->mu);
        if (item.revents & ZMQ_POLLIN)
            tb_dsp_receive(self);
        s_check_local(self);
        tb_broker_poll_events(self->broker);
        s_expire(self, 0);
        s_heartbeat(self);
        pthread_mutex_unlock(&self->mu);
    }
    return NULL;
}

static void s_idle_start(tb_dispatch_t *self)
{
    atomic_store(&self->idle_stop, false);
    /* the program's SIGINT and SIGTERM go to its own threads, never to this one */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (pthread_create(&self->idle_thread, NULL, s_idle_main, self) == 0)
        self->idle_running = true;
    else /* the workers then go quiet until the next batch, and reconnect: still correct */
        tb_log_warn("cannot start the thread that keeps the workers between batches");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tb_dsp_idle_stop(tb_dispatch_t *self)
{
    if (!self->idle_running)
        return;
    atomic_store(&self->idle_stop, true);
    pthread_join(self->idle_thread, NULL);
    self->idle_running = false;
}

void tb_dispatch_finish(tb_dispatch_t *self, bool failed)
{
    if (!self)
        return;
    tb_dsp_idle_stop(self);
    if (self->open)
        s_teardown(self, failed);
}

/* Local workers wanted for this batch: --workers, but never more than the jobs left to run. */
static int s_spawn_for_batch(tb_dispatch_t *self, tb_err_t *err)
{
    if (!self->local)
        return 0;
    int want = self->opts.workers;
    if ((size_t)want > s_unfinished(self))
        want = (int)s_unfinished(self);
    for (int i = tb_local_workers_running(self->local); i < want; i++)
        if (s_spawn_local(self, err) != 0)
            return -1;
    return 0;
}

static int s_run_distributed(tb_dispatch_t *self, tb_err_t *err)
{
    tb_dispatch_opts_t *o = &self->opts;
    free(self->order);
    self->order = NULL;
    if (s_order_jobs(self, err) != 0)
        return -1;
    if (!self->open && s_open(self, err) != 0)
        return -1;
    if (s_spawn_for_batch(self, err) != 0) {
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
            tb_dsp_receive(self);
        s_check_local(self);
        tb_broker_poll_events(self->broker);
        s_expire(self, tb_now_s() - turn_s);
        s_heartbeat(self);
        if (self->failed_job < 0 && !self->has_fatal)
            tb_dsp_dispatch_pending(self);
        s_check_no_workers(self);
        tb_dsp_progress(self);
        if (self->failed_job >= 0) {
            s_job_t *job = &self->jobs[self->failed_job];
            *err = job->last_err;
            if (err->code == TB_OK)
                err->code = TB_E_JOB;
            if (!job->failed_by_losses)
                rc = tb_err_prefix(err, "%s failed %d times (on %d different workers)", job->label,
                                   job->failures, job->n_failed_on + job->n_forgotten);
            else /* its error says how often it lost its worker */
                rc = tb_err_prefix(err, "%s", job->label);
            break;
        }
        if (self->has_fatal) {
            *err = self->fatal;
            rc = -1;
            break;
        }
    }
    /* With batches, the workers stay for the next one (docs/distribution.md, "One engine across
     * the phases"); a failed run ends the engine's work, so they are dismissed at once. */
    if (rc != 0 || !o->batches)
        s_teardown(self, rc != 0);
    return rc;
}

int tb_dispatch_run(tb_dispatch_t *self, tb_err_t *err)
{
    if (self->ran)
        return tb_err_set(err, TB_E_INTERNAL,
                          self->opts.batches ? "tb_dispatch_run called twice in one batch "
                                               "(tb_dispatch_next_batch first)"
                                             : "tb_dispatch_run called twice");
    tb_dsp_idle_stop(self);
    self->ran = true;
    self->started_s = tb_now_s();
    self->stats.jobs = self->n_jobs;
    for (size_t i = 0; i < self->n_jobs; i++)
        self->total_weight += self->jobs[i].weight;
    int rc = tb_dsp_load_store(self, err);
    /* The default of one local worker per core, but never more workers than jobs left to run: a
     * worker beyond that would only sit idle holding a process (docs/distribution.md, defaults). */
    size_t left = self->n_jobs - self->n_done;
    if (!self->opts.workers_given && !self->opts.bind && !self->open && left > 0 &&
        (size_t)self->opts.workers > left)
        self->opts.workers = (int)left;
    if (rc == 0 && self->n_done < self->n_jobs) {
        self->bar =
            tb_progress_new(self->opts.label, self->total_weight > 0 ? self->total_weight : 1);
        tb_progress_update(self->bar, self->done_weight, NULL);
        rc = self->opts.bind || self->opts.workers > 0 || self->open
                 ? s_run_distributed(self, err)
                 : tb_dsp_run_in_process(self, err);
        tb_progress_destroy(&self->bar);
    }
    self->stats.seconds = tb_now_s() - self->started_s;
    /* with batches the workers stay for the next one, kept by the idle thread - also after a batch
     * the store answered entirely; a failed batch dismisses them (docs/distribution.md) */
    if (self->open && rc != 0)
        s_teardown(self, true);
    else if (self->open && self->opts.batches)
        s_idle_start(self);
    return rc;
}
