/* Sink resolution (jobs/geology/sinks.h): after it there are no pits, every receiver is strictly
 * lower than its donor, the stack built on it is a topological order, the lake method gives the
 * same bits as the textbook flood of the whole box, and the same bits in any box. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "jobs/geology/receivers.h"
#include "jobs/geology/sinks.h"
#include "jobs/geology/spl.h"
#include "jobs/geology/topology.h"
#include "support/tb_geo_test.h"

typedef struct {
    tb_frame_t box;
    tb_topo_t topo;
    uint8_t *node, *dir;
    int32_t *pits;
    float *h;
    tb_sinks_t *sinks;
    size_t solved, npits;
} s_case_t;

static void s_open(s_case_t *k, const tb_frame_t *box, const uint8_t *mask, const float *h)
{
    k->box = *box;
    ck_assert_int_eq(tb_topo_init(&k->topo, &k->box, NULL), 0);
    size_t n = k->topo.n;
    k->node = malloc(n);
    k->dir = malloc(n);
    k->pits = malloc(n * sizeof(int32_t));
    k->h = malloc(n * sizeof(float));
    memcpy(k->h, h, n * sizeof(float));
    k->solved = tb_topo_classify(&k->topo, mask, k->node);
    for (size_t c = 0; c < n; c++)
        if (!(k->node[c] & TB_NODE_SOLVED))
            k->h[c] = 0;
    k->sinks = tb_sinks_new(n, NULL);
    ck_assert_ptr_nonnull(k->sinks);
}

static void s_close(s_case_t *k)
{
    free(k->node);
    free(k->dir);
    free(k->pits);
    free(k->h);
    tb_sinks_destroy(&k->sinks);
}

static tb_router_jitter_t s_jit(int64_t step)
{
    tb_router_jitter_t j = {tb_hash_key(5, TB_SALT_ROUTER_JITTER, step), 5e-4};
    return j;
}

/* Router, then the solve's sink resolution. */
static void s_resolve(s_case_t *k)
{
    tb_router_jitter_t jit = s_jit(3);
    k->npits = tb_receivers_d8(&k->topo, k->node, k->h, &jit, k->dir, k->pits);
    tb_err_t err;
    int64_t r = tb_sinks_fill_priority_flood(k->sinks, &k->topo, k->node, k->h, k->dir, k->pits,
                                             k->npits, &jit, &err);
    ck_assert_msg(r >= 0, "%s", err.msg);
}

/* No pits, every receiver strictly lower, and the stack lists every solved cell after its
 * receiver. */
static void s_check_drains(const s_case_t *k)
{
    const tb_topo_t *t = &k->topo;
    int32_t *pos = malloc(t->n * sizeof(int32_t));
    for (size_t c = 0; c < t->n; c++) {
        pos[c] = -1;
        if (!(k->node[c] & TB_NODE_SOLVED))
            continue;
        ck_assert_msg(k->dir[c] != TB_DIR_NONE, "cell %zu is still a pit", c);
        size_t r = tb_topo_nb(t, k->node[c], c, k->dir[c]);
        ck_assert_msg(k->h[r] < k->h[c], "cell %zu (%.9g) drains to %zu (%.9g)", c, k->h[c], r,
                      k->h[r]);
    }
    tb_stack_t st;
    st.order = malloc(t->n * sizeof(int32_t));
    st.tree_start = malloc((t->n + 1) * sizeof(int32_t));
    st.scratch = malloc(t->n * sizeof(int32_t));
    ck_assert_uint_eq(tb_spl_build_stack(t, k->node, k->dir, &st), k->solved);
    for (size_t s = 0; s < st.count; s++) {
        ck_assert_int_eq(pos[st.order[s]], -1); /* listed once */
        pos[st.order[s]] = (int32_t)s;
    }
    for (size_t c = 0; c < t->n; c++) {
        if (!(k->node[c] & TB_NODE_SOLVED))
            continue;
        size_t r = tb_topo_nb(t, k->node[c], c, k->dir[c]);
        if (k->node[r] & TB_NODE_SOLVED)
            ck_assert_msg(pos[r] < pos[c], "receiver of %zu comes after it in the stack", c);
    }
    /* Each tree is one contiguous range rooted at a mouth. */
    for (size_t b = 0; b < st.ntrees; b++) {
        size_t c = (size_t)st.order[st.tree_start[b]];
        ck_assert(!(k->node[tb_topo_nb(t, k->node[c], c, k->dir[c])] & TB_NODE_SOLVED));
    }
    free(st.order);
    free(st.tree_start);
    free(st.scratch);
    free(pos);
}

