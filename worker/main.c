/* `terrain-worker`: the stateless worker program. Parses its options, takes SIGINT and SIGTERM
 * itself (czmq's own handlers are switched off first, so the library installs none), and runs the
 * loop in worker.c until the coordinator says goodbye.
 *
 *   terrain-worker --connect ENDPOINT [--threads N] [--name NAME] [--heartbeat-ms MS] ...
 */
#include <czmq.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/args.h"
#include "common/log.h"
#include "coordinator/farm/proto.h"
#include "common/version.h"
#include "jobs/job.h"
#include "worker/worker.h"

static volatile sig_atomic_t s_signal;

static void s_on_signal(int sig)
{
    s_signal = sig;
}

static void s_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
    tb_log_set_program("terrain-worker");
    const char *connect = NULL, *name = NULL, *server_key = NULL, *cert = NULL;
    int64_t threads = 0, heartbeat_ms = 1000, liveness = 3, backoff_ms = 1000,
            backoff_max_ms = 32000, chunk_kib = TB_PROTO_CHUNK_DEFAULT / 1024, level = 0;
    double give_up_s = 0;
    bool help = false, version = false, quiet = false, verbose = false;
    tb_opt_t opts[] = {
        {"connect", TB_OPT_STRING, &connect, NULL, "ENDPOINT",
         "the coordinator, e.g. tcp://host:5555 (required)"},
        {"threads", TB_OPT_INT, &threads, NULL, "N", "threads for each job (default: all cores)",
         TB_OPT_IRANGE(0, 4096)},
        {"name", TB_OPT_STRING, &name, NULL, "NAME",
         "name in the coordinator's records (host-pid)"},
        {"heartbeat-ms", TB_OPT_INT, &heartbeat_ms, NULL, "MS", "heartbeat interval (1000)",
         TB_OPT_IRANGE(10, 600000)},
        {"liveness", TB_OPT_INT, &liveness, NULL, "N",
         "missed heartbeats before the coordinator counts as lost (3)", TB_OPT_IRANGE(1, 1000)},
        {"backoff-ms", TB_OPT_INT, &backoff_ms, NULL, "MS", "first reconnect delay (1000)",
         TB_OPT_IRANGE(1, INT32_MAX)},
        {"backoff-max-ms", TB_OPT_INT, &backoff_max_ms, NULL, "MS", "reconnect delay cap (32000)",
         TB_OPT_IRANGE(1, INT32_MAX)},
        {"give-up-s", TB_OPT_DOUBLE, &give_up_s, NULL, "S",
         "exit 4 after this long without a coordinator (default: never)", TB_OPT_DRANGE(0, 1e9)},
        {"chunk-kib", TB_OPT_INT, &chunk_kib, NULL, "KIB", "result chunk size (1024)",
         TB_OPT_IRANGE(1, TB_PROTO_CHUNK_MAX / 1024)},
        {"zstd-level", TB_OPT_INT, &level, NULL, "N", "result compression level (3)",
         TB_OPT_IRANGE(0, 19)},
        {"server-key", TB_OPT_STRING, &server_key, NULL, "KEY|FILE",
         "CURVE: the coordinator's public key or certificate"},
        {"cert", TB_OPT_STRING, &cert, NULL, "FILE", "CURVE: this worker's certificate"},
        {"quiet", TB_OPT_FLAG, &quiet, NULL, NULL, "log warnings and errors only"},
        {"verbose", TB_OPT_FLAG, &verbose, NULL, NULL, "log every chunk and message"},
        {"version", TB_OPT_FLAG, &version, NULL, NULL, "print the version and build id"},
        {"help", TB_OPT_FLAG, &help, NULL, NULL, "show this help"},
    };
    const int n_opts = TB_ARGS_N(opts);
    const char *usage = "terrain-worker --connect ENDPOINT [--threads N] [--name NAME]";
    tb_err_t err;
    int n_pos = 0;
    if (tb_args_parse(argc - 1, argv + 1, opts, n_opts, NULL, 0, &n_pos, &err) != 0) {
        fprintf(stderr, "terrain-worker: %s\n", err.msg);
        return 2;
    }
    if (help) {
        tb_args_usage(stdout, usage, opts, n_opts);
        printf("\njob kinds:\n");
        for (size_t i = 0; i < tb_job_kind_count(); i++)
            printf("  %-16s %s\n", tb_job_kind_at(i)->name, tb_job_kind_at(i)->summary);
        return 0;
    }
    if (version) {
        printf("terrain-worker %s (build %s, git %s)\n", tb_version(), tb_build_id(), tb_git_id());
        return 0;
    }
    if (!connect) {
        fprintf(stderr, "terrain-worker: --connect ENDPOINT is required (usage: %s)\n", usage);
        return 2;
    }
    if (threads > tb_pool_max_threads()) {
        fprintf(stderr, "terrain-worker: --threads %lld: expected 0..%d (%d x the cores)\n",
                (long long)threads, tb_pool_max_threads(), TB_POOL_MAX_PER_CORE);
        return 2;
    }
    if (quiet)
        tb_log_set_level(TB_LOG_WARN);
    if (verbose)
        tb_log_set_level(TB_LOG_DEBUG);
    if (name) {
        char prog[200];
        snprintf(prog, sizeof prog, "terrain-worker %s", name);
        tb_log_set_program(prog);
    }
    /* The program, not the library, decides about signals (czmq PR #533). */
    zsys_handler_set(NULL);
    zsys_init();
    s_catch_signals();
    tb_worker_opts_t wo = {
        .endpoint = connect,
        .name = name,
        .threads = (int)threads,
        .heartbeat_ms = (int)heartbeat_ms,
        .liveness = (int)liveness,
        .backoff_init_ms = (int)backoff_ms,
        .backoff_max_ms = (int)backoff_max_ms,
        .give_up_s = give_up_s,
        .chunk_bytes = (size_t)chunk_kib * 1024,
        .zstd_level = (int)level,
        .server_key = server_key,
        .cert_path = cert,
        .interrupted = &s_signal,
    };
    tb_err_clear(&err);
    int status = tb_worker_run(&wo, &err);
    if (status == 1 && err.msg[0])
        tb_log_error("%s", err.msg);
    zsys_shutdown();
    return status;
}
