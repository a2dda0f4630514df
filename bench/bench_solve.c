/* bench_solve: ns per cell-step of the geology step, split by phase, at one or more thread counts
 * (issues 3 and 4).
 *
 * The grid (default): a square box (2048 x 2048) with every cell solved except its ring, which is
 * held at sea level; uniform uplift; the manifest's default physics (MFD on, hillslope and clamp
 * on). The initial surface is 0..1 m of world-hashed noise. After a warm-up (50 steps by default)
 * it times a number of steps at each thread count and prints per-phase ns per cell-step (mean,
 * and the median a neighbour's burst on a shared machine does not move), then the same with D8
 * only (mfd_exponent 0). --demo-region N instead solves region N of the built-in demo planet
 * (jobs/plan, jobs/uplift: its uplift and erodibility, held ocean, a flat start as in a bake);
 * --circumference-km KM makes that the demo planet of KM km (25 by default; 100 is the size a
 * render farm bakes, whose largest region, region 3, is a 19 M-cell box).
 *
 * The thread counts run in turns of 5 steps (each from the same warmed-up heights), so a burst of
 * other work on the shared machine lands on all of them alike.
 *
 * For each thread count after the first it prints the speedup over the first, the share of the
 * time spent in phases that run on one thread (the sink resolution) and the share of thread time
 * the band walks spent waiting for each other; once per configuration the Amdahl bound of the
 * landmass for a split by drainage basin (land cells over the cells of the largest D8 basin at the
 * last step) and whether every thread count gave the same bits (heights and drainage area).
 *
 * --sizes N,N.. runs the grid at each box edge in turn (e.g. 2048,4472: 4.2 M and 20.0 M cells)
 * and prints each size's total per land cell-step over the first's, by thread count (median).
 *
 * --load stream|spin runs the timed steps beside one other single-thread process that the bench
 * starts itself and kills after them: `stream`, a loop reading and writing 256 MiB of floats (a
 * neighbour that competes for the memory system, like a second solve or a bake's coordinator);
 * `spin`, an integer loop that touches no memory (a neighbour that competes for a core only).
 *
 * Each thread count's solver first runs one untimed step from a copy of the warmed-up heights, so
 * what it learns from call to call (the sinks' lakes budget) is trained as in a run (s_timed).
 *
 * --counts N: after the timed run, N more steps from the same warmed-up heights (the state cache;
 * a temporary one when --state is not given; after the same priming step, which is not counted)
 * on one thread under valgrind's callgrind, and a row of instructions per land cell-step for each
 * phase (the inclusive instructions of each phase's function; route is the step's remainder: the
 * uplift, the router and the step's bookkeeping).
 * Counts do not move with the machine's load, as times do; they are one thread's (a phase split
 * over two threads executes about as many instructions in all). Needs valgrind (Debian's
 * package); N steps under callgrind take about 50 times as long as N native steps.
 *
 *   scripts/bench solve [--threads 1,2] [--size N | --sizes N,N..] [--warmup N] [--steps N]
 *                       [--uplift-mm-yr U] [--seed S] [--bound cell|box] [--only mfd|d8]
 *                       [--demo-region N [--circumference-km KM]] [--state PATH]
 *                       [--no-flood-compare]
 *                       [--load stream|spin] [--counts N]
 *
 * --state PATH caches the warmed-up heights in PATH.<parameters> (development: a long warm-up is
 * then paid once). Timing is wall clock; the machine is shared, so run it twice before believing
 * a difference under 10 %, and read `uptime` first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/args.h"
#include "common/hash.h"
#include "common/manifest.h"
#include "common/pool.h"
#include "jobs/geology/geology.h"
#include "jobs/geology/receivers.h"
#include "jobs/geology/sinks.h"
#include "jobs/geology/topology.h"
#include "jobs/plan/demo.h"
#include "jobs/plan/plan.h"
#include "jobs/uplift/uplift.h"

#define S_MAX_T 16
#define S_BLOCK 5 /* steps a thread count runs in one turn */
#define S_PHASES 7

typedef struct {
    int64_t size, warmup, steps;
    double uplift_mm_yr;
    int64_t seed;
    const char *bound, *only, *state, *threads_text;
    int64_t demo_region;
    bool no_flood_compare;
    int64_t threads[S_MAX_T];
    int nthreads;
    const char *load, *sizes_text;
    int64_t counts;
    int64_t sizes[S_MAX_T];
    int nsizes;
    double circumference_km; /* the demo planet's (--demo-region) */
} s_opts_t;

/* One landmass to solve: box, mask, U, K and the initial heights. */
typedef struct {
    tb_frame_t box;
    size_t cells, land;
    uint8_t *mask;
    float *u, *k, *h0;
    tb_solve_params_t p;
    uint64_t seed;
    char what[160];
} s_case_t;

static int s_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void s_case_free(s_case_t *c)
{
    free(c->mask);
    free(c->u);
    free(c->k);
    free(c->h0);
}

