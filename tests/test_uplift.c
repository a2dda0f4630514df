/* The uplift and erodibility fields (jobs/uplift): exact across decompositions and the seam, with a
 * region-local percentile as the negative control; massif share from the planet quantile; no steps
 * at painted edges (raw class rates as the control); the fault envelope, taper, grain, en-echelon
 * split and determinism, with a brute-force rasteriser as the oracle; probes JSON round trip. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/manifest.h"
#include "common/noise.h"
#include "jobs/uplift/faults.h"
#include "jobs/uplift/fbm_window.h"
#include "jobs/region.h"
#include "jobs/uplift/uplift.h"

/* ---- a synthetic planet ---- */

static const char *S_LEGEND =
    "{\"classes\": ["
    "{\"name\": \"lowland\", \"colour\": \"#6f9a4a\", \"kind\": \"land\", \"uplift_mm_yr\": 0.06,"
    " \"k_mult\": 1.0, \"massif\": {\"floor_mm_yr\": 0.012, \"fraction\": 0.18}},"
    "{\"name\": \"highland\", \"colour\": \"#c0a060\", \"kind\": \"land\", \"uplift_mm_yr\": 0.25,"
    " \"k_mult\": 0.8, \"massif\": {\"floor_mm_yr\": 0.1, \"fraction\": 0.5}},"
    "{\"name\": \"range\", \"colour\": \"#a0522d\", \"kind\": \"land\", \"uplift_mm_yr\": 0.4,"
    " \"k_mult\": 0.6},"
    "{\"name\": \"shelf\", \"colour\": \"#7fb2d9\", \"kind\": \"ocean\", \"depth_m\": 60},"
    "{\"name\": \"deep\", \"colour\": \"#1f4e79\", \"kind\": \"ocean\", \"depth_m\": 900}]}";

enum { LOWLAND = 0, HIGHLAND = 1, RANGE = 2, SHELF = 3, DEEP = 4 };

/* 16 km around at 8 m: 2000 cells; 800 rows. Dense faults so every box meets several. */
#define S_W 2000
#define S_H 800

static void s_manifest(tb_manifest_t *m, double circ_km, double cell_m)
{
    tb_manifest_defaults(m);
    m->circumference_km = circ_km;
    m->cell_m = cell_m;
    m->tiles.size_km = circ_km / 2;
    m->tiles.cell_m = cell_m / 4;
    m->faults.per_1000_km2 = 400;
    tb_err_t err;
    ck_assert_msg(tb_legend_parse(S_LEGEND, "legend", &m->legend, &err) == 0, "%s", err.msg);
    ck_assert_msg(tb_manifest_finish(m, &err) == 0, "%s", err.msg);
}

/* Whether (x, y) lies in an ellipse, x measured round the cylinder. */
static double s_ellipse(int64_t lx, int64_t ly, double cx, double cy, double ax, double ay)
{
    double dx = (double)tb_wrap((int64_t)(lx - cx + S_W / 2), S_W) - S_W / 2;
    double dy = (double)ly - cy;
    return dx * dx / (ax * ax) + dy * dy / (ay * ay);
}

/* The painting of the synthetic planet at lattice cell (lx, ly): landmass A (three classes, a
 * straight and a diagonal painted edge), landmass S across the seam (its class edge on the seam),
 * landmass B, shelf round each, deep ocean elsewhere. */
static uint8_t s_class_at(int64_t lx, int64_t ly)
{
    double a = s_ellipse(lx, ly, 600, 400, 250, 180), s = s_ellipse(lx, ly, 0, 300, 150, 120);
    double b = s_ellipse(lx, ly, 1300, 500, 100, 100);
    if (a < 1) {
        if (s_ellipse(lx, ly, 520, 350, 50, 50) < 1)
            return RANGE;
        return (double)lx + 0.5 * (double)ly > 850 ? HIGHLAND : LOWLAND;
    }
    if (s < 1) {
        if (s_ellipse(lx, ly, 60, 260, 30, 30) < 1)
            return RANGE;
        return lx >= S_W / 2 ? LOWLAND : HIGHLAND;
    }
    if (b < 1)
        return LOWLAND;
    return (a < 1.3 || s < 1.3 || b < 1.3) ? SHELF : DEEP;
}

static tb_frame_t s_frame(int64_t x0, int64_t y0, int64_t w, int64_t h)
{
    tb_frame_t f;
    tb_err_t err;
    ck_assert_msg(tb_frame_make(&f, S_W, S_H, 8, x0, y0, w, h, &err) == 0, "%s", err.msg);
    return f;
}

static uint8_t *s_paint(const tb_frame_t *f)
{
    uint8_t *c = malloc((size_t)(f->w * f->h));
    for (int64_t j = 0; j < f->h; j++)
        for (int64_t i = 0; i < f->w; i++)
            c[j * f->w + i] = s_class_at(tb_frame_lattice_x(f, i), tb_frame_lattice_y(f, j));
    return c;
}

typedef struct {
    tb_frame_t f;
    uint8_t *cls;
    float *u, *k, *fault;
} s_run_t;

static void s_run(const tb_manifest_t *m, const tb_uplift_probes_t *p, tb_frame_t f, s_run_t *r)
{
    tb_err_t err;
    size_t n = (size_t)(f.w * f.h);
    r->f = f;
    r->cls = s_paint(&f);
    r->u = malloc(n * sizeof *r->u);
    r->k = malloc(n * sizeof *r->k);
    r->fault = malloc(n * sizeof *r->fault);
    ck_assert_msg(tb_uplift_build(m, p, &f, r->cls, r->u, r->k, &err) == 0, "%s", err.msg);
    ck_assert_msg(tb_uplift_fault_rate(m, &f, r->fault, &err) == 0, "%s", err.msg);
}

static void s_run_free(s_run_t *r)
{
    free(r->cls);
    free(r->u);
    free(r->k);
    free(r->fault);
}

