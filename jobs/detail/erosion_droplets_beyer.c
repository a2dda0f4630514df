/* Droplet erosion after Beyer 2015; see erosion_droplets_beyer.h for the method and the rules that
 * make it a function of world position. Typical load: a 2744 x 2744 window, 4 rounds of one droplet
 * per 16 cells, 24 steps each: about 45 M droplet steps. */
#include "jobs/detail/erosion_droplets_beyer.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define S_MAX_BRUSH 256
#define S_Q (1.0 / TB_DROPLET_QUANTUM_M)

typedef struct {
    int n;
    int dx[S_MAX_BRUSH], dy[S_MAX_BRUSH];
    double w[S_MAX_BRUSH]; /* normalised; w[0] is the centre */
} s_brush_t;

typedef struct {
    const tb_detail_params_t *p;
    uint64_t seed;
    const tb_frame_t *win;
    const float *h; /* H_r rounded to float, read only during a round: half the cache footprint
                       of the doubles, and the droplets' reads are what the pass waits on */
    int64_t *ero, *dep, *water;
    bool atomic;
    int round;
    uint64_t spawn_key, jitter_key;
    int64_t block;            /* spawn block edge, cells */
    int64_t bx0, by0;         /* world block of the window's first block column and row */
    int64_t i_start, j_start; /* local cell of that block's corner (<= 0) */
    int64_t nbx, nby;         /* blocks across and up the window */
    int64_t blocks_around;    /* blocks around the circumference */
    s_brush_t brush;
    tb_droplet_budget_t *task_budget; /* one per task (block row) */
} s_run_t;

static void s_brush_make(s_brush_t *b, int r)
{
    b->n = 0;
    double sum = 0;
    b->dx[0] = b->dy[0] = 0;
    b->w[0] = r > 0 ? (double)r : 1.0;
    b->n = 1;
    sum = b->w[0];
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
            if (dx == 0 && dy == 0)
                continue;
            double w = (double)r - sqrt((double)(dx * dx + dy * dy));
            if (w <= 0 || b->n >= S_MAX_BRUSH)
                continue;
            b->dx[b->n] = dx;
            b->dy[b->n] = dy;
            b->w[b->n] = w;
            sum += w;
            b->n++;
        }
    for (int k = 0; k < b->n; k++)
        b->w[k] /= sum;
}

static inline void s_add(const s_run_t *r, int64_t *a, size_t i, int64_t v)
{
    if (r->atomic)
        __atomic_fetch_add(&a[i], v, __ATOMIC_RELAXED);
    else
        a[i] += v;
}

/* Height and gradient at node (ci, cj) + (fx, fy), bilinear over the four nodes. */
static inline void s_sample(const float *h, int64_t w, int64_t ci, int64_t cj, double fx, double fy,
                            double *height, double *gx, double *gy)
{
    const float *p = h + tb_idx(w, ci, cj);
    double h00 = p[0], h10 = p[1], h01 = p[w], h11 = p[w + 1];
    *gx = (h10 - h00) * (1 - fy) + (h11 - h01) * fy;
    *gy = (h01 - h00) * (1 - fx) + (h11 - h10) * fx;
    *height = h00 * (1 - fx) * (1 - fy) + h10 * fx * (1 - fy) + h01 * (1 - fx) * fy + h11 * fx * fy;
}

/* Whether a droplet at node (ci, cj) can read its four nodes and lay its brush inside the window.
 */
static inline bool s_inside(const s_run_t *r, int64_t ci, int64_t cj)
{
    int64_t m = r->p->droplet_brush_radius;
    return ci >= m && cj >= m && ci + 1 + m < r->win->w && cj + 1 + m < r->win->h;
}

static int64_t s_quant(double v)
{
    return (int64_t)(v * S_Q + 0.5);
}

/* Lays d quanta at the four nodes round (ci, cj) + (fx, fy), bilinear shares rounded down and the
 * remainder on the last node, so exactly d are added. */
