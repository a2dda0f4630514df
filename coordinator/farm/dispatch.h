/* The dispatch engine: run a list of jobs on workers and hand back their results in job order, the
 * same bytes whichever way they were run (docs/determinism.md, docs/distribution.md).
 *
 * A caller adds jobs (kind, canonical spec, weight, cache inputs) and calls tb_dispatch_run once -
 * or, with the option `batches`, runs several batches of jobs on one engine: tb_dispatch_run, then
 * tb_dispatch_next_batch, more jobs, tb_dispatch_run again, ..., and tb_dispatch_finish. The
 * socket, the connected workers, the blocklist and the result store then live across the batches
 * (a bake's solve, coast and tiles phases share one farm: docs/distribution.md, "One engine across
 * the phases"), and workers are told to leave once, by tb_dispatch_finish (or on a failed run).
 * Three modes, chosen by the options:
 *   - in-process (`workers` 0, no `bind`): each job runs through jobs/job.h on this thread's pool;
 *   - local (the default): `workers` terrain-worker processes over ipc:// in a private directory,
 *     started here and stopped at the end, on error and on interrupt (local_workers.h);
 *   - farm (`bind`): workers connect from anywhere to the bound endpoint (plus `workers` local
 *     helpers over ipc, 0 by default).
 *
 * Before anything runs, each job's key (build id, kind, spec, input hashes) is looked up in the
 * result store; a valid stored result is used as it is, a corrupt one is logged and recomputed, and
 * each new result is stored as soon as it arrives, so a coordinator killed mid-run loses nothing it
 * had received.
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
 * No signal handler is installed here: the program passes a flag its own handler sets.
 */
#ifndef TB_DISPATCH_H
#define TB_DISPATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct cJSON cJSON;
typedef struct tb_dispatch_t tb_dispatch_t;

/* One job to run. Everything is copied by tb_dispatch_add. */
typedef struct {
    const char *kind; /* a kind registered in jobs/job.c */
    const void *spec; /* canonical spec bytes: equal specs must mean equal results */
    size_t spec_bytes;
    double weight;                /* scheduling size (cells x steps): larger goes first */
    double cells;                 /* shown in the progress bar as work done; may be 0 */
    const char *label;            /* "region 3" in logs and records; NULL: "job N" */
    const uint64_t *input_hashes; /* hashes of inputs the spec names but does not contain */
    size_t n_inputs;
    double deadline_s; /* how long an attempt may run (the caller's estimate times a generous
                          factor); 0: none. The option job_timeout_s overrides it. */
} tb_job_desc_t;

/* Called in job order for every result, as soon as it and all results before it are in. The data
 * is borrowed; when a callback is given the engine frees each result after it returns. It runs on
 * the dispatch loop, which does not heartbeat meanwhile: keep it well under a heartbeat interval
 * (copy the result into place), or collect results with tb_dispatch_result after the run. */
typedef void (*tb_dispatch_result_fn)(void *user, size_t index, const void *data, size_t bytes);

typedef struct {
    int workers;                /* local processes (default: online cores, at most the jobs
                                   left to run); 0 = in-process unless bind is set; with bind:
                                   local helpers (default 0) */
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
    /* Called on the dispatch loop after each turn (at most every 100 ms) and, in-process, from the
     * job's progress reports: a live view may read tb_dispatch_record_json. Throttle in the
     * callback; keep it short (it delays heartbeats like on_result does). May be NULL. */
    void (*on_tick)(void *user, const tb_dispatch_t *d);
} tb_dispatch_opts_t;

/* One attempt at a job, for the record. */
typedef struct {
    uint32_t attempt;
    char worker[128];
    char outcome[256]; /* "ok", "lost: ...", "failed: ...", "corrupt result: ...", "cancelled" */
    double seconds;
    double started_s; /* tb_now_s() when it was dispatched (the record gives it from the run's
                         start) */
} tb_attempt_t;

