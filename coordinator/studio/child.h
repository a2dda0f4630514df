/* The one child process `terrain studio` runs at a time: `terrain plan` or `terrain bake`, the same
 * binary (/proc/self/exe) with arguments, its stdout and stderr in two files of the studio's output
 * folder. The server asks it for its state on every poll; a child that has ended is reaped then,
 * its files closed, and the slot is free for the next (docs/studio.md, "One child at a time").
 *
 * Not thread-safe: the server calls it from its one request thread.
 */
#ifndef TB_STUDIO_CHILD_H
#define TB_STUDIO_CHILD_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

typedef struct tb_studio_child_t tb_studio_child_t;

/* A slot with no child; NULL when out of memory. Destroy with tb_studio_child_destroy. */
tb_studio_child_t *tb_studio_child_new(void);

/* Ends a running child (SIGTERM to its process group, then SIGKILL after 5 s), reaps it, frees the
 * slot and sets *self_p to NULL; accepts NULL. */
void tb_studio_child_destroy(tb_studio_child_t **self_p);

/* Starts `/proc/self/exe ARGV...` (argv NULL-terminated, argv[0] the verb) as `kind` ("plan",
 * "bake"), stdout to out_path and stderr to err_path (truncated), in a process group of its own,
 * with TB_NO_PROGRESS unset so a bake prints its progress lines. 0, or -1 with *err: TB_E_REFUSED
 * (a child is running, named with its pid) or TB_E_IO. */
int tb_studio_child_start(tb_studio_child_t *c, const char *kind, char *const argv[],
                          const char *out_path, const char *err_path, tb_err_t *err);

/* Reaps the child when it has ended. True while one is running. */
bool tb_studio_child_running(tb_studio_child_t *c);

/* The last child's kind ("" before any), its exit status (-1 while running or never started;
 * 128 + signal for a signalled one) and the seconds it has run or ran. */
const char *tb_studio_child_kind(const tb_studio_child_t *c);
int tb_studio_child_status(const tb_studio_child_t *c);
double tb_studio_child_seconds(const tb_studio_child_t *c);
/* The running child's pid, 0 when none runs. */
int tb_studio_child_pid(const tb_studio_child_t *c);
/* The argument list it was started with, space-joined, for the page ("" before any). */
const char *tb_studio_child_command(const tb_studio_child_t *c);

/* The last line of `path` that contains `needle` (NULL: the last non-empty line), searched in the
 * file's last 64 KiB, copied into out[0..n) without its newline; "" when none. */
void tb_studio_last_line(const char *path, const char *needle, char *out, size_t n);

#endif
