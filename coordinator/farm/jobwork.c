/* The prep and verify work of the dispatch engine; see jobwork.h. */
#include "coordinator/farm/jobwork.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/blob.h"
#include "common/log.h"
#include "common/pool.h"
#include "common/version.h"

/* tb_job_result_done's hook for a mapped result: the pages of [p, p + bytes) leave memory. */
static void s_result_done(void *user, const void *p, size_t bytes)
{
    tb_result_t *result = user;
    const char *base = tb_result_data(result);
    if ((const char *)p >= base && (const char *)p < base + tb_result_bytes(result))
        tb_result_done_with(result, (size_t)((const char *)p - base), bytes);
}

void tb_jobwork_result_done_hook(tb_result_t *result)
{
    if (result && tb_result_mapped(result))
        tb_job_set_result_done(s_result_done, result);
    else
        tb_job_set_result_done(NULL, NULL);
}

/* tb_jobwork_check against the whole spec (head_bytes 0) or its head. */
static int s_check(const tb_job_kind_t *kind, const void *spec, size_t head_bytes,
                   size_t spec_bytes, uint64_t spec_xxh3, tb_result_t *result, tb_err_t *err)
{
    /* a check reads a large mapped result once, in order: what it has read leaves memory as it
     * goes (two helper threads checking two results of gigabytes held both at once) */
    tb_jobwork_result_done_hook(result);
    const void *data = tb_result_data(result);
    size_t bytes = tb_result_bytes(result);
    int r = head_bytes ? tb_job_check_result_head(kind, spec, head_bytes, spec_bytes, spec_xxh3,
                                                  data, bytes, err)
                       : tb_job_check_result(kind, spec, spec_bytes, data, bytes, err);
    tb_job_set_result_done(NULL, NULL);
    /* what the check touched of a mapping need not stay resident until the caller reads it */
    tb_result_done_with(result, 0, tb_result_bytes(result));
    return r;
}

int tb_jobwork_check(const tb_job_kind_t *kind, const void *spec, size_t spec_bytes,
                     tb_result_t *result, tb_err_t *err)
{
    return s_check(kind, spec, 0, spec_bytes, 0, result, err);
}

/* The raw spec of a job: `spec` when the job holds it, else its blob decoded into *owned (which
 * the caller frees). A lazy job keeps only its compressed spec once that is made (the raw bytes of
 * a 300 km planet's coast block are 500 MB, of its largest region 340 MB): the check decodes it
 * when a result comes, on this helper thread. */
static const void *s_raw_spec(const void *spec, size_t spec_bytes, const void *blob,
                              size_t blob_bytes, void **owned, tb_err_t *err)
{
    *owned = NULL;
    if (spec || !blob)
        return spec ? spec : "";
    size_t n = 0;
    if (tb_blob_decode(blob, blob_bytes, spec_bytes, owned, &n, err) != 0)
        return NULL;
    if (n != spec_bytes) {
        free(*owned);
        *owned = NULL;
        tb_err_set(err, TB_E_INTERNAL, "the job's spec decoded to %zu bytes, not its %zu", n,
                   spec_bytes);
        return NULL;
    }
    return *owned;
}

/* The spec a verify task checks its result against: the whole spec (*head_bytes 0), or, for a
 * kind whose check reads only its head (tb_job_kind_t.spec_head_bytes) when the job holds only its
 * compressed spec, that head decoded alone (*head_bytes) with the whole spec's hash from the blob's
 * header, which this coordinator wrote (a 300 km planet's coast block spec is 150 MB raw; two
 * checks at once held 300 MB for the few kB they read). NULL with v->err set on failure. */