/* Cells of `small` whose bits differ in `big`, for U, K and the fault throw; land cells counted. */
static void s_compare(const s_run_t *small, const s_run_t *big, size_t *diff_u, size_t *diff_k,
                      size_t *diff_f, size_t *land, double *fault_sum)
{
    *diff_u = *diff_k = *diff_f = *land = 0;
    *fault_sum = 0;
    for (int64_t j = 0; j < small->f.h; j++)
        for (int64_t i = 0; i < small->f.w; i++) {
            int64_t bi = tb_frame_local_x(&big->f, tb_frame_lattice_x(&small->f, i));
            int64_t bj = tb_frame_lattice_y(&small->f, j) - big->f.y0;
            ck_assert(bi >= 0 && bj >= 0 && bj < big->f.h);
            size_t s = (size_t)(j * small->f.w + i), b = (size_t)(bj * big->f.w + bi);
            ck_assert_int_eq(small->cls[s], big->cls[b]);
            *land += small->cls[s] <= RANGE;
            *diff_u += memcmp(&small->u[s], &big->u[b], sizeof(float)) != 0;
            *diff_k += memcmp(&small->k[s], &big->k[b], sizeof(float)) != 0;
            *diff_f += memcmp(&small->fault[s], &big->fault[b], sizeof(float)) != 0;
            *fault_sum += small->cls[s] <= RANGE ? small->fault[s] : 0;
        }
}

static tb_uplift_probes_t s_probes(const tb_manifest_t *m)
{
    tb_uplift_probes_t p;
    tb_err_t err;
    ck_assert_msg(tb_uplift_probes_compute(m, &p, &err) == 0, "%s", err.msg);
    return p;
}

/* ---- two frames agree ---- */

static void s_assert_agree(const tb_manifest_t *m, const tb_uplift_probes_t *p, tb_frame_t small_f,
                           tb_frame_t big_f, const char *what)
{
    s_run_t small, big;
    s_run(m, p, small_f, &small);
    s_run(m, p, big_f, &big);
    size_t du, dk, df, land;
    double fsum;
    s_compare(&small, &big, &du, &dk, &df, &land, &fsum);
    ck_assert_msg(land > 10000, "%s: only %zu land cells", what, land);
    ck_assert_msg(fsum > 0, "%s: no fault throw on land; the test would not see faults", what);
    fprintf(stderr, "%s: %lld cells (%zu land) bit-identical in U, K and fault throw\n", what,
            (long long)(small_f.w * small_f.h), land);
    ck_assert_msg(du == 0 && dk == 0 && df == 0,
                  "%s: %zu U, %zu K and %zu fault cells differ in bits of %lld", what, du, dk, df,
                  (long long)(small_f.w * small_f.h));
    s_run_free(&small);
    s_run_free(&big);
}

START_TEST(test_two_frames_agree_about_the_same_ground)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_uplift_probes_t p = s_probes(&m);
    /* Landmass A: its region box (land grown by the 50-cell margin) against a larger box. */
    s_assert_agree(&m, &p, s_frame(300, 170, 600, 460), s_frame(250, 100, 1200, 620), "region A");
    /* Landmass S across the seam: a straddling box against the full-width (wrapping) band and
     * against another straddling box. */
    s_assert_agree(&m, &p, s_frame(S_W - 200, 130, 400, 340), s_frame(0, 100, S_W, 420), "seam");
    s_assert_agree(&m, &p, s_frame(S_W - 200, 130, 400, 340), s_frame(S_W - 300, 120, 700, 360),
                   "seam, two straddling boxes");
}
END_TEST

static int s_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

START_TEST(test_any_box_is_exact_where_it_holds_the_neighbourhood)
{
    /* Boxes cut anywhere (through land, strips aligned differently): every cell at least R from
     * the box's own edges - whose blend square lies in the box - has the bits of the big box. */
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_uplift_probes_t p = s_probes(&m);
    const int64_t R = tb_uplift_blend_radius_cells(8);
    s_run_t big;
    s_run(&m, &p, s_frame(0, 100, S_W, 620), &big);
    size_t land_total = 0;
    for (int t = 0; t < 6; t++) {
        uint64_t h = tb_hash(3, TB_SALT_TEST, t, 0, 0);
        int64_t w = 100 + (int64_t)(h % 300), hh = 90 + (int64_t)((h >> 16) % 200);
        int64_t x0 = (int64_t)((h >> 32) % S_W), y0 = 100 + (int64_t)((h >> 48) % (620 - hh));
        s_run_t small;
        s_run(&m, &p, s_frame(x0, y0, w, hh), &small);
        size_t compared = 0, differ = 0, land = 0;
        for (int64_t j = R; j < hh - R; j++)
            for (int64_t i = R; i < w - R; i++) {
                int64_t bi = tb_frame_local_x(&big.f, tb_frame_lattice_x(&small.f, i));
                size_t a = (size_t)(j * w + i), b = (size_t)((y0 + j - big.f.y0) * big.f.w + bi);
                differ += memcmp(&small.u[a], &big.u[b], 4) != 0 ||
                          memcmp(&small.k[a], &big.k[b], 4) != 0;
                land += small.cls[a] <= RANGE;
                compared++;
            }
        ck_assert_msg(differ == 0, "box %d (%lld, %lld, %lld x %lld): %zu of %zu cells differ", t,
                      (long long)x0, (long long)y0, (long long)w, (long long)hh, differ, compared);
        land_total += land;
        s_run_free(&small);
    }
    ck_assert_msg(land_total > 10000, "the random boxes held only %zu land cells", land_total);
    s_run_free(&big);
}
END_TEST

