/* The coastal pass (jobs/coast, docs/coast.md): the sediment budget closes and a leak is caught;
 * the pass commutes with rolling the planet; bays are sheltered (also across the seam) and get more
 * beach; a straight open coast is not scored sheltered; the sea floor descends to the painted depth
 * without a step, also across the seam (with a non-wrapping transform as the negative control); the
 * job's spec round-trips and bad bytes are refused; the `coast` section is checked key by key.
 *
 * Planets here are small (a few hundred cells a side at 8 m), so the tests shrink the lengths of
 * the defaults in proportion (s_params); every test says which cells it asks about. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/edt.h"
#include "common/hash.h"
#include "coordinator/maps/coast_maps.h"
#include "coordinator/bake/planet_input.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "jobs/coast/coast.h"
#include "jobs/coast/divide.h"
#include "jobs/coast/methods.h"
#include "jobs/job.h"

#define CELL_M 8.0

enum { LAND = 0, SHELF = 1, DEEP = 2 };

typedef struct {
    int64_t w, h;
    float *height;
    uint8_t *cls;
    tb_coast_classes_t legend;
    tb_coast_mouth_t mouths[8];
    size_t n_mouths;
} s_planet_t;

static void s_params(tb_coast_params_t *p)
{
    tb_coast_params_defaults(p);
    p->shelf_km = 0.4;
    p->slope_km = 0.3;
    p->ref_fetch_km = 1.0;
    p->carry_m = 200;
    p->drift_km = 0.3;
    p->deposit_reach_m = 150;
    p->river_share = 0.01;
}

static uint32_t s_mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* A bump in 0..1 that is a function of the lattice cell only. */
static double s_bump(int64_t x, int64_t y)
{
    return (s_mix((uint32_t)(x * 73856093u) ^ s_mix((uint32_t)y + 0x9e3779b9u)) & 0xFFFF) / 65535.0;
}

static void s_new(s_planet_t *pl, int64_t w, int64_t h)
{
    memset(pl, 0, sizeof *pl);
    pl->w = w;
    pl->h = h;
    pl->height = calloc((size_t)(w * h), sizeof(float));
    pl->cls = calloc((size_t)(w * h), 1);
    pl->legend.n = 3;
    pl->legend.ocean[SHELF] = pl->legend.ocean[DEEP] = true;
    pl->legend.depth_m[SHELF] = 60;
    pl->legend.depth_m[DEEP] = 900;
    for (int64_t i = 0; i < w * h; i++) {
        pl->cls[i] = DEEP;
        pl->height[i] = -900;
    }
}

static void s_free(s_planet_t *pl)
{
    free(pl->height);
    free(pl->cls);
}

static void s_land(s_planet_t *pl, int64_t x, int64_t y, double z)
{
    size_t i = (size_t)(y * pl->w + tb_wrap(x, pl->w));
    pl->cls[i] = LAND;
    pl->height[i] = (float)z;
}

/* Wrapped column distance. */
static double s_dx(int64_t a, int64_t b, int64_t w)
{
    int64_t d = llabs(a - b) % w;
    return (double)(d < w - d ? d : w - d);
}

/* An island of radius r cells centred at (cx, cy), a cone of `top` metres with hashed bumps. */
static void s_island(s_planet_t *pl, int64_t cx, int64_t cy, double r, double top)
{
    for (int64_t y = 0; y < pl->h; y++)
        for (int64_t x = 0; x < pl->w; x++) {
            double dx = s_dx(x, cx, pl->w), dy = (double)(y - cy);
            double d = sqrt(dx * dx + dy * dy);
            if (d <= r)
                s_land(pl, x, y, 1 + top * (1 - d / r) + 3 * s_bump(x, y));
        }
}

typedef struct {
    float *moved;
    uint16_t *exposure;
    tb_coast_stats_t stats;
} s_out_t;

static void s_run_threads(s_planet_t *pl, const tb_coast_params_t *p, tb_coast_debug_t *debug,
                          int threads, s_out_t *o);

static void s_run(s_planet_t *pl, const tb_coast_params_t *p, tb_coast_debug_t *debug, s_out_t *o)
{
    s_run_threads(pl, p, debug, 1, o);
}

static void s_run_threads(s_planet_t *pl, const tb_coast_params_t *p, tb_coast_debug_t *debug,
                          int threads, s_out_t *o)
{
    size_t cells = (size_t)(pl->w * pl->h);
    o->moved = malloc(cells * sizeof(float));
    o->exposure = malloc(cells * sizeof(uint16_t));
    tb_coast_planet_t planet = {pl->w,   pl->h,       CELL_M,     pl->height,
                                pl->cls, &pl->legend, pl->mouths, pl->n_mouths};
    tb_coast_maps_t maps = {o->moved, o->exposure, {0}};
    tb_err_t err;
    int rc = tb_coast_run(p, &planet, &maps, threads, debug, NULL, NULL, &err);
    ck_assert_msg(rc == 0, "coast run failed: %s", err.msg);
    o->stats = maps.stats;
}

static void s_out_free(s_out_t *o)
{
    free(o->moved);
    free(o->exposure);
}

/* ---- the budget ---- */

static void s_island_planet(s_planet_t *pl)
{
    s_new(pl, 320, 240);
    s_island(pl, 160, 120, 55, 60);
    /* a river mouth on the south shore */
    pl->mouths[0] = (tb_coast_mouth_t){160, 120 - 57, 4e7};
    pl->n_mouths = 1;
}

START_TEST(test_budget_closes_on_an_island)
{
    s_planet_t pl;
    s_island_planet(&pl);
    tb_coast_params_t p;
    s_params(&p);
    s_out_t o;
    s_run(&pl, &p, NULL, &o);
    const tb_coast_stats_t *s = &o.stats;
    ck_assert_msg(s->cut_m3 > 1e4 && s->river_m3 > 1e4 && s->laid_m3 > 1e4,
                  "cut %g river %g laid %g m3", s->cut_m3, s->river_m3, s->laid_m3);
    ck_assert_msg(tb_coast_budget_error(s) < 1e-9, "budget error %g", tb_coast_budget_error(s));
    /* the maps agree with the statistics (to float32 precision of the heights) */
    double cut = 0, laid = 0;
    for (int64_t i = 0; i < pl.w * pl.h; i++) {
        if (pl.cls[i] == LAND)
            cut -= o.moved[i];
        else
            laid += o.moved[i];
        ck_assert(pl.cls[i] == LAND ? o.moved[i] <= 0 : o.moved[i] >= 0);
    }
    cut *= CELL_M * CELL_M;
    laid *= CELL_M * CELL_M;
    ck_assert_msg(fabs(cut - s->cut_m3) < 1e-5 * s->cut_m3, "map cut %g, stats %g", cut, s->cut_m3);
    ck_assert_msg(fabs(laid - s->laid_m3) < 1e-5 * s->laid_m3, "map laid %g, stats %g", laid,
                  s->laid_m3);
    s_out_free(&o);
    s_free(&pl);
}
END_TEST

/* Negative control: a pass that loses one cell's deposit without counting it fails the check. */
START_TEST(test_budget_catches_a_leak)
{
    s_planet_t pl;
    s_island_planet(&pl);
    tb_coast_params_t p;
    s_params(&p);
    tb_coast_debug_t debug = {.leak_one_deposit = true};
    s_out_t o;
    s_run(&pl, &p, &debug, &o);
    ck_assert_msg(tb_coast_budget_error(&o.stats) > 1e-9, "a leaked deposit went unseen: %g",
                  tb_coast_budget_error(&o.stats));
    s_out_free(&o);
    s_free(&pl);
}
END_TEST

/* ---- wrap ---- */

/* Islands, one across the seam, a bay, a river: a planet with something everywhere. */
static void s_busy_planet(s_planet_t *pl)
{
    s_new(pl, 300, 200);
    s_island(pl, 5, 100, 40, 50); /* straddles x = 0 */
    s_island(pl, 150, 60, 30, 20);
    s_island(pl, 200, 150, 25, 80);
    for (int64_t y = 0; y < pl->h; y++)
        for (int64_t x = 120; x < 180; x++)
            if (y > 110 && y < 125)
                pl->cls[y * pl->w + x] = SHELF;
    pl->mouths[0] = (tb_coast_mouth_t){5, 100 - 42, 3e7};
    pl->mouths[1] = (tb_coast_mouth_t){150, 60 + 32, 1e7};
    pl->n_mouths = 2;
}

