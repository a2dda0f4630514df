/* The verb frame; see verb.h. */
#include "coordinator/cli/verb.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/farm/signals.h"

static void s_usage(const tb_verb_t *v, FILE *out, const tb_opt_t *all, int n)
{
    tb_args_usage(out, v->usage, all, n);
    if (v->more_help)
        v->more_help(out);
}

int tb_verb_parse(tb_verb_t *v, int argc, char **argv)
{
    char program[96];
    const char *prog = v->program ? v->program : "terrain";
    if (v->name)
        snprintf(program, sizeof program, "%s %s", prog, v->name);
    else
        snprintf(program, sizeof program, "%s", prog);
    tb_log_set_program(program);
    bool help = false;
    const tb_opt_t help_opt = {"help", TB_OPT_FLAG, &help, NULL, NULL, "show this help"};
    int n = v->n_opts + v->n_shared + 1;
    tb_opt_t *all = malloc((size_t)n * sizeof *all);
    if (!all) {
        tb_log_error("out of memory");
        return TB_EXIT_FAILED;
    }
    if (v->n_opts)
        memcpy(all, v->opts, (size_t)v->n_opts * sizeof *all);
    if (v->n_shared)
        memcpy(all + v->n_opts, v->shared, (size_t)v->n_shared * sizeof *all);
    all[n - 1] = help_opt;
    tb_err_t err;
    int max_pos =
        v->max_positional < TB_VERB_MAX_POSITIONAL ? v->max_positional : TB_VERB_MAX_POSITIONAL;
    int status = TB_VERB_RUN;
    if (tb_args_parse(argc, argv, all, n, v->positional, max_pos, &v->n_positional, &err) != 0) {
        tb_log_error("%s (usage: %s)", err.msg, v->usage);
        status = TB_EXIT_USAGE;
    } else if (help) {
        s_usage(v, stdout, all, n);
        status = TB_EXIT_OK;
    } else if (v->n_positional < v->min_positional) {
        tb_log_error("missing %s (usage: %s)", v->positional_what ? v->positional_what : "argument",
                     v->usage);
        status = TB_EXIT_USAGE;
    }
    free(all);
    return status;
}

int tb_verb_seed_list(const tb_verb_t *v, const char *text, const char *option, int64_t *out,
                      int max)
{
    tb_err_t err;
    int n = tb_args_int_list(text, option, out, max, &err);
    if (n < 0) {
        tb_verb_error(v, TB_EXIT_USAGE, &err);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (out[i] > TB_SEED_MAX) {
            tb_verb_usage(v, "--%s: seed %lld: expected an integer in 0..2^53", option,
                          (long long)out[i]);
            return -1;
        }
    return n;
}

int tb_verb_usage(const tb_verb_t *v, const char *fmt, ...)
{
    (void)v;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tb_log_error("%s", msg);
    return TB_EXIT_USAGE;
}

int tb_verb_error(const tb_verb_t *v, int status, const tb_err_t *err)
{
    (void)v;
    tb_log_error("%s", err->msg[0] ? err->msg : "failed");
    if (err->code == TB_E_INTERRUPTED && tb_signals_exit_status() > 128)
        return tb_signals_exit_status();
    return status;
}

int tb_verb_run_with_overrides(int argc, char **argv,
                               int (*run)(int argc, char **argv, tb_overrides_t *overrides))
{
    tb_overrides_t *overrides = tb_overrides_new();
    if (!overrides) {
        fprintf(stderr, "terrain: error: out of memory\n");
        return TB_EXIT_FAILED;
    }
    int status = run(argc, argv, overrides);
    tb_overrides_destroy(&overrides);
    return status;
}
