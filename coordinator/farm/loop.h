/* The dispatch engine's event loop: the socket, the workers and their leases, on a thread of its
 * own from tb_loop_open to tb_loop_close, also between batches (docs/distribution.md).
 *
 * Each turn it collects what the helper threads finished (tasks.h, jobwork.h), reads what the
 * workers sent, reaps local workers, expires leases, heartbeats, and - while a batch runs - starts
 * preparing jobs, hands idle workers the largest eligible job, sends spec chunks, starts local
 * workers the work needs, and pushes results to the caller's queue (delivery.h). It never waits on
 * anything but zmq_poll: no disk, no compression, no callback of the caller's. Between batches it
 * only keeps the farm alive: it answers and sends heartbeats, registers newcomers, notices the ones
 * that die; nothing is dispatched.
 *
 * The loop takes the engine's mutex for each turn (not while it sleeps in zmq_poll), so the
 * engine's API may read the job table and the registry under that mutex at any time. Only the
 * loop's thread touches the socket while the thread runs; tb_loop_close joins it before it says
 * goodbye to the workers.
 */
#ifndef TB_LOOP_H
#define TB_LOOP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/delivery.h"
#include "coordinator/farm/dispatch.h"
#include "coordinator/farm/jobtable.h"
#include "coordinator/farm/registry.h"

typedef struct tb_loop_t tb_loop_t;

/* A batch, as the engine hands it to the loop (all of it owned by the engine). */
typedef struct {
    tb_jobtable_t *jobs;
    tb_delivery_t *delivery;
    bool keep;         /* no callback: results stay in the job table for tb_dispatch_result */
    uint64_t job_base; /* the wire id of job 0 */
    uint64_t id;       /* the batch's number: a helper's late answer about another is dropped */
    bool fresh;        /* no store lookups */
    const char *label; /* "regions", "tiles": in messages */
    tb_cache_t *cache; /* the result store, or NULL */
    tb_dispatch_stats_t *stats; /* the engine's, for this batch */
} tb_loop_batch_t;

/* A loop for the engine's options (borrowed, as filled in by tb_dispatch_new) and mutex. */
tb_loop_t *tb_loop_new(const tb_dispatch_opts_t *opts, pthread_mutex_t *mu, tb_err_t *err);
/* Closes it as a failure when still open and frees it; accepts NULL and sets *self_p to NULL. */
void tb_loop_destroy(tb_loop_t **self_p);

/* Binds the socket (and the local workers' directory), starts the helper threads and the loop's
 * thread. Called without the mutex. 0, or -1 with *err (a refused bind: TB_E_INVALID/REFUSED). */
int tb_loop_open(tb_loop_t *self, tb_err_t *err);
bool tb_loop_is_open(const tb_loop_t *self);

/* Under the mutex: the loop starts running the batch (the job table must be sealed). */
void tb_loop_begin(tb_loop_t *self, const tb_loop_batch_t *batch);
/* Under the mutex, after the delivery queue said the batch is over: the loop goes back to keeping
 * the farm. */
void tb_loop_end(tb_loop_t *self);

/* Stops the loop's thread, waits for the helpers, tells the workers to leave ("the run failed"
 * when `failed`; farm workers stay with keep_workers), stops the local ones and closes the socket.
 * Idempotent. Called without the mutex. */
void tb_loop_close(tb_loop_t *self, bool failed);

/* Makes the loop look again at once (the caller finished with a result). Any thread. */
void tb_loop_wake(tb_loop_t *self);

/* The registry (read it under the mutex). */
const tb_registry_t *tb_loop_registry(const tb_loop_t *self);

/* Local worker processes started so far. */
int tb_loop_local_started(const tb_loop_t *self);

#endif