static void s_roll(s_planet_t *dst, const s_planet_t *src, int64_t k)
{
    s_new(dst, src->w, src->h);
    for (int64_t y = 0; y < src->h; y++)
        for (int64_t x = 0; x < src->w; x++) {
            size_t from = (size_t)(y * src->w + x),
                   to = (size_t)(y * src->w + tb_wrap(x + k, src->w));
            dst->height[to] = src->height[from];
            dst->cls[to] = src->cls[from];
        }
    dst->n_mouths = src->n_mouths;
    for (size_t m = 0; m < src->n_mouths; m++) {
        dst->mouths[m] = src->mouths[m];
        dst->mouths[m].x = tb_wrap(src->mouths[m].x + k, src->w);
    }
}

/* ---- threads ---- */

/* A planet tall enough that the fetch sweeps and the box sums split into bands on 2 and 3 threads
 * (jobs/coast/exposure.c, boxsum.c): islands across the band boundaries, a shoal long in Y that the
 * north-south fetch crosses, rivers. */
static void s_tall_planet(s_planet_t *pl)
{
    s_new(pl, 260, 640);
    s_island(pl, 5, 320, 40, 50); /* straddles x = 0 and the middle row */
    s_island(pl, 130, 210, 30, 30);
    s_island(pl, 130, 345, 15, 20); /* its south shore sees 90 cells of water north of the last */
    s_island(pl, 180, 430, 35, 80);
    s_island(pl, 90, 600, 20, 20);
    for (int64_t y = 60; y < 560; y++)
        for (int64_t x = 60; x < 66; x++)
            if (pl->cls[y * pl->w + x] != LAND)
                pl->cls[y * pl->w + x] = SHELF;
    pl->mouths[0] = (tb_coast_mouth_t){5, 320 - 42, 3e7};
    pl->mouths[1] = (tb_coast_mouth_t){130, 210 + 32, 2e7};
    pl->mouths[2] = (tb_coast_mouth_t){180, 430 - 37, 4e7};
    pl->n_mouths = 3;
}

static bool s_same(const s_planet_t *a, const s_out_t *oa, const s_planet_t *b, const s_out_t *ob)
{
    size_t cells = (size_t)(a->w * a->h);
    return memcmp(a->height, b->height, cells * sizeof(float)) == 0 &&
           memcmp(oa->moved, ob->moved, cells * sizeof(float)) == 0 &&
           memcmp(oa->exposure, ob->exposure, cells * sizeof(uint16_t)) == 0 &&
           memcmp(&oa->stats, &ob->stats, sizeof oa->stats) == 0;
}

/* Any number of threads gives the same bits, maps and statistics alike (docs/coast.md, "Threads").
 * Negative control: fetch bands that start with half the warm-up they need differ from one
 * thread. */
START_TEST(test_threads_give_the_same_bits)
{
    tb_coast_params_t p;
    s_params(&p);
    s_planet_t one;
    s_tall_planet(&one);
    s_out_t o1;
    s_run_threads(&one, &p, NULL, 1, &o1);
    ck_assert(o1.stats.laid_m3 > 1e3 && o1.stats.cut_m3 > 1e3);
    for (int threads = 2; threads <= 7; threads += threads == 3 ? 4 : 1) {
        s_planet_t pl;
        s_tall_planet(&pl);
        s_out_t o;
        s_run_threads(&pl, &p, NULL, threads, &o);
        ck_assert_msg(s_same(&one, &o1, &pl, &o), "%d threads differ from one", threads);
        s_out_free(&o);
        s_free(&pl);
    }
    s_planet_t bad;
    s_tall_planet(&bad);
    tb_coast_debug_t debug = {.short_warmup = true};
    s_out_t ob;
    s_run_threads(&bad, &p, &debug, 2, &ob);
    ck_assert_msg(!s_same(&one, &o1, &bad, &ob), "a short warm-up went unseen");
    s_out_free(&ob);
    s_free(&bad);
    s_out_free(&o1);
    s_free(&one);
}
END_TEST

START_TEST(test_roll_gives_the_rolled_result)
{
    tb_coast_params_t p;
    s_params(&p);
    s_planet_t base;
    s_busy_planet(&base);
    s_planet_t ref;
    s_roll(&ref, &base, 0);
    s_out_t o0;
    s_run(&ref, &p, NULL, &o0);
    ck_assert(o0.stats.cut_m3 > 0 && o0.stats.laid_m3 > 0);
    const int64_t ks[] = {1, 37, 150, 299};
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        s_planet_t rolled;
        s_roll(&rolled, &base, ks[t]);
        s_out_t o;
        s_run(&rolled, &p, NULL, &o);
        for (int64_t y = 0; y < base.h; y++)
            for (int64_t x = 0; x < base.w; x++) {
                size_t a = (size_t)(y * base.w + x);
                size_t b = (size_t)(y * base.w + tb_wrap(x + ks[t], base.w));
                ck_assert_msg(memcmp(&ref.height[a], &rolled.height[b], sizeof(float)) == 0 &&
                                  memcmp(&o0.moved[a], &o.moved[b], sizeof(float)) == 0 &&
                                  o0.exposure[a] == o.exposure[b],
                              "roll %lld: cell (%lld, %lld) differs: %.9g vs %.9g",
                              (long long)ks[t], (long long)x, (long long)y, ref.height[a],
                              rolled.height[b]);
            }
        ck_assert(fabs(o.stats.laid_m3 - o0.stats.laid_m3) <= 1e-9 * o0.stats.laid_m3);
        s_out_free(&o);
        s_free(&rolled);
    }
    s_out_free(&o0);
    s_free(&ref);
    s_free(&base);
}
END_TEST

/* ---- shelter ---- */

/* A coast along the whole circumference (land south of row 80, `cliff` metres high) with a closed
 * bay cut into it at columns bx .. bx + 39: 40 cells wide, 30 deep, opening north through a mouth
 * of 8 cells. */
static void s_bay_planet(s_planet_t *pl, int64_t bx, double cliff)
{
    s_new(pl, 400, 220);
    for (int64_t y = 0; y < 80; y++)
        for (int64_t x = 0; x < pl->w; x++)
            s_land(pl, x, y, cliff + 2 * s_bump(x, y));
    for (int64_t y = 45; y < 75; y++)
        for (int64_t x = bx; x < bx + 40; x++) {
            size_t i = (size_t)(y * pl->w + tb_wrap(x, pl->w));
            pl->cls[i] = DEEP;
            pl->height[i] = -900;
        }
    for (int64_t y = 75; y < 80; y++)
        for (int64_t x = bx + 16; x < bx + 24; x++) {
            size_t i = (size_t)(y * pl->w + tb_wrap(x, pl->w));
            pl->cls[i] = DEEP;
            pl->height[i] = -900;
        }
}

typedef struct {
    double exposure;    /* mean raw-carried exposure over the waterline cells of the zone */
    double laid_per_km; /* m3 laid in the zone's sea per km of its shoreline */
} s_zone_t;

/* The waterline sea cells and the sea within 150 m of columns x0 .. x1 - 1 (wrapped), rows y0 ..
 * y1. */
static s_zone_t s_zone(const s_planet_t *pl, const s_out_t *o, int64_t x0, int64_t x1, int64_t y0,
                       int64_t y1)
{
    s_zone_t z = {0, 0};
    int64_t n = 0, edges = 0;
    double laid = 0;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t xx = x0; xx < x1; xx++) {
            int64_t x = tb_wrap(xx, pl->w);
            size_t i = (size_t)(y * pl->w + x);
            if (pl->cls[i] == LAND)
                continue;
            laid += o->moved[i];
            int64_t e = tb_wrap(x + 1, pl->w), wv = tb_wrap(x - 1, pl->w);
            int land_nb = (pl->cls[y * pl->w + e] == LAND) + (pl->cls[y * pl->w + wv] == LAND) +
                          (y > 0 && pl->cls[(y - 1) * pl->w + x] == LAND) +
                          (y + 1 < pl->h && pl->cls[(y + 1) * pl->w + x] == LAND);
            edges += land_nb;
            if (land_nb) {
                z.exposure += o->exposure[i] / 1000.0;
                n++;
            }
        }
    z.exposure /= (double)(n ? n : 1);
    z.laid_per_km = laid * CELL_M * CELL_M / ((double)edges * CELL_M / 1000.0);
    return z;
}