static const void *s_check_spec(tb_verify_t *v, void **owned, size_t *head_bytes,
                                uint64_t *spec_xxh3)
{
    *head_bytes = 0;
    size_t want = v->kind->spec_head_bytes;
    if (v->spec || !v->spec_blob || want == 0 || want >= v->spec_bytes)
        return s_raw_spec(v->spec, v->spec_bytes, v->spec_blob, v->spec_blob_bytes, owned, &v->err);
    tb_blob_info_t info;
    size_t n = 0;
    if (tb_blob_decode_head(v->spec_blob, v->spec_blob_bytes, want, &info, owned, &n, &v->err) != 0)
        return NULL;
    if (info.raw_bytes != v->spec_bytes || n != want) {
        free(*owned);
        *owned = NULL;
        tb_err_set(&v->err, TB_E_INTERNAL, "the job's spec is %llu bytes compressed, not its %zu",
                   (unsigned long long)info.raw_bytes, v->spec_bytes);
        return NULL;
    }
    *head_bytes = n;
    *spec_xxh3 = info.raw_xxh3;
    return *owned;
}

void tb_prep_run(tb_task_t *task)
{
    tb_prep_t *p = (tb_prep_t *)task;
    p->rc = 0;
    p->found = 0;
    const void *spec = p->spec;
    size_t spec_bytes = p->spec_bytes;
    if (p->make_spec) {
        if (p->make_spec(p->spec_user, p->index, &p->made, &p->made_bytes, &p->err) != 0) {
            free(p->made);
            p->made = NULL;
            p->rc = -1;
            return;
        }
        if (!p->made)
            p->made = malloc(1);
        spec = p->made;
        spec_bytes = p->made_bytes;
        p->spec_xxh3 = XXH3_64bits(spec, spec_bytes);
        if (!p->has_key) {
            p->max_result = tb_job_result_bound(p->kind, spec, spec_bytes);
            tb_cache_key_make(&p->key, tb_build_id(), p->kind->name, spec, spec_bytes, p->inputs,
                              p->n_inputs);
        }
    }
    if (spec_bytes > p->kind->max_spec_bytes) {
        p->rc =
            tb_err_set(&p->err, TB_E_INVALID, "%s: spec of %zu bytes, more than the %zu allowed",
                       p->kind->name, spec_bytes, p->kind->max_spec_bytes);
        return;
    }
    if (p->cache && p->lookup) {
        int r = tb_cache_get_result(p->cache, &p->key, p->max_result, p->large_bytes, &p->result,
                                    &p->result_xxh3, &p->store_err);
        if (r == 1 && tb_jobwork_check(p->kind, spec, spec_bytes, p->result, &p->store_err) != 0) {
            tb_result_destroy(&p->result);
            r = -1;
        }
        if (r < 0) {
            /* an entry that fails a check is never read again: removed, then recomputed */
            tb_err_t e;
            if (tb_cache_remove(p->cache, &p->key, &e) != 0) {
                char msg[TB_ERR_MSG_MAX];
                snprintf(msg, sizeof msg, "%s (%s)", p->store_err.msg, e.msg);
                tb_err_set(&p->store_err, p->store_err.code, "%s", msg);
            }
        }
        p->found = r;
        if (r == 1)
            return;
    }
    if (p->want_blob && tb_blob_encode(spec, spec_bytes, 0, &p->blob, &p->blob_bytes, &p->err) != 0)
        p->rc = -1;
}

