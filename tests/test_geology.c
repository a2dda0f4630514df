/* The geology step (jobs/geology/geology.h): two frames agree about the same landmass (its own box,
 * a larger box beside a steeper landmass, the whole circumference), with the predecessor's
 * region-wide sub-step bound as the negative control; a ring of land around the circumference
 * drains and solves the same from any origin; runs resume exactly; progress can cancel; bad
 * input is refused with the cell named; the kernels' AVX2 copies give the baseline copies' bits. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/simd.h"
#include "jobs/geology/geology.h"
#include "support/tb_geo_test.h"

#define S_LW 1000 /* lattice width: the circumference in cells */
#define S_LH 120

/* Island A straddles the seam (lattice x 985..1034 mod 1000), gentle; island B (x 90..150) is
 * steep, rough and fast, so its hillslope takes the highest sub-step rates. */
static void s_world(const tb_frame_t *box, bool with_b, uint8_t *mask, float *u, float *k, float *h)
{
    size_t n = (size_t)(box->w * box->h);
    memset(mask, 0, n);
    tb_geo_ellipse_u8(box, 10, 60, 25, 30, 1, mask);
    float *noise = tb_geo_floats(box), *rough = tb_geo_floats(box);
    tb_geo_noise(box, 17, 2.0, noise);
    tb_geo_noise(box, 18, 40.0, rough);
    tb_solve_params_t p = tb_geo_default_params();
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++) {
            size_t c = tb_idx(box->w, i, j);
            double x = (double)tb_frame_lattice_x(box, i);
            u[c] = (float)(2e-4 * (1 + 0.5 * sin(x / 7.0)));
            k[c] = (float)p.k;
            h[c] = noise[c];
        }
    if (with_b) {
        uint8_t *mb = tb_geo_bytes(box);
        tb_geo_ellipse_u8(box, 120, 60, 30, 40, 1, mb);
        for (size_t c = 0; c < n; c++)
            if (mb[c]) {
                mask[c] = 1;
                u[c] = 3e-3f;
                h[c] = rough[c] + 20;
            }
        free(mb);
    }
    free(noise);
    free(rough);
}

typedef struct {
    tb_frame_t box;
    uint8_t *mask;
    float *u, *k, *h, *area;
    int32_t *outlet_x; /* lattice x of each cell's outlet, -1 fixed */
    tb_geology_phases_t phases;
} s_run_t;

