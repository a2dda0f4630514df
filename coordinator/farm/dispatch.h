/* The dispatch engine: run a list of jobs on workers and hand back their results, the same bytes
 * whichever way they were run (docs/determinism.md, docs/distribution.md).
 *
 * A caller adds jobs (kind, canonical spec - or a function that makes it -, weight, cache inputs)
 * and calls tb_dispatch_run once - or, with the option `batches`, runs several batches of jobs on
 * one engine: tb_dispatch_run, then tb_dispatch_next_batch, more jobs, tb_dispatch_run again, ...,
 * and tb_dispatch_finish. The socket, the connected workers (local ones included), the blocklist
 * and the result store then live across the batches (a bake's phases share one engine:
 * docs/distribution.md, "One engine across the phases"), and workers are told to leave once, by
 * tb_dispatch_finish (or on a failed run). Three modes, chosen by the options:
 *   - in-process (`workers` 0, no `bind`): each job runs through jobs/job.h on the caller's thread
 *     and pool;
 *   - local (the default): `workers` terrain-worker processes over ipc:// in a private directory,
 *     started when there is work for them and stopped at the end, on error and on interrupt
 *     (local_workers.h);
 *   - farm (`bind`): workers connect from anywhere to the bound endpoint (plus `workers` local
 *     helpers over ipc, 0 by default).
 *
 * Threads (local and farm modes). The event loop - the socket, heartbeats, leases, dispatch - runs
 * on a thread of the engine from the first tb_dispatch_run to tb_dispatch_finish (or destroy), also
 * between batches, and never waits on the caller, on disk or on compression:
 *   - the caller's thread, inside tb_dispatch_run, runs every callback: on_result / on_take and
 *     on_tick. The loop hands results over through a queue; when `max_held` results (or
 *     `max_held_bytes` of them in memory) wait for the caller, the engine stops starting new jobs
 *     (workers stay connected and heartbeated, idle) until the caller has taken some, so a slow
 *     consumer throttles the farm instead of stalling it;
 *   - `helper_threads` helper threads make lazy specs (make_spec), compress specs, read and decode
 *     stored results, and decode, check and store the workers' results;
 *   - results larger than `large_result_bytes` go from the socket straight to a file in the store
 *     directory chunk by chunk, are decoded there in a stream, and reach the caller as a read-only
 *     mapping (result.h), never as a heap copy.
 * In-process, everything runs on the caller's thread in job order.
 *
 * The result store: each job's key (build id, kind, spec, input hashes) is looked up before the
 * job is dispatched; a valid stored result is used as it is, one that fails its check is removed,
 * logged and recomputed, and each new result is stored as soon as it is checked, so a coordinator
 * killed mid-run loses nothing it had received.
 *
 * Leases (docs/distribution.md): one per dispatch (job, attempt, worker, deadline); the deadline
 * is renewed by any message from the worker and expires after `liveness` silent heartbeat intervals
 * (or `job_timeout_s`). An expired lease's job is dispatched again under a new attempt number, and
 * a RESULT or FAIL for any attempt but the live one, or from any worker but its holder, is dropped
 * (fencing). A job that fails `max_failures` times - on that many different workers while there
 * are different workers to try - fails the run with its own error; a worker that fails
 * `blocklist_after` attempts is blocklisted; a worker whose build id differs is refused. Jobs go
 * out largest weight first; a worker gets one job at a time and gives it all its threads.
 *
 * No signal handler is installed here: the program passes a flag its own handler sets. The engine's
 * own threads block every signal.
 */
#ifndef TB_DISPATCH_H
#define TB_DISPATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/farm/result.h"

typedef struct cJSON cJSON;
typedef struct tb_dispatch_t tb_dispatch_t;

/* Makes the spec of job `index` (a lazy job: tb_job_desc_t.make_spec): *spec malloc'd (the engine
 * owns and frees it), *bytes its length; 0, or -1 with *err set (which fails the run). Called when
 * the engine needs the bytes - to compute the job's store key and look it up, to dispatch it, and
 * again if a retry needs them after they were freed - on one of the engine's helper threads,
 * possibly at the same time as other jobs' make_spec (helper_threads > 1) and as the callbacks on
 * the caller's thread: it may read only what does not change while the batch runs. It must give
 * the same bytes every time (the engine checks their XXH3 and fails the run otherwise). */
