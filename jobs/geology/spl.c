/* The Braun & Willett (2013) stack and implicit stream-power update; see spl.h. */
#include "jobs/geology/spl.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

size_t tb_spl_build_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                          tb_stack_t *stack)
{
    size_t count = 0, ntrees = 0;
    int32_t *todo = stack->scratch;
    for (int64_t j = 1; j < t->h - 1; j++) {
        size_t row = (size_t)j * (size_t)t->w;
        for (int64_t i = 0; i < t->w; i++) {
            size_t c = row + (size_t)i;
            uint8_t nd = node[c];
            if (!(nd & TB_NODE_SOLVED) || dir[c] == TB_DIR_NONE ||
                (node[tb_topo_nb(t, nd, c, dir[c])] & TB_NODE_SOLVED))
                continue;
            /* A mouth: list its tree depth-first. Donors of d are the solved neighbours whose
             * direction points back at d (neighbour k of d points at d when its dir is 7 - k). */
            stack->tree_start[ntrees++] = (int32_t)count;
            size_t top = 0;
            todo[top++] = (int32_t)c;
            while (top > 0) {
                size_t d = (size_t)todo[--top];
                stack->order[count++] = (int32_t)d;
                const ptrdiff_t *off = t->noff[tb_topo_edge(node[d])];
                for (int k = 0; k < 8; k++) {
                    size_t n = (size_t)((ptrdiff_t)d + off[k]);
                    if (dir[n] == 7 - k && (node[n] & TB_NODE_SOLVED))
                        todo[top++] = (int32_t)n;
                }
            }
        }
    }
    stack->tree_start[ntrees] = (int32_t)count;
    stack->count = count;
    stack->ntrees = ntrees;
    return count;
}

/* Solves y - delta + f y^n = 0 for y in (0, delta] (y = h_i' - h_r'): Newton from y = delta, which
 * is monotone for n > 1; for n < 1 a step leaving the bracket falls back to bisection. */
static double s_newton(double delta, double f, double n, int64_t *iters)
{
    double lo = 0, hi = delta, y = delta;
    for (int it = 0; it < 100; it++) {
        double yn1 = pow(y, n - 1);
        double g = y - delta + f * yn1 * y;
        if (g > 0)
            hi = y;
        else
            lo = y;
        double step = g / (1 + n * f * yn1);
        double next = y - step;
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        (*iters)++;
        if (fabs(next - y) <= 1e-12 * delta) {
            y = next;
            break;
        }
        y = next;
    }
    return y;
}

/* What the update of one cell needs beyond the cell. */
typedef struct {
    double len_n[8]; /* L^n per direction */
    bool m_half, n_one;
    const tb_spl_params_t *p;
} s_consts_t;

static void s_consts(s_consts_t *q, const tb_topo_t *t, const tb_spl_params_t *p)
{
    for (int d = 0; d < 8; d++)
        q->len_n[d] = p->n == 1 ? t->len_m[d] : pow(t->len_m[d], p->n);
    q->m_half = p->m == 0.5;
    q->n_one = p->n == 1;
    q->p = p;
}

/* The implicit update of solved cell c (D8 direction d) towards its receiver's new height hr.
 * `common`: the caller knows m = 1/2 and n = 1 (the default physics), so neither is tested. */
static inline __attribute__((always_inline)) void s_erode_k(const s_consts_t *q, size_t c,
                                                            uint8_t d, float hr_f, float area,
                                                            const float *k, float *h,
                                                            int64_t *iters, const int common)
{
    double hc = h[c], hr = hr_f;
    if (!(hc > hr))
        return;
    double a = area;
    double am = common || q->m_half ? sqrt(a) : pow(a, q->p->m);
    double f = (double)k[c] * q->p->dt_yr * am / q->len_n[d];
    double y;
    if (common || q->n_one)
        y = (hc - hr) / (1 + f);
    else
        y = s_newton(hc - hr, f, q->p->n, iters);
    /* The exact solution stays above the receiver; rounding must not put it level, or a
     * filled flat would come back as a pit next step. */
    float hn = (float)(hr + y);
    /* At least the float after hr: that is hn whenever hn > hr and hn is not zero (no float lies
     * between them; a zero is left to the full test, as the float after -denormal_min is -0 and
     * +0 > -0 is false), so the next float is computed only where rounding put hn level. */
    if (__builtin_expect(hn > hr_f && hn != 0, 1)) {
        h[c] = hn;
    } else {
        float floor_ = tb_next_up(hr_f);
        h[c] = hn > floor_ ? hn : floor_;
    }
}

static inline void s_erode(const s_consts_t *q, size_t c, uint8_t d, float hr_f,
                           const float *area_m2, const float *k, float *h, int64_t *iters)
{
    s_erode_k(q, c, d, hr_f, area_m2[c], k, h, iters, 0);
}

