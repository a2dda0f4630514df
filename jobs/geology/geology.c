/* The geology step; see geology.h. */
#include "jobs/geology/geology.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hash.h"
#include "jobs/geology/accumulation.h"
#include "jobs/geology/clamp.h"
#include "jobs/geology/receivers.h"
#include "jobs/geology/sinks.h"
#include "jobs/geology/spl.h"
#include "jobs/geology/topology.h"

struct tb_geology_t {
    tb_frame_t box;
    tb_topo_t topo;
    tb_solve_params_t params;
    tb_geology_options_t opt;
    uint64_t seed;
    uint8_t *node; /* TB_NODE_* per cell */
    uint8_t *dir;  /* D8 direction per cell, TB_DIR_NONE for fixed */
    int32_t *pits;
    int32_t *coast; /* fixed cells bordering solved ones */
    size_t ncoast;
    size_t solved;
    float *area;       /* m2 */
    float *aseq;       /* MFD: the solved cells' areas in the Kahn order's places (kahn[i]'s) */
    int32_t *kahn;     /* the MFD processing order of the step */
    int32_t *basin;    /* filled at the end of a run */
    int32_t *receiver; /* filled at the end of a run */
    bool have_step;
    bool products_fresh; /* this run made its products (s_products) */
    tb_stack_t stack;
    tb_sinks_t *sinks;
    tb_accum_t *accum;
    tb_hillslope_t *hill;
    tb_clamp_t *clamp;
    tb_geology_phases_t phases;
    /* threads (docs/solve.md) */
    tb_pool_t *pool; /* borrowed; NULL: the caller's thread */
    int nbands;
    tb_band_t bands[TB_GEOLOGY_MAX_BANDS]; /* balanced on land cells: the walks, the sinks */
    tb_band_t rows[TB_GEOLOGY_MAX_BANDS];  /* balanced on rows: route, hillslope, clamp */
    size_t seg_start[TB_GEOLOGY_MAX_BANDS], seg_count[TB_GEOLOGY_MAX_BANDS];
    size_t band_pits[TB_GEOLOGY_MAX_BANDS];    /* pits found in a band's inner rows */
    size_t edge_pits[TB_GEOLOGY_MAX_BANDS][2]; /* ... in its first and last rows */
    int32_t *edge_pit_mem;                     /* 2 rows per band */
    int band_bad[TB_GEOLOGY_MAX_BANDS];
    uint8_t *flag; /* the band-parallel update's done flags (one byte a cell) */
    unsigned spl_calls;
    int32_t *mouth_size;       /* D8: last step's tree size at each river mouth (a schedule hint) */
    size_t *tasks;             /* D8: task ranges of the mouth list */
    tb_spl_scratch_t *scratch; /* D8: per thread */
    int nscratch;
};

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tb_geology_options_defaults(tb_geology_options_t *o)
{
    o->stream_power = true;
    o->hillslope = true;
    o->clamp = true;
    o->router_jitter = 5e-4;
    o->clamp_jitter = 0.05;
    o->hillslope_bound = TB_HILLSLOPE_BOUND_CELL;
}

static int s_check_params(const tb_solve_params_t *p, tb_err_t *err)
{
    if (!(p->dt_yr > 0) || !isfinite(p->dt_yr))
        return tb_err_set(err, TB_E_INVALID, "geology: solve.dt_yr %g, expected a positive number",
                          p->dt_yr);
    if (!(p->k > 0) || !(p->m > 0) || !(p->n > 0) || !isfinite(p->m) || !isfinite(p->n))
        return tb_err_set(err, TB_E_INVALID,
                          "geology: solve.k %g, m %g, n %g: expected positive numbers", p->k, p->m,
                          p->n);
    if (!(p->diffusion_m2_yr >= 0) || !isfinite(p->diffusion_m2_yr))
        return tb_err_set(err, TB_E_INVALID,
                          "geology: solve.diffusion_m2_yr %g, expected 0 or a positive number",
                          p->diffusion_m2_yr);
    if (!(p->talus_deg > 0 && p->talus_deg < 90))
        return tb_err_set(err, TB_E_INVALID, "geology: solve.talus_deg %g, expected 0 < talus < 90",
                          p->talus_deg);
    if (p->max_hillslope_substeps < 1)
        return tb_err_set(err, TB_E_INVALID,
                          "geology: solve.max_hillslope_substeps %d, expected at least 1",
                          p->max_hillslope_substeps);
    if (!(p->mfd_exponent >= 0) || !isfinite(p->mfd_exponent))
        return tb_err_set(err, TB_E_INVALID,
                          "geology: solve.mfd_exponent %g, expected 0 (D8) or a positive number",
                          p->mfd_exponent);
    return 0;
}