typedef int (*tb_dispatch_spec_fn)(void *user, size_t index, void **spec, size_t *bytes,
                                   tb_err_t *err);

/* One job to run. Everything is copied by tb_dispatch_add (a lazy job's spec is made later). */
typedef struct {
    const char *kind; /* a kind registered in jobs/job.c */
    const void *spec; /* canonical spec bytes: equal specs must mean equal results; NULL for a
                         lazy job */
    size_t spec_bytes;
    double weight;                /* scheduling size (cells x steps): larger goes first */
    double cells;                 /* shown in the progress bar as work done; may be 0 */
    const char *label;            /* "region 3" in logs and records; NULL: "job N" */
    const uint64_t *input_hashes; /* hashes of inputs the spec names but does not contain */
    size_t n_inputs;
    double deadline_s; /* how long an attempt may run (the caller's estimate times a generous
                          factor); 0: none. The option job_timeout_s overrides it. */
    /* The stated bound on a worker's peak resident memory for it, bytes (the kind's measured
     * model, docs/distribution.md "Peak memory"); 0: none. A worker that reports more is named in
     * a warning and counted in the record's worker_peak. */
    double memory_bytes;
    /* A lazy job (spec NULL): the engine calls make_spec(spec_user, index, ...) when it needs the
     * bytes and frees them as soon as the job's result is stored or found in the store. At most
     * `max_specs` made specs are held at once. */
    tb_dispatch_spec_fn make_spec;
    void *spec_user;
} tb_job_desc_t;

/* Called for every result, in job order (or as they come with `unordered`), on the caller's thread
 * inside tb_dispatch_run. The data is borrowed: when a callback is given the engine frees each
 * result after it returns. It may take as long as it needs: the loop goes on meanwhile, and stops
 * starting jobs while `max_held` results wait. */
typedef void (*tb_dispatch_result_fn)(void *user, size_t index, const void *data, size_t bytes);

/* Like tb_dispatch_result_fn, but the callee takes the result (result.h: bytes in memory or a
 * read-only mapping of a file, one type for both) and destroys it when done, on any thread; a
 * consumer that reads a large result in bands gives each band back with tb_result_done_with.
 * Results the callee keeps are its own memory, outside `max_held`. When both are set, on_take is
 * called and on_result is not. */
typedef void (*tb_dispatch_take_fn)(void *user, size_t index, tb_result_t *result);

typedef struct {
    int workers;                /* local processes (default: online cores, started as jobs need
                                   them); 0 = in-process unless bind is set; with bind: local
                                   helpers (default 0) */
    bool workers_given;         /* workers was set explicitly (0 is then meaningful) */
    int threads;                /* threads per worker / in-process (default: online cores) */
    const char *bind;           /* farm endpoint; NULL = local or in-process */
    bool insecure;              /* allow a non-loopback bind without CURVE */
    const char *curve_cert;     /* farm: the coordinator's certificate */
    const char *curve_clients;  /* farm: directory of allowed worker certificates */
    const char *store_dir;      /* the result store (out/.cache); NULL = none */
    bool fresh;                 /* do not read the store (results are still written) */
    int heartbeat_ms;           /* default 1000 */
    int liveness;               /* default 3 */
    size_t chunk_bytes;         /* spec chunk size; default TB_PROTO_CHUNK_DEFAULT */
    double job_timeout_s;       /* every attempt's deadline; 0 = each job's deadline_s */
    double wait_workers_s;      /* farm: fail when no worker is connected this long; 0 = never */
    int max_failures;           /* per job; default 3 */
    int blocklist_after;        /* failed attempts before a worker is blocklisted; default 3 */
    int max_lost;               /* times a job may lose its worker; default 8 */
    int max_respawns;           /* local workers restarted after dying; default 2 x workers */
    const char *worker_program; /* terrain-worker path; NULL: see local_workers.h */
    bool keep_workers;          /* farm: do not tell workers to exit at the end */
    bool verbose;               /* log every dispatch and let local workers log */
    const char *label;          /* progress bar label; default "jobs" */
    tb_dispatch_result_fn on_result;
    void *user;
    volatile sig_atomic_t *interrupted; /* set by the program's SIGINT/SIGTERM handler */
    void (*on_listening)(void *user, const char *endpoint); /* farm: called once bound */
    void *listening_user; /* on_listening's argument; NULL: user */
    bool batches;         /* several batches; see tb_dispatch_next_batch */
    /* Called on the caller's thread about every 100 ms while a batch runs (and in-process from the
     * job's progress reports): a live view may read tb_dispatch_record_json. May be NULL. */
    void (*on_tick)(void *user, const tb_dispatch_t *d);
    /* ---- delivery, memory and threads (docs/distribution.md, "Delivery and memory") ---- */
    bool unordered;              /* deliver each result as soon as it is checked and stored, in
                                    any order (default: job order) */
    tb_dispatch_take_fn on_take; /* see tb_dispatch_take_fn; NULL: on_result */
    size_t max_held;             /* results checked and waiting for the caller (in the queue, or
                                    done out of job order) before no new job starts; default 4.
                                    Only with a callback: without one every result is kept for
                                    tb_dispatch_result */
    size_t max_held_bytes;       /* the same bound on their bytes in memory (mapped ones count
                                    nothing); default 512 MiB */
    size_t max_specs;            /* lazy jobs' specs made and held at once; default: workers
                                    (or the live workers, if more) + 2 */
    size_t large_result_bytes;   /* a result whose raw size (or announced blob) is larger goes
                                    to a file and is delivered mapped; default 64 MiB */
    int helper_threads;          /* default 2 */
    /* ---- verification by replication (docs/distribution.md, "Verification by replication") */
    int verify;          /* TB_VERIFY_*: AUTO (0) is SHARE at 0.05 in farm mode, else OFF */
    double verify_share; /* SHARE: the share of a trusted worker's results run again (0..1] */
    int verify_first;    /* results of a new worker verified before it is trusted; default 1 */
} tb_dispatch_opts_t;