int64_t tb_spl_erode_braun_willett(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                                   const int32_t *order, size_t count, int step,
                                   const float *area_m2, const float *k, const tb_spl_params_t *p,
                                   float *h)
{
    s_consts_t q;
    s_consts(&q, t, p);
    int64_t iters = 0;
    for (size_t s = 0; s < count; s++) {
        size_t c = (size_t)order[step > 0 ? s : count - 1 - s];
        uint8_t d = dir[c];
        size_t r = tb_topo_nb(t, node[c], c, d);
        s_erode(&q, c, d, h[r], area_m2, k, h, &iters);
    }
    return iters;
}

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* How far ahead in its order the update fetches a cell's data. */
#define S_AHEAD 24

typedef struct {
    const tb_topo_t *t;
    const uint8_t *node, *dir;
    const int32_t *order;
    const size_t *seg_start, *seg_count;
    const float *area, *k; /* area: in the order's places */
    float *h;
    uint8_t *flag;
    uint8_t epoch;
    const tb_band_t *bands;
    int nbands;
    s_consts_t q;
    int64_t iters[TB_TOPO_MAX_BANDS];
    double wait[TB_TOPO_MAX_BANDS];
} s_band_ctx_t;

/* Band b's cells, receivers first. A receiver in another band is waited for (its flag); a cell on
 * the band's first or last row raises its own flag once written. */
static inline __attribute__((always_inline)) void s_erode_band_k(s_band_ctx_t *x, size_t b,
                                                                 const int many, const int common)
{
    const tb_topo_t *t = x->t;
    size_t w = (size_t)t->w, lo = (size_t)x->bands[b].r0 * w, hi = (size_t)x->bands[b].r1 * w;
    const int32_t *seg = x->order + x->seg_start[b];
    const float *area = x->area + x->seg_start[b]; /* in the order's places */
    int64_t iters = 0;
    double waited = 0;
    for (size_t s = x->seg_count[b]; s-- > 0;) {
        size_t c = (size_t)seg[s];
        if (s >= S_AHEAD) { /* the walk's order is known: fetch a cell's data before it is due */
            size_t f = (size_t)seg[s - S_AHEAD];
            __builtin_prefetch(&x->h[f]);
            __builtin_prefetch(&x->k[f]);
            __builtin_prefetch(&x->dir[f]);
        }
        uint8_t d = x->dir[c];
        size_t r = tb_topo_nb(t, x->node[c], c, d);
        if (many && (r < lo || r >= hi) && (x->node[r] & TB_NODE_SOLVED) &&
            __atomic_load_n(&x->flag[r], __ATOMIC_ACQUIRE) != x->epoch) {
            double t0 = s_now();
            for (unsigned spin = 0; __atomic_load_n(&x->flag[r], __ATOMIC_ACQUIRE) != x->epoch;
                 spin++)
                if (spin > 64)
                    sched_yield();
            waited += s_now() - t0;
        }
        s_erode_k(&x->q, c, d, x->h[r], area[s], x->k, x->h, &iters, common);
        if (many && (c < lo + w || c >= hi - w))
            __atomic_store_n(&x->flag[c], x->epoch, __ATOMIC_RELEASE);
    }
    x->iters[b] = iters;
    x->wait[b] = waited;
}

/* Copies for one band (no receiver in another band, no flags) and for several, each for the
 * default m = 1/2, n = 1 and for any. */
static void s_erode_band(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_band_ctx_t *x = ctx_;
    int common = x->q.m_half && x->q.n_one;
    if (x->nbands > 1) {
        if (common)
            s_erode_band_k(x, b, 1, 1);
        else
            s_erode_band_k(x, b, 1, 0);
    } else if (common) {
        s_erode_band_k(x, b, 0, 1);
    } else {
        s_erode_band_k(x, b, 0, 0);
    }
}

int64_t tb_spl_erode_bands(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                           const int32_t *order, const size_t *seg_start, const size_t *seg_count,
                           const float *area_seq, const float *k, const tb_spl_params_t *p,
                           float *h, uint8_t *flag, uint8_t epoch, tb_pool_t *pool,
                           const tb_band_t *bands, int nbands, double *wait_s)
{
    s_band_ctx_t x = {.t = t,
                      .node = node,
                      .dir = dir,
                      .order = order,
                      .seg_start = seg_start,
                      .seg_count = seg_count,
                      .area = area_seq,
                      .k = k,
                      .h = h,
                      .flag = flag,
                      .epoch = epoch,
                      .bands = bands,
                      .nbands = nbands};
    /* The bands wait on each other: each needs a thread of its own. */
    if (nbands > TB_TOPO_MAX_BANDS || (nbands > 1 && nbands > tb_pool_threads(pool)))
        return -1;
    s_consts(&x.q, t, p);
    tb_pool_run(pool, (size_t)nbands, s_erode_band, &x);
    int64_t iters = 0;
    for (int b = 0; b < nbands; b++) {
        iters += x.iters[b];
        if (wait_s)
            wait_s[b] = x.wait[b];
    }
    return iters;
}

