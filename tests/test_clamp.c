/* The repose clamp (jobs/geology/clamp.h): the worklist gives the same bits as sweeping the whole
 * box to convergence (the fixed point is unique, so no order can show), it only lowers, every
 * constraint holds afterwards, a cell gets the same bits in any box, and the allowance jitter
 * breaks the ruled planes a clamp cuts otherwise. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "jobs/geology/clamp.h"
#include "jobs/geology/topology.h"
#include "support/tb_geo_test.h"

typedef struct {
    tb_frame_t box;
    tb_topo_t topo;
    uint8_t *node;
    float *h;
} s_land_t;

/* A rough island (0..60 m of noise on 8 m cells: far over repose) in an ocean. */
static void s_open(s_land_t *l, const tb_frame_t *box)
{
    l->box = *box;
    ck_assert_int_eq(tb_topo_init(&l->topo, &l->box, NULL), 0);
    uint8_t *mask = tb_geo_bytes(&l->box);
    tb_geo_ellipse_u8(&l->box, 500, 50, 30, 25, 1, mask);
    l->h = tb_geo_floats(&l->box);
    tb_geo_noise(&l->box, 6, 60, l->h);
    l->node = malloc(l->topo.n);
    tb_topo_classify(&l->topo, mask, l->node);
    for (size_t c = 0; c < l->topo.n; c++)
        if (!(l->node[c] & TB_NODE_SOLVED))
            l->h[c] = 0;
    free(mask);
}

static void s_close(s_land_t *l)
{
    free(l->node);
    free(l->h);
}

static tb_clamp_params_t s_params(double jitter)
{
    tb_clamp_params_t p = {tan(35 * M_PI / 180), jitter,
                           tb_hash_key(3, TB_SALT_CLAMP_ALLOWANCE, 7)};
    return p;
}

static int64_t s_clamp(s_land_t *l, const tb_clamp_params_t *p)
{
    tb_clamp_t *c = tb_clamp_new(l->topo.n, l->topo.w, NULL);
    int64_t moves = tb_clamp_repose(c, &l->topo, l->node, p, l->h);
    tb_clamp_destroy(&c);
    return moves;
}

START_TEST(test_worklist_equals_the_sweep)
{
    tb_frame_t box = tb_geo_box(1000, 100, 460, 20, 80, 60);
    s_land_t a, b;
    s_open(&a, &box);
    s_open(&b, &box);
    float *before = malloc(a.topo.n * sizeof(float));
    memcpy(before, a.h, a.topo.n * sizeof(float));
    tb_clamp_params_t p = s_params(0.05);
    ck_assert_int_gt(s_clamp(&a, &p), 500);
    ck_assert_int_gt(tb_clamp_repose_sweep(&b.topo, b.node, &p, b.h), 500);
    double tan_t = p.tan_talus;
    for (size_t c = 0; c < a.topo.n; c++) {
        ck_assert(memcmp(&a.h[c], &b.h[c], sizeof(float)) == 0);
        ck_assert(a.h[c] <= before[c]); /* lowers only */
        if (!(a.node[c] & TB_NODE_SOLVED)) {
            ck_assert(a.h[c] == 0);
            continue;
        }
        for (int k = 0; k < 8; k++) { /* no face steeper than repose (allowance <= 1) */
            size_t n = tb_topo_nb(&a.topo, a.node[c], c, k);
            ck_assert(a.h[c] <= a.h[n] + (float)(tan_t * a.topo.len_m[k]));
        }
    }
    free(before);
    s_close(&a);
    s_close(&b);
}
END_TEST

START_TEST(test_same_bits_in_any_box)
{
    tb_frame_t tight = tb_geo_box(1000, 100, 460, 20, 80, 60);
    tb_frame_t seam = tb_geo_box(1000, 100, 900, 10, 700, 80); /* lattice x 900 -> 599 */
    s_land_t a, b;
    s_open(&a, &tight);
    s_open(&b, &seam);
    tb_clamp_params_t p = s_params(0.05);
    s_clamp(&a, &p);
    s_clamp(&b, &p);
    for (int64_t j = 0; j < tight.h; j++)
        for (int64_t i = 0; i < tight.w; i++) {
            int64_t d = tb_geo_map(&tight, i, j, &seam);
            ck_assert_int_ge(d, 0);
            ck_assert(memcmp(&a.h[tb_idx(tight.w, i, j)], &b.h[d], sizeof(float)) == 0);
        }
    s_close(&a);
    s_close(&b);
}
END_TEST

/* How far the west face of a clamped pyramid is from a plane: the mean |second difference| along
 * rows, over cells at least two cells off the hip lines and the ring, in metres. */
static double s_bend(const s_land_t *l)
{
    double sum = 0;
    size_t n = 0;
    for (int64_t j = 1; j < l->box.h - 1; j++) {
        int64_t to_edge = j < l->box.h - 1 - j ? j : l->box.h - 1 - j;
        for (int64_t i = 2; i < to_edge - 2; i++) {
            size_t c = tb_idx(l->box.w, i, j);
            sum += fabs(l->h[c - 1] - 2 * l->h[c] + l->h[c + 1]);
            n++;
        }
    }
    ck_assert_uint_gt(n, 300);
    return sum / (double)n;
}

START_TEST(test_allowance_jitter_breaks_ruled_planes)
{
    /* A tall block filling the box: the clamp cuts it into a pyramid rising from the ring, whose
     * four faces are planes without jitter (the second difference is zero off the hip lines) and
     * are not with it. */
    tb_frame_t box = tb_geo_box(1000, 100, 460, 20, 80, 60);
    s_land_t a, b;
    s_open(&a, &box);
    s_open(&b, &box);
    for (size_t c = 0; c < a.topo.n; c++) {
        bool ring = c < (size_t)box.w || c >= a.topo.n - (size_t)box.w || c % (size_t)box.w == 0 ||
                    c % (size_t)box.w == (size_t)box.w - 1;
        a.node[c] = b.node[c] = ring ? TB_NODE_FIXED : TB_NODE_SOLVED;
        a.h[c] = b.h[c] = ring ? 0 : 1000;
    }
    tb_clamp_params_t flat = s_params(0), jit = s_params(0.05);
    s_clamp(&a, &flat);
    s_clamp(&b, &jit);
    double plane = s_bend(&a), rough = s_bend(&b);
    ck_assert_double_lt(plane, 0.05);
    ck_assert_double_gt(rough, 4 * plane);
    s_close(&a);
    s_close(&b);
}
END_TEST

Suite *clamp_suite(void)
{
    Suite *s = suite_create("clamp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_worklist_equals_the_sweep);
    tcase_add_test(tc, test_same_bits_in_any_box);
    tcase_add_test(tc, test_allowance_jitter_breaks_ruled_planes);
    suite_add_tcase(s, tc);
    return s;
}
