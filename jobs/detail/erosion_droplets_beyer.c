/* Droplet erosion after Beyer 2015; see erosion_droplets_beyer.h for the method and the rules that
 * make it a function of world position. Typical load: a 2744 x 2744 window, 4 rounds of one droplet
 * per 16 cells, 24 steps each: about 45 M droplet steps. */
#include "jobs/detail/erosion_droplets_beyer.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "jobs/detail/line_scratch.h"

#define S_MAX_BRUSH 256
#define S_Q (1.0 / TB_DROPLET_QUANTUM_M)

typedef struct {
    int n;
    int dx[S_MAX_BRUSH], dy[S_MAX_BRUSH];
    double w[S_MAX_BRUSH];      /* normalised; w[0] is the centre */
    ptrdiff_t off[S_MAX_BRUSH]; /* dy x window width + dx, set once the window is known */
} s_brush_t;

typedef struct {
    const tb_detail_params_t *p;
    uint64_t seed;
    const tb_frame_t *win;
    const float *h; /* H_r rounded to float, read only during a round: half the cache footprint
                       of the doubles, and the droplets' reads are what the pass waits on */
    const double *log10_area; /* the solve's drainage area at the window's cells, or NULL */
    double channel_log10;     /* log10 of relief.channel_area_m2: a channel from there */
    const float *conv;        /* 1 + converge x log2(1 + water of the rounds before), per cell: a
                                 snapshot taken between rounds, so a round reads no other droplet of
                                 its own; NULL when converge is 0 */
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
    const size_t at = tb_idx(r->win->w, ni, nj);
    int64_t left = q;
    if (!r->atomic) { /* one thread: plain adds, the same integers */
        int64_t *c = a + at;
        for (int k = 1; k < br->n; k++) {
            int64_t s = (int64_t)((double)q * br->w[k]);
            c[br->off[k]] += s;
            left -= s;
        }
        c[0] += left;
        return;
    }
    for (int k = 1; k < br->n; k++) {
        int64_t s = (int64_t)((double)q * br->w[k]);
        if (s > 0)
            s_add(r, a, (size_t)((ptrdiff_t)at + br->off[k]), s);
        left -= s;
    }
    s_add(r, a, at, left);
}

/* The load of a droplet whose lifetime ended goes on from node (ni, nj) down the steepest descent
 * of H_r (D8, drop over distance), for at most carry_steps steps, as the same droplet would with
 * erosion switched off: on a descent its capacity is Beyer's max(drop, min_slope) x speed x water
 * x capacity and it lays `deposit` of what it carries above that at the cell it leaves; in a pit
 * (no lower neighbour) it fills the pit up to its lowest neighbour and spills over it. The cells
 * it just left are not taken again (a flat pit would otherwise hold it between two cells). So the
 * load comes to rest where the ground flattens - foot slopes, hollows, valley floors - rather than
 * in one mound where the droplet died. What is left after carry_steps is laid over the brush, as
 * before this walk existed (deposited_end_q counts it). Integers throughout: every quantum taken
 * from sed is added to dep. */
