/* `scripts/bench plan [--threads N] [--keep DIR]`: the plan of the predecessor's 100 km planet.
 * --keep DIR keeps the painting there and reuses it on the next run (painting it takes seconds).
 *
 * Paints a demo-like planet of 12500 x 6076 cells (100 km round at 8 m, one pixel per cell, the
 * size of the predecessor's template), writes it as painting.png, legend.json and planet.json in a
 * temporary directory, then runs a fresh process that times loading and decoding
 * (tb_planet_input_load) and the plan (tb_plan_new) separately, and prints seconds, ns per cell and
 * the peak resident memory of that process (getrusage maxrss), so the painting's generation does
 * not count. A breakdown by phase follows. Targets: 4 s (predecessor), 2 s (docs/traps.md), for the
 * plan.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/png_io.h"
#include "coordinator/bake/planet_input.h"
#include "jobs/plan/classify.h"
#include "jobs/plan/demo.h"
#include "jobs/plan/landmasses.h"
#include "jobs/plan/plan.h"
#include "jobs/plan/regions.h"

#define S_W 12500
#define S_H 6076

/* CPU seconds (user + system) this process has used: on a shared machine, the figure that does not
 * move with other people's load. */
static double s_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static double s_maxrss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* Writes the planet's three files into dir. */
static int s_write_planet(const char *dir)
{
    tb_manifest_t m;
    tb_image_t img;
    tb_err_t err;
    if (tb_demo_manifest(TB_DEMO_SEED, S_W * 8 / 1000.0, &m, &err) != 0) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return -1;
    }
    double t0 = tb_now_s();
    if (tb_demo_paint(TB_DEMO_SEED, &m, S_W, S_H, &img, &err) != 0) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return -1;
    }
    double t1 = tb_now_s();
    char path[TB_PATH_MAX];
    char *legend = tb_legend_to_json(&m.legend);
    char *manifest = tb_manifest_to_file_json(&m, "painting.png", "legend.json");
    int rc = tb_fs_join(path, sizeof path, dir, "painting.png", &err) ||
             tb_png_write(path, &img, 1, &err) ||
             tb_fs_join(path, sizeof path, dir, "legend.json", &err) ||
             tb_fs_write_atomic(path, legend, strlen(legend), &err) ||
             tb_fs_join(path, sizeof path, dir, "planet.json", &err) ||
             tb_fs_write_atomic(path, manifest, strlen(manifest), &err);
    free(legend);
    free(manifest);
    tb_image_free(&img);
    if (rc) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return -1;
    }
    printf("painted %d x %d (demo layout, seed %d) in %.2f s and wrote it in %.2f s to %s\n", S_W,
           S_H, TB_DEMO_SEED, t1 - t0, tb_now_s() - t1, dir);
    return 0;
}

