/* Logging and progress; see log.h. One mutex serialises every write to stderr so a log line and a
 * bar redraw never interleave. */
#include "common/log.h"
#include "common/error.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static char s_program[64] = "terrain";
static tb_log_level_t s_level = TB_LOG_INFO;
static int s_bar_drawn; /* a bar occupies the current terminal line */
static double s_progress_every_s = 10;
static int s_speaking; /* reporters alive that draw or print: at most one */

typedef enum { S_SILENT = 0, S_BAR, S_LINES } s_mode_t;

struct tb_progress_t {
    char label[32];
    double total;
    double started_s;
    double last_draw_s, last_line_s;
    s_mode_t mode;
};

void tb_log_set_progress_every(double seconds)
{
    pthread_mutex_lock(&s_lock);
    s_progress_every_s = seconds > 0 ? seconds : 0;
    pthread_mutex_unlock(&s_lock);
}

double tb_log_progress_every(void)
{
    pthread_mutex_lock(&s_lock);
    double s = s_progress_every_s;
    pthread_mutex_unlock(&s_lock);
    return s;
}

void tb_log_set_program(const char *name)
{
    pthread_mutex_lock(&s_lock);
    snprintf(s_program, sizeof s_program, "%s", name);
    pthread_mutex_unlock(&s_lock);
}

void tb_log_set_level(tb_log_level_t level)
{
    s_level = level;
}
tb_log_level_t tb_log_get_level(void)
{
    return s_level;
}

double tb_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void s_clear_bar_locked(void)
{
    if (s_bar_drawn) {
        fputs("\r\033[K", stderr);
        s_bar_drawn = 0;
    }
}

void tb_log(tb_log_level_t level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    if (level > s_level)
        return;
    char raw[16384], line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* control characters escaped, long words shortened in the middle (common/error.h) */
    tb_text_fit(line, sizeof line, raw);
    pthread_mutex_lock(&s_lock);
    s_clear_bar_locked();
    if (level == TB_LOG_INFO)
        fprintf(stderr, "%s: %s\n", s_program, line);
    else
        fprintf(stderr, "%s: %s: %s\n", s_program, names[level], line);
    fflush(stderr);
    pthread_mutex_unlock(&s_lock);
}

static bool s_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

bool tb_progress_enabled(void)
{
    const char *term = getenv("TERM");
    if (s_env("CI") || s_env("TB_NO_PROGRESS"))
        return false;
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(STDERR_FILENO) == 1;
}

bool tb_progress_lines_enabled(void)
{
    return !s_env("TB_NO_PROGRESS") && !tb_progress_enabled() && tb_log_progress_every() > 0;
}

tb_progress_t *tb_progress_new(const char *label, double total)
{
    tb_progress_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    snprintf(self->label, sizeof self->label, "%s", label);
    self->total = total > 0 ? total : 1;
    self->started_s = tb_now_s();
    self->last_line_s = self->started_s;
    s_mode_t mode = tb_progress_enabled()         ? S_BAR
                    : tb_progress_lines_enabled() ? S_LINES
                                                  : S_SILENT;
    /* one reporter speaks: a dispatch engine's inside a bake whose live view reports is silent */
    pthread_mutex_lock(&s_lock);
    if (mode != S_SILENT && s_speaking == 0) {
        self->mode = mode;
        s_speaking++;
    }
    pthread_mutex_unlock(&s_lock);
    return self;
}

void tb_progress_reset(tb_progress_t *self, const char *label, double total)
{
    if (!self)
        return;
    snprintf(self->label, sizeof self->label, "%s", label);
    self->total = total > 0 ? total : 1;
    self->started_s = tb_now_s();
}

static void s_format_eta(char *out, size_t n, double seconds)
{
    if (seconds < 0 || seconds > 1e7) {
        snprintf(out, n, "--:--");
        return;
    }
    long s = (long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    else
        snprintf(out, n, "%02ld:%02ld", s / 60, s % 60);
}

void tb_progress_update(tb_progress_t *self, double done, const char *extra)
{
    if (!self || self->mode == S_SILENT)
        return;
    double frac = self->total > 0 ? done / self->total : 0;
    double elapsed = tb_now_s() - self->started_s;
    /* the rate so far; below 0.1 % of the work it says nothing yet */
    tb_progress_update_eta(self, done, frac > 0.001 ? elapsed * (1 - frac) / frac : -1, extra);
}

/* One line for a log: "label 42.0% ETA 00:12  extra". */
static void s_line(tb_progress_t *self, double now, double frac, const char *eta, const char *extra)
{
    if (now - self->last_line_s < tb_log_progress_every())
        return;
    self->last_line_s = now;
    tb_log_info("progress: %s %.1f%% ETA %s%s%s", self->label, frac * 100, eta, extra ? ", " : "",
                extra ? extra : "");
}

void tb_progress_update_eta(tb_progress_t *self, double done, double eta_s, const char *extra)
{
    if (!self || self->mode == S_SILENT)
        return;
    double now = tb_now_s();
    double frac = self->total > 0 ? done / self->total : 0;
    if (!(frac >= 0))
        frac = 0;
    if (frac > 1)
        frac = 1;
    char eta[32];
    s_format_eta(eta, sizeof eta, isnan(eta_s) ? -1 : eta_s);
    if (self->mode == S_LINES) {
        s_line(self, now, frac, eta, extra);
        return;
    }
    int finished = done >= self->total;
    if (!finished && now - self->last_draw_s < 0.1)
        return;
    self->last_draw_s = now;
    enum { WIDTH = 28 };
    char bar[WIDTH + 1];
    int filled = (int)(frac * WIDTH);
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[WIDTH] = '\0';
    pthread_mutex_lock(&s_lock);
    fprintf(stderr, "\r\033[K%s [%s] %5.1f%% ETA %s%s%s", self->label, bar, frac * 100, eta,
            extra ? "  " : "", extra ? extra : "");
    fflush(stderr);
    s_bar_drawn = 1;
    pthread_mutex_unlock(&s_lock);
}

void tb_progress_destroy(tb_progress_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    if ((*self_p)->mode != S_SILENT) {
        pthread_mutex_lock(&s_lock);
        s_clear_bar_locked();
        fflush(stderr);
        s_speaking--;
        pthread_mutex_unlock(&s_lock);
    }
    free(*self_p);
    *self_p = NULL;
}
