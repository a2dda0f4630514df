/* The two pieces of work the dispatch engine does off its event loop, on a helper thread (as a
 * tasks.h task) or inline in-process:
 *
 *   prep    make a lazy job's spec (its make_spec), hash it and make its store key; look the key up
 *           in the store and check what is there (the kind's check_result); compress the spec for
 *           the wire when it has to run;
 *   verify  decode a worker's result (a blob in memory, or a large one in a file: streamed), check
 *           it against its spec, and store it.
 *
 * A task reads the job's spec through borrowed pointers: the job table keeps them alive and
 * unchanged while the job is PREPPING or VERIFYING. Everything a task produces is in its struct for
 * the loop to apply; a task touches no state of the loop's.
 */
#ifndef TB_JOBWORK_H
#define TB_JOBWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/farm/cache.h"
#include "coordinator/farm/jobtable.h"
#include "coordinator/farm/result.h"
#include "coordinator/farm/tasks.h"
#include "jobs/job.h"

typedef struct {
    tb_task_t task; /* first: posted to the helpers */
    uint64_t batch; /* the batch it belongs to (a late one is dropped) */
    size_t index;
    /* in */
    const tb_job_kind_t *kind;
    tb_jobtable_spec_fn make_spec; /* a lazy job: make the spec (NULL: eager, `spec` given) */
    void *spec_user;
    const uint64_t *inputs; /* a lazy job's input hashes (borrowed), for its key */
    size_t n_inputs;
    const void *spec; /* an eager job's spec (borrowed) */
    size_t spec_bytes;
    bool has_key; /* key and max_result known (eager, or a lazy job made before) */
    tb_cache_key_t key;
    size_t max_result;
    tb_cache_t *cache; /* NULL: no store */
    bool lookup;       /* look the key up (not --fresh) */
    size_t large_bytes;
    bool want_blob; /* compress the spec when it must run */
    /* out */
    int rc; /* -1: the spec could not be made or compressed (err): the run fails */
    tb_err_t err;
    void *made; /* a lazy job's spec (malloc'd) */
    size_t made_bytes;
    uint64_t spec_xxh3;
    int found; /* 1 a valid stored result (result), 0 none, -1 unusable (store_err; removed) */
    tb_err_t store_err;
    tb_result_t *result;
    uint64_t result_xxh3;
    void *blob; /* the compressed spec */
    size_t blob_bytes;
} tb_prep_t;

/* Runs a prep (the tb_task_t's run, or inline). */
void tb_prep_run(tb_task_t *task);

typedef struct {
    tb_task_t task;
    uint64_t batch;
    size_t index;
    uint32_t attempt;
    int32_t worker; /* registry index of who sent it */
    double seconds; /* the attempt's, for the record */
    /* in */
    const tb_job_kind_t *kind;
    const void *spec; /* borrowed; NULL: decoded from spec_blob on the helper, freed after */
    size_t spec_bytes;
    const void *spec_blob; /* borrowed: the job's compressed spec (a lazy job keeps only it) */
    size_t spec_blob_bytes;
    size_t max_result;
    void *blob; /* a result held in memory (owned) */
    size_t blob_bytes;
    bool sinking; /* ... or written to this file (owned) */
    tb_cache_sink_t sink;
    const char *scratch_dir; /* for the decoded file of a large result */
    size_t large_bytes;
    tb_cache_t *cache; /* store it there (NULL: nowhere) */
    tb_cache_key_t key;
    bool hold; /* verification: store nothing yet; keep the blob (or the uncommitted file) */
    /* out */
    int rc;               /* 0 accepted; -1 refused (outcome, err) */
    tb_outcome_t outcome; /* TB_OUT_CORRUPT (did not decode) or TB_OUT_WRONG (the check) */
    tb_err_t err;
    tb_result_t *result;
    uint64_t result_xxh3;
    int store_rc; /* -1: checked but not stored (store_err) */
    tb_err_t store_err;
} tb_verify_t;

/* Runs a verify (the tb_task_t's run, or inline). */
void tb_verify_run(tb_task_t *task);

/* A result that verification by replication accepted: stored once the votes agree. */
typedef struct {
    tb_task_t task;
    uint64_t batch;
    size_t index;
    tb_cache_t *cache;
    tb_cache_key_t key;
    void *blob; /* owned; or ... */
    size_t blob_bytes;
    bool sinking; /* ... this uncommitted store file, renamed into place */
    tb_cache_sink_t sink;
    bool remove; /* instead: remove the key's entry (a quarantined worker's result) */
    int rc;
    tb_err_t err;
} tb_commit_t;

void tb_commit_run(tb_task_t *task);

/* The coordinator's own run of a job whose workers disagree and no other worker can decide (one
 * thread, on a helper): checked like a worker's result; its blob kept for the store. */
typedef struct {
    tb_task_t task;
    uint64_t batch;
    size_t index;
    const tb_job_kind_t *kind;
    const void *spec; /* borrowed: the job keeps it while VERIFYING; NULL: decoded from ... */
    size_t spec_bytes;
    const void *spec_blob; /* ... the job's compressed spec (borrowed likewise) */
    size_t spec_blob_bytes;
    int rc;
    tb_err_t err;
    tb_result_t *result;
    uint64_t result_xxh3;
    void *blob;
    size_t blob_bytes;
    double seconds;
} tb_tiebreak_t;

void tb_tiebreak_run(tb_task_t *task);

/* Sets this thread's tb_job_result_done hook (jobs/job.h) for `result`: when it is mapped, what a
 * reader says it is done with leaves memory; otherwise (or for NULL) the hook is cleared. The
 * caller clears it again (tb_job_set_result_done(NULL, NULL)) when done reading. */
void tb_jobwork_result_done_hook(tb_result_t *result);

/* Runs kind's check on a result (in memory or mapped; a mapping's pages go back to the kernel as
 * the check reads them, and all of them after). 0, or -1 with *err. */
int tb_jobwork_check(const tb_job_kind_t *kind, const void *spec, size_t spec_bytes,
                     tb_result_t *result, tb_err_t *err);

#endif
