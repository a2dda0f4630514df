/* scripts/bench stats: the statistics' ns a cell (docs/statistics.md: target 20, predecessor 120).
 *
 * On a synthetic planet (jobs/stats/synthetic.h: fractal land, sea at 0 m, D8 drainage area, all
 * three uplift classes) of a few million cells at 8 m, it times:
 * *   - filling: tb_stats_accumulate over the whole planet in one box (best of --reps, 7), per cell
 * of the box and per land cell;
 *   - regions: the planet cut into --regions stripes, each a box with the relief halo round its own
 *     columns and a count mask of them, accumulated one by one (the halo is the overhead);
 *   - merging: decoding each region's encoding and merging them in region order, per planet cell;
 * and checks that the pooled statistics equal the whole to the last bit. Then a realistic region:
 * the demo planet's largest region (25 km demo, seed 7: 1245 x 1000 cells, 73 % of them its own
 * land) after --demo-steps of the solve, its statistics filled as its region job fills them (its
 * solve mask counting), per cell of the box and per land cell. One run, figures and ratios; never a
 * timed test. Times are this thread's CPU seconds, so a busy machine inflates them less.
 *
 * Usage: bench_stats [--w CELLS] [--h CELLS] [--regions N] [--reps N] [--seed N] [--demo-steps N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/bake/planet_input.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "jobs/stats/stats.h"
#include "jobs/stats/synthetic.h"
#include "jobs/uplift/uplift.h"

#define S_TARGET_NS 20.0
#define S_PREDECESSOR_NS 120.0

/* Seconds of CPU this thread has used: on a shared machine a descheduled thread does not count. */
static double s_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int s_fail(const char *what, const tb_err_t *err)
{
    fprintf(stderr, "bench_stats: %s: %s\n", what, err->msg);
    return 1;
}

/* Copies columns x0 .. x0 + w - 1 (mod W) of the planet into a region box. */
static void s_cut(const float *src, int64_t W, int64_t H, int64_t x0, int64_t w, float *dst)
{
    for (int64_t j = 0; j < H; j++)
        for (int64_t i = 0; i < w; i++)
            dst[j * w + i] = src[j * W + tb_wrap(x0 + i, W)];
}

/* The demo planet's largest region after `steps` of the solve: fills its statistics `reps` times
 * and prints the best, per box cell and per land cell. Returns 0, or 1 on failure. */
static int s_demo_region(int64_t steps, int64_t reps)
{
    tb_err_t err;
    tb_planet_input_t in = {0};
    tb_plan_t *plan = NULL;
    tb_grid_t *classes = NULL, *mask = NULL;
    tb_region_result_t r = {0};
    int rc = 1;
    if (tb_planet_input_load(NULL, NULL, &in, &err) != 0 ||
        !(plan = tb_plan_new(&in.manifest, tb_planet_input_rows(&in), NULL, NULL, 1, &err))) {
        s_fail("demo planet", &err);
        goto done;
    }
    const tb_manifest_t *m = tb_plan_manifest(plan);
    tb_uplift_probes_t probes;
    int big = 0;
    for (int i = 1; i < tb_plan_region_count(plan); i++)
        if (tb_plan_region(plan, i)->box_cells > tb_plan_region(plan, big)->box_cells)
            big = i;
    const tb_plan_region_t *reg = tb_plan_region(plan, big);
    if (tb_uplift_probes_compute(m, &probes, &err) != 0 ||
        tb_plan_region_grids(plan, big, &classes, &mask, &err) != 0) {
        s_fail("demo region", &err);
        goto done;
    }
    tb_region_spec_t spec = {.region_id = reg->id,
                             .box = reg->box,
                             .steps = (int)steps,
                             .manifest = m,
                             .probes = &probes,
                             .classes = tb_grid_cu8(classes),
                             .solve_mask = tb_grid_cu8(mask)};
    double t0 = s_cpu_s();
    if (tb_region_solve(&spec, NULL, NULL, NULL, &r, &err) != 0) {
        s_fail("demo solve", &err);
        goto done;
    }
    double t_solve = s_cpu_s() - t0;
    const tb_frame_t *box = &reg->box;
    size_t cells = (size_t)box->w * (size_t)box->h, land = 0;
    const uint8_t *mk = tb_grid_cu8(mask);
    for (size_t i = 0; i < cells; i++)
        land += mk[i] && r.height_m[i] > 0;
    tb_stats_params_t p;
    tb_stats_params_default(&p, m->cell_m);
    double best = 1e30;
    for (int64_t k = 0; k < reps; k++) {
        tb_stats_t *s = tb_stats_new(&p, &err);
        if (!s) {
            s_fail("new", &err);
            goto done;
        }
        double a = s_cpu_s();
        int ok = tb_stats_accumulate(s, box, r.height_m, r.area_m2, r.uplift_m_yr, mk, &err) == 0;
        double dt = s_cpu_s() - a;
        tb_stats_destroy(&s);
        if (!ok) {
            s_fail("demo accumulate", &err);
            goto done;
        }
        best = dt < best ? dt : best;
    }
    double per_land = best * 1e9 / (double)land;
    printf("demo region %d after %lld steps (solved in %.1f s): %lld x %lld box, %.2f M land cells "
           "(%.0f%% of the box)\n",
           reg->id, (long long)steps, t_solve, (long long)box->w, (long long)box->h,
           (double)land / 1e6, 100.0 * (double)land / (double)cells);
    printf("fill (demo region): %6.2f ns per box cell, %6.2f ns per land cell  (best of %lld: "
           "%.3f s); target %.0f per land cell (%.2fx of it), predecessor %.0f (%.1fx faster)\n",
           best * 1e9 / (double)cells, per_land, (long long)reps, best, S_TARGET_NS,
           per_land / S_TARGET_NS, S_PREDECESSOR_NS, S_PREDECESSOR_NS / per_land);
    rc = 0;
done:
    tb_region_result_free(&r);
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    tb_plan_destroy(&plan);
    tb_planet_input_free(&in);
    return rc;
}