/* The benchmark grid: a square box of noise, solved but for its ring. */
static int s_grid_case(const s_opts_t *o, s_case_t *c, tb_err_t *err)
{
    int64_t n = o->size;
    if (tb_frame_make(&c->box, 2 * n, 2 * n, 8, n / 2, n / 2, n, n, err) != 0)
        return -1;
    tb_manifest_t m;
    tb_manifest_defaults(&m);
    c->p = m.solve;
    c->seed = (uint64_t)o->seed;
    c->cells = (size_t)(n * n);
    /* as a worker allocates a region's grids (jobs/region.c): tb_malloc's huge pages */
    c->mask = tb_malloc(c->cells, "bench mask", NULL);
    c->u = tb_malloc(c->cells * sizeof(float), "bench uplift", NULL);
    c->k = tb_malloc(c->cells * sizeof(float), "bench erodibility", NULL);
    c->h0 = tb_malloc(c->cells * sizeof(float), "bench heights", NULL);
    if (!c->mask || !c->u || !c->k || !c->h0)
        return tb_err_set(err, TB_E_NOMEM, "out of memory");
    uint64_t key = tb_hash_key((uint64_t)o->seed, TB_SALT_TEST, 0);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            size_t x = tb_idx(n, i, j);
            c->mask[x] = 1;
            c->u[x] = (float)(o->uplift_mm_yr * 1e-3);
            c->k[x] = (float)c->p.k;
            c->h0[x] = (float)tb_hash_unit(
                tb_hash_cell(key, tb_frame_lattice_x(&c->box, i), tb_frame_lattice_y(&c->box, j)));
        }
    c->land = (size_t)((n - 2) * (n - 2));
    snprintf(c->what, sizeof c->what, "%lld x %lld cells, 8 m, U %.3g mm/yr uniform, noise start",
             (long long)n, (long long)n, o->uplift_mm_yr);
    return 0;
}

/* Region `id` of the built-in demo planet, built as a region job builds it (jobs/plan for the box
 * and mask, jobs/uplift for U and K), from a flat start. */
static int s_demo_case(const s_opts_t *o, s_case_t *c, tb_err_t *err)
{
    tb_manifest_t m;
    tb_image_t painting = {0};
    if (tb_demo_planet(TB_DEMO_SEED, o->circumference_km, &m, &painting, err) != 0)
        return -1;
    tb_plan_t *plan = tb_plan_new_image(&m, &painting, tb_pool_default_threads(), err);
    tb_image_free(&painting);
    if (!plan)
        return -1;
    int rc = -1;
    tb_grid_t *classes = NULL, *mask = NULL;
    tb_uplift_probes_t probes;
    const tb_manifest_t *pm = tb_plan_manifest(plan);
    if (o->demo_region < 1 || o->demo_region > tb_plan_region_count(plan)) {
        tb_err_set(err, TB_E_INVALID, "--demo-region %lld: the %g km demo planet has regions 1..%d",
                   (long long)o->demo_region, o->circumference_km, tb_plan_region_count(plan));
        goto done;
    }
    const tb_plan_region_t *reg = tb_plan_region(plan, (int)o->demo_region - 1);
    if (tb_uplift_probes_compute(pm, &probes, err) != 0 ||
        tb_plan_region_grids(plan, (int)o->demo_region - 1, &classes, &mask, err) != 0)
        goto done;
    c->box = reg->box;
    c->cells = (size_t)(c->box.w * c->box.h);
    c->p = pm->solve;
    c->seed = pm->seed;
    c->mask = tb_malloc(c->cells, "bench mask", NULL);
    c->u = tb_malloc(c->cells * sizeof(float), "bench uplift", NULL);
    c->k = tb_malloc(c->cells * sizeof(float), "bench erodibility", NULL);
    c->h0 = tb_calloc(c->cells, sizeof(float), "bench heights", NULL);
    if (!c->mask || !c->u || !c->k || !c->h0) {
        tb_err_set(err, TB_E_NOMEM, "out of memory");
        goto done;
    }
    memcpy(c->mask, tb_grid_cu8(mask), c->cells);
    if (tb_uplift_build(pm, &probes, &c->box, tb_grid_cu8(classes), c->u, c->k, err) != 0)
        goto done;
    c->land = 0;
    for (size_t x = 0; x < c->cells; x++)
        c->land += c->mask[x] == 1;
    snprintf(c->what, sizeof c->what,
             "%g km demo planet's region %lld: %lld x %lld box, %zu land cells, its uplift, flat "
             "start",
             o->circumference_km, (long long)o->demo_region, (long long)c->box.w,
             (long long)c->box.h, c->land);
    rc = 0;
done:
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    tb_plan_destroy(&plan);
    return rc;
}

