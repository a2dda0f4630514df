/* bench_solve: ns per cell-step of the geology step, split by phase (issue 3, item 4).
 *
 * A square box (2048 x 2048 by default) with every cell solved except its ring, which is held at sea
 * level; uniform uplift; the manifest's default physics (MFD on, hillslope and clamp on). The
 * initial surface is 0..1 m of world-hashed noise. After a warm-up (50 steps by default) it times a
 * number of steps and prints per-phase ns per cell-step, then does the same with D8 only
 * (mfd_exponent 0). Timing is wall clock on one thread; the machine is shared, so run it twice
 * before believing a difference under 10 %.
 *
 *   scripts/bench solve [--size N] [--warmup N] [--steps N] [--uplift-mm-yr U] [--seed S]
 *                       [--bound cell|box] [--only mfd|d8]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/args.h"
#include "common/hash.h"
#include "common/manifest.h"
#include "jobs/geology/geology.h"
#include "jobs/geology/receivers.h"
#include "jobs/geology/sinks.h"
#include "jobs/geology/topology.h"

typedef struct {
    int64_t size, warmup, steps;
    double uplift_mm_yr;
    int64_t seed;
    const char *bound;
    const char *only;
    const char *state;
} s_opts_t;

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

/* The sink resolution measured alone on the current state (one more step's uplift, then the
 * router): the solve's method against the textbook priority-flood of the whole box. */
static void s_flood_compare(const tb_frame_t *box, const uint8_t *mask, const float *u,
                            const float *h, double dt, uint64_t seed, int64_t step)
{
    tb_topo_t t;
    if (tb_topo_init(&t, box, NULL) != 0)
        return;
    uint8_t *node = malloc(t.n), *dir = malloc(t.n);
    int32_t *pits = malloc(t.n * sizeof(int32_t));
    float *a = malloc(t.n * sizeof(float)), *b = malloc(t.n * sizeof(float));
    tb_sinks_t *sa = tb_sinks_new(t.n, NULL), *sb = tb_sinks_new(t.n, NULL);
    if (!node || !dir || !pits || !a || !b || !sa || !sb)
        return;
    size_t solved = tb_topo_classify(&t, mask, node);
    for (size_t c = 0; c < t.n; c++)
        a[c] = b[c] = (node[c] & TB_NODE_SOLVED) ? h[c] + (float)(u[c] * dt) : 0;
    tb_router_jitter_t jit = {tb_hash_key(seed, TB_SALT_ROUTER_JITTER, step), 5e-4};
    size_t npits = tb_receivers_d8(&t, node, a, &jit, dir, pits);
    double t0 = s_now();
    int64_t flooded = tb_sinks_fill_priority_flood(sa, &t, node, a, dir, pits, npits, &jit, NULL);
    double t1 = s_now();
    tb_receivers_d8(&t, node, b, &jit, dir, pits);
    double t2 = s_now();
    tb_sinks_fill_priority_flood_full(sb, &t, node, b, dir, &jit, NULL);
    double t3 = s_now();
    printf("%-14s sinks on this state: %zu pits, %lld cells flooded; the solve's method %.1f "
           "ns/cell, the whole-box priority-flood %.1f ns/cell; same heights: %s\n",
           "", npits, (long long)flooded, (t1 - t0) * 1e9 / (double)solved,
           (t3 - t2) * 1e9 / (double)solved, memcmp(a, b, t.n * sizeof(float)) == 0 ? "yes" : "NO");
    tb_sinks_destroy(&sa);
    tb_sinks_destroy(&sb);
    free(node);
    free(dir);
    free(pits);
    free(a);
    free(b);
}

