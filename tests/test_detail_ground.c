/* Ground at 2 m (docs/tiles.md, "Ground at 2 m"): the droplets' carried loads and settled deposit
 * (no mounds, exact conservation), the shore pass (a Dean beach on a sheltered shore, a platform,
 * cliff and notch on an exposed one, independent of the window), the tile spec with the coastal
 * pass's arrays, and tiles with the shore seamless by construction.
 *
 * Small grids only (a few hundred thousand cells); the 2500 x 2500 tile is the bench's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/detail/erosion_droplets_beyer.h"
#include "jobs/detail/ground_stats.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/line_scratch.h"
#include "jobs/detail/params.h"
#include "jobs/detail/shore.h"
#include "jobs/detail/synthetic.h"
#include "jobs/detail/tile.h"

static const tb_tile_class_t S_CLASSES[2] = {{0, 1.0}, {1, 1.0}};

/* ---- droplets: carried loads, settled deposit ---- */

/* Rolling hills (two sines) on a w x w window at 2 m, falling to the east: hollows, spurs and a
 * foot for the droplets. */
static void s_hills(double *h, int64_t w)
{
    for (int64_t j = 0; j < w; j++)
        for (int64_t i = 0; i < w; i++)
            h[j * w + i] = 60.0 - 0.12 * 2.0 * (double)i + 4.0 * sin((double)j * 0.05) +
                           3.0 * sin((double)i * 0.037 + 1.0) * cos((double)j * 0.021);
}

static void s_run_droplets(const tb_detail_params_t *p, int64_t w, const double *h0, double *h1,
                           int64_t *ero, int64_t *dep, int64_t *wat, tb_droplet_budget_t *b)
{
    tb_err_t err;
    tb_frame_t win;
    ck_assert_int_eq(tb_frame_make(&win, 2000, 2000, 2, 100, 100, w, w, &err), 0);
    ck_assert_msg(
        tb_erosion_droplets_beyer(p, 21, &win, h0, NULL, h1, ero, dep, wat, b, NULL, &err) == 0,
        "%s", err.msg);
}

START_TEST(test_carried_loads_leave_no_mounds_and_conserve)
{
    const int64_t w = 300;
    size_t n = (size_t)w * (size_t)w;
    double *h0 = malloc(n * sizeof *h0), *h1 = malloc(n * sizeof *h1);
    int64_t *ero = malloc(n * sizeof *ero), *dep = malloc(n * sizeof *dep);
    int64_t *wat = malloc(n * sizeof *wat);
    uint8_t *dep8 = malloc(n);
    s_hills(h0, w);
    int64_t mounds[2];
    double end_share[2];
    for (int k = 0; k < 2; k++) {
        tb_detail_params_t p;
        tb_detail_params_defaults(&p);
        if (k == 0) { /* the control: as before, the load laid where the droplet dies */
            p.droplet_carry_steps = 0;
            p.droplet_settle_cells = 0;
            p.droplet_converge = 0;
        }
        tb_droplet_budget_t b;
        s_run_droplets(&p, w, h0, h1, ero, dep, wat, &b);
        /* exact in integers: eroded = deposited + carried off, and the heights' change is that */
        ck_assert_int_eq(b.eroded_q, b.deposited_q + b.carried_edge_q);
        int64_t sum_e = 0, sum_d = 0;
        double net = 0;
        for (size_t i = 0; i < n; i++) {
            sum_e += ero[i];
            sum_d += dep[i];
            net += h1[i] - h0[i];
            double m = (double)dep[i] * TB_DROPLET_QUANTUM_M;
            double v = 255.0 * sqrt(m < 1 ? m : 1) + 0.5;
            dep8[i] = dep[i] > 0 ? (uint8_t)v : 0;
        }
        ck_assert_int_eq(sum_e, b.eroded_q);
        ck_assert_int_eq(sum_d, b.deposited_q);
        ck_assert_double_eq_tol(net, -(double)b.carried_edge_q * TB_DROPLET_QUANTUM_M,
                                1e-6 * (double)b.eroded_q * TB_DROPLET_QUANTUM_M);
        mounds[k] = tb_ground_deposit_maxima_u8(dep8, w, w, NULL);
        end_share[k] = (double)b.deposited_end_q / (double)b.eroded_q;
        if (k == 1)
            ck_assert_int_gt(b.carry_steps, 0);
    }
    fprintf(stderr,
            "carried loads: %lld deposit mounds before (%.0f %% of the load laid where droplets "
            "died), %lld now (%.0f %% laid where a carry ended)\n",
            (long long)mounds[0], 100 * end_share[0], (long long)mounds[1], 100 * end_share[1]);
    ck_assert_int_ge(mounds[0], 10 * (mounds[1] > 0 ? mounds[1] : 1));
    ck_assert(end_share[1] < end_share[0]);
    free(h0);
    free(h1);
    free(ero);
    free(dep);
    free(wat);
    free(dep8);
}
END_TEST

