/* The shared dispatch options; see dispatch_cli.h. */
#include "coordinator/cli/dispatch_cli.h"

#include "common/log.h"
#include "common/pool.h"

#include <stdlib.h>
#include <string.h>

#include "coordinator/farm/broker.h"
#include "coordinator/farm/proto.h"

void tb_dispatch_cli_init(tb_dispatch_cli_t *c)
{
    memset(c, 0, sizeof *c);
    c->heartbeat_ms = 1000;
    c->liveness = 3;
    c->chunk_kib = TB_PROTO_CHUNK_DEFAULT / 1024;
    c->progress_every_s = 10;
    const tb_opt_t table[] = {
        {"workers", TB_OPT_INT, &c->workers, &c->workers_given, "N",
         "local worker processes (default: one per core, at most one per job to run); 0 runs "
         "in-process; with --bind, local helpers besides the farm (default 0)",
         TB_OPT_IRANGE(0, 1024)},
        TB_VERB_OPT_THREADS(&c->threads, "threads per worker (default: all cores)"),
        {"bind", TB_OPT_STRING, &c->bind, NULL, "ENDPOINT",
         "farm mode: listen for terrain-worker --connect (e.g. tcp://0.0.0.0:5555)"},
        {"insecure", TB_OPT_FLAG, &c->insecure, NULL, NULL,
         "allow a non-loopback --bind without CURVE keys"},
        {"curve-cert", TB_OPT_STRING, &c->curve_cert, NULL, "FILE",
         "farm mode: the coordinator's CURVE certificate (terrain farm-keys)"},
        {"curve-clients", TB_OPT_STRING, &c->curve_clients, NULL, "DIR",
         "farm mode: only workers whose public certificates are in DIR may join"},
        {"fresh", TB_OPT_FLAG, &c->fresh, NULL, NULL,
         "ignore stored results; recompute everything"},
        {"heartbeat-ms", TB_OPT_INT, &c->heartbeat_ms, NULL, "MS", "heartbeat interval (1000)",
         TB_OPT_IRANGE(10, 600000)},
        {"liveness", TB_OPT_INT, &c->liveness, NULL, "N",
         "missed heartbeats before a worker counts as lost (3)", TB_OPT_IRANGE(1, 1000)},
        {"chunk-kib", TB_OPT_INT, &c->chunk_kib, NULL, "KIB", "spec and result chunk size (1024)",
         TB_OPT_IRANGE(1, TB_PROTO_CHUNK_MAX / 1024)},
        {"job-timeout", TB_OPT_DOUBLE, &c->job_timeout_s, NULL, "S",
         "cancel and retry an attempt that runs longer (default: none)", TB_OPT_DRANGE(0, 1e9)},
        {"verify", TB_OPT_STRING, &c->verify, NULL, "auto|off|all|SHARE",
         "run results again on another worker and compare before use: a new worker's first, and "
         "this share (0..1] of the rest (auto: 0.05 in farm mode, off for local workers)"},
        {"wait-workers", TB_OPT_DOUBLE, &c->wait_workers_s, NULL, "S",
         "farm mode: fail when no worker is connected for S seconds (default: wait)",
         TB_OPT_DRANGE(0, 1e9)},
        {"keep-workers", TB_OPT_FLAG, &c->keep_workers, NULL, NULL,
         "farm mode: leave farm workers running at the end"},
        {"worker-program", TB_OPT_STRING, &c->worker_program, NULL, "PATH",
         "the terrain-worker to start (default: beside terrain)"},
        {"verbose", TB_OPT_FLAG, &c->verbose, NULL, NULL, "log every dispatch, worker and result"},
        {"progress-every", TB_OPT_DOUBLE, &c->progress_every_s, NULL, "S",
         "with stderr not a terminal, a progress line every S seconds: phase, done/total, rate, "
         "ETA (10; 0: none)",
         TB_OPT_DRANGE(0, 1e6)},
    };
    _Static_assert(sizeof table / sizeof table[0] == TB_DISPATCH_CLI_N_OPTS,
                   "TB_DISPATCH_CLI_N_OPTS must be the number of shared options");
    memcpy(c->opts, table, sizeof table);
}

