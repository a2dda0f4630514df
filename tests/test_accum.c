/* Drainage area (jobs/geology/accumulation.h): drainage closes for D8 and MFD on terrain full of
 * pits, MFD is the same float sum in any box, and on a planar ramp at 22.5 degrees MFD spreads the
 * flow along a contour where D8 gathers it into a few lines (docs/solve.md); the walk, on one and
 * two bands and in column strips of any width, gives the bits of a pull over the cells sorted
 * highest first. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/pool.h"
#include "jobs/geology/accumulation.h"
#include "jobs/geology/receivers.h"
#include "jobs/geology/sinks.h"
#include "jobs/geology/spl.h"
#include "jobs/geology/topology.h"
#include "support/tb_geo_test.h"

typedef struct {
    tb_frame_t box;
    tb_topo_t topo;
    uint8_t *node, *dir;
    int32_t *pits, *coast;
    float *h, *area;
    size_t solved, ncoast;
    tb_stack_t stack;
} s_field_t;

static void s_open(s_field_t *f, const tb_frame_t *box, const uint8_t *mask, const float *h)
{
    f->box = *box;
    ck_assert_int_eq(tb_topo_init(&f->topo, &f->box, NULL), 0);
    size_t n = f->topo.n;
    f->node = malloc(n);
    f->dir = malloc(n);
    f->pits = malloc(n * sizeof(int32_t));
    f->coast = malloc(n * sizeof(int32_t));
    f->h = malloc(n * sizeof(float));
    f->area = calloc(n, sizeof(float));
    f->stack.order = malloc(n * sizeof(int32_t));
    f->stack.tree_start = malloc((n + 1) * sizeof(int32_t));
    f->stack.scratch = malloc(n * sizeof(int32_t));
    memcpy(f->h, h, n * sizeof(float));
    f->solved = tb_topo_classify(&f->topo, mask, f->node);
    for (size_t c = 0; c < n; c++)
        if (!(f->node[c] & TB_NODE_SOLVED))
            f->h[c] = 0;
    f->ncoast = tb_accum_coast(&f->topo, f->node, f->coast);
}

static void s_close(s_field_t *f)
{
    free(f->node);
    free(f->dir);
    free(f->pits);
    free(f->coast);
    free(f->h);
    free(f->area);
    free(f->stack.order);
    free(f->stack.tree_start);
    free(f->stack.scratch);
}

/* Router and (optionally) sink resolution, at a given jitter. Returns the pits the router found. */
static size_t s_route(s_field_t *f, bool resolve, double jitter)
{
    tb_router_jitter_t jit = {tb_hash_key(9, TB_SALT_ROUTER_JITTER, 1), jitter};
    size_t npits = tb_receivers_d8(&f->topo, f->node, f->h, &jit, f->dir, f->pits);
    if (resolve) {
        tb_sinks_t *s = tb_sinks_new(f->topo.n, NULL);
        tb_err_t err;
        ck_assert_msg(tb_sinks_fill_priority_flood(s, &f->topo, f->node, f->h, f->dir, f->pits,
                                                   npits, &jit, &err) >= 0,
                      "%s", err.msg);
        tb_sinks_destroy(&s);
    }
    return npits;
}

static size_t s_mfd(s_field_t *f, double p)
{
    tb_accum_t *a = tb_accum_new(f->topo.n, f->topo.w, NULL);
    tb_accum_prepare(a, &f->topo, f->node);
    size_t stuck =
        tb_accum_mfd_kahn(a, &f->topo, f->node, f->h, p, f->coast, f->ncoast, f->area, NULL);
    tb_accum_destroy(&a);
    return stuck;
}

static void s_d8(s_field_t *f)
{
    ck_assert_uint_eq(tb_spl_build_stack(&f->topo, f->node, f->dir, &f->stack), f->solved);
    tb_accum_d8_stack(&f->topo, f->node, f->dir, &f->stack, f->coast, f->ncoast, f->area);
}

