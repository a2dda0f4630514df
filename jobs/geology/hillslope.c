/* Nonlinear hillslope diffusion with per-cell power-of-two sub-step rates; see hillslope.h.
 *
 * Layout: faces are stored once, by the cell below/left of them: each cell owns its four "forward"
 * faces E, NW, N, NE (tb_nb 4..7); its backward faces W, SE, S, SW (3..0) are the forward faces of
 * those neighbours (slot 7 - k). A step is:
 *   A. M at the step's start for every forward face (one division per face);
 *   B. each cell's need S_c = sum over its eight faces of coeff w_k M_k, and its own level;
 *   C. the level used (highest own level in the 3 x 3) and the limiter;
 *   then the firing times, each a Jacobi update: dense row passes while most cells take part (the
 *   first time, and the half-way time when most cells run at rate 2), a list of cells otherwise.
 * A face's flux is computed once per firing and applied to both cells; each cell adds its eight
 * faces in neighbour order, so the sum is the same float in every box and processing order.
 */
#include "jobs/geology/hillslope.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_LEVEL 10 /* rates up to 1024, the manifest's cap on max_hillslope_substeps */
#define S_R2_CAP (0.99f * 0.99f)

static const float s_inv_rate[S_MAX_LEVEL + 1] = {
    1.f, 0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f, 0.0078125f, 0.00390625f,
    0.001953125f, 0.0009765625f};

struct tb_hillslope_t {
    size_t cells;
    int64_t w;
    uint8_t *own;   /* log2 of the rate each cell's own faces need */
    uint8_t *level; /* log2 of each cell's rate: the highest own level in its 3 x 3; fixed 0 */
    uint8_t *touch; /* highest level of any face of the cell (its level and its neighbours') */
    float *limit;   /* 1, or rate / S_c where even the capped rate falls short */
    float *m0[4];   /* M of the forward faces (E, NW, N, NE) at the start of the step */
    float *flux[2][4]; /* row buffers of forward-face fluxes for the dense passes */
    int32_t *list;  /* cells with a face above level 1, highest touch first */
    float *next;    /* Jacobi buffer of the sparse passes */
};

/* Forward slot of direction k (4..7 -> 0..3). */
static inline int s_slot(int k) { return k - 4; }

tb_hillslope_t *tb_hillslope_new(size_t cells, int64_t w, tb_err_t *err)
{
    tb_hillslope_t *self = tb_calloc(1, sizeof *self, "hillslope workspace", err);
    if (!self)
        return NULL;
    self->cells = cells;
    self->w = w;
    int ok = (self->own = tb_calloc(cells, 1, "hillslope levels", err)) &&
             (self->level = tb_calloc(cells, 1, "hillslope levels", err)) &&
             (self->touch = tb_calloc(cells, 1, "hillslope levels", err)) &&
             (self->limit = tb_malloc(cells * sizeof(float), "hillslope limiters", err)) &&
             (self->list = tb_malloc(cells * sizeof(int32_t), "hillslope list", err)) &&
             (self->next = tb_malloc(cells * sizeof(float), "hillslope buffer", err));
    for (int f = 0; ok && f < 4; f++) {
        ok = (self->m0[f] = tb_calloc(cells, sizeof(float), "hillslope faces", err)) &&
             (self->flux[0][f] = tb_calloc((size_t)w, sizeof(float), "hillslope row", err)) &&
             (self->flux[1][f] = tb_calloc((size_t)w, sizeof(float), "hillslope row", err));
    }
    if (!ok) {
        tb_hillslope_destroy(&self);
        return NULL;
    }
    return self;
}

void tb_hillslope_destroy(tb_hillslope_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_hillslope_t *self = *self_p;
    free(self->own);
    free(self->level);
    free(self->touch);
    free(self->limit);
    free(self->list);
    free(self->next);
    for (int f = 0; f < 4; f++) {
        free(self->m0[f]);
        free(self->flux[0][f]);
        free(self->flux[1][f]);
    }
    free(self);
    *self_p = NULL;
}

typedef struct {
    float cw[8];        /* coeff * w_k */
    float inv_crit2[8]; /* 1 / (Sc dx dist_k)^2 */
    int cap_level;
} s_consts_t;

/* M of a drop d across a face of direction k: 1 / (1 - r^2), r capped. */
static inline float s_m(const s_consts_t *q, float d, int k)
{
    float r2 = d * d * q->inv_crit2[k];
    r2 = r2 < S_R2_CAP ? r2 : S_R2_CAP;
    return 1.0f / (1.0f - r2);
}

/* The offsets of a row's cells: interior columns use row 0 of noff; a wrapping box's first and
 * last columns their own rows. */
static inline const ptrdiff_t *s_off(const tb_topo_t *t, int64_t i)
{
    int e = 0;
    if (t->wraps && i == 0)
        e = 1;
    else if (t->wraps && i == t->w - 1)
        e = 2;
    return t->noff[e];
}

/* A. M of the forward faces of rows 0..h-2 at the start of the step. Faces whose far end lies
 * outside the box (the ring's outer side) are never read. */
