/* The dispatch engine's job table: one batch's jobs, each with its state, attempts, failures and
 * result, the order they go out in (largest weight first) and the order their results go back in
 * (job order, or as they come with `unordered`) (docs/distribution.md).
 *
 * Memory is what a planet-scale batch of thousands of jobs can afford: a job is about 200 bytes
 * plus its label, one 32-byte entry an attempt (an outcome's text only when it is not "ok"), 4
 * bytes a connection it failed on, and its spec only while it is needed (a lazy job's spec is made
 * when it is about to be looked up or dispatched and freed once its result is in). The states:
 *
 *   QUEUED -> PREPPING (spec made, key, store lookup) -> READY -> LEASED -> VERIFYING -> DONE
 *                    \-> DONE (found in the store)        ^-------- failure ----/
 *
 * and FAILED when a job fails the run. Not thread-safe: the engine's loop owns it while a batch
 * runs; the engine's mutex guards the caller's readers.
 */
#ifndef TB_JOBTABLE_H
#define TB_JOBTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/result.h"
#include "jobs/job.h"

typedef struct cJSON cJSON;

typedef enum {
    TB_JOB_QUEUED,
    TB_JOB_PREPPING,
    TB_JOB_READY,
    TB_JOB_LEASED,
    TB_JOB_VERIFYING,
    TB_JOB_DONE,
    TB_JOB_FAILED
} tb_job_state_t;

/* How an attempt ended. */
typedef enum {
    TB_OUT_RUNNING,
    TB_OUT_OK,
    TB_OUT_LOST,         /* "lost: why": its worker went away */
    TB_OUT_FAILED,       /* "failed: the job's error" */
    TB_OUT_CORRUPT,      /* "corrupt result: why": the blob did not decode */
    TB_OUT_WRONG,        /* "wrong result: why": the kind's check refused it */
    TB_OUT_BAD_TRANSFER, /* "bad transfer: why" */
    TB_OUT_TIMED_OUT,    /* "timed out after S s" */
    TB_OUT_DISAGREED,    /* "disagreed: ...": outside the majority of a verification */
    TB_OUT_DISCARDED     /* "discarded: why": not used (its worker was quarantined) */
} tb_outcome_t;

typedef struct {
    uint32_t attempt;
    int32_t worker; /* registry index; -1: in-process (the coordinator's own tie-break) */
    char *text;     /* the whole outcome when it is not "ok"/"running" (heap), else NULL */
    double started_s;
    uint64_t result_xxh3; /* of the raw result it returned, when it returned one */
    float seconds;
    uint8_t outcome; /* tb_outcome_t */
    bool verify;     /* a run of a job whose result was already in hand (replication) */
    uint16_t peak;   /* its worker's peak memory as reported (tb_peak_pack); 0: not known */
} tb_attempt_rec_t;

/* A peak memory in 16 bits, as the attempt record keeps it: KiB with an 11-bit mantissa and a
 * 5-bit exponent, rounded down (exact below 2 MiB, within 0.05 % above, up to 4 PiB). */
uint16_t tb_peak_pack(uint64_t bytes);
uint64_t tb_peak_unpack(uint16_t code);
/* The same code rounded up: tb_peak_unpack(tb_peak_pack_up(b)) >= b (a bound is never lowered). */
uint16_t tb_peak_pack_up(uint64_t bytes);

/* Verification by replication (docs/distribution.md): one result of a job in hand, checked but
 * neither stored nor used until another worker's agrees. */
typedef struct {
    int32_t worker;   /* registry index; -1: the coordinator itself (a tie-break) */
    uint32_t conn_no; /* its connection (registry.h); unused for -1 */
    uint32_t attempt;
    uint64_t xxh3; /* of the raw result: what the votes compare */
    double seconds;
    tb_result_t *result; /* decoded and checked */
    void *blob;          /* as it came, for the store (NULL when `sinking`) */
    size_t blob_bytes;
    bool sinking; /* a large one: its store file, written and not yet committed */
    tb_cache_sink_t sink;
} tb_vote_t;

#define TB_MAX_VOTES 3
typedef struct {
    tb_vote_t v[TB_MAX_VOTES];
    int n;
    double waiting_since_s; /* when it last went back to wait for another opinion */
} tb_votes_t;

/* Frees a vote's result, blob and uncommitted store file. */
void tb_vote_free(tb_vote_t *v);

