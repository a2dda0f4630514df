/* The command-line options every verb that dispatches jobs shares (`terrain bake`, `terrain
 * farm-check`): where workers come from, how they are watched, and the result store.
 *
 * A verb declares a tb_dispatch_cli_t, fills it with tb_dispatch_cli_init(), gives cli.opts to its
 * verb frame as the shared group (coordinator/cli/verb.h), parses, and turns the values into
 * tb_dispatch_opts_t with tb_dispatch_cli_apply(). One table, so every verb spells and documents
 * the options the same way.
 */
#ifndef TB_DISPATCH_CLI_H
#define TB_DISPATCH_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "common/args.h"
#include "coordinator/cli/verb.h"
#include "coordinator/farm/dispatch.h"

#define TB_DISPATCH_CLI_N_OPTS 17

typedef struct {
    int64_t workers;
    bool workers_given;
    int64_t threads;
    const char *bind;
    bool insecure;
    const char *curve_cert;
    const char *curve_clients;
    bool fresh;
    int64_t heartbeat_ms;
    int64_t liveness;
    int64_t chunk_kib;
    double job_timeout_s;
    const char *verify; /* --verify auto|off|all|SHARE */
    double wait_workers_s;
    bool keep_workers;
    const char *worker_program;
    bool verbose;
    double progress_every_s; /* a progress line every S seconds in a log (common/log.h) */
    tb_opt_t opts[TB_DISPATCH_CLI_N_OPTS]; /* bound to the fields above (the compiler checks the
                                              count) */
} tb_dispatch_cli_t;

/* Sets the defaults and binds cli->opts to *cli's fields. */
void tb_dispatch_cli_init(tb_dispatch_cli_t *cli);

/* Checks the parsed values (TB_E_INVALID naming the option) and fills the matching fields of *o;
 * store_dir and the callbacks are the verb's to set. Sets the process's progress-line interval
 * (tb_log_set_progress_every) from --progress-every. */
int tb_dispatch_cli_apply(const tb_dispatch_cli_t *cli, tb_dispatch_opts_t *o, tb_err_t *err);

#endif