/* An island of noisy terrain full of pits, inside an ocean, in a box of the given placement. */
static void s_island(const tb_frame_t *box, double amplitude, double dome, double quantum,
                     uint8_t **mask, float **h)
{
    *mask = tb_geo_bytes(box);
    *h = tb_geo_floats(box);
    tb_geo_ellipse_u8(box, 1000, 60, 40, 30, 1, *mask);
    tb_geo_noise(box, 11, amplitude, *h);
    /* A dome under the noise, so there are big and small depressions. */
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++) {
            size_t c = tb_idx(box->w, i, j);
            double x = (double)tb_frame_lattice_x(box, i), y = (double)tb_frame_lattice_y(box, j);
            double dx = fabs(x - 1000);
            if (dx > 1000)
                dx = 2000 - dx;
            double r = sqrt(dx * dx / 1600 + (y - 60) * (y - 60) / 900);
            double v = (*h)[c] + dome * (1 - r);
            if (quantum > 0)
                v = floor(v / quantum) * quantum; /* exact ties everywhere */
            (*h)[c] = (float)v;
        }
}

/* Land over the whole box on an ulp ladder: each cell one float ulp above its west neighbour, so
 * every cell drains west. When dam >= 0, cups open to the east (a wall of `dam` ulps above the
 * ladder's level at the cup's west side: its west column and its north and south rows, 51 x 25
 * cells, one every 100 columns and 40 rows) trap the ladder: each fills as a lake whose fill lifts
 * the cells east of its mouth into the next lake, and so on, the chained lakes of a young plateau,
 * which pass the box's cells in work (276 pits, 69 000 cells of work in a box of 48 000). */
static void s_ladder(const tb_frame_t *box, int64_t dam, uint8_t **mask, float **h)
{
    *mask = tb_geo_bytes(box);
    *h = tb_geo_floats(box);
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++) {
            size_t c = tb_idx(box->w, i, j);
            int64_t up = i, ci = i % 100 - 10, cj = j % 40 - 8;
            if (dam >= 0 && ci >= 0 && ci <= 50 && cj >= 0 && cj <= 24 &&
                (ci == 0 || cj == 0 || cj == 24))
                up = i - ci + dam;
            float v = 100.0f;
            uint32_t bits;
            memcpy(&bits, &v, sizeof bits);
            bits += (uint32_t)up;
            memcpy(&v, &bits, sizeof v);
            (*mask)[c] = 1;
            (*h)[c] = v;
        }
}

START_TEST(test_noise_has_pits_and_they_are_resolved)
{
    tb_frame_t box = tb_geo_box(2000, 200, 950, 20, 100, 80);
    uint8_t *mask;
    float *h;
    s_island(&box, 8, 20, 0, &mask, &h);
    s_case_t k;
    s_open(&k, &box, mask, h);
    s_resolve(&k);
    /* Negative control: the terrain really is full of pits before the resolution. */
    ck_assert_uint_gt(k.npits, 50);
    s_check_drains(&k);
    /* Raised, never lowered. */
    for (size_t c = 0; c < k.topo.n; c++)
        if (k.node[c] & TB_NODE_SOLVED)
            ck_assert(k.h[c] >= h[c]);
    s_close(&k);
    free(mask);
    free(h);
}
END_TEST

/* The lake method (and its closed-basin fallback) against the whole-box flood: same bits. Returns
 * how many times the fallback ran. */
