/* The studio's one child process (child.h): fork, exec of /proc/self/exe, reaped when polled.
 * Its output goes to files rather than pipes, so nothing here must be read for the child to go on,
 * and the page can be shown the whole of a plan's report after the child is gone. */
#include "coordinator/studio/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

#define S_TAIL_BYTES 65536

struct tb_studio_child_t {
    pid_t pid; /* 0: none running */
    char kind[16];
    char command[1024];
    int status; /* -1 while running or before any */
    double started_s, ended_s;
};

tb_studio_child_t *tb_studio_child_new(void)
{
    tb_studio_child_t *c = calloc(1, sizeof *c);
    if (c)
        c->status = -1;
    return c;
}

static void s_set_status(tb_studio_child_t *c, int wstatus)
{
    c->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    c->pid = 0;
    c->ended_s = tb_now_s();
}

bool tb_studio_child_running(tb_studio_child_t *c)
{
    if (c->pid == 0)
        return false;
    int wstatus;
    pid_t r = waitpid(c->pid, &wstatus, WNOHANG);
    if (r == c->pid)
        s_set_status(c, wstatus);
    else if (r < 0 && errno == ECHILD) { /* reaped elsewhere: count it as lost */
        c->status = 255;
        c->pid = 0;
        c->ended_s = tb_now_s();
    }
    return c->pid != 0;
}

void tb_studio_child_destroy(tb_studio_child_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_studio_child_t *c = *self_p;
    if (tb_studio_child_running(c)) {
        kill(-c->pid, SIGTERM);
        for (int k = 0; k < 50 && tb_studio_child_running(c); k++)
            nanosleep(&(struct timespec){0, 100000000}, NULL);
        if (c->pid) {
            kill(-c->pid, SIGKILL);
            int wstatus;
            if (waitpid(c->pid, &wstatus, 0) == c->pid)
                s_set_status(c, wstatus);
        }
    }
    free(c);
    *self_p = NULL;
}

/* In the child after fork: only async-signal-safe calls until exec. */
static void s_exec(char *const argv[], int out_fd, int err_fd)
{
    setpgid(0, 0);
    if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
        _exit(127);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0)
        dup2(null_fd, STDIN_FILENO);
    /* the server's signal mask (SIGINT and SIGTERM blocked for sigwait) is not the child's */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv("/proc/self/exe", argv);
    _exit(127);
}

int tb_studio_child_start(tb_studio_child_t *c, const char *kind, char *const argv[],
                          const char *out_path, const char *err_path, tb_err_t *err)
{
    if (tb_studio_child_running(c))
        return tb_err_set(err, TB_E_REFUSED,
                          "a %s is running (pid %d, %.0f s): one plan or bake at a time", c->kind,
                          (int)c->pid, tb_now_s() - c->started_s);
    int out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot open: %s", out_path, strerror(errno));
    int err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) {
        close(out_fd);
        return tb_err_set(err, TB_E_IO, "%s: cannot open: %s", err_path, strerror(errno));
    }
    /* the environment is made before fork: unsetenv is not async-signal-safe */
    unsetenv("TB_NO_PROGRESS");
    pid_t pid = fork();
    if (pid == 0)
        s_exec(argv, out_fd, err_fd);
    int fork_errno = errno;
    close(out_fd);
    close(err_fd);
    if (pid < 0)
        return tb_err_set(err, TB_E_IO, "cannot start terrain %s: fork: %s", kind,
                          strerror(fork_errno));
    setpgid(pid, pid); /* also here, so a kill of the group cannot come before the child's own */
    c->pid = pid;
    c->status = -1;
    c->started_s = tb_now_s();
    c->ended_s = 0;
    snprintf(c->kind, sizeof c->kind, "%s", kind);
    size_t len = 0;
    c->command[0] = '\0';
    for (int k = 0; argv[k] && len < sizeof c->command; k++)
        len += (size_t)snprintf(c->command + len, sizeof c->command - len, "%s%s", k ? " " : "",
                                argv[k]);
    tb_log_info("started terrain %s (pid %d)", c->command, (int)pid);
    return 0;
}

const char *tb_studio_child_kind(const tb_studio_child_t *c)
{
    return c->kind;
}
int tb_studio_child_status(const tb_studio_child_t *c)
{
    return c->status;
}
const char *tb_studio_child_command(const tb_studio_child_t *c)
{
    return c->command;
}

double tb_studio_child_seconds(const tb_studio_child_t *c)
{
    if (c->started_s == 0)
        return 0;
    return (c->pid ? tb_now_s() : c->ended_s) - c->started_s;
}

void tb_studio_last_line(const char *path, const char *needle, char *out, size_t n)
{
    out[0] = '\0';
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return;
    static char buf[S_TAIL_BYTES + 1];
    long size = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : 0;
    long from = size > S_TAIL_BYTES ? size - S_TAIL_BYTES : 0;
    size_t got = fseek(fp, from, SEEK_SET) == 0 ? fread(buf, 1, S_TAIL_BYTES, fp) : 0;
    fclose(fp);
    buf[got] = '\0';
    /* lines end in \n; a progress bar's redraws (\r) count as line ends too */
    for (size_t k = 0; k < got; k++)
        if (buf[k] == '\r' || buf[k] == '\0')
            buf[k] = '\n';
    const char *best = NULL;
    size_t best_len = 0;
    for (char *line = buf; *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        size_t len = strlen(line);
        if (len > 0 && (!needle || strstr(line, needle))) {
            best = line;
            best_len = len;
        }
        if (!end)
            break;
        line = end + 1;
    }
    if (best)
        snprintf(out, n, "%.*s", (int)best_len, best);
}

int tb_studio_child_pid(const tb_studio_child_t *c)
{
    return (int)c->pid;
}
