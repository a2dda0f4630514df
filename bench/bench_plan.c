/* `scripts/bench plan [--threads N] [--keep DIR] [--sizes LIST]`: the streamed plan at planet
 * scale (docs/plan.md, "Cost").
 *
 * For each size - the demo planet at 25, 100 and 300 km round (3125 x 1000, 12500 x 4000, 37500 x
 * 12000 cells), and the predecessor's 12500 x 6076 painting (the DESIGN.md budget: 2 s) - it makes
 * the demo painting as a PNG (the demo painter's rows into the row writer, as `terrain init` does;
 * --keep DIR keeps them for the next run), then runs fresh processes that
 *   - plan it as `terrain plan` does: the PNG decoded row by row, the two rasters in mapped files,
 *     two threads: seconds, CPU seconds, ns a cell and the process's peak resident memory;
 *   - paint the demo painting alone (the demo painter's rows, thrown away), which is what `terrain
 *     plan` with no manifest pays on top of the plan: seconds and ns a cell.
 * and prints each with its ratio to the 25 km planet (the bound: within 1.3x) and the load
 * on the machine before and after (a shared machine's timings are noisy; CPU seconds move less).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/png_rows.h"
#include "coordinator/bake/planet_input.h"
#include "jobs/plan/demo.h"
#include "jobs/plan/plan.h"

typedef struct {
    const char *name;
    double km; /* the demo manifest's circumference */
    int64_t h; /* painting rows: 0 for the demo's own 0.32 W */
} s_size_t;

static int s_paint_threads = 2; /* the demo painter's, --paint-threads */

static const s_size_t s_sizes[] = {
    {"25km", 25, 0}, {"100km", 100, 0}, {"300km", 300, 0}, {"12500x6076", 100, 6076}};
#define S_N_SIZES (sizeof s_sizes / sizeof s_sizes[0])

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

static void s_load(const char *when)
{
    double la[3];
    if (getloadavg(la, 3) == 3)
        printf("load %s: %.2f %.2f %.2f (1, 5, 15 min) on %ld cores\n", when, la[0], la[1], la[2],
               sysconf(_SC_NPROCESSORS_ONLN));
}

static int s_manifest(const s_size_t *sz, tb_manifest_t *m, int64_t *h, tb_err_t *err)
{
    if (tb_demo_manifest(TB_DEMO_SEED, sz->km, m, err) != 0)
        return -1;
    *h = sz->h ? sz->h : tb_demo_painting_h(m->planet_w);
    return 0;
}

/* Writes the size's painting, legend and manifest into dir unless they are there. */
static int s_write_planet(const char *dir, const s_size_t *sz)
{
    char path[TB_PATH_MAX];
    tb_err_t err;
    if (tb_fs_join(path, sizeof path, dir, "planet.json", &err) != 0)
        return -1;
    if (tb_fs_exists(path)) {
        printf("%-11s reusing the painting in %s\n", sz->name, dir);
        return 0;
    }
    tb_manifest_t m;
    int64_t h;
    if (tb_fs_mkdir_p(dir, &err) != 0 || s_manifest(sz, &m, &h, &err) != 0) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return -1;
    }
    double t0 = tb_now_s();
    tb_demo_painter_t *p = tb_demo_painter_new(TB_DEMO_SEED, &m, m.planet_w, h, 0, 2, &err);
    const tb_row_source_t *rows = p ? tb_demo_painter_rows(p) : NULL;
    int rc = rows && tb_fs_join(path, sizeof path, dir, "painting.png", &err) == 0 &&
                     tb_row_source_write_png(rows, path, 6, &err) == 0
                 ? 0
                 : -1;
    tb_demo_painter_destroy(&p);
    char *legend = rc == 0 ? tb_legend_to_json(&m.legend) : NULL;
    char *manifest = rc == 0 ? tb_manifest_to_file_json(&m, "painting.png", "legend.json") : NULL;
    if (rc == 0)
        rc = !legend || !manifest || tb_fs_join(path, sizeof path, dir, "legend.json", &err) ||
             tb_fs_write_atomic(path, legend, strlen(legend), &err) ||
             tb_fs_join(path, sizeof path, dir, "planet.json", &err) ||
             tb_fs_write_atomic(path, manifest, strlen(manifest), &err);
    free(legend);
    free(manifest);
    if (rc) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return -1;
    }
    printf("%-11s painted %lld x %lld and wrote it as a PNG in %.1f s to %s\n", sz->name,
           (long long)m.planet_w, (long long)h, tb_now_s() - t0, dir);
    return 0;
}

