/* MFD accumulation in Kahn order and D8 accumulation along the stack; see accumulation.h. */
#include "jobs/geology/accumulation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_DONE 0xff        /* processed, partition by exponent */
#define S_DONE_LINEAR 0xfe /* processed, every exponent weight underflowed: partition by drop */

struct tb_accum_t {
    uint8_t *pending; /* strictly higher solved neighbours not yet processed; S_DONE* once done */
    int32_t *chase;   /* released cells waiting, depth-first */
    float *q;         /* A / W of processed cells: area per unit of partition weight; 0 on
                       * fixed cells (tb_accum_prepare) */
    int32_t *row;     /* one row of counts */
    int32_t *list[4]; /* row-sized lists: peaks of this row and the next, releases into the next */
};

tb_accum_t *tb_accum_new(size_t cells, int64_t w, tb_err_t *err)
{
    tb_accum_t *self = tb_calloc(1, sizeof *self, "accumulation workspace", err);
    if (!self)
        return NULL;
    self->pending = tb_calloc(cells, 1, "accumulation counters", err);
    self->chase = self->pending ? tb_malloc(cells * sizeof(int32_t), "accumulation queue", err) : NULL;
    self->q = self->chase ? tb_calloc(cells, sizeof(float), "accumulation partition", err) : NULL;
    self->row = self->q ? tb_calloc((size_t)w, sizeof(int32_t), "accumulation row", err) : NULL;
    for (int l = 0; l < 4 && self->row; l++)
        if (!(self->list[l] = tb_malloc((size_t)w * sizeof(int32_t), "accumulation list", err)))
            self->row = NULL; /* flag the failure; freed below with the rest */
    if (!self->row || !self->list[3]) {
        tb_accum_destroy(&self);
        return NULL;
    }
    return self;
}

void tb_accum_destroy(tb_accum_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free((*self_p)->pending);
    free((*self_p)->chase);
    free((*self_p)->q);
    free((*self_p)->row);
    for (int l = 0; l < 4; l++)
        free((*self_p)->list[l]);
    free(*self_p);
    *self_p = NULL;
}

void tb_accum_prepare(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node)
{
    for (size_t c = 0; c < t->n; c++)
        if (!(node[c] & TB_NODE_SOLVED))
            self->q[c] = 0;
}

size_t tb_accum_coast(const tb_topo_t *t, const uint8_t *node, int32_t *coast)
{
    size_t n = 0;
    for (int64_t j = 0; j < t->h; j++)
        for (int64_t i = 0; i < t->w; i++) {
            size_t c = tb_idx(t->w, i, j);
            if (node[c] & TB_NODE_SOLVED)
                continue;
            for (int k = 0; k < 8; k++) {
                int64_t nb = tb_topo_nb_checked(t, i, j, k);
                if (nb >= 0 && (node[nb] & TB_NODE_SOLVED)) {
                    coast[n++] = (int32_t)c;
                    break;
                }
            }
        }
    return n;
}

/* Quinn's contour length over the distance, in cells: the p = 1 weight is drop * s_cw[k]. */
static const float s_cw[8] = {0.25f, 0.5f, 0.25f, 0.5f, 0.5f, 0.25f, 0.5f, 0.25f};

/* Drops below this (metres) weigh as this: a cell one float step above the sea has a denormal drop
 * whose weight would round to zero and whose A / W would overflow. Only cells within 1e-20 m of
 * sea level ever see it. */
#define S_MIN_DROP 1e-20f

typedef struct {
    float exponent;
    int linear;       /* exponent == 1: no pow */
    float inv_dist[8];
    float contour[8]; /* L_k in cells */
} s_weights_t;

/* The partition weight of a drop (metres, > 0) towards neighbour direction k. Both ends of a link
 * evaluate it from the same float drop, so the sender's W and the receiver's pull agree bit for
 * bit. mode S_DONE_LINEAR is the fallback for exponents so high that every weight underflowed. */
static inline float s_weight(const s_weights_t *wt, float drop, int k, uint8_t mode)
{
    drop = drop > S_MIN_DROP ? drop : S_MIN_DROP;
    if (wt->linear || mode == S_DONE_LINEAR)
        return drop * s_cw[k];
    return powf(drop * wt->inv_dist[k], wt->exponent) * wt->contour[k];
}

/* The sum of eight floats in one fixed order: lanes k and k + 4 first, then (0 + 2) + (1 + 3). */
static inline float s_tree(const float v[8])
{
    float p0 = v[0] + v[4], p1 = v[1] + v[5], p2 = v[2] + v[6], p3 = v[3] + v[7];
    return (p0 + p2) + (p1 + p3);
}

/* Processes solved cell c whose higher neighbours are all done and appends it to order when that is
 * not NULL. A lower neighbour it releases is chased (pushed) when its index is below limit (rows up
 * to the current one) and appended to later otherwise (the next row). Fixed neighbours need no
 * test: their q is 0 (tb_accum_prepare), and their counter starts at 0 so a decrement wraps it far
 * from 0. Returns 1 when c had nowhere to send its area. */