/* ---- the shore pass ---- */

/* A straight coast along x = 300 cells of a 600-wide lattice at 2 m: sea to the west at 1 m a
 * 23 m (the shelf's slope), land to the east. Rows 0..59: sheltered and fed (exposure 0.2, 0.5 m
 * laid), land rising 5 cm a metre. Rows 60..119: exposed high coast (exposure 0.9) the surf cut
 * to its platform over e x 110 m, 30 m high behind it. */
#define S_SW 600
#define S_SH 120
#define S_SHORE_X 300
typedef struct {
    double h[S_SW * S_SH], e[S_SW * S_SH], cut[S_SW * S_SH], laid[S_SW * S_SH];
    uint8_t land8[S_SW * S_SH];
} s_coast_t;

static void s_coast_make(s_coast_t *c)
{
    for (int64_t j = 0; j < S_SH; j++)
        for (int64_t i = 0; i < S_SW; i++) {
            size_t at = (size_t)(j * S_SW + i);
            double y = ((double)(i - S_SHORE_X) + 0.5) * 2.0; /* metres inland of the waterline */
            bool exposed = j >= S_SH / 2;
            c->e[at] = exposed ? 0.9 : 0.2;
            c->laid[at] = exposed || y > 0 ? 0 : 0.5;
            c->cut[at] = 0;
            if (y < 0)
                c->h[at] = y / 23.0;
            else if (!exposed)
                c->h[at] = 0.3 + 0.05 * y;
            else if (y < 0.9 * 110) {
                c->h[at] = 0.5 + 0.01 * y + 3.0; /* 0.1 of the 30 m left above the platform */
                c->cut[at] = 30.0 - c->h[at];
            } else
                c->h[at] = 30.0;
            c->land8[at] = y > 0;
        }
}