/* The measured process: plans dir/planet.json as `terrain plan` does and prints one line,
 * "cells seconds cpu_seconds peak_mb provisional_labels". */
static int s_measure_plan(const char *dir, int threads)
{
    char path[TB_PATH_MAX];
    tb_err_t err;
    if (tb_fs_join(path, sizeof path, dir, "planet.json", &err) != 0)
        return 1;
    double c0 = s_cpu_s(), t0 = tb_now_s();
    tb_planet_input_t in;
    tb_raster_t classes, labels;
    if (tb_planet_input_load(path, NULL, &in, &err) != 0 ||
        tb_raster_map_temp(&classes, dir, ".bench-classes", in.planet_w, in.planet_h, 1, &err) ||
        tb_raster_map_temp(&labels, dir, ".bench-labels", in.planet_w, in.planet_h, 4, &err)) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return 1;
    }
    tb_plan_t *p =
        tb_plan_new(&in.manifest, tb_planet_input_rows(&in), &classes, &labels, threads, &err);
    double t1 = tb_now_s(), c1 = s_cpu_s();
    if (!p) {
        fprintf(stderr, "bench plan: %s\n", err.msg);
        return 1;
    }
    printf("%lld %.4f %.4f %.1f %lld\n", (long long)(in.planet_w * in.planet_h), t1 - t0, c1 - c0,
           s_maxrss_mb(), (long long)tb_plan_summary(p)->provisional_labels);
    tb_plan_destroy(&p);
    tb_raster_unmap(&classes);
    tb_raster_unmap(&labels);
    tb_planet_input_free(&in);
    return 0;
}

/* The demo painting alone, its rows thrown away: "cells seconds cpu_seconds peak_mb". */
static int s_measure_paint(int size)
{
    tb_manifest_t m;
    int64_t h;
    tb_err_t err;
    if (s_manifest(&s_sizes[size], &m, &h, &err) != 0)
        return 1;
    double c0 = s_cpu_s(), t0 = tb_now_s();
    tb_demo_painter_t *p =
        tb_demo_painter_new(TB_DEMO_SEED, &m, m.planet_w, h, 0, s_paint_threads, &err);
    uint8_t *row = p ? malloc((size_t)m.planet_w * 3) : NULL;
    for (int64_t y = 0; row && y < h; y++)
        if (tb_row_source_read(tb_demo_painter_rows(p), 1, row, &err) != 0) {
            fprintf(stderr, "bench plan: %s\n", err.msg);
            return 1;
        }
    free(row);
    tb_demo_painter_destroy(&p);
    printf("%lld %.4f %.4f %.1f\n", (long long)(m.planet_w * h), tb_now_s() - t0, s_cpu_s() - c0,
           s_maxrss_mb());
    return 0;
}

