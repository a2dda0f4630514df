/* scripts/bench coast: the coastal pass per cell (docs/coast.md: target 20 ns a cell, predecessor
 * 26) and its peak memory (target 80 bytes a cell, the predecessor 8.3 GB at 76 M cells, 109).
 *
 * A generated planet at 8 m, by default the predecessor's 12500 x 6076 (100 km round): land where a
 * wrapping fBm stands above a cut (about 35 % land, coastlines at every scale, bays), heights
 * rising inland to a few hundred metres, the sea painted 60 m near the coast and in a checkerboard
 * of 4 km squares, 900 m elsewhere, and a river mouth every 32 rows where a row first meets the
 * sea. The pass runs on one thread (tb_coast_run, as the coast job runs it; --threads N gives it
 * N, over which every phase splits with the same bits), twice: cold, its work memory new to the
 * process as in a job, and at once again warm, on the pages the first pass freed, from the same
 * input (the two must give the same bits). For each: the wall time per cell, the CPU time of the
 * calling thread and of all threads, all threads' CPU split into user space and kernel (on a VM
 * whose host backs fresh memory slowly the kernel's share is the first touch), the same per
 * phase; then what the first touch cost (cold minus warm over the memory the pass took), the
 * process's peak resident memory (getrusage maxrss of the cold pass: the planet's heights and
 * classes, the pass's maps and its workspace; the bench's copy of the heights taken off) per cell,
 * and an FNV-1a hash of the heights, moved and exposure maps (two builds with equal hashes made
 * the same bits). One run; never a timed test.
 *
 * With --budget GB it then runs the pass in blocks (jobs/coast/blocks.h, docs/coast.md "Blocks") on
 * the same input, the layout planned for jobs of at most that many bytes, every block through the
 * job kind coast_block as a worker runs it: the layout, the rounds, the wall and CPU time per cell
 * of interior and against the whole pass (the warm one), the output hash (which must be the whole
 * pass's, or the bench fails), and the peak resident memory of the largest block's job run alone
 * in a process of its own (this program with --run-block on its spec bytes, its maxrss from
 * wait4) against the planner's estimate. --no-whole skips the whole pass (a planet too large for
 * one job: there is no hash to compare then); --halo N runs the planned grid of blocks with a halo
 * of N cells instead of the proved one (to measure where a smaller one stops giving the bits).
 *
 * Usage: bench_coast [--size WxH] [--seed N] [--threads N] [--maps DIR]   (DIR: map_coast.png,
 * map_exposure.png) [--budget GB [--no-whole]]
 *        bench_coast --spec FILE [--threads N] [--maps DIR]   (a coast job's spec bytes: the pass
 * on a baked planet, its block and map_coast.png)
 *        bench_coast --run-block FILE [--threads N]   (a coast_block job's spec bytes, run as the
 * job kind runs them; prints its peak resident memory)
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/log.h"
#include "common/noise.h"
#include "coordinator/maps/coast_maps.h"
#include "jobs/coast/blocks.h"
#include "jobs/coast/coast.h"
#include "jobs/job.h"

#define S_CELL_M 8.0
#define S_TARGET_BYTES 80.0

static double s_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* FNV-1a over bytes: the output hash, so two builds can be compared bit for bit. */
static uint64_t s_hash(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The output hash the bench prints: FNV-1a over the heights, moved and exposure maps. */
static uint64_t s_outputs_fnv(const float *height, const float *moved, const uint16_t *exposure,
                              size_t cells)
{
    uint64_t h = s_hash(14695981039346656037ull, height, cells * sizeof *height);
    h = s_hash(h, moved, cells * sizeof *moved);
    return s_hash(h, exposure, cells * sizeof *exposure);
}

static double s_maxrss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0;
}

/* --spec FILE: a coast job's spec bytes (as the bake dispatches them), run as the job runs it, with
 * its block, hash, time and maps: the pass on a real planet without baking it again. */
