/* Command-line options for the programs: a table of options per command, parsed strictly.
 *
 * Accepts "--name value" and "--name=value"; flags take no value. An unknown option, a missing
 * value, a value of the wrong type or out of the option's declared range is an error naming the
 * option and what was expected. Positional
 * arguments are collected in order. The same table prints the usage text.
 */
#ifndef TB_ARGS_H
#define TB_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

typedef enum {
    TB_OPT_FLAG,   /* bool *: set to true when present */
    TB_OPT_INT,    /* int64_t * */
    TB_OPT_DOUBLE, /* double * */
    TB_OPT_STRING, /* const char **: points into argv */
    TB_OPT_EACH    /* repeatable: each occurrence calls each(out, value, err) */
} tb_opt_kind_t;

typedef struct {
    const char *name; /* without the leading "--" */
    tb_opt_kind_t kind;
    void *out;
    bool *given;      /* optional: set true when the option appears */
    const char *meta; /* value placeholder for usage ("N", "DIR") */
    const char *help;
    /* Optional range of a TB_OPT_INT or TB_OPT_DOUBLE value, checked by tb_args_parse with a
     * message naming the option: set with TB_OPT_IRANGE / TB_OPT_DRANGE after the six fields above.
     */
    bool ranged;
    int64_t imin, imax;
    double dmin, dmax;
    const char *range_text; /* how the range reads in messages ("0..2^53"); NULL: the numbers */
    /* TB_OPT_EACH: called with `out` and the value of every occurrence, in order; 0, or -1 with
     * *err naming the option and the value (tb_args_parse stops there) */
    int (*each)(void *out, const char *value, tb_err_t *err);
} tb_opt_t;

#define TB_OPT_IRANGE(lo, hi) .ranged = true, .imin = (lo), .imax = (hi)
#define TB_OPT_DRANGE(lo, hi) .ranged = true, .dmin = (lo), .dmax = (hi)

/* The number of entries of an option table, counted by the compiler. */
#define TB_ARGS_N(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* Parses argv[0..argc) (argv[0] is the first argument after the command name). Positionals go to
 * positional[0..max_positional), their count to *n_positional; more than max_positional is an
 * error. */
int tb_args_parse(int argc, char **argv, const tb_opt_t *opts, int n_opts, const char **positional,
                  int max_positional, int *n_positional, tb_err_t *err);

/* Prints "usage: <usage_line>" and one line per option. */
void tb_args_usage(FILE *out, const char *usage_line, const tb_opt_t *opts, int n_opts);

/* Parses a comma-separated list of non-negative integers ("2,3,11") into out[0..max); returns the
 * count, or -1 with *err naming the bad item. */
int tb_args_int_list(const char *text, const char *option, int64_t *out, int max, tb_err_t *err);

#endif
