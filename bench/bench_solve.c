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

#include "common/args.h"
#include "common/hash.h"
#include "common/manifest.h"
#include "jobs/geology/geology.h"

typedef struct {
    int64_t size, warmup, steps;
    double uplift_mm_yr;
    int64_t seed;
    const char *bound;
    const char *only;
} s_opts_t;

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
    int rc = tb_geology_run(g, mask, u, k, h, 0, (int)o->warmup, NULL, NULL, &err);
    tb_geology_phases_t a, b;
    tb_geology_phase_times(g, &a);
    if (rc == 0)
        rc = tb_geology_run(g, mask, u, k, h, o->warmup, (int)o->steps, NULL, NULL, &err);
    tb_geology_phase_times(g, &b);
    if (rc != 0) {
        fprintf(stderr, "bench solve: %s\n", err.msg);
        return -1;
    }
    double cs = (double)(b.cell_steps - a.cell_steps);
    double ph[7] = {b.uplift_route_s - a.uplift_route_s, b.sinks_s - a.sinks_s,
                    b.stack_s - a.stack_s,               b.accumulation_s - a.accumulation_s,
                    b.spl_s - a.spl_s,                   b.hillslope_s - a.hillslope_s,
                    b.clamp_s - a.clamp_s};
    double total = 0;
    printf("%-14s", label);
    for (int i = 0; i < 7; i++) {
        printf(" %7.1f", ph[i] * 1e9 / cs);
        total += ph[i];
    }
    printf(" %8.1f\n", total * 1e9 / cs);
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
    tb_geology_destroy(&g);
    free(mask);
    free(u);
    free(k);
    free(h);
    return 0;
}

int main(int argc, char **argv)
{
    s_opts_t o = {2048, 50, 20, 0.2, 7, "cell", "both"};
    tb_opt_t opts[] = {
        {"size", TB_OPT_INT, &o.size, NULL, "N", "box edge in cells (2048)"},
        {"warmup", TB_OPT_INT, &o.warmup, NULL, "N", "steps before timing (50)"},
        {"steps", TB_OPT_INT, &o.steps, NULL, "N", "timed steps (20)"},
        {"uplift-mm-yr", TB_OPT_DOUBLE, &o.uplift_mm_yr, NULL, "U", "uniform uplift (0.2)"},
        {"seed", TB_OPT_INT, &o.seed, NULL, "S", "seed (7)"},
        {"bound", TB_OPT_STRING, &o.bound, NULL, "cell|box", "hillslope sub-step bound (cell)"},
        {"only", TB_OPT_STRING, &o.only, NULL, "mfd|d8", "run one configuration"},
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
    printf("%-14s %7s %7s %7s %7s %7s %7s %7s %8s   (ns per cell-step)\n", "config", "route",
           "sinks", "stack", "accum", "spl", "hill", "clamp", "total");
    if (strcmp(o.only, "d8") != 0 && s_run(&o, 1.0, "MFD p=1") != 0)
        return 1;
    if (strcmp(o.only, "mfd") != 0 && s_run(&o, 0.0, "D8 (p=0)") != 0)
        return 1;
    return 0;
}