START_TEST(test_closed_bay_is_sheltered_and_gets_more_beach)
{
    tb_coast_params_t p;
    s_params(&p);
    s_planet_t pl;
    s_bay_planet(&pl, 180, 25);
    s_out_t o;
    s_run(&pl, &p, NULL, &o);
    s_zone_t bay = s_zone(&pl, &o, 180, 220, 45, 75);
    s_zone_t open = s_zone(&pl, &o, 0, 120, 78, 100); /* the straight coast far from the bay */
    ck_assert_msg(bay.exposure < 0.5 * open.exposure, "bay exposure %.3f, open coast %.3f",
                  bay.exposure, open.exposure);
    ck_assert_msg(bay.laid_per_km > open.laid_per_km, "bay %.0f m3/km, open coast %.0f m3/km",
                  bay.laid_per_km, open.laid_per_km);
    s_out_free(&o);
    s_free(&pl);
}
END_TEST

/* The all-directions trap: the land behind a straight coast is not shelter. Every wave direction
 * that reaches a straight north-facing coast crosses open water, so it reads (nearly) fully
 * exposed, and above the bay; a fetch cast in all eight directions would read it about 5/8. */
START_TEST(test_straight_open_coast_is_not_sheltered)
{
    tb_coast_params_t p;
    s_params(&p);
    s_planet_t pl;
    s_bay_planet(&pl, 180, 25);
    s_out_t o;
    s_run(&pl, &p, NULL, &o);
    s_zone_t open = s_zone(&pl, &o, 0, 120, 78, 100);
    s_zone_t bay = s_zone(&pl, &o, 180, 220, 45, 75);
    ck_assert_msg(open.exposure > 0.9, "straight open coast exposure %.3f", open.exposure);
    ck_assert(open.exposure > bay.exposure);
    /* waves only from the south (over the land) leave the north-facing coast fully sheltered */
    p.wave_from_deg = 170;
    p.wave_to_deg = 190;
    s_planet_t pl2;
    s_bay_planet(&pl2, 180, 25);
    s_out_t o2;
    s_run(&pl2, &p, NULL, &o2);
    ck_assert_double_eq(s_zone(&pl2, &o2, 0, 120, 78, 100).exposure, 0);
    s_out_free(&o2);
    s_free(&pl2);
    s_out_free(&o);
    s_free(&pl);
}
END_TEST

START_TEST(test_bay_across_the_seam_is_sheltered_like_mid_map)
{
    tb_coast_params_t p;
    s_params(&p);
    s_planet_t mid, seam;
    s_bay_planet(&mid, 180, 25);
    s_roll(&seam, &mid, 200); /* the bay at columns 380 .. 419: across x = 0 */
    s_out_t om, os;
    s_run(&mid, &p, NULL, &om);
    s_run(&seam, &p, NULL, &os);
    s_zone_t a = s_zone(&mid, &om, 180, 220, 45, 75);
    s_zone_t b = s_zone(&seam, &os, 380, 420, 45, 75);
    ck_assert_msg(a.exposure == b.exposure && a.laid_per_km == b.laid_per_km,
                  "mid-map bay %.4f %.1f, seam bay %.4f %.1f", a.exposure, a.laid_per_km,
                  b.exposure, b.laid_per_km);
    ck_assert(b.exposure < 0.5);
    s_out_free(&om);
    s_out_free(&os);
    s_free(&mid);
    s_free(&seam);
}
END_TEST

/* ---- the sea floor ---- */

/* Land south of row 40 (low, `land_m` high); the sea painted 60 m in columns 0 .. 99 and 900 m in
 * 100 .. 199, 160 rows of it, so the shelf and slope (0.7 km, 88 cells) end well inside the map. */
static void s_shelf_planet(s_planet_t *pl, double land_m)
{
    s_new(pl, 200, 200);
    for (int64_t y = 0; y < pl->h; y++)
        for (int64_t x = 0; x < pl->w; x++) {
            size_t i = (size_t)(y * pl->w + x);
            if (y < 40 + (int64_t)(4 * s_bump(x, 0))) {
                pl->cls[i] = LAND;
                pl->height[i] = (float)(land_m + 0.2 * s_bump(x, y));
            } else if (x < 100) {
                pl->cls[i] = SHELF;
                pl->height[i] = -60;
            }
        }
}

/* The largest rise of the floor (metres) walking seaward up every column from its first sea cell,
 * in columns 20..79 and 120..179 (away from where the painted classes meet); fails unless each such
 * column ends at its painted depth. */
static double s_worst_rise(const s_planet_t *pl)
{
    double worst = 0;
    for (int64_t x = 0; x < pl->w; x++) {
        if ((x % 100) < 20 || (x % 100) >= 80)
            continue;
        int64_t y = 0;
        while (pl->cls[y * pl->w + x] == LAND)
            y++;
        for (y++; y < pl->h; y++) {
            double rise = pl->height[y * pl->w + x] - pl->height[(y - 1) * pl->w + x];
            worst = rise > worst ? rise : worst;
        }
        double painted = x < 100 ? 60 : 900;
        ck_assert_msg(pl->height[(pl->h - 1) * pl->w + x] == (float)-painted,
                      "column %lld ends at %g, painted %g", (long long)x,
                      pl->height[(pl->h - 1) * pl->w + x], -painted);
    }
    return worst;
}

START_TEST(test_floor_descends_to_the_painted_depth)
{
    tb_coast_params_t p;
    s_params(&p);
    p.drift_km = 0.2; /* its second pass, 0.6 km, fits the 1.6 km circumference */
    s_planet_t pl;
    s_shelf_planet(&pl, 0.2); /* below the platform: nothing is cut, nothing laid */
    s_out_t o;
    s_run(&pl, &p, NULL, &o);
    ck_assert_double_eq(o.stats.cut_m3, 0);
    ck_assert_msg(s_worst_rise(&pl) == 0, "the bare floor rises by %g m", s_worst_rise(&pl));
    s_out_free(&o);
    s_free(&pl);
    /* with cliffs cut and sediment laid the beach profile may leave a small rise: docs/coast.md
     * states the tolerance, 1 m */
    s_shelf_planet(&pl, 30);
    s_run(&pl, &p, NULL, &o);
    ck_assert(o.stats.laid_m3 > 0);
    double rise = s_worst_rise(&pl);
    ck_assert_msg(rise <= 1.0, "the floor with sediment rises by %g m", rise);
    s_out_free(&o);
    s_free(&pl);
}
END_TEST

/* How many cells seaward of the waterline sediment lies in column x (the last row with a deposit).
 */
static int64_t s_deposit_reach_cells(const s_planet_t *pl, const s_out_t *o, int64_t x)
{
    int64_t y = 0, last = 0;
    while (pl->cls[y * pl->w + x] == LAND)
        y++;
    for (int64_t k = 0; y + k < pl->h; k++)
        if (o->moved[(y + k) * pl->w + x] > 0)
            last = k + 1;
    return last;
}

/* A delta: a large river mouth pushes its sediment out beyond deposit_reach_m, where the coast away
 * from it stops at the reach; the same coast without the river does not (the negative control). */
START_TEST(test_river_mouth_builds_a_delta)
{
    tb_coast_params_t p;
    s_params(&p);
    p.drift_km = 0.2;       /* the lobe can reach as far as the drift's tent, 25 cells */
    p.deposit_reach_m = 60; /* the ordinary shoreface, 8 cells */
    /* the reach in cells, plus the 4 rows the coastline wanders (s_shelf_planet) */
    int64_t reach = (int64_t)(p.deposit_reach_m / CELL_M) + 1 + 4;
    for (int with_river = 0; with_river < 2; with_river++) {
        s_planet_t pl;
        s_shelf_planet(&pl, 30);
        int64_t y = 0;
        while (pl.cls[y * pl.w + 50] == LAND)
            y++;
        if (with_river) {
            pl.mouths[0] = (tb_coast_mouth_t){50, y, 5e8};
            pl.n_mouths = 1;
        }
        s_out_t o;
        s_run(&pl, &p, NULL, &o);
        ck_assert(tb_coast_budget_error(&o.stats) < 1e-9);
        int64_t at_mouth = s_deposit_reach_cells(&pl, &o, 50);
        int64_t away = s_deposit_reach_cells(&pl, &o, 150);
        ck_assert_msg(away <= reach,
                      "the coast away from the mouth reaches %lld cells, more than %lld",
                      (long long)away, (long long)reach);
        if (with_river)
            ck_assert_msg(at_mouth > reach + 8, "the delta reaches only %lld cells (reach %lld)",
                          (long long)at_mouth, (long long)reach);
        else
            ck_assert_msg(at_mouth <= reach, "without a river column 50 reaches %lld cells",
                          (long long)at_mouth);
        s_out_free(&o);
        s_free(&pl);
    }
}
END_TEST

/* Mean |step| across the seam (columns w-1 and 0) and across an interior column pair, over the
 * sea cells of both. */