/* Area delivered to fixed cells over the solved area. */
static double s_delivered(const s_field_t *f)
{
    double sea = 0;
    for (size_t c = 0; c < f->topo.n; c++)
        if (!(f->node[c] & TB_NODE_SOLVED))
            sea += f->area[c];
    return sea / ((double)f->solved * f->topo.cell_area_m2);
}

/* An island of pitted noise (0..20 m on a gentle dome) inside an ocean. */
static void s_pitted(const tb_frame_t *box, uint8_t **mask, float **h)
{
    *mask = tb_geo_bytes(box);
    *h = tb_geo_floats(box);
    tb_geo_ellipse_u8(box, 150, 90, 60, 45, 1, *mask);
    tb_geo_noise(box, 4, 20, *h);
}

START_TEST(test_drainage_closes)
{
    tb_frame_t box = tb_geo_box(3000, 300, 80, 30, 140, 120);
    uint8_t *mask;
    float *h;
    s_pitted(&box, &mask, &h);
    double p_values[3] = {1, 1.1, 4};
    for (int v = 0; v < 4; v++) {
        s_field_t f;
        s_open(&f, &box, mask, h);
        ck_assert_uint_gt(s_route(&f, true, 5e-4), 500); /* it really is full of pits */
        if (v == 3)
            s_d8(&f);
        else
            ck_assert_uint_eq(s_mfd(&f, p_values[v]), 0);
        double closes = s_delivered(&f);
        ck_assert_msg(fabs(closes - 1) < 1e-5, "%s: delivered / solved = %.9f",
                      v == 3 ? "D8" : "MFD", closes);
        s_close(&f);
    }
    /* Negative control: MFD on the unresolved surface has nowhere to send the pits' area. The
     * walk counts exactly the solved cells with no lower neighbour, at either exponent, in one
     * band of whole rows and in two bands of 8-column strips. */
    s_field_t f;
    s_open(&f, &box, mask, h);
    s_route(&f, false, 5e-4);
    size_t pits = 0;
    for (size_t c = 0; c < f.topo.n; c++) {
        if (!(f.node[c] & TB_NODE_SOLVED))
            continue;
        int lower = 0;
        for (int k = 0; k < 8; k++)
            lower |= f.h[tb_topo_nb(&f.topo, f.node[c], c, k)] < f.h[c];
        pits += !lower;
    }
    ck_assert_uint_gt(pits, 100);
    ck_assert_uint_eq(s_mfd(&f, 1), pits);
    ck_assert_double_lt(s_delivered(&f), 0.9);
    ck_assert_uint_eq(s_mfd(&f, 1.1), pits);
    tb_pool_t *pool = tb_pool_new(2, NULL);
    ck_assert_ptr_nonnull(pool);
    tb_band_t bands[2];
    ck_assert_int_eq(tb_topo_bands(&f.topo, f.node, 2, false, bands), 2);
    for (int v = 0; v < 2; v++) {
        tb_accum_t *a = tb_accum_new(f.topo.n, f.topo.w, NULL);
        tb_accum_set_strips(a, 3);
        tb_accum_prepare(a, &f.topo, f.node);
        ck_assert_uint_eq(tb_accum_mfd_bands(a, &f.topo, f.node, f.h, v ? 1.1 : 1, f.coast,
                                             f.ncoast, f.area, NULL, NULL, NULL, NULL, pool, bands,
                                             2, NULL),
                          pits);
        ck_assert_int_ge(tb_accum_strip_passes(a), 1);
        tb_accum_destroy(&a);
    }
    tb_pool_destroy(&pool);
    s_close(&f);
    free(mask);
    free(h);
}
END_TEST

