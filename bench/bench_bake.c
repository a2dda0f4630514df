/* bench_bake: the cost of distribution on the real job (docs/distribution.md: 1 local worker
 * within 5 % of the in-process bake). Bakes the demo planet (25 km round, seed 7) at a reduced step
 * count three ways - in-process, through 1 local worker, through 2 local workers - each from an
 * empty result store, and prints the wall time of the bake and of its dispatch, the ratio to
 * in-process, and for every region the seconds it took, its ns per box cell-step and the worker
 * that solved it (from the dispatch record in meta.json). Threads default to the machine's cores,
 * as in `terrain bake`.
 *
 * The machine is shared and noisy: with --rounds R each configuration runs R times, interleaved,
 * and the fastest run of each is reported. Outputs go to a temporary directory removed at the end.
 *
 *   scripts/bench bake [--steps N] [--circumference-km K] [--threads N] [--rounds R]
 *                      (defaults: 50 steps, 25 km, all cores, 1 round)
 */
#define _XOPEN_SOURCE 700
#include <cJSON.h>
#include <czmq.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/args.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/pool.h"
#include "coordinator/bake/bake.h"

typedef struct {
    const char *name;
    int workers;
    double bake_s, dispatch_s; /* fastest round */
    cJSON *meta;               /* meta.json of the fastest round */
} s_config_t;

static int s_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int s_bake(const char *dir, int workers, int threads, int steps, double circ_km,
                  s_config_t *cfg)
{
    tb_bake_opts_t o = {0};
    o.out_dir = dir;
    o.steps = steps;
    o.quiet = true;
    o.input.has_circumference = circ_km > 0;
    o.input.circumference_km = circ_km;
    o.dispatch.workers = workers;
    o.dispatch.workers_given = true;
    o.dispatch.threads = threads;
    o.dispatch.fresh = true;
    tb_bake_outcome_t out;
    tb_err_t err;
    double t0 = tb_now_s();
    int rc = tb_bake_run(&o, &out, &err);
    double dt = tb_now_s() - t0;
    double dispatch_s = out.dispatch.seconds;
    tb_bake_outcome_free(&out);
    if (rc != 0) {
        fprintf(stderr, "bench bake: %s: %s\n", cfg->name, err.msg);
        return -1;
    }
    if (cfg->meta && dt >= cfg->bake_s)
        return 0;
    char path[4200], *text;
    size_t n;
    if (tb_fs_join(path, sizeof path, dir, "meta.json", &err) != 0 ||
        tb_fs_read_all(path, (size_t)1 << 30, &text, &n, &err) != 0) {
        fprintf(stderr, "bench bake: %s\n", err.msg);
        return -1;
    }
    cJSON_Delete(cfg->meta);
    cfg->meta = cJSON_Parse(text);
    free(text);
    cfg->bake_s = dt;
    cfg->dispatch_s = dispatch_s;
    return cfg->meta ? 0 : -1;
}

static double s_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *s_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

/* One line per region: seconds, ns per box cell-step, worker. */
static void s_print_regions(const cJSON *meta, int steps)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(meta, "dispatch"), "jobs");
    const cJSON *regions =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "plan"), "regions");
    const cJSON *job;
    int k = 0;
    cJSON_ArrayForEach(job, jobs)
    {
        /* jobs are in region order, one per region (no --only here) */
        double box_cells = s_num(cJSON_GetArrayItem(regions, k++), "box_cells");
        double s = s_num(job, "seconds");
        printf("      %-10s %8.0f box cells %7.3f s %6.1f ns per box cell-step  on %s\n",
               s_str(job, "label"), box_cells, s, box_cells > 0 ? s * 1e9 / (box_cells * steps) : 0,
               s_str(job, "worker"));
    }
}

int main(int argc, char **argv)
{
    int64_t steps = 50, threads = 0, rounds = 1;
    double circ_km = 25;
    bool help = false;
    tb_opt_t opts[] = {
        {"steps", TB_OPT_INT, &steps, NULL, "N", "solve steps (50)"},
        {"circumference-km", TB_OPT_DOUBLE, &circ_km, NULL, "K", "demo planet size (25)"},
        {"threads", TB_OPT_INT, &threads, NULL, "N", "threads per worker and in-process (cores)"},
        {"rounds", TB_OPT_INT, &rounds, NULL, "R",
         "runs of each configuration; the fastest counts"},
        {"help", TB_OPT_FLAG, &help, NULL, NULL, "show this help"},
    };
    tb_err_t err;
    int n_pos;
    if (tb_args_parse(argc - 1, argv + 1, opts, TB_ARGS_N(opts), NULL, 0, &n_pos, &err) != 0 ||
        help || steps < 1 || rounds < 1 || threads < 0) {
        if (!help)
            fprintf(stderr, "bench bake: %s\n", err.msg);
        tb_args_usage(help ? stdout : stderr,
                      "scripts/bench bake [--steps N] "
                      "[--circumference-km K] [--threads N] [--rounds R]",
                      opts, TB_ARGS_N(opts));
        return help ? 0 : 2;
    }
    zsys_handler_set(NULL);
    tb_log_set_level(TB_LOG_WARN);
    setenv("TB_NO_PROGRESS", "1", 0);
    int cores = tb_pool_default_threads();
    int nthreads = threads > 0 ? (int)threads : cores;
    char tmpl[4200];
    snprintf(tmpl, sizeof tmpl, "%s/tb-bench-bake-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpl)) {
        perror("bench bake: mkdtemp");
        return 1;
    }
    printf(
        "bench bake: demo planet %g km round, %lld steps (the manifest's are 400), %d threads per "
        "worker, %d cores, %lld round%s, empty store each time\n",
        circ_km, (long long)steps, nthreads, cores, (long long)rounds, rounds > 1 ? "s" : "");
    s_config_t cfg[3] = {{"in-process", 0, 0, 0, NULL},
                         {"1 local worker", 1, 0, 0, NULL},
                         {"2 local workers", 2, 0, 0, NULL}};
    int rc = 0;
    for (int64_t r = 0; r < rounds && rc == 0; r++)
        for (int c = 0; c < 3 && rc == 0; c++) {
            char dir[4300];
            snprintf(dir, sizeof dir, "%s/%d", tmpl, cfg[c].workers);
            rc = s_bake(dir, cfg[c].workers, nthreads, (int)steps, circ_km, &cfg[c]);
        }
    if (rc == 0) {
        double base = cfg[0].bake_s, base_d = cfg[0].dispatch_s;
        for (int c = 0; c < 3; c++) {
            printf("  %-16s bake %7.3f s (ratio %.3f)  dispatch %7.3f s (ratio %.3f)\n",
                   cfg[c].name, cfg[c].bake_s, cfg[c].bake_s / base, cfg[c].dispatch_s,
                   cfg[c].dispatch_s / base_d);
            s_print_regions(cfg[c].meta, (int)steps);
        }
        double over = (cfg[1].bake_s / base - 1) * 100;
        printf("  distribution overhead, 1 local worker against in-process: %+.1f %% of the bake "
               "(target under 5 %%), %+.1f %% of the dispatch\n",
               over, (cfg[1].dispatch_s / base_d - 1) * 100);
    }
    for (int c = 0; c < 3; c++)
        cJSON_Delete(cfg[c].meta);
    nftw(tmpl, s_rm, 16, FTW_DEPTH | FTW_PHYS);
    return rc == 0 ? 0 : 1;
}