/* Region-local probes: the quantile table of the fabric over the box's own land cells. */
static void s_local_probes(const tb_manifest_t *m, const tb_uplift_probes_t *planet, tb_frame_t f,
                           tb_uplift_probes_t *local)
{
    *local = *planet;
    uint8_t *cls = s_paint(&f);
    double *v = malloc((size_t)(f.w * f.h) * sizeof *v);
    size_t n = 0;
    for (int64_t j = 0; j < f.h; j++)
        for (int64_t i = 0; i < f.w; i++)
            if (cls[j * f.w + i] <= RANGE)
                v[n++] =
                    tb_uplift_massif_value(m, tb_frame_world_x_m(&f, i), tb_frame_world_y_m(&f, j));
    qsort(v, n, sizeof *v, s_cmp);
    for (int k = 0; k < TB_UPLIFT_PROBE_LEVELS; k++)
        local->massif_q[k] =
            v[(size_t)((double)k / (TB_UPLIFT_PROBE_LEVELS - 1) * (double)(n - 1))];
    free(v);
    free(cls);
}

START_TEST(test_a_region_percentile_breaks_the_agreement)
{
    /* Negative control (docs/traps.md): the massif cut as a percentile of the region's own
     * land puts the same hillside on different sides of the cut in two boxes. */
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_uplift_probes_t planet = s_probes(&m), ps, pb;
    tb_frame_t fs = s_frame(300, 170, 600, 460), fb = s_frame(250, 100, 1200, 620);
    s_local_probes(&m, &planet, fs, &ps);
    s_local_probes(&m, &planet, fb, &pb);
    s_run_t small, big;
    s_run(&m, &ps, fs, &small);
    s_run(&m, &pb, fb, &big);
    size_t du, dk, df, land;
    double fsum;
    s_compare(&small, &big, &du, &dk, &df, &land, &fsum);
    fprintf(stderr, "region-local percentile: %zu of %zu land cells differ between the boxes\n", du,
            land);
    ck_assert_msg(du > land / 10, "region-local cut: only %zu of %zu land cells differ", du, land);
    s_run_free(&small);
    s_run_free(&big);
}
END_TEST

START_TEST(test_windowed_fbm_is_the_noise_bit_for_bit)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_noise_t n;
    ck_assert_int_eq(tb_noise_init(&n, 9342, TB_SALT_MASSIF, 16000, 2500, NULL), 0);
    const tb_frame_t frames[2] = {s_frame(S_W - 70, 10, 140, 90), s_frame(0, 700, S_W, 3)};
    for (int fi = 0; fi < 2; fi++) {
        tb_fbm_window_t win;
        tb_err_t err;
        const tb_frame_t *f = &frames[fi];
        ck_assert_msg(tb_fbm_window_init(&win, &n, 4, 0.5, f, 0, f->w, 0, f->h, &err) == 0, "%s",
                      err.msg);
        size_t differ = 0;
        for (int64_t j = 0; j < f->h; j++)
            for (int64_t i = 0; i < f->w; i++) {
                double a = tb_fbm_window_eval(&win, i, j);
                double b =
                    tb_noise_fbm(&n, tb_frame_world_x_m(f, i), tb_frame_world_y_m(f, j), 4, 0.5);
                differ += memcmp(&a, &b, sizeof a) != 0;
            }
        ck_assert_msg(differ == 0, "frame %d: %zu cells differ from tb_noise_fbm", fi, differ);
        tb_fbm_window_free(&win);
    }
}
END_TEST

/* ---- massifs ---- */

/* Mean massif weight of a class painted over rows y0..y0+h-1 of the whole circumference. */
static double s_share(const tb_manifest_t *m, const tb_uplift_probes_t *p, int cls, int64_t y0,
                      int64_t h, int64_t lattice_h)
{
    tb_frame_t f;
    tb_err_t err;
    ck_assert(tb_frame_make(&f, m->planet_w, lattice_h, m->cell_m, 0, y0, m->planet_w, h, &err) ==
              0);
    size_t n = (size_t)(f.w * f.h);
    uint8_t *c = malloc(n);
    float *u = malloc(n * sizeof *u), *k = malloc(n * sizeof *k);
    memset(c, cls, n);
    ck_assert_msg(tb_uplift_build(m, p, &f, c, u, k, &err) == 0, "%s", err.msg);
    const tb_class_t *lc = &m->legend.classes[cls];
    double lo = lc->massif_floor_mm_yr * 1e-3, hi = lc->uplift_mm_yr * 1e-3, sum = 0;
    for (size_t q = 0; q < n; q++)
        sum += ((double)u[q] - lo) / (hi - lo);
    free(c);
    free(u);
    free(k);
    return sum / (double)n;
}

START_TEST(test_massif_share_is_the_class_fraction)
{
    /* 25 km round at 25 m cells, no faults: the whole probe band (y < C/2), and a band of the
     * planet the probe never sampled. */
    tb_manifest_t m;
    s_manifest(&m, 25, 25);
    m.faults.per_1000_km2 = 0;
    tb_uplift_probes_t p = s_probes(&m);
    double low = s_share(&m, &p, LOWLAND, 0, 500, 1000),
           high = s_share(&m, &p, HIGHLAND, 0, 500, 1000);
    ck_assert_msg(fabs(low - 0.18) < 0.01, "lowland share %.4f, fraction 0.18", low);
    ck_assert_msg(fabs(high - 0.5) < 0.01, "highland share %.4f, fraction 0.5", high);
    double low2 = s_share(&m, &p, LOWLAND, 500, 500, 1000);
    double high2 = s_share(&m, &p, HIGHLAND, 500, 500, 1000);
    ck_assert_msg(fabs(low2 - 0.18) < 0.05, "lowland share off the probe %.4f, fraction 0.18",
                  low2);
    ck_assert_msg(fabs(high2 - 0.5) < 0.05, "highland share off the probe %.4f, fraction 0.5",
                  high2);
    fprintf(stderr, "massif share: lowland %.4f / %.4f (0.18), highland %.4f / %.4f (0.5)\n", low,
            low2, high, high2);
}
END_TEST