static int s_run(const s_opts_t *o, double mfd_exponent, const char *label)
{
    tb_err_t err;
    tb_frame_t box;
    int64_t n = o->size;
    if (tb_frame_make(&box, 2 * n, 2 * n, 8, n / 2, n / 2, n, n, &err) != 0) {
        fprintf(stderr, "bench solve: %s\n", err.msg);
        return -1;
    }
    tb_manifest_t m;
    tb_manifest_defaults(&m);
    tb_solve_params_t p = m.solve;
    p.mfd_exponent = mfd_exponent;
    size_t cells = (size_t)(n * n);
    uint8_t *mask = malloc(cells);
    float *u = malloc(cells * sizeof(float)), *k = malloc(cells * sizeof(float)),
          *h = malloc(cells * sizeof(float));
    if (!mask || !u || !k || !h) {
        fprintf(stderr, "bench solve: out of memory\n");
        return -1;
    }
    uint64_t key = tb_hash_key((uint64_t)o->seed, TB_SALT_TEST, 0);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            size_t c = tb_idx(n, i, j);
            mask[c] = 1;
            u[c] = (float)(o->uplift_mm_yr * 1e-3);
            k[c] = (float)p.k;
            h[c] = (float)tb_hash_unit(tb_hash_cell(key, tb_frame_lattice_x(&box, i),
                                                    tb_frame_lattice_y(&box, j)));
        }
    tb_geology_t *g = tb_geology_new(&box, &p, (uint64_t)o->seed, &err);
    if (!g) {
        fprintf(stderr, "bench solve: %s\n", err.msg);
        return -1;
    }
    tb_geology_options_t opt;
    tb_geology_options_defaults(&opt);
    if (strcmp(o->bound, "box") == 0)
        opt.hillslope_bound = TB_HILLSLOPE_BOUND_BOX;
    tb_geology_set_options(g, &opt, NULL);
    int rc = 0;
    char state_path[1024];
    FILE *sf = NULL;
    if (o->state) {
        snprintf(state_path, sizeof state_path, "%s.%lld.%lld.%lld.%g.%g", o->state, (long long)n,
                 (long long)o->warmup, (long long)o->seed, o->uplift_mm_yr, mfd_exponent);
        sf = fopen(state_path, "rb");
    }
    if (sf) {
        rc = fread(h, sizeof(float), cells, sf) == cells ? 0 : -1;
        fclose(sf);
        if (rc == 0)
            rc = tb_geology_run(g, mask, u, k, h, o->warmup, 0, NULL, NULL, &err);
    } else {
        rc = tb_geology_run(g, mask, u, k, h, 0, (int)o->warmup, NULL, NULL, &err);
        if (rc == 0 && o->state && (sf = fopen(state_path, "wb"))) {
            fwrite(h, sizeof(float), cells, sf);
            fclose(sf);
        }
    }
    /* One step at a time, so every phase has a time per step: the mean is the honest figure, the
     * median the one a neighbour's burst on a shared machine does not move. */
    size_t ns = (size_t)o->steps;
    double *per = calloc(ns * 8, sizeof(double));
    tb_geology_phases_t a, b, prev;
    tb_geology_phase_times(g, &a);
    prev = a;
    for (size_t st = 0; rc == 0 && st < ns; st++) {
        rc = tb_geology_run(g, mask, u, k, h, o->warmup + (int64_t)st, 1, NULL, NULL, &err);
        tb_geology_phase_times(g, &b);
        double done = (double)(b.cell_steps - prev.cell_steps);
        double d[7] = {b.uplift_route_s - prev.uplift_route_s, b.sinks_s - prev.sinks_s,
                       b.stack_s - prev.stack_s,               b.accumulation_s - prev.accumulation_s,
                       b.spl_s - prev.spl_s,                   b.hillslope_s - prev.hillslope_s,
                       b.clamp_s - prev.clamp_s};
        double tot = 0;
        for (int q = 0; q < 7; q++) {
            per[q * ns + st] = d[q] * 1e9 / done;
            tot += per[q * ns + st];
        }
        per[7 * ns + st] = tot;
        prev = b;
    }
    if (rc != 0) {
        fprintf(stderr, "bench solve: %s\n", err.msg);
        return -1;
    }
    double cs = (double)(b.cell_steps - a.cell_steps);
    double mean[8], med[8];
    for (int q = 0; q < 8; q++) {
        double sum = 0;
        for (size_t st = 0; st < ns; st++)
            sum += per[q * ns + st];
        mean[q] = sum / (double)ns;
        qsort(per + q * ns, ns, sizeof(double), s_cmp);
        med[q] = ns % 2 ? per[q * ns + ns / 2] : 0.5 * (per[q * ns + ns / 2 - 1] + per[q * ns + ns / 2]);
    }
    printf("%-14s", label);
    for (int q = 0; q < 8; q++)
        printf(" %7.1f", mean[q]);
    printf("   mean\n%-14s", "");
    for (int q = 0; q < 8; q++)
        printf(" %7.1f", med[q]);
    printf("   median of %zu steps\n", ns);
    free(per);
    float top = 0;
    for (size_t c = 0; c < cells; c++)
        top = h[c] > top ? h[c] : top;
    printf("%-14s pit steps %lld/%lld, %.1f pits/step, %.1f lakes/step, %lld fallbacks, "
           "flooded %.0f cells/step,\n%-14s hillslope %.2f updates/cell-step "
           "(max rate %d), clamp %.4f moves/cell-step, max height %.1f m\n",
           "", (long long)(b.pit_steps - a.pit_steps), (long long)(b.steps - a.steps),
           (double)(b.pits - a.pits) / (double)(b.steps - a.steps),
           (double)(b.sink_lakes - a.sink_lakes) / (double)(b.steps - a.steps),
           (long long)(b.sink_fallbacks - a.sink_fallbacks),
           (double)(b.closed_cells - a.closed_cells) / (double)(b.steps - a.steps), "",
           (double)(b.hillslope_updates - a.hillslope_updates) / cs, b.hillslope_max_rate,
           (double)(b.clamp_moves - a.clamp_moves) / cs, top);
    s_flood_compare(&box, mask, u, h, p.dt_yr, (uint64_t)o->seed, o->warmup + o->steps);
    tb_geology_destroy(&g);
    free(mask);
    free(u);
    free(k);
    free(h);
    return 0;
}

