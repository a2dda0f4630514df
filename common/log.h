/* Logging to stderr, and a progress bar with an ETA.
 *
 * Log lines are "terrain: level: message" (the program name is set once by main). The progress bar
 * draws only when stderr is a terminal and neither CI nor TB_NO_PROGRESS is set in the environment,
 * so pipes, log files and CI output stay clean; a log line printed while a bar is drawn clears the
 * bar first. Both are safe to call from several threads.
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

/* Monotonic seconds, for timings and ETAs. */
double tb_now_s(void);

typedef struct tb_progress_t tb_progress_t;

/* A bar for `total` units of work named `label` ("solve", "regions"). Returns NULL only when out of
 * memory; every other call accepts NULL and does nothing, so callers need not check. */
tb_progress_t *tb_progress_new(const char *label, double total);
/* Whether this process draws bars at all (stderr is a terminal, no CI, no TB_NO_PROGRESS). */
bool tb_progress_enabled(void);
/* Records `done` units finished and, when `extra` is not NULL, a short status shown after the ETA
 * ("3 workers alive"). Redraws at most ten times a second. */
void tb_progress_update(tb_progress_t *self, double done, const char *extra);
/* Erases the bar and frees it; sets *self_p to NULL. */
void tb_progress_destroy(tb_progress_t **self_p);

#endif