/* Makes job `index`'s spec when the engine needs it (lazy jobs; dispatch.h). */
typedef int (*tb_jobtable_spec_fn)(void *user, size_t index, void **spec, size_t *bytes,
                                   tb_err_t *err);

typedef struct {
    const tb_job_kind_t *kind;
    char *label;
    /* the spec: an eager job's copy for the batch; a lazy job's while it is made */
    void *spec;
    size_t spec_bytes;
    void *spec_blob; /* compressed, for the wire; kept for retries while the job runs */
    size_t spec_blob_bytes;
    uint64_t spec_xxh3; /* of the spec bytes, once made (a lazy job's remakes must match) */
    tb_jobtable_spec_fn make_spec;
    void *spec_user;
    uint64_t *inputs; /* a lazy job's input hashes, until its key is made */
    uint32_t n_inputs;
    bool lazy;
    bool has_key;
    tb_cache_key_t key;
    /* the caller's stated bound on a worker's peak memory for it (tb_peak_pack_up); 0: none */
    uint16_t memory_bound;
    size_t max_result_bytes;
    double weight;
    double cells;
    float deadline_s;         /* the caller's (or --job-timeout); 0: none given */
    float default_deadline_s; /* ... then its kind's, from the measured cost (the engine's) */
    float progress;
    uint8_t state; /* tb_job_state_t */
    bool from_store;
    bool pushed;        /* handed to the delivery queue */
    uint8_t error_code; /* tb_errcode_t of the last failure */
    int32_t worker;     /* the lease holder while LEASED, the producer once DONE; -1 */
    uint32_t last_attempt;
    tb_attempt_rec_t *attempts;
    uint16_t n_attempts, cap_attempts;
    float rate_t1;       /* LEASED: its rate's newer anchor, seconds after the older one (below) */
    uint32_t *failed_on; /* connection numbers (registry.h) it failed on or lost */
    uint16_t n_failed_on, cap_failed_on;
    uint16_t failures, lost;
    float rate_p1;     /* LEASED: the newer anchor's fraction */
    float rate_t_last; /* LEASED: its latest report's time after the older anchor (below) */
    char *error;       /* the last failure's message, heap; NULL */
    tb_result_t *result;
    size_t result_bytes;
    uint64_t result_xxh3;
    float seconds;
    float take_in_s;   /* the coordinator's seconds from its result's arrival to done */
    tb_votes_t *votes; /* verification: the results in hand (NULL: none; freed with the job) */
    bool verified;     /* its result agreed with another worker's */
    /* its runs under way: leased, or their result being checked; more than one only while new
     * workers share it on probation (tb_jobtable_probation_job) */
    uint8_t runs;
    bool failed_by_losses;
    /* its running attempt's rate (report/progress.h), over the last TB_JOB_RATE_WINDOW_S to twice
     * that: two anchors (time, fraction), the older at progress_t0_s, the newer rate_t1 after it;
     * the first is its first progress report, so the spec's transfer and the job's setup are not
     * its speed; and its latest report (`progress`), rate_t_last after the older anchor */
    float progress_p0;
    union {                   /* one clock a state */
        double progress_t0_s; /* LEASED: the older anchor's time; 0: no report yet */
        double received_s;    /* VERIFYING: when its result arrived (take_in_s above); 0: none */
    };
} tb_jobrec_t;

#define TB_JOB_RATE_WINDOW_S 3.0

/* A running job's progress report (a fraction in [0, 1]): moves the anchors of its rate. */
void tb_jobrec_progress(tb_jobrec_t *job, double fraction);

typedef struct {
    int max_failures; /* per job (default 3) */
    int max_lost;     /* times a job may lose its worker (default 8) */
    bool unordered;   /* deliver in completion order instead of job order */
} tb_jobtable_opts_t;

typedef struct tb_jobtable_t tb_jobtable_t;

tb_jobtable_t *tb_jobtable_new(const tb_jobtable_opts_t *opts, tb_err_t *err);
/* Frees every job, spec and held result; accepts NULL and sets *self_p to NULL. */
void tb_jobtable_destroy(tb_jobtable_t **self_p);

/* Adds a job: eager (spec copied here) when `spec` is not NULL, else lazy (make_spec is called
 * later; input hashes kept until the key is made). The key of an eager job is made at once.
 * Returns its index, or -1 with *err set (unknown kind, spec over the kind's limit, no spec and no
 * maker, out of memory). */