static inline int s_process(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node,
                            const float *h, const s_weights_t *wt, size_t c, size_t limit,
                            float *area, size_t *top, int32_t *later, size_t *nlater,
                            int32_t *order, size_t *norder)
{
    const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
    float hc = h[c], a = (float)t->cell_area_m2, wsum = 0;
    unsigned lower = 0;
    if (order)
        order[(*norder)++] = (int32_t)c;
    if (wt->linear) {
        /* p = 1, branch-free: higher and lower neighbours are data, not a branch to predict. The
         * same operations as s_weight: the drop (exact either way round), floored, times L_k.
         * Lane-wise over the eight neighbours, then summed in one fixed tree (s_tree), the same
         * for every cell, so the compiler can vectorise it and the bits do not depend on the box. */
        float hn[8], qn[8], pull[8], wd[8];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            hn[k] = h[n];
            qn[k] = self->q[n];
        }
        for (int k = 0; k < 8; k++) {
            float up = hn[k] - hc, dn = hc - hn[k];
            float wu = (up > S_MIN_DROP ? up : S_MIN_DROP) * s_cw[k];
            float wdk = (dn > S_MIN_DROP ? dn : S_MIN_DROP) * s_cw[k];
            float pk = qn[k] * wu;
            pull[k] = hn[k] > hc ? pk : 0.0f;
            wd[k] = hn[k] < hc ? wdk : 0.0f;
        }
        for (int k = 0; k < 8; k++)
            lower |= (unsigned)(hn[k] < hc) << k;
        a += s_tree(pull);
        wsum = s_tree(wd);
    } else {
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            float hn = h[n];
            if (hn > hc) {
                a += self->q[n] * s_weight(wt, hn - hc, 7 - k, self->pending[n]);
            } else if (hn < hc) {
                wsum += s_weight(wt, hc - hn, k, S_DONE);
                lower |= 1u << k;
            }
        }
    }
    uint8_t mode = S_DONE;
    if (!(wsum > 0) && lower) {
        mode = S_DONE_LINEAR;
        for (int k = 0; k < 8; k++)
            if (lower & (1u << k))
                wsum += s_weight(wt, hc - h[(ptrdiff_t)c + off[k]], k, mode);
    }
    area[c] = a;
    self->q[c] = wsum > 0 ? a / wsum : 0;
    self->pending[c] = mode; /* done, and how it split: the raster scan skips it */
    while (lower) {
        int k = __builtin_ctz(lower);
        lower &= lower - 1;
        size_t n = (size_t)((ptrdiff_t)c + off[k]);
        if (--self->pending[n] == 0) {
            if (n < limit)
                self->chase[(*top)++] = (int32_t)n;
            else
                later[(*nlater)++] = (int32_t)n;
        }
    }
    return wsum > 0 ? 0 : 1;
}

/* Lists, branch-free, the solved cells of row j whose counter is 0; returns how many. */
static size_t s_peaks(const tb_accum_t *self, const uint8_t *node, size_t w, int64_t j,
                      int32_t *out)
{
    size_t row = (size_t)j * w, n = 0;
    for (size_t i = 0; i < w; i++) {
        size_t c = row + i;
        out[n] = (int32_t)c;
        n += (size_t)((node[c] & TB_NODE_SOLVED) && self->pending[c] == 0);
    }
    return n;
}

/* The release count of solved cell c: its strictly higher solved neighbours. */
static inline uint8_t s_count(const tb_topo_t *t, const uint8_t *node, const float *h, size_t c)
{
    const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
    uint8_t up = 0;
    for (int k = 0; k < 8; k++) {
        size_t n = (size_t)((ptrdiff_t)c + off[k]);
        up += (uint8_t)((node[n] & TB_NODE_SOLVED) && h[n] > h[c]);
    }
    return up;
}

