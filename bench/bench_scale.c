/* bench_scale: the bake at planet scale (issue 22; docs/bake.md, "Costs"). Bakes the demo planet at
 * several circumferences with the built `terrain` (a process of its own, its local workers its
 * children), samples the resident memory of the coordinator and of every worker every 200 ms from
 * /proc, and prints per phase its seconds and ns a cell (a box cell-step for the solve, a tile for
 * the tiles), the coordinator's peak RSS and the largest worker's, the machine's load, and each
 * figure's ratio to the first size's.
 *
 *   scripts/bench scale [--sizes 25,100,300] [--steps 10,400,10] [--no-tiles-above KM]
 *                       [--out-root DIR] [--keep] [--workers N] [--job-memory-gb G]
 *     defaults: 25 and 100 km at 400 steps with their tiles, 300 km at 10 steps without tiles
 *     (the "Done when": the 100 km planet's 65 tiles, the 300 km planet's 450 M cells);
 *     outputs under a temporary directory removed at the end unless --keep.
 *
 * Resident memory is VmRSS (anonymous and file pages mapped): the planet's rasters are files
 * mapped into the coordinator, so what it holds of them counts here, as it should. The machine is
 * shared: the load average before and after each bake is printed beside it.
 */
#define _XOPEN_SOURCE 700
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_MAX_SIZES 8

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double s_load(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* VmRSS of pid in bytes, and its parent; 0 when gone. */
static long long s_rss(pid_t pid, pid_t *ppid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long long kb = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        long v;
        if (sscanf(line, "VmRSS: %ld kB", &v) == 1)
            kb = v;
        else if (ppid && sscanf(line, "PPid: %ld", &v) == 1)
            *ppid = (pid_t)v;
    }
    fclose(f);
    return kb * 1024;
}

/* The largest VmRSS among the children of `parent` (the local workers). */
static long long s_children_rss(pid_t parent)
{
    DIR *d = opendir("/proc");
    long long best = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        pid_t pp = 0;
        long long r = s_rss((pid_t)pid, &pp);
        if (pp == parent && r > best)
            best = r;
    }
    if (d)
        closedir(d);
    return best;
}

static int s_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static cJSON *s_read_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    cJSON *j = NULL;
    if (text && fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
        j = cJSON_Parse(text);
    }
    free(text);
    fclose(f);
    return j;
}

typedef struct {
    double km;
    int steps;
    bool tiles;
    double seconds, load_before, load_after;
    long long coord_peak, worker_peak;
    int status;
    cJSON *meta;
} s_run_t;

/* One bake: `terrain bake` in its own process, sampled until it exits. */
static int s_bake(const char *terrain, const char *out, s_run_t *r, int workers, double job_gb)
{
    char circ[32], steps[32], wk[32], jm[32];
    snprintf(circ, sizeof circ, "%g", r->km);
    snprintf(steps, sizeof steps, "%d", r->steps);
    snprintf(wk, sizeof wk, "%d", workers);
    snprintf(jm, sizeof jm, "%g", job_gb);
    const char *argv[16] = {
        terrain, "bake", "--circumference-km", circ, "--steps", steps, "--out", out, "--fresh"};
    int n = 9;
    if (!r->tiles)
        argv[n++] = "--no-tiles";
    if (workers > 0) {
        argv[n++] = "--workers";
        argv[n++] = wk;
    }
    if (job_gb > 0) {
        argv[n++] = "--job-memory-gb";
        argv[n++] = jm;
    }
    argv[n] = NULL;
    r->load_before = s_load();
    double t0 = s_now();
    pid_t pid = fork();
    if (pid == 0) {
        char log[4200];
        snprintf(log, sizeof log, "%s.log", out);
        if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr))
            _exit(127);
        setenv("TB_NO_PROGRESS", "1", 1);
        execv(terrain, (char *const *)argv);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    int status = 0;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            break;
        long long c = s_rss(pid, NULL), w = s_children_rss(pid);
        if (c > r->coord_peak)
            r->coord_peak = c;
        if (w > r->worker_peak)
            r->worker_peak = w;
        usleep(200000);
    }
    r->seconds = s_now() - t0;
    r->load_after = s_load();
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", out);
    r->meta = s_read_json(path);
    return 0;
}

static double s_num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static double s_phase_s(const cJSON *meta, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(meta, "phases"))
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(p, "name");
        if (cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0)
            return s_num(p, "seconds", NULL);
    }
    return 0;
}