static void s_steps(const s_planet_t *pl, double *seam, double *interior)
{
    double a = 0, b = 0;
    int64_t na = 0, nb = 0, mid = pl->w / 2;
    for (int64_t y = 0; y < pl->h; y++) {
        const float *row = pl->height + y * pl->w;
        const uint8_t *c = pl->cls + y * pl->w;
        if (c[pl->w - 1] != LAND && c[0] != LAND) {
            a += fabs((double)row[0] - row[pl->w - 1]);
            na++;
        }
        if (c[mid - 1] != LAND && c[mid] != LAND) {
            b += fabs((double)row[mid] - row[mid - 1]);
            nb++;
        }
    }
    *seam = a / (double)(na ? na : 1);
    *interior = b / (double)(nb ? nb : 1);
}

/* Islands across the seam and mid-map, so both column pairs cross a shelf. */
static void s_seam_planet(s_planet_t *pl)
{
    s_new(pl, 300, 200);
    s_island(pl, 3, 60, 30, 20);
    s_island(pl, 290, 150, 25, 20);
    s_island(pl, 152, 60, 30, 20);
    s_island(pl, 140, 150, 25, 20);
}

/* A delta grows with its mouth's supply, however large: the stretch's bell sums stay inside int64
 * (jobs/coast/sediment.c quantises and averages them). Negative control (tried): with the sums of
 * the river units themselves, a bell three drift radii wide wraps round past 2^63 for a mouth of a
 * few Mm3, and the huge mouth here gets nothing laid in front of it, as a round hole in the delta
 * did on the 400-step demo planet. */
START_TEST(test_delta_grows_with_supply)
{
    tb_coast_params_t p;
    s_params(&p);
    p.drift_km = 0.2;
    p.deposit_reach_m = 60;
    const double eroded[3] = {2e5, 4e6, 1e13};
    int64_t reach[3];
    for (int k = 0; k < 3; k++) {
        s_planet_t pl;
        s_shelf_planet(&pl, 30);
        int64_t y = 0;
        while (pl.cls[y * pl.w + 50] == LAND)
            y++;
        pl.mouths[0] = (tb_coast_mouth_t){50, y, eroded[k]};
        pl.n_mouths = 1;
        s_out_t o;
        s_run(&pl, &p, NULL, &o);
        ck_assert(tb_coast_budget_error(&o.stats) < 1e-9);
        /* no hole in front of the mouth */
        for (int64_t yy = y; yy < y + 6; yy++)
            ck_assert_msg(o.moved[yy * pl.w + 50] > 0, "supply %g m3: nothing laid at row %lld",
                          eroded[k], (long long)yy);
        reach[k] = s_deposit_reach_cells(&pl, &o, 50);
        s_out_free(&o);
        s_free(&pl);
    }
    ck_assert_msg(reach[0] < reach[1] && reach[1] <= reach[2],
                  "the delta reaches %lld, %lld, %lld cells for growing supplies",
                  (long long)reach[0], (long long)reach[1], (long long)reach[2]);
}
END_TEST

START_TEST(test_seam_step_like_an_interior_column)
{
    tb_coast_params_t p;
    s_params(&p);
    s_planet_t pl;
    s_seam_planet(&pl);
    s_out_t o;
    s_run(&pl, &p, NULL, &o);
    double seam, interior;
    s_steps(&pl, &seam, &interior);
    ck_assert_msg(interior > 0.1 && seam <= 2 * interior, "seam %g m, interior %g m", seam,
                  interior);
    s_out_free(&o);
    s_free(&pl);
    /* negative control: the same floor from a distance transform that does not wrap has a step */
    s_seam_planet(&pl);
    size_t cells = (size_t)(pl.w * pl.h);
    uint8_t *kind = malloc(cells);
    uint32_t *d2 = malloc(cells * sizeof *d2);
    for (size_t i = 0; i < cells; i++)
        kind[i] = pl.cls[i] == LAND;
    tb_err_t err;
    ck_assert(tb_edt_squared(kind, pl.w, pl.h, false, 1, d2, &err) == 0);
    tb_coast_bathymetry_shelf_slope(NULL, &p, CELL_M, pl.w, pl.h, kind, d2, pl.cls, &pl.legend,
                                    pl.height, kind);
    s_steps(&pl, &seam, &interior);
    ck_assert_msg(seam > 2 * interior, "no seam step without wrap: seam %g m, interior %g m", seam,
                  interior);
    free(kind);
    free(d2);
    s_free(&pl);
}
END_TEST

/* The bathymetry's rows (a table of the profile's distance part for small d2, the profile itself
 * beyond) against tb_coast_shelf_slope_depth_m cell by cell: every d2 up to past the far reach and
 * TB_EDT_FAR, over seas painted shallower and deeper than the break, on shelves shorter and longer
 * than the table. */
START_TEST(test_bathymetry_rows_are_the_profile)
{
    static const double shape[][3] = {/* shelf_km, slope_km, cell_m */
                                      {3.0, 1.6, 8.0},
                                      {0.4, 0.3, 8.0},
                                      {0.02, 0.5, 2.0},
                                      {2.0, 0.05, 100.0}};
    tb_coast_classes_t legend = {.n = 4};
    legend.ocean[1] = legend.ocean[2] = legend.ocean[3] = true;
    legend.depth_m[1] = 60;
    legend.depth_m[2] = 900;
    legend.depth_m[3] = 3;
    const int64_t w = 400000;
    uint32_t *d2 = malloc(sizeof *d2 * (size_t)w);
    float *height = malloc(sizeof *height * (size_t)w);
    uint8_t *kind = malloc((size_t)w), *cls = malloc((size_t)w);
    for (size_t k = 0; k < sizeof shape / sizeof shape[0]; k++) {
        tb_coast_params_t p;
        tb_coast_params_defaults(&p);
        p.shelf_km = shape[k][0];
        p.slope_km = shape[k][1];
        tb_coast_bathy_t b;
        tb_coast_bathymetry_init(&b, &p, shape[k][2], w, cls, &legend, height, kind);
        ck_assert(b.far_d2 + 2 < (uint32_t)w);
        for (int c = 1; c <= 3; c++) {
            for (int64_t x = 0; x < w; x++) {
                d2[x] = x + 1 < w ? (uint32_t)x : TB_EDT_FAR;
                cls[x] = (uint8_t)c;
                kind[x] = x == 7; /* one land cell */
            }
            tb_coast_bathymetry_row(&b, 0, d2);
            for (int64_t x = 0; x < w; x++) {
                if (x == 7) {
                    ck_assert_int_eq(kind[x], TB_COAST_LAND);
                    continue;
                }
                double painted = legend.depth_m[c];
                double depth = d2[x] > b.far_d2
                                   ? painted
                                   : tb_coast_shelf_slope_depth_m(
                                         &p, tb_coast_waterline_m(d2[x], shape[k][2]), painted);
                if (height[x] != (float)-depth ||
                    kind[x] != (depth < p.shoal_depth_m ? TB_COAST_SHALLOW : TB_COAST_OPEN))
                    ck_abort_msg("shape %zu class %d d2 %u: height %.9g kind %d, profile %.9g", k,
                                 c, d2[x], (double)height[x], kind[x], -depth);
            }
        }
        tb_coast_bathymetry_free(&b);
    }
    free(d2);
    free(height);
    free(kind);
    free(cls);
}
END_TEST

/* ---- the job ---- */

static void s_spec(const s_planet_t *pl, tb_coast_spec_t *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->w = pl->w;
    spec->h = pl->h;
    spec->cell_m = CELL_M;
    s_params(&spec->params);
    spec->legend = pl->legend;
    spec->height_m = pl->height;
    spec->classes = pl->cls;
    spec->mouths = pl->mouths;
    spec->n_mouths = pl->n_mouths;
}

