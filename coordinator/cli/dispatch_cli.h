/* The command-line options every verb that dispatches jobs shares (`terrain bake`, `terrain
 * farm-check`): where workers come from, how they are watched, and the result store.
 *
 * A verb declares a tb_dispatch_cli_t, appends tb_dispatch_cli_options() to its own option table,
 * parses, and turns the values into tb_dispatch_opts_t with tb_dispatch_cli_apply(). One table, so
 * every verb spells and documents the options the same way.
 */
#ifndef TB_DISPATCH_CLI_H
#define TB_DISPATCH_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "common/args.h"
#include "coordinator/farm/dispatch.h"

#define TB_DISPATCH_CLI_N_OPTS 16

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
    double wait_workers_s;
    bool keep_workers;
    const char *worker_program;
    bool verbose;
} tb_dispatch_cli_t;

/* Writes the shared options, bound to *cli, into opts[0..TB_DISPATCH_CLI_N_OPTS); returns how many.
 */
int tb_dispatch_cli_options(tb_dispatch_cli_t *cli, tb_opt_t *opts);

/* Checks the parsed values (TB_E_INVALID naming the option) and fills the matching fields of *o;
 * store_dir and the callbacks are the verb's to set. */
int tb_dispatch_cli_apply(const tb_dispatch_cli_t *cli, tb_dispatch_opts_t *o, tb_err_t *err);

#endif