/* The planet's cells and the solve's box cell-steps, from meta.json's plan. */
static void s_sizes(const cJSON *meta, double *cells, double *box_steps, double *tiles)
{
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(meta, "plan");
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(plan, "summary");
    *cells = s_num(sum, "planet_w", NULL) * s_num(sum, "planet_h", NULL);
    *box_steps = s_num(sum, "region_cells", NULL) * s_num(meta, "bake", "steps");
    *tiles = s_num(cJSON_GetObjectItemCaseSensitive(meta, "tiles"), "tiles", NULL);
}

/* meta.json's dispatch records: the solve's "dispatch", coast.dispatch, tiles.dispatch (NULL where
 * absent). */
#define S_N_RECORDS 3
static void s_records(const cJSON *meta, const cJSON *records[S_N_RECORDS])
{
    records[0] = cJSON_GetObjectItemCaseSensitive(meta, "dispatch");
    records[1] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "coast"),
                                                  "dispatch");
    records[2] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "tiles"),
                                                  "dispatch");
}

/* The largest peak a worker reported for one attempt (each record's "worker_peak"), and the job;
 * 0 when none. */
static double s_reported_peak(const cJSON *meta, const char **job)
{
    const cJSON *records[S_N_RECORDS];
    s_records(meta, records);
    double best = 0;
    *job = "-";
    for (size_t i = 0; i < S_N_RECORDS; i++) {
        const cJSON *wp = cJSON_GetObjectItemCaseSensitive(records[i], "worker_peak");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(wp, "job");
        double b = s_num(wp, "bytes", NULL);
        if (b > best && cJSON_IsString(name)) {
            best = b;
            *job = name->valuestring;
        }
    }
    return best;
}

/* Over the same records: the attempts whose peak exceeded their job's stated bound, and the largest
 * peak / bound (worker_peak's over_bound and closest.ratio). */
static void s_bound_summary(const cJSON *meta, double *over, double *ratio)
{
    const cJSON *records[S_N_RECORDS];
    s_records(meta, records);
    *over = 0;
    *ratio = 0;
    for (size_t i = 0; i < S_N_RECORDS; i++) {
        const cJSON *wp = cJSON_GetObjectItemCaseSensitive(records[i], "worker_peak");
        double r = s_num(cJSON_GetObjectItemCaseSensitive(wp, "closest"), "ratio", NULL);
        *over += s_num(wp, "over_bound", NULL);
        if (r > *ratio)
            *ratio = r;
    }
}

