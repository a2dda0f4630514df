/* The registry of job kinds; see job.h. */
#include "jobs/job.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/log.h"

/* Every kind the programs know, by the name of its tb_job_kind_t (tb_job_kind_NAME, defined in the
 * kind's own folder, jobs/NAME/). A new kind is one line here (docs/architecture.md). */
#define S_KINDS(X)                                                                                 \
    X(checksum_grind)                                                                              \
    X(region)                                                                                      \
    X(coast)                                                                                       \
    X(coast_block)                                                                                 \
    X(tile)

#define S_DECLARE(name) extern const tb_job_kind_t tb_job_kind_##name;
S_KINDS(S_DECLARE)
#undef S_DECLARE

#define S_ENTRY(name) &tb_job_kind_##name,
static const tb_job_kind_t *const s_kinds[] = {S_KINDS(S_ENTRY)};
#undef S_ENTRY

#define S_N_KINDS (sizeof s_kinds / sizeof s_kinds[0])

const tb_job_kind_t *tb_job_find(const char *name)
{
    for (size_t i = 0; name && i < S_N_KINDS; i++)
        if (strcmp(s_kinds[i]->name, name) == 0)
            return s_kinds[i];
    return NULL;
}

size_t tb_job_kind_count(void)
{
    return S_N_KINDS;
}

const tb_job_kind_t *tb_job_kind_at(size_t i)
{
    return i < S_N_KINDS ? s_kinds[i] : NULL;
}

int tb_job_run(const char *kind, const void *spec, size_t spec_bytes, tb_job_ctx_t *ctx,
               tb_job_output_t *out, tb_err_t *err)
{
    out->data = NULL;
    out->bytes = 0;
    const tb_job_kind_t *k = tb_job_find(kind);
    if (!k)
        return tb_err_set(err, TB_E_INVALID, "unknown job kind \"%s\"", kind ? kind : "(null)");
    if (spec_bytes > k->max_spec_bytes)
        return tb_err_set(err, TB_E_INVALID, "%s: spec of %zu bytes, more than the %zu allowed",
                          k->name, spec_bytes, k->max_spec_bytes);
    if (k->run(spec, spec_bytes, ctx, out, err) != 0) {
        tb_job_output_free(out);
        return -1;
    }
    if (out->bytes > k->max_result_bytes) {
        size_t n = out->bytes;
        tb_job_output_free(out);
        return tb_err_set(err, TB_E_INTERNAL, "%s: result of %zu bytes, more than the %zu allowed",
                          k->name, n, k->max_result_bytes);
    }
    if (!out->data) {
        out->data = malloc(1);
        if (!out->data)
            return tb_err_set(err, TB_E_NOMEM, "%s: out of memory", k->name);
    }
    return 0;
}

size_t tb_job_result_bound(const tb_job_kind_t *kind, const void *spec, size_t spec_bytes)
{
    size_t bound = kind->result_bound ? kind->result_bound(spec, spec_bytes) : 0;
    return bound == 0 || bound > kind->max_result_bytes ? kind->max_result_bytes : bound;
}

static _Thread_local tb_job_done_fn s_done_fn;
static _Thread_local void *s_done_user;

void tb_job_set_result_done(tb_job_done_fn fn, void *user)
{
    s_done_fn = fn;
    s_done_user = user;
}

void tb_job_result_done(const void *p, size_t bytes)
{
    if (s_done_fn && p && bytes)
        s_done_fn(s_done_user, p, bytes);
}

/* Whether the tests turned this kind's check_result off: TB_TEST_UNCHECKED=KIND, set only by the
 * negative controls of tests/test_bake_attacks.sh, which show that a wrong result gets through
 * without the check (docs/distribution.md, "Verifying results"). Said once on stderr. */
static bool s_test_unchecked(const tb_job_kind_t *kind)
{
    const char *off = getenv("TB_TEST_UNCHECKED");
    if (!off || strcmp(off, kind->name) != 0)
        return false;
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        tb_log_warn("TB_TEST_UNCHECKED=%s: the %s results are not checked (tests only)", off,
                    kind->name);
    return true;
}

int tb_job_check_result(const tb_job_kind_t *kind, const void *spec, size_t spec_bytes,
                        const void *result, size_t result_bytes, tb_err_t *err)
{
    size_t bound = tb_job_result_bound(kind, spec, spec_bytes);
    if (result_bytes > bound)
        return tb_err_set(err, TB_E_FORMAT,
                          "%s: a result of %zu bytes, more than the %zu its spec "
                          "can produce",
                          kind->name, result_bytes, bound);
    if (!kind->check_result || s_test_unchecked(kind))
        return 0;
    return kind->check_result(spec, spec_bytes, result, result_bytes, err);
}

bool tb_job_progress(tb_job_ctx_t *ctx, double fraction, const char *note)
{
    if (!ctx || !ctx->progress)
        return false;
    return ctx->progress(ctx->user, fraction, note);
}

void tb_job_output_free(tb_job_output_t *out)
{
    if (!out)
        return;
    free(out->data);
    out->data = NULL;
    out->bytes = 0;
}

/* The spec tb_job_check_result_head is checking on this thread: its head's address, its size and
 * its hash. */
static _Thread_local const void *s_known_spec;
static _Thread_local size_t s_known_bytes;
static _Thread_local uint64_t s_known_xxh3;

uint64_t tb_job_spec_xxh3(const void *spec, size_t spec_bytes)
{
    if (s_known_spec && spec == s_known_spec && spec_bytes == s_known_bytes)
        return s_known_xxh3;
    return XXH3_64bits(spec, spec_bytes);
}

int tb_job_check_result_head(const tb_job_kind_t *kind, const void *head, size_t head_bytes,
                             size_t spec_bytes, uint64_t spec_xxh3, const void *result,
                             size_t result_bytes, tb_err_t *err)
{
    size_t need = spec_bytes < kind->spec_head_bytes ? spec_bytes : kind->spec_head_bytes;
    if (kind->spec_head_bytes == 0 || head_bytes < need)
        return tb_err_set(err, TB_E_INTERNAL,
                          "%s: a result checked against %zu bytes of its %zu-byte spec (the kind "
                          "reads %zu)",
                          kind->name, head_bytes, spec_bytes, kind->spec_head_bytes);
    s_known_spec = head;
    s_known_bytes = spec_bytes;
    s_known_xxh3 = spec_xxh3;
    int rc = tb_job_check_result(kind, head, spec_bytes, result, result_bytes, err);
    s_known_spec = NULL;
    return rc;
}
