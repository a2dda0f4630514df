/* Local worker processes; see local_workers.h. */
#include "coordinator/farm/local_workers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "coordinator/farm/proto.h"

#define S_SOCKET "coord.sock"
#define S_OWNER "owner"
#define S_IPC_PATH_MAX 100 /* sun_path is 108 bytes on Linux; keep a margin */

#define S_ROUTING_ID_MAX 48

typedef struct {
    pid_t pid; /* 0 once reaped */
    char name[128];
    char routing_id[S_ROUTING_ID_MAX]; /* "tb-local-" and 32 random hex digits */
} s_slot_t;

extern char **environ;

struct tb_local_workers_t {
    char program[PATH_MAX];
    bool search_path; /* program is a bare name to look up on $PATH */
    char dir[PATH_MAX];
    char endpoint[PATH_MAX + 16];
    s_slot_t *slots;
    int n_slots;
    int cap_slots;
};

static const char *s_tmp_base(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base || strlen(base) + 40 > S_IPC_PATH_MAX)
        base = "/tmp";
    return base;
}

/* Whether pid names a live process: a zombie (dead, not yet reaped by its new parent) is not. */
static bool s_process_alive(long pid)
{
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return false;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return true; /* no /proc: trust kill() */
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return !(paren && paren[1] == ' ' && paren[2] == 'Z');
}

/* Removes private directories left by coordinators that died without cleaning up (SIGKILL): ours,
 * named terrain-XXXXXX, whose owner file names a process that no longer exists. */
static void s_sweep_stale(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "terrain-", 8) != 0 || strlen(e->d_name) != 14)
            continue;
        char dir[PATH_MAX], path[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/%s", base, e->d_name);
        struct stat st;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, S_OWNER);
        FILE *fp = fopen(path, "r");
        long pid = 0;
        if (!fp)
            continue;
        int got = fscanf(fp, "%ld", &pid);
        fclose(fp);
        if (got != 1 || pid <= 0 || s_process_alive(pid))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, S_SOCKET);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s", dir, S_OWNER);
        unlink(path);
        if (rmdir(dir) == 0)
            tb_log_debug("removed %s, left by coordinator %ld", dir, pid);
    }
    closedir(d);
}

static void s_find_program(tb_local_workers_t *self, const char *program)
{
    const char *env = getenv("TB_WORKER_PROGRAM");
    if (program && *program) {
        snprintf(self->program, sizeof self->program, "%s", program);
        return;
    }
    if (env && *env) {
        snprintf(self->program, sizeof self->program, "%s", env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char beside[PATH_MAX + 32];
            snprintf(beside, sizeof beside, "%s/terrain-worker", exe);
            if (access(beside, X_OK) == 0 && strlen(beside) < sizeof self->program) {
                snprintf(self->program, sizeof self->program, "%s", beside);
                return;
            }
        }
    }
    snprintf(self->program, sizeof self->program, "terrain-worker");
    self->search_path = true;
}

tb_local_workers_t *tb_local_workers_new(const char *program, tb_err_t *err)
{
    tb_local_workers_t *self = tb_calloc(1, sizeof *self, "local workers", err);
    if (!self)
        return NULL;
    s_find_program(self, program);
    const char *base = s_tmp_base();
    s_sweep_stale(base);
    snprintf(self->dir, sizeof self->dir, "%s/terrain-XXXXXX", base);
    if (!mkdtemp(self->dir)) {
        tb_err_set(err, TB_E_IO, "%s: cannot create a private directory: %s", self->dir,
                   strerror(errno));
        free(self);
        return NULL;
    }
    char owner[PATH_MAX + 32];
    snprintf(owner, sizeof owner, "%s/%s", self->dir, S_OWNER);
    FILE *fp = fopen(owner, "w");
    if (fp) {
        fprintf(fp, "%ld\n", (long)getpid());
        fclose(fp);
    }
    snprintf(self->endpoint, sizeof self->endpoint, "ipc://%s/%s", self->dir, S_SOCKET);
    return self;
}

const char *tb_local_workers_endpoint(const tb_local_workers_t *self)
{
    return self->endpoint;
}
const char *tb_local_workers_dir(const tb_local_workers_t *self)
{
    return self->dir;
}