/* The per-step phase times, read after every step from the progress callback. */
typedef struct {
    tb_geology_t *g;
    tb_geology_phases_t prev;
    double *per; /* [S_PHASES + 1][steps] ns per cell-step */
    size_t steps, at;
} s_clock_t;

static int s_tick(void *ud, int64_t step_done)
{
    (void)step_done;
    s_clock_t *ck = ud;
    tb_geology_phases_t b;
    tb_geology_phase_times(ck->g, &b);
    const tb_geology_phases_t *a = &ck->prev;
    double done = (double)(b.cell_steps - a->cell_steps);
    double d[S_PHASES] = {b.uplift_route_s - a->uplift_route_s,
                          b.sinks_s - a->sinks_s,
                          b.stack_s - a->stack_s,
                          b.accumulation_s - a->accumulation_s,
                          b.spl_s - a->spl_s,
                          b.hillslope_s - a->hillslope_s,
                          b.clamp_s - a->clamp_s};
    double tot = 0;
    for (int q = 0; q < S_PHASES; q++) {
        ck->per[(size_t)q * ck->steps + ck->at] = d[q] * 1e9 / done;
        tot += ck->per[(size_t)q * ck->steps + ck->at];
    }
    ck->per[(size_t)S_PHASES * ck->steps + ck->at] = tot;
    ck->at++;
    ck->prev = b;
    return 0;
}

typedef struct {
    double mean[S_PHASES + 1], med[S_PHASES + 1];
    tb_geology_phases_t a, b;
    uint64_t hash_h, hash_area;
    size_t largest_basin;
} s_result_t;

/* Land cells of the largest D8 basin (cells sharing an outlet) at the last step. */
static size_t s_largest_basin(const tb_geology_t *g, size_t cells)
{
    const int32_t *basin = tb_geology_basin(g);
    int32_t *count = calloc(cells, sizeof(int32_t));
    size_t best = 0;
    if (!basin || !count) {
        free(count);
        return 0;
    }
    for (size_t c = 0; c < cells; c++)
        if (basin[c] >= 0 && (size_t)++count[basin[c]] > best)
            best = (size_t)count[basin[c]];
    free(count);
    return best;
}

/* One thread count's solve. */
typedef struct {
    tb_pool_t *pool;
    tb_geology_t *g;
    float *h;
    s_clock_t ck;
} s_lane_t;

/* The timed steps' call, out of line under its own name: --counts collects in it alone, not in the
 * priming step before it. */
static __attribute__((noinline, noclone)) int s_timed_run(tb_geology_t *g, const s_case_t *c,
                                                          float *h, int64_t step0, int n,
                                                          s_clock_t *ck, tb_err_t *err)
{
    return tb_geology_run(g, c->mask, c->u, c->k, h, step0, n, s_tick, ck, err);
}

/* Runs the warmed-up case for o->steps steps at every thread count, in turns of S_BLOCK steps (the
 * order rotating), so a neighbour's burst on the shared machine hits every thread count alike.
 * Each thread count's solver first runs one untimed step from a copy of the warmed-up heights:
 * the sinks' lakes budget learns from the last calls (cost only, never bits: sinks.c, s_budget),
 * and a solver fresh at step 50 would spend its first step in the closed-basin flood a run that
 * got there itself does not take (on a young 4472 x 4472 box one such step cost 3.6 s). */