tb_geology_t *tb_geology_new(const tb_frame_t *box, const tb_solve_params_t *p, uint64_t seed,
                             tb_err_t *err)
{
    if (s_check_params(p, err) != 0)
        return NULL;
    tb_geology_t *g = tb_calloc(1, sizeof *g, "geology", err);
    if (!g)
        return NULL;
    g->box = *box;
    if (tb_topo_init(&g->topo, &g->box, err) != 0) {
        free(g);
        return NULL;
    }
    g->params = *p;
    g->seed = seed;
    tb_geology_options_defaults(&g->opt);
    size_t n = g->topo.n;
    g->node = tb_calloc(n, 1, "geology nodes", err);
    g->dir = g->node ? tb_malloc(n, "geology receivers", err) : NULL;
    g->pits = g->dir ? tb_malloc(n * sizeof(int32_t), "geology pits", err) : NULL;
    g->coast = g->pits ? tb_malloc(n * sizeof(int32_t), "geology coast", err) : NULL;
    g->area = g->coast ? tb_calloc(n, sizeof(float), "geology area", err) : NULL;
    g->kahn = g->area ? tb_malloc(n * sizeof(int32_t), "geology order", err) : NULL;
    g->aseq = g->kahn ? tb_malloc(n * sizeof(float), "geology areas in order", err) : NULL;
    g->basin = g->aseq ? tb_malloc(n * sizeof(int32_t), "geology basins", err) : NULL;
    g->receiver = g->basin ? tb_malloc(n * sizeof(int32_t), "geology receiver index", err) : NULL;
    g->stack.order = g->receiver ? tb_malloc(n * sizeof(int32_t), "geology stack", err) : NULL;
    g->stack.tree_start =
        g->stack.order ? tb_malloc((n + 1) * sizeof(int32_t), "geology stack trees", err) : NULL;
    g->stack.scratch =
        g->stack.tree_start ? tb_malloc(n * sizeof(int32_t), "geology walk", err) : NULL;
    g->sinks = g->stack.scratch ? tb_sinks_new(n, err) : NULL;
    g->accum = g->sinks ? tb_accum_new(n, g->topo.w, err) : NULL;
    g->hill = g->accum ? tb_hillslope_new(n, g->topo.w, err) : NULL;
    g->clamp = g->hill ? tb_clamp_new(n, g->topo.w, err) : NULL;
    g->flag = g->clamp ? tb_calloc(n, 1, "geology band flags", err) : NULL;
    g->edge_pit_mem =
        g->flag ? tb_malloc(2 * (size_t)g->topo.w * TB_GEOLOGY_MAX_BANDS * sizeof(int32_t),
                            "geology band pits", err)
                : NULL;
    bool ok = g->edge_pit_mem != NULL;
    if (ok && p->mfd_exponent == 0) { /* D8 walks by basin and keeps a schedule */
        g->mouth_size = tb_calloc(n, sizeof(int32_t), "geology basin sizes", err);
        g->tasks = g->mouth_size ? tb_malloc((n + 1) * sizeof(size_t), "geology tasks", err) : NULL;
        ok = g->tasks != NULL;
    }
    if (!ok) {
        tb_geology_destroy(&g);
        return NULL;
    }
    return g;
}

int tb_geology_set_options(tb_geology_t *g, const tb_geology_options_t *o, tb_err_t *err)
{
    if (!(o->router_jitter >= 0 && o->router_jitter < 0.5) ||
        !(o->clamp_jitter >= 0 && o->clamp_jitter < 0.5))
        return tb_err_set(err, TB_E_INVALID,
                          "geology: router jitter %g and clamp jitter %g must lie in [0, 0.5)",
                          o->router_jitter, o->clamp_jitter);
    g->opt = *o;
    return 0;
}

