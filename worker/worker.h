/* The stateless worker: connect a DEALER to the coordinator, say READY, run the jobs it is sent
 * through jobs/job.h, send each result back in chunks, and keep heartbeating throughout.
 *
 * Threads: the calling thread owns the socket and does all I/O - heartbeats, progress, result
 * chunks
 * - while a job runs on its own thread with the worker's pool, so a long job never looks dead. The
 * job thread wakes the I/O thread through a pipe. Reliability is the zguide's Paranoid Pirate: any
 * message from the coordinator proves it alive; after `liveness` heartbeat intervals of silence the
 * worker drops its job, closes the socket and reconnects with a fresh one after an exponential
 * back-off (1 s doubling to 32 s by default). DISCONNECT ends the loop.
 *
 * Stateless: nothing survives a job but the thread pool; the worker reads no file the coordinator
 * did not send (certificates named on the command line excepted). No signal handlers are installed
 * here: the program sets *interrupted from its own handler.
 */
#ifndef TB_WORKER_H
#define TB_WORKER_H

#include <signal.h>
#include <stddef.h>

#include "common/error.h"

typedef struct {
    const char *endpoint;   /* "tcp://host:5555", "ipc:///tmp/x/coord.sock" */
    const char *name;       /* shown in the coordinator's records; default host-pid */
    int threads;            /* threads for every job; default: online processors */
    int heartbeat_ms;       /* default 1000 */
    int liveness;           /* missed heartbeats before the coordinator counts as lost; 3 */
    int backoff_init_ms;    /* first reconnect delay; default 1000 */
    int backoff_max_ms;     /* reconnect delay cap; default 32000 */
    double give_up_s;       /* stop after this long without a coordinator; 0 = never */
    size_t chunk_bytes;     /* result chunk size; default TB_PROTO_CHUNK_DEFAULT */
    int zstd_level;         /* result compression; 0 = TB_BLOB_DEFAULT_LEVEL */
    const char *server_key; /* CURVE: the coordinator's public key (Z85) or its cert file */
    const char *cert_path;  /* CURVE: this worker's certificate (secret part beside it) */
    volatile sig_atomic_t *interrupted; /* set by the program's signal handler; may be NULL */
} tb_worker_opts_t;

/* Fills defaults into any zero field of *opts. */
void tb_worker_opts_defaults(tb_worker_opts_t *opts);

/* Runs the worker until DISCONNECT, a signal or give_up_s. Returns the process exit status: 0 after
 * a DISCONNECT that said the run is done, 3 when the coordinator refused this worker, 4 after
 * give_up_s, 128 + signal number when interrupted, 1 (with *err set) when it could not start. */
int tb_worker_run(const tb_worker_opts_t *opts, tb_err_t *err);

#endif