void tb_verify_run(tb_task_t *task)
{
    tb_verify_t *v = (tb_verify_t *)task;
    v->rc = -1;
    v->store_rc = 0;
    v->outcome = TB_OUT_CORRUPT;
    if (v->sinking) {
        int fd = open(v->sink.tmp_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            tb_err_set(&v->err, TB_E_IO, "%s: cannot read the result back", v->sink.tmp_path);
            tb_cache_sink_abort(&v->sink);
            return;
        }
        int r = tb_result_decode_fd(fd, TB_CACHE_HEAD_BYTES, v->sink.blob_bytes, v->max_result,
                                    v->large_bytes, v->scratch_dir, &v->result, &v->result_xxh3,
                                    &v->err);
        close(fd);
        if (r != 0) {
            tb_cache_sink_abort(&v->sink);
            return;
        }
    } else {
        void *data = NULL;
        size_t bytes = 0;
        tb_blob_info_t info;
        if (tb_blob_decode(v->blob, v->blob_bytes, v->max_result, &data, &bytes, &v->err) != 0)
            return;
        tb_blob_peek(v->blob, v->blob_bytes, &info, NULL);
        v->result_xxh3 = info.raw_xxh3; /* tb_blob_decode compared it with the bytes */
        v->result = tb_result_from_memory(&data, bytes, &v->err);
        if (!v->result)
            return;
    }
    /* Checked before it is stored or used: it must answer this job's spec (docs/distribution.md,
     * "Verifying results"); anything else is a failed attempt by its worker. A kind whose check
     * reads only the spec's head is checked against the head of the compressed spec, not the
     * whole spec decoded (s_check_spec). */
    void *owned = NULL;
    size_t head_bytes = 0;
    uint64_t spec_xxh3 = 0;
    const void *spec = s_check_spec(v, &owned, &head_bytes, &spec_xxh3);
    if (!spec) {
        tb_result_destroy(&v->result);
        if (v->sinking)
            tb_cache_sink_abort(&v->sink);
        return;
    }
    v->outcome = TB_OUT_WRONG;
    int checked = s_check(v->kind, spec, head_bytes, v->spec_bytes, spec_xxh3, v->result, &v->err);
    free(owned);
    if (checked != 0) {
        tb_result_destroy(&v->result);
        if (v->sinking)
            tb_cache_sink_abort(&v->sink);
        return;
    }
    v->rc = 0;
    v->outcome = TB_OUT_OK;
    if (v->hold)
        return; /* the blob, or the file, waits for the votes */
    if (v->sinking) {
        v->store_rc = v->cache ? tb_cache_sink_commit(&v->sink, &v->store_err) : 0;
        if (!v->cache)
            tb_cache_sink_abort(&v->sink);
        v->sinking = false;
    } else if (v->cache) {
        v->store_rc = tb_cache_put_blob(v->cache, &v->key, v->blob, v->blob_bytes, &v->store_err);
    }
    free(v->blob);
    v->blob = NULL;
}

void tb_commit_run(tb_task_t *task)
{
    tb_commit_t *c = (tb_commit_t *)task;
    c->rc = 0;
    if (c->remove)
        c->rc = tb_cache_remove(c->cache, &c->key, &c->err);
    else if (c->sinking)
        c->rc = tb_cache_sink_commit(&c->sink, &c->err);
    else if (c->cache)
        c->rc = tb_cache_put_blob(c->cache, &c->key, c->blob, c->blob_bytes, &c->err);
    c->sinking = false;
    free(c->blob);
    c->blob = NULL;
}

void tb_tiebreak_run(tb_task_t *task)
{
    tb_tiebreak_t *t = (tb_tiebreak_t *)task;
    t->rc = -1;
    double t0 = tb_now_s();
    tb_pool_t *pool = tb_pool_new(1, &t->err);
    if (!pool)
        return;
    tb_job_ctx_t ctx = {.threads = 1, .pool = pool};
    tb_job_output_t out = {0};
    void *owned = NULL;
    const void *spec =
        s_raw_spec(t->spec, t->spec_bytes, t->spec_blob, t->spec_blob_bytes, &owned, &t->err);
    int r = spec ? tb_job_run(t->kind->name, spec, t->spec_bytes, &ctx, &out, &t->err) : -1;
    tb_pool_destroy(&pool);
    if (r != 0) {
        free(owned);
        return;
    }
    r = tb_job_check_result(t->kind, spec, t->spec_bytes, out.data, out.bytes, &t->err);
    free(owned);
    if (r != 0 || tb_blob_encode(out.data, out.bytes, 0, &t->blob, &t->blob_bytes, &t->err) != 0) {
        free(out.data);
        return;
    }
    t->result_xxh3 = XXH3_64bits(out.data, out.bytes);
    t->result = tb_result_from_memory(&out.data, out.bytes, &t->err);
    free(out.data);
    if (!t->result)
        return;
    t->seconds = tb_now_s() - t0;
    t->rc = 0;
}