static int s_timed(const s_opts_t *o, const s_case_t *c, const float *hw, s_result_t *r,
                   tb_err_t *err)
{
    size_t ns = (size_t)o->steps;
    s_lane_t lane[S_MAX_T];
    memset(lane, 0, sizeof lane);
    int rc = -1;
    tb_geology_options_t opt;
    tb_geology_options_defaults(&opt);
    if (strcmp(o->bound, "box") == 0)
        opt.hillslope_bound = TB_HILLSLOPE_BOUND_BOX;
    for (int i = 0; i < o->nthreads; i++) {
        s_lane_t *l = &lane[i];
        l->pool = tb_pool_new((int)o->threads[i], err);
        l->g = l->pool ? tb_geology_new(&c->box, &c->p, c->seed, err) : NULL;
        l->h = tb_malloc(c->cells * sizeof(float), "bench heights", NULL);
        l->ck =
            (s_clock_t){.g = l->g, .per = calloc(ns * (S_PHASES + 1), sizeof(double)), .steps = ns};
        if (!l->g || !l->h || !l->ck.per) {
            if (l->g)
                tb_err_set(err, TB_E_NOMEM, "out of memory");
            goto done;
        }
        tb_geology_set_options(l->g, &opt, NULL);
        tb_geology_set_pool(l->g, l->pool);
        memcpy(l->h, hw, c->cells * sizeof(float));
        if (tb_geology_run(l->g, c->mask, c->u, c->k, l->h, o->warmup, 1, NULL, NULL, err) != 0)
            goto done; /* the priming step */
        memcpy(l->h, hw, c->cells * sizeof(float));
        tb_geology_phase_times(l->g, &r[i].a);
        l->ck.prev = r[i].a;
    }
    /* Blocks of S_BLOCK steps: a real solve runs its steps back to back (threads busy, caches
     * and pages warm), which one-step turns would not show. */
    for (size_t st = 0, round = 0; st < ns; st += S_BLOCK, round++)
        for (int q = 0; q < o->nthreads; q++) {
            s_lane_t *l = &lane[(q + (int)round) % o->nthreads];
            int n = (int)(ns - st < S_BLOCK ? ns - st : S_BLOCK);
            if (s_timed_run(l->g, c, l->h, o->warmup + (int64_t)st, n, &l->ck, err) != 0)
                goto done;
        }
    for (int i = 0; i < o->nthreads; i++) {
        s_lane_t *l = &lane[i];
        tb_geology_phase_times(l->g, &r[i].b);
        for (int q = 0; q <= S_PHASES; q++) {
            double *v = l->ck.per + (size_t)q * ns, sum = 0;
            for (size_t s = 0; s < ns; s++)
                sum += v[s];
            r[i].mean[q] = sum / (double)ns;
            qsort(v, ns, sizeof(double), s_cmp);
            r[i].med[q] = ns % 2 ? v[ns / 2] : 0.5 * (v[ns / 2 - 1] + v[ns / 2]);
        }
        r[i].hash_h = XXH3_64bits(l->h, c->cells * sizeof(float));
        r[i].hash_area = XXH3_64bits(tb_geology_area_m2(l->g), c->cells * sizeof(float));
        r[i].largest_basin = s_largest_basin(l->g, c->cells);
    }
    rc = 0;
done:
    for (int i = 0; i < o->nthreads; i++) {
        free(lane[i].ck.per);
        free(lane[i].h);
        tb_geology_destroy(&lane[i].g);
        tb_pool_destroy(&lane[i].pool);
    }
    return rc;
}

/* The state cache's file for the configuration `tag` (mfd, d8) of these options. */
static void s_state_path(const s_opts_t *o, const char *tag, char *path, size_t size)
{
    char km[32] = "";
    if (o->demo_region && o->circumference_km != TB_DEMO_CIRCUMFERENCE_KM)
        snprintf(km, sizeof km, ".%gkm", o->circumference_km);
    snprintf(path, size, "%s.%s.%lld.%lld.%lld.%lld.%g%s", o->state, tag, (long long)o->demo_region,
             (long long)o->size, (long long)o->warmup, (long long)o->seed, o->uplift_mm_yr, km);
}

/* The named background load (--load): a child process that runs until killed, and with its
 * parent. 0 when no load is asked for, -1 when it cannot start. */
static pid_t s_load_start(const char *name)
{
    if (!name)
        return 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(0);
    if (strcmp(name, "stream") == 0) {
        size_t n = (size_t)64 << 20; /* 256 MiB of floats */
        volatile float *a = calloc(n, sizeof(float));
        if (!a)
            _exit(1);
        for (;;)
            for (size_t i = 0; i < n; i++)
                a[i] = a[i] * 0.5f + 1.0f;
    }
    volatile uint64_t x = 1;
    for (;;)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
}

