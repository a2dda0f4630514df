/* Jacobi thermal weathering; see thermal_talus_jacobi.h. Each iteration is two passes over rows:
 * (1) per cell the share of each unit of positive excess it sheds (ratio = rate E / sum e), from
 * the old heights; (2) per cell new = old - outflow + inflows, pulling each neighbour's outflow
 * toward it from the same old heights and ratios. */
#include "jobs/detail/thermal_talus_jacobi.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const double *h;
    double *ratio, *shed, *out;
    uint8_t *changed;     /* per row: did the last iteration change a height in it */
    uint8_t *was_changed; /* the same for the iteration before (what pass 1 reads) */
    uint8_t *active;      /* per row: does a cell of it shed */
    int64_t w, hgt;
    ptrdiff_t off[8];   /* index offsets of the 8 neighbours */
    double tan_cell[8]; /* tan(talus) x the neighbour's distance in metres */
    double rate;
    int first; /* first iteration: every row is recomputed */
} s_thermal_t;

static inline bool s_in(const s_thermal_t *t, int64_t i, int64_t j, int k)
{
    int64_t x = i + tb_nb_dx[k], y = j + tb_nb_dy[k];
    return x >= 0 && y >= 0 && x < t->w && y < t->hgt;
}

/* Pass 1: per cell the amount it sheds (rate x its largest excess) and the share of each unit of
 * positive excess that goes to a neighbour. A row none of whose neighbourhood changed keeps its
 * values from the iteration before: they would come out the same. */
static void s_ratio_row(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_thermal_t *t = ctx;
    int64_t j = (int64_t)task;
    if (!t->first && !t->was_changed[j] && !(j > 0 && t->was_changed[j - 1]) &&
        !(j + 1 < t->hgt && t->was_changed[j + 1]))
        return;
    bool edge_row = j == 0 || j == t->hgt - 1;
    bool any = false;
    for (int64_t i = 0; i < t->w; i++) {
        size_t at = tb_idx(t->w, i, j);
        const double *hp = t->h + at;
        double hi = *hp, emax = 0, esum = 0;
        bool edge = edge_row || i == 0 || i == t->w - 1;
        for (int k = 0; k < 8; k++) {
            if (edge && !s_in(t, i, j, k))
                continue;
            double e = hi - hp[t->off[k]] - t->tan_cell[k];
            if (e > 0) {
                esum += e;
                emax = e > emax ? e : emax;
            }
        }
        t->ratio[at] = esum > 0 ? t->rate * emax / esum : 0;
        t->shed[at] = t->rate * emax;
        any |= esum > 0;
    }
    t->active[j] = any;
}

/* Pass 2: new = old - shed + the inflows from the neighbours that shed toward this cell, added in
 * neighbour order. */
static void s_move_row(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_thermal_t *t = ctx;
    int64_t j = (int64_t)task;
    size_t row = tb_idx(t->w, 0, j);
    if (!t->active[j] && !(j > 0 && t->active[j - 1]) && !(j + 1 < t->hgt && t->active[j + 1])) {
        memcpy(t->out + row, t->h + row, (size_t)t->w * sizeof *t->out);
        t->changed[j] = 0;
        return;
    }
    bool edge_row = j == 0 || j == t->hgt - 1;
    bool changed = false;
    for (int64_t i = 0; i < t->w; i++) {
        size_t at = row + (size_t)i;
        const double *hp = t->h + at, *rp = t->ratio + at;
        double hi = *hp, v = hi - t->shed[at];
        bool edge = edge_row || i == 0 || i == t->w - 1;
        for (int k = 0; k < 8; k++) {
            if (edge && !s_in(t, i, j, k))
                continue;
            double rj = rp[t->off[k]];
            if (rj == 0)
                continue;
            double in = hp[t->off[k]] - hi - t->tan_cell[k]; /* the neighbour sheds to this cell */
            if (in > 0)
                v += rj * in;
        }
        t->out[at] = v;
        changed |= v != hi;
    }
    t->changed[j] = changed;
}

int tb_thermal_talus_jacobi(double *h, int64_t w, int64_t hgt, double cell_m, double talus_deg,
                            double rate, int iterations, double *scratch, tb_pool_t *pool,
                            tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)hgt;
    double *own = NULL;
    if (iterations <= 0)
        return 0;
    if (!scratch) {
        own = malloc(2 * cells * sizeof *own);
        if (!own)
            return tb_err_set(err, TB_E_NOMEM, "thermal: out of memory for %zu cells", cells);
        scratch = own;
    }
    double *shed = malloc(cells * sizeof *shed);
    uint8_t *flags = calloc(3 * (size_t)hgt, 1);
    if (!shed || !flags) {
        free(own);
        free(shed);
        free(flags);
        return tb_err_set(err, TB_E_NOMEM, "thermal: out of memory for %zu cells", cells);
    }
    s_thermal_t t;
    t.w = w;
    t.hgt = hgt;
    t.rate = rate;
    t.ratio = scratch;
    t.shed = shed;
    t.changed = flags;
    t.was_changed = flags + hgt;
    t.active = flags + 2 * hgt;
    double tn = tan(talus_deg * M_PI / 180.0);
    for (int k = 0; k < 8; k++) {
        t.tan_cell[k] = tn * tb_nb_dist[k] * cell_m;
        t.off[k] = (ptrdiff_t)tb_nb_dy[k] * (ptrdiff_t)w + tb_nb_dx[k];
    }
    double *a = h, *b = scratch + cells;
    for (int it = 0; it < iterations; it++) {
        t.h = a;
        t.out = b;
        t.first = it == 0;
        tb_pool_run(pool, (size_t)hgt, s_ratio_row, &t);
        tb_pool_run(pool, (size_t)hgt, s_move_row, &t);
        memcpy(t.was_changed, t.changed, (size_t)hgt);
        double *s = a;
        a = b;
        b = s;
    }
    if (a != h)
        memcpy(h, a, cells * sizeof *h);
    free(own);
    free(shed);
    free(flags);
    return 0;
}

double tb_thermal_max_slope_deg(const double *h, int64_t w, double cell_m, int64_t i0, int64_t i1,
                                int64_t j0, int64_t j1)
{
    double best = 0;
    for (int64_t j = j0; j < j1; j++)
        for (int64_t i = i0; i < i1; i++)
            for (int k = 0; k < 8; k++) {
                double d = h[tb_idx(w, i, j)] - h[tb_idx(w, i + tb_nb_dx[k], j + tb_nb_dy[k])];
                double s = d / (tb_nb_dist[k] * cell_m);
                best = s > best ? s : best;
            }
    return atan(best) * 180.0 / M_PI;
}