void tb_geology_destroy(tb_geology_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_geology_t *g = *self_p;
    free(g->node);
    free(g->dir);
    free(g->pits);
    free(g->coast);
    free(g->area);
    free(g->aseq);
    free(g->kahn);
    free(g->basin);
    free(g->receiver);
    free(g->stack.order);
    free(g->stack.tree_start);
    free(g->stack.scratch);
    tb_sinks_destroy(&g->sinks);
    tb_accum_destroy(&g->accum);
    tb_hillslope_destroy(&g->hill);
    tb_clamp_destroy(&g->clamp);
    free(g->flag);
    free(g->edge_pit_mem);
    free(g->mouth_size);
    free(g->tasks);
    for (int i = 0; i < g->nscratch; i++)
        tb_spl_scratch_free(&g->scratch[i]);
    free(g->scratch);
    free(g);
    *self_p = NULL;
}

/* Names a cell for messages: local and lattice coordinates. */
static void s_cell_name(const tb_geology_t *g, size_t c, char *buf, size_t cap)
{
    int64_t i = (int64_t)(c % (size_t)g->topo.w), j = (int64_t)(c / (size_t)g->topo.w);
    snprintf(buf, cap, "cell (%lld, %lld) of the box, lattice (%lld, %lld)", (long long)i,
             (long long)j, (long long)tb_frame_lattice_x(&g->box, i),
             (long long)tb_frame_lattice_y(&g->box, j));
}

/* Checks the inputs of the solved cells; sets fixed cells to 0 m. */
static int s_prepare(tb_geology_t *g, const float *uplift, const float *k, float *h, tb_err_t *err)
{
    char where[128];
    for (size_t c = 0; c < g->topo.n; c++) {
        if (!(g->node[c] & TB_NODE_SOLVED)) {
            h[c] = 0;
            continue;
        }
        const char *what = NULL;
        if (!isfinite(h[c]))
            what = "height_m is not finite";
        else if (!isfinite(uplift[c]))
            what = "uplift_m_yr is not finite";
        else if (!(k[c] > 0) || !isfinite(k[c]))
            what = "K is not a positive number";
        if (what) {
            s_cell_name(g, c, where, sizeof where);
            return tb_err_set(err, TB_E_INVALID, "geology: %s: %s", where, what);
        }
    }
    return 0;
}

/* ---- steps 1 and 2: uplift and route, by bands ---- */

typedef struct {
    tb_geology_t *g;
    const float *uplift;
    float *h;
    const tb_router_jitter_t *jit;
} s_route_ctx_t;

/* Band b's rows: uplift each, and route its inner rows a row behind (row j once row j + 1 is
 * uplifted); its first and last rows wait for the neighbouring bands (s_route_edges). Pits go to
 * the band's stretch of g->pits. */
static void s_route_band(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_route_ctx_t *x = ctx_;
    tb_geology_t *g = x->g;
    const tb_topo_t *t = &g->topo;
    const tb_band_t *bd = &g->rows[b];
    float dt = (float)g->params.dt_yr, *h = x->h;
    size_t w = (size_t)t->w, npits = 0;
    int bad = 0;
    int32_t *pits = g->pits + (size_t)bd->r0 * w;
    if (b == 0)
        memset(g->dir, TB_DIR_NONE, w);
    if ((int)b == g->nbands - 1)
        memset(g->dir + (size_t)(t->h - 1) * w, TB_DIR_NONE, w);
    for (int64_t j = bd->r0; j < bd->r1; j++) {
        size_t row = (size_t)j * w;
        /* Branch-free, so it vectorises: a fixed cell (0 m) adds 0 and stays 0 m. */
        float *restrict hr = h + row;
        const float *restrict ur = x->uplift + row;
        const uint8_t *restrict nd = g->node + row;
        for (size_t i = 0; i < w; i++) {
            float add = ur[i] * dt;
            hr[i] += (nd[i] & TB_NODE_SOLVED) ? add : 0.0f;
            bad |= !(hr[i] - hr[i] == 0.0f); /* not finite */
        }
        if (j - 1 > bd->r0)
            tb_receivers_d8_row(t, g->node, h, x->jit, j - 1, g->dir, pits, &npits);
    }
    g->band_pits[b] = npits;
    g->band_bad[b] = bad;
}