static void s_load_stop(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

/* The warmed-up heights: from the state cache, or warm-up steps on the most threads asked for
 * (any thread count gives the same bits). */
static int s_warm(const s_opts_t *o, const s_case_t *c, const char *tag, float *hw, tb_err_t *err)
{
    memcpy(hw, c->h0, c->cells * sizeof(float));
    char path[1100];
    FILE *f = NULL;
    if (o->state) {
        s_state_path(o, tag, path, sizeof path);
        f = fopen(path, "rb");
        if (f) {
            size_t got = fread(hw, sizeof(float), c->cells, f);
            fclose(f);
            if (got == c->cells)
                return 0;
        }
    }
    int most = 1;
    for (int i = 0; i < o->nthreads; i++)
        most = o->threads[i] > most ? (int)o->threads[i] : most;
    tb_pool_t *pool = tb_pool_new(most, err);
    tb_geology_t *g = pool ? tb_geology_new(&c->box, &c->p, c->seed, err) : NULL;
    int rc = -1;
    if (g) {
        tb_geology_set_pool(g, pool);
        rc = tb_geology_run(g, c->mask, c->u, c->k, hw, 0, (int)o->warmup, NULL, NULL, err);
    }
    tb_geology_destroy(&g);
    tb_pool_destroy(&pool);
    if (rc == 0 && o->state && (f = fopen(path, "wb"))) {
        fwrite(hw, sizeof(float), c->cells, f);
        fclose(f);
    }
    return rc;
}

static void s_row(const char *label, const double *v, const char *what)
{
    printf("%-14s", label);
    for (int q = 0; q <= S_PHASES; q++)
        printf(" %7.1f", v[q]);
    printf("   %s\n", what);
}

/* The sink resolution measured alone on the current state (one more step's uplift, then the
 * router): the solve's method against the textbook priority-flood of the whole box. */
static void s_flood_compare(const s_case_t *c, const float *h, int64_t step)
{
    tb_topo_t t;
    if (tb_topo_init(&t, &c->box, NULL) != 0)
        return;
    uint8_t *node = malloc(t.n), *dir = malloc(t.n);
    int32_t *pits = malloc(t.n * sizeof(int32_t));
    float *a = malloc(t.n * sizeof(float)), *b = malloc(t.n * sizeof(float));
    tb_sinks_t *sa = tb_sinks_new(t.n, NULL), *sb = tb_sinks_new(t.n, NULL);
    if (node && dir && pits && a && b && sa && sb) {
        size_t solved = tb_topo_classify(&t, c->mask, node);
        for (size_t x = 0; x < t.n; x++)
            a[x] = b[x] = (node[x] & TB_NODE_SOLVED) ? h[x] + (float)(c->u[x] * c->p.dt_yr) : 0;
        tb_router_jitter_t jit = {tb_hash_key(c->seed, TB_SALT_ROUTER_JITTER, step), 5e-4};
        size_t npits = tb_receivers_d8(&t, node, a, &jit, dir, pits);
        double t0 = s_now();
        int64_t flooded =
            tb_sinks_fill_priority_flood(sa, &t, node, a, dir, pits, npits, &jit, NULL);
        double t1 = s_now();
        tb_receivers_d8(&t, node, b, &jit, dir, pits);
        double t2 = s_now();
        tb_sinks_fill_priority_flood_full(sb, &t, node, b, dir, &jit, NULL);
        double t3 = s_now();
        printf("%-14s sinks on the warmed-up state: %zu pits, %lld cells flooded; the solve's "
               "method %.1f ns/cell, the whole-box priority-flood %.1f ns/cell; same heights: %s\n",
               "", npits, (long long)flooded, (t1 - t0) * 1e9 / (double)solved,
               (t3 - t2) * 1e9 / (double)solved,
               memcmp(a, b, t.n * sizeof(float)) == 0 ? "yes" : "NO");
    }
    tb_sinks_destroy(&sa);
    tb_sinks_destroy(&sb);
    free(node);
    free(dir);
    free(pits);
    free(a);
    free(b);
}

static int s_run(const s_opts_t *o, const s_case_t *c0, double mfd_exponent, const char *label,
                 double *median_total)
{
    tb_err_t err;
    s_case_t c = *c0;
    c.p.mfd_exponent = mfd_exponent;
    float *hw = tb_malloc(c.cells * sizeof(float), "bench heights", NULL);
    s_result_t r[S_MAX_T];
    if (!hw || s_warm(o, &c, mfd_exponent > 0 ? "mfd" : "d8", hw, &err) != 0) {
        fprintf(stderr, "bench solve: %s\n", hw ? err.msg : "out of memory");
        free(hw);
        return -1;
    }
    bool same = true;
    pid_t load = s_load_start(o->load);
    if (load < 0) {
        fprintf(stderr, "bench solve: --load %s: cannot start the load process\n", o->load);
        free(hw);
        return -1;
    }
    int timed = s_timed(o, &c, hw, r, &err);
    s_load_stop(load);
    if (timed != 0) {
        fprintf(stderr, "bench solve: %s\n", err.msg);
        free(hw);
        return -1;
    }
    for (int i = 0; median_total && i < o->nthreads; i++)
        median_total[i] = r[i].med[S_PHASES];
    for (int i = 0; i < o->nthreads; i++) {
        char name[64], what[96];
        snprintf(name, sizeof name, "%s T%lld", label, (long long)o->threads[i]);
        snprintf(what, sizeof what, "mean");
        s_row(name, r[i].mean, what);
        snprintf(what, sizeof what, "median of %lld steps", (long long)o->steps);
        s_row("", r[i].med, what);
        const tb_geology_phases_t *a = &r[i].a, *b = &r[i].b;
        double wall = 0;
        for (int q = 0; q < S_PHASES; q++)
            wall += r[i].mean[q];
        wall *= (double)(b->cell_steps - a->cell_steps) * 1e-9 / (double)(b->steps - a->steps);
        double steps = (double)(b->steps - a->steps);
        int64_t lakes = b->sink_lakes - a->sink_lakes;
        printf("%-14s serial %.1f %% of the time (sinks), %.1f %% of the lakes in bands, band "
               "walks waiting %.1f %% of thread time",
               "", 100 * (b->serial_s - a->serial_s) / (wall * steps),
               lakes > 0 ? 100.0 * (double)(b->sink_band_lakes - a->sink_band_lakes) / (double)lakes
                         : 0.0,
               100 * (b->wait_s - a->wait_s) / (wall * steps * (double)o->threads[i]));
        if (i > 0)
            printf(", speedup %.2fx (mean) %.2fx (median) over T%lld",
                   r[0].mean[S_PHASES] / r[i].mean[S_PHASES],
                   r[0].med[S_PHASES] / r[i].med[S_PHASES], (long long)o->threads[0]);
        printf("\n");
        same = same && r[i].hash_h == r[0].hash_h && r[i].hash_area == r[0].hash_area;
    }
    const tb_geology_phases_t *a = &r[0].a, *b = &r[0].b;
    double cs = (double)(b->cell_steps - a->cell_steps), st = (double)(b->steps - a->steps);
    printf("%-14s pit steps %lld/%lld, %.1f pits/step, %.1f lakes/step, %lld fallbacks, flooded "
           "%.0f cells/step; hillslope %.2f updates/cell-step (max rate %d), clamp %.4f "
           "moves/cell-step\n",
           "", (long long)(b->pit_steps - a->pit_steps), (long long)st,
           (double)(b->pits - a->pits) / st, (double)(b->sink_lakes - a->sink_lakes) / st,
           (long long)(b->sink_fallbacks - a->sink_fallbacks),
           (double)(b->closed_cells - a->closed_cells) / st,
           (double)(b->hillslope_updates - a->hillslope_updates) / cs, b->hillslope_max_rate,
           (double)(b->clamp_moves - a->clamp_moves) / cs);
    printf("%-14s Amdahl bound of a split by basin: %zu land cells / %zu in the largest D8 basin "
           "= %.1fx; same bits (heights, area) at every thread count: %s\n",
           "", c.land, r[0].largest_basin,
           r[0].largest_basin ? (double)c.land / (double)r[0].largest_basin : 0,
           same ? "yes" : "NO");
    printf("%-14s after step %lld: heights xxh3 %016llx, area xxh3 %016llx\n", "",
           (long long)(o->warmup + o->steps), (unsigned long long)r[0].hash_h,
           (unsigned long long)r[0].hash_area);
    if (!o->no_flood_compare)
        s_flood_compare(&c, hw, o->warmup);
    free(hw);
    return same ? 0 : 1;
}

/* --counts: instructions per land cell-step of each phase, from o->counts steps of the MFD
 * configuration on one thread under callgrind, started from the state cache the timed run wrote
 * (so the warm-up is read, not run, under valgrind). Returns 0, or -1 with the reason printed. */
static int s_counts(const s_opts_t *o, const s_case_t *c)
{
    char exe[1024], out[1100], cmd[4096], region[128] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "bench solve: --counts: cannot read /proc/self/exe\n");
        return -1;
    }
    exe[n] = 0;
    if (system("command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null "
               "2>&1") != 0) {
        fprintf(stderr, "bench solve: --counts needs valgrind and callgrind_annotate (Debian's "
                        "valgrind package: apt-get install valgrind)\n");
        return -1;
    }
    if (o->demo_region)
        snprintf(region, sizeof region, " --demo-region %lld --circumference-km %.17g",
                 (long long)o->demo_region, o->circumference_km);
    snprintf(out, sizeof out, "%s.callgrind", o->state);
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --callgrind-out-file='%s' --collect-atstart=no "
             "--toggle-collect=s_timed_run '%s' --only mfd --threads 1 --state '%s' "
             "--no-flood-compare --size %lld --warmup %lld --steps %lld --seed %lld "
             "--uplift-mm-yr %.17g --bound %s%s >/dev/null 2>'%s.log'",
             out, exe, o->state, (long long)o->size, (long long)o->warmup, (long long)o->counts,
             (long long)o->seed, o->uplift_mm_yr, o->bound, region, out);
    double t0 = s_now();
    if (system(cmd) != 0) {
        fprintf(stderr, "bench solve: --counts: the run under callgrind failed (see %s.log)\n",
                out);
        return -1;
    }
    double t1 = s_now();
    snprintf(cmd, sizeof cmd, "callgrind_annotate --inclusive=yes --threshold=100 '%s'", out);
    FILE *f = popen(cmd, "r");
    /* the step's function and each phase's, in the order of the table's columns */
    static const char *const fn[] = {
        "tb_geology_run", "tb_sinks_fill_bands", "tb_accum_mfd_bands", "tb_spl_erode_bands",
        "tb_hillslope_diffuse_bands", "tb_clamp_repose_bands", "s_tick",
        /* once a run, not a step: the classification, the coast list, the bands and the
         * end-of-run products */
        "tb_topo_classify", "tb_accum_coast", "tb_accum_prepare", "tb_topo_bands", "s_products"};
    enum { S_FN = sizeof fn / sizeof fn[0], S_ONCE = 7 };
    double ir[S_FN] = {0};
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        /* "  551,476,981 (100.0%)  ???:tb_geology_run [/path/bench_solve]" */
        char *p = line, *paren = strstr(line, " ("), *br = strstr(line, " [");
        if (!paren || !br)
            continue;
        double v = 0;
        bool digits = false;
        for (; p < paren; p++)
            if (*p >= '0' && *p <= '9') {
                v = v * 10 + (*p - '0');
                digits = true;
            } else if (*p != ',' && *p != ' ')
                break;
        if (!digits || p < paren)
            continue;
        *br = 0;
        char *name = strrchr(paren, ':');
        if (!name)
            continue;
        name++;
        for (int q = 0; q < S_FN; q++)
            if (strcmp(name, fn[q]) == 0 && ir[q] == 0)
                ir[q] = v;
    }
    if (!f || pclose(f) != 0 || ir[0] == 0) {
        fprintf(stderr, "bench solve: --counts: no count of tb_geology_run in %s\n", out);
        return -1;
    }
    double per = (double)c->land * (double)o->counts, v[S_PHASES + 1];
    /* columns: route, sinks, stack, accum, spl, hill, clamp, total */
    v[1] = ir[1] / per;
    v[2] = 0; /* MFD builds no stack */
    v[3] = ir[2] / per;
    v[4] = ir[3] / per;
    v[5] = ir[4] / per;
    v[6] = ir[5] / per;
    double once = 0;
    for (int q = S_ONCE; q < S_FN; q++)
        once += ir[q];
    v[7] = (ir[0] - ir[6] - once) / per;
    v[0] = v[7] - v[1] - v[3] - v[4] - v[5] - v[6];
    char what[224];
    snprintf(what, sizeof what,
             "instructions per land cell-step (callgrind, 1 thread, steps "
             "%lld..%lld, %.0f s under valgrind; not in the columns: %.1f a land cell once a run)",
             (long long)o->warmup + 1, (long long)(o->warmup + o->counts), t1 - t0,
             once / (double)c->land);
    s_row("MFD p=1 Ir", v, what);
    remove(out);
    snprintf(cmd, sizeof cmd, "%s.log", out);
    remove(cmd);
    return 0;
}