START_TEST(test_spec_round_trips_and_runs_as_a_job)
{
    s_planet_t pl;
    s_busy_planet(&pl);
    /* a duplicate mouth is merged, an unsorted list sorted */
    pl.mouths[2] = pl.mouths[0];
    pl.mouths[2].eroded_m3 = 1e6;
    pl.n_mouths = 3;
    tb_coast_spec_t spec;
    s_spec(&pl, &spec);
    void *bytes, *again;
    size_t n, n2;
    tb_err_t err;
    ck_assert(tb_coast_spec_encode(&spec, &bytes, &n, &err) == 0);
    tb_coast_spec_owned_t dec;
    ck_assert_msg(tb_coast_spec_decode(bytes, n, &dec, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(dec.spec.n_mouths, 2);
    ck_assert(tb_coast_spec_encode(&dec.spec, &again, &n2, &err) == 0);
    ck_assert(n == n2 && memcmp(bytes, again, n) == 0);
    /* the job kind gives the bytes of the in-process solve */
    tb_coast_result_t direct;
    ck_assert(tb_coast_solve(&dec.spec, 1, NULL, NULL, &direct, &err) == 0);
    void *direct_bytes;
    size_t direct_n;
    direct.spec_xxh3 = tb_xxh3(bytes, n); /* the job echoes its spec's hash */
    ck_assert(tb_coast_result_encode(&direct, &direct_bytes, &direct_n, &err) == 0);
    tb_pool_t *pool = tb_pool_new(1, &err);
    tb_job_ctx_t ctx = {1, pool, NULL, NULL};
    tb_job_output_t out;
    ck_assert_msg(tb_job_run("coast", bytes, n, &ctx, &out, &err) == 0, "%s", err.msg);
    ck_assert(out.bytes == direct_n && memcmp(out.data, direct_bytes, direct_n) == 0);
    /* the kind's check (docs/distribution.md, "Verifying results"): the result answers its spec,
     * within the spec's exact bound; not a spec that differs in one mouth's volume */
    const tb_job_kind_t *kind = tb_job_find("coast");
    ck_assert_uint_eq(tb_job_result_bound(kind, bytes, n), out.bytes);
    ck_assert_msg(tb_job_check_result(kind, bytes, n, out.data, out.bytes, &err) == 0, "%s",
                  err.msg);
    void *other;
    size_t on;
    dec.mouths[0].eroded_m3 += 1;
    ck_assert(tb_coast_spec_encode(&dec.spec, &other, &on, &err) == 0);
    dec.mouths[0].eroded_m3 -= 1;
    ck_assert_int_eq(tb_job_check_result(kind, other, on, out.data, out.bytes, &err), -1);
    ck_assert_msg(strstr(err.msg, "coast result answers spec") != NULL, "%s", err.msg);
    free(other);
    ck_assert_int_eq(tb_job_check_result(kind, bytes, n, out.data, out.bytes - 1, &err), -1);
    /* a result that echoes its spec's hash but breaks an invariant of the pass is refused: a
     * height not finite or 1000 km off, an exposure above one, the sediment not adding up, more
     * mouths than the spec sent, percentiles out of order; the honest one passes (above) */
    size_t cells = (size_t)(pl.w * pl.h);
    float keep_h = direct.height_m[cells / 2];
    uint16_t keep_e = direct.exposure[cells / 3];
    tb_coast_stats_t keep_s = direct.stats;
    for (int k = 0; k < 6; k++) {
        const char *want[] = {"has height",      "has height",       "exposure",
                              "does not add up", "mouths delivered", "exposure percentiles"};
        if (k == 0)
            direct.height_m[cells / 2] = NAN;
        else if (k == 1)
            direct.height_m[cells / 2] = 2e6f;
        else if (k == 2)
            direct.exposure[cells / 3] = TB_COAST_EXPOSURE_ONE + 1;
        else if (k == 3)
            direct.stats.laid_m3 += 1 + direct.stats.laid_m3 * 1e-6;
        else if (k == 4)
            direct.stats.mouths = 3;
        else
            direct.stats.exposure_p10 = direct.stats.exposure_p50 + 0.01;
        void *bad;
        size_t bn;
        ck_assert(tb_coast_result_encode(&direct, &bad, &bn, &err) == 0);
        ck_assert_int_eq(tb_job_check_result(kind, bytes, n, bad, bn, &err), -1);
        ck_assert_msg(strstr(err.msg, want[k]) != NULL, "case %d: %s", k, err.msg);
        free(bad);
        direct.height_m[cells / 2] = keep_h;
        direct.exposure[cells / 3] = keep_e;
        direct.stats = keep_s;
    }
    void *good;
    size_t gn;
    ck_assert(tb_coast_result_encode(&direct, &good, &gn, &err) == 0); /* restored: it passes */
    ck_assert_msg(tb_job_check_result(kind, bytes, n, good, gn, &err) == 0, "%s", err.msg);
    free(good);
    tb_coast_result_t back;
    ck_assert(tb_coast_result_decode(out.data, out.bytes, &back, &err) == 0);
    ck_assert(memcmp(back.height_m, direct.height_m, sizeof(float) * (size_t)(pl.w * pl.h)) == 0);
    ck_assert(back.stats.laid_m3 == direct.stats.laid_m3);
    tb_coast_result_free(&back);
    ck_assert(tb_coast_result_decode(out.data, out.bytes - 1, &back, &err) == -1);
    tb_job_output_free(&out);
    tb_pool_destroy(&pool);
    tb_coast_result_free(&direct);
    free(direct_bytes);
    tb_coast_spec_free(&dec);
    free(again);
    free(bytes);
    s_free(&pl);
}
END_TEST

START_TEST(test_bad_spec_is_refused)
{
    s_planet_t pl;
    s_island_planet(&pl);
    tb_coast_spec_t spec;
    s_spec(&pl, &spec);
    void *bytes;
    size_t n;
    tb_err_t err;
    ck_assert(tb_coast_spec_encode(&spec, &bytes, &n, &err) == 0);
    tb_coast_spec_owned_t dec;
    /* every truncation */
    for (size_t cut = 0; cut < n; cut += 1 + cut / 3)
        ck_assert_int_eq(tb_coast_spec_decode(bytes, cut, &dec, &err), -1);
    uint8_t *bad = malloc(n);
    /* a class outside the legend, a mouth off the planet, a broken header, a bad key */
    size_t hlen = ((uint8_t *)bytes)[8] | ((uint8_t *)bytes)[9] << 8 | ((uint8_t *)bytes)[10] << 16;
    size_t cells = (size_t)(pl.w * pl.h);
    memcpy(bad, bytes, n);
    bad[12 + hlen + 4 * cells + 5] = 7;
    ck_assert_int_eq(tb_coast_spec_decode(bad, n, &dec, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "class"));
    memcpy(bad, bytes, n);
    bad[n - 24] = 0xFF; /* x of the mouth */
    bad[n - 17] = 0x7F;
    ck_assert_int_eq(tb_coast_spec_decode(bad, n, &dec, &err), -1);
    memcpy(bad, bytes, n);
    bad[13] = '[';
    ck_assert_int_eq(tb_coast_spec_decode(bad, n, &dec, &err), -1);
    memcpy(bad, bytes, n);
    uint8_t *key = NULL;
    for (size_t k = 12; !key && k + 8 < 12 + hlen; k++)
        if (memcmp(bad + k, "shelf_km", 8) == 0)
            key = bad + k;
    ck_assert_ptr_nonnull(key);
    key[0] = 'x';
    ck_assert_int_eq(tb_coast_spec_decode(bad, n, &dec, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "coast.xhelf_km"));
    /* and through the job runner: an error, not a crash */
    tb_pool_t *pool = tb_pool_new(1, &err);
    tb_job_ctx_t ctx = {1, pool, NULL, NULL};
    tb_job_output_t out;
    ck_assert_int_eq(tb_job_run("coast", bad, n, &ctx, &out, &err), -1);
    ck_assert_int_eq(tb_job_run("coast", bytes, 11, &ctx, &out, &err), -1);
    tb_pool_destroy(&pool);
    free(bad);
    free(bytes);
    s_free(&pl);
}
END_TEST

/* ---- the river supply the region job reports ---- */

/* The smallest region of the 10 km demo planet after 30 steps: its mouths hold, in whole litres,
 * the uplift volume minus the height gained of the solved cells draining to them; every mouth is a
 * cell held at sea level; the mouths survive the result's encoding. */
START_TEST(test_region_reports_river_supply)
{
    tb_err_t err;
    tb_input_options_t opt = {.has_circumference = true, .circumference_km = 10};
    tb_planet_input_t in = {0};
    ck_assert_msg(tb_planet_input_load(NULL, &opt, &in, &err) == 0, "%s", err.msg);
    tb_plan_t *plan = tb_plan_new(&in.manifest, tb_planet_input_rows(&in), NULL, NULL, 1, &err);
    ck_assert_ptr_nonnull(plan);
    const tb_manifest_t *m = tb_plan_manifest(plan);
    int small = 0;
    for (int i = 1; i < tb_plan_region_count(plan); i++)
        if (tb_plan_region(plan, i)->box_cells < tb_plan_region(plan, small)->box_cells)
            small = i;
    const tb_plan_region_t *reg = tb_plan_region(plan, small);
    tb_uplift_probes_t probes;
    tb_grid_t *classes = NULL, *mask = NULL;
    ck_assert(tb_uplift_probes_compute(m, &probes, &err) == 0);
    ck_assert(tb_plan_region_grids(plan, small, &classes, &mask, &err) == 0);
    tb_region_spec_t spec = {.region_id = reg->id,
                             .box = reg->box,
                             .steps = 30,
                             .manifest = m,
                             .probes = &probes,
                             .classes = tb_grid_cu8(classes),
                             .solve_mask = tb_grid_cu8(mask)};
    tb_region_result_t r, back;
    ck_assert_msg(tb_region_solve(&spec, NULL, NULL, NULL, &r, &err) == 0, "%s", err.msg);
    ck_assert(r.n_mouths > 0);
    const uint8_t *mk = tb_grid_cu8(mask);
    double expect = 0, got = 0;
    size_t cells = (size_t)(r.box.w * r.box.h), solved = 0;
    for (size_t i = 0; i < cells; i++)
        if (mk[i] && r.basin[i] >= 0) {
            expect += ((double)r.uplift_m_yr[i] * m->solve.dt_yr * 30 - r.height_m[i]) * m->cell_m *
                      m->cell_m;
            solved++;
        }
    for (size_t k = 0; k < r.n_mouths; k++) {
        got += r.mouths[k].eroded_m3;
        int64_t lx = tb_frame_local_x(&r.box, r.mouths[k].x), ly = r.mouths[k].y - r.box.y0;
        ck_assert(lx >= 0 && ly >= 0 && ly < r.box.h);
        ck_assert_msg(!mk[ly * r.box.w + lx], "mouth %zu lies on solved land", k);
        ck_assert(k == 0 || r.mouths[k].y > r.mouths[k - 1].y ||
                  (r.mouths[k].y == r.mouths[k - 1].y && r.mouths[k].x > r.mouths[k - 1].x));
    }
    ck_assert_msg(expect > 0 && fabs(got - expect) <= 1e-3 * (double)solved + 1e-9 * expect,
                  "mouths %g m3, cells %g m3", got, expect);
    void *bytes;
    size_t n;
    ck_assert(tb_region_result_encode(&r, &bytes, &n, &err) == 0);
    ck_assert_msg(tb_region_result_decode(bytes, n, &back, &err) == 0, "%s", err.msg);
    ck_assert(back.n_mouths == r.n_mouths &&
              memcmp(back.mouths, r.mouths, r.n_mouths * sizeof *r.mouths) == 0);
    tb_region_result_free(&back);
    ck_assert_int_eq(tb_region_result_decode(bytes, n - 1, &back, &err), -1);
    free(bytes);
    tb_region_result_free(&r);
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    tb_plan_destroy(&plan);
    tb_planet_input_free(&in);
}
END_TEST

/* ---- parameters ---- */

static int s_parse(const char *json, tb_coast_params_t *p, tb_err_t *err)
{
    cJSON *o = cJSON_Parse(json);
    int rc = tb_coast_params_from_json(o, "planet.json", p, err);
    cJSON_Delete(o);
    return rc;
}

START_TEST(test_params_are_checked)
{
    tb_coast_params_t p, def, q0;
    tb_coast_params_defaults(&def);
    tb_err_t err;
    ck_assert(s_parse("{}", &p, &err) == 0 && memcmp(&p, &def, sizeof p) == 0);
    ck_assert_double_eq(def.break_depth_m, 130);
    ck_assert_double_eq(def.surf_reach_m, 110);
    ck_assert(s_parse("{\"shelf_km\": 2, \"wave_from_deg\": [200, 280]}", &p, &err) == 0);
    ck_assert(p.shelf_km == 2 &&
              tb_coast_wave_mask(&p) == ((1u << TB_COAST_W) | (1u << TB_COAST_SW)));
    ck_assert(s_parse("{\"wave_from_deg\": [-45, 45]}", &q0, &err) == 0);
    ck_assert_uint_eq(tb_coast_wave_mask(&q0),
                      (1u << TB_COAST_NW) | (1u << TB_COAST_N) | (1u << TB_COAST_NE));
    ck_assert_uint_eq(tb_coast_wave_mask(&def), 0xFF);
    /* the canonical JSON parses back to the same parameters */
    cJSON *j = tb_coast_params_to_json(&p);
    tb_coast_params_t q;
    ck_assert(tb_coast_params_from_json(j, "x", &q, &err) == 0 && memcmp(&p, &q, sizeof p) == 0);
    cJSON_Delete(j);
    ck_assert(s_parse("{\"shelf_kms\": 2}", &p, &err) == -1);
    ck_assert(err.code == TB_E_UNKNOWN_KEY && strstr(err.msg, "planet.json: coast.shelf_kms"));
    ck_assert(s_parse("{\"break_depth_m\": -4}", &p, &err) == -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "coast.break_depth_m: expected a number in 1..11000"));
    ck_assert(s_parse("{\"cut_fraction\": \"lots\"}", &p, &err) == -1);
    ck_assert(s_parse("{\"wave_from_deg\": []}", &p, &err) == -1);
    ck_assert(s_parse("{\"wave_from_deg\": [90, 10]}", &p, &err) == -1);
    ck_assert(s_parse("{\"wave_from_deg\": [\"N\", 10]}", &p, &err) == -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "coast.wave_from_deg"));
    ck_assert(s_parse("{\"wave_from_deg\": [10, 40]}", &p, &err) == -1); /* no compass point */
    ck_assert_ptr_nonnull(strstr(err.msg, "coast.wave_from_deg"));
    ck_assert(s_parse("{\"carry_m\": 50}", &p, &err) == -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "coast.carry_m"));
    ck_assert(s_parse("[1]", &p, &err) == -1);
    /* against the planet: a drift kernel wider than a small planet */
    tb_coast_params_defaults(&p);
    ck_assert(tb_coast_params_check(&p, 8, 100, &err) == -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "coast.drift_km"));
    ck_assert(tb_coast_params_check(&p, 8, 3125, &err) == 0);
}
END_TEST