static void s_carry(const s_run_t *r, int64_t ni, int64_t nj, double speed, double water,
                    int64_t sed, tb_droplet_budget_t *b)
{
    static const double inv_dist[8] = {M_SQRT1_2, 1, M_SQRT1_2, 1, 1, M_SQRT1_2, 1, M_SQRT1_2};
    const tb_detail_params_t *p = r->p;
    const int64_t w = r->win->w;
    const float *h = r->h;
    ptrdiff_t off[8];
    for (int k = 0; k < 8; k++)
        off[k] = (ptrdiff_t)tb_nb_dy[k] * w + tb_nb_dx[k];
    size_t last[4] = {SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX};
    /* the walk reads all eight neighbours: one cell in from the edge at least, whatever the brush
     * (a brush of radius 0 lets s_inside take the edge row) */
    const int64_t m = p->droplet_brush_radius > 1 ? p->droplet_brush_radius : 1;
    for (int step = 0; step < p->droplet_carry_steps && sed > 0; step++) {
        if (!(ni >= m && nj >= m && ni + 1 + m < w && nj + 1 + m < r->win->h)) {
            b->carried_edge_q += sed;
            return;
        }
        size_t at = tb_idx(w, ni, nj);
        last[step & 3] = at;
        const float *hp = h + at;
        double hc = hp[0], best_s = -INFINITY;
        int kb = -1;
        for (int k = 0; k < 8; k++) { /* the steepest drop over distance */
            double sl = (hc - (double)hp[off[k]]) * inv_dist[k];
            if (sl > best_s) {
                best_s = sl;
                kb = k;
            }
        }
        if (!(best_s > 0)) { /* a pit: the lowest neighbour not just walked, to spill over */
            kb = -1;
            for (int k = 0; k < 8; k++) {
                size_t t = at + (size_t)off[k];
                if (t == last[0] || t == last[1] || t == last[2] || t == last[3])
                    continue;
                double sl = (hc - (double)hp[off[k]]) * inv_dist[k];
                if (kb < 0 || sl > best_s) {
                    best_s = sl;
                    kb = k;
                }
            }
            if (kb < 0)
                break;
        }
        if (r->log10_area && r->log10_area[at] >= r->channel_log10) {
            /* the flow joins one of the solve's channels: the load goes in with it, onto the
             * channel floor, where the settling spreads it along the valley */
            s_add(r, r->dep, at, sed);
            b->deposited_q += sed;
            b->deposited_channel_q += sed;
            return;
        }
        double drop = hc - (double)hp[off[kb]], sed_m = (double)sed * TB_DROPLET_QUANTUM_M;
        int64_t d;
        if (drop <= 0) { /* fill the pit to its spill height */
            d = s_quant(-drop < sed_m ? -drop : sed_m);
        } else {
            double cap = (drop > p->droplet_min_slope ? drop : p->droplet_min_slope) * speed *
                         water * p->droplet_capacity;
            d = sed_m > cap ? s_quant((sed_m - cap) * p->droplet_deposit) : 0;
            speed = sqrt(speed * speed + drop * p->droplet_gravity);
        }
        d = d > sed ? sed : d;
        if (d > 0) {
            s_add(r, r->dep, at, d);
            sed -= d;
            b->deposited_q += d;
        }
        s_add(r, r->water, at, (int64_t)(water * TB_DROPLET_WATER_UNIT + 0.5));
        water *= 1 - p->droplet_evaporate;
        b->carry_steps++;
        ni += tb_nb_dx[kb];
        nj += tb_nb_dy[kb];
    }
    if (sed > 0) {
        if (!s_inside(r, ni, nj)) {
            b->carried_edge_q += sed;
            return;
        }
        s_spread(r, r->dep, ni, nj, sed);
        b->deposited_q += sed;
        b->deposited_end_q += sed;
    }
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
        double cap = (-dh > p->droplet_min_slope ? -dh : p->droplet_min_slope) * speed * water *
                     p->droplet_capacity;
        if (r->conv) /* the water of the rounds before adds capacity: converging paths deepen */
            cap *= (double)r->conv[tb_idx(w, ni, nj)];
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
    /* the lifetime is over: what the droplet still carries goes on down the steepest descent
     * (docs/tiles.md, "Sediment accounting"), so only the window's edge carries sediment off */
    if (sed > 0)
        s_carry(r, ci + (fx >= 0.5), cj + (fy >= 0.5), speed, water, sed, b);
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

/* log2(1 + W) for W = water_q / TB_DROPLET_WATER_UNIT: the exponent of 1 + W exactly and the
 * mantissa's logarithm by a cubic (error below 0.01, far under what the factor needs): a few
 * operations where libm's log2 was a twentieth of the droplets' instructions. A pure function of
 * its argument, so the same bits everywhere. */
static inline double s_log2_1p(int64_t water_q)
{
    if (water_q <= 0)
        return 0;
    int e;
    double m = frexp(1.0 + (double)water_q / TB_DROPLET_WATER_UNIT, &e); /* m in [0.5, 1) */
    double t = 2 * m - 1;                                                /* [0, 1): log2(1 + t) */
    return (double)(e - 1) + t * (1.4425 + t * (-0.6998 + t * 0.2573));
}

typedef struct {
    const tb_frame_t *win;
    const double *h0;
    double *h;
    float *hf;
    const int64_t *ero, *dep, *water;
    float *conv; /* NULL when converge is 0 */
    double converge;
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
    if (a->conv) {
        at = tb_idx(a->win->w, 0, (int64_t)task);
        for (int64_t i = 0; i < a->win->w; i++, at++)
            a->conv[at] = (float)(1.0 + a->converge * s_log2_1p(a->water[at]));
    }
}

/* The deposit settles: each cell's quanta are shared over the box of radius b round it along one
 * axis, floor(q / (2b + 1)) to every cell of the box and the remainder to the cell itself, so
 * exactly q are moved; twice along rows, then twice along columns, is the tent of radius 2b twice
 * (a smooth bell of radius 4b). Cells within b of the window's edge along the axis keep their
 * quanta (nothing leaves the window; the margin covers the difference). Integers: the same sums in
 * any order, on any thread. */
typedef struct {
    int64_t *a;
    int64_t w, h, b;
    bool rows;                    /* along rows (a task a row) or along columns (a task a column) */
    tb_line_scratch_fail_t *fail; /* a task's failed allocation, reported after the run */
} s_settle_t;

/* One line of n cells, `step` apart: each cell's share floor(q / N) to the 2b + 1 cells round it,
 * the remainder to itself. scratch holds 2n. */
static void s_settle_run(int64_t *a, int64_t n, int64_t step, int64_t b, int64_t *scratch)
{
    const int64_t N = 2 * b + 1;
    int64_t *part = scratch, *out = scratch + n;
    for (int64_t x = 0; x < n; x++) {
        int64_t q = a[x * step];
        bool edge = x < b || x >= n - b;
        part[x] = edge ? 0 : q / N;
        out[x] = q - (edge ? 0 : N * part[x]);
    }
    int64_t run = 0; /* the sum of part over [x - b, x + b], slid along the line */
    for (int64_t x = 0; x < n && x <= b; x++)
        run += part[x];
    for (int64_t x = 0; x < n; x++) {
        out[x] += run;
        if (x + b + 1 < n)
            run += part[x + b + 1];
        if (x - b >= 0)
            run -= part[x - b];
    }
    for (int64_t x = 0; x < n; x++)
        a[x * step] = out[x];
}

#define S_COLS 32 /* columns a task gathers into a contiguous block, so the column pass streams */

static void s_settle_line(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_settle_t *c = ctx;
    if (c->rows) {
        int64_t *scratch = tb_line_scratch_alloc((size_t)c->w * 2 * sizeof *scratch, c->fail);
        if (!scratch) /* recorded in c->fail: the pass fails with TB_E_NOMEM */
            return;
        s_settle_run(c->a + (int64_t)task * c->w, c->w, 1, c->b, scratch);
        free(scratch);
        return;
    }
    int64_t x0 = (int64_t)task * S_COLS, nc = c->w - x0 < S_COLS ? c->w - x0 : S_COLS, h = c->h;
    int64_t *block = tb_line_scratch_alloc((size_t)(nc * h + 2 * h) * sizeof *block, c->fail);
    if (!block) /* recorded in c->fail */
        return;
    for (int64_t y = 0; y < h; y++)
        for (int64_t k = 0; k < nc; k++)
            block[k * h + y] = c->a[y * c->w + x0 + k];
    for (int64_t k = 0; k < nc; k++)
        s_settle_run(block + k * h, h, 1, c->b, block + nc * h);
    for (int64_t y = 0; y < h; y++)
        for (int64_t k = 0; k < nc; k++)
            c->a[y * c->w + x0 + k] = block[k * h + y];
    free(block);
}

static int s_settle(int64_t *dep, int64_t w, int64_t h, int b, tb_pool_t *pool, tb_err_t *err)
{
    if (b < 1 || w <= 2 * b || h <= 2 * b)
        return 0;
    tb_line_scratch_fail_t fail = {.filter = TB_LINE_SETTLE};
    s_settle_t c = {dep, w, h, b, true, &fail};
    for (int k = 0; k < 4; k++) {
        c.rows = k < 2;
        tb_pool_run(pool, (size_t)(c.rows ? h : (w + S_COLS - 1) / S_COLS), s_settle_line, &c);
        if (tb_line_scratch_check(&fail, "droplets: the deposit's settling", err) != 0)
            return -1;
    }
    return 0;
}

int tb_erosion_droplets_beyer(const tb_detail_params_t *p, uint64_t seed, const tb_frame_t *win,
                              const double *h0, const double *log10_area, double *h_out,
                              int64_t *eroded_q, int64_t *deposited_q, int64_t *water_q,
                              tb_droplet_budget_t *budget, tb_pool_t *pool, tb_err_t *err)
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
    float *conv =
        p->droplet_converge > 0 && p->droplet_rounds > 1 ? malloc(cells * sizeof *conv) : NULL;
    if (!hf || (p->droplet_converge > 0 && p->droplet_rounds > 1 && !conv)) {
        free(hf);
        free(conv);
        return tb_err_set(err, TB_E_NOMEM, "droplets: out of memory for %zu cells", cells);
    }
    for (size_t i = 0; i < cells; i++)
        hf[i] = (float)h0[i];
    r.h = hf;
    r.log10_area = log10_area;
    r.channel_log10 = log10(p->relief_channel_area_m2);
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
    for (int k = 0; k < r.brush.n; k++)
        r.brush.off[k] = (ptrdiff_t)r.brush.dy[k] * win->w + r.brush.dx[k];
    r.task_budget = calloc((size_t)r.nby, sizeof *r.task_budget);
    if (!r.task_budget) {
        free(hf);
        free(conv);
        return tb_err_set(err, TB_E_NOMEM, "droplets: out of memory");
    }
    s_apply_t ap = {win, h0, h_out, hf, eroded_q, deposited_q, water_q, conv, p->droplet_converge};
    for (int round = 0; round < p->droplet_rounds; round++) {
        r.round = round;
        r.conv = round > 0 ? conv : NULL; /* round 0 has no water before it: a factor of 1 */
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
            budget->carry_steps += b->carry_steps;
            budget->deposited_channel_q += b->deposited_channel_q;
        }
        /* the water's factor is for the next round: none after the last */
        ap.conv = round + 1 < p->droplet_rounds ? conv : NULL;
        tb_pool_run(pool, (size_t)win->h, s_apply_row, &ap);
    }
    if (p->droplet_settle_cells > 0 && p->droplet_rounds > 0) {
        if (s_settle(deposited_q, win->w, win->h, p->droplet_settle_cells, pool, err) != 0) {
            free(r.task_budget);
            free(hf);
            free(conv);
            return -1;
        }
        ap.conv = NULL;
        tb_pool_run(pool, (size_t)win->h, s_apply_row, &ap);
    }
    free(r.task_budget);
    free(hf);
    free(conv);
    return 0;
}