static int64_t s_against_full(double amplitude, double dome, double quantum)
{
    /* Ocean round the island, so the lake method's work budget (half the box) holds. */
    tb_frame_t box = tb_geo_box(2000, 200, 850, 0, 300, 160);
    uint8_t *mask;
    float *h;
    s_island(&box, amplitude, dome, quantum, &mask, &h);
    s_case_t a, b;
    s_open(&a, &box, mask, h);
    s_open(&b, &box, mask, h);
    s_resolve(&a);
    tb_router_jitter_t jit = s_jit(3);
    tb_receivers_d8(&b.topo, b.node, b.h, &jit, b.dir, b.pits);
    ck_assert_int_eq(
        tb_sinks_fill_priority_flood_full(b.sinks, &b.topo, b.node, b.h, b.dir, &jit, NULL), 0);
    s_check_drains(&a);
    s_check_drains(&b);
    int64_t fallbacks = tb_sinks_stats(a.sinks)->fallbacks;
    size_t raised = 0;
    for (size_t c = 0; c < a.topo.n; c++) {
        ck_assert_msg(memcmp(&a.h[c], &b.h[c], sizeof(float)) == 0, "cell %zu: %.9g vs %.9g", c,
                      a.h[c], b.h[c]);
        ck_assert_uint_eq(a.dir[c], b.dir[c]);
        raised += a.h[c] != h[c] && (a.node[c] & TB_NODE_SOLVED);
    }
    ck_assert_uint_gt(raised, 10);
    s_close(&a);
    s_close(&b);
    free(mask);
    free(h);
    return fallbacks;
}

START_TEST(test_lakes_equal_the_whole_box_flood)
{
    ck_assert_int_eq(s_against_full(8, 20, 0), 0); /* the lake method alone */
}
END_TEST

START_TEST(test_lakes_equal_the_whole_box_flood_with_ties)
{
    /* Heights on a 0.5 m lattice: flats and exact ties everywhere. */
    s_against_full(8, 20, 0.5);
}
END_TEST

START_TEST(test_flat_plateau_drains)
{
    /* A flat start: every cell of the island is a pit but the rim; the deep nest of lakes takes the
     * closed-basin flood, which must agree with the whole-box flood too. */
    ck_assert_int_gt(s_against_full(0, 0, 0), 0);
    s_against_full(1e-3, 0, 0); /* nearly flat: a nest of tiny lakes */
}
END_TEST

/* One workspace resolving terrain after terrain, as the solve's steps do: the lakes' budget follows
 * the earlier calls (sinks.c, s_budget: half a box, twice the last lakes' work, probes after a
 * fallback), which must change the cost only. Each call against the whole-box flood on a fresh
 * workspace; the sequence must take both the fallback and the lakes alone, so both budgets ran. */
START_TEST(test_the_budget_history_changes_no_bit)
{
    tb_frame_t box = tb_geo_box(2000, 200, 850, 0, 300, 160);
    s_case_t a;
    uint8_t *mask;
    float *h;
    s_island(&box, 8, 20, 0, &mask, &h);
    s_open(&a, &box, mask, h);
    free(mask);
    free(h);
    const double amp[] = {0, 1e-3, 8, 0, 0.02, 8, 0.2, 1e-3, 8, 8};
    int64_t lakes_only = 0, fell_back = 0;
    for (size_t r = 0; r < sizeof amp / sizeof amp[0]; r++) {
        s_island(&box, amp[r], amp[r] > 1 ? 20 : 0, 0, &mask, &h);
        memcpy(a.h, h, a.topo.n * sizeof(float));
        for (size_t c = 0; c < a.topo.n; c++)
            if (!(a.node[c] & TB_NODE_SOLVED))
                a.h[c] = 0;
        s_case_t b;
        s_open(&b, &box, mask, h);
        int64_t before = tb_sinks_stats(a.sinks)->fallbacks;
        s_resolve(&a);
        tb_router_jitter_t jit = s_jit(3);
        tb_receivers_d8(&b.topo, b.node, b.h, &jit, b.dir, b.pits);
        ck_assert_int_eq(
            tb_sinks_fill_priority_flood_full(b.sinks, &b.topo, b.node, b.h, b.dir, &jit, NULL), 0);
        if (tb_sinks_stats(a.sinks)->fallbacks > before)
            fell_back++;
        else
            lakes_only++;
        for (size_t c = 0; c < a.topo.n; c++) {
            ck_assert_msg(memcmp(&a.h[c], &b.h[c], sizeof(float)) == 0,
                          "call %zu, cell %zu: %.9g vs %.9g", r, c, a.h[c], b.h[c]);
            ck_assert_uint_eq(a.dir[c], b.dir[c]);
        }
        s_close(&b);
        free(mask);
        free(h);
    }
    ck_assert_int_gt(fell_back, 0);
    ck_assert_int_gt(lakes_only, 0);
    s_close(&a);
}
END_TEST