/* The printed block carries every number of the coast block. */
START_TEST(test_block_prints)
{
    s_planet_t pl;
    s_island_planet(&pl);
    tb_coast_params_t p;
    s_params(&p);
    s_out_t o;
    s_run(&pl, &p, NULL, &o);
    char buf[1024];
    tb_coast_stats_format(&o.stats, buf, sizeof buf);
    const char *words[] = {"km of shoreline", "% sea", "shelf",    "planed",     "Mm3",
                           "river mouths",    "laid",  "unplaced", "new beach",  "backshore",
                           "median",          "P90",   "drowned",  "p10/p50/p90"};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        ck_assert_msg(strstr(buf, words[k]), "no \"%s\" in:\n%s", words[k], buf);
    ck_assert_int_eq(o.stats.mouths, 1);
    ck_assert(o.stats.backshore_cells > 0 && o.stats.backshore_p90_m >= o.stats.backshore_median_m);
    ck_assert(o.stats.exposure_p10 <= o.stats.exposure_p50 &&
              o.stats.exposure_p50 <= o.stats.exposure_p90);
    s_out_free(&o);
    s_free(&pl);
}
END_TEST

/* The box sum straight from its definition: X wraps, rows beyond the Y edges count zero. */
static void s_box_direct(const int64_t *v, int64_t w, int64_t h, int64_t r, int64_t *out)
{
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            uint64_t s = 0;
            for (int64_t yy = y - r; yy <= y + r; yy++)
                for (int64_t xx = x - r; yy >= 0 && yy < h && xx <= x + r; xx++)
                    s += (uint64_t)v[yy * w + (xx % w + w) % w];
            out[y * w + x] = (int64_t)s;
        }
}

/* A field that is zero but for a few clusters of values (some negative, some huge, so the sums
 * wrap), like a coastal field over a planet of open sea. */
static void s_sparse_field(int64_t *v, int64_t w, int64_t h, uint64_t seed, int clusters)
{
    memset(v, 0, (size_t)(w * h) * sizeof *v);
    uint64_t z = seed;
    for (int c = 0; c < clusters; c++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        int64_t cx = (int64_t)(z >> 33) % w, cy = (int64_t)(z >> 20) % h;
        for (int k = 0; k < 12; k++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            int64_t x = (cx + (int64_t)(z >> 60) - 8 + w) % w,
                    y = cy + (int64_t)((z >> 56) & 7) - 4;
            if (y >= 0 && y < h)
                v[y * w + x] = (k % 5 == 4) ? (int64_t)(z >> 2) : (int64_t)(z >> 40) - 8000000;
        }
    }
}