/* The first and last rows of band b, once every band has uplifted its rows. */
static void s_route_edges(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_route_ctx_t *x = ctx_;
    tb_geology_t *g = x->g;
    const tb_band_t *bd = &g->rows[b];
    int32_t *mem = g->edge_pit_mem + 2 * b * (size_t)g->topo.w;
    g->edge_pits[b][0] = g->edge_pits[b][1] = 0;
    tb_receivers_d8_row(&g->topo, g->node, x->h, x->jit, bd->r0, g->dir, mem, &g->edge_pits[b][0]);
    if (bd->r1 - 1 > bd->r0) /* a one-row band has one edge row */
        tb_receivers_d8_row(&g->topo, g->node, x->h, x->jit, bd->r1 - 1, g->dir, mem + g->topo.w,
                            &g->edge_pits[b][1]);
}

/* Steps 1 and 2. Returns the number of pits, gathered at the front of g->pits in raster order;
 * *finite is cleared when a height is no longer a finite number (only an unstable control gets
 * there). */
static size_t s_uplift_route(tb_geology_t *g, const float *uplift, float *h,
                             const tb_router_jitter_t *jit, bool *finite)
{
    s_route_ctx_t x = {g, uplift, h, jit};
    tb_pool_run(g->pool, (size_t)g->nbands, s_route_band, &x);
    tb_pool_run(g->pool, (size_t)g->nbands, s_route_edges, &x);
    size_t npits = 0, w = (size_t)g->topo.w;
    *finite = true;
    for (int b = 0; b < g->nbands; b++) {
        const int32_t *mem = g->edge_pit_mem + 2 * (size_t)b * w;
        const int32_t *inner = g->pits + (size_t)g->rows[b].r0 * w;
        /* in raster order: first row, inner rows, last row; the inner list moves down only */
        size_t e0 = g->edge_pits[b][0], nin = g->band_pits[b], e1 = g->edge_pits[b][1];
        memmove(g->pits + npits + e0, inner, nin * sizeof(int32_t));
        memcpy(g->pits + npits, mem, e0 * sizeof(int32_t));
        memcpy(g->pits + npits + e0 + nin, mem + w, e1 * sizeof(int32_t));
        npits += e0 + nin + e1;
        if (g->band_bad[b])
            *finite = false;
    }
    return npits;
}

/* Builds the stack of the current receivers; an error when some solved cell does not reach the sea
 * (a bug upstream: the sinks guarantee it). */
static int s_stack(tb_geology_t *g, int64_t step, tb_err_t *err)
{
    if (tb_spl_build_stack(&g->topo, g->node, g->dir, &g->stack) != g->solved)
        return tb_err_set(err, TB_E_INTERNAL,
                          "geology: step %lld: %zu of %zu solved cells do not drain to the sea",
                          (long long)step, g->solved - g->stack.count, g->solved);
    return 0;
}

/* The end-of-run products: receiver index and basin (outlet) per cell, from the last step's
 * receivers. */
static void s_products(tb_geology_t *g, int64_t step)
{
    const tb_topo_t *t = &g->topo;
    if (g->params.mfd_exponent > 0) /* the last walk's areas, from the order's places */
        tb_accum_place(g->kahn, g->aseq, g->seg_start, g->seg_count, g->nbands, g->area);
    g->products_fresh = true;
    s_stack(g, step, NULL);
    for (size_t c = 0; c < t->n; c++) {
        g->receiver[c] = -1;
        g->basin[c] = -1;
    }
    for (size_t s = 0; s < g->stack.count; s++) {
        size_t c = (size_t)g->stack.order[s];
        size_t r = tb_topo_nb(t, g->node[c], c, g->dir[c]);
        g->receiver[c] = (int32_t)r;
        g->basin[c] = (g->node[r] & TB_NODE_SOLVED) ? g->basin[r] : (int32_t)r;
    }
}

/* ---- step 4 and 5 at exponent 0: D8 by drainage basin ---- */

typedef struct {
    tb_geology_t *g;
    size_t count[TB_GEOLOGY_MAX_BANDS];
} s_mouth_ctx_t;

/* The river mouths of band b (solved cells whose receiver is fixed), in raster order, into its
 * stretch of g->pits (free once the sinks are done). */
static void s_mouths_band(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_mouth_ctx_t *x = ctx_;
    tb_geology_t *g = x->g;
    const tb_topo_t *t = &g->topo;
    size_t lo = (size_t)g->rows[b].r0 * (size_t)t->w, hi = (size_t)g->rows[b].r1 * (size_t)t->w;
    int32_t *out = g->pits + lo;
    size_t n = 0;
    for (size_t c = lo; c < hi; c++) {
        uint8_t nd = g->node[c];
        if ((nd & TB_NODE_SOLVED) && !(g->node[tb_topo_nb(t, nd, c, g->dir[c])] & TB_NODE_SOLVED))
            out[n++] = (int32_t)c;
    }
    x->count[b] = n;
}