int tb_dispatch_cli_apply(const tb_dispatch_cli_t *c, tb_dispatch_opts_t *o, tb_err_t *err)
{
    if (c->workers < 0 || c->workers > 1024)
        return tb_err_set(err, TB_E_INVALID, "--workers %lld: expected 0..1024",
                          (long long)c->workers);
    if (c->threads < 0 || c->threads > tb_pool_max_threads())
        return tb_err_set(err, TB_E_INVALID,
                          "--threads %lld: expected 0..%d (%d x the %d cores; 0: all cores)",
                          (long long)c->threads, tb_pool_max_threads(), TB_POOL_MAX_PER_CORE,
                          tb_pool_default_threads());
    if (c->heartbeat_ms < 10 || c->heartbeat_ms > 600000)
        return tb_err_set(err, TB_E_INVALID, "--heartbeat-ms %lld: expected 10..600000",
                          (long long)c->heartbeat_ms);
    if (c->liveness < 1 || c->liveness > 1000)
        return tb_err_set(err, TB_E_INVALID, "--liveness %lld: expected 1..1000",
                          (long long)c->liveness);
    if (c->chunk_kib < 1 || c->chunk_kib > (int64_t)TB_PROTO_CHUNK_MAX / 1024)
        return tb_err_set(err, TB_E_INVALID, "--chunk-kib %lld: expected 1..%u",
                          (long long)c->chunk_kib, TB_PROTO_CHUNK_MAX / 1024);
    if (c->job_timeout_s < 0 || c->wait_workers_s < 0)
        return tb_err_set(err, TB_E_INVALID, "--job-timeout and --wait-workers must be >= 0");
    if ((c->curve_cert || c->curve_clients || c->keep_workers || c->wait_workers_s > 0) && !c->bind)
        return tb_err_set(err, TB_E_INVALID,
                          "--curve-cert, --curve-clients, --keep-workers and --wait-workers "
                          "belong to farm mode (--bind)");
    if (c->curve_clients && !c->curve_cert)
        return tb_err_set(err, TB_E_INVALID, "--curve-clients needs --curve-cert");
    /* The bind and the keys are judged now, before a verb reads or writes anything: a refusal is
     * bad usage (exit 2) and leaves no output directory behind. */
    if (c->bind && tb_broker_check(c->bind, c->insecure, c->curve_cert, c->curve_clients, err) != 0)
        return -1;
    if (c->verify && strcmp(c->verify, "auto") != 0) {
        char *end = NULL;
        double share = strcmp(c->verify, "off") == 0   ? 0
                       : strcmp(c->verify, "all") == 0 ? 1
                                                       : strtod(c->verify, &end);
        if (end && (end == c->verify || *end || !(share > 0 && share <= 1)))
            return tb_err_set(err, TB_E_INVALID,
                              "--verify '%s': expected auto, off, all or a share in (0, 1]",
                              c->verify);
        o->verify = strcmp(c->verify, "off") == 0   ? TB_VERIFY_OFF
                    : strcmp(c->verify, "all") == 0 ? TB_VERIFY_ALL
                                                    : TB_VERIFY_SHARE;
        o->verify_share = share;
    }
    o->workers = (int)c->workers;
    o->workers_given = c->workers_given;
    o->threads = (int)c->threads;
    o->bind = c->bind;
    o->insecure = c->insecure;
    o->curve_cert = c->curve_cert;
    o->curve_clients = c->curve_clients;
    o->fresh = c->fresh;
    o->heartbeat_ms = (int)c->heartbeat_ms;
    o->liveness = (int)c->liveness;
    o->chunk_bytes = (size_t)c->chunk_kib * 1024;
    o->job_timeout_s = c->job_timeout_s;
    o->wait_workers_s = c->wait_workers_s;
    o->keep_workers = c->keep_workers;
    o->worker_program = c->worker_program;
    o->verbose = c->verbose;
    tb_log_set_progress_every(c->progress_every_s);
    return 0;
}