/* The box sum skips the blocks where a field is zero (jobs/coast/boxsum.c): on sparse and dense
 * fields, planets whose width is not a whole number of blocks, radii wider than a block and
 * clusters on the seam and the Y edges, it equals the direct sum to the bit. The negative control:
 * a lone value in an all-zero field, at every column in turn (so at the ends of the narrow last
 * block and of the blocks beside the seam), fills exactly its box, across the seam too: a skip that
 * reached one block short fails it. */
START_TEST(test_box_sum_skipping_zeros_is_exact)
{
    const int64_t sizes[][3] = {{200, 40, 3}, {131, 57, 20}, {300, 30, 70}, {150, 9, 74},
                                {64, 20, 31}, {257, 33, 1},  {389, 20, 10}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t w = sizes[k][0], h = sizes[k][1], r = sizes[k][2];
        size_t n = (size_t)(w * h);
        int64_t *v = malloc(n * sizeof *v), *want = malloc(n * sizeof *v),
                *got = malloc(n * sizeof *v);
        tb_err_t err;
        for (int clusters = 0; clusters <= 40; clusters += 4) {
            s_sparse_field(v, w, h, 77 + (uint64_t)k * 131 + (uint64_t)clusters, clusters);
            if (clusters == 40)
                for (size_t i = 0; i < n; i++)
                    v[i] = (int64_t)(i * 2654435761u % 1000) - 500; /* dense */
            s_box_direct(v, w, h, r, want);
            memcpy(got, v, n * sizeof *v);
            ck_assert(tb_coast_boxsum_i64(NULL, got, w, h, r, &err) == 0);
            ck_assert_msg(memcmp(got, want, n * sizeof *v) == 0,
                          "box sum %lld x %lld r %lld, %d clusters differs from the direct sum",
                          (long long)w, (long long)h, (long long)r, clusters);
        }
        /* the negative control: a lone value at (x0, y0), every column in turn, in a zero field */
        for (int64_t x0 = 0; x0 < w; x0++) {
            memset(got, 0, n * sizeof *got);
            int64_t y0 = (x0 * 7) % h;
            got[y0 * w + x0] = 5;
            ck_assert(tb_coast_boxsum_i64(NULL, got, w, h, r, &err) == 0);
            int64_t inside = 0;
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++) {
                    int64_t dx = labs(x - x0), dy = labs(y - y0);
                    dx = dx < w - dx ? dx : w - dx;
                    bool in = dx <= r && dy <= r;
                    ck_assert_msg(got[y * w + x] == (in ? 5 : 0),
                                  "box sum %lld x %lld r %lld of a lone 5 at (%lld, %lld) reads "
                                  "%lld at (%lld, %lld)",
                                  (long long)w, (long long)h, (long long)r, (long long)x0,
                                  (long long)y0, (long long)got[y * w + x], (long long)x,
                                  (long long)y);
                    inside += in;
                }
            ck_assert(inside > 0);
        }
        free(v);
        free(want);
        free(got);
    }
}
END_TEST

/* The tent in one pass (jobs/coast/boxsum.c, tb_coast_tentsum_i64) gives the bits of the box of
 * radius ceil(r / 2) twice, on sparse and dense fields (values that wrap round 2^64 among them),
 * planets narrower than the tent's span (so the row tent wraps onto itself) and lower than its
 * radius, on one and on three threads. Negative control (tried, with the same sizes and fields in
 * a scratch program): the same comparison with one box instead of two fails. */
/* The delta stretch's division by a tent's weight as a multiply and a shift (jobs/coast/divide.h)
 * gives C's quotient: every tent weight (2b + 1)^4 up to b = 2000, powers of two and their
 * neighbours, the largest divisors, against numerators at and around multiples of the divisor, the
 * top of the range, pseudo-random ones and negative ones. The control: the same reciprocal one less
 * gives a wrong quotient for some of them, so the comparison can fail. */
static uint64_t s_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

START_TEST(test_divide_by_constant_is_exact)
{
    int64_t ds[4200];
    size_t nd = 0;
    for (int64_t b = 0; b <= 2000; b++)
        ds[nd++] = (2 * b + 1) * (2 * b + 1) * (2 * b + 1) * (2 * b + 1);
    for (int k = 1; k < 63; k++) {
        ds[nd++] = (int64_t)1 << k;
        ds[nd++] = ((int64_t)1 << k) - 1;
        ds[nd++] = ((int64_t)1 << k) + 1;
    }
    ds[nd++] = INT64_MAX;
    ds[nd++] = INT64_MAX - 1;
    ds[nd++] = 2;
    ds[nd++] = 3;
    ds[nd++] = 7;
    ck_assert_uint_le(nd, sizeof ds / sizeof *ds);
    uint64_t x = 0x9E3779B97F4A7C15u;
    int64_t controls = 0;
    for (size_t j = 0; j < nd; j++) {
        int64_t d = ds[j];
        tb_coast_div_t v = tb_coast_div_make(d), bad = v;
        bad.m -= 1;
        int64_t ns[64];
        size_t nn = 0;
        int64_t top = INT64_MAX / d; /* the largest multiple's quotient */
        const int64_t qs[] = {0, 1, 2, 3, top / 2, top - 1, top};
        for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
            if (qs[k] < 0 || qs[k] > top)
                continue;
            int64_t n = qs[k] * d;
            ns[nn++] = n;
            if (n > 0)
                ns[nn++] = n - 1;
            if (n <= INT64_MAX - 1)
                ns[nn++] = n + 1;
            if (n <= INT64_MAX - (d - 1))
                ns[nn++] = n + (d - 1);
        }
        ns[nn++] = INT64_MAX;
        ns[nn++] = INT64_MAX - 1;
        ns[nn++] = -1;
        ns[nn++] = -d;
        ns[nn++] = INT64_MIN;
        for (int k = 0; k < 16; k++) {
            unsigned shift = 1 + (unsigned)(s_next(&x) % 63);
            ns[nn++] = (int64_t)(s_next(&x) >> shift);
        }
        ck_assert_uint_le(nn, sizeof ns / sizeof *ns);
        for (size_t k = 0; k < nn; k++) {
            int64_t n = ns[k];
            ck_assert_msg(tb_coast_div(&v, n) == n / d, "%lld / %lld: %lld, not %lld", (long long)n,
                          (long long)d, (long long)tb_coast_div(&v, n), (long long)(n / d));
            controls += tb_coast_div(&bad, n) != n / d;
        }
    }
    /* the control: a reciprocal one too small is caught (at an exact multiple, at least) */
    ck_assert_int_gt(controls, (int64_t)nd / 2);
}
END_TEST

START_TEST(test_tent_is_two_boxes)
{
    const int64_t sizes[][3] = {{9, 5, 3},     {10, 40, 4},    {31, 100, 30}, {64, 64, 5},
                                {100, 37, 49}, {131, 200, 20}, {389, 90, 63}, {65, 300, 63}};
    tb_err_t err;
    tb_pool_t *pool = tb_pool_new(3, &err);
    ck_assert(pool != NULL);
    for (int threads = 1; threads <= 3; threads += 2)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            int64_t w = sizes[k][0], h = sizes[k][1], r = sizes[k][2], b = (r + 1) / 2;
            size_t n = (size_t)(w * h);
            int64_t *v = malloc(n * sizeof *v), *want = malloc(n * sizeof *v);
            for (int clusters = 0; clusters <= 40; clusters += 8) {
                s_sparse_field(v, w, h, 991 + (uint64_t)k * 17 + (uint64_t)clusters, clusters);
                if (clusters == 40)
                    for (size_t i = 0; i < n; i++)
                        v[i] = (int64_t)(i * 2654435761u % 1000) - 500; /* dense */
                memcpy(want, v, n * sizeof *v);
                ck_assert(tb_coast_boxsum_i64(NULL, want, w, h, b, &err) == 0);
                ck_assert(tb_coast_boxsum_i64(NULL, want, w, h, b, &err) == 0);
                ck_assert(tb_coast_tentsum_i64(threads > 1 ? pool : NULL, v, w, h, r, &err) == 0);
                ck_assert_msg(memcmp(v, want, n * sizeof *v) == 0,
                              "tent %lld x %lld r %lld, %d clusters, %d threads differs from two "
                              "boxes",
                              (long long)w, (long long)h, (long long)r, clusters, threads);
            }
            free(v);
            free(want);
        }
    tb_pool_destroy(&pool);
}
END_TEST

/* map_coast: cool where the surf cut, warm where sediment lay, plain ground elsewhere (deep sea the
 * darkest); map_exposure: a colour only where an exposure was carried. */
