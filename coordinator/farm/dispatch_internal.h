/* The dispatch engine's internals, shared by coordinator/farm/dispatch*.c (the engine is cut along
 * its sections: setup and accessors in dispatch.c, attempts and results in dispatch_records.c,
 * progress and in-process runs in dispatch_local.c, workers and leases in dispatch_workers.c, the
 * messages of workers in dispatch_messages.c, and the event loop in dispatch_loop.c). Not for use
 * outside coordinator/farm/.
 */
#ifndef TB_DISPATCH_INTERNAL_H
#define TB_DISPATCH_INTERNAL_H

#include <cJSON.h>
#include <czmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <xxhash.h>

#include "common/blob.h"
#include "common/log.h"
#include "common/pool.h"
#include "coordinator/farm/proto.h"
#include "common/version.h"
#include "coordinator/farm/broker.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/local_workers.h"
#include "jobs/job.h"

#include "coordinator/farm/dispatch.h"

#define S_NAME_MAX 128
#define S_MAX_FAILED_ON 32

/* A rate limit on repeated warnings: the first few are printed, then one in a while with the count
 * of those not printed (docs/distribution.md, "Leases, fencing and the failure rules"). */
typedef struct {
    double window_start_s;
    int in_window;
    long suppressed;
} tb_dsp_warn_limit_t;

typedef enum { S_PENDING, S_LEASED, S_DONE, S_FAILED } s_state_t;

typedef struct {
    char *kind;
    void *spec;
    size_t spec_bytes;
    double weight;
    double cells;
    char *label;
    tb_cache_key_t key;
    char key_hex[33];
    size_t max_result_bytes; /* what this job's spec can produce (tb_job_result_bound) */
    const tb_job_kind_t *kind_def;
    s_state_t state;
    void *spec_blob; /* encoded at the first dispatch, reused by every retry */
    size_t spec_blob_bytes;
    uint32_t last_attempt;
    tb_attempt_t *attempts;
    size_t n_attempts;
    size_t cap_attempts;
    char failed_on[S_MAX_FAILED_ON][S_NAME_MAX]; /* distinct connections (s_worker_t.conn) it
                                                    failed on */
    int n_failed_on;
    int n_forgotten; /* connections dropped from failed_on when it was full */
    int failures;
    int lost;
    double deadline_s; /* of each attempt; 0 = none */
    tb_err_t last_err;
    tb_err_t lost_err;     /* "lost its worker N times (last: ...)" */
    bool failed_by_losses; /* it failed the run by max_lost, not max_failures */
    int64_t worker;        /* the lease holder while S_LEASED */
    double progress;
    void *result;
    size_t result_bytes;
    uint64_t result_xxh3;
    bool from_store;
    char worker_name[S_NAME_MAX];
    double seconds;
} s_job_t;

typedef struct {
    unsigned char id[256];
    size_t id_bytes;
    char name[S_NAME_MAX]; /* what the worker declared: for the records only */
    char conn[S_NAME_MAX]; /* its identity: "key:Z85" (CURVE) or "conn:HEX" (the routing id) */
    uint32_t threads;
    uint64_t memory_bytes;
    bool alive;
    double last_seen_s;
    double last_sent_s;
    int64_t job; /* the leased job, or -1 */
    uint32_t attempt;
    double lease_started_s;
    tb_transfer_t result_in;
    bool draining; /* a cancelled lease whose terminal message is still to come */
    uint64_t drain_job;
    uint32_t drain_attempt;
    int failures;
    tb_dsp_warn_limit_t warn; /* warnings about this worker */
    int jobs_done;
    double busy_s;
    bool local;
} s_worker_t;

struct tb_dispatch_t {
    tb_dispatch_opts_t opts;
    s_job_t *jobs;
    size_t n_jobs;
    size_t cap_jobs;
    size_t *order; /* job indices, largest weight first */
    s_worker_t *workers;
    size_t n_workers;
    size_t cap_workers;
    char (*blocklist)[S_NAME_MAX]; /* connections and keys (s_worker_t.conn) */
    size_t n_blocklist;
    tb_broker_t *broker;
    void *sock;
    tb_local_workers_t *local;
    int local_next_name;
    int respawns;
    tb_cache_t *cache;
    tb_progress_t *bar;
    size_t n_done;
    size_t next_deliver;
    double total_weight;
    double done_weight;
    double done_cells;
    double started_s;
    int64_t failed_job; /* the job that failed the run, or -1 */
    tb_err_t fatal;     /* a run-ending error that is not a job's */
    bool has_fatal;
    double no_worker_since_s;
    double last_wait_log_s;
    bool warned_no_join;
    tb_dispatch_stats_t stats;
    tb_dsp_warn_limit_t warn_unknown; /* warnings about peers that never said READY */
    bool ran;
    /* Batches (opts.batches; docs/distribution.md, "One engine across the phases"). */
    uint64_t job_base;  /* the wire id of jobs[0]: no two batches share a job id */
    bool open;          /* the socket is bound (and local workers started) */
    bool batch_fresh;   /* this batch does not read the store (tb_dispatch_batch_t.fresh) */
    pthread_mutex_t mu; /* held by the idle thread each turn, and by whoever touches the engine
                           while it runs: tb_dispatch_add, _next_batch, _record_json */
    pthread_t idle_thread;
    bool idle_running;
    atomic_bool idle_stop;
};