/* What happened to one job. */
typedef struct {
    const char *label;
    const char *kind;
    char key_hex[33];
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
    size_t corrupt_store; /* stored results rejected by their checksum or format */
    size_t workers_seen;  /* workers that joined, counted once per name */
    size_t workers_refused;
    double seconds;
    const char *mode; /* "in-process", "local", "farm" */
} tb_dispatch_stats_t;

/* A dispatcher with copied options (strings must outlive it). */
tb_dispatch_t *tb_dispatch_new(const tb_dispatch_opts_t *opts, tb_err_t *err);
/* Frees everything; accepts NULL and sets *self_p to NULL. */
void tb_dispatch_destroy(tb_dispatch_t **self_p);

/* Adds a job (copied); returns its index, or -1 with *err set. */
int64_t tb_dispatch_add(tb_dispatch_t *self, const tb_job_desc_t *job, tb_err_t *err);

/* Runs every job of the batch. Returns 0 when all are done, or -1 with *err set: the failing job's
 * own error (prefixed with its label and how often it failed), TB_E_INTERRUPTED, or a setup error.
 * Without `batches`: call once; workers are told to leave and local workers are stopped (their
 * directory removed) on every path. With `batches`: once a batch; after a successful run the
 * socket stays bound and the workers connected (a thread answers their heartbeats and registers
 * newcomers until the next run), after a failed one they are dismissed as without. */
int tb_dispatch_run(tb_dispatch_t *self, tb_err_t *err);

/* What changes from one batch to the next (a bake phase's own callbacks and label). */
typedef struct {
    const char *label; /* progress bar label; NULL: "jobs" */
    tb_dispatch_result_fn on_result;
    void (*on_tick)(void *user, const tb_dispatch_t *d);
    void *user; /* for on_result and on_tick */
    bool fresh; /* do not read the store for this batch's jobs (results are still written) */
} tb_dispatch_batch_t;

/* Starts a new batch (`batches` only) after a successful run: the previous batch's jobs, results,
 * records and per-batch statistics are dropped (read them first), job indices start again at 0
 * (on the wire job ids keep growing, so a late message about an old job never matches a new one),
 * and the callbacks and label become `batch`'s. Workers, blocklist, leases' fencing, store and
 * the cumulative `workers_seen` stay. 0, or -1 (TB_E_INTERNAL) when the previous batch did not
 * finish or the engine has no batches. */
int tb_dispatch_next_batch(tb_dispatch_t *self, const tb_dispatch_batch_t *batch, tb_err_t *err);

/* Ends an engine with batches: tells the connected workers to leave ("the run failed" when
 * `failed`, unless keep_workers for farm workers), stops the local ones and closes the socket.
 * Idempotent; destroy does it too (as a failure) when it was not called. */
void tb_dispatch_finish(tb_dispatch_t *self, bool failed);

/* Number of jobs added. */
size_t tb_dispatch_count(const tb_dispatch_t *self);

/* Job i's result after a successful run (borrowed; NULL when an on_result callback took it). */
const void *tb_dispatch_result(const tb_dispatch_t *self, size_t i, size_t *bytes);

/* Job i's record (borrowed pointers valid until destroy). */
void tb_dispatch_record(const tb_dispatch_t *self, size_t i, tb_job_record_t *rec);

/* Totals of the run. */
void tb_dispatch_stats(const tb_dispatch_t *self, tb_dispatch_stats_t *stats);

/* The records as JSON for meta.json: {"mode", "seconds", "stats", "workers": [...], "jobs": [...]}.
 * Also valid while the run goes on (from on_tick): "seconds" is then the time so far, jobs carry
 * their "state" (queued, running, done, failed) and "progress", attempts their "start_s" from the
 * run's start, workers whether they are "alive" and the "job" they hold (docs/report.md).
 * The caller owns the result (cJSON_Delete). */
cJSON *tb_dispatch_record_json(const tb_dispatch_t *self);

#endif