/* Band workers on a pool of two threads (tb_sinks_fill_bands, as the solve calls it with two
 * threads), terrain after terrain on one workspace so the budget's history runs too, against the
 * whole-box flood on a fresh workspace: the same bits with 2 and 4 bands. Most calls are chained
 * lakes (s_ladder), whose work passes half a band; each band's worker gets its rows' share of the
 * call's budget and must finish most of them: over three quarters of the lakes in bands (87-88 %;
 * 49-51 % when a band's budget was half its cells, as before 8 December). */
START_TEST(test_band_workers_give_the_whole_box_flood)
{
    tb_frame_t box = tb_geo_box(2000, 200, 850, 0, 300, 160);
    tb_pool_t *pool = tb_pool_new(2, NULL);
    ck_assert_ptr_nonnull(pool);
    /* An island's noise of this amplitude, or (below 0) a ladder with cups walled -amp ulps high */
    const double amp[] = {8,    0.2, -60, -60, -60,  -75, -60, -75, 8,
                          0.02, -90, -45, 8,   1e-3, 8,   -60, -60, -60};
    for (int nbands = 2; nbands <= 4; nbands += 2) {
        tb_sinks_t *ws = tb_sinks_new((size_t)(box.w * box.h), NULL); /* kept from call to call */
        ck_assert_ptr_nonnull(ws);
        for (size_t r = 0; r < sizeof amp / sizeof amp[0]; r++) {
            uint8_t *mask;
            float *h;
            if (amp[r] < 0)
                s_ladder(&box, (int64_t)-amp[r], &mask, &h);
            else
                s_island(&box, amp[r], amp[r] > 1 ? 20 : 0, 0, &mask, &h);
            s_case_t a, b;
            s_open(&a, &box, mask, h);
            s_open(&b, &box, mask, h);
            tb_sinks_destroy(&a.sinks);
            a.sinks = ws;
            tb_band_t bands[4];
            ck_assert_int_eq(tb_topo_bands(&a.topo, a.node, nbands, false, bands), nbands);
            tb_router_jitter_t jit = s_jit(3);
            a.npits = tb_receivers_d8(&a.topo, a.node, a.h, &jit, a.dir, a.pits);
            tb_err_t err;
            ck_assert_msg(tb_sinks_fill_bands(a.sinks, &a.topo, a.node, a.h, a.dir, a.pits, a.npits,
                                              &jit, pool, bands, nbands, &err) >= 0,
                          "%s", err.msg);
            tb_receivers_d8(&b.topo, b.node, b.h, &jit, b.dir, b.pits);
            ck_assert_int_eq(
                tb_sinks_fill_priority_flood_full(b.sinks, &b.topo, b.node, b.h, b.dir, &jit, NULL),
                0);
            for (size_t c = 0; c < a.topo.n; c++) {
                ck_assert_msg(memcmp(&a.h[c], &b.h[c], sizeof(float)) == 0,
                              "%d bands, call %zu, cell %zu: %.9g vs %.9g", nbands, r, c, a.h[c],
                              b.h[c]);
                ck_assert_uint_eq(a.dir[c], b.dir[c]);
            }
            a.sinks = NULL;
            s_close(&a);
            s_close(&b);
            free(mask);
            free(h);
        }
        const tb_sinks_stats_t *st = tb_sinks_stats(ws);
        ck_assert_msg(st->band_lakes > 3 * st->lakes / 4, "%d bands: %lld of %lld lakes in bands",
                      nbands, (long long)st->band_lakes, (long long)st->lakes);
        tb_sinks_destroy(&ws);
    }
    tb_pool_destroy(&pool);
}
END_TEST