static int s_parse_list(const char *text, double *v, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        char *end;
        v[n++] = strtod(p, &end);
        if (end == p)
            return -1;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    double sizes[S_MAX_SIZES] = {25, 100, 300}, steps[S_MAX_SIZES] = {400, 400, 10};
    int n_sizes = 3, n_steps = 3, workers = 0;
    double no_tiles_above = 200, job_gb = 0;
    const char *root = NULL;
    bool keep = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            n_sizes = s_parse_list(argv[++i], sizes, S_MAX_SIZES);
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            n_steps = s_parse_list(argv[++i], steps, S_MAX_SIZES);
        else if (strcmp(argv[i], "--no-tiles-above") == 0 && i + 1 < argc)
            no_tiles_above = atof(argv[++i]);
        else if (strcmp(argv[i], "--out-root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = atoi(argv[++i]);
        else if (strcmp(argv[i], "--job-memory-gb") == 0 && i + 1 < argc)
            job_gb = atof(argv[++i]);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = true;
        else {
            fprintf(stderr, "usage: bench_scale [--sizes 25,100,300] [--steps 400,400,10] "
                            "[--no-tiles-above KM] [--out-root DIR] [--keep] [--workers N] "
                            "[--job-memory-gb G]\n");
            return 2;
        }
    }
    if (n_sizes < 1 || n_steps < 1) {
        fprintf(stderr, "bench_scale: bad --sizes or --steps\n");
        return 2;
    }
    char self[4096], terrain[4200], tmp[] = "/tmp/tb_bench_scale_XXXXXX";
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return 1;
    self[len] = '\0';
    *strrchr(self, '/') = '\0';
    snprintf(terrain, sizeof terrain, "%s/terrain", self);
    if (!root) {
        if (!mkdtemp(tmp))
            return 1;
        root = tmp;
    } else if (mkdir(root, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_scale: %s: %s\n", root, strerror(errno));
        return 1;
    }
    s_run_t runs[S_MAX_SIZES] = {0};
    for (int k = 0; k < n_sizes; k++) {
        s_run_t *r = &runs[k];
        r->km = sizes[k];
        r->steps = (int)steps[k < n_steps ? k : n_steps - 1];
        r->tiles = sizes[k] <= no_tiles_above;
        char out[4200];
        snprintf(out, sizeof out, "%s/bake%g", root, r->km);
        printf("baking %g km, %d steps%s ...\n", r->km, r->steps,
               r->tiles ? ", tiles" : ", no tiles");
        fflush(stdout);
        if (s_bake(terrain, out, r, workers, job_gb) != 0 || r->status != 0 || !r->meta)
            printf("  the %g km bake failed (exit %d): see %s.log\n", r->km, r->status, out);
        fflush(stdout);
    }
    const char *phases[] = {"plan",    "solve", "composite", "coast",
                            "outputs", "maps",  "tiles",     "detail"};
    const int n_phases = (int)(sizeof phases / sizeof phases[0]);
    printf("\n%-10s", "phase");
    for (int k = 0; k < n_sizes; k++)
        printf(" | %5g km: s, ns/unit", runs[k].km);
    printf(" | ratio to %g km\n", runs[0].km);
    for (int i = 0; i < n_phases; i++) {
        printf("%-10s", phases[i]);
        double first = 0;
        for (int k = 0; k < n_sizes; k++) {
            if (!runs[k].meta) {
                printf(" | %20s", "-");
                continue;
            }
            double cells, box_steps, tiles, s = s_phase_s(runs[k].meta, phases[i]);
            s_sizes(runs[k].meta, &cells, &box_steps, &tiles);
            bool per_tile = strcmp(phases[i], "tiles") == 0 || strcmp(phases[i], "detail") == 0;
            double unit = strcmp(phases[i], "solve") == 0 ? box_steps : per_tile ? tiles : cells;
            double per = unit > 0 ? s / unit * (per_tile ? 1 : 1e9) : 0;
            printf(" | %8.1f %10.2f%s", s, per, per_tile ? "s" : " ");
            if (k == 0)
                first = per;
            else if (k == n_sizes - 1 && first > 0 && per > 0)
                printf(" | %.2f", per / first);
        }
        printf("\n");
    }
    printf("%-10s", "bake");
    for (int k = 0; k < n_sizes; k++)
        printf(" | %8.1f s, load %.1f-%.1f", runs[k].seconds, runs[k].load_before,
               runs[k].load_after);
    printf("\n%-10s", "coord RSS");
    for (int k = 0; k < n_sizes; k++)
        printf(" | %16.2f GB", (double)runs[k].coord_peak / 1e9);
    printf("\n%-10s", "worker RSS");
    for (int k = 0; k < n_sizes; k++)
        printf(" | %16.2f GB", (double)runs[k].worker_peak / 1e9);
    /* the same as the workers report it (their VmHWM over each attempt, in meta.json) */
    printf("\n%-10s", "reported");
    for (int k = 0; k < n_sizes; k++) {
        const char *job = "-";
        double b = runs[k].meta ? s_reported_peak(runs[k].meta, &job) : 0;
        printf(" | %5.2f GB %-10.10s", b / 1e9, job);
    }
    /* each attempt's peak against its job's stated bound (docs/distribution.md, "Peak memory") */
    printf("\n%-10s", "vs bound");
    for (int k = 0; k < n_sizes; k++) {
        double over = 0, ratio = 0;
        if (runs[k].meta)
            s_bound_summary(runs[k].meta, &over, &ratio);
        printf(" | %4.0f over, max %.2f", over, ratio);
    }
    printf("\n%-10s", "cells");
    for (int k = 0; k < n_sizes; k++) {
        double cells = 0, box_steps = 0, tiles = 0;
        if (runs[k].meta)
            s_sizes(runs[k].meta, &cells, &box_steps, &tiles);
        printf(" | %8.1f M, %3.0f tiles", cells / 1e6, tiles);
    }
    printf(
        "\n(ns/unit: per planet cell; the solve per box cell-step; tiles and detail: s a tile)\n");
    for (int k = 0; k < n_sizes; k++)
        cJSON_Delete(runs[k].meta);
    if (!keep && root == tmp)
        nftw(root, s_rm, 16, FTW_DEPTH | FTW_PHYS);
    else
        printf("outputs kept in %s\n", root);
    return 0;
}