/* Runs this program again with args and reads its one line of figures. */
static int s_child(const char *self, const char *args, double v[5])
{
    char cmd[2 * TB_PATH_MAX];
    snprintf(cmd, sizeof cmd, "'%s' %s", self, args);
    FILE *fp = popen(cmd, "r");
    if (!fp)
        return -1;
    char line[256] = "";
    int got = fgets(line, sizeof line, fp)
                  ? sscanf(line, "%lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4])
                  : 0;
    int status = pclose(fp);
    return got >= 4 && status == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    int threads = 2;
    const char *keep = NULL, *measure = NULL, *sizes = "25km,100km,300km,12500x6076";
    int paint = -1;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--threads") == 0 && k + 1 < argc)
            threads = atoi(argv[++k]);
        else if (strcmp(argv[k], "--keep") == 0 && k + 1 < argc)
            keep = argv[++k];
        else if (strcmp(argv[k], "--sizes") == 0 && k + 1 < argc)
            sizes = argv[++k];
        else if (strcmp(argv[k], "--measure") == 0 && k + 1 < argc)
            measure = argv[++k];
        else if (strcmp(argv[k], "--paint") == 0 && k + 1 < argc)
            paint = atoi(argv[++k]);
        else if (strcmp(argv[k], "--paint-threads") == 0 && k + 1 < argc)
            s_paint_threads = atoi(argv[++k]);
        else {
            fprintf(stderr, "usage: bench_plan [--threads N] [--keep DIR] [--sizes %s]\n",
                    "25km,100km,300km,12500x6076");
            return 2;
        }
    }
    if (threads < 1)
        threads = 1;
    if (measure)
        return s_measure_plan(measure, threads);
    if (paint >= 0 && paint < (int)S_N_SIZES)
        return s_measure_paint(paint);
    char root[TB_PATH_MAX];
    if (keep) {
        snprintf(root, sizeof root, "%s", keep);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(root, sizeof root, "%s/tb-bench-plan-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(root)) {
            fprintf(stderr, "bench plan: mkdtemp %s: %s\n", root, strerror(errno));
            return 1;
        }
    }
    char self[TB_PATH_MAX];
    ssize_t n_self = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n_self <= 0) {
        fprintf(stderr, "bench plan: readlink /proc/self/exe: %s\n", strerror(errno));
        return 1;
    }
    self[n_self] = '\0';
    s_load("before");
    double plan_ns25 = 0, paint_ns25 = 0;
    int failed = 0;
    printf("%-11s %11s | %7s %7s %8s %8s %6s %8s %7s | %7s %8s %6s\n", "planet", "cells", "plan s",
           "cpu s", "ns/cell", "cpu ns", "x25km", "peak MB", "labels", "paint s", "cpu ns",
           "x25km");
    for (size_t k = 0; k < S_N_SIZES; k++) {
        const s_size_t *sz = &s_sizes[k];
        if (!strstr(sizes, sz->name))
            continue;
        char dir[TB_PATH_MAX + 32], args[TB_PATH_MAX + 64];
        snprintf(dir, sizeof dir, "%s/%s", root, sz->name);
        if (s_write_planet(dir, sz) != 0)
            return 1;
        fflush(stdout);
        double pl[5] = {0}, pa[5] = {0};
        snprintf(args, sizeof args, "--measure '%s' --threads %d", dir, threads);
        if (s_child(self, args, pl) != 0) {
            failed = 1;
            continue;
        }
        snprintf(args, sizeof args, "--paint %zu --paint-threads %d", k, threads);
        if (s_child(self, args, pa) != 0) {
            failed = 1;
            continue;
        }
        double plan_ns = pl[2] / pl[0] * 1e9, paint_ns = pa[2] / pa[0] * 1e9;
        if (k == 0) {
            plan_ns25 = plan_ns;
            paint_ns25 = paint_ns;
        }
        printf("%-11s %11.0f | %7.2f %7.2f %8.1f %8.1f %6.2f %8.0f %7.0f | %7.2f %8.1f %6.2f\n",
               sz->name, pl[0], pl[1], pl[2], pl[1] / pl[0] * 1e9, plan_ns,
               plan_ns25 > 0 ? plan_ns / plan_ns25 : 0, pl[3], pl[4], pa[1], paint_ns,
               paint_ns25 > 0 ? paint_ns / paint_ns25 : 0);
        fflush(stdout);
    }
    printf("plan: the PNG decoded row by row and the plan on %d thread%s, its rasters in mapped "
           "files (as terrain plan does; DESIGN.md's budget for 12500x6076: 2 s); paint: the "
           "demo painting alone on as many threads (what terrain plan adds with no manifest). "
           "ns/cell from the wall clock, cpu ns and the ratios to 25 km from CPU seconds (user + "
           "system)\n",
           threads, threads == 1 ? "" : "s");
    s_load("after");
    if (!keep) {
        char cmd[TB_PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0)
            fprintf(stderr, "bench plan: could not remove %s\n", root);
    }
    return failed;
}