int tb_local_workers_spawn(tb_local_workers_t *self, const char *name, const char *const *args,
                           tb_err_t *err)
{
    if (self->n_slots == self->cap_slots) {
        int cap = self->cap_slots ? 2 * self->cap_slots : 8;
        s_slot_t *grown = realloc(self->slots, (size_t)cap * sizeof *grown);
        if (!grown)
            return tb_err_set(err, TB_E_NOMEM, "out of memory starting a worker");
        self->slots = grown;
        self->cap_slots = cap;
    }
    /* Everything the child needs is built before fork: after it, only async-signal-safe calls. */
    const char *argv[64];
    int n = 0;
    argv[n++] = self->program;
    argv[n++] = "--connect";
    argv[n++] = self->endpoint;
    argv[n++] = "--name";
    argv[n++] = name;
    for (int i = 0; args && args[i]; i++) {
        if (n >= 63)
            return tb_err_set(err, TB_E_INTERNAL, "too many worker arguments");
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    /* A fresh random routing id, handed over in the environment (not on the command line, which
     * every user of the machine can read). */
    unsigned char rnd[16];
    ssize_t got = getrandom(rnd, sizeof rnd, 0);
    if (got != (ssize_t)sizeof rnd)
        return tb_err_set(err, TB_E_IO, "cannot start a worker: getrandom: %s", strerror(errno));
    char routing_id[S_ROUTING_ID_MAX], env_entry[S_ROUTING_ID_MAX + 32];
    int k = snprintf(routing_id, sizeof routing_id, "tb-local-");
    for (size_t i = 0; i < sizeof rnd; i++)
        k += snprintf(routing_id + k, sizeof routing_id - (size_t)k, "%02x", rnd[i]);
    snprintf(env_entry, sizeof env_entry, "%s=%s", TB_PROTO_ROUTING_ENV, routing_id);
    size_t n_env = 0;
    while (environ && environ[n_env])
        n_env++;
    char **envp = malloc((n_env + 2) * sizeof *envp);
    if (!envp)
        return tb_err_set(err, TB_E_NOMEM, "out of memory starting a worker");
    size_t e = 0;
    size_t prefix = strlen(TB_PROTO_ROUTING_ENV);
    for (size_t i = 0; i < n_env; i++)
        if (!(strncmp(environ[i], TB_PROTO_ROUTING_ENV, prefix) == 0 && environ[i][prefix] == '='))
            envp[e++] = environ[i];
    envp[e++] = env_entry;
    envp[e] = NULL;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        free(envp);
        return tb_err_set(err, TB_E_IO, "cannot start %s: fork: %s", self->program,
                          strerror(errno));
    }
    if (pid == 0) {
        /* Die with the coordinator, even when it is killed with SIGKILL. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
        environ = envp; /* a pointer store: safe after fork */
        if (self->search_path)
            execvp(argv[0], (char *const *)argv);
        else
            execv(argv[0], (char *const *)argv);
        static const char msg[] = "terrain: cannot execute the worker program\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    free(envp);
    s_slot_t *slot = &self->slots[self->n_slots];
    slot->pid = pid;
    snprintf(slot->name, sizeof slot->name, "%s", name);
    memcpy(slot->routing_id, routing_id, sizeof slot->routing_id);
    tb_log_debug("started worker %s (pid %ld): %s", name, (long)pid, self->program);
    return self->n_slots++;
}

int tb_local_workers_reap(tb_local_workers_t *self, int *status)
{
    for (int i = 0; i < self->n_slots; i++) {
        if (self->slots[i].pid <= 0)
            continue;
        int st;
        pid_t r = waitpid(self->slots[i].pid, &st, WNOHANG);
        if (r == self->slots[i].pid || (r < 0 && errno == ECHILD)) {
            self->slots[i].pid = 0;
            if (status)
                *status = r > 0 ? st : 0;
            return i;
        }
    }
    return -1;
}

int tb_local_workers_count(const tb_local_workers_t *self)
{
    return self ? self->n_slots : 0;
}

int tb_local_workers_running(const tb_local_workers_t *self)
{
    int n = 0;
    for (int i = 0; self && i < self->n_slots; i++)
        n += self->slots[i].pid > 0;
    return n;
}

pid_t tb_local_workers_pid(const tb_local_workers_t *self, int slot)
{
    return slot >= 0 && slot < self->n_slots ? self->slots[slot].pid : 0;
}

const char *tb_local_workers_name(const tb_local_workers_t *self, int slot)
{
    return slot >= 0 && slot < self->n_slots ? self->slots[slot].name : "";
}

int tb_local_workers_find(const tb_local_workers_t *self, const char *name)
{
    for (int i = 0; self && i < self->n_slots; i++)
        if (strcmp(self->slots[i].name, name) == 0)
            return i;
    return -1;
}

static void s_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Reaps children until none runs or `seconds` pass; returns the number still running. */
static int s_wait_all(tb_local_workers_t *self, double seconds)
{
    double until = tb_now_s() + seconds;
    for (;;) {
        while (tb_local_workers_reap(self, NULL) >= 0) {
        }
        int running = tb_local_workers_running(self);
        if (running == 0 || tb_now_s() >= until)
            return running;
        s_sleep_ms(10);
    }
}

static void s_signal_all(tb_local_workers_t *self, int sig)
{
    for (int i = 0; i < self->n_slots; i++)
        if (self->slots[i].pid > 0)
            kill(self->slots[i].pid, sig);
}

void tb_local_workers_stop(tb_local_workers_t *self, double grace_s)
{
    if (!self || s_wait_all(self, grace_s) == 0)
        return;
    s_signal_all(self, SIGTERM);
    if (s_wait_all(self, 3.0) == 0)
        return;
    tb_log_warn("%d local workers ignored SIGTERM; killing them", tb_local_workers_running(self));
    s_signal_all(self, SIGKILL);
    for (int i = 0; i < self->n_slots; i++)
        if (self->slots[i].pid > 0) {
            waitpid(self->slots[i].pid, NULL, 0);
            self->slots[i].pid = 0;
        }
}

void tb_local_workers_destroy(tb_local_workers_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_local_workers_t *self = *self_p;
    tb_local_workers_stop(self, 1.0);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", self->dir, S_SOCKET);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", self->dir, S_OWNER);
    unlink(path);
    if (rmdir(self->dir) != 0)
        tb_log_warn("%s: cannot remove the private directory: %s", self->dir, strerror(errno));
    free(self->slots);
    free(self);
    *self_p = NULL;
}

bool tb_local_workers_owns(const tb_local_workers_t *self, const char *name, const void *routing_id,
                           size_t bytes)
{
    int slot = tb_local_workers_find(self, name);
    if (slot < 0)
        return false;
    const char *mine = self->slots[slot].routing_id;
    return bytes == strlen(mine) && memcmp(mine, routing_id, bytes) == 0;
}

bool tb_local_workers_reserved(const char *name)
{
    if (strncmp(name, "local-", 6) != 0 || !name[6])
        return false;
    for (const char *p = name + 6; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}