int main(int argc, char **argv)
{
    s_opts_t o = {.size = 2048,
                  .warmup = 50,
                  .steps = 15,
                  .uplift_mm_yr = 0.2,
                  .seed = 7,
                  .bound = "cell",
                  .only = "both",
                  .threads_text = "1",
                  .circumference_km = TB_DEMO_CIRCUMFERENCE_KM};
    tb_opt_t opts[] = {
        {"threads", TB_OPT_STRING, &o.threads_text, NULL, "T,T..", "thread counts (1)"},
        {"size", TB_OPT_INT, &o.size, NULL, "N", "box edge in cells (2048)"},
        {"warmup", TB_OPT_INT, &o.warmup, NULL, "N", "steps before timing (50)"},
        {"steps", TB_OPT_INT, &o.steps, NULL, "N", "timed steps (15)"},
        {"uplift-mm-yr", TB_OPT_DOUBLE, &o.uplift_mm_yr, NULL, "U", "uniform uplift (0.2)"},
        {"seed", TB_OPT_INT, &o.seed, NULL, "S", "seed (7)"},
        {"bound", TB_OPT_STRING, &o.bound, NULL, "cell|box", "hillslope sub-step bound (cell)"},
        {"only", TB_OPT_STRING, &o.only, NULL, "mfd|d8", "run one configuration"},
        {"demo-region", TB_OPT_INT, &o.demo_region, NULL, "N",
         "solve region N of the demo planet instead of the grid"},
        {"circumference-km", TB_OPT_DOUBLE, &o.circumference_km, NULL, "KM",
         "the demo planet's circumference, with --demo-region (25)"},
        {"state", TB_OPT_STRING, &o.state, NULL, "PATH", "cache the warmed-up heights in PATH.*"},
        {"no-flood-compare", TB_OPT_FLAG, &o.no_flood_compare, NULL, NULL,
         "skip the whole-box priority-flood comparison (profiling)"},
        {"sizes", TB_OPT_STRING, &o.sizes_text, NULL, "N,N..",
         "grid box edges run in turn, each against the first (e.g. 2048,4472)"},
        {"load", TB_OPT_STRING, &o.load, NULL, "stream|spin",
         "time beside one other single-thread process the bench starts"},
        {"counts", TB_OPT_INT, &o.counts, NULL, "N",
         "then N steps under callgrind: instructions per phase (0: none)"},
    };
    int nopts = TB_ARGS_N(opts);
    tb_err_t err;
    int npos = 0;
    int bad = tb_args_parse(argc - 1, argv + 1, opts, nopts, NULL, 0, &npos, &err) != 0;
    if (!bad) {
        o.nthreads = tb_args_int_list(o.threads_text, "--threads", o.threads, S_MAX_T, &err);
        bad = o.nthreads < 1;
        for (int i = 0; !bad && i < o.nthreads; i++)
            bad = o.threads[i] < 1 || o.threads[i] > 256;
        if (bad && o.nthreads >= 1)
            snprintf(err.msg, sizeof err.msg, "--threads: 1..256 each");
    }
    if (!bad && o.sizes_text) {
        o.nsizes = tb_args_int_list(o.sizes_text, "--sizes", o.sizes, S_MAX_T, &err);
        bad = o.nsizes < 1;
        for (int i = 0; !bad && i < o.nsizes; i++)
            bad = o.sizes[i] < 3;
        if (bad && o.nsizes >= 1)
            snprintf(err.msg, sizeof err.msg, "--sizes: box edges of 3 cells or more each");
        if (!bad && o.demo_region)
            bad = snprintf(err.msg, sizeof err.msg, "--sizes: not with --demo-region") > 0;
    }
    if (!bad && o.circumference_km != TB_DEMO_CIRCUMFERENCE_KM && !o.demo_region)
        bad =
            snprintf(err.msg, sizeof err.msg,
                     "--circumference-km: only with --demo-region (it sizes the demo planet)") > 0;
    if (!bad && o.load && strcmp(o.load, "stream") != 0 && strcmp(o.load, "spin") != 0)
        bad = snprintf(err.msg, sizeof err.msg, "--load: expected stream or spin, got \"%s\"",
                       o.load) > 0;
    if (!bad && (o.counts < 0 || o.counts > 100))
        bad = snprintf(err.msg, sizeof err.msg, "--counts: expected 0..100 steps, got %lld",
                       (long long)o.counts) > 0;
    if (!bad && o.counts > 0 && strcmp(o.only, "d8") == 0)
        bad = snprintf(err.msg, sizeof err.msg,
                       "--counts: counts the MFD step; not with --only d8") > 0;
    if (bad || o.size < 3 || o.steps < 1 || o.warmup < 0) {
        fprintf(stderr, "bench solve: %s\n",
                bad ? err.msg : "--size 3.., --steps 1.., --warmup 0..");
        tb_args_usage(stderr, "bench_solve [options]", opts, nopts);
        return 2;
    }
    /* --counts reads the warmed-up heights back: a temporary state cache when none is given */
    char tmp_state[64] = "";
    if (o.counts > 0 && !o.state) {
        snprintf(tmp_state, sizeof tmp_state, "/tmp/bench_solve_counts.%ld", (long)getpid());
        o.state = tmp_state;
    }
    if (o.nsizes == 0)
        o.sizes[o.nsizes++] = o.size;
    double med[S_MAX_T][S_MAX_T];
    int rc = 0;
    for (int z = 0; z < o.nsizes && rc == 0; z++) {
        o.size = o.sizes[z];
        s_case_t c = {0};
        if ((o.demo_region ? s_demo_case(&o, &c, &err) : s_grid_case(&o, &c, &err)) != 0) {
            fprintf(stderr, "bench solve: %s\n", err.msg);
            s_case_free(&c);
            return 1;
        }
        printf("bench solve: %s, manifest default physics, hillslope bound %s, warm-up %lld "
               "steps, timed %lld steps, threads %s (%d cores)%s%s%s\n",
               c.what, o.bound, (long long)o.warmup, (long long)o.steps, o.threads_text,
               tb_pool_default_threads(), o.load ? ", beside one other process: " : "",
               o.load ? o.load : "",
               !o.load                         ? ""
               : strcmp(o.load, "stream") == 0 ? " (one thread reading and writing 256 MiB)"
                                               : " (one thread of integer arithmetic)");
        printf("%-14s %7s %7s %7s %7s %7s %7s %7s %7s   (ns per land cell-step)\n", "config",
               "route", "sinks", "stack", "accum", "spl", "hill", "clamp", "total");
        if (strcmp(o.only, "d8") != 0)
            rc |= s_run(&o, &c, 1.0, "MFD p=1", med[z]);
        if (rc == 0 && o.counts > 0 && s_counts(&o, &c) != 0)
            rc = 1;
        if (strcmp(o.only, "mfd") != 0)
            rc |= s_run(&o, &c, 0.0, "D8 (p=0)", strcmp(o.only, "d8") == 0 ? med[z] : NULL);
        if (tmp_state[0]) {
            char path[1100];
            s_state_path(&o, "mfd", path, sizeof path);
            remove(path);
            s_state_path(&o, "d8", path, sizeof path);
            remove(path);
        }
        s_case_free(&c);
    }
    for (int z = 1; z < o.nsizes && rc == 0; z++)
        for (int i = 0; i < o.nthreads; i++)
            printf("size %lld against %lld, T%lld (%s, median): %.1f / %.1f ns per land "
                   "cell-step = %.2fx\n",
                   (long long)o.sizes[z], (long long)o.sizes[0], (long long)o.threads[i],
                   strcmp(o.only, "d8") == 0 ? "D8" : "MFD", med[z][i], med[0][i],
                   med[z][i] / med[0][i]);
    return rc ? 1 : 0;
}
