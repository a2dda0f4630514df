/* SIGINT and SIGTERM for the `terrain` verbs that run work (bake, farm-check).
 *
 * The engine never installs a handler (czmq PR #533): a verb calls tb_signals_catch, which
 * switches czmq's own handling off and installs one that only sets a flag, passes the flag to the
 * engine, and exits with tb_signals_exit_status when the engine returns interrupted. A second
 * signal while stopping restores the default action, so a third Ctrl-C always ends the process.
 */
#ifndef TB_SIGNALS_H
#define TB_SIGNALS_H

#include <signal.h>

/* Installs the handlers; returns the flag they set (to the signal number). */
volatile sig_atomic_t *tb_signals_catch(void);

/* 128 + the signal caught, or 0 when none was. */
int tb_signals_exit_status(void);

#endif