int64_t tb_jobtable_add(tb_jobtable_t *self, const char *kind, const void *spec, size_t spec_bytes,
                        tb_jobtable_spec_fn make_spec, void *spec_user, const char *label,
                        double weight, double cells, double deadline_s, const uint64_t *inputs,
                        size_t n_inputs, tb_err_t *err);

size_t tb_jobtable_count(const tb_jobtable_t *self);
tb_jobrec_t *tb_jobtable_at(const tb_jobtable_t *self, size_t i);

/* Fixes the dispatch order, largest weight first, ties in job order (call once all jobs are
 * added); the k-th job of that order. */
int tb_jobtable_seal(tb_jobtable_t *self, tb_err_t *err);
size_t tb_jobtable_order(const tb_jobtable_t *self, size_t k);

/* Installs a lazy job's spec, made on a helper thread (taken over: *spec_p is set to NULL), with
 * its XXH3-64, its store key and its result bound computed there; the first time they become the
 * job's. A remade spec whose hash differs from the first is TB_E_INTERNAL (make_spec must be a pure
 * function of the job). */
int tb_jobtable_install_spec(tb_jobtable_t *self, size_t index, void **spec_p, size_t bytes,
                             uint64_t spec_xxh3, const tb_cache_key_t *key, size_t max_result,
                             tb_err_t *err);
/* Frees a lazy job's spec and blob (an eager job keeps its spec for the batch, frees its blob). */
void tb_jobtable_drop_spec(tb_jobtable_t *self, size_t index);
/* A lazy job whose compressed spec is made: its raw spec is freed (spec NULL, spec_bytes kept),
 * for whoever needs it decodes the blob (coordinator/farm/jobwork.c). An eager job, or a job with
 * no blob, keeps its spec. */
void tb_jobtable_keep_blob_only(tb_jobtable_t *self, size_t index);
/* Lazy jobs whose spec is made and held right now (raw or compressed). */
size_t tb_jobtable_specs_held(const tb_jobtable_t *self);

/* A new attempt on worker `worker` (registry index, -1 in-process): its number, or 0 when out of
 * memory. */
uint32_t tb_jobtable_attempt_begin(tb_jobtable_t *self, size_t index, int32_t worker);
tb_attempt_rec_t *tb_jobtable_attempt(tb_jobtable_t *self, size_t index, uint32_t attempt);
/* Sets an attempt's outcome (text: the whole outcome for anything but ok, as "lost: why"). */
void tb_jobtable_attempt_end(tb_jobtable_t *self, size_t index, uint32_t attempt,
                             tb_outcome_t outcome, const char *text, double seconds);
/* The attempt's outcome as the records say it ("ok", "running", "lost: ...", ...). */
const char *tb_jobtable_outcome_text(const tb_attempt_rec_t *a);

/* The job goes back to READY without counting anything against it (its attempt was discarded:
 * the worker that held it was quarantined). */
void tb_jobtable_requeue(tb_jobtable_t *self, size_t index);

/* Counts a failure (`lost` false: against max_failures, with the job's error) or a lost worker
 * (`lost` true: against max_lost) on connection conn_no; the job goes back to READY. */
void tb_jobtable_count_failure(tb_jobtable_t *self, size_t index, uint32_t conn_no, bool lost,
                               const tb_err_t *job_err, const char *outcome);

bool tb_jobtable_failed_on(const tb_jobtable_t *self, size_t index, uint32_t conn_no);

/* Whether job `index` (READY) fails the run now: it has failed max_failures times (or lost its
 * worker max_lost times) and every live connection (live[0..n_live)) has tried it. Then the job is
 * FAILED, its error set, and the table remembers it (tb_jobtable_failed_job). */
bool tb_jobtable_check_failed(tb_jobtable_t *self, size_t index, const uint32_t *live,
                              size_t n_live);
/* The job that failed the run, or -1. */
int64_t tb_jobtable_failed_job(const tb_jobtable_t *self);
/* Its error, prefixed with its label and how often it failed. */
void tb_jobtable_failure(const tb_jobtable_t *self, tb_err_t *err);

/* Job `index` is done with `result` (taken over: *result_p is set to NULL). */
void tb_jobtable_done(tb_jobtable_t *self, size_t index, tb_result_t **result_p, uint64_t xxh3,
                      int32_t worker, double seconds, bool from_store);