int main(int argc, char **argv)
{
    s_opts_t o = {2048, 50, 15, 0.2, 7, "cell", "both", NULL};
    tb_opt_t opts[] = {
        {"size", TB_OPT_INT, &o.size, NULL, "N", "box edge in cells (2048)"},
        {"warmup", TB_OPT_INT, &o.warmup, NULL, "N", "steps before timing (50)"},
        {"steps", TB_OPT_INT, &o.steps, NULL, "N", "timed steps (15)"},
        {"uplift-mm-yr", TB_OPT_DOUBLE, &o.uplift_mm_yr, NULL, "U", "uniform uplift (0.2)"},
        {"seed", TB_OPT_INT, &o.seed, NULL, "S", "seed (7)"},
        {"bound", TB_OPT_STRING, &o.bound, NULL, "cell|box", "hillslope sub-step bound (cell)"},
        {"only", TB_OPT_STRING, &o.only, NULL, "mfd|d8", "run one configuration"},
        {"state", TB_OPT_STRING, &o.state, NULL, "PATH", "cache the warmed-up heights under PATH.*"},
    };
    int nopts = (int)(sizeof opts / sizeof opts[0]);
    tb_err_t err;
    int npos = 0;
    if (tb_args_parse(argc - 1, argv + 1, opts, nopts, NULL, 0, &npos, &err) != 0 || o.size < 3 ||
        o.steps < 1 || o.warmup < 0) {
        fprintf(stderr, "bench solve: %s\n", o.size < 3 ? "size must be at least 3" : err.msg);
        tb_args_usage(stderr, "bench_solve [options]", opts, nopts);
        return 2;
    }
    printf("bench solve: %lld x %lld cells, 8 m, U %.3g mm/yr uniform, manifest default physics, "
           "hillslope bound %s, warm-up %lld steps, timed %lld steps, one thread\n",
           (long long)o.size, (long long)o.size, o.uplift_mm_yr, o.bound, (long long)o.warmup,
           (long long)o.steps);
    printf("%-14s %7s %7s %7s %7s %7s %7s %7s %7s   (ns per cell-step)\n", "config", "route",
           "sinks", "stack", "accum", "spl", "hill", "clamp", "total");
    if (strcmp(o.only, "d8") != 0 && s_run(&o, 1.0, "MFD p=1") != 0)
        return 1;
    if (strcmp(o.only, "mfd") != 0 && s_run(&o, 0.0, "D8 (p=0)") != 0)
        return 1;
    return 0;
}