START_TEST(test_massif_weight_and_rank)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_uplift_probes_t p = s_probes(&m);
    for (int k = 0; k < TB_UPLIFT_PROBE_LEVELS; k += 64)
        ck_assert_double_eq_tol(tb_uplift_rank(p.massif_q, p.massif_q[k]),
                                (double)k / (TB_UPLIFT_PROBE_LEVELS - 1), 1e-9);
    ck_assert_double_eq(tb_uplift_rank(p.massif_q, -10), 0);
    ck_assert_double_eq(tb_uplift_rank(p.massif_q, 10), 1);
    /* Weight: 0 below the band, 1 above, 0.5 at the cut, and its mean over uniform rank is f. */
    const double fr[3] = {0.05, 0.18, 0.5};
    for (int t = 0; t < 3; t++) {
        double f = fr[t], mean = 0;
        ck_assert_double_eq_tol(tb_uplift_massif_weight(1 - f, f), 0.5, 1e-12);
        ck_assert_double_eq(tb_uplift_massif_weight(0, f), 0);
        ck_assert_double_eq(tb_uplift_massif_weight(1, f), 1);
        const int n = 1000000;
        for (int i = 0; i < n; i++)
            mean += tb_uplift_massif_weight((i + 0.5) / n, f);
        ck_assert_double_eq_tol(mean / n, f, 1e-6);
    }
    ck_assert_double_eq(tb_uplift_massif_weight(0.3, 1), 1);
    ck_assert_double_eq(tb_uplift_massif_weight(0.9, 0), 0);
}
END_TEST

/* ---- no steps ---- */

/* The largest 8-neighbour |dU| over cells at least `inset` from the box edge whose neighbours are
 * all land. */
static double s_max_step(const float *u, const uint8_t *c, int64_t w, int64_t h, int64_t inset)
{
    double worst = 0;
    for (int64_t j = inset; j < h - inset; j++)
        for (int64_t i = inset; i < w - inset; i++)
            for (int k = 0; k < 8; k++) {
                int64_t ni = i + tb_nb_dx[k], nj = j + tb_nb_dy[k];
                if (c[j * w + i] > RANGE || c[nj * w + ni] > RANGE)
                    continue;
                worst = fmax(worst, fabs((double)u[j * w + i] - (double)u[nj * w + ni]));
            }
    return worst;
}

/* The peak weight of the normalised 1-D blend kernel: three box sums of 2r + 1 cells. */
static double s_kernel_peak(int64_t r)
{
    int64_t len = 6 * r + 1;
    double *ker = calloc((size_t)len, sizeof *ker), *tmp = calloc((size_t)len, sizeof *tmp);
    ker[0] = 1;
    for (int pass = 0; pass < 3; pass++) {
        for (int64_t i = 0; i < len; i++) {
            tmp[i] = 0;
            for (int64_t d = 0; d <= 2 * r; d++)
                tmp[i] += i - d >= 0 ? ker[i - d] : 0;
        }
        memcpy(ker, tmp, (size_t)len * sizeof *ker);
    }
    double peak = 0, total = 0;
    for (int64_t i = 0; i < len; i++) {
        peak = fmax(peak, ker[i]);
        total += ker[i];
    }
    free(ker);
    free(tmp);
    return peak / total;
}

START_TEST(test_no_steps_at_painted_edges)
{
    /* Two uniform classes (no massifs, no faults) meeting along a straight and a diagonal edge. */
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    m.faults.per_1000_km2 = 0;
    m.legend.classes[LOWLAND].massif_fraction = 1;
    m.legend.classes[LOWLAND].massif_floor_mm_yr = m.legend.classes[LOWLAND].uplift_mm_yr;
    tb_uplift_probes_t p = s_probes(&m);
    tb_frame_t f = s_frame(100, 100, 400, 400);
    size_t n = (size_t)(f.w * f.h);
    uint8_t *c = malloc(n);
    float *u = malloc(n * sizeof *u), *k = malloc(n * sizeof *k), *raw = malloc(n * sizeof *raw);
    for (int64_t j = 0; j < f.h; j++)
        for (int64_t i = 0; i < f.w; i++)
            c[j * f.w + i] = (j < 200 ? i < 200 : i + j < 450) ? LOWLAND : RANGE;
    tb_err_t err;
    ck_assert_msg(tb_uplift_build(&m, &p, &f, c, u, k, &err) == 0, "%s", err.msg);
    for (size_t q = 0; q < n; q++)
        raw[q] = (float)(m.legend.classes[c[q]].uplift_mm_yr * 1e-3);
    /* Bound: across a straight edge the blend weight moves by at most the peak of the 1-D kernel
     * (three boxes of 2r+1) per cell, twice that for a diagonal step. */
    int64_t R = tb_uplift_blend_radius_cells(8);
    double peak = s_kernel_peak(R / 3);
    double du = (0.4 - 0.06) * 1e-3, bound = du * 2 * peak;
    double blended = s_max_step(u, c, f.w, f.h, R + 1),
           stepped = s_max_step(raw, c, f.w, f.h, R + 1);
    fprintf(stderr,
            "no steps: R %lld cells, largest 8-neighbour dU %.3g m/yr, bound %.3g (2 x kernel peak "
            "%.4f = %.2f dU cell/R), raw class rates %.3g\n",
            (long long)R, blended, bound, peak, 2 * peak * (double)R, stepped);
    ck_assert_msg(blended <= bound * (1 + 1e-6), "blended step %g over the bound %g", blended,
                  bound);
    ck_assert_msg(stepped > 5 * bound, "negative control: raw rates step only %g", stepped);
    /* Far from the edge each class keeps its own rate exactly (a blend, not a blur of everything).
     */
    ck_assert_float_eq(u[50 * f.w + 50], (float)0.06e-3);
    ck_assert_float_eq(u[350 * f.w + 350], (float)0.4e-3);
    free(c);
    free(u);
    free(k);
    free(raw);
}
END_TEST