/* The mouths' last known tree sizes, for the schedule: largest first. Per thread, so solves on
 * different threads of one process do not share it. */
static _Thread_local const int32_t *s_sort_size;
static int s_by_size(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int32_t sx = s_sort_size[x], sy = s_sort_size[y];
    return sx != sy ? (sx < sy) - (sx > sy) : (x > y) - (x < y);
}

typedef struct {
    const tb_topo_t *t;
    const uint8_t *node, *dir;
    const int32_t *coast;
    size_t ncoast, chunk;
    float *area;
} s_coast_ctx_t;

static void s_coast_task(void *ctx_, size_t task, int thread)
{
    (void)thread;
    s_coast_ctx_t *x = ctx_;
    size_t from = task * x->chunk, to = from + x->chunk;
    tb_accum_d8_coast(x->t, x->node, x->dir, x->coast, from, to < x->ncoast ? to : x->ncoast,
                      x->area);
}

/* Stack, D8 area and (when p is not NULL) stream power, tree by tree on the pool, largest trees
 * first and small ones batched (by last step's sizes: the schedule can only change the time).
 * Returns 0 or -1 with *err. */
static int s_d8_basins(tb_geology_t *g, const float *k, const tb_spl_params_t *p, float *h,
                       int64_t step, tb_err_t *err)
{
    const tb_topo_t *t = &g->topo;
    int threads = tb_pool_threads(g->pool);
    if (g->nscratch < threads) {
        tb_spl_scratch_t *sc = realloc(g->scratch, (size_t)threads * sizeof *sc);
        if (!sc)
            return tb_err_set(err, TB_E_NOMEM, "geology: out of memory for thread scratch");
        memset(sc + g->nscratch, 0, (size_t)(threads - g->nscratch) * sizeof *sc);
        g->scratch = sc;
        g->nscratch = threads;
    }
    s_mouth_ctx_t mx = {g, {0}};
    tb_pool_run(g->pool, (size_t)g->nbands, s_mouths_band, &mx);
    size_t nm = 0;
    for (int b = 0; b < g->nbands; b++) {
        memmove(g->pits + nm, g->pits + (size_t)g->rows[b].r0 * (size_t)t->w,
                mx.count[b] * sizeof(int32_t));
        nm += mx.count[b];
    }
    size_t ntasks = 0;
    if (threads > 1) {
        s_sort_size = g->mouth_size;
        qsort(g->pits, nm, sizeof(int32_t), s_by_size);
        size_t target = g->solved / ((size_t)threads * 16) + 1, run = 0;
        g->tasks[0] = 0;
        for (size_t m = 0; m < nm; m++) {
            run += (size_t)g->mouth_size[g->pits[m]] + 1;
            if (run >= target || m + 1 == nm) {
                g->tasks[++ntasks] = m + 1;
                run = 0;
            }
        }
    } else if (nm > 0) {
        g->tasks[0] = 0;
        g->tasks[1] = nm;
        ntasks = 1;
    }
    int32_t *tree = g->stack.tree_start; /* free: the D8 path builds no global stack */
    if (tb_spl_basins(t, g->node, g->dir, g->pits, g->tasks, ntasks, g->area, k, p, h, tree,
                      g->scratch, g->pool) < 0)
        return tb_err_set(err, TB_E_NOMEM, "geology: out of memory for a basin's stack");
    size_t listed = 0, largest = 0;
    for (size_t m = 0; m < nm; m++) {
        g->mouth_size[g->pits[m]] = tree[m];
        listed += (size_t)tree[m];
        largest = (size_t)tree[m] > largest ? (size_t)tree[m] : largest;
    }
    if (listed != g->solved)
        return tb_err_set(err, TB_E_INTERNAL,
                          "geology: step %lld: %zu of %zu solved cells do not drain to the sea",
                          (long long)step, g->solved - listed, g->solved);
    g->phases.largest_basin_cells += (int64_t)largest;
    s_coast_ctx_t cx = {t, g->node, g->dir, g->coast, g->ncoast, g->ncoast / 16 + 1, g->area};
    tb_pool_run(g->pool, (g->ncoast + cx.chunk - 1) / cx.chunk, s_coast_task, &cx);
    return 0;
}