static void s_solve(s_run_t *r, const tb_frame_t *box, bool with_b, int steps,
                    tb_hillslope_bound_t bound)
{
    r->box = *box;
    r->mask = tb_geo_bytes(box);
    r->u = tb_geo_floats(box);
    r->k = tb_geo_floats(box);
    r->h = tb_geo_floats(box);
    s_world(box, with_b, r->mask, r->u, r->k, r->h);
    tb_solve_params_t p = tb_geo_default_params();
    tb_err_t err;
    tb_geology_t *g = tb_geology_new(box, &p, 77, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    tb_geology_options_t o;
    tb_geology_options_defaults(&o);
    o.hillslope_bound = bound;
    tb_geology_set_options(g, &o, NULL);
    ck_assert_msg(tb_geology_run(g, r->mask, r->u, r->k, r->h, 0, steps, NULL, NULL, &err) == 0,
                  "%s", err.msg);
    size_t n = (size_t)(box->w * box->h);
    r->area = tb_geo_floats(box);
    memcpy(r->area, tb_geology_area_m2(g), n * sizeof(float));
    r->outlet_x = malloc(n * sizeof(int32_t));
    const int32_t *basin = tb_geology_basin(g);
    for (size_t c = 0; c < n; c++)
        r->outlet_x[c] = basin[c] < 0 ? -1 : (int32_t)tb_frame_lattice_x(box, basin[c] % box->w);
    tb_geology_phase_times(g, &r->phases);
    tb_geology_destroy(&g);
}

static void s_free(s_run_t *r)
{
    free(r->mask);
    free(r->u);
    free(r->k);
    free(r->h);
    free(r->area);
    free(r->outlet_x);
}

/* Cells of island A (solved in a) whose heights differ between the runs; counts A's cells. */
static size_t s_differ(const s_run_t *a, const s_run_t *b, size_t *cells, bool also_area)
{
    size_t differ = 0;
    *cells = 0;
    for (int64_t j = 0; j < a->box.h; j++)
        for (int64_t i = 0; i < a->box.w; i++) {
            size_t c = tb_idx(a->box.w, i, j);
            if (!a->mask[c])
                continue;
            int64_t d = tb_geo_map(&a->box, i, j, &b->box);
            ck_assert_int_ge(d, 0);
            (*cells)++;
            bool same = memcmp(&a->h[c], &b->h[d], sizeof(float)) == 0;
            if (also_area)
                same = same && memcmp(&a->area[c], &b->area[d], sizeof(float)) == 0 &&
                       a->outlet_x[c] == b->outlet_x[d];
            differ += !same;
        }
    return differ;
}

START_TEST(test_two_frames_agree_about_the_solve)
{
    /* A in its own box (across the seam), in a larger box beside B, and in the box that wraps the
     * whole circumference: 50 steps of default physics give the same bits on every cell of A. */
    tb_frame_t own = tb_geo_box(S_LW, S_LH, 980, 25, 60, 72);
    tb_frame_t beside = tb_geo_box(S_LW, S_LH, 950, 10, 220, 100);
    tb_frame_t ring = tb_geo_box(S_LW, S_LH, 400, 20, S_LW, 82);
    s_run_t a, b, c;
    s_solve(&a, &own, false, 50, TB_HILLSLOPE_BOUND_CELL);
    s_solve(&b, &beside, true, 50, TB_HILLSLOPE_BOUND_CELL);
    s_solve(&c, &ring, true, 50, TB_HILLSLOPE_BOUND_CELL);
    size_t cells;
    ck_assert_uint_eq(s_differ(&a, &b, &cells, true), 0);
    ck_assert_uint_gt(cells, 1500);
    ck_assert_uint_eq(s_differ(&a, &c, &cells, true), 0);
    /* B really is steeper: it drives the highest sub-step rate of the larger boxes. */
    ck_assert_int_gt(b.phases.hillslope_max_rate, a.phases.hillslope_max_rate);
    fprintf(stderr, "two frames: %zu cells of A agree; max hillslope rate %d alone, %d beside B\n",
            cells, a.phases.hillslope_max_rate, b.phases.hillslope_max_rate);
    s_free(&a);
    s_free(&b);
    s_free(&c);
}
END_TEST

START_TEST(test_region_wide_bound_breaks_it)
{
    /* The negative control: bound every cell's sub-steps by the steepest cell of the box (the
     * predecessor's hillslope.go:62) and the landmass next door leaks into A. */
    tb_frame_t own = tb_geo_box(S_LW, S_LH, 980, 25, 60, 72);
    tb_frame_t beside = tb_geo_box(S_LW, S_LH, 950, 10, 220, 100);
    s_run_t a, b;
    s_solve(&a, &own, false, 50, TB_HILLSLOPE_BOUND_BOX);
    s_solve(&b, &beside, true, 50, TB_HILLSLOPE_BOUND_BOX);
    size_t cells, differ = s_differ(&a, &b, &cells, false);
    fprintf(stderr, "region-wide bound: %zu of %zu cells of A differ\n", differ, cells);
    ck_assert_uint_gt(differ, cells / 10);
    s_free(&a);
    s_free(&b);
}
END_TEST

START_TEST(test_a_ring_around_the_planet)
{
    /* Land all the way round: a box that wraps has no west or east edge, so the ring drains only
     * north and south. Solved from two origins, it is the same land. */
    const int64_t lw = 96, lh = 48;
    tb_frame_t a = tb_geo_box(lw, lh, 0, 0, lw, lh), b = tb_geo_box(lw, lh, 37, 0, lw, lh);
    tb_solve_params_t p = tb_geo_default_params();
    float *h[2], *area[2];
    for (int v = 0; v < 2; v++) {
        const tb_frame_t *box = v ? &b : &a;
        uint8_t *mask = tb_geo_bytes(box);
        float *u = tb_geo_floats(box), *k = tb_geo_floats(box);
        h[v] = tb_geo_floats(box);
        tb_geo_noise(box, 5, 1.0, h[v]);
        size_t solved = 0;
        for (int64_t j = 0; j < lh; j++)
            for (int64_t i = 0; i < lw; i++) {
                size_t c = tb_idx(lw, i, j);
                mask[c] = j >= 12 && j < 36;
                u[c] = (float)(3e-4 *
                               (1 + 0.5 * cos(2 * M_PI * (double)tb_frame_lattice_x(box, i) / lw)));
                k[c] = (float)p.k;
                solved += mask[c];
            }
        tb_err_t err;
        tb_geology_t *g = tb_geology_new(box, &p, 5, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ck_assert_msg(tb_geology_run(g, mask, u, k, h[v], 0, 200, NULL, NULL, &err) == 0, "%s",
                      err.msg);
        area[v] = tb_geo_floats(box);
        memcpy(area[v], tb_geology_area_m2(g), (size_t)(lw * lh) * sizeof(float));
        const int32_t *basin = tb_geology_basin(g);
        double sea = 0;
        for (size_t c = 0; c < (size_t)(lw * lh); c++) {
            if (mask[c]) {
                ck_assert(isfinite(h[v][c]) && h[v][c] > 0);
                ck_assert_int_ge(basin[c], 0);
                ck_assert(!mask[basin[c]]);
            } else {
                ck_assert(h[v][c] == 0);
                sea += area[v][c];
            }
        }
        ck_assert_double_lt(fabs(sea / ((double)solved * 64) - 1), 1e-5); /* drainage closes */
        tb_geology_destroy(&g);
        free(mask);
        free(u);
        free(k);
    }
    for (int64_t j = 0; j < lh; j++)
        for (int64_t i = 0; i < lw; i++) {
            int64_t d = tb_geo_map(&a, i, j, &b);
            size_t c = tb_idx(lw, i, j);
            ck_assert(memcmp(&h[0][c], &h[1][d], sizeof(float)) == 0);
            ck_assert(memcmp(&area[0][c], &area[1][d], sizeof(float)) == 0);
        }
    for (int v = 0; v < 2; v++) {
        free(h[v]);
        free(area[v]);
    }
}
END_TEST

static int s_stop_at(void *ud, int64_t step_done)
{
    int64_t *stop = ud;
    stop[1] = step_done;
    return step_done >= stop[0];
}

START_TEST(test_resume_and_cancel)
{
    tb_frame_t box = tb_geo_box(S_LW, S_LH, 980, 25, 60, 72);
    size_t n = (size_t)(box.w * box.h);
    uint8_t *mask = tb_geo_bytes(&box);
    float *u = tb_geo_floats(&box), *k = tb_geo_floats(&box), *h1 = tb_geo_floats(&box),
          *h2 = tb_geo_floats(&box);
    s_world(&box, false, mask, u, k, h1);
    memcpy(h2, h1, n * sizeof(float));
    tb_solve_params_t p = tb_geo_default_params();
    tb_err_t err;
    tb_geology_t *g1 = tb_geology_new(&box, &p, 9, &err), *g2 = tb_geology_new(&box, &p, 9, &err);
    /* 30 steps at once, or 12 then 18 in a fresh solve: the same bits (the step number keys the
     * jitter, not the call). */
    ck_assert_int_eq(tb_geology_run(g1, mask, u, k, h1, 0, 30, NULL, NULL, &err), 0);
    ck_assert_int_eq(tb_geology_run(g2, mask, u, k, h2, 0, 12, NULL, NULL, &err), 0);
    tb_geology_destroy(&g2);
    g2 = tb_geology_new(&box, &p, 9, &err);
    ck_assert_int_eq(tb_geology_run(g2, mask, u, k, h2, 12, 18, NULL, NULL, &err), 0);
    ck_assert(memcmp(h1, h2, n * sizeof(float)) == 0);
    /* Cancel from the progress callback once step 35 is done (it counts absolute steps). */
    int64_t stop[2] = {35, 0};
    ck_assert_int_eq(tb_geology_run(g1, mask, u, k, h1, 30, 20, s_stop_at, stop, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INTERRUPTED);
    ck_assert_int_eq(stop[1], 35);
    /* the cancelled run's heights and areas are those of a run to the same step (its areas are put
     * in the box as the run stops) */
    tb_geology_destroy(&g2);
    g2 = tb_geology_new(&box, &p, 9, &err);
    s_world(&box, false, mask, u, k, h2);
    ck_assert_int_eq(tb_geology_run(g2, mask, u, k, h2, 0, 35, NULL, NULL, &err), 0);
    ck_assert(memcmp(h1, h2, n * sizeof(float)) == 0);
    ck_assert(memcmp(tb_geology_area_m2(g1), tb_geology_area_m2(g2), n * sizeof(float)) == 0);
    size_t land = tb_idx(box.w, 30, 36); /* solved: a cell's area holds its own */
    ck_assert(mask[land]);
    ck_assert(tb_geology_area_m2(g1)[land] >= (float)(box.cell_m * box.cell_m));
    tb_geology_destroy(&g1);
    tb_geology_destroy(&g2);
    free(mask);
    free(u);
    free(k);
    free(h1);
    free(h2);
}
END_TEST

START_TEST(test_bad_input_is_refused)
{
    tb_frame_t box = tb_geo_box(S_LW, S_LH, 980, 25, 60, 72);
    size_t n = (size_t)(box.w * box.h);
    uint8_t *mask = tb_geo_bytes(&box);
    float *u = tb_geo_floats(&box), *k = tb_geo_floats(&box), *h = tb_geo_floats(&box);
    s_world(&box, false, mask, u, k, h);
    tb_solve_params_t p = tb_geo_default_params();
    tb_err_t err;
    tb_geology_t *g = tb_geology_new(&box, &p, 9, &err);
    size_t bad = tb_idx(box.w, 30, 36);
    ck_assert(mask[bad]);
    float *h_ok = tb_geo_floats(&box);
    memcpy(h_ok, h, n * sizeof(float));
    ck_assert_int_eq(tb_geology_run(g, mask, u, k, h_ok, 0, 1, NULL, NULL, &err), 0);
    ck_assert_ptr_nonnull(tb_geology_area_m2(g));
    free(h_ok);
    k[bad] = 0;
    ck_assert_int_eq(tb_geology_run(g, mask, u, k, h, 0, 1, NULL, NULL, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    /* a failed run leaves no maps to be taken for its own */
    ck_assert_ptr_null(tb_geology_area_m2(g));
    ck_assert_ptr_null(tb_geology_basin(g));
    ck_assert_ptr_nonnull(strstr(err.msg, "(30, 36)"));
    ck_assert_ptr_nonnull(strstr(err.msg, "lattice (10, 61)"));
    ck_assert_ptr_nonnull(strstr(err.msg, "K"));
    k[bad] = (float)p.k;
    h[bad] = NAN;
    ck_assert_int_eq(tb_geology_run(g, mask, u, k, h, 0, 1, NULL, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "height"));
    tb_geology_destroy(&g);
    /* Physics and boxes out of range. */
    tb_solve_params_t q = p;
    q.dt_yr = 0;
    ck_assert_ptr_null(tb_geology_new(&box, &q, 1, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "dt_yr"));
    tb_frame_t tiny = tb_geo_box(S_LW, S_LH, 0, 0, 2, 10);
    ck_assert_ptr_null(tb_geology_new(&tiny, &p, 1, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "too small"));
    (void)n;
    free(mask);
    free(u);
    free(k);
    free(h);
}
END_TEST

/* ---- the kernels' two copies (common/simd.h): the hillslope's, the accumulation's, the clamp's
 * ---- */

/* 30 steps of the whole solve on a rough ridge 300 x 64 (rates up to 16, dense and sparse firings,
 * spans wider than a flux block) with TB_SIMD set to `simd` (NULL: unset) when the workspaces are
 * made; the heights into out, the highest hillslope rate into *max_rate. */
static void s_simd_run(const char *simd, float *out, int *max_rate)
{
    const int64_t W = 300, H = 64;
    if (simd)
        setenv("TB_SIMD", simd, 1);
    else
        unsetenv("TB_SIMD");
    tb_frame_t box = tb_geo_box(1000, 100, 600, 20, W, H);
    tb_solve_params_t p = tb_geo_default_params();
    tb_err_t err;
    tb_geology_t *g = tb_geology_new(&box, &p, 1, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    unsetenv("TB_SIMD");
    uint8_t *mask = tb_geo_bytes(&box);
    float *u = tb_geo_floats(&box), *k = tb_geo_floats(&box);
    tb_geo_noise(&box, 8, 12, out);
    for (int64_t j = 0; j < H; j++)
        for (int64_t i = 0; i < W; i++) {
            size_t c = tb_idx(W, i, j);
            mask[c] = 1;
            u[c] = 2e-4f;
            k[c] = (float)p.k;
            out[c] += (float)(0.05 * 8 * (double)(i < W - i ? i : W - i));
        }
    ck_assert_msg(tb_geology_run(g, mask, u, k, out, 0, 30, NULL, NULL, &err) == 0, "%s", err.msg);
    tb_geology_phases_t ph;
    tb_geology_phase_times(g, &ph);
    *max_rate = ph.hillslope_max_rate;
    tb_geology_destroy(&g);
    free(mask);
    free(u);
    free(k);
}

START_TEST(test_the_avx2_copies_give_the_same_bits)
{
    if (!tb_simd_avx2()) {
        fprintf(stderr, "the AVX2 copies: not on this CPU or build, nothing to compare\n");
        return;
    }
    const size_t n = 300 * 64;
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    int ra, rb;
    s_simd_run("sse2", a, &ra);
    s_simd_run(NULL, b, &rb);
    ck_assert_int_ge(ra, 8); /* control: the firings went past rate 1 */
    ck_assert_int_eq(ra, rb);
    for (size_t c = 0; c < n; c++)
        ck_assert_msg(memcmp(&a[c], &b[c], sizeof(float)) == 0, "cell %zu: sse2 %.9g, avx2 %.9g", c,
                      a[c], b[c]);
    free(a);
    free(b);
}
END_TEST

Suite *geology_suite(void)
{
    Suite *s = suite_create("geology");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_two_frames_agree_about_the_solve);
    tcase_add_test(tc, test_region_wide_bound_breaks_it);
    tcase_add_test(tc, test_a_ring_around_the_planet);
    tcase_add_test(tc, test_resume_and_cancel);
    tcase_add_test(tc, test_bad_input_is_refused);
    tcase_add_test(tc, test_the_avx2_copies_give_the_same_bits);
    suite_add_tcase(s, tc);
    return s;
}
