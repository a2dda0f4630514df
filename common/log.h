/* Logging to stderr, and progress: a bar on a terminal, a line every few seconds in a log.
 *
 * Log lines are "terrain: level: message" (the program name is set once by main). A progress
 * reporter draws a bar when stderr is a terminal and CI is not set; otherwise (a pipe, a log file,
 * CI) it prints one line every tb_log_progress_every() seconds (default 10; 0: none), so a farm log
 * shows how far a long phase is. TB_NO_PROGRESS in the environment turns off both (the test suite
 * sets it). A log line printed while a bar is drawn clears the bar first. One reporter speaks at a
 * time: a reporter made while another is alive stays silent (the bake's live view speaks for the
 * dispatch engines inside it, docs/report.md). Everything here is safe to call from several
 * threads.
 */
#ifndef TB_LOG_H
#define TB_LOG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { TB_LOG_ERROR = 0, TB_LOG_WARN, TB_LOG_INFO, TB_LOG_DEBUG } tb_log_level_t;

/* Sets the name printed before every line ("terrain", "terrain-worker"); the string is copied. */
void tb_log_set_program(const char *name);
/* Lines above level are dropped; the default is TB_LOG_INFO. */
void tb_log_set_level(tb_log_level_t level);
tb_log_level_t tb_log_get_level(void);

void tb_log(tb_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define tb_log_error(...) tb_log(TB_LOG_ERROR, __VA_ARGS__)
#define tb_log_warn(...) tb_log(TB_LOG_WARN, __VA_ARGS__)
#define tb_log_info(...) tb_log(TB_LOG_INFO, __VA_ARGS__)
#define tb_log_debug(...) tb_log(TB_LOG_DEBUG, __VA_ARGS__)

/* Seconds between progress lines when stderr is not a terminal (0 turns them off; negative is
 * taken as 0); the default is 10. Set once by the program (`--progress-every`). */
void tb_log_set_progress_every(double seconds);
double tb_log_progress_every(void);

/* Monotonic seconds, for timings and ETAs. */
double tb_now_s(void);

typedef struct tb_progress_t tb_progress_t;

/* A bar for `total` units of work named `label` ("solve", "regions"). Returns NULL only when out of
 * memory; every other call accepts NULL and does nothing, so callers need not check. */
tb_progress_t *tb_progress_new(const char *label, double total);
/* Whether this process draws bars at all (stderr is a terminal, no CI, no TB_NO_PROGRESS). */
bool tb_progress_enabled(void);
/* Whether a reporter made now would print progress lines (not a bar): stderr is not a terminal or
 * CI is set, tb_log_progress_every() > 0, no TB_NO_PROGRESS. */
bool tb_progress_lines_enabled(void);
/* Records `done` units finished and, when `extra` is not NULL, a short status shown after the ETA
 * ("3 workers alive"); the ETA is extrapolated from the rate since the reporter was made. Redraws
 * at most ten times a second; prints a line at most every tb_log_progress_every() seconds. */
void tb_progress_update(tb_progress_t *self, double done, const char *extra);
/* The same with an ETA the caller measured (seconds; negative or NaN: not known yet), for a
 * caller with a cost model better than the rate so far (coordinator/report/progress.h). */
void tb_progress_update_eta(tb_progress_t *self, double done, double eta_s, const char *extra);
/* Renames the reporter and sets a new total (a new phase); done restarts at 0. */
void tb_progress_reset(tb_progress_t *self, const char *label, double total);
/* Erases the bar and frees it; sets *self_p to NULL. */
void tb_progress_destroy(tb_progress_t **self_p);

#endif