START_TEST(test_mfd_same_bits_in_any_box)
{
    /* The island seen through a tight box and through one that straddles... a larger offset box. */
    tb_frame_t a = tb_geo_box(3000, 300, 80, 30, 140, 120);
    tb_frame_t b =
        tb_geo_box(3000, 300, 2950, 10, 300, 200); /* lattice x 2950 -> 249 across the seam */
    uint8_t *ma, *mb;
    float *ha, *hb;
    s_pitted(&a, &ma, &ha);
    s_pitted(&b, &mb, &hb);
    s_field_t fa, fb;
    s_open(&fa, &a, ma, ha);
    s_open(&fb, &b, mb, hb);
    s_route(&fa, true, 5e-4);
    s_route(&fb, true, 5e-4);
    ck_assert_uint_eq(s_mfd(&fa, 1), 0);
    ck_assert_uint_eq(s_mfd(&fb, 1), 0);
    size_t compared = 0;
    for (int64_t j = 0; j < a.h; j++)
        for (int64_t i = 0; i < a.w; i++) {
            size_t c = tb_idx(a.w, i, j);
            int64_t d = tb_geo_map(&a, i, j, &b);
            ck_assert_int_ge(d, 0);
            if (!(fa.node[c] & TB_NODE_SOLVED) && fa.area[c] == 0)
                continue;
            ck_assert_msg(memcmp(&fa.area[c], &fb.area[d], sizeof(float)) == 0,
                          "cell %zu: %.9g vs %.9g", c, fa.area[c], fb.area[d]);
            compared++;
        }
    ck_assert_uint_gt(compared, 8000);
    s_close(&fa);
    s_close(&fb);
    free(ma);
    free(mb);
    free(ha);
    free(hb);
}
END_TEST

/* An oracle for the walk at p = 1, written from the formulas of accumulation.h and nothing of its
 * code: cells taken highest first (a sort, where the walk has counters, a chase and two cells at
 * a time), each pulling q_n * w over its higher neighbours and dividing by its outgoing weights,
 * the eight lanes summed in the fixed tree (k + 4 first, then (0 + 2) + (1 + 3)) or, for the
 * negative control, one after another. */
static const float s_cw[8] = {0.25f, 0.5f, 0.25f, 0.5f, 0.5f, 0.25f, 0.5f, 0.25f};