static int s_run_spec(const char *path, int threads, const char *maps_dir)
{
    tb_err_t err;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "bench_coast: cannot open %s\n", path);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *bytes = n > 0 ? malloc((size_t)n) : NULL;
    if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        fprintf(stderr, "bench_coast: cannot read %s\n", path);
        return 2;
    }
    fclose(f);
    tb_coast_spec_owned_t spec;
    if (tb_coast_spec_decode(bytes, (size_t)n, &spec, &err) != 0) {
        fprintf(stderr, "bench_coast: %s: %s\n", path, err.msg);
        return 2;
    }
    free(bytes);
    const tb_coast_spec_t *sp = &spec.spec;
    size_t cells = (size_t)sp->w * (size_t)sp->h;
    float *height = malloc(cells * sizeof *height), *moved = malloc(cells * sizeof *moved);
    uint16_t *exposure = malloc(cells * sizeof *exposure);
    if (!height || !moved || !exposure) {
        fprintf(stderr, "bench_coast: out of memory\n");
        return 1;
    }
    memcpy(height, sp->height_m, cells * sizeof *height);
    tb_coast_planet_t planet = {sp->w,       sp->h,       sp->cell_m, height,
                                sp->classes, &sp->legend, sp->mouths, sp->n_mouths};
    tb_coast_maps_t maps = {moved, exposure, {0}};
    tb_coast_debug_t phases = {0};
    double w0 = tb_now_s();
    if (tb_coast_run(&sp->params, &planet, &maps, threads, &phases, NULL, NULL, &err) != 0) {
        fprintf(stderr, "bench_coast: %s\n", err.msg);
        return 1;
    }
    double wall = tb_now_s() - w0;
    char block[1024];
    tb_coast_stats_format(&maps.stats, block, sizeof block);
    printf("bench coast: the spec %s, %lld x %lld at %g m, %zu mouths\n%s", path, (long long)sp->w,
           (long long)sp->h, sp->cell_m, sp->n_mouths, block);
    printf("budget relative error %.2e; unplaced: %.3f Mm3 no shallows, %.3f full, %.3f rounding\n",
           tb_coast_budget_error(&maps.stats), maps.stats.unplaced_no_shallows_m3 / 1e6,
           maps.stats.unplaced_full_m3 / 1e6, maps.stats.unplaced_rounding_m3 / 1e6);
    uint64_t hash = s_outputs_fnv(height, moved, exposure, cells);
    printf("output hash %016llx; %.2f s wall on %d thread%s\n", (unsigned long long)hash, wall,
           threads, threads > 1 ? "s" : "");
    if (maps_dir) {
        uint8_t *land_mask = malloc(cells);
        for (size_t i = 0; land_mask && i < cells; i++)
            land_mask[i] = !sp->legend.ocean[sp->classes[i]];
        tb_image_t img = {0};
        char out[4096];
        snprintf(out, sizeof out, "%s/map_coast.png", maps_dir);
        if (!land_mask ||
            tb_map_coast(moved, height, land_mask, sp->w, sp->h, sp->params.break_depth_m, 4096,
                         &img, NULL, &err) != 0 ||
            tb_png_write(out, &img, 6, &err) != 0)
            fprintf(stderr, "bench_coast: %s: %s\n", out, err.msg);
        tb_image_free(&img);
        free(land_mask);
    }
    free(height);
    free(moved);
    free(exposure);
    tb_coast_spec_free(&spec);
    return 0;
}

/* XXH3 of the three outputs: quick, to compare the two passes' bits between them. */
static uint64_t s_outputs_xxh3(const float *height, const float *moved, const uint16_t *exposure,
                               size_t cells)
{
    uint64_t v[3] = {tb_xxh3(height, cells * sizeof *height), tb_xxh3(moved, cells * sizeof *moved),
                     tb_xxh3(exposure, cells * sizeof *exposure)};
    return tb_xxh3(v, sizeof v);
}

/* One timed pass: wall, the calling thread's CPU, all threads' CPU, and the phases. */
typedef struct {
    double wall, cpu, pcpu, user, sys;
    tb_coast_debug_t phases;
} s_timed_t;