/* The measured process: load, plan, breakdown. */
static int s_measure(const char *dir, int threads)
{
    char path[TB_PATH_MAX];
    tb_err_t err;
    if (tb_fs_join(path, sizeof path, dir, "planet.json", &err) != 0)
        return 1;
    tb_planet_input_t in;
    double c0 = s_cpu_s(), t0 = tb_now_s();
    if (tb_planet_input_load(path, NULL, &in, &err) != 0) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return 1;
    }
    double t1 = tb_now_s(), c1 = s_cpu_s();
    double load_rss = s_maxrss_mb();
    tb_plan_t *p = tb_plan_new(&in.manifest, &in.painting, threads, &err);
    double t2 = tb_now_s(), c2 = s_cpu_s();
    if (!p) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return 1;
    }
    const double cells = (double)in.planet_w * (double)in.planet_h;
    const tb_plan_summary_t *s = tb_plan_summary(p);
    printf("load+decode: %.3f s, %.1f ns per cell (cpu %.3f s; peak %.0f MB)\n", t1 - t0,
           (t1 - t0) / cells * 1e9, c1 - c0, load_rss);
    printf("plan:        %.3f s, %.1f ns per cell, %d thread%s (cpu %.3f s); target 4 s "
           "(predecessor), 2 s (docs/traps.md): %.2fx the 2 s aim\n",
           t2 - t1, (t2 - t1) / cells * 1e9, threads, threads == 1 ? "" : "s", c2 - c1,
           (t2 - t1) / 2.0);
    printf("peak memory: %.0f MB (getrusage maxrss of this process, %.1f bytes per cell)\n",
           s_maxrss_mb(), s_maxrss_mb() * 1048576.0 / cells);
    printf("planet: %lld x %lld, %d regions, %lld landmasses kept of %lld, land %.1f %%, region "
           "cells %lld\n",
           (long long)s->planet_w, (long long)s->planet_h, tb_plan_region_count(p),
           (long long)s->landmasses_kept, (long long)s->landmasses_found,
           100.0 * (double)s->land_cells / cells, (long long)s->region_cells);
    tb_plan_destroy(&p);
    /* Breakdown: the same phases as tb_plan_new, one at a time (painting at one pixel a cell). */
    uint8_t *classes = malloc((size_t)cells);
    tb_classify_report_t rep;
    tb_landmasses_t lm;
    tb_regions_t regions;
    double b0 = tb_now_s();
    if (!classes || tb_classify_match(&in.painting, &in.manifest.legend, classes, &rep, &err) != 0)
        return 1;
    double b1 = tb_now_s();
    int rounds;
    tb_classify_fill_unmatched(classes, in.planet_w, in.planet_h, true, &rounds, &err);
    tb_classify_despeckle(classes, in.planet_w, in.planet_h, true, &err);
    double b2 = tb_now_s();
    if (tb_landmasses_find(classes, in.planet_w, in.planet_h, &in.manifest.legend,
                           in.manifest.cell_m, in.manifest.regions.min_landmass_km2, &lm,
                           &err) != 0)
        return 1;
    double b3 = tb_now_s();
    if (tb_regions_group(classes, in.planet_w, in.planet_h, in.manifest.cell_m, &lm,
                         in.manifest.regions.ocean_margin_km, threads, &regions, &err) != 0)
        return 1;
    double b4 = tb_now_s();
    printf("breakdown (a second pass, phase by phase): match %.3f s, fill+despeckle %.3f s, "
           "landmasses %.3f s, regions (dilate + label + boxes) %.3f s\n",
           b1 - b0, b2 - b1, b3 - b2, b4 - b3);
    tb_regions_free(&regions);
    tb_landmasses_free(&lm);
    free(classes);
    tb_planet_input_free(&in);
    return 0;
}

int main(int argc, char **argv)
{
    int threads = 2;
    const char *keep = NULL, *measure = NULL;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--threads") == 0 && k + 1 < argc)
            threads = atoi(argv[++k]);
        else if (strcmp(argv[k], "--keep") == 0 && k + 1 < argc)
            keep = argv[++k];
        else if (strcmp(argv[k], "--measure") == 0 && k + 1 < argc)
            measure = argv[++k];
        else {
            fprintf(stderr, "usage: bench_plan [--threads N] [--keep DIR]\n");
            return 2;
        }
    }
    if (threads < 1)
        threads = 1;
    if (measure)
        return s_measure(measure, threads);
    char dir[TB_PATH_MAX];
    if (keep) {
        snprintf(dir, sizeof dir, "%s", keep);
        if (tb_fs_mkdir_p(dir, NULL) != 0)
            return 1;
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/tb-bench-plan-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            fprintf(stderr, "bench plan: mkdtemp %s: %s\n", dir, strerror(errno));
            return 1;
        }
    }
    char kept_manifest[TB_PATH_MAX + 16];
    snprintf(kept_manifest, sizeof kept_manifest, "%s/planet.json", dir);
    if (keep && tb_fs_exists(kept_manifest))
        printf("reusing the painting in %s (delete it to paint afresh)\n", dir);
    else if (s_write_planet(dir) != 0)
        return 1;
    fflush(stdout);
    char threads_arg[16];
    snprintf(threads_arg, sizeof threads_arg, "%d", threads);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "--measure", dir, "--threads", threads_arg, (char *)NULL);
        _exit(127);
    }
    int status = 1;
    waitpid(pid, &status, 0);
    if (!keep) {
        static const char *names[] = {"painting.png", "legend.json", "planet.json"};
        for (int k = 0; k < 3; k++) {
            char path[TB_PATH_MAX + 32];
            snprintf(path, sizeof path, "%s/%s", dir, names[k]);
            unlink(path);
        }
        rmdir(dir);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
