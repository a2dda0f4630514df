/* The dispatch engine: records, results; see dispatch_internal.h and dispatch.h. */
#include "coordinator/farm/dispatch_internal.h"

/* ---- records ---- */

tb_attempt_t *tb_dsp_attempt_new(s_job_t *job, const char *worker)
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

tb_attempt_t *tb_dsp_attempt_find(s_job_t *job, uint32_t attempt)
{
    for (size_t i = 0; i < job->n_attempts; i++)
        if (job->attempts[i].attempt == attempt)
            return &job->attempts[i];
    return NULL;
}

void tb_dsp_failed_on_add(tb_dispatch_t *self, s_job_t *job, const char *conn)
{
    for (int i = 0; i < job->n_failed_on; i++)
        if (strcmp(job->failed_on[i], conn) == 0)
            return;
    if (job->n_failed_on == S_MAX_FAILED_ON) {
        /* Full: forget the connections that are gone (only live ones decide where the job may
         * go and whether it fails the run), keeping the count of distinct ones. */
        int keep = 0;
        for (int i = 0; i < job->n_failed_on; i++) {
            bool live = false;
            for (size_t k = 0; k < self->n_workers && !live; k++)
                live =
                    self->workers[k].alive && strcmp(self->workers[k].conn, job->failed_on[i]) == 0;
            if (live)
                memmove(job->failed_on[keep++], job->failed_on[i], S_NAME_MAX);
        }
        job->n_forgotten += job->n_failed_on - keep;
        job->n_failed_on = keep;
    }
    if (job->n_failed_on < S_MAX_FAILED_ON)
        snprintf(job->failed_on[job->n_failed_on++], S_NAME_MAX, "%s", conn);
}

bool tb_dsp_failed_on(const s_job_t *job, const char *conn)
{
    for (int i = 0; i < job->n_failed_on; i++)
        if (strcmp(job->failed_on[i], conn) == 0)
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
void tb_dsp_job_done(tb_dispatch_t *self, size_t index, void *data, size_t bytes,
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

void tb_dsp_store(tb_dispatch_t *self, size_t index, const void *blob, size_t blob_bytes,
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

int tb_dsp_load_store(tb_dispatch_t *self, tb_err_t *err)
{
    if (!self->opts.store_dir)
        return 0;
    if (!self->cache) /* with batches, opened by the first */
        self->cache = tb_cache_open(self->opts.store_dir, err);
    if (!self->cache)
        return -1;
    if (self->opts.fresh || self->batch_fresh)
        return 0;
    for (size_t i = 0; i < self->n_jobs; i++) {
        s_job_t *job = &self->jobs[i];
        void *data;
        size_t bytes;
        tb_err_t e;
        int r = tb_cache_get(self->cache, &job->key, job->max_result_bytes, &data, &bytes, &e);
        if (r == 1 &&
            tb_job_check_result(job->kind_def, job->spec, job->spec_bytes, data, bytes, &e) != 0) {
            free(data);
            r = -1;
        }
        if (r == 1) {
            tb_dsp_job_done(self, i, data, bytes, "store", 0, true);
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