START_TEST(test_maps_colour_what_moved)
{
    s_planet_t pl;
    s_island_planet(&pl);
    tb_coast_params_t p;
    s_params(&p);
    s_out_t o;
    s_run(&pl, &p, NULL, &o);
    uint8_t *land = malloc((size_t)(pl.w * pl.h));
    for (int64_t i = 0; i < pl.w * pl.h; i++)
        land[i] = pl.cls[i] == LAND;
    tb_image_t img;
    tb_err_t err;
    double top;
    ck_assert(tb_map_coast(o.moved, pl.height, land, pl.w, pl.h, p.break_depth_m, 4096, &img, &top,
                           &err) == 0);
    ck_assert(img.w == pl.w && img.h == pl.h && top >= 1);
    int cut = 0, laid = 0, plain = 0;
    for (int64_t i = 0; i < pl.w * pl.h; i++) {
        const uint8_t *px = (const uint8_t *)img.pixels + 3 * i;
        if (o.moved[i] <= -0.01) {
            ck_assert(px[2] > px[0]);
            cut++;
        } else if (o.moved[i] >= 0.01) {
            ck_assert(px[0] > px[2]);
            laid++;
        } else if (fabs(o.moved[i]) < 0.01) {
            ck_assert(px[0] == px[1] || abs(px[0] - px[1]) < 10);
            plain++;
        }
    }
    ck_assert(cut > 0 && laid > 0 && plain > 0);
    tb_image_free(&img);
    ck_assert(tb_map_exposure(o.exposure, land, pl.w, pl.h, 4096, &img, &err) == 0);
    const uint8_t *corner = img.pixels; /* far out at sea: no exposure carried there */
    ck_assert(o.exposure[0] == TB_COAST_NO_EXPOSURE && corner[0] == 60 && corner[1] == 62 &&
              corner[2] == 70);
    tb_image_free(&img);
    /* reduced by a whole factor, the largest move of a block survives */
    ck_assert(tb_map_coast(o.moved, pl.height, land, pl.w, pl.h, p.break_depth_m, 100, &img, &top,
                           &err) == 0);
    ck_assert(img.w == (uint32_t)((pl.w + 3) / 4));
    tb_image_free(&img);
    free(land);
    s_out_free(&o);
    s_free(&pl);
}
END_TEST

/* Cells with d2 <= reach_d2 whose block's band distance is above tb_coast_band_blocks(reach_d2). */
static int64_t s_band_misses(const tb_coast_band_t *band, const uint32_t *d2, int64_t w, int64_t h,
                             uint32_t reach_d2)
{
    int64_t blocks = tb_coast_band_blocks(reach_d2), misses = 0;
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            int64_t x0, x1;
            if (d2[y * w + x] <= reach_d2 &&
                !tb_coast_band_in(band, y, x / TB_COAST_BAND_BLOCK, blocks, &x0, &x1))
                misses++;
        }
    return misses;
}

/* The coastal band (jobs/coast/band.c) that the phases skip by: on planets whose width is not a
 * whole number of blocks, with islands across the seam and the Y edges, every cell within a reach
 * of the waterline (its d2, land and sea, as the pass computes it) lies in a block the band keeps
 * for that reach; and the band is not everything (the far sea's blocks are out at small reaches).
 * The negative control: the block of one cell within the reach moved one block past it is
 * caught. */
START_TEST(test_band_holds_every_cell_within_reach)
{
    const int64_t sizes[][2] = {{203, 77}, {50, 33}, {17, 5}, {333, 64}};
    const uint32_t reaches[] = {1, 2, 5, 50, 300, 1000, 5000, 40000};
    tb_err_t err;
    int64_t out_somewhere = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t w = sizes[k][0], h = sizes[k][1];
        size_t n = (size_t)(w * h);
        uint8_t *land = calloc(n, 1), *sea = malloc(n), *kind = malloc(n);
        uint32_t *d2 = malloc(n * sizeof *d2), *d2s = malloc(n * sizeof *d2s);
        for (int isl = 0; isl < 3; isl++) {
            int64_t cx = (int64_t)(s_mix((uint32_t)(k * 7 + (size_t)isl)) % (uint32_t)w),
                    cy = (int64_t)(s_mix((uint32_t)(k * 7 + (size_t)isl + 100)) % (uint32_t)h);
            double r = 1 + (double)(s_mix((uint32_t)(k + (size_t)isl * 13)) % 9);
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++)
                    if (hypot(s_dx(x, cx, w), (double)(y - cy)) <= r)
                        land[y * w + x] = 1;
        }
        for (size_t i = 0; i < n; i++) {
            sea[i] = !land[i];
            kind[i] = land[i] ? TB_COAST_LAND : TB_COAST_OPEN;
        }
        ck_assert(tb_edt_squared(land, w, h, true, 1, d2, &err) == 0);
        ck_assert(tb_edt_squared(sea, w, h, true, 1, d2s, &err) == 0);
        for (size_t i = 0; i < n; i++)
            if (land[i])
                d2[i] = d2s[i];
        tb_coast_band_t band = {0};
        ck_assert(tb_coast_band_make(NULL, kind, w, h, &band, &err) == 0);
        for (size_t r = 0; r < sizeof reaches / sizeof reaches[0]; r++) {
            ck_assert_msg(s_band_misses(&band, d2, w, h, reaches[r]) == 0,
                          "band of %lld x %lld misses a cell within d2 %u", (long long)w,
                          (long long)h, reaches[r]);
            for (int64_t b = 0; b < band.bw * band.bh; b++)
                out_somewhere += band.dist[b] > tb_coast_band_blocks(reaches[r]);
        }
        /* the negative control: the block of the farthest cell within d2 300, one block too far */
        size_t far = n;
        for (size_t i = 0; i < n; i++)
            if (d2[i] <= 300 && (far == n || d2[i] > d2[far]))
                far = i;
        ck_assert(far < n);
        size_t blk = (size_t)((int64_t)far / w / TB_COAST_BAND_BLOCK) * (size_t)band.bw +
                     (size_t)((int64_t)far % w / TB_COAST_BAND_BLOCK);
        band.dist[blk] = (uint16_t)(tb_coast_band_blocks(300) + 1);
        ck_assert(s_band_misses(&band, d2, w, h, 300) > 0);
        tb_coast_band_free(&band);
        /* a planet of sea alone: no block near a waterline, and no cell within any reach */
        memset(kind, TB_COAST_OPEN, n);
        ck_assert(tb_coast_band_make(NULL, kind, w, h, &band, &err) == 0);
        for (int64_t b = 0; b < band.bw * band.bh; b++)
            ck_assert(band.dist[b] == UINT16_MAX);
        tb_coast_band_free(&band);
        free(land);
        free(sea);
        free(kind);
        free(d2);
        free(d2s);
    }
    ck_assert(out_somewhere > 0);
}
END_TEST

Suite *coast_suite(void)
{
    Suite *s = suite_create("coast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_budget_closes_on_an_island);
    tcase_add_test(tc, test_budget_catches_a_leak);
    tcase_add_test(tc, test_roll_gives_the_rolled_result);
    tcase_add_test(tc, test_threads_give_the_same_bits);
    tcase_add_test(tc, test_closed_bay_is_sheltered_and_gets_more_beach);
    tcase_add_test(tc, test_straight_open_coast_is_not_sheltered);
    tcase_add_test(tc, test_bay_across_the_seam_is_sheltered_like_mid_map);
    tcase_add_test(tc, test_floor_descends_to_the_painted_depth);
    tcase_add_test(tc, test_seam_step_like_an_interior_column);
    tcase_add_test(tc, test_bathymetry_rows_are_the_profile);
    tcase_add_test(tc, test_river_mouth_builds_a_delta);
    tcase_add_test(tc, test_delta_grows_with_supply);
    tcase_add_test(tc, test_spec_round_trips_and_runs_as_a_job);
    tcase_add_test(tc, test_bad_spec_is_refused);
    tcase_add_test(tc, test_region_reports_river_supply);
    tcase_add_test(tc, test_params_are_checked);
    tcase_add_test(tc, test_block_prints);
    tcase_add_test(tc, test_maps_colour_what_moved);
    tcase_add_test(tc, test_box_sum_skipping_zeros_is_exact);
    tcase_add_test(tc, test_tent_is_two_boxes);
    tcase_add_test(tc, test_divide_by_constant_is_exact);
    tcase_add_test(tc, test_band_holds_every_cell_within_reach);
    suite_add_tcase(s, tc);
    return s;
}