void tb_geology_set_pool(tb_geology_t *g, tb_pool_t *pool)
{
    g->pool = pool;
}

static int s_run(tb_geology_t *g, const uint8_t *solve_mask, const float *uplift_m_yr,
                 const float *k, float *height_m, int64_t step0, int steps,
                 int (*progress)(void *ud, int64_t step_done), void *ud, tb_err_t *err)
{
    if (!g || !solve_mask || !uplift_m_yr || !k || !height_m)
        return tb_err_set(err, TB_E_INVALID,
                          "geology: run needs a solve, a mask, U, K and heights");
    if (step0 < 0 || steps < 0)
        return tb_err_set(err, TB_E_INVALID, "geology: steps %lld + %d, expected non-negative",
                          (long long)step0, steps);
    tb_topo_t *t = &g->topo;
    const tb_solve_params_t *p = &g->params;
    g->solved = tb_topo_classify(t, solve_mask, g->node);
    g->ncoast = tb_accum_coast(t, g->node, g->coast);
    tb_accum_prepare(g->accum, t, g->node);
    if (s_prepare(g, uplift_m_yr, k, height_m, err) != 0)
        return -1;
    int want = tb_pool_threads(g->pool);
    want = want < TB_GEOLOGY_MAX_BANDS ? want : TB_GEOLOGY_MAX_BANDS;
    g->nbands = tb_topo_bands(t, g->node, want, false, g->bands);
    tb_topo_bands(t, g->node, want, true, g->rows); /* as many */
    memset(g->flag, 0, t->n);
    g->spl_calls = 0;
    memset(g->area, 0, t->n * sizeof(float));
    float *h = height_m;
    tb_hillslope_params_t hp = {
        p->diffusion_m2_yr,     p->dt_yr, tan(p->talus_deg * M_PI / 180), p->max_hillslope_substeps,
        g->opt.hillslope_bound, false};
    tb_spl_params_t sp = {p->m, p->n, p->dt_yr};
    tb_geology_phases_t *ph = &g->phases;
    tb_hillslope_stats_t hs = {0, 0};
    double waits[2 * TB_GEOLOGY_MAX_BANDS];
    for (int s = 0; s < steps; s++) {
        int64_t step = step0 + s;
        tb_router_jitter_t jit = {tb_hash_key(g->seed, TB_SALT_ROUTER_JITTER, step),
                                  g->opt.router_jitter};
        double t0 = s_now();
        bool finite;
        size_t npits = s_uplift_route(g, uplift_m_yr, h, &jit, &finite);
        if (!finite)
            return tb_err_set(err, TB_E_INVALID,
                              "geology: step %lld: heights are no longer finite (the physics "
                              "diverged)",
                              (long long)step);
        double t1 = s_now();
        if (npits > 0) {
            int64_t closed = tb_sinks_fill_bands(g->sinks, t, g->node, h, g->dir, g->pits, npits,
                                                 &jit, g->pool, g->bands, g->nbands, err);
            if (closed < 0)
                return tb_err_prefix(err, "geology: step %lld", (long long)step);
            ph->pit_steps++;
            ph->pits += (int64_t)npits;
            ph->closed_cells += closed;
        }
        bool mfd = p->mfd_exponent > 0;
        double t2 = s_now(), t3 = t2, t4, t5;
        if (mfd) {
            /* MFD: the Kahn order reversed is a receivers-first order, so the update walks it and
             * no stack is built. */
            size_t stuck = tb_accum_mfd_bands(g->accum, t, g->node, h, p->mfd_exponent, g->coast,
                                              g->ncoast, g->area, g->kahn, g->aseq, g->seg_start,
                                              g->seg_count, g->pool, g->bands, g->nbands, waits);
            if (stuck == SIZE_MAX)
                return tb_err_set(err, TB_E_NOMEM,
                                  "geology: step %lld: out of memory for the "
                                  "drainage-area walk",
                                  (long long)step);
            if (stuck > 0)
                return tb_err_set(err, TB_E_INTERNAL,
                                  "geology: step %lld: %zu cells have no lower neighbour after the "
                                  "sink resolution",
                                  (long long)step, stuck);
            for (int b = 0; b < g->nbands; b++)
                ph->wait_s += waits[2 * b];
            t4 = s_now();
            if (g->opt.stream_power) {
                uint8_t epoch = (uint8_t)(1 + (g->spl_calls++ & 1));
                if (tb_spl_erode_bands(t, g->node, g->dir, g->kahn, g->seg_start, g->seg_count,
                                       g->aseq, k, &sp, h, g->flag, epoch, g->pool, g->bands,
                                       g->nbands, waits) < 0)
                    return tb_err_set(err, TB_E_INTERNAL,
                                      "geology: step %lld: %d bands on %d "
                                      "threads",
                                      (long long)step, g->nbands, tb_pool_threads(g->pool));
                for (int b = 0; b < g->nbands; b++)
                    ph->wait_s += waits[b];
            }
            t5 = s_now();
        } else {
            /* D8: stack, area and update tree by tree; timed as one under accumulation. */
            if (s_d8_basins(g, k, g->opt.stream_power ? &sp : NULL, h, step, err) != 0)
                return -1;
            t4 = t5 = s_now();
        }
        if (g->opt.hillslope && p->diffusion_m2_yr > 0 &&
            tb_hillslope_diffuse_bands(g->hill, t, g->node, &hp, h, &hs, g->pool, g->rows,
                                       g->nbands, err) != 0)
            return tb_err_prefix(err, "geology: step %lld", (long long)step);
        double t6 = s_now();
        if (g->opt.clamp) {
            tb_clamp_params_t cp = {hp.critical_slope, g->opt.clamp_jitter,
                                    tb_hash_key(g->seed, TB_SALT_CLAMP_ALLOWANCE, step)};
            ph->clamp_moves +=
                tb_clamp_repose_bands(g->clamp, t, g->node, &cp, h, g->pool, g->rows, g->nbands);
        }
        double t7 = s_now();
        ph->uplift_route_s += t1 - t0;
        ph->sinks_s += t2 - t1;
        ph->stack_s += t3 - t2;
        ph->accumulation_s += t4 - t3;
        ph->spl_s += t5 - t4;
        ph->hillslope_s += t6 - t5;
        ph->clamp_s += t7 - t6;

        ph->steps++;
        ph->cell_steps += (int64_t)g->solved;
        g->have_step = true;
        if (progress && progress(ud, step + 1) != 0) {
            s_products(g, step);
            ph->hillslope_updates += hs.cell_updates;
            return tb_err_set(err, TB_E_INTERRUPTED, "geology: cancelled after step %lld",
                              (long long)step);
        }
    }
    ph->hillslope_updates += hs.cell_updates;
    if (hs.max_rate > ph->hillslope_max_rate)
        ph->hillslope_max_rate = hs.max_rate;
    if (g->have_step && steps > 0)
        s_products(g, step0 + steps - 1);
    return 0;
}