static float s_sum8(const float v[8], bool tree)
{
    if (!tree)
        return ((((((v[0] + v[1]) + v[2]) + v[3]) + v[4]) + v[5]) + v[6]) + v[7];
    return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

static const float *s_sort_h;
static int s_higher_first(const void *a, const void *b)
{
    float x = s_sort_h[*(const int32_t *)a], y = s_sort_h[*(const int32_t *)b];
    return (x < y) - (x > y);
}

static void s_sorted_pull(const s_field_t *f, bool tree, float *area)
{
    const tb_topo_t *t = &f->topo;
    size_t n = t->n, m = 0;
    int32_t *cells = malloc(n * sizeof(int32_t));
    float *q = calloc(n, sizeof(float));
    for (size_t c = 0; c < n; c++)
        if (f->node[c] & TB_NODE_SOLVED)
            cells[m++] = (int32_t)c;
    s_sort_h = f->h;
    qsort(cells, m, sizeof(int32_t), s_higher_first);
    for (size_t s = 0; s < m; s++) {
        size_t c = (size_t)cells[s];
        int64_t i = (int64_t)(c % (size_t)t->w), j = (int64_t)(c / (size_t)t->w);
        float hc = f->h[c], pull[8], out[8];
        for (int k = 0; k < 8; k++) {
            int64_t nb = tb_topo_nb_checked(t, i, j, k);
            float hn = f->h[nb], up = hn - hc, dn = hc - hn;
            pull[k] = hn > hc ? q[nb] * (up > 1e-20f ? up : 1e-20f) * s_cw[k] : 0.0f;
            out[k] = hn < hc ? (dn > 1e-20f ? dn : 1e-20f) * s_cw[k] : 0.0f;
        }
        float a = (float)t->cell_area_m2 + s_sum8(pull, tree), w = s_sum8(out, tree);
        area[c] = a;
        q[c] = w > 0 ? a / w : 0;
    }
    free(cells);
    free(q);
}

/* The walk of f at exponent p, in nbands bands, in column strips of 2^log2 columns (0: whole rows)
 * on workspace a: its areas in f->area, and an order in which every solved cell comes once, after
 * its higher neighbours of its own band (across bands only in real time: not checked). Returns
 * the passes over the strips. */
static int s_strip_walk(s_field_t *f, tb_accum_t *a, double p, int log2, int nbands,
                        tb_pool_t *pool, int32_t *order, size_t *pos)
{
    size_t n = f->topo.n;
    tb_band_t bands[3];
    ck_assert_int_eq(tb_topo_bands(&f->topo, f->node, nbands, false, bands), nbands);
    tb_accum_set_strips(a, log2);
    tb_accum_prepare(a, &f->topo, f->node);
    memset(f->area, 0, n * sizeof(float));
    size_t start[3], count[3];
    /* the areas in the order's places, put in the box's by tb_accum_place (as the solve does);
     * every other caller here lets the walk put them there */
    float *seq = malloc(n * sizeof(float));
    size_t stuck = tb_accum_mfd_bands(a, &f->topo, f->node, f->h, p, f->coast, f->ncoast, f->area,
                                      order, seq, start, count, pool, bands, nbands, NULL);
    ck_assert_uint_eq(stuck, 0);
    tb_accum_place(order, seq, start, count, nbands, f->area);
    free(seq);
    for (size_t c = 0; c < n; c++)
        pos[c] = SIZE_MAX;
    /* pos: the place in the order; cells of one band are apart by more than the box */
    for (int b = 0; b < nbands; b++) {
        ck_assert_uint_eq(count[b], bands[b].solved);
        for (size_t i = 0; i < count[b]; i++) {
            ck_assert_uint_eq(pos[order[start[b] + i]], SIZE_MAX); /* once */
            pos[order[start[b] + i]] = (size_t)b * (2 * n) + i;
        }
    }
    for (size_t c = 0; c < n; c++)
        if (f->node[c] & TB_NODE_SOLVED)
            for (int k = 0; k < 8; k++) {
                int64_t nb = tb_topo_nb_checked(&f->topo, (int64_t)(c % (size_t)f->topo.w),
                                                (int64_t)(c / (size_t)f->topo.w), k);
                if (nb >= 0 && (f->node[nb] & TB_NODE_SOLVED) && f->h[nb] > f->h[c] &&
                    pos[nb] / (2 * n) == pos[c] / (2 * n))
                    ck_assert_msg(pos[nb] < pos[c],
                                  "strips of 2^%d columns, %d bands, p %g: cell %zu before its "
                                  "higher neighbour %lld",
                                  log2, nbands, p, c, (long long)nb);
            }
    int passes = tb_accum_strip_passes(a);
    /* strips from two full strips up (tb_accum_mfd_bands); a pass at least when they are used */
    if (log2 >= 2 && f->topo.w >= (int64_t)2 << log2)
        ck_assert_int_ge(passes, 1);
    else
        ck_assert_int_eq(passes, 0);
    char what[32] = "whole rows";
    if (log2 > 0)
        snprintf(what, sizeof what, "strips of %d columns", 1 << log2);
    fprintf(stderr, "walk at p %g in %d bands, %s: %d passes over the strips\n", p, nbands, what,
            passes);
    return passes;
}

/* The walk of f in 1 to 3 bands, in column strips of 2^log2 columns for each log2 in
 * widths[0..nw), one workspace a width (its lists grow from one band to three): at p = 1 the bits
 * of `want`, at p = 1.1 those of one band sweeping whole rows. Returns the most passes over the
 * strips a walk of several bands took (one band needs one: it chases a freed cell in whichever
 * strip it lies). */
static int s_check_strips(s_field_t *f, const float *want, const int *widths, int nw)
{
    size_t n = f->topo.n;
    int32_t *order = malloc(n * sizeof(int32_t));
    size_t *pos = malloc(n * sizeof(size_t));
    float *rows = malloc(n * sizeof(float));
    tb_pool_t *pool = tb_pool_new(3, NULL);
    ck_assert_ptr_nonnull(pool);
    tb_accum_t *ref = tb_accum_new(n, f->topo.w, NULL);
    s_strip_walk(f, ref, 1.1, 0, 1, pool, order, pos);
    memcpy(rows, f->area, n * sizeof(float));
    tb_accum_destroy(&ref);
    int most = 0;
    for (int s = 0; s < nw; s++) {
        tb_accum_t *a = tb_accum_new(n, f->topo.w, NULL);
        for (int run = 0; run < 6; run++) {
            double p = run < 3 ? 1 : 1.1;
            int nbands = 1 + run % 3;
            int passes = s_strip_walk(f, a, p, widths[s], nbands, pool, order, pos);
            if (nbands > 1)
                most = passes > most ? passes : most;
            else if (widths[s] < TB_ACCUM_STRIP_LOG2)
                ck_assert_int_eq(passes, 1); /* one band chases a freed cell in any strip */
            const float *w = p == 1 ? want : rows;
            for (size_t c = 0; c < n; c++)
                if (f->node[c] & TB_NODE_SOLVED)
                    ck_assert_msg(memcmp(&w[c], &f->area[c], sizeof(float)) == 0,
                                  "strips of 2^%d columns, %d bands, p %g, cell %zu: walk %.9g, "
                                  "%s %.9g",
                                  widths[s], nbands, p, c, f->area[c],
                                  p == 1 ? "sorted pull" : "whole rows", w[c]);
        }
        tb_accum_destroy(&a);
    }
    tb_pool_destroy(&pool);
    free(rows);
    free(order);
    free(pos);
    return most;
}

START_TEST(test_mfd_walk_equals_a_sorted_pull)
{
    /* Wide enough for the walk's fast cells (rows of 8 and more, two ready cells at a time) and,
     * on two threads, for a band boundary with its shared counters and hand-overs. */
    tb_frame_t box = tb_geo_box(3000, 300, 20, 10, 300, 200);
    uint8_t *mask;
    float *h;
    s_pitted(&box, &mask, &h);
    s_field_t f;
    s_open(&f, &box, mask, h);
    s_route(&f, true, 5e-4);
    size_t n = f.topo.n;
    float *want = calloc(n, sizeof(float)), *serial = calloc(n, sizeof(float));
    s_sorted_pull(&f, true, want);
    s_sorted_pull(&f, false, serial);
    size_t cells = 0, differ = 0;
    for (size_t c = 0; c < n; c++)
        if (f.node[c] & TB_NODE_SOLVED) {
            cells++;
            differ += memcmp(&want[c], &serial[c], sizeof(float)) != 0;
        }
    /* negative control: the comparison below sees the order of a sum */
    ck_assert_uint_gt(differ, cells / 100);
    tb_pool_t *pool = tb_pool_new(2, NULL);
    ck_assert_ptr_nonnull(pool);
    for (int nbands = 1; nbands <= 2; nbands++) {
        tb_band_t bands[2];
        int got = tb_topo_bands(&f.topo, f.node, nbands, false, bands);
        ck_assert_int_eq(got, nbands);
        tb_accum_t *a = tb_accum_new(n, f.topo.w, NULL);
        tb_accum_prepare(a, &f.topo, f.node);
        memset(f.area, 0, n * sizeof(float));
        size_t stuck = tb_accum_mfd_bands(a, &f.topo, f.node, f.h, 1, f.coast, f.ncoast, f.area,
                                          NULL, NULL, NULL, NULL, pool, bands, nbands, NULL);
        ck_assert_uint_eq(stuck, 0);
        for (size_t c = 0; c < n; c++)
            if (f.node[c] & TB_NODE_SOLVED)
                ck_assert_msg(memcmp(&want[c], &f.area[c], sizeof(float)) == 0,
                              "%d bands, cell %zu: walk %.9g, sorted pull %.9g", nbands, c,
                              f.area[c], want[c]);
        tb_accum_destroy(&a);
    }
    /* One to three bands in column strips: 4, 8 and 32 columns wide free cells across many strip
     * boundaries, and in bands need passes over the strips for what a neighbouring band hands over
     * (one band makes one pass); 1024 is the solve's (whole rows on this box, narrower than two
     * strips). */
    const int widths[] = {2, 3, 5, TB_ACCUM_STRIP_LOG2};
    int most = s_check_strips(&f, want, widths, 4);
    ck_assert_int_gt(most, 2); /* bands' cells went back to strips that had had their turn */
    /* A box round the whole planet with land across its seam: the first and the last strip free
     * each other's cells across it (the edge columns' neighbours wrap). */
    {
        tb_frame_t ring = tb_geo_box(300, 300, 0, 40, 300, 200);
        ck_assert(tb_frame_wraps(&ring));
        uint8_t *rmask = tb_geo_bytes(&ring);
        float *rh = tb_geo_floats(&ring);
        tb_geo_noise(&ring, 9, 20, rh);
        for (int64_t j = 10; j < ring.h - 10; j++)
            for (int64_t i = 0; i < ring.w; i++)
                rmask[tb_idx(ring.w, i, j)] = 1;
        s_field_t r;
        s_open(&r, &ring, rmask, rh);
        s_route(&r, true, 5e-4);
        float *rwant = calloc(r.topo.n, sizeof(float));
        s_sorted_pull(&r, true, rwant);
        size_t rcells = 0, seam = 0;
        for (size_t c = 0; c < r.topo.n; c++)
            if (r.node[c] & TB_NODE_SOLVED) {
                rcells++;
                seam += c % (size_t)ring.w == 0;
            }
        ck_assert_uint_gt(seam, 100);
        const int rwidths[] = {3, 5};
        ck_assert_int_gt(s_check_strips(&r, rwant, rwidths, 2), 1);
        free(rwant);
        s_close(&r);
        free(rmask);
        free(rh);
    }
    ck_assert_uint_gt(cells, 8000);
    tb_pool_destroy(&pool);
    free(want);
    free(serial);
    s_close(&f);
    free(mask);
    free(h);
}
END_TEST

/* A receiver from its definition (docs/solve.md, the router): over the strictly lower neighbours,
 * the first highest (double)(drop x 1 / distance) x (1 + J u), u the neighbour's byte of the
 * cell's hash (key, lattice x, lattice y) mapped to [-1, 1] as b / 127.5 - 1; with J = 0 the
 * plain steepest descent. No shortcut for cells whose jitter cannot matter, and no vector. */
static uint8_t s_receiver_by_definition(const s_field_t *f, const tb_router_jitter_t *jit, size_t c)
{
    static const float inv_dist[8] = {0.70710678f, 1.0f,        0.70710678f, 1.0f,
                                      1.0f,        0.70710678f, 1.0f,        0.70710678f};
    const tb_frame_t *box = f->topo.box;
    int64_t i = (int64_t)c % box->w, j = (int64_t)c / box->w;
    int64_t lx = tb_frame_lattice_x(box, i), ly = tb_frame_lattice_y(box, j);
    uint64_t bits = tb_hash_cell(jit->key, lx, ly);
    double best = 0;
    uint8_t bk = TB_DIR_NONE;
    for (int k = 0; k < 8; k++) {
        float d = f->h[c] - f->h[tb_topo_nb(&f->topo, f->node[c], c, k)];
        if (!(d > 0))
            continue;
        double u = (double)((bits >> (8 * k)) & 0xff) / 127.5 - 1.0;
        double score = (double)(d * inv_dist[k]) * (1.0 + jit->amplitude * u);
        if (score > best) {
            best = score;
            bk = (uint8_t)k;
        }
    }
    return bk;
}

/* The row router (four cells a vector, sixteen a settling test) against the cell router, which
 * takes each cell alone through the general neighbour offsets, and both against the receiver by
 * definition: the same receiver for every cell and the same pits in raster order, on half-metre
 * terraces full of exact and near ties, with and without the jitter, in a box that wraps and one
 * that does not. */
static void s_routers_agree(const tb_frame_t *box, double jitter, uint8_t *dir_out)
{
    uint8_t *mask;
    float *h;
    s_pitted(box, &mask, &h);
    for (size_t c = 0; c < (size_t)(box->w * box->h); c++)
        h[c] = floorf(h[c] * 2) / 2;
    s_field_t f;
    s_open(&f, box, mask, h);
    size_t n = f.topo.n;
    tb_router_jitter_t jit = {tb_hash_key(9, TB_SALT_ROUTER_JITTER, 1), jitter};
    size_t npits = tb_receivers_d8(&f.topo, f.node, f.h, &jit, f.dir, f.pits);
    int32_t *cells = malloc(n * sizeof(int32_t));
    uint8_t *dir = malloc(n);
    memset(dir, TB_DIR_NONE, n);
    size_t m = 0, want = 0, routed = 0;
    for (size_t c = 0; c < n; c++)
        if (f.node[c] & TB_NODE_SOLVED)
            cells[m++] = (int32_t)c;
    size_t cell_pits = tb_receivers_d8_cells(&f.topo, f.node, f.h, &jit, cells, m, dir);
    for (size_t c = 0; c < n; c++) {
        ck_assert_msg(f.dir[c] == dir[c], "cell %zu: row router %d, cell router %d", c, f.dir[c],
                      dir[c]);
        if (f.dir[c] == TB_DIR_NONE && (f.node[c] & TB_NODE_SOLVED)) {
            ck_assert_int_lt(want, npits);
            ck_assert_int_eq(f.pits[want], (int32_t)c);
            want++;
        }
        routed += (f.node[c] & TB_NODE_SOLVED) && f.dir[c] != TB_DIR_NONE;
        if (f.node[c] & TB_NODE_SOLVED)
            ck_assert_msg(f.dir[c] == s_receiver_by_definition(&f, &jit, c),
                          "cell %zu: router %d, by definition %d", c, f.dir[c],
                          s_receiver_by_definition(&f, &jit, c));
    }
    ck_assert_uint_eq(want, npits);
    ck_assert_uint_eq(cell_pits, npits);
    ck_assert_uint_gt(npits, 10);
    ck_assert_uint_gt(routed, 5000);
    memcpy(dir_out, f.dir, n);
    free(cells);
    free(dir);
    s_close(&f);
    free(mask);
    free(h);
}

START_TEST(test_row_router_equals_the_cell_router)
{
    tb_frame_t boxes[2] = {tb_geo_box(3000, 300, 20, 10, 301, 200),
                           tb_geo_box(300, 300, 0, 10, 300, 200)};
    /* the row router's baseline copy, then its AVX2 copy where this CPU has one (common/simd.h;
     * tb_topo_init reads TB_SIMD) */
    for (int b = 0; b < 4; b++) {
        if (b % 2 == 0)
            setenv("TB_SIMD", "sse2", 1);
        else
            unsetenv("TB_SIMD");
        size_t n = (size_t)(boxes[b / 2].w * boxes[b / 2].h), moved = 0;
        uint8_t *plain = malloc(n), *jittered = malloc(n);
        s_routers_agree(&boxes[b / 2], 0, plain);
        s_routers_agree(&boxes[b / 2], 0.01, jittered);
        unsetenv("TB_SIMD");
        for (size_t c = 0; c < n; c++)
            moved += plain[c] != jittered[c];
        /* control: the terraces' ties reach the jittered choice */
        ck_assert_uint_gt(moved, 100);
        free(plain);
        free(jittered);
    }
}
END_TEST

/* The ramp (docs/solve.md): a plane rising at an aspect of 22.5 degrees, where D8's cardinal and
 * diagonal descents tie exactly. Solved cells are those below a contour line u = u0, u the distance
 * along the gradient, so every flow line starts at the same contour (the divide: above it the box
 * is held at 0 m) and the ideal area of a cell depends on u alone. Asked about: cells 20..150 cells
 * below the divide whose upslope line stays 12 cells clear of the box edges, in contour bands one
 * cell wide. One fill, one accumulation, no erosion. */
typedef struct {
    double worst_ratio; /* max over bands of (band max / band median) */
    double dry;         /* share of asked cells that receive nothing */
    size_t cells, bands;
} s_ramp_t;

static int s_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static s_ramp_t s_ramp(double p)
{
    const int64_t W = 260, H = 260;
    const double th = 22.5 * M_PI / 180, cs = cos(th), sn = sin(th), u0 = 250, slope = 0.05;
    tb_frame_t box = tb_geo_box(4000, 400, 1000, 50, W, H);
    uint8_t *mask = tb_geo_bytes(&box);
    float *h = tb_geo_floats(&box);
    for (int64_t j = 0; j < H; j++)
        for (int64_t i = 0; i < W; i++) {
            double u = (double)i * cs + (double)j * sn;
            size_t c = tb_idx(W, i, j);
            mask[c] = u < u0;
            h[c] = (float)(10 + slope * 8 * u);
        }
    s_field_t f;
    s_open(&f, &box, mask, h);
    s_route(&f, true, 5e-4);
    if (p > 0)
        ck_assert_uint_eq(s_mfd(&f, p), 0);
    else
        s_d8(&f);
    s_ramp_t r = {0, 0, 0, 0};
    float *band = malloc((size_t)(W + H) * sizeof(float));
    size_t dry = 0;
    for (int b = 20; b < 150; b++) {
        size_t nb = 0;
        for (int64_t j = 1; j < H - 1; j++)
            for (int64_t i = 1; i < W - 1; i++) {
                double u = (double)i * cs + (double)j * sn, up = u0 - u;
                if (up < b || up >= b + 1)
                    continue;
                double xi = (double)i + up * cs, yj = (double)j + up * sn;
                if (i < 12 || j < 12 || xi > (double)W - 12 || yj > (double)H - 12)
                    continue;
                size_t c = tb_idx(W, i, j);
                band[nb++] = f.area[c];
                dry += f.area[c] <= (float)f.topo.cell_area_m2;
            }
        if (nb < 5)
            continue;
        qsort(band, nb, sizeof(float), s_cmp_float);
        double ratio = band[nb - 1] / band[nb / 2];
        r.worst_ratio = ratio > r.worst_ratio ? ratio : r.worst_ratio;
        r.cells += nb;
        r.bands++;
    }
    r.dry = (double)dry / (double)r.cells;
    free(band);
    s_close(&f);
    free(mask);
    free(h);
    return r;
}

START_TEST(test_ramp_mfd_spreads_d8_gathers)
{
    s_ramp_t mfd = s_ramp(1), d8 = s_ramp(0);
    fprintf(stderr,
            "ramp 22.5 deg: MFD p=1 max/median %.2f, dry %.2f %% (%zu cells, %zu bands); "
            "D8 max/median %.1f, dry %.1f %%\n",
            mfd.worst_ratio, 100 * mfd.dry, mfd.cells, mfd.bands, d8.worst_ratio, 100 * d8.dry);
    ck_assert_uint_gt(mfd.bands, 100);
    ck_assert_double_le(mfd.worst_ratio, 2.0);
    ck_assert_double_lt(mfd.dry, 0.02);
    /* The control: D8 fails both. */
    ck_assert_double_gt(d8.worst_ratio, 2.0);
    ck_assert_double_ge(d8.dry, 0.02);
}
END_TEST

Suite *accum_suite(void)
{
    Suite *s = suite_create("accum");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_drainage_closes);
    tcase_add_test(tc, test_mfd_same_bits_in_any_box);
    tcase_add_test(tc, test_mfd_walk_equals_a_sorted_pull);
    tcase_add_test(tc, test_row_router_equals_the_cell_router);
    tcase_add_test(tc, test_ramp_mfd_spreads_d8_gathers);
    suite_add_tcase(s, tc);
    return s;
}