START_TEST(test_no_steps_anywhere_on_the_synthetic_planet)
{
    /* Massifs, rock and faults together on the synthetic planet. Bound per 8-neighbour pair: the
     * painted-edge blend (largest class rate gap 0.4 - 0.012 mm/yr times twice the kernel peak),
     * plus the massif ramp (measured at most 8 % of floor-to-peak per cell over a uniform class at
     * fraction 0.5: 0.1 x 0.15 mm/yr allowed), plus the faults (peak x max |envelope'| 1.54/w x
     * cell, for up to four overlapping traces). */
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_uplift_probes_t p = s_probes(&m);
    s_run_t r;
    s_run(&m, &p, s_frame(250, 100, 1200, 620), &r);
    double worst = s_max_step(r.u, r.cls, r.f.w, r.f.h, 1);
    double edge = 0.388e-3 * 2 * s_kernel_peak(tb_uplift_blend_radius_cells(8) / 3);
    double bound = edge + 0.1 * 0.15e-3 + 4 * 0.05e-3 * 1.54 * 8 / 1000;
    fprintf(stderr,
            "no steps: largest 8-neighbour dU on the synthetic planet %.3g m/yr, bound %.3g "
            "(%.2f %% of the 0.4 mm/yr range class)\n",
            worst, bound, 100 * worst / 0.4e-3);
    ck_assert_msg(worst <= bound, "largest step %g m/yr over the bound %g", worst, bound);
    s_run_free(&r);
}
END_TEST

/* ---- rock ---- */

START_TEST(test_rock_multiplier_bands_and_softness)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    double lo = m.rock.k_min_mult, hi = m.rock.k_max_mult;
    double prev = tb_uplift_rock_mult(&m, 0), worst_jump = 0;
    int distinct_near_edges = 0;
    for (int i = 1; i <= 100000; i++) {
        double r = i / 100000.0, v = tb_uplift_rock_mult(&m, r);
        ck_assert(v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12));
        worst_jump = fmax(worst_jump, fabs(v - prev));
        prev = v;
    }
    /* Softened: the largest change over 1e-5 of rank is far below the ladder's step. */
    ck_assert_msg(worst_jump < 0.01 * (hi - lo), "soft rock jumps %g", worst_jump);
    m.rock.softness = 0;
    double hard_jump = 0;
    prev = tb_uplift_rock_mult(&m, 0);
    for (int i = 1; i <= 100000; i++) {
        double v = tb_uplift_rock_mult(&m, i / 100000.0);
        hard_jump = fmax(hard_jump, fabs(v - prev));
        distinct_near_edges += v != prev;
        prev = v;
    }
    ck_assert_msg(hard_jump > 0.1 * (hi - lo), "softness 0 should be a hard boundary (%g)",
                  hard_jump);
    ck_assert_int_eq(distinct_near_edges, TB_UPLIFT_ROCK_TYPES - 1);
}
END_TEST

/* ---- faults ---- */

START_TEST(test_fault_envelope_reaches_zero_with_zero_gradient)
{
    const double w = 1000;
    ck_assert_double_eq(tb_fault_envelope(0, w), 1);
    ck_assert_double_eq(tb_fault_envelope(w, w), 0);
    ck_assert_double_eq(tb_fault_envelope(1.5 * w, w), 0);
    const double h = 1e-3 * w;
    double slope_out = (tb_fault_envelope(w, w) - tb_fault_envelope(w - h, w)) / h * w;
    double slope_in = (tb_fault_envelope(h, w) - tb_fault_envelope(0, w)) / h * w;
    ck_assert_msg(fabs(slope_out) < 0.01, "slope at the width %g (per width)", slope_out);
    ck_assert_msg(fabs(slope_in) < 0.01, "slope on the trace %g (per width)", slope_in);
    double jump = tb_fault_envelope(w - 1e-9, w);
    ck_assert_msg(jump < 1e-12, "value just inside the width %g", jump);
    /* Negative control: the exponential cut off at three lengths (docs/traps.md) steps. */
    double exp_inside = exp(-(w - 1e-9) / (w / 3)), exp_slope = exp_inside / (w / 3) * w;
    ck_assert_msg(exp_inside > 0.04 && exp_slope > 0.1,
                  "control: an exponential cut at 3 lengths should leave %g and slope %g",
                  exp_inside, exp_slope);
}
END_TEST

START_TEST(test_fault_taper_over_the_last_sixth)
{
    const double L = 6000;
    ck_assert_double_eq(tb_fault_taper(0, L), 0);
    ck_assert_double_eq(tb_fault_taper(L, L), 0);
    ck_assert_double_eq(tb_fault_taper(L / 6, L), 1);
    ck_assert_double_eq(tb_fault_taper(L / 2, L), 1);
    ck_assert_double_eq(tb_fault_taper(5 * L / 6, L), 1);
    ck_assert_double_eq_tol(tb_fault_taper(L / 12, L), 0.5, 1e-12);
    ck_assert(tb_fault_taper(L / 7, L) < 1 && tb_fault_taper(L / 7, L) > 0.9);
    double h = 1e-3;
    ck_assert_msg(tb_fault_taper(h, L) / h < 1e-6, "taper slope at the tip");
}
END_TEST

/* The fault throw of one fault at every cell of a box, by brute force: nearest point over every
 * segment of the polyline, every image. */