/* The wire id of job `index` of the current batch (JOB, CANCEL, and what workers answer). */
static inline uint64_t tb_dsp_wire_id(const tb_dispatch_t *self, size_t index)
{
    return self->job_base + index;
}

/* dispatch_records.c */
tb_attempt_t *tb_dsp_attempt_new(s_job_t *job, const char *worker);
tb_attempt_t *tb_dsp_attempt_find(s_job_t *job, uint32_t attempt);
void tb_dsp_failed_on_add(tb_dispatch_t *self, s_job_t *job, const char *conn);
bool tb_dsp_failed_on(const s_job_t *job, const char *conn);
void tb_dsp_job_done(tb_dispatch_t *self, size_t index, void *data, size_t bytes,
                     const char *worker, double seconds, bool from_store);
void tb_dsp_store(tb_dispatch_t *self, size_t index, const void *blob, size_t blob_bytes,
                  const void *raw, size_t raw_bytes);
int tb_dsp_load_store(tb_dispatch_t *self, tb_err_t *err);
/* dispatch_local.c */
size_t tb_dsp_alive(const tb_dispatch_t *self);
void tb_dsp_progress(tb_dispatch_t *self);
int tb_dsp_run_in_process(tb_dispatch_t *self, tb_err_t *err);
/* dispatch_workers.c */
void tb_dsp_id_hex(const s_worker_t *w, char *out, size_t n);
void tb_dsp_peer_hex(const tb_proto_frame_t *id, char *out, size_t n);
s_worker_t *tb_dsp_worker_by_id(tb_dispatch_t *self, const tb_proto_frame_t *id);
s_worker_t *tb_dsp_worker_by_name(tb_dispatch_t *self, const char *name);
/* The identity of a connection: "key:Z85" for a CURVE user id, else "conn:" + XXH3 of the routing
 * id in hex. */
void tb_dsp_conn_id(const tb_proto_frame_t *id, const char *user_id, char *out, size_t n);
/* Whether a warning may print now; a printed one after suppressed ones says how many. */
bool tb_dsp_warn_ok(tb_dsp_warn_limit_t *l, long *suppressed);
int tb_dsp_send(tb_dispatch_t *self, s_worker_t *w, const tb_msg_t *msg);
void tb_dsp_send_bye(tb_dispatch_t *self, const unsigned char *id, size_t id_bytes,
                     tb_proto_bye_t code, const char *reason);
void tb_dsp_worker_lost(tb_dispatch_t *self, s_worker_t *w, const char *why);
void tb_dsp_blocklist(tb_dispatch_t *self, s_worker_t *w);
bool tb_dsp_blocklisted(const tb_dispatch_t *self, const char *conn);
/* Ends w's lease. `failure` counts against the job and the worker; `lost` against the job only. */
void tb_dsp_lease_end(tb_dispatch_t *self, s_worker_t *w, const char *outcome, bool failure,
                      bool lost, const tb_err_t *job_err);
/* `local`: the peer holds a local helper's routing id (tb_local_workers_owns). */
s_worker_t *tb_dsp_worker_add(tb_dispatch_t *self, const tb_proto_frame_t *id, const char *conn,
                              const tb_msg_t *ready, bool local);
/* Fails the run with job `index` when it has failed max_failures times and no live worker is left
 * that has not tried it. */
void tb_dsp_check_failed(tb_dispatch_t *self, size_t index);
void tb_dsp_dispatch_pending(tb_dispatch_t *self);
/* dispatch_messages.c */
void tb_dsp_receive(tb_dispatch_t *self);
/* dispatch_loop.c: stops the idle thread (if it runs) and returns once it has. */
void tb_dsp_idle_stop(tb_dispatch_t *self);

#endif