static void s_shore_run(s_coast_t *c, int64_t x0, int64_t w, double *h, uint8_t *sand)
{
    tb_err_t err;
    tb_frame_t win;
    ck_assert_int_eq(tb_frame_make(&win, 4000, S_SH, 2, x0, 0, w, S_SH, &err), 0);
    tb_detail_params_t p;
    tb_detail_params_defaults(&p);
    size_t n = (size_t)w * S_SH;
    double *e = malloc(n * sizeof *e), *cut = malloc(n * sizeof *cut);
    double *laid = malloc(n * sizeof *laid);
    uint8_t *land8 = malloc(n);
    for (int64_t j = 0; j < S_SH; j++)
        for (int64_t i = 0; i < w; i++) {
            size_t a = (size_t)(j * w + i), b = (size_t)(j * S_SW + i + x0);
            e[a] = c->e[b];
            cut[a] = c->cut[b];
            laid[a] = c->laid[b];
            land8[a] = c->land8[b];
            h[a] = c->h[b];
        }
    tb_shore_in_t in = {.p = &p,
                        .seed = 3,
                        .win = &win,
                        .land8 = land8,
                        .exposure = e,
                        .cut_m = cut,
                        .laid_m = laid};
    tb_shore_stats_t st;
    ck_assert_msg(tb_shore_dean_sunamura(&in, h, sand, &st, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_gt(st.beach_cells, 0);
    ck_assert_int_gt(st.cliff_cells, 0);
    free(e);
    free(cut);
    free(laid);
    free(land8);
}

static double s_deg(double dh, double run_m)
{
    return atan(fabs(dh) / run_m) * 180.0 / M_PI;
}

START_TEST(test_shore_draws_a_beach_and_a_cliff)
{
    static s_coast_t c;
    s_coast_make(&c);
    static double h[S_SW * S_SH];
    static uint8_t sand[S_SW * S_SH];
    s_shore_run(&c, 0, S_SW, h, sand);
    tb_detail_params_t p;
    tb_detail_params_defaults(&p);
    double A = tb_shore_dean_a(p.shore_grain_mm);
    /* the sheltered row: the Dean profile offshore (to the outline's wander: 3 m of y moves the
     * depth by less than 0.15 m there), the berm, nothing steeper than the talus, sand on it */
    int64_t j = 30;
    double worst = 0, berm_top = -1e9, steep = 0;
    for (int64_t i = S_SHORE_X - 40; i < S_SHORE_X - 10; i++) {
        double x = ((double)(S_SHORE_X - i) - 0.5) * 2.0;
        double d = fabs(h[j * S_SW + i] + A * pow(x, 2.0 / 3.0));
        worst = d > worst ? d : worst;
    }
    for (int64_t i = S_SHORE_X - 70; i < S_SHORE_X + 70; i++) {
        double s = s_deg(h[j * S_SW + i + 1] - h[j * S_SW + i], 2.0);
        steep = s > steep ? s : steep;
        if (i > S_SHORE_X + 12 && i < S_SHORE_X + 15)
            berm_top = fmax(berm_top, h[j * S_SW + i]);
    }
    fprintf(stderr,
            "shore: sheltered: Dean profile within %.3f m 20..80 m offshore, berm %.2f m, "
            "steepest step %.1f deg;",
            worst, berm_top, steep);
    ck_assert(worst < 0.15);
    ck_assert_double_eq_tol(berm_top, p.shore_berm_m, 0.2);
    ck_assert(steep < p.thermal_talus_deg);
    ck_assert_int_gt(sand[j * S_SW + S_SHORE_X + 5], 200);
    /* the exposed row: a flat platform, then a face steeper than 60 degrees whose top is where
     * the surf's reach ended (0.9 x 110 m), a notch below the platform at its foot */
    j = 90;
    double face = 0, face_at = 0, plat = 0, notch = 1e9;
    double plat_h = h[j * S_SW + S_SHORE_X + 30]; /* the platform's surface 60 m in */
    for (int64_t i = S_SHORE_X + 3; i < S_SHORE_X + 70; i++) {
        double s = s_deg(h[j * S_SW + i + 1] - h[j * S_SW + i], 2.0);
        double y = ((double)(i - S_SHORE_X) + 1.0) * 2.0;
        if (s > face) {
            face = s;
            face_at = y;
        }
        if (y < 60)
            plat = s > plat ? s : plat;
        if (y > 60)
            notch = fmin(notch, h[j * S_SW + i] - (plat_h + 0.01 * (y - 60)));
    }
    fprintf(stderr, " exposed: platform at most %.1f deg, face %.1f deg at %.0f m, notch %.2f m\n",
            plat, face, face_at, -notch);
    ck_assert(plat < 5);
    ck_assert(face > 60);
    ck_assert(face_at > 0.9 * 110 - 20 && face_at < 0.9 * 110 + 6);
    ck_assert(-notch > 0.5);
    /* the control: the input row has no groove below its platform, so the notch is the pass's */
    double in_notch = 1e9, in_plat = c.h[j * S_SW + S_SHORE_X + 30];
    for (int64_t i = S_SHORE_X + 31; i < S_SHORE_X + 70; i++)
        in_notch =
            fmin(in_notch, c.h[j * S_SW + i] - (in_plat + 0.01 * (double)(i - S_SHORE_X - 30) * 2));
    ck_assert(in_notch > -0.01);
}
END_TEST

START_TEST(test_shore_is_a_function_of_world_position)
{
    /* the same coast in a window shifted by 100 cells: every cell at least the pass's reach inside
     * both windows comes out the same bits */
    static s_coast_t c;
    s_coast_make(&c);
    static double a[S_SW * S_SH], b[S_SW * S_SH];
    s_shore_run(&c, 0, S_SW, a, NULL);
    const int64_t x0 = 100, w = S_SW - x0;
    s_shore_run(&c, x0, w, b, NULL);
    int64_t differ = 0, changed = 0;
    for (int64_t j = 0; j < S_SH; j++)
        for (int64_t i = x0 + TB_DETAIL_SHORE_REACH_CELLS; i < S_SW - TB_DETAIL_SHORE_REACH_CELLS;
             i++) {
            differ += memcmp(&a[j * S_SW + i], &b[j * w + i - x0], sizeof(double)) != 0;
            changed += a[j * S_SW + i] != c.h[j * S_SW + i];
        }
    ck_assert_int_eq(differ, 0);
    ck_assert_int_gt(changed, 1000);
}
END_TEST

/* ---- the tile job with the coastal pass ---- */

static void s_coast_planet(tb_detail_synthetic_t *syn)
{
    tb_err_t err;
    ck_assert_msg(tb_detail_synthetic_make(syn, 500, 250, 8, 11, 150, 600, 1000, &err) == 0, "%s",
                  err.msg);
    ck_assert_msg(tb_detail_synthetic_coast(syn, 400, 0.3, 1, &err) == 0, "%s", err.msg);
}

START_TEST(test_tile_spec_carries_the_coast)
{
    tb_detail_synthetic_t syn;
    s_coast_planet(&syn);
    tb_detail_params_t p;
    tb_detail_params_defaults(&p);
    p.size_km = 0.4;
    tb_err_t err;
    tb_tile_spec_owned_t spec, back;
    ck_assert_int_eq(tb_tile_spec_cut(&syn.planet, (tb_tile_id_t){1, 1}, 5, &p, -512, 1536,
                                      S_CLASSES, 2, &spec, &err),
                     0);
    ck_assert_ptr_nonnull(spec.spec.exposure);
    void *bytes;
    size_t n;
    ck_assert_int_eq(tb_tile_spec_encode(&spec.spec, &bytes, &n, &err), 0);
    ck_assert_int_eq(tb_tile_spec_decode(bytes, n, &back, &err), 0);
    size_t cells = (size_t)spec.spec.geo.w * (size_t)spec.spec.geo.h;
    ck_assert_mem_eq(back.exposure, spec.exposure, cells * sizeof(uint16_t));
    ck_assert_mem_eq(back.moved_m, spec.moved_m, cells * sizeof(float));
    tb_tile_spec_free(&back);
    /* a truncated coast raster and an exposure out of range are refused */
    ck_assert_int_eq(tb_tile_spec_decode(bytes, n - 1, &back, &err), -1);
    spec.exposure[7] = 1001;
    void *bad;
    size_t bn;
    ck_assert_int_eq(tb_tile_spec_encode(&spec.spec, &bad, &bn, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "exposure 1001"));
    ck_assert_ptr_null(bad);
    /* without the coast the spec is the old one: 6 bytes a cell fewer, the same header but
     * the "coast" key */
    spec.spec.exposure = NULL;
    spec.spec.moved_m = NULL;
    void *plain;
    size_t pn;
    ck_assert_int_eq(tb_tile_spec_encode(&spec.spec, &plain, &pn, &err), 0);
    ck_assert_uint_eq(n - pn, cells * 6 + strlen(",\"coast\":1"));
    free(plain);
    free(bytes);
    tb_tile_spec_free(&spec);
    tb_detail_synthetic_free(&syn);
}
END_TEST

/* Small passes: 0.4 km tiles, 2 rounds of 12-step droplets carrying 6 more, brush 1, settle 2,
 * 4 thermal iterations; the margin is the shore's 84 (the droplets' bound is below it). */
static void s_small(tb_detail_params_t *p)
{
    tb_detail_params_defaults(p);
    p->size_km = 0.4;
    p->droplet_rounds = 2;
    p->droplet_lifetime = 12;
    p->droplet_carry_steps = 6;
    p->droplet_settle_cells = 2;
    p->droplet_brush_radius = 1;
    p->droplet_spawn_block = 4;
    p->thermal_iterations = 4;
    p->margin_cells = (int)tb_detail_margin_bound(p);
}

static void s_tile(const tb_detail_synthetic_t *syn, const tb_detail_params_t *p, tb_tile_id_t id,
                   tb_tile_result_t *r)
{
    tb_err_t err;
    tb_tile_spec_owned_t spec;
    ck_assert_int_eq(
        tb_tile_spec_cut(&syn->planet, id, 5, p, -512, 1536, S_CLASSES, 2, &spec, &err), 0);
    ck_assert_msg(tb_tile_compute(&spec.spec, NULL, r, &err) == 0, "%s", err.msg);
    tb_tile_spec_free(&spec);
}

/* The 2 x 2 block of small tiles under big tile `big` against the big tile whole, at `margin`:
 * the cells that differ in any map. */
static int64_t s_block(const tb_detail_synthetic_t *syn, const tb_detail_params_t *small,
                       tb_tile_id_t big, int margin, int64_t *shore)
{
    tb_detail_params_t ps = *small, pb = *small;
    ps.margin_cells = pb.margin_cells = margin;
    pb.size_km = 2 * small->size_km;
    tb_tile_result_t whole;
    s_tile(syn, &pb, big, &whole);
    *shore = whole.shore_beach_cells + whole.shore_cliff_cells;
    int64_t W = whole.interior.w, differ = 0;
    for (int q = 0; q < 4; q++) {
        tb_tile_result_t t;
        s_tile(syn, &ps, (tb_tile_id_t){2 * big.col + q % 2, 2 * big.row + q / 2}, &t);
        int64_t ox = (q % 2) * t.interior.w, oy = (q / 2) * t.interior.h;
        for (int64_t j = 0; j < t.interior.h; j++)
            for (int64_t i = 0; i < t.interior.w; i++) {
                size_t a = (size_t)(j * t.interior.w + i), b = (size_t)((j + oy) * W + i + ox);
                differ += memcmp(&t.height_m[a], &whole.height_m[b], 4) != 0 ||
                          memcmp(&t.splat[4 * a], &whole.splat[4 * b], 4) != 0 ||
                          t.deposit[a] != whole.deposit[b];
            }
        tb_tile_result_free(&t);
    }
    tb_tile_result_free(&whole);
    return differ;
}

START_TEST(test_tiles_with_the_shore_are_seamless)
{
    tb_detail_synthetic_t syn;
    s_coast_planet(&syn);
    tb_detail_params_t p;
    s_small(&p);
    /* the 0.8 km tile of the first two rows whose own cells are nearest half land */
    tb_tile_id_t big = {0, 0};
    double best = 2;
    for (int64_t r = 0; r < 2; r++)
        for (int64_t col = 0; col < 5; col++) {
            int64_t on = 0;
            for (int64_t y = r * 100; y < (r + 1) * 100; y++)
                for (int64_t x = col * 100; x < (col + 1) * 100; x++)
                    on += syn.land[y * 500 + x] != 0;
            double d = fabs(on / 10000.0 - 0.5);
            if (d < best) {
                best = d;
                big = (tb_tile_id_t){col, r};
            }
        }
    int64_t shore, neg_shore;
    int64_t differ = s_block(&syn, &p, big, p.margin_cells, &shore);
    int64_t neg = s_block(&syn, &p, big, p.margin_cells / 2, &neg_shore);
    fprintf(stderr,
            "shore tiles: %lld beach and cliff cells in the block; at the margin %d: %lld cells "
            "differ; at half of it: %lld\n",
            (long long)shore, p.margin_cells, (long long)differ, (long long)neg);
    ck_assert_int_gt(shore, 100);
    ck_assert_int_eq(differ, 0);
    ck_assert_int_gt(neg, 0);
    tb_detail_synthetic_free(&syn);
}
END_TEST

/* The line filters' scratch (jobs/detail/line_scratch.h): an allocation that fails in a pool task
 * of the sea floor's box sums, the deposit's settling or the shore's smoothing fails the tile with
 * TB_E_NOMEM naming the pass and the bytes, rather than leaving the filter undone with success.
 * The control: the same tile without the injection computes. */
START_TEST(test_a_line_filter_out_of_memory_fails_the_tile)
{
    tb_detail_synthetic_t syn;
    s_coast_planet(&syn);
    tb_detail_params_t p;
    s_small(&p);
    tb_err_t err;
    tb_tile_spec_owned_t spec;
    /* c001r001: land, coast and sea below 4 m in its window, so all three filters run */
    ck_assert_int_eq(tb_tile_spec_cut(&syn.planet, (tb_tile_id_t){1, 1}, 5, &p, -512, 1536,
                                      S_CLASSES, 2, &spec, &err),
                     0);
    tb_tile_result_t r;
    ck_assert_msg(tb_tile_compute(&spec.spec, NULL, &r, &err) == 0, "%s", err.msg);
    ck_assert_int_gt(r.shore_beach_cells + r.shore_cliff_cells, 0);
    tb_tile_result_free(&r);
    static const char *const names[TB_LINE_FILTERS] = {"tile: the sea floor's smoothing",
                                                       "droplets: the deposit's settling",
                                                       "shore: the waterline's smoothing"};
    for (int f = 0; f < TB_LINE_FILTERS; f++) {
        atomic_store(&tb_line_scratch_test_fail[f], 1);
        memset(&err, 0, sizeof err);
        int rc = tb_tile_compute(&spec.spec, NULL, &r, &err);
        int left = atomic_load(&tb_line_scratch_test_fail[f]);
        atomic_store(&tb_line_scratch_test_fail[f], 0);
        fprintf(stderr, "line filter %d: rc %d: %s\n", f, rc, err.msg);
        ck_assert_int_eq(left, 0); /* the injection was reached */
        ck_assert_int_eq(rc, -1);
        ck_assert_int_eq(err.code, TB_E_NOMEM);
        ck_assert_ptr_nonnull(strstr(err.msg, names[f]));
        ck_assert_ptr_nonnull(strstr(err.msg, "out of memory for a line buffer of "));
        ck_assert_ptr_nonnull(strstr(err.msg, " bytes"));
    }
    /* and the control again, after the injections: the tile computes */
    ck_assert_msg(tb_tile_compute(&spec.spec, NULL, &r, &err) == 0, "%s", err.msg);
    tb_tile_result_free(&r);
    tb_tile_spec_free(&spec);
    tb_detail_synthetic_free(&syn);
}
END_TEST

/* The sea floor's smoothing (tile.c s_sea_floor) reads 32 cells each way: a box of radius 16 twice
 * along each axis, the line's ends repeated at the window's edge. With every other pass that
 * reaches across cells off (no droplets, settling, thermal or shore, no relief), a tile's heights
 * at a margin of 32 equal those at 100 wherever the floor is below 4 m, and at 31 they do not:
 * this pins the reach docs/tiles.md ("The margin") uses. */
static int64_t s_sea_differ(const tb_detail_synthetic_t *syn, tb_tile_id_t id, int margin,
                            int64_t *deep)
{
    tb_detail_params_t p;
    s_small(&p);
    p.droplet_rounds = 0;
    p.droplet_settle_cells = 0;
    p.thermal_iterations = 0;
    p.relief_amplitude_m = 0;
    tb_tile_result_t ref, t;
    tb_err_t err;
    int ms[2] = {100, margin};
    tb_tile_result_t *rs[2] = {&ref, &t};
    for (int k = 0; k < 2; k++) {
        p.margin_cells = ms[k];
        tb_tile_spec_owned_t spec;
        ck_assert_int_eq(
            tb_tile_spec_cut(&syn->planet, id, 5, &p, -512, 1536, S_CLASSES, 2, &spec, &err), 0);
        spec.spec.exposure = NULL; /* no shore pass */
        spec.spec.moved_m = NULL;
        ck_assert_msg(tb_tile_compute(&spec.spec, NULL, rs[k], &err) == 0, "%s", err.msg);
        tb_tile_spec_free(&spec);
    }
    size_t ni = (size_t)ref.interior.w * (size_t)ref.interior.h;
    int64_t differ = 0;
    *deep = 0;
    for (size_t i = 0; i < ni; i++) {
        *deep += ref.height_m[i] < -4;
        differ += memcmp(&ref.height_m[i], &t.height_m[i], sizeof(float)) != 0;
    }
    tb_tile_result_free(&ref);
    tb_tile_result_free(&t);
    return differ;
}

START_TEST(test_sea_floor_reads_32_cells)
{
    tb_detail_synthetic_t syn;
    s_coast_planet(&syn);
    int64_t deep, deep2;
    int64_t at32 = s_sea_differ(&syn, (tb_tile_id_t){4, 1}, 32, &deep);
    int64_t at31 = s_sea_differ(&syn, (tb_tile_id_t){4, 1}, 31, &deep2);
    fprintf(stderr,
            "sea floor: %lld interior cells below 4 m; margin 32: %lld heights differ from "
            "margin 100; margin 31: %lld\n",
            (long long)deep, (long long)at32, (long long)at31);
    ck_assert_int_gt(deep, 1000);
    ck_assert_int_eq(at32, 0);
    ck_assert_int_gt(at31, 0);
    tb_detail_synthetic_free(&syn);
}
END_TEST

/* A 64 x 64 grid of 2 m cells holding a straight face whose normal is `deg` degrees off the rows,
 * rising `rise` metres at `face_deg` along its normal from the line 2 i cos + 2 j sin = 60 m, or
 * (rise < 0) a plane at 38 degrees. */
static void s_face_grid(float *z, double rise, double deg, double face_deg)
{
    double a = deg * M_PI / 180, t = tan(face_deg * M_PI / 180);
    for (int64_t j = 0; j < 64; j++)
        for (int64_t i = 0; i < 64; i++) {
            double d = 2.0 * (double)i * cos(a) + 2.0 * (double)j * sin(a) - 60.0;
            double u = d < 0 ? 0 : (d * t > rise ? rise : d * t);
            z[j * 64 + i] = rise < 0 ? (float)(tan(38 * M_PI / 180) * d) : (float)(1 + u);
        }
}

START_TEST(test_face_rise_reads_an_oblique_low_cliff_on_the_grid)
{
    float z[64 * 64];
    /* on the face: (26, 15) at 30 degrees, (32, 10) at 45, (28, 10) at 22.5 */
    s_face_grid(z, 3.0, 30, 63);
    double on = tb_ground_face_rise(z, 64, 64, 2.0, 26, 15, 2);
    double away = tb_ground_face_rise(z, 64, 64, 2.0, 10, 15, 2);
    /* a face with its normal on a diagonal, 4 m high at 70 degrees: over 45 along the rows too */
    s_face_grid(z, 4.0, 45, 70);
    double oblique = tb_ground_face_rise(z, 64, 64, 2.0, 32, 10, 2);
    s_face_grid(z, 1.8, 30, 63);
    double low = tb_ground_face_rise(z, 64, 64, 2.0, 26, 15, 2);
    s_face_grid(z, -1, 30, 0);
    double plane = tb_ground_face_rise(z, 64, 64, 2.0, 26, 15, 2);
    s_face_grid(z, 3.0, 22.5, 44);
    double gentle = tb_ground_face_rise(z, 64, 64, 2.0, 28, 10, 2);
    fprintf(stderr,
            "face rise: a 3 m face at 63 degrees %.2f m, 10 cells off it %.2f; 4 m at 70 degrees, "
            "45 off the rows %.2f; at 44 degrees %.2f; a 1.8 m face %.2f; a 38-degree plane %.2f\n",
            on, away, oblique, gentle, low, plane);
    ck_assert(on >= 2.0 && on <= 3.0 + 1e-6);
    ck_assert(oblique >= 2.0);
    /* controls: nothing steep near the point, a face under 45 degrees, one under 2 m, a plane */
    ck_assert(away == 0);
    ck_assert(gentle == 0);
    ck_assert(low < 2.0);
    ck_assert(plane == 0);
}
END_TEST

Suite *detail_ground_suite(void)
{
    Suite *s = suite_create("detail_ground");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_carried_loads_leave_no_mounds_and_conserve);
    tcase_add_test(tc, test_shore_draws_a_beach_and_a_cliff);
    tcase_add_test(tc, test_shore_is_a_function_of_world_position);
    tcase_add_test(tc, test_tile_spec_carries_the_coast);
    tcase_add_test(tc, test_tiles_with_the_shore_are_seamless);
    tcase_add_test(tc, test_a_line_filter_out_of_memory_fails_the_tile);
    tcase_add_test(tc, test_sea_floor_reads_32_cells);
    tcase_add_test(tc, test_face_rise_reads_an_oblique_low_cliff_on_the_grid);
    suite_add_tcase(s, tc);
    return s;
}