static void s_brute_fault(const tb_fault_t *f, const tb_frame_t *box, double *out)
{
    double W_m = (double)box->lattice_w * box->cell_m;
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++) {
            double py = tb_frame_world_y_m(box, j), sum = 0;
            for (int img = -1; img <= 1; img++) {
                double px = tb_frame_world_x_m(box, i) + img * W_m, best = INFINITY, arc = 0;
                for (size_t s = 0; s + 1 < f->n; s++) {
                    double ax = f->x[s], ay = f->y[s], dx = f->x[s + 1] - ax, dy = f->y[s + 1] - ay;
                    double l2 = dx * dx + dy * dy, t = ((px - ax) * dx + (py - ay) * dy) / l2;
                    t = t < 0 ? 0 : (t > 1 ? 1 : t);
                    double ex = px - ax - t * dx, ey = py - ay - t * dy, d2 = ex * ex + ey * ey;
                    if (d2 < best) {
                        best = d2;
                        arc = f->s[s] + t * sqrt(l2);
                    }
                }
                sum += f->peak_m_yr * tb_fault_taper(arc, f->length_m) *
                       tb_fault_envelope(sqrt(best), f->half_width_m);
            }
            out[j * box->w + i] = sum;
        }
}

START_TEST(test_fault_raster_matches_brute_force)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    m.faults.width_km = 0.4;
    tb_frame_t big = s_frame(S_W - 600, 0, 1200, S_H);
    tb_fault_t *faults;
    size_t n;
    tb_err_t err;
    ck_assert_msg(tb_faults_collect(&m, &big, &faults, &n, &err) == 0, "%s", err.msg);
    ck_assert_msg(n >= 3, "only %zu faults", n);
    int checked = 0;
    for (size_t fi = 0; fi < n && checked < 3; fi++) {
        const tb_fault_t *f = &faults[fi];
        /* A box round the fault's middle, straddling the seam when the fault does. */
        int64_t cx = (int64_t)floor(f->x[f->n / 2] / 8), cy = (int64_t)floor(f->y[f->n / 2] / 8);
        if (cy < 150 || cy > S_H - 150)
            continue;
        tb_frame_t box = s_frame(cx - 150, cy - 150, 300, 300);
        size_t cells = 300 * 300;
        float *fast = calloc(cells, sizeof *fast);
        double *slow = malloc(cells * sizeof *slow);
        ck_assert(tb_faults_rasterise(f, 1, &box, fast, &err) == 0);
        s_brute_fault(f, &box, slow);
        double worst = 0, peak = 0;
        for (size_t q = 0; q < cells; q++) {
            worst = fmax(worst, fabs((double)fast[q] - slow[q]));
            peak = fmax(peak, slow[q]);
            if (slow[q] == 0)
                ck_assert_msg(fast[q] == 0, "cell %zu beyond the width has %g", q, fast[q]);
        }
        ck_assert_msg(peak > 0.5 * f->peak_m_yr, "fault %zu: box misses the trace", fi);
        ck_assert_msg(worst <= 1e-6 * f->peak_m_yr, "fault %zu: raster differs by %g of peak %g",
                      fi, worst, f->peak_m_yr);
        free(fast);
        free(slow);
        checked++;
    }
    ck_assert_int_eq(checked, 3);
    tb_faults_free(&faults, n);
}
END_TEST

/* Mean axial |segment heading - grain strike| over every segment of every fault in a box, with the
 * grain of manifest g. */
static double s_grain_misfit(const tb_fault_t *faults, size_t n, const tb_manifest_t *g)
{
    double sum = 0;
    size_t count = 0;
    for (size_t fi = 0; fi < n; fi++)
        for (size_t s = 0; s + 1 < faults[fi].n; s++) {
            const tb_fault_t *f = &faults[fi];
            double h = atan2(f->y[s + 1] - f->y[s], f->x[s + 1] - f->x[s]);
            double g0 = tb_uplift_grain_strike(g, 0.5 * (f->x[s] + f->x[s + 1]),
                                               0.5 * (f->y[s] + f->y[s + 1]));
            double d = h - g0;
            d -= M_PI * round(d / M_PI);
            sum += fabs(d);
            count++;
        }
    return sum / (double)count;
}

START_TEST(test_faults_follow_the_grain)
{
    tb_manifest_t m, other;
    s_manifest(&m, 16, 8);
    other = m;
    other.seed = m.seed + 1;
    tb_frame_t box = s_frame(0, 0, S_W, S_H);
    tb_fault_t *faults;
    size_t n;
    tb_err_t err;
    ck_assert(tb_faults_collect(&m, &box, &faults, &n, &err) == 0);
    ck_assert_msg(n > 20, "only %zu faults", n);
    double own = s_grain_misfit(faults, n, &m), wrong = s_grain_misfit(faults, n, &other);
    fprintf(stderr,
            "grain: mean |strike - grain| %.3f rad over %zu traces; against another "
            "seed's grain %.3f\n",
            own, n, wrong);
    ck_assert_msg(own < 0.25, "traces stray %g rad from the grain", own);
    ck_assert_msg(wrong > 0.5, "control: another grain fits too well (%g)", wrong);
    tb_faults_free(&faults, n);
}
END_TEST

