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
    uint8_t *node;     /* TB_NODE_* per cell */
    uint8_t *dir;      /* D8 direction per cell, TB_DIR_NONE for fixed */
    int32_t *pits;
    int32_t *coast;    /* fixed cells bordering solved ones */
    size_t ncoast;
    size_t solved;
    float *area;       /* m2 */
    int32_t *kahn;     /* the MFD processing order of the step */
    int32_t *basin;    /* filled at the end of a run */
    int32_t *receiver; /* filled at the end of a run */
    bool have_step;
    tb_stack_t stack;
    tb_sinks_t *sinks;
    tb_accum_t *accum;
    tb_hillslope_t *hill;
    tb_clamp_t *clamp;
    tb_geology_phases_t phases;
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
    g->basin = g->kahn ? tb_malloc(n * sizeof(int32_t), "geology basins", err) : NULL;
    g->receiver = g->basin ? tb_malloc(n * sizeof(int32_t), "geology receiver index", err) : NULL;
    g->stack.order = g->receiver ? tb_malloc(n * sizeof(int32_t), "geology stack", err) : NULL;
    g->stack.tree_start =
        g->stack.order ? tb_malloc((n + 1) * sizeof(int32_t), "geology stack trees", err) : NULL;
    g->stack.scratch = g->stack.tree_start ? tb_malloc(n * sizeof(int32_t), "geology walk", err) : NULL;
    g->sinks = g->stack.scratch ? tb_sinks_new(n, err) : NULL;
    g->accum = g->sinks ? tb_accum_new(n, g->topo.w, err) : NULL;
    g->hill = g->accum ? tb_hillslope_new(n, g->topo.w, err) : NULL;
    g->clamp = g->hill ? tb_clamp_new(n, g->topo.w, err) : NULL;
    if (!g->clamp) {
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

/* Steps 1 and 2, fused a row apart: row j+1 is uplifted before row j is routed, so the router
 * always sees uplifted neighbours. Returns the number of pits; *finite is cleared when a height is
 * no longer a finite number (only an unstable control can get there). */
static size_t s_uplift_route(tb_geology_t *g, const float *uplift, float *h,
                             const tb_router_jitter_t *jit, bool *finite)
{
    int bad = 0;
    const tb_topo_t *t = &g->topo;
    float dt = (float)g->params.dt_yr;
    size_t npits = 0, w = (size_t)t->w, last = (size_t)(t->h - 1) * w;
    for (size_t i = 0; i < w; i++) {
        g->dir[i] = TB_DIR_NONE;
        g->dir[last + i] = TB_DIR_NONE;
    }
    for (int64_t j = 1; j <= t->h - 1; j++) {
        if (j < t->h - 1) {
            size_t row = (size_t)j * w;
            for (size_t i = 0; i < w; i++)
                if (g->node[row + i] & TB_NODE_SOLVED) {
                    h[row + i] += uplift[row + i] * dt;
                    bad |= !isfinite(h[row + i]);
                }
        }
        if (j >= 2)
            tb_receivers_d8_row(t, g->node, h, jit, j - 1, g->dir, g->pits, &npits);
    }
    *finite = !bad;
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
 * receivers (the stack is built here when the steps used the Kahn order). */
static void s_products(tb_geology_t *g, int64_t step)
{
    const tb_topo_t *t = &g->topo;
    if (g->params.mfd_exponent > 0)
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

int tb_geology_run(tb_geology_t *g, const uint8_t *solve_mask, const float *uplift_m_yr,
                   const float *k, float *height_m, int64_t step0, int steps,
                   int (*progress)(void *ud, int64_t step_done), void *ud, tb_err_t *err)
{
    if (!g || !solve_mask || !uplift_m_yr || !k || !height_m)
        return tb_err_set(err, TB_E_INVALID, "geology: run needs a solve, a mask, U, K and heights");
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
    memset(g->area, 0, t->n * sizeof(float));
    float *h = height_m;
    tb_hillslope_params_t hp = {p->diffusion_m2_yr, p->dt_yr, tan(p->talus_deg * M_PI / 180),
                                p->max_hillslope_substeps, g->opt.hillslope_bound};
    tb_spl_params_t sp = {p->m, p->n, p->dt_yr};
    tb_geology_phases_t *ph = &g->phases;
    tb_hillslope_stats_t hs = {0, 0};
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
            int64_t closed = tb_sinks_fill_priority_flood(g->sinks, t, g->node, h, g->dir, g->pits,
                                                          npits, &jit, err);
            if (closed < 0)
                return tb_err_prefix(err, "geology: step %lld", (long long)step);
            ph->pit_steps++;
            ph->pits += (int64_t)npits;
            ph->closed_cells += closed;
        }
        /* MFD: the Kahn order reversed is a receivers-first order, so the update walks it and no
         * stack is built. D8: the stack serves the area and the update. */
        bool mfd = p->mfd_exponent > 0;
        double t2 = s_now();
        if (!mfd && s_stack(g, step, err) != 0)
            return -1;
        double t3 = s_now();
        if (mfd) {
            size_t stuck = tb_accum_mfd_kahn(g->accum, t, g->node, h, p->mfd_exponent, g->coast,
                                             g->ncoast, g->area, g->kahn);
            if (stuck > 0)
                return tb_err_set(err, TB_E_INTERNAL,
                                  "geology: step %lld: %zu cells have no lower neighbour after the "
                                  "sink resolution",
                                  (long long)step, stuck);
        } else {
            tb_accum_d8_stack(t, g->node, g->dir, &g->stack, g->coast, g->ncoast, g->area);
        }
        double t4 = s_now();
        if (g->opt.stream_power) {
            if (mfd)
                tb_spl_erode_braun_willett(t, g->node, g->dir, g->kahn, g->solved, -1, g->area, k,
                                           &sp, h);
            else
                tb_spl_erode_braun_willett(t, g->node, g->dir, g->stack.order, g->stack.count, 1,
                                           g->area, k, &sp, h);
        }
        double t5 = s_now();
        if (g->opt.hillslope && p->diffusion_m2_yr > 0 &&
            tb_hillslope_diffuse_nonlinear(g->hill, t, g->node, &hp, h, &hs, err) != 0)
            return tb_err_prefix(err, "geology: step %lld", (long long)step);
        double t6 = s_now();
        if (g->opt.clamp) {
            tb_clamp_params_t cp = {hp.critical_slope, g->opt.clamp_jitter,
                                    tb_hash_key(g->seed, TB_SALT_CLAMP_ALLOWANCE, step)};
            ph->clamp_moves += tb_clamp_repose(g->clamp, t, g->node, &cp, h);
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

const float *tb_geology_area_m2(const tb_geology_t *g) { return g->have_step ? g->area : NULL; }
const int32_t *tb_geology_basin(const tb_geology_t *g) { return g->have_step ? g->basin : NULL; }
const int32_t *tb_geology_receiver(const tb_geology_t *g)
{
    return g->have_step ? g->receiver : NULL;
}

void tb_geology_phase_times(const tb_geology_t *g, tb_geology_phases_t *out)
{
    *out = g->phases;
    const tb_sinks_stats_t *ss = tb_sinks_stats(g->sinks);
    out->sink_lakes = ss->lakes;
    out->sink_fallbacks = ss->fallbacks;
}