/* The next result that may go to the caller now (job order: the first not yet pushed, if done;
 * unordered: the oldest done and not pushed), or -1. Marks it pushed and hands over its result
 * (*result_p; NULL when `keep`, for tb_dispatch_result after the run). */
int64_t tb_jobtable_next_delivery(tb_jobtable_t *self, bool keep, tb_result_t **result_p);

/* Results done but not yet pushed to the caller (held by the table), and their bytes in memory. */
size_t tb_jobtable_held(const tb_jobtable_t *self);
size_t tb_jobtable_held_bytes(const tb_jobtable_t *self);

/* Job order: the most done results held at once behind an earlier job not yet done (0 unordered,
 * and whatever the threads' timing: it counts only what order holds back). */
size_t tb_jobtable_order_held_peak(const tb_jobtable_t *self);

/* Whether job `index` may start (be prepared or dispatched): always below the bound on held
 * results; at it (`at_bound`), in job order only the job the caller waits for next (else delivery
 * could never move again), unordered none. */
bool tb_jobtable_may_start(const tb_jobtable_t *self, size_t index, bool at_bound);

/* In job order, the job whose result the caller waits for next; -1 unordered or when none. */
int64_t tb_jobtable_next_wanted(const tb_jobtable_t *self);

/* Verification's probation (docs/distribution.md): the job a worker not yet trusted runs now,
 * found from the small end of the dispatch order: the first job not done that is READY and may
 * start (a first run or a second opinion), or running with room for one more concurrent run (its
 * runs and results in hand under TB_MAX_VOTES), and that `may_run(user, index)` accepts (the
 * caller's rules: the worker gave none of its results in hand and did not fail it; a running job's
 * runs and results are all by workers on probation). Returns its index, or -1: wait, when nothing
 * fits or when the smallest job that could is still being prepared (PREPPING: ready in a moment,
 * where a larger job taken instead would run twice). QUEUED jobs are passed over
 * (tb_jobtable_probation_prep says which to prepare). */
int64_t tb_jobtable_probation_job(const tb_jobtable_t *self, bool at_bound,
                                  bool (*may_run)(void *user, size_t index), void *user);
/* The job to prepare for a worker on probation: the smallest QUEUED job when no smaller job is
 * READY or being prepared (the dispatch order prepares the largest first); -1 when none is
 * needed. */
int64_t tb_jobtable_probation_prep(const tb_jobtable_t *self);

/* Counters: jobs done, their weight and cells. */
size_t tb_jobtable_done_count(const tb_jobtable_t *self);
double tb_jobtable_done_weight(const tb_jobtable_t *self);
double tb_jobtable_done_cells(const tb_jobtable_t *self);
double tb_jobtable_total_weight(const tb_jobtable_t *self);

/* "queued", "running", "done", "failed" for the records (PREPPING and READY are queued; VERIFYING
 * is running). */
const char *tb_job_state_name(tb_job_state_t s);

/* The workers' peak memory over every attempt that reported one, against each job's stated bound
 * (docs/distribution.md, "Peak memory"). */
typedef struct {
    size_t measured;             /* attempts with a reported peak */
    size_t bounded;              /* ... of jobs with a stated bound */
    size_t over;                 /* ... whose peak exceeded it */
    uint64_t peak;               /* the largest peak (0: none measured) */
    const tb_jobrec_t *peak_job; /* and its job and attempt; NULL when none */
    const tb_attempt_rec_t *peak_at;
    double worst_ratio;           /* the largest peak / bound (0: none bounded) */
    const tb_jobrec_t *worst_job; /* and its job and attempt; NULL when none */
    const tb_attempt_rec_t *worst_at;
} tb_jobtable_peaks_t;
void tb_jobtable_peaks(const tb_jobtable_t *self, tb_jobtable_peaks_t *out);

/* Job i as meta.json's "jobs" entry: index, label, kind, key, done, state, weight, cells,
 * memory_bound_bytes (null: none stated), progress, error, from_store, worker, seconds,
 * result_bytes, deadline_s, result_xxh3, attempts
 * (at most TB_JOBTABLE_RECORD_ATTEMPTS of them, the first and the last, with "attempts_omitted").
 * `name_of` names a registry index; `t0` is the run's start (attempts' start_s). */
#define TB_JOBTABLE_RECORD_ATTEMPTS 8
cJSON *tb_jobtable_job_json(const tb_jobtable_t *self, size_t i,
                            const char *(*name_of)(void *user, int32_t worker), void *user,
                            double t0);

#endif