START_TEST(test_long_faults_break_en_echelon)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    m.faults.length_min_km = 20;
    m.faults.length_max_km = 30;
    tb_fault_t *faults = NULL;
    size_t n = 0;
    tb_err_t err;
    for (int64_t cy = 0; cy < 4; cy++)
        for (int64_t cx = 0; cx < 4; cx++)
            ck_assert(tb_faults_seed_cell(&m, cx, cy, &faults, &n, &err) == 0);
    ck_assert_msg(n > 4, "only %zu segments", n);
    for (size_t i = 0; i < n; i++) {
        const tb_fault_t *f = &faults[i];
        int expect = (int)ceil(f->trace_length_m / 12000.0);
        ck_assert_int_eq(f->segments, expect);
        ck_assert(f->segments >= 2);
        ck_assert_msg(f->length_m <= 12000 * (1 + 2 * TB_FAULT_OVERLAP) + 1e-6, "segment %g m",
                      f->length_m);
        /* Adjacent segments are side by side, not one line: the start of segment i+1 lies about a
         * half-width off segment i's trace. */
        if (i + 1 < n && faults[i + 1].index == f->index && faults[i + 1].cell_x == f->cell_x &&
            faults[i + 1].cell_y == f->cell_y) {
            const tb_fault_t *g = &faults[i + 1];
            double best = INFINITY;
            for (size_t v = 0; v < f->n; v++)
                best = fmin(best, hypot(f->x[v] - g->x[0], f->y[v] - g->y[0]));
            ck_assert_msg(best > 0.5 * f->half_width_m && best < 2 * f->half_width_m,
                          "segment offset %g m for half-width %g", best, f->half_width_m);
        }
    }
    tb_faults_free(&faults, n);
    /* Short traces stay whole. */
    s_manifest(&m, 16, 8);
    n = 0;
    for (int64_t cy = 0; cy < 4; cy++)
        for (int64_t cx = 0; cx < 4; cx++)
            ck_assert(tb_faults_seed_cell(&m, cx, cy, &faults, &n, &err) == 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(faults[i].segments, 1);
    tb_faults_free(&faults, n);
}
END_TEST

START_TEST(test_faults_are_deterministic_per_seed)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_frame_t box = s_frame(500, 200, 600, 400);
    tb_polyline_t *a, *b, *c;
    size_t na, nb, nc;
    tb_err_t err;
    ck_assert(tb_uplift_fault_traces(&m, &box, &a, &na, &err) == 0);
    ck_assert(tb_uplift_fault_traces(&m, &box, &b, &nb, &err) == 0);
    ck_assert_int_eq(na, nb);
    ck_assert(na > 0);
    for (size_t i = 0; i < na; i++) {
        ck_assert_int_eq(a[i].n, b[i].n);
        ck_assert(memcmp(a[i].xy, b[i].xy, 2 * a[i].n * sizeof(double)) == 0);
    }
    m.seed += 1;
    ck_assert(tb_uplift_fault_traces(&m, &box, &c, &nc, &err) == 0);
    int same = nc == na;
    for (size_t i = 0; same && i < na; i++)
        same = a[i].n == c[i].n && memcmp(a[i].xy, c[i].xy, 2 * a[i].n * sizeof(double)) == 0;
    ck_assert_msg(!same, "seed + 1 gave the same traces");
    tb_uplift_traces_destroy(&a, na);
    tb_uplift_traces_destroy(&b, nb);
    tb_uplift_traces_destroy(&c, nc);
    ck_assert_ptr_null(a);
}
END_TEST

START_TEST(test_fault_density_matches_the_manifest)
{
    /* Seeds over the whole cylinder: the count per area is per_1000_km2. */
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    int64_t around;
    double lat = tb_faults_lattice_m(&m, &around);
    size_t seeds = 0;
    const int64_t rows = 400;
    for (int64_t cy = 0; cy < rows; cy++)
        for (int64_t cx = 0; cx < around; cx++) {
            tb_fault_t *f = NULL;
            size_t n = 0;
            ck_assert(tb_faults_seed_cell(&m, cx, cy, &f, &n, NULL) == 0);
            for (size_t i = 0; i < n; i++)
                seeds += f[i].segment == 0;
            tb_faults_free(&f, n);
        }
    double area_km2 = (double)around * (double)rows * lat * lat * 1e-6;
    double per = (double)seeds / area_km2 * 1000;
    ck_assert_msg(fabs(per - 400) < 400 * 0.1, "%.1f faults per 1000 km2, manifest 400", per);
}
END_TEST

/* ---- probes and errors ---- */

START_TEST(test_probes_json_round_trip_is_exact)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_uplift_probes_t p = s_probes(&m), q;
    char *json = tb_uplift_probes_to_json(&p);
    ck_assert_ptr_nonnull(json);
    tb_err_t err;
    ck_assert_msg(tb_uplift_probes_from_json(json, &q, &err) == 0, "%s", err.msg);
    ck_assert(memcmp(&p, &q, sizeof p) == 0);
    /* The quantiles depend on the seed, never on a region: recomputing gives the same bits. */
    tb_uplift_probes_t again = s_probes(&m);
    ck_assert(memcmp(&p, &again, sizeof p) == 0);
    /* A tampered table is refused with its key. */
    char *bad = strstr(json, "\"rock_quantiles\": [");
    ck_assert_ptr_nonnull(bad);
    memcpy(bad + strlen("\"rock_quantiles\": ["), "99", 2);
    ck_assert_int_eq(tb_uplift_probes_from_json(json, &q, &err), -1);
    ck_assert_msg(strstr(err.msg, "rock_quantiles") != NULL, "%s", err.msg);
    free(json);
    ck_assert_int_eq(tb_uplift_probes_from_json("{\"version\": 1}", &q, &err), -1);
    ck_assert_int_eq(tb_uplift_probes_from_json("[1, 2]", &q, &err), -1);
}
END_TEST

START_TEST(test_a_worker_accepts_the_spec_at_every_circumference)
{
    /* The spec a worker decodes must carry the probes' planet exactly: at 100 km the rock
     * wavelength (100 km / 33) lost its last bit in the spec's JSON once, and every region was
     * refused on every worker (issue 22). tb_region_spec_selfcheck is the plan's check of it. */
    const double circ_km[] = {8, 24, 32, 50, 100, 104, 200, 300, 1232};
    for (size_t i = 0; i < sizeof circ_km / sizeof circ_km[0]; i++) {
        tb_manifest_t m;
        s_manifest(&m, circ_km[i], 8);
        tb_uplift_probes_t p = s_probes(&m);
        tb_err_t err;
        ck_assert_msg(tb_region_spec_selfcheck(&m, &p, 100, &err) == 0, "%g km: %s", circ_km[i],
                      err.msg);
        /* the negative control: probes one ulp off are another planet, refused with both values */
        p.rock_wavelength_m = nextafter(p.rock_wavelength_m, 0);
        ck_assert_int_eq(tb_region_spec_selfcheck(&m, &p, 100, &err), -1);
        ck_assert_msg(strstr(err.msg, "a worker would refuse every region") &&
                          strstr(err.msg, "probes were taken"),
                      "%s", err.msg);
    }
}
END_TEST