/* The process's user and system CPU seconds (all threads). */
static void s_user_sys(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec;
    *sys = (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static double s_process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int s_timed_pass(const tb_coast_params_t *p, tb_coast_planet_t *planet,
                        tb_coast_maps_t *maps, int threads, s_timed_t *t, tb_err_t *err)
{
    memset(t, 0, sizeof *t);
    double u0, s0;
    s_user_sys(&u0, &s0);
    double c0 = s_cpu_s(), w0 = tb_now_s(), p0 = s_process_cpu_s();
    if (tb_coast_run(p, planet, maps, threads, &t->phases, NULL, NULL, err) != 0)
        return -1;
    s_user_sys(&t->user, &t->sys);
    t->user -= u0;
    t->sys -= s0;
    t->cpu = s_cpu_s() - c0;
    t->wall = tb_now_s() - w0;
    t->pcpu = s_process_cpu_s() - p0;
    return 0;
}

static void s_print_timed(const s_timed_t *t, int threads, size_t cells, bool target)
{
    const char *s = threads > 1 ? "s" : "";
    double n = (double)cells;
    printf("  %d thread%s: %.2f s wall, %.2f s CPU of the calling thread, %.2f s CPU of all "
           "threads\n",
           threads, s, t->wall, t->cpu, t->pcpu);
    printf("  per cell, %d thread%s: %.1f ns wall%s, %.1f ns CPU of the calling thread, %.1f ns "
           "CPU of all threads\n",
           threads, s, 1e9 * t->wall / n, target ? " (target 20, predecessor 26)" : "",
           1e9 * t->cpu / n, 1e9 * t->pcpu / n);
    printf("  of all threads' CPU, %.1f ns a cell in user space and %.1f in the kernel (mostly "
           "page faults)\n",
           1e9 * t->user / n, 1e9 * t->sys / n);
    printf("  phases, ns a cell of wall:");
    for (int k = 0; k < TB_COAST_PHASES; k++)
        printf(" %s %.1f", tb_coast_phase_names[k], 1e9 * t->phases.phase_wall_s[k] / n);
    printf("\n  phases, ns a cell of the calling thread's CPU:");
    for (int k = 0; k < TB_COAST_PHASES; k++)
        printf(" %s %.1f", tb_coast_phase_names[k], 1e9 * t->phases.phase_cpu_s[k] / n);
    printf("\n");
}

static void *s_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *bytes = len > 0 ? malloc((size_t)len) : NULL;
    if (bytes && fread(bytes, 1, (size_t)len, f) != (size_t)len) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    *n = bytes ? (size_t)len : 0;
    return bytes;
}

/* --run-block FILE: one coast_block job from its spec bytes, as a worker runs it (tb_job_run, the
 * kind's check), in this process alone; its peak resident memory is what the parent measures. */
static int s_run_block(const char *path, int threads)
{
    size_t n;
    void *spec = s_read_file(path, &n);
    if (!spec) {
        fprintf(stderr, "bench_coast: cannot read %s\n", path);
        return 2;
    }
    tb_err_t err;
    tb_pool_t *pool = tb_pool_new(1, &err);
    tb_job_ctx_t ctx = {threads, pool, NULL, NULL};
    tb_job_output_t out;
    double w0 = tb_now_s();
    if (!pool || tb_job_run("coast_block", spec, n, &ctx, &out, &err) != 0 ||
        tb_job_check_result(tb_job_find("coast_block"), spec, n, out.data, out.bytes, &err) != 0) {
        fprintf(stderr, "bench_coast: %s\n", err.msg);
        return 1;
    }
    printf("block job: %zu spec bytes, %zu result bytes, %.2f s wall, peak %.0f MB\n", n, out.bytes,
           tb_now_s() - w0, s_maxrss_bytes() / 1e6);
    tb_job_output_free(&out);
    tb_pool_destroy(&pool);
    free(spec);
    return 0;
}

/* The peak resident bytes of the largest block's job run alone: its spec into a file, this program
 * on it with --run-block in a child, the child's maxrss from wait4 (0 when it failed). */
static double s_block_peak(const char *self, const tb_coast_layout_t *l, size_t block,
                           const tb_coast_planet_t *pl, const tb_coast_params_t *p,
                           const tb_coast_share_t *share, int threads, tb_err_t *err)
{
    void *spec;
    size_t n;
    tb_coast_view_t view = {pl->height_m, pl->classes, (size_t)pl->w, 0};
    if (tb_coast_block_cut(l, block, &view, pl->mouths, pl->n_mouths, p, pl->legend, share, false,
                           &spec, &n, err) != 0)
        return 0;
    char path[] = "/tmp/bench_coast_block_XXXXXX";
    int fd = mkstemp(path);
    bool ok = fd >= 0 && write(fd, spec, n) == (ssize_t)n;
    if (fd >= 0)
        close(fd);
    free(spec);
    if (!ok) {
        unlink(path);
        return 0;
    }
    char th[16];
    snprintf(th, sizeof th, "%d", threads);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "--run-block", path, "--threads", th, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    bool waited = pid > 0 && wait4(pid, &status, 0, &ru) == pid;
    unlink(path);
    if (!waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 0;
    return (double)ru.ru_maxrss * 1024.0;
}

/* The pass in blocks on the same input (height0: the heights as generated), against the whole
 * pass's hash (0: none to compare) and warm wall time per cell. Returns the exit status. */
static int s_blocked(const char *self, const tb_coast_params_t *p, const float *height0,
                     tb_coast_planet_t *pl, tb_coast_maps_t *maps, int threads, double budget_gb,
                     int64_t halo_cells, uint64_t whole_hash, double whole_ns, double whole_cpu_ns,
                     double cold_ns, double cold_cpu_ns)
{
    tb_err_t err;
    size_t cells = (size_t)pl->w * (size_t)pl->h;
    tb_coast_halo_t halo;
    tb_coast_halo(p, pl->cell_m, &halo);
    tb_coast_layout_t l;
    if (tb_coast_layout_plan(pl->w, pl->h, pl->cell_m, p, (size_t)(budget_gb * 1e9), &l, &err) !=
        0) {
        fprintf(stderr, "bench_coast: %s\n", err.msg);
        return 1;
    }
    if (halo_cells > 0) { /* the planned grid with another halo: what a smaller one gives */
        int64_t nx = l.nx, ny = l.ny;
        tb_coast_layout_free(&l);
        if (tb_coast_layout_grid(pl->w, pl->h, pl->cell_m, halo_cells, nx, ny, &l, &err) != 0) {
            fprintf(stderr, "bench_coast: %s\n", err.msg);
            return 1;
        }
        printf("blocks: the halo forced to %lld cells (not the proved one)\n",
               (long long)halo_cells);
    }
    if (pl->height_m != height0)
        memcpy(pl->height_m, height0, cells * sizeof *pl->height_m);
    printf("blocks: budget %.2f GB a job, halo %lld cells (drifts %lld + %lld, carry %lld, "
           "waterline %lld, fetch %lld, distances %lld; stretch %lld), %lld x %lld blocks, "
           "windows %.2f times the planet's cells, largest job estimated %.0f MB\n",
           budget_gb, (long long)halo.total, (long long)halo.second_drift,
           (long long)halo.first_drift, (long long)halo.carry, (long long)halo.waterline,
           (long long)halo.fetch, (long long)halo.distances, (long long)halo.stretch,
           (long long)l.nx, (long long)l.ny, l.window_cells / (double)cells,
           (double)l.peak_bytes / 1e6);
    /* the largest block's job alone, in its own process */
    size_t big = 0;
    for (size_t b = 1; b < l.n; b++)
        if (l.blocks[b].peak_bytes > l.blocks[big].peak_bytes)
            big = b;
    /* cut from the planet's input, the heights as generated (a full job: its bits any) */
    tb_coast_planet_t in = *pl;
    in.height_m = (float *)height0;
    const tb_coast_share_t any = {{30, 37}};
    double peak = s_block_peak(self, &l, big, &in, p, &any, threads, &err);
    const tb_coast_block_t *bb = &l.blocks[big];
    printf("blocks: the largest job (block %zu, window %lld x %lld, interior %lld x %lld) peaked "
           "at %.0f MB resident run alone, %.1f bytes a cell of window; estimated %.0f MB\n",
           big, (long long)bb->window.w, (long long)bb->window.h, (long long)bb->interior.w,
           (long long)bb->interior.h, peak / 1e6,
           peak / ((double)bb->window.w * (double)bb->window.h), (double)bb->peak_bytes / 1e6);
    tb_coast_blocks_report_t rep;
    double u0, s0, u1, s1;
    s_user_sys(&u0, &s0);
    double w0 = tb_now_s(), c0 = s_process_cpu_s();
    if (tb_coast_blocks_run(p, pl, maps, &l, NULL, threads, &rep, &err) != 0) {
        fprintf(stderr, "bench_coast: blocks: %s\n", err.msg);
        tb_coast_layout_free(&l);
        return 1;
    }
    double wall = tb_now_s() - w0, cpu = s_process_cpu_s() - c0;
    s_user_sys(&u1, &s1);
    uint64_t hash = s_outputs_fnv(pl->height_m, maps->moved_m, maps->exposure, cells);
    char block[1024];
    tb_coast_stats_format(&maps->stats, block, sizeof block);
    printf("%s", block);
    printf("blocks: %d rounds (%s), share bits %d / %d; largest spec %.0f MB, result %.0f MB\n",
           rep.rounds, rep.probed ? "a probe, then full" : "full", rep.share.bits[0],
           rep.share.bits[1], (double)rep.largest_spec_bytes / 1e6,
           (double)rep.largest_result_bytes / 1e6);
    double n = (double)cells;
    printf("blocks: %.2f s wall, %.2f s CPU of all threads; per cell of the planet (the "
           "interiors): %.1f ns wall, %.1f ns CPU (%.1f user, %.1f kernel)\n",
           wall, cpu, 1e9 * wall / n, 1e9 * cpu / n, 1e9 * (u1 - u0) / n, 1e9 * (s1 - s0) / n);
    if (whole_ns > 0)
        printf("blocks against the whole pass: %.2f times the wall time and %.2f times the CPU "
               "of the warm pass, %.2f and %.2f of the cold one (a job's memory is new to it)\n",
               1e9 * wall / n / whole_ns, 1e9 * cpu / n / whole_cpu_ns, 1e9 * wall / n / cold_ns,
               1e9 * cpu / n / cold_cpu_ns);
    printf("blocks: output hash %016llx%s\n", (unsigned long long)hash,
           whole_hash ? (hash == whole_hash ? " (the whole pass's)" : " (NOT the whole pass's)")
                      : "");
    tb_coast_layout_free(&l);
    if (whole_hash && hash != whole_hash && halo_cells <= 0) {
        fprintf(stderr, "bench_coast: the blocks did not give the whole pass's bits\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long long w = 12500, h = 6076, seed = 7;
    int threads = 1;
    double budget_gb = 0;
    long long halo_cells = 0;
    bool no_whole = false;
    const char *maps_dir = NULL, *spec_path = NULL, *block_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
            sscanf(argv[i + 1], "%lldx%lld", &w, &h) == 2 && w >= 64 && h >= 16 &&
            w * h <= TB_COAST_MAX_CELLS) {
            i++;
        } else if (strcmp(argv[i], "--maps") == 0 && i + 1 < argc) {
            maps_dir = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
                   atoi(argv[i + 1]) <= 16) {
            threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--spec") == 0 && i + 1 < argc) {
            spec_path = argv[++i];
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc && atof(argv[i + 1]) > 0) {
            budget_gb = atof(argv[++i]);
        } else if (strcmp(argv[i], "--halo") == 0 && i + 1 < argc && atoll(argv[i + 1]) > 0) {
            halo_cells = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--no-whole") == 0) {
            no_whole = true;
        } else if (strcmp(argv[i], "--run-block") == 0 && i + 1 < argc) {
            block_path = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: bench_coast [--size WxH (at least 64x16)] [--seed N] "
                    "[--threads 1..16] [--maps DIR] [--budget GB [--no-whole] [--halo N]] [--spec "
                    "FILE] [--run-block FILE]\n");
            return 2;
        }
    }
    if (block_path)
        return s_run_block(block_path, threads);
    if (spec_path)
        return s_run_spec(spec_path, threads, maps_dir);
    if (no_whole && budget_gb <= 0) {
        fprintf(stderr, "bench_coast: --no-whole needs --budget\n");
        return 2;
    }
    size_t cells = (size_t)w * (size_t)h;
    double circ = (double)w * S_CELL_M;
    tb_err_t err;
    tb_noise_t land;
    if (tb_noise_init(&land, (uint64_t)seed, TB_SALT_TEST, circ, circ / 12, &err) != 0) {
        fprintf(stderr, "bench_coast: %s\n", err.msg);
        return 1;
    }
    /* as the coast job allocates them (tb_malloc: huge pages for a large grid) */
    float *height = tb_malloc(cells * sizeof *height, "bench heights", NULL);
    uint8_t *cls = tb_malloc(cells, "bench classes", NULL);
    if (!height || !cls) {
        fprintf(stderr, "bench_coast: out of memory for %zu cells\n", cells);
        return 1;
    }
    double t0 = tb_now_s();
    /* the fBm on a lattice of every 4th cell, interpolated: generating is not what is measured */
    long long cw = w / 4 + 1, ch = h / 4 + 2;
    float *coarse = malloc((size_t)cw * (size_t)ch * sizeof *coarse);
    if (!coarse) {
        fprintf(stderr, "bench_coast: out of memory for %zu cells\n", cells);
        return 1;
    }
    for (long long y = 0; y < ch; y++)
        for (long long x = 0; x < cw; x++)
            coarse[y * cw + x] = (float)tb_noise_fbm(&land, (double)(4 * x) * S_CELL_M,
                                                     (double)(4 * y) * S_CELL_M, 5, 0.5);
    int64_t land_cells = 0;
    for (long long y = 0; y < h; y++)
        for (long long x = 0; x < w; x++) {
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            long long cx = x / 4, cy = y / 4, cx1 = (cx + 1) % cw;
            double fx = (double)(x % 4) / 4, fy = (double)(y % 4) / 4;
            double f =
                (1 - fy) * ((1 - fx) * coarse[cy * cw + cx] + fx * coarse[cy * cw + cx1]) +
                fy * ((1 - fx) * coarse[(cy + 1) * cw + cx] + fx * coarse[(cy + 1) * cw + cx1]);
            /* the poles are sea: the fBm is pulled down within 5 % of the Y edges */
            double edge = fmin((double)y, (double)(h - 1 - y)) / (0.05 * (double)h);
            double v = f - 0.12 - 0.4 * fmax(0, 1 - edge);
            if (v > 0) {
                cls[i] = 0;
                height[i] = (float)(2 + 900 * v * v + 40 * v);
                land_cells++;
            } else {
                bool sh = v > -0.05 || ((x / 512 + y / 512) % 2 == 0);
                cls[i] = sh ? 1 : 2;
                height[i] = sh ? -60.0f : -900.0f;
            }
        }
    free(coarse);
    /* river mouths: every 32nd row, the first sea cell after land */
    size_t n_mouths = 0, cap = (size_t)(h / 32 + 1) * 64;
    tb_coast_mouth_t *mouths = malloc(cap * sizeof *mouths);
    for (long long y = 16; y < h && mouths; y += 32)
        for (long long x = 1; x < w && n_mouths < cap; x++) {
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            if (cls[i] != 0 && cls[i - 1] == 0 && n_mouths < cap)
                mouths[n_mouths++] = (tb_coast_mouth_t){x, y, 2e6 + 1e5 * (double)(x % 97)};
        }
    double gen_s = tb_now_s() - t0;
    tb_coast_classes_t legend = {.n = 3};
    legend.ocean[1] = legend.ocean[2] = true;
    legend.depth_m[1] = 60;
    legend.depth_m[2] = 900;
    tb_coast_params_t p;
    tb_coast_params_defaults(&p);
    float *moved = tb_malloc(cells * sizeof *moved, "bench moved map", NULL);
    uint16_t *exposure = tb_malloc(cells * sizeof *exposure, "bench exposure map", NULL);
    if (!moved || !exposure || !mouths) {
        fprintf(stderr, "bench_coast: out of memory for the maps\n");
        return 1;
    }
    tb_coast_planet_t planet = {w, h, S_CELL_M, height, cls, &legend, mouths, n_mouths};
    tb_coast_maps_t maps = {moved, exposure, {0}};
    /* the heights as generated, to give the warm pass the same input (the pass rewrites them);
     * resident from here on, so it is taken off the peak below */
    float *height0 =
        no_whole ? height : tb_malloc(cells * sizeof *height0, "bench heights copy", NULL);
    if (!height0) {
        fprintf(stderr, "bench_coast: out of memory for the heights' copy\n");
        return 1;
    }
    if (height0 != height)
        memcpy(height0, height, cells * sizeof *height0);
    double copy_bytes = height0 != height ? (double)(cells * sizeof *height0) : 0;
    double rss_before = s_maxrss_bytes() - copy_bytes;
    printf("bench coast: planet %lld x %lld at %g m (%.1f M cells, %.0f%% land, %zu mouths), "
           "generated in %.1f s\n",
           w, h, S_CELL_M, (double)cells / 1e6, 100.0 * (double)land_cells / (double)cells,
           n_mouths, gen_s);
    uint64_t hash = 0;
    s_timed_t cold = {0}, warm = {0};
    if (!no_whole) {
        if (s_timed_pass(&p, &planet, &maps, threads, &cold, &err) != 0) {
            fprintf(stderr, "bench_coast: %s\n", err.msg);
            return 1;
        }
        double rss = s_maxrss_bytes() - copy_bytes;
        /* a quick hash of the cold pass's outputs and at once the warm pass (this kind of VM hands
         * freed memory back to its host about two seconds after a free: docs/coast.md, "Cost") */
        uint64_t quick = s_outputs_xxh3(height, moved, exposure, cells);
        char block[1024];
        tb_coast_stats_format(&maps.stats, block, sizeof block);
        double budget_error = tb_coast_budget_error(&maps.stats);
        memcpy(height, height0, cells * sizeof *height0);
        if (budget_gb <= 0) { /* the blocks cut their specs from it */
            free(height0);
            height0 = NULL;
        }
        if (s_timed_pass(&p, &planet, &maps, threads, &warm, &err) != 0) {
            fprintf(stderr, "bench_coast: %s\n", err.msg);
            return 1;
        }
        if (s_outputs_xxh3(height, moved, exposure, cells) != quick) {
            fprintf(stderr, "bench_coast: the second pass did not give the first one's bits\n");
            return 1;
        }
        hash = s_outputs_fnv(height, moved, exposure, cells);
        printf("%s", block);
        printf("budget relative error %.2e\n", budget_error);
        printf("output hash %016llx (heights, moved, exposure; equal hashes: the same bits)\n",
               (unsigned long long)hash);
        double fresh = rss - rss_before;
        printf("cold pass (its %.0f MB of work memory new to the process, as in a job):\n",
               fresh / 1e6);
        s_print_timed(&cold, threads, cells, false);
        printf(
            "warm pass (the same pass again at once, on the pages the first freed; same hash):\n");
        s_print_timed(&warm, threads, cells, true);
        if (cold.wall > warm.wall && fresh > 0)
            printf("first touch: the cold pass took %.2f s longer for %.0f MB, %.2f GB/s\n",
                   cold.wall - warm.wall, fresh / 1e6, fresh / 1e9 / (cold.wall - warm.wall));
        printf("peak memory: %.0f MB, %.1f bytes a cell (target %.0f, predecessor 109); "
               "before the pass %.1f bytes a cell (the planet's heights and classes)\n",
               rss / 1e6, rss / (double)cells, S_TARGET_BYTES, rss_before / (double)cells);
        if (maps_dir) {
            uint8_t *land_mask = malloc(cells);
            for (size_t i = 0; land_mask && i < cells; i++)
                land_mask[i] = cls[i] == 0;
            tb_image_t img = {0};
            char path[4096];
            snprintf(path, sizeof path, "%s/map_coast.png", maps_dir);
            if (!land_mask ||
                tb_map_coast(moved, height, land_mask, w, h, p.break_depth_m, 4096, &img, NULL,
                             &err) != 0 ||
                tb_png_write(path, &img, 6, &err) != 0)
                fprintf(stderr, "bench_coast: %s: %s\n", path, err.msg);
            tb_image_free(&img);
            snprintf(path, sizeof path, "%s/map_exposure.png", maps_dir);
            if (!land_mask || tb_map_exposure(exposure, land_mask, w, h, 4096, &img, &err) != 0 ||
                tb_png_write(path, &img, 6, &err) != 0)
                fprintf(stderr, "bench_coast: %s: %s\n", path, err.msg);
            tb_image_free(&img);
            free(land_mask);
        }
    }
    int status = 0;
    if (budget_gb > 0)
        status = s_blocked(argv[0], &p, height0, &planet, &maps, threads, budget_gb, halo_cells,
                           hash, no_whole ? 0 : 1e9 * warm.wall / (double)cells,
                           no_whole ? 0 : 1e9 * warm.pcpu / (double)cells,
                           no_whole ? 0 : 1e9 * cold.wall / (double)cells,
                           no_whole ? 0 : 1e9 * cold.pcpu / (double)cells);
    if (height0 != height)
        free(height0);
    free(height);
    free(cls);
    free(moved);
    free(exposure);
    free(mouths);
    return status;
}