int tb_geology_run(tb_geology_t *g, const uint8_t *solve_mask, const float *uplift_m_yr,
                   const float *k, float *height_m, int64_t step0, int steps,
                   int (*progress)(void *ud, int64_t step_done), void *ud, tb_err_t *err)
{
    if (g)
        g->products_fresh = false;
    int rc = s_run(g, solve_mask, uplift_m_yr, k, height_m, step0, steps, progress, ud, err);
    /* A run that failed part-way (not cancelled: that makes its products) leaves no maps: the
     * MFD areas are put in the box only by s_products, so they would be incomplete. */
    if (rc != 0 && g && !g->products_fresh)
        g->have_step = false;
    return rc;
}

const float *tb_geology_area_m2(const tb_geology_t *g)
{
    return g->have_step ? g->area : NULL;
}
const int32_t *tb_geology_basin(const tb_geology_t *g)
{
    return g->have_step ? g->basin : NULL;
}
const int32_t *tb_geology_receiver(const tb_geology_t *g)
{
    return g->have_step ? g->receiver : NULL;
}

void tb_geology_phase_times(const tb_geology_t *g, tb_geology_phases_t *out)
{
    *out = g->phases;
    const tb_sinks_stats_t *ss = tb_sinks_stats(g->sinks);
    out->serial_s += ss->serial_s;
    out->bands = g->nbands;
    out->sink_lakes = ss->lakes;
    out->sink_band_lakes = ss->band_lakes;
    out->sink_fallbacks = ss->fallbacks;
}
