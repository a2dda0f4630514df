/* The frame every `terrain` verb runs in (docs/architecture.md, how to add a verb): parsing with
 * one option table, --help, the checks verbs share, and one path for errors and exit statuses.
 *
 * A verb fills a tb_verb_t with its name, usage line and option table (TB_VERB_OPTS(table), or
 * TB_VERB_SHARED(table, shared): the compiler counts them), optionally a shared group (the farm
 * options of dispatch_cli.h), and calls tb_verb_parse; --help is added to every verb by the frame.
 * From then on the verb's log lines and errors read "terrain VERB: ..." and every error leaves
 * through tb_verb_error.
 *
 * Exit statuses (TB_EXIT_*): 0 success; 1 a failed run or gate; 2 bad usage or bad input (an
 * option, a manifest, a painting: one line on stderr naming it); 128 + signal when interrupted.
 */
#ifndef TB_CLI_VERB_H
#define TB_CLI_VERB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/args.h"
#include "common/error.h"
#include "common/manifest.h"

enum { TB_EXIT_OK = 0, TB_EXIT_FAILED = 1, TB_EXIT_USAGE = 2 };

/* tb_verb_parse's "go on": not an exit status. */
#define TB_VERB_RUN (-1)
#define TB_VERB_MAX_POSITIONAL 4

/* The largest seed any verb takes: 2^53, so a seed survives a round trip through JSON's doubles. */
#define TB_SEED_MAX ((int64_t)1 << 53)

/* The options several verbs share, defined once with their ranges. */
#define TB_VERB_OPT_SEED(out, given, help)                                                         \
    {                                                                                              \
        "seed", TB_OPT_INT, (out), (given), "N", (help), TB_OPT_IRANGE(0, TB_SEED_MAX),            \
            .range_text = "0..2^53"                                                                \
    }
#define TB_VERB_OPT_STEPS(out)                                                                     \
    {                                                                                              \
        "steps", TB_OPT_INT, (out), NULL, "N", "solve steps (default: the manifest's)",            \
            TB_OPT_IRANGE(1, 1000000), .range_text = "1..1000000"                                  \
    }
#define TB_VERB_OPT_THREADS(out, help)                                                             \
    {                                                                                              \
        "threads", TB_OPT_INT, (out), NULL, "N", (help), TB_OPT_IRANGE(0, 4096),                   \
            .range_text = "0..4096 (0: all cores)"                                                 \
    }
#define TB_VERB_OPT_CIRCUMFERENCE(out, given, help)                                                \
    {                                                                                              \
        "circumference-km", TB_OPT_DOUBLE, (out), (given), "K", (help)                             \
    }

/* --set KEY=VALUE, repeatable, into a tb_overrides_t (common/manifest.h; docs/manifest.md,
 * "Overrides"). */
/* Runs run(argc, argv, overrides) with a new, empty list of --set overrides (TB_VERB_OPT_SET),
 * destroyed after; its status, or TB_EXIT_FAILED when out of memory. */
int tb_verb_run_with_overrides(int argc, char **argv,
                               int (*run)(int argc, char **argv, tb_overrides_t *overrides));

#define TB_VERB_OPT_SET(overrides)                                                                 \
    {                                                                                              \
        "set", TB_OPT_EACH, (overrides), NULL, "KEY=VALUE",                                        \
            "override a manifest key (repeatable; VALUE is JSON: --set solve.k=6e-5; `terrain "    \
            "schema` lists the keys)",                                                             \
            .each = tb_overrides_add_opt                                                           \
    }

/* Designated initialisers of a tb_verb_t's option tables, counted by the compiler. */
#define TB_VERB_OPTS(table) .opts = (table), .n_opts = TB_ARGS_N(table)
#define TB_VERB_SHARED(table, shared_table)                                                        \
    TB_VERB_OPTS(table), .shared = (shared_table), .n_shared = TB_ARGS_N(shared_table)

typedef struct {
    /* set by the verb */
    const char *program;  /* "terrain" (default) or "terrain-worker" */
    const char *name;     /* "bake"; NULL for a program without verbs */
    const char *usage;    /* the usage line */
    const tb_opt_t *opts; /* the verb's own options */
    int n_opts;
    const tb_opt_t *shared; /* a shared group (the farm options), or NULL */
    int n_shared;
    int min_positional, max_positional;
    const char *positional_what;  /* what the positionals are, for the error ("one heightmap") */
    void (*more_help)(FILE *out); /* printed after the options on --help, or NULL */
    /* filled by tb_verb_parse */
    const char *positional[TB_VERB_MAX_POSITIONAL];
    int n_positional;
} tb_verb_t;

/* Names the program in log lines ("terrain bake"), parses argv[0..argc) against the verb's options,
 * the shared group and --help. Returns TB_VERB_RUN to go on, or the status to exit with: 0 after
 * printing the help, 2 after one line on stderr naming the bad option or argument. */
int tb_verb_parse(tb_verb_t *v, int argc, char **argv);

/* Parses a comma-separated list of seeds given to --OPTION (each 0..2^53) into out[0..max); returns
 * the count, or -1 after logging the one-line error. */
int tb_verb_seed_list(const tb_verb_t *v, const char *text, const char *option, int64_t *out,
                      int max);

/* Bad usage found after parsing: logs "terrain VERB: error: MESSAGE" and returns 2. */
int tb_verb_usage(const tb_verb_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs *err ("terrain VERB: error: ...") and returns the exit status: 128 + the signal when it is
 * TB_E_INTERRUPTED and a signal was caught, else `status` (TB_EXIT_FAILED or TB_EXIT_USAGE). */
int tb_verb_error(const tb_verb_t *v, int status, const tb_err_t *err);

#endif