static void s_faces(tb_hillslope_t *self, const tb_topo_t *t, const float *h, const s_consts_t *q)
{
    int64_t w = t->w;
    for (int64_t j = 0; j < t->h - 1; j++) {
        size_t row = (size_t)j * (size_t)w;
        for (int f = 0; f < 4; f++) {
            int k = f + 4;
            float *out = self->m0[f] + row;
            const float *hr = h + row;
            int64_t lo = 1, hi = w - 1; /* the inner columns: one offset, so it vectorises */
            ptrdiff_t o = t->noff[0][k];
            for (int64_t i = lo; i < hi; i++)
                out[i] = s_m(q, hr[i + o] - hr[i], k);
            for (int64_t i = 0; i < w; i += w - 1) { /* the two edge columns */
                int64_t ni = i + tb_nb_dx[k];
                if (!t->wraps && (ni < 0 || ni >= w)) {
                    out[i] = 1;
                    continue;
                }
                out[i] = s_m(q, h[(ptrdiff_t)(row + (size_t)i) + s_off(t, i)[k]] - hr[i], k);
            }
        }
    }
}

/* M at the start for the face of cell c towards k (forward: own slot; backward: the neighbour's). */
static inline float s_m0(const tb_hillslope_t *self, const tb_topo_t *t, uint8_t node_c, size_t c,
                         int k)
{
    if (k >= 4)
        return self->m0[s_slot(k)][c];
    return self->m0[s_slot(7 - k)][tb_topo_nb(t, node_c, c, k)];
}

/* B and C: need, own level, level used, limiter, touch. Returns the highest touch level. */
static int s_levels(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
                    const s_consts_t *q, tb_hillslope_bound_t bound)
{
    memset(self->own, 0, t->n);
    memset(self->level, 0, t->n);
    memset(self->touch, 0, t->n);
    for (size_t c = 0; c < t->n; c++)
        self->limit[c] = 1;
    if (bound == TB_HILLSLOPE_BOUND_ONE)
        return 0;
    int top = 0;
    for (size_t c = 0; c < t->n; c++) {
        if (!(node[c] & TB_NODE_SOLVED))
            continue;
        float need = 0;
        for (int k = 0; k < 8; k++)
            need += q->cw[k] * s_m0(self, t, node[c], c, k);
        int lv = 0;
        float rate = 1;
        while (rate < need && lv < q->cap_level) {
            rate *= 2;
            lv++;
        }
        self->own[c] = (uint8_t)lv;
        self->limit[c] = need; /* S_c, until the level is known */
        top = lv > top ? lv : top;
    }
    for (size_t c = 0; c < t->n; c++) {
        if (!(node[c] & TB_NODE_SOLVED))
            continue;
        uint8_t lv = (uint8_t)top;
        if (bound == TB_HILLSLOPE_BOUND_CELL) {
            lv = self->own[c];
            for (int k = 0; k < 8; k++) {
                uint8_t o = self->own[tb_topo_nb(t, node[c], c, k)];
                lv = o > lv ? o : lv;
            }
        }
        float rate = (float)(1 << lv), need = self->limit[c];
        self->level[c] = lv;
        self->limit[c] = need > rate ? rate / need : 1;
    }
    int most = 0;
    for (size_t c = 0; c < t->n; c++) {
        if (!(node[c] & TB_NODE_SOLVED))
            continue;
        uint8_t lv = self->level[c];
        for (int k = 0; k < 8; k++) {
            uint8_t o = self->level[tb_topo_nb(t, node[c], c, k)];
            lv = o > lv ? o : lv;
        }
        self->touch[c] = lv;
        most = lv > most ? lv : most;
    }
    return most;
}

/* The weight of the face between c and n (direction k from c) at a firing: its share of the
 * step, times M of the drop now, but never above the weight at the start of the step, which is
 * what the rates were chosen for - so every firing is a convex combination at every cell. */
static inline float s_weight(const tb_hillslope_t *self, const s_consts_t *q, size_t c, size_t n,
                             int k, float m_start, float d, int first)
{
    uint8_t lf = self->level[c] > self->level[n] ? self->level[c] : self->level[n];
    float lim = self->limit[c] < self->limit[n] ? self->limit[c] : self->limit[n];
    float base = q->cw[k] * lim * s_inv_rate[lf];
    if (first)
        return base * m_start;
    float now = s_m(q, d, k);
    return base * (now < m_start ? now : m_start);
}

/* A dense Jacobi pass over the whole box for the firing whose level threshold is lr (0: the first
 * firing, every face). Row-lagged: the fluxes of row j read rows j and j+1 before row j moves. */