/* --verify: auto (the mode's default), off, all (every result run twice), or a share. */
enum { TB_VERIFY_AUTO = 0, TB_VERIFY_OFF, TB_VERIFY_ALL, TB_VERIFY_SHARE };
#define TB_VERIFY_FARM_SHARE 0.05

/* One attempt at a job, for the record. */
typedef struct {
    uint32_t attempt;
    char worker[128];
    char outcome[256]; /* "ok", "lost: ...", "failed: ...", "corrupt result: ...", "running" */
    double seconds;
    double started_s; /* tb_now_s() when it was dispatched (the record gives it from the run's
                         start) */
} tb_attempt_t;

/* What happened to one job. */
typedef struct {
    const char *label;
    const char *kind;
    char key_hex[33]; /* empty for a lazy job whose spec was never made */
    bool done;
    bool from_store;    /* the result came from the store; nothing ran */
    const char *worker; /* who produced the result: a worker name, "in-process" or "store" */
    double seconds;     /* of the successful attempt */
    size_t result_bytes;
    uint64_t result_xxh3; /* XXH3-64 of the result bytes */
    size_t n_attempts;
    const tb_attempt_t *attempts;
} tb_job_record_t;

/* Totals of a run (with batches: of the current batch, except workers_seen, which counts every
 * worker the engine has met). */
typedef struct {
    size_t jobs;
    size_t from_store;    /* results reused from the store */
    size_t ran;           /* results computed in this run */
    size_t attempts;      /* dispatches in all */
    size_t lost;          /* attempts whose worker was lost */
    size_t failed;        /* attempts that failed or returned a corrupt result */
    size_t corrupt_store; /* stored results rejected by their checksum, format or check */
    size_t workers_seen;  /* workers that joined, counted once per name */
    size_t workers_refused;
    double seconds;
    const char *mode;     /* "in-process", "local", "farm" */
    size_t held_peak;     /* the most results waiting for the caller at once */
    size_t order_peak;    /* of them, the most held back by job order (an earlier job not done) */
    size_t specs_peak;    /* the most lazy specs made and held at once */
    size_t mapped;        /* results delivered as mappings of a file */
    size_t local_started; /* local worker processes started by this engine so far */
    /* verification by replication */
    size_t verified;        /* results compared with another worker's before use */
    size_t verify_attempts; /* the extra runs that took */
    size_t disagreements;   /* jobs whose results differed */
    size_t quarantined;     /* workers quarantined in this batch */
    size_t tiebreaks;       /* jobs the coordinator ran itself to decide */
} tb_dispatch_stats_t;

