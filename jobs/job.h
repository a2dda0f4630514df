/* The registry of job kinds: the science as pure functions from spec bytes to result bytes.
 *
 * A job kind is a name ("checksum-grind", "region") and a function that turns a canonical spec into
 * result bytes. It never touches a socket, a file or a clock that changes its result, so the same
 * spec gives the same bytes in-process (`--workers 0`), in a local worker and on a farm node
 * (docs/architecture.md). The runner (worker/ or the in-process mode) owns the thread pool and
 * the progress callback; the job owns nothing between calls.
 *
 * Adding a kind: write `const tb_job_kind_t tb_job_kind_NAME` in jobs/, declare it in its header
 * and add it to s_kinds in jobs/job.c. Both the coordinator and the worker then know it by name.
 */
#ifndef TB_JOB_H
#define TB_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/pool.h"

typedef struct tb_job_ctx_t tb_job_ctx_t;

/* Called by a running job with its progress in [0, 1] and an optional short note ("step 120/1000").
 * Returns true when the job should stop: the job then returns -1 with TB_E_INTERRUPTED. May be
 * called from any of the job's threads, so it must be thread-safe; it should be cheap (the runner
 * throttles what it forwards). */
typedef bool (*tb_job_progress_fn)(void *user, double fraction, const char *note);

struct tb_job_ctx_t {
    int threads;                 /* threads the job may use: tb_pool_threads(pool) */
    tb_pool_t *pool;             /* the runner's pool of `threads` threads; never NULL */
    tb_job_progress_fn progress; /* may be NULL */
    void *user;                  /* passed to progress */
};

/* The bytes a job produced: malloc'd by the job, owned by the runner after a successful return. */
typedef struct {
    void *data;
    size_t bytes;
} tb_job_output_t;

/* Runs one job: reads spec[0..spec_bytes) (canonical bytes, untrusted: a bad spec is TB_E_INVALID
 * or TB_E_FORMAT, never a crash), fills *out and returns 0, or returns -1 with *err set and *out
 * empty. */
typedef int (*tb_job_fn)(const void *spec, size_t spec_bytes, tb_job_ctx_t *ctx,
                         tb_job_output_t *out, tb_err_t *err);

typedef struct {
    const char *name; /* wire name, printable ASCII, at most 127 characters */
    tb_job_fn run;
    size_t max_spec_bytes;   /* a larger spec is refused before it is decompressed */
    size_t max_result_bytes; /* a larger result is refused, by the runner and by the coordinator */
    const char *summary;     /* one line for `terrain-worker --help` */
    /* Optional. The most bytes the result of this spec can take (0: max_result_bytes): the
     * coordinator refuses a larger result when it is announced, before a byte is buffered
     * (docs/distribution.md, "Verifying results"). Never smaller than what run() makes. */
    size_t (*result_bound)(const void *spec, size_t spec_bytes);
    /* Optional. 0 when result[0..result_bytes) answers exactly this spec (it echoes the spec's
     * hash, its sizes agree), or -1 with *err set: the coordinator then counts the attempt as
     * failed and never stores or uses the bytes, and a stored result that fails it is
     * recomputed. Untrusted bytes: never crashes, allocates little. */
    int (*check_result)(const void *spec, size_t spec_bytes, const void *result,
                        size_t result_bytes, tb_err_t *err);
    /* Optional. When not 0, result_bound and check_result read no more of the spec than its
     * first spec_head_bytes bytes (a header whose length they cap below that) and take the spec's
     * XXH3-64 from tb_job_spec_xxh3: the coordinator can then check a result against a spec it
     * holds compressed by decoding its head alone (tb_job_check_result_head; a coast block's spec
     * is up to 200 MB, its head a few kB). */
    size_t spec_head_bytes;
} tb_job_kind_t;

/* The kind registered under `name`, or NULL. */
const tb_job_kind_t *tb_job_find(const char *name);

/* Registered kinds, in registration order, for listings. */
size_t tb_job_kind_count(void);
const tb_job_kind_t *tb_job_kind_at(size_t i);

/* Looks up `kind`, refuses a spec over its limit, runs it and checks the result's size. Returns 0
 * with *out filled (data never NULL), or -1 with *err set (TB_E_INVALID for an unknown kind) and
 * *out empty. */
int tb_job_run(const char *kind, const void *spec, size_t spec_bytes, tb_job_ctx_t *ctx,
               tb_job_output_t *out, tb_err_t *err);

/* The bound on the result of `spec` (the kind's result_bound, never above max_result_bytes). */
size_t tb_job_result_bound(const tb_job_kind_t *kind, const void *spec, size_t spec_bytes);

/* The kind's check_result (0 when it has none), plus the bound. */
int tb_job_check_result(const tb_job_kind_t *kind, const void *spec, size_t spec_bytes,
                        const void *result, size_t result_bytes, tb_err_t *err);

/* tb_job_check_result for a spec known by its first head_bytes bytes (min(spec_bytes, the kind's
 * spec_head_bytes) of them), its size and its XXH3-64: for a kind with spec_head_bytes only
 * (TB_E_INTERNAL otherwise, or when head_bytes is short). The same answer as the whole spec's. */
int tb_job_check_result_head(const tb_job_kind_t *kind, const void *head, size_t head_bytes,
                             size_t spec_bytes, uint64_t spec_xxh3, const void *result,
                             size_t result_bytes, tb_err_t *err);

/* The XXH3-64 of spec[0..spec_bytes), for a kind's result_bound and check_result: the hash
 * tb_job_check_result_head was given when it is checking this spec on this thread, else computed.
 */
uint64_t tb_job_spec_xxh3(const void *spec, size_t spec_bytes);

/* Large results read in place. A check (or a scatter) that reads a result through its memory may
 * say, as it goes, which bytes it is done with: tb_job_result_done(p, bytes) hands [p, p + bytes)
 * to the hook this thread's caller set with tb_job_set_result_done (the coordinator's, for a result
 * mapped from a file: those pages leave its memory, and a later read brings them back from the
 * file; docs/architecture.md, "The coordinator's budget"). Without a hook it does nothing, so a
 * result on the heap is never touched. tb_job_set_result_done(NULL, NULL) clears it. */
typedef void (*tb_job_done_fn)(void *user, const void *p, size_t bytes);
void tb_job_set_result_done(tb_job_done_fn fn, void *user);
void tb_job_result_done(const void *p, size_t bytes);

/* Reports progress through ctx; returns true when the job should stop. Accepts a ctx without a
 * callback. */
bool tb_job_progress(tb_job_ctx_t *ctx, double fraction, const char *note);

/* Frees out->data and empties *out. */
void tb_job_output_free(tb_job_output_t *out);

#endif