size_t tb_accum_mfd_kahn(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                         double exponent, const int32_t *coast, size_t ncoast, float *area_m2,
                         int32_t *order)
{
    s_weights_t wt = {(float)exponent, exponent == 1, {0}, {0}};
    for (int k = 0; k < 8; k++) {
        wt.inv_dist[k] = (float)(1 / tb_nb_dist[k]);
        wt.contour[k] = tb_nb_is_diagonal(k) ? (float)(sqrt(2.0) / 4) : 0.5f;
    }
    /* Release counts (strictly higher solved neighbours); fixed cells get 0 every step, because
     * decrements wrap their counters. Inner columns have one offset per direction, so the count
     * vectorises. */
    int64_t w = t->w;
    const ptrdiff_t W = (ptrdiff_t)w;
    size_t last = (size_t)(t->h - 1) * (size_t)w;
    memset(self->pending, 0, (size_t)w);
    memset(self->pending + last, 0, (size_t)w);
    for (int64_t j = 1; j < t->h - 1; j++) {
        size_t row = (size_t)j * (size_t)w;
        const uint8_t *restrict nd = node + row;
        const float *restrict hr = h + row;
        uint8_t *restrict pend = self->pending + row;
        /* Floats only: every higher neighbour counts. A fixed neighbour (0 m) can only be higher
         * than a solved cell below sea level, which is recounted below. */
        int32_t *restrict cnt = self->row;
        for (int64_t i = 1; i < w - 1; i++) {
            float hc = hr[i];
            cnt[i] = (hr[i - W - 1] > hc) + (hr[i - W] > hc) + (hr[i - W + 1] > hc) +
                     (hr[i - 1] > hc) + (hr[i + 1] > hc) + (hr[i + W - 1] > hc) +
                     (hr[i + W] > hc) + (hr[i + W + 1] > hc);
        }
        for (int64_t i = 1; i < w - 1; i++)
            pend[i] = (uint8_t)(cnt[i] * (nd[i] & TB_NODE_SOLVED));
        for (int64_t i = 1; i < w - 1; i++)
            if ((nd[i] & TB_NODE_SOLVED) && hr[i] < 0)
                pend[i] = s_count(t, node, h, row + (size_t)i);
        for (int64_t i = 0; i < w; i += w - 1)
            pend[i] = (nd[i] & TB_NODE_SOLVED) ? s_count(t, node, h, row + (size_t)i) : 0;
    }
    /* Row by row. The cells of row j that start with nothing above them were listed before row
     * j - 1 released any of its cells; a release in a row up to j is chased at once (depth-first,
     * it is near), one in row j + 1 waits for that row. Any order with every cell after its higher
     * neighbours gives the same areas; this one keeps the walk within a few rows in memory. */
    size_t stuck = 0, norder = 0, npeak = 0, nnext = 0;
    int32_t *peak = self->list[0], *peak_next = self->list[1], *next = self->list[2];
    int32_t *next_new = self->list[3];
    for (int64_t j = 1; j < t->h - 1; j++) {
        if (j == 1)
            npeak = s_peaks(self, node, (size_t)w, 1, peak);
        size_t npeak_next = j + 1 < t->h - 1 ? s_peaks(self, node, (size_t)w, j + 1, peak_next) : 0;
        size_t limit = (size_t)(j + 1) * (size_t)w, top = 0, nnew = 0;
        for (size_t s = 0; s < nnext; s++)
            self->chase[top++] = next[s];
        for (size_t s = 0; s < npeak; s++)
            self->chase[top++] = peak[s];
        while (top > 0) {
            size_t c = (size_t)self->chase[--top];
            stuck += (size_t)s_process(self, t, node, h, &wt, c, limit, area_m2, &top, next_new,
                                       &nnew, order, &norder);
        }
        int32_t *swap = peak;
        peak = peak_next;
        peak_next = swap;
        npeak = npeak_next;
        swap = next;
        next = next_new;
        next_new = swap;
        nnext = nnew;
    }
    /* The sea's share, gathered in neighbour order. */
    for (size_t s = 0; s < ncoast; s++) {
        size_t f = (size_t)coast[s];
        int64_t i = (int64_t)(f % (size_t)t->w), j = (int64_t)(f / (size_t)t->w);
        float hf = h[f], a = 0;
        for (int k = 0; k < 8; k++) {
            int64_t n = tb_topo_nb_checked(t, i, j, k);
            if (n >= 0 && (node[n] & TB_NODE_SOLVED) && h[n] > hf)
                a += self->q[n] * s_weight(&wt, h[n] - hf, 7 - k, self->pending[n]);
        }
        area_m2[f] = a;
    }
    return stuck;
}

void tb_accum_d8_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                       const tb_stack_t *stack, const int32_t *coast, size_t ncoast,
                       float *area_m2)
{
    float cell = (float)t->cell_area_m2;
    for (size_t s = 0; s < stack->count; s++)
        area_m2[stack->order[s]] = cell;
    for (size_t s = stack->count; s-- > 0;) {
        size_t c = (size_t)stack->order[s];
        size_t r = tb_topo_nb(t, node[c], c, dir[c]);
        if (node[r] & TB_NODE_SOLVED)
            area_m2[r] += area_m2[c];
    }
    for (size_t s = 0; s < ncoast; s++) {
        size_t f = (size_t)coast[s];
        int64_t i = (int64_t)(f % (size_t)t->w), j = (int64_t)(f / (size_t)t->w);
        float a = 0;
        for (int k = 0; k < 8; k++) {
            int64_t n = tb_topo_nb_checked(t, i, j, k);
            if (n >= 0 && (node[n] & TB_NODE_SOLVED) && dir[n] == 7 - k)
                a += area_m2[n];
        }
        area_m2[f] = a;
    }
}
