/* Nonlinear hillslope diffusion with per-cell power-of-two sub-step rates; see hillslope.h. */
#include "jobs/geology/hillslope.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_LEVEL 10 /* rates up to 1024, the manifest's cap on max_hillslope_substeps */
#define S_R2_CAP (0.99f * 0.99f)

/* A cell that takes part in more than the first sub-step: its faces' levels and weights. */
typedef struct {
    int32_t c;
    uint8_t level;    /* highest face level: the cell is updated at every time of this rate */
    uint8_t face[8];  /* level of each face: max of the two cells' levels */
    float base[8];    /* coeff * w_k * limiter / face rate: the weight is base * M(current drop) */
    float cap[8];     /* the weight at the start of the step, which the rates were chosen for */
} s_multi_t;

struct tb_hillslope_t {
    uint8_t *own;   /* log2 of the rate each cell's own faces need */
    uint8_t *level; /* log2 of each cell's rate: the highest own level in its 3 x 3; fixed 0 */
    float *limit;   /* 1, or n_c / S_c when the cap cut the rate short */
    float *row[2];  /* event 0 writes through two row buffers (rows j-1 and j) */
    s_multi_t *multi;
    int32_t *order; /* multi sorted by level, highest first */
    float *next;    /* Jacobi buffer for the later events */
    size_t cap;
};