/* A dispatcher with copied options (strings must outlive it). */
tb_dispatch_t *tb_dispatch_new(const tb_dispatch_opts_t *opts, tb_err_t *err);
/* Frees everything; accepts NULL and sets *self_p to NULL. */
void tb_dispatch_destroy(tb_dispatch_t **self_p);

/* Adds a job (copied); returns its index, or -1 with *err set. */
int64_t tb_dispatch_add(tb_dispatch_t *self, const tb_job_desc_t *job, tb_err_t *err);

/* Runs every job of the batch, calling the callbacks on this thread as results come. Returns 0
 * when all are done and delivered, or -1 with *err set: the failing job's own error (prefixed with
 * its label and how often it failed), TB_E_INTERRUPTED, or a setup error; results not yet
 * delivered are then dropped. Without `batches`: call once; workers are told to leave and local
 * workers are stopped (their directory removed) on every path. With `batches`: once a batch; after
 * a successful run the socket stays bound and the workers connected (the loop keeps them between
 * batches), after a failed one they are dismissed as without. */
int tb_dispatch_run(tb_dispatch_t *self, tb_err_t *err);

/* What changes from one batch to the next (a bake phase's own callbacks and label). */
typedef struct {
    const char *label; /* progress bar label; NULL: "jobs" */
    tb_dispatch_result_fn on_result;
    void (*on_tick)(void *user, const tb_dispatch_t *d);
    void *user;     /* for on_result, on_take and on_tick */
    bool fresh;     /* do not read the store for this batch's jobs (results are still written) */
    bool unordered; /* as the option, for this batch */
    tb_dispatch_take_fn on_take; /* as the option, for this batch */
} tb_dispatch_batch_t;

/* Starts a new batch (`batches` only) after a successful run: the previous batch's jobs, results,
 * records and per-batch statistics are dropped (read them first), job indices start again at 0
 * (on the wire job ids keep growing, so a late message about an old job never matches a new one),
 * and the callbacks, label and delivery order become `batch`'s. Workers, blocklist, leases'
 * fencing, store and the cumulative `workers_seen` stay. 0, or -1 (TB_E_INTERNAL) when the previous
 * batch did not finish or the engine has no batches. */
int tb_dispatch_next_batch(tb_dispatch_t *self, const tb_dispatch_batch_t *batch, tb_err_t *err);

/* Ends an engine with batches: tells the connected workers to leave ("the run failed" when
 * `failed`, unless keep_workers for farm workers), stops the local ones and closes the socket.
 * Idempotent; destroy does it too (as a failure) when it was not called. */
void tb_dispatch_finish(tb_dispatch_t *self, bool failed);

/* Number of jobs added. */
size_t tb_dispatch_count(const tb_dispatch_t *self);

/* Job i's result after a successful run (borrowed; NULL when a callback took it). A large result
 * is a mapping (see tb_dispatch_take_result to release it early). */
const void *tb_dispatch_result(const tb_dispatch_t *self, size_t i, size_t *bytes);

/* Takes job i's result out of the engine after a successful run without callbacks (the caller
 * destroys it); NULL when there is none or it was taken. */
tb_result_t *tb_dispatch_take_result(tb_dispatch_t *self, size_t i);

/* Job i's record (borrowed pointers valid until the next tb_dispatch_record or destroy). */
void tb_dispatch_record(const tb_dispatch_t *self, size_t i, tb_job_record_t *rec);

/* Totals of the run. */
void tb_dispatch_stats(const tb_dispatch_t *self, tb_dispatch_stats_t *stats);

/* The records as JSON for meta.json: {"mode", "seconds", "stats", "workers": [...], "jobs": [...]}.
 * Also valid while the run goes on (from on_tick): "seconds" is then the time so far, jobs carry
 * their "state" (queued, running, done, failed) and "progress", attempts their "start_s" from the
 * run's start, workers whether they are "alive" and the "job" they hold (docs/report.md). A job's
 * entry is a few hundred bytes: at most 8 attempts (the first and last four) with
 * "attempts_omitted", outcomes cut at 160 characters. The caller owns the result (cJSON_Delete). */
cJSON *tb_dispatch_record_json(const tb_dispatch_t *self);

#endif