START_TEST(test_a_pit_listed_twice_floods_once)
{
    /* The worklist can name a pit twice; the closed-basin flood once overran its cell list on that
     * (a heap overflow found by a bake at a 0.3 km margin). A flat start takes the fallback at
     * once; the doubled list must give the same bits as the single one. */
    tb_frame_t box = tb_geo_box(2000, 200, 850, 0, 300, 160);
    uint8_t *mask;
    float *h;
    s_island(&box, 0, 0, 0, &mask, &h);
    s_case_t a, b;
    s_open(&a, &box, mask, h);
    s_open(&b, &box, mask, h);
    s_resolve(&a);
    tb_router_jitter_t jit = s_jit(3);
    size_t npits = tb_receivers_d8(&b.topo, b.node, b.h, &jit, b.dir, b.pits);
    ck_assert_uint_gt(npits, b.topo.n / 64); /* the fallback path */
    int32_t *twice = malloc(2 * npits * sizeof(int32_t));
    memcpy(twice, b.pits, npits * sizeof(int32_t));
    memcpy(twice + npits, b.pits, npits * sizeof(int32_t));
    tb_err_t err;
    ck_assert_msg(tb_sinks_fill_priority_flood(b.sinks, &b.topo, b.node, b.h, b.dir, twice,
                                               2 * npits, &jit, &err) >= 0,
                  "%s", err.msg);
    ck_assert_int_gt(tb_sinks_stats(b.sinks)->fallbacks, 0);
    size_t nclosed;
    tb_sinks_closed(b.sinks, &nclosed); /* each cell once: never more than the solved cells */
    ck_assert_uint_le(nclosed, b.solved);
    s_check_drains(&b);
    for (size_t c = 0; c < a.topo.n; c++)
        ck_assert_msg(memcmp(&a.h[c], &b.h[c], sizeof(float)) == 0, "cell %zu", c);
    free(twice);
    s_close(&a);
    s_close(&b);
    free(mask);
    free(h);
}
END_TEST

START_TEST(test_same_bits_in_any_box)
{
    /* The island (lattice x 960..1040 on a 2000-wide planet) in a tight box, in a larger box beside
     * another pitted island, and in a box across the seam (lattice x 1990 -> 0 would be another
     * island; here the tight box starts across nothing, the large one straddles 1000 +- 500). */
    tb_frame_t tight = tb_geo_box(2000, 200, 950, 20, 100, 80);
    tb_frame_t large = tb_geo_box(2000, 200, 700, 10, 600, 120);
    uint8_t *m1, *m2;
    float *h1, *h2;
    s_island(&tight, 8, 20, 0.25, &m1, &h1);
    s_island(&large, 8, 20, 0.25, &m2, &h2);
    /* A second island in the large box, close (one ocean cell between them at the nearest). */
    float *h3 = tb_geo_floats(&large);
    tb_geo_noise(&large, 99, 30, h3);
    for (int64_t j = 0; j < large.h; j++)
        for (int64_t i = 0; i < large.w; i++) {
            size_t c = tb_idx(large.w, i, j);
            int64_t x = tb_frame_lattice_x(&large, i), y = tb_frame_lattice_y(&large, j);
            if (x >= 1042 && x < 1100 && y >= 40 && y < 90) {
                m2[c] = 1;
                h2[c] = h3[c];
            }
        }
    s_case_t a, b;
    s_open(&a, &tight, m1, h1);
    s_open(&b, &large, m2, h2);
    s_resolve(&a);
    s_resolve(&b);
    size_t compared = 0;
    for (int64_t j = 0; j < tight.h; j++)
        for (int64_t i = 0; i < tight.w; i++) {
            size_t c = tb_idx(tight.w, i, j);
            if (!(a.node[c] & TB_NODE_SOLVED))
                continue;
            int64_t d = tb_geo_map(&tight, i, j, &large);
            ck_assert_int_ge(d, 0);
            ck_assert(memcmp(&a.h[c], &b.h[d], sizeof(float)) == 0);
            ck_assert_uint_eq(a.dir[c], b.dir[d]);
            compared++;
        }
    ck_assert_uint_gt(compared, 3000);
    s_close(&a);
    s_close(&b);
    free(m1);
    free(m2);
    free(h1);
    free(h2);
    free(h3);
}
END_TEST

Suite *sinks_suite(void)
{
    Suite *s = suite_create("sinks");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_noise_has_pits_and_they_are_resolved);
    tcase_add_test(tc, test_lakes_equal_the_whole_box_flood);
    tcase_add_test(tc, test_lakes_equal_the_whole_box_flood_with_ties);
    tcase_add_test(tc, test_flat_plateau_drains);
    tcase_add_test(tc, test_the_budget_history_changes_no_bit);
    tcase_add_test(tc, test_band_workers_give_the_whole_box_flood);
    tcase_add_test(tc, test_a_pit_listed_twice_floods_once);
    tcase_add_test(tc, test_same_bits_in_any_box);
    suite_add_tcase(s, tc);
    return s;
}