tb_hillslope_t *tb_hillslope_new(size_t cells, int64_t w, tb_err_t *err)
{
    tb_hillslope_t *self = tb_calloc(1, sizeof *self, "hillslope workspace", err);
    if (!self)
        return NULL;
    self->own = tb_calloc(cells, 1, "hillslope levels", err);
    self->level = self->own ? tb_calloc(cells, 1, "hillslope levels", err) : NULL;
    self->limit = self->level ? tb_malloc(cells * sizeof(float), "hillslope limiters", err) : NULL;
    self->row[0] = self->limit ? tb_malloc((size_t)w * sizeof(float), "hillslope row", err) : NULL;
    self->row[1] = self->row[0] ? tb_malloc((size_t)w * sizeof(float), "hillslope row", err) : NULL;
    if (!self->row[1]) {
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
    free(self->limit);
    free(self->row[0]);
    free(self->row[1]);
    free(self->multi);
    free(self->order);
    free(self->next);
    free(self);
    *self_p = NULL;
}

static int s_reserve(tb_hillslope_t *self, size_t need, tb_err_t *err)
{
    if (need <= self->cap)
        return 0;
    size_t cap = self->cap ? self->cap : 4096;
    while (cap < need)
        cap *= 2;
    s_multi_t *m = realloc(self->multi, cap * sizeof *m);
    if (m)
        self->multi = m;
    int32_t *o = m ? realloc(self->order, cap * sizeof *o) : NULL;
    if (o)
        self->order = o;
    float *n = o ? realloc(self->next, cap * sizeof *n) : NULL;
    if (!n)
        return tb_err_set(err, TB_E_NOMEM, "hillslope: cannot grow the multi-rate list to %zu cells",
                          cap);
    self->next = n;
    self->cap = cap;
    return 0;
}

typedef struct {
    float cw[8];        /* coeff * w_k */
    float inv_crit2[8]; /* 1 / (Sc dx dist_k)^2 */
    int cap_level;
} s_consts_t;

/* M_k of a drop: 1 / (1 - r^2), r capped. Both cells of a face compute it from the same |drop|. */
static inline float s_m(const s_consts_t *k8, float d, int k)
{
    float r2 = d * d * k8->inv_crit2[k];
    return 1.0f / (1.0f - (r2 < S_R2_CAP ? r2 : S_R2_CAP));
}

/* Pass A: each solved cell's need S_c = sum coeff w_k M_k and the level it alone would take; then
 * the level used is the highest in the cell's solved 3 x 3 (a dilation, see hillslope.h), and the
 * limiter scales the faces down where even the capped rate falls short. Returns the highest level. */
static int s_levels(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                    const s_consts_t *k8, tb_hillslope_bound_t bound)
{
    int top = 0;
    for (size_t c = 0; c < t->n; c++) {
        self->level[c] = 0;
        self->own[c] = 0;
        self->limit[c] = 1;
    }
    if (bound == TB_HILLSLOPE_BOUND_ONE)
        return 0;
    for (int64_t j = 1; j < t->h - 1; j++) {
        size_t row = (size_t)j * (size_t)t->w;
        for (int64_t i = 0; i < t->w; i++) {
            size_t c = row + (size_t)i;
            if (!(node[c] & TB_NODE_SOLVED))
                continue;
            const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
            float hc = h[c], need = 0;
            for (int k = 0; k < 8; k++)
                need += k8->cw[k] * s_m(k8, h[(ptrdiff_t)c + off[k]] - hc, k);
            int lv = 0;
            float rate = 1;
            while (rate < need && lv < k8->cap_level) {
                rate *= 2;
                lv++;
            }
            self->own[c] = (uint8_t)lv;
            self->limit[c] = need; /* S_c, until the level is known */
            top = lv > top ? lv : top;
        }
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
    return top;
}

/* Event 0: every face fires once with 1/n_f of its weight; rows go through two buffers so the
 * update is Jacobi in place. Cells with a face above level 0 are listed with their weights. */
static int s_first(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                   const s_consts_t *k8, size_t *nmulti, tb_err_t *err)
{
    static const float inv_rate[S_MAX_LEVEL + 1] = {1.f,        0.5f,        0.25f,      0.125f,
                                                    0.0625f,    0.03125f,    0.015625f,  0.0078125f,
                                                    0.00390625f, 0.001953125f, 0.0009765625f};
    size_t w = (size_t)t->w, count = 0;
    for (int64_t j = 1; j < t->h - 1; j++) {
        size_t row = (size_t)j * w;
        float *out = self->row[j & 1];
        for (int64_t i = 0; i < t->w; i++) {
            size_t c = row + (size_t)i;
            float hc = h[c];
            if (!(node[c] & TB_NODE_SOLVED)) {
                out[i] = hc;
                continue;
            }
            const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
            uint8_t lc = self->level[c], top = lc, face[8];
            float lim = self->limit[c], sum = 0, base[8], cap[8];
            for (int k = 0; k < 8; k++) {
                size_t n = (size_t)((ptrdiff_t)c + off[k]);
                float d = h[n] - hc;
                uint8_t ln = self->level[n], lf = ln > lc ? ln : lc;
                float ll = self->limit[n] < lim ? self->limit[n] : lim;
                float bk = k8->cw[k] * ll * inv_rate[lf], wk = bk * s_m(k8, d, k);
                sum += wk * d;
                face[k] = lf;
                base[k] = bk;
                cap[k] = wk;
                if (ln > top)
                    top = ln;
            }
            out[i] = hc + sum;
            if (top > 0) {
                if (s_reserve(self, count + 1, err) != 0)
                    return -1;
                s_multi_t *m = &self->multi[count++];
                m->c = (int32_t)c;
                m->level = top;
                memcpy(m->face, face, sizeof face);
                memcpy(m->base, base, sizeof base);
                memcpy(m->cap, cap, sizeof cap);
            }
        }
        if (j > 1)
            memcpy(h + row - w, self->row[(j - 1) & 1], w * sizeof(float));
    }
    size_t last = (size_t)(t->h - 2) * w;
    memcpy(h + last, self->row[(t->h - 2) & 1], w * sizeof(float));
    *nmulti = count;
    return 0;
}

int tb_hillslope_diffuse_nonlinear(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
                                   const tb_hillslope_params_t *p, float *h,
                                   tb_hillslope_stats_t *stats, tb_err_t *err)
{
    if (!(p->diffusion_m2_yr > 0))
        return 0;
    s_consts_t k8;
    double coeff = p->diffusion_m2_yr * p->dt_yr / (t->cell_m * t->cell_m);
    for (int k = 0; k < 8; k++) {
        k8.cw[k] = (float)(coeff * (tb_nb_is_diagonal(k) ? 1.0 / 6 : 4.0 / 6));
        double crit = p->critical_slope * t->len_m[k];
        k8.inv_crit2[k] = (float)(1 / (crit * crit));
    }
    k8.cap_level = 0;
    while (k8.cap_level < S_MAX_LEVEL && (2 << k8.cap_level) <= p->max_substeps)
        k8.cap_level++;

    s_levels(self, t, node, h, &k8, p->bound);
    size_t nmulti = 0;
    if (s_first(self, t, node, h, &k8, &nmulti, err) != 0)
        return -1;
    int64_t updates = 0;
    for (size_t c = 0; c < t->n; c++)
        updates += node[c] & TB_NODE_SOLVED;

    /* Later events: sort the multi-rate cells by level, highest first (stable: raster order within
     * a level), so the cells active at a time are a prefix. */
    size_t first_at[S_MAX_LEVEL + 2] = {0};
    int top = 0;
    for (size_t s = 0; s < nmulti; s++) {
        first_at[self->multi[s].level]++;
        if (self->multi[s].level > top)
            top = self->multi[s].level;
    }
    size_t upto[S_MAX_LEVEL + 2] = {0}; /* upto[L]: cells with level >= L */
    for (int L = S_MAX_LEVEL; L >= 0; L--)
        upto[L] = upto[L + 1] + first_at[L];
    size_t fill[S_MAX_LEVEL + 1];
    for (int L = 0; L <= S_MAX_LEVEL; L++)
        fill[L] = upto[L + 1];
    for (size_t s = 0; s < nmulti; s++)
        self->order[fill[self->multi[s].level]++] = (int32_t)s;

    int64_t times = (int64_t)1 << top;
    for (int64_t s = 1; s < times; s++) {
        int lr = top - __builtin_ctzll((unsigned long long)s);
        size_t active = upto[lr];
        for (size_t a = 0; a < active; a++) {
            const s_multi_t *m = &self->multi[self->order[a]];
            size_t c = (size_t)m->c;
            const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
            float hc = h[c], sum = 0;
            for (int k = 0; k < 8; k++)
                if (m->face[k] >= lr) {
                    /* M from the drop now, so a face that has relaxed stops pulling; never above
                     * the start's weight, so every firing stays a convex combination. */
                    float d = h[(ptrdiff_t)c + off[k]] - hc, wk = m->base[k] * s_m(&k8, d, k);
                    sum += (wk < m->cap[k] ? wk : m->cap[k]) * d;
                }
            self->next[a] = hc + sum;
        }
        for (size_t a = 0; a < active; a++)
            h[self->multi[self->order[a]].c] = self->next[a];
        updates += (int64_t)active;
    }
    if (stats) {
        stats->cell_updates += updates;
        if ((1 << top) > stats->max_rate)
            stats->max_rate = 1 << top;
    }
    return 0;
}