int main(int argc, char **argv)
{
    int64_t W = 2048, H = 1536, regions = 8, reps = 7, demo_steps = 30;
    uint64_t seed = 7;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "--w"))
            W = atoll(argv[a + 1]);
        else if (!strcmp(argv[a], "--h"))
            H = atoll(argv[a + 1]);
        else if (!strcmp(argv[a], "--regions"))
            regions = atoll(argv[a + 1]);
        else if (!strcmp(argv[a], "--reps"))
            reps = atoll(argv[a + 1]);
        else if (!strcmp(argv[a], "--seed"))
            seed = (uint64_t)atoll(argv[a + 1]);
        else if (!strcmp(argv[a], "--demo-steps"))
            demo_steps = atoll(argv[a + 1]);
        else {
            fprintf(stderr,
                    "usage: bench_stats [--w N] [--h N] [--regions N] [--reps N] [--seed N] "
                    "[--demo-steps N (0: no demo region)]\n");
            return 2;
        }
    }
    if (W < 64 || H < 64 || regions < 1 || regions > W / 8 || reps < 1 || demo_steps < 0) {
        fprintf(stderr, "bench_stats: need --w, --h >= 64, 1 <= --regions <= w/8, --reps >= 1\n");
        return 2;
    }
    tb_err_t err;
    tb_frame_t planet;
    if (tb_frame_make(&planet, W, H, 8, 0, 0, W, H, &err) != 0)
        return s_fail("frame", &err);
    double t0 = s_cpu_s();
    tb_synth_t syn;
    if (tb_synth_planet(&planet, seed, 800, &syn, &err) != 0)
        return s_fail("synthetic planet", &err);
    double t_synth = s_cpu_s() - t0;
    size_t cells = syn.cells, land = 0;
    for (size_t i = 0; i < cells; i++)
        land += syn.height_m[i] > 0;

    tb_stats_params_t p;
    tb_stats_params_default(&p, planet.cell_m);
    int64_t halo = tb_stats_halo_cells(&p);
    printf("planet %lld x %lld cells of %g m (%.1f M cells, %.0f%% land), made in %.1f s; "
           "relief window %lld cells\n",
           (long long)W, (long long)H, planet.cell_m, (double)cells / 1e6,
           100.0 * (double)land / (double)cells, t_synth, (long long)(2 * halo + 1));

    /* Filling, one box. */
    tb_stats_t *whole = NULL;
    double best = 1e30;
    for (int64_t r = 0; r < reps; r++) {
        tb_stats_destroy(&whole);
        if (!(whole = tb_stats_new(&p, &err)))
            return s_fail("new", &err);
        double a = s_cpu_s();
        if (tb_stats_accumulate(whole, &planet, syn.height_m, syn.area_m2, syn.uplift_m_yr, NULL,
                                &err) != 0)
            return s_fail("accumulate", &err);
        double dt = s_cpu_s() - a;
        best = dt < best ? dt : best;
    }
    double fill_ns = best * 1e9 / (double)cells;
    printf(
        "fill (one box):   %7.2f ns per box cell, %7.2f ns per land cell  (best of %lld: %.3f s)\n",
        fill_ns, best * 1e9 / (double)(land ? land : 1), (long long)reps, best);

    /* Regions: stripes with a halo, filled one by one, encoded. */
    int64_t stripe = W / regions, box_w_max = stripe + W % regions + 2 * halo;
    if (box_w_max > W)
        box_w_max = W;
    size_t box_cells = (size_t)box_w_max * (size_t)H;
    float *h = malloc(box_cells * sizeof(float)), *a = malloc(box_cells * sizeof(float)),
          *u = malloc(box_cells * sizeof(float));
    uint8_t *mask = malloc(box_cells);
    uint8_t **enc = calloc((size_t)regions, sizeof *enc);
    size_t *enc_len = calloc((size_t)regions, sizeof *enc_len), enc_total = 0;
    if (!h || !a || !u || !mask || !enc || !enc_len) {
        fprintf(stderr, "bench_stats: out of memory\n");
        return 1;
    }
    double t_regions = 0, t_encode = 0, region_box_cells = 0;
    for (int64_t r = 0; r < regions; r++) {
        int64_t own0 = r * stripe, own_w = r == regions - 1 ? W - own0 : stripe;
        int64_t bw = own_w + 2 * halo, bx0 = own0 - halo;
        if (bw >= W) {
            bw = W;
            bx0 = 0;
        }
        tb_frame_t box;
        if (tb_frame_make(&box, W, H, planet.cell_m, bx0, 0, bw, H, &err) != 0)
            return s_fail("region frame", &err);
        s_cut(syn.height_m, W, H, box.x0, bw, h);
        s_cut(syn.area_m2, W, H, box.x0, bw, a);
        s_cut(syn.uplift_m_yr, W, H, box.x0, bw, u);
        for (int64_t j = 0; j < H; j++)
            for (int64_t i = 0; i < bw; i++) {
                int64_t lx = tb_frame_lattice_x(&box, i);
                mask[j * bw + i] = tb_wrap(lx - own0, W) < own_w;
            }
        tb_stats_t *rs = tb_stats_new(&p, &err);
        if (!rs)
            return s_fail("new", &err);
        double c0 = s_cpu_s();
        if (tb_stats_accumulate(rs, &box, h, a, u, mask, &err) != 0)
            return s_fail("region accumulate", &err);
        double c1 = s_cpu_s();
        if (!(enc[r] = tb_stats_encode(rs, &enc_len[r], &err)))
            return s_fail("encode", &err);
        t_encode += s_cpu_s() - c1;
        t_regions += c1 - c0;
        region_box_cells += (double)bw * (double)H;
        enc_total += enc_len[r];
        tb_stats_destroy(&rs);
    }
    printf("fill (%lld regions): %5.2f ns per planet cell, %5.2f per region box cell "
           "(boxes hold %.2fx the planet); encode %.1f ms, %.1f kB per region\n",
           (long long)regions, t_regions * 1e9 / (double)cells, t_regions * 1e9 / region_box_cells,
           region_box_cells / (double)cells, t_encode * 1e3,
           (double)enc_total / 1024.0 / (double)regions);

    /* Merging: decode each region and merge in region order. */
    double m0 = s_cpu_s();
    tb_stats_t *pooled = tb_stats_new(&p, &err);
    if (!pooled)
        return s_fail("new", &err);
    double t_decode = 0;
    for (int64_t r = 0; r < regions; r++) {
        double d0 = s_cpu_s();
        tb_stats_t *rs = tb_stats_decode(enc[r], enc_len[r], &err);
        t_decode += s_cpu_s() - d0;
        if (!rs)
            return s_fail("decode", &err);
        if (tb_stats_merge(pooled, rs, &err) != 0)
            return s_fail("merge", &err);
        tb_stats_destroy(&rs);
    }
    double t_merge = s_cpu_s() - m0;
    printf("merge (%lld regions): %5.3f ns per planet cell (%.1f ms, of which decoding %.1f ms)\n",
           (long long)regions, t_merge * 1e9 / (double)cells, t_merge * 1e3, t_decode * 1e3);
    bool same = tb_stats_equal(pooled, whole);
    printf("pooled equals whole: %s\n", same ? "yes, to the last bit" : "NO");

    double total_ns = fill_ns + t_merge * 1e9 / (double)cells;
    printf("statistics: %.2f ns per cell filled and merged; target %.0f (%.2fx of it), "
           "predecessor %.0f (%.1fx faster)\n",
           total_ns, S_TARGET_NS, total_ns / S_TARGET_NS, S_PREDECESSOR_NS,
           S_PREDECESSOR_NS / total_ns);
    char *text = tb_stats_report_text(pooled, NULL, NULL);
    if (text)
        printf("--- the block on this planet\n%s", text);
    free(text);
    for (int64_t r = 0; r < regions; r++)
        free(enc[r]);
    free(enc);
    free(enc_len);
    free(h);
    free(a);
    free(u);
    free(mask);
    tb_stats_destroy(&whole);
    tb_stats_destroy(&pooled);
    tb_synth_free(&syn);
    if (demo_steps > 0 && s_demo_region(demo_steps, reps) != 0)
        return 1;
    return same ? 0 : 1;
}
