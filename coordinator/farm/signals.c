/* Signal handling for the verbs; see signals.h. */
#include "coordinator/farm/signals.h"

#include <czmq.h>
#include <string.h>

static volatile sig_atomic_t s_caught;

static void s_on_signal(int sig)
{
    if (s_caught) /* a second signal: let the next one take the default action */
        signal(sig, SIG_DFL);
    s_caught = sig;
}

volatile sig_atomic_t *tb_signals_catch(void)
{
    zsys_handler_set(NULL);
    zsys_init();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return &s_caught;
}

int tb_signals_exit_status(void)
{
    return s_caught ? 128 + (int)s_caught : 0;
}