void tb_spl_scratch_free(tb_spl_scratch_t *s)
{
    free(s->order);
    free(s->todo);
    s->order = s->todo = NULL;
    s->cap = 0;
}

static int s_scratch_grow(tb_spl_scratch_t *s)
{
    size_t cap = s->cap ? 2 * s->cap : 4096;
    int32_t *o = realloc(s->order, cap * sizeof *o);
    if (!o)
        return -1;
    s->order = o;
    int32_t *d = realloc(s->todo, cap * sizeof *d);
    if (!d)
        return -1;
    s->todo = d;
    s->cap = cap;
    return 0;
}

typedef struct {
    const tb_topo_t *t;
    const uint8_t *node, *dir;
    const int32_t *mouths;
    const size_t *tasks;
    float *area;
    const float *k;
    const tb_spl_params_t *p;
    float *h;
    int32_t *tree_cells;
    tb_spl_scratch_t *scratch;
    s_consts_t q;
    atomic_int_fast64_t iters;
    atomic_int failed;
} s_basin_ctx_t;

/* One tree: the stack from mouth c (depth-first, donors in neighbour order: tb_spl_build_stack's
 * order), its D8 areas, then its update. Returns the cells listed, or -1 when scratch cannot grow.
 */
static int64_t s_tree(s_basin_ctx_t *x, tb_spl_scratch_t *sc, size_t mouth, int64_t *iters)
{
    const tb_topo_t *t = x->t;
    const uint8_t *node = x->node, *dir = x->dir;
    size_t count = 0, top = 0;
    if (sc->cap < 16 && s_scratch_grow(sc) != 0)
        return -1;
    sc->todo[top++] = (int32_t)mouth;
    while (top > 0) {
        size_t d = (size_t)sc->todo[--top];
        if (count + 9 > sc->cap || top + 9 > sc->cap) {
            if (s_scratch_grow(sc) != 0)
                return -1;
        }
        sc->order[count++] = (int32_t)d;
        const ptrdiff_t *off = t->noff[tb_topo_edge(node[d])];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)d + off[k]);
            if (dir[n] == 7 - k && (node[n] & TB_NODE_SOLVED))
                sc->todo[top++] = (int32_t)n;
        }
    }
    float cell = (float)t->cell_area_m2;
    for (size_t s = 0; s < count; s++)
        x->area[sc->order[s]] = cell;
    for (size_t s = count; s-- > 1;) { /* the mouth's receiver is fixed */
        size_t c = (size_t)sc->order[s];
        x->area[tb_topo_nb(t, node[c], c, dir[c])] += x->area[c];
    }
    if (x->p)
        for (size_t s = 0; s < count; s++) {
            size_t c = (size_t)sc->order[s];
            uint8_t d = dir[c];
            s_erode(&x->q, c, d, x->h[tb_topo_nb(t, node[c], c, d)], x->area, x->k, x->h, iters);
        }
    return (int64_t)count;
}

static void s_basin_task(void *ctx_, size_t task, int thread)
{
    s_basin_ctx_t *x = ctx_;
    tb_spl_scratch_t *sc = &x->scratch[thread];
    int64_t iters = 0;
    for (size_t m = x->tasks[task]; m < x->tasks[task + 1]; m++) {
        int64_t n = s_tree(x, sc, (size_t)x->mouths[m], &iters);
        if (n < 0) {
            atomic_store(&x->failed, 1);
            return;
        }
        x->tree_cells[m] = (int32_t)n;
    }
    atomic_fetch_add(&x->iters, iters);
}

int64_t tb_spl_basins(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                      const int32_t *mouths, const size_t *tasks, size_t ntasks, float *area_m2,
                      const float *k, const tb_spl_params_t *p, float *h, int32_t *tree_cells,
                      tb_spl_scratch_t *scratch, tb_pool_t *pool)
{
    s_basin_ctx_t x = {.t = t,
                       .node = node,
                       .dir = dir,
                       .mouths = mouths,
                       .tasks = tasks,
                       .area = area_m2,
                       .k = k,
                       .p = p,
                       .h = h,
                       .tree_cells = tree_cells,
                       .scratch = scratch};
    if (p)
        s_consts(&x.q, t, p);
    atomic_init(&x.iters, 0);
    atomic_init(&x.failed, 0);
    tb_pool_run(pool, ntasks, s_basin_task, &x);
    return atomic_load(&x.failed) ? -1 : (int64_t)atomic_load(&x.iters);
}