START_TEST(test_bad_inputs_are_refused)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    tb_uplift_probes_t p = s_probes(&m);
    tb_frame_t f = s_frame(10, 10, 20, 20);
    uint8_t c[400];
    float u[400], k[400];
    memset(c, LOWLAND, sizeof c);
    c[37] = 9;
    tb_err_t err;
    ck_assert_int_eq(tb_uplift_build(&m, &p, &f, c, u, k, &err), -1);
    ck_assert_msg(strstr(err.msg, "class 9") && strstr(err.msg, "(17, 1)"), "%s", err.msg);
    c[37] = LOWLAND;
    tb_uplift_probes_t other = p;
    other.seed += 1;
    ck_assert_int_eq(tb_uplift_build(&m, &other, &f, c, u, k, &err), -1);
    ck_assert_msg(strstr(err.msg, "probes") != NULL, "%s", err.msg);
    tb_manifest_t narrow = m;
    narrow.regions.ocean_margin_km = 0.1;
    ck_assert_int_eq(tb_uplift_build(&narrow, &p, &f, c, u, k, &err), -1);
    ck_assert_msg(strstr(err.msg, "regions.ocean_margin_km") != NULL, "%s", err.msg);
    tb_uplift_probes_t refused;
    ck_assert_int_eq(tb_uplift_probes_compute(&narrow, &refused, &err), -1);
    tb_frame_t wrong;
    ck_assert(tb_frame_make(&wrong, 1000, 500, 8, 0, 0, 20, 20, NULL) == 0);
    ck_assert_int_eq(tb_uplift_build(&m, &p, &wrong, c, u, k, &err), -1);
    ck_assert_msg(tb_uplift_build(&m, &p, &f, c, u, k, &err) == 0, "%s", err.msg);
}
END_TEST

START_TEST(test_ocean_is_still_and_k_is_the_product)
{
    tb_manifest_t m;
    s_manifest(&m, 16, 8);
    m.faults.per_1000_km2 = 0;
    tb_uplift_probes_t p = s_probes(&m);
    s_run_t r;
    s_run(&m, &p, s_frame(300, 170, 600, 460), &r);
    size_t n = (size_t)(r.f.w * r.f.h);
    for (size_t q = 0; q < n; q++) {
        if (r.cls[q] > RANGE) {
            ck_assert(r.u[q] == 0);
            ck_assert(r.k[q] == (float)m.solve.k);
            continue;
        }
        ck_assert(r.u[q] >= 0.012e-3f * 0.999f && r.u[q] <= 0.4e-3f * 1.001f);
        double kk = r.k[q] / m.solve.k;
        ck_assert(kk >= 0.6 * m.rock.k_min_mult * 0.999 && kk <= 1.0 * m.rock.k_max_mult * 1.001);
    }
    /* At the centre of the range disc (radius 50 cells; only the corners of the 36-cell square
     * reach past it, with a weight under 1e-4), U is the class rate and K / (k k_mult) the rock
     * multiplier at that cell. */
    int64_t i = 520 - 300, j = 350 - 170;
    double x = tb_frame_world_x_m(&r.f, i), y = tb_frame_world_y_m(&r.f, j);
    double rock = tb_uplift_rock_mult(&m, tb_uplift_rank(p.rock_q, tb_uplift_rock_value(&m, x, y)));
    ck_assert_double_eq_tol(r.k[j * r.f.w + i], m.solve.k * 0.6 * rock, 1e-4 * m.solve.k);
    ck_assert_double_eq_tol(r.u[j * r.f.w + i], 0.4e-3, 1e-4 * 0.4e-3);
    s_run_free(&r);
}
END_TEST

Suite *uplift_suite(void)
{
    Suite *s = suite_create("uplift");
    TCase *t = tcase_create("uplift");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_two_frames_agree_about_the_same_ground);
    tcase_add_test(t, test_a_worker_accepts_the_spec_at_every_circumference);
    tcase_add_test(t, test_any_box_is_exact_where_it_holds_the_neighbourhood);
    tcase_add_test(t, test_a_region_percentile_breaks_the_agreement);
    tcase_add_test(t, test_windowed_fbm_is_the_noise_bit_for_bit);
    tcase_add_test(t, test_massif_share_is_the_class_fraction);
    tcase_add_test(t, test_massif_weight_and_rank);
    tcase_add_test(t, test_no_steps_at_painted_edges);
    tcase_add_test(t, test_no_steps_anywhere_on_the_synthetic_planet);
    tcase_add_test(t, test_rock_multiplier_bands_and_softness);
    tcase_add_test(t, test_fault_envelope_reaches_zero_with_zero_gradient);
    tcase_add_test(t, test_fault_taper_over_the_last_sixth);
    tcase_add_test(t, test_fault_raster_matches_brute_force);
    tcase_add_test(t, test_faults_follow_the_grain);
    tcase_add_test(t, test_long_faults_break_en_echelon);
    tcase_add_test(t, test_faults_are_deterministic_per_seed);
    tcase_add_test(t, test_fault_density_matches_the_manifest);
    tcase_add_test(t, test_probes_json_round_trip_is_exact);
    tcase_add_test(t, test_bad_inputs_are_refused);
    tcase_add_test(t, test_ocean_is_still_and_k_is_the_product);
    suite_add_tcase(s, t);
    return s;
}