static void s_dense(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                    const s_consts_t *q, int lr)
{
    int64_t w = t->w;
    int first = lr == 0;
    for (int64_t j = 0; j < t->h - 1; j++) {
        size_t row = (size_t)j * (size_t)w;
        float **fx = self->flux[j & 1], **below = self->flux[(j - 1) & 1];
        for (int64_t i = 0; i < w; i++) {
            size_t c = row + (size_t)i;
            const ptrdiff_t *off = s_off(t, i);
            for (int f = 0; f < 4; f++) {
                int k = f + 4;
                int64_t ni = i + tb_nb_dx[k];
                fx[f][i] = 0;
                if (!t->wraps && (ni < 0 || ni >= w))
                    continue;
                size_t n = (size_t)((ptrdiff_t)c + off[k]);
                if (!((node[c] | node[n]) & TB_NODE_SOLVED))
                    continue;
                uint8_t lf = self->level[c] > self->level[n] ? self->level[c] : self->level[n];
                if (lf < lr)
                    continue;
                float d = h[n] - h[c];
                fx[f][i] = s_weight(self, q, c, n, k, self->m0[f][c], d, first) * d;
            }
        }
        if (j == 0)
            continue;
        /* Row j: forward faces from fx, backward ones from row j-1's (below) and from the west
         * neighbour's E face, in neighbour order 0..7. */
        for (int64_t i = 0; i < w; i++) {
            size_t c = row + (size_t)i;
            if (!(node[c] & TB_NODE_SOLVED))
                continue;
            int64_t iw = i == 0 ? w - 1 : i - 1, ie = i == w - 1 ? 0 : i + 1;
            float sum = 0;
            sum -= below[3][ie]; /* 0 SW: the NE face of the SW neighbour (column i-1) */
            sum -= below[2][i];  /* 1 S */
            sum -= below[1][iw]; /* 2 SE: the NW face of the SE neighbour (column i+1) */
            sum -= fx[0][iw];    /* 3 W: the E face of the W neighbour */
            sum += fx[0][i];     /* 4 E */
            sum += fx[1][i];     /* 5 NW */
            sum += fx[2][i];     /* 6 N */
            sum += fx[3][i];     /* 7 NE */
            h[c] += sum;
        }
    }
}

/* A sparse Jacobi pass over the listed cells whose touch reaches lr. */
static void s_sparse(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                     const s_consts_t *q, int lr, size_t active)
{
    for (size_t a = 0; a < active; a++) {
        size_t c = (size_t)self->list[a];
        float hc = h[c], sum = 0;
        for (int k = 0; k < 8; k++) {
            size_t n = tb_topo_nb(t, node[c], c, k);
            uint8_t lf = self->level[c] > self->level[n] ? self->level[c] : self->level[n];
            if (lf < lr)
                continue;
            float d = h[n] - hc;
            sum += s_weight(self, q, c, n, k, s_m0(self, t, node[c], c, k), d, 0) * d;
        }
        self->next[a] = hc + sum;
    }
    for (size_t a = 0; a < active; a++)
        h[self->list[a]] = self->next[a];
}

int tb_hillslope_diffuse_nonlinear(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
                                   const tb_hillslope_params_t *p, float *h,
                                   tb_hillslope_stats_t *stats, tb_err_t *err)
{
    (void)err;
    if (!(p->diffusion_m2_yr > 0))
        return 0;
    s_consts_t q;
    double coeff = p->diffusion_m2_yr * p->dt_yr / (t->cell_m * t->cell_m);
    for (int k = 0; k < 8; k++) {
        q.cw[k] = (float)(coeff * (tb_nb_is_diagonal(k) ? 1.0 / 6 : 4.0 / 6));
        double crit = p->critical_slope * t->len_m[k];
        q.inv_crit2[k] = (float)(1 / (crit * crit));
    }
    q.cap_level = 0;
    while (q.cap_level < S_MAX_LEVEL && (2 << q.cap_level) <= p->max_substeps)
        q.cap_level++;

    s_faces(self, t, h, &q);
    int top = s_levels(self, t, node, &q, p->bound);
    /* Cells touched at each level (a histogram of touch), and the list of those above level 1,
     * highest first, raster order within a level. */
    size_t at[S_MAX_LEVEL + 2] = {0}, upto[S_MAX_LEVEL + 2] = {0}, solved = 0;
    for (size_t c = 0; c < t->n; c++)
        if (node[c] & TB_NODE_SOLVED) {
            at[self->touch[c]]++;
            solved++;
        }
    for (int L = S_MAX_LEVEL; L >= 0; L--)
        upto[L] = upto[L + 1] + at[L];
    size_t fill[S_MAX_LEVEL + 1];
    for (int L = 0; L <= S_MAX_LEVEL; L++)
        fill[L] = upto[L + 1];
    for (size_t c = 0; c < t->n; c++)
        if ((node[c] & TB_NODE_SOLVED) && self->touch[c] >= 2)
            self->list[fill[self->touch[c]]++] = (int32_t)c;

    int64_t updates = 0;
    int64_t times = (int64_t)1 << top;
    for (int64_t s = 0; s < times; s++) {
        int lr = s == 0 ? 0 : top - __builtin_ctzll((unsigned long long)s);
        size_t active = upto[lr > 0 ? lr : 0];
        if (lr <= 1 || active * 4 > solved) {
            s_dense(self, t, node, h, &q, lr);
            updates += (int64_t)solved;
        } else {
            s_sparse(self, t, node, h, &q, lr, active);
            updates += (int64_t)active;
        }
    }
    if (stats) {
        stats->cell_updates += updates;
        if ((1 << top) > stats->max_rate)
            stats->max_rate = 1 << top;
    }
    return 0;
}