static void s_deposit(const s_run_t *r, int64_t ci, int64_t cj, double fx, double fy, int64_t d)
{
    const int64_t w = r->win->w;
    const double wt[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
    const size_t at[4] = {tb_idx(w, ci, cj), tb_idx(w, ci + 1, cj), tb_idx(w, ci, cj + 1),
                          tb_idx(w, ci + 1, cj + 1)};
    int64_t left = d;
    for (int k = 0; k < 3; k++) {
        int64_t s = (int64_t)((double)d * wt[k]);
        s = s > left ? left : s;
        if (s > 0)
            s_add(r, r->dep, at[k], s);
        left -= s;
    }
    if (left > 0)
        s_add(r, r->dep, at[3], left);
}

/* Adds q quanta to a over the brush round node (ni, nj): each cell its weight's share rounded
 * down, the remainder on the centre, so exactly q are added. */
static void s_spread(const s_run_t *r, int64_t *a, int64_t ni, int64_t nj, int64_t q)
{
    const s_brush_t *br = &r->brush;
    const int64_t w = r->win->w;
    int64_t left = q;
    for (int k = 1; k < br->n; k++) {
        int64_t s = (int64_t)((double)q * br->w[k]);
        if (s > 0)
            s_add(r, a, tb_idx(w, ni + br->dx[k], nj + br->dy[k]), s);
        left -= s;
    }
    s_add(r, a, tb_idx(w, ni, nj), left);
}

static void s_droplet(const s_run_t *r, int64_t ci, int64_t cj, double fx, double fy, double water,
                      int64_t sx, int64_t sy, tb_droplet_budget_t *b)
{
    const tb_detail_params_t *p = r->p;
    const int64_t w = r->win->w;
    const float *h = r->h;
    double dirx = 0, diry = 0, speed = 1, height, gx, gy;
    int64_t sed = 0;
    if (!s_inside(r, ci, cj))
        return;
    s_sample(h, w, ci, cj, fx, fy, &height, &gx, &gy);
    if (height < 0) /* the sea: no rain runs there */
        return;
    b->droplets++;
    for (int step = 0; step < p->droplet_lifetime; step++) {
        dirx = dirx * p->droplet_inertia - gx * (1 - p->droplet_inertia);
        diry = diry * p->droplet_inertia - gy * (1 - p->droplet_inertia);
        double len = sqrt(dirx * dirx + diry * diry);
        if (len < 1e-12) {
            double a =
                2 * M_PI * tb_hash_unit(tb_hash_cell(r->jitter_key ^ (uint64_t)step, sx, sy));
            dirx = cos(a);
            diry = sin(a);
        } else {
            dirx /= len;
            diry /= len;
        }
        /* the nearest node carries the water and centres the brush */
        int64_t ni = ci + (fx >= 0.5), nj = cj + (fy >= 0.5);
        s_add(r, r->water, tb_idx(w, ni, nj), (int64_t)(water * TB_DROPLET_WATER_UNIT + 0.5));
        double nx = fx + dirx, ny = fy + diry;
        double flx = floor(nx), fly = floor(ny);
        int64_t nci = ci + (int64_t)flx, ncj = cj + (int64_t)fly;
        double nfx = nx - flx, nfy = ny - fly;
        if (!s_inside(r, nci, ncj)) {
            b->carried_edge_q += sed;
            return;
        }
        double nh, ngx, ngy;
        s_sample(h, w, nci, ncj, nfx, nfy, &nh, &ngx, &ngy);
        double dh = nh - height;
        double cap = fmax(-dh, p->droplet_min_slope) * speed * water * p->droplet_capacity;
        double sed_m = (double)sed * TB_DROPLET_QUANTUM_M;
        b->steps++;
        if (dh > 0 || sed_m > cap) {
            int64_t d = s_quant(dh > 0 ? fmin(dh, sed_m) : (sed_m - cap) * p->droplet_deposit);
            d = d > sed ? sed : d;
            if (d > 0) {
                s_deposit(r, ci, cj, fx, fy, d);
                sed -= d;
                b->deposited_q += d;
            }
        } else {
            int64_t e = s_quant(fmin((cap - sed_m) * p->droplet_erode, -dh));
            if (e > 0) {
                s_spread(r, r->ero, ni, nj, e);
                sed += e;
                b->eroded_q += e;
            }
        }
        speed = sqrt(fmax(0.0, speed * speed - dh * p->droplet_gravity));
        water *= 1 - p->droplet_evaporate;
        ci = nci;
        cj = ncj;
        fx = nfx;
        fy = nfy;
        height = nh;
        gx = ngx;
        gy = ngy;
    }
    /* the lifetime is over: the droplet lays what it still carries where it stands (docs/tiles.md,
     * "Sediment accounting"), so only the window's edge carries sediment off */
    if (sed > 0) {
        int64_t ni = ci + (fx >= 0.5), nj = cj + (fy >= 0.5);
        s_spread(r, r->dep, ni, nj, sed);
        b->deposited_q += sed;
        b->deposited_end_q += sed;
    }
}

/* One task: the droplets of one row of spawn blocks, in block order. */
static void s_block_row(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_run_t *r = ctx;
    tb_droplet_budget_t *b = &r->task_budget[task];
    memset(b, 0, sizeof *b);
    int64_t B = r->block, by = r->by0 + (int64_t)task, j_s = r->j_start + (int64_t)task * B;
    for (int64_t k = 0; k < r->nbx; k++) {
        int64_t bx = tb_wrap(r->bx0 + k, r->blocks_around), i_s = r->i_start + k * B;
        uint64_t hv = tb_hash_cell(r->spawn_key, bx, by);
        int64_t ox = (int64_t)(hv % (uint64_t)B), oy = (int64_t)((hv / (uint64_t)B) % (uint64_t)B);
        int64_t ci = i_s + ox, cj = j_s + oy;
        if (ci < 0 || cj < 0 || ci >= r->win->w || cj >= r->win->h)
            continue; /* spawned outside this window: another window runs it */
        double fx = (double)((hv >> 16) & 0xffff) / 65536.0,
               fy = (double)((hv >> 32) & 0xffff) / 65536.0;
        double water = 0.75 + 0.5 * (double)(hv >> 48) / 65536.0;
        int64_t sx = bx * B + ox, sy = by * B + oy;
        s_droplet(r, ci, cj, fx, fy, water, sx, sy, b);
    }
}

typedef struct {
    const tb_frame_t *win;
    const double *h0;
    double *h;
    float *hf;
    const int64_t *ero, *dep;
} s_apply_t;

static void s_apply_row(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_apply_t *a = ctx;
    size_t at = tb_idx(a->win->w, 0, (int64_t)task);
    for (int64_t i = 0; i < a->win->w; i++, at++) {
        a->h[at] = a->h0[at] + (double)(a->dep[at] - a->ero[at]) * TB_DROPLET_QUANTUM_M;
        a->hf[at] = (float)a->h[at];
    }
}

int tb_erosion_droplets_beyer(const tb_detail_params_t *p, uint64_t seed, const tb_frame_t *win,
                              const double *h0, double *h_out, int64_t *eroded_q,
                              int64_t *deposited_q, int64_t *water_q, tb_droplet_budget_t *budget,
                              tb_pool_t *pool, tb_err_t *err)
{
    size_t cells = (size_t)win->w * (size_t)win->h;
    memset(budget, 0, sizeof *budget);
    memset(eroded_q, 0, cells * sizeof *eroded_q);
    memset(deposited_q, 0, cells * sizeof *deposited_q);
    memset(water_q, 0, cells * sizeof *water_q);
    memcpy(h_out, h0, cells * sizeof *h_out);
    int64_t B = p->droplet_spawn_block;
    if (B < 1 || win->lattice_w % B != 0)
        return tb_err_set(err, TB_E_INVALID,
                          "droplets: spawn_block %" PRId64 " does not divide the %" PRId64
                          " cells around the planet",
                          B, win->lattice_w);
    s_run_t r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.seed = seed;
    r.win = win;
    float *hf = malloc(cells * sizeof *hf);
    if (!hf)
        return tb_err_set(err, TB_E_NOMEM, "droplets: out of memory for %zu cells", cells);
    for (size_t i = 0; i < cells; i++)
        hf[i] = (float)h0[i];
    r.h = hf;
    r.ero = eroded_q;
    r.dep = deposited_q;
    r.water = water_q;
    r.atomic = tb_pool_threads(pool) > 1;
    r.block = B;
    r.blocks_around = win->lattice_w / B;
    r.bx0 = win->x0 / B; /* x0 is in [0, lattice_w) */
    r.i_start = r.bx0 * B - win->x0;
    r.by0 = win->y0 >= 0 ? win->y0 / B : -((-win->y0 + B - 1) / B);
    r.j_start = r.by0 * B - win->y0;
    r.nbx = (win->w - r.i_start + B - 1) / B;
    r.nby = (win->h - r.j_start + B - 1) / B;
    s_brush_make(&r.brush, p->droplet_brush_radius);
    r.task_budget = calloc((size_t)r.nby, sizeof *r.task_budget);
    if (!r.task_budget) {
        free(hf);
        return tb_err_set(err, TB_E_NOMEM, "droplets: out of memory");
    }
    s_apply_t ap = {win, h0, h_out, hf, eroded_q, deposited_q};
    for (int round = 0; round < p->droplet_rounds; round++) {
        r.round = round;
        r.spawn_key = tb_hash_key(seed, TB_SALT_TILE_SPAWN, round);
        r.jitter_key = tb_hash_key(seed, TB_SALT_TILE_JITTER, round);
        tb_pool_run(pool, (size_t)r.nby, s_block_row, &r);
        for (int64_t t = 0; t < r.nby; t++) { /* integers: any order gives the same sums */
            const tb_droplet_budget_t *b = &r.task_budget[t];
            budget->eroded_q += b->eroded_q;
            budget->deposited_q += b->deposited_q;
            budget->carried_edge_q += b->carried_edge_q;
            budget->deposited_end_q += b->deposited_end_q;
            budget->droplets += b->droplets;
            budget->steps += b->steps;
        }
        tb_pool_run(pool, (size_t)win->h, s_apply_row, &ap);
    }
    free(r.task_budget);
    free(hf);
    return 0;
}
