/* The dispatch engine: progress, in-process; see dispatch_internal.h and dispatch.h. */
#include "coordinator/farm/dispatch_internal.h"

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

size_t tb_dsp_alive(const tb_dispatch_t *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        n += self->workers[i].alive;
    return n;
}

void tb_dsp_progress(tb_dispatch_t *self)
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
                 self->n_jobs, self->opts.label, cells, tb_dsp_alive(self));
    tb_progress_update(self->bar, self->done_weight + partial, extra);
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
    return ip->self->opts.interrupted && *ip->self->opts.interrupted;
}

int tb_dsp_run_in_process(tb_dispatch_t *self, tb_err_t *err)
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
        tb_attempt_t *a = tb_dsp_attempt_new(job, "in-process");
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
            self->stats.failed++;
            if (e.code == TB_E_INTERRUPTED && self->opts.interrupted && *self->opts.interrupted) {
                rc = tb_err_set(err, TB_E_INTERRUPTED, "interrupted");
            } else {
                *err = e;
                rc = tb_err_prefix(err, "%s failed", job->label);
            }
            break;
        }
        tb_dsp_store(self, i, NULL, 0, out.data, out.bytes);
        tb_dsp_job_done(self, i, out.data, out.bytes, "in-process", dt, false);
        tb_dsp_progress(self);
    }
    tb_pool_destroy(&pool);
    return rc;
}
