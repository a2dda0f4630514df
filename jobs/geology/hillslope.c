/* Nonlinear hillslope diffusion with per-cell power-of-two sub-step rates; see hillslope.h.
 *
 * Layout: faces are stored once, by the cell below/left of them: each cell owns its four "forward"
 * faces E, NW, N, NE (tb_nb 4..7); its backward faces W, SE, S, SW (3..0) are the forward faces of
 * those neighbours (slot 7 - k). A step is:
 *   A. a copy of the heights at the step's start (M at the start of a face is recomputed from it
 *      where a firing needs it: the same float operations on the same drops, so the same bits as
 *      storing four M arrays, at a quarter of their memory and none of their traffic);
 *   B. each cell's need S_c = sum over its eight faces of coeff w_k M_k, and its own level
 *      (fused with A: one pass over the heights);
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

#include "common/simd.h"

#define S_MAX_LEVEL 10 /* rates up to 1024, the manifest's cap on max_hillslope_substeps */
#define S_R2_CAP (0.99f * 0.99f)

static const float s_rate[S_MAX_LEVEL + 1] = {1.f,  2.f,   4.f,   8.f,   16.f,  32.f,
                                              64.f, 128.f, 256.f, 512.f, 1024.f};
static const float s_inv_rate[S_MAX_LEVEL + 1] = {
    1.f,       0.5f,       0.25f,       0.125f,       0.0625f,      0.03125f,
    0.015625f, 0.0078125f, 0.00390625f, 0.001953125f, 0.0009765625f};

struct tb_hillslope_t {
    size_t cells;
    int64_t w;
    uint8_t *own;    /* log2 of the rate each cell's own faces need */
    uint8_t *level;  /* log2 of each cell's rate: the highest own level in its 3 x 3; fixed 0 */
    uint8_t *touch;  /* highest level of any face of the cell (its level and its neighbours') */
    float *limit;    /* 1, or rate / S_c where even the capped rate falls short */
    float *rinv;     /* 1 / rate: a face fires at the faster cell's rate, min of the two */
    float *h0;       /* the heights at the start of the step (M at the start is a function of
                      * them) */
    float *flux_mem; /* row buffers of forward-face fluxes for the dense passes: per band two
                      * rows of four faces, and one row of four faces per band boundary */
    int flux_bands;  /* bands flux_mem has room for */
    int32_t *list;   /* cells with a face above level 1, highest touch first */
    int32_t *first, *last; /* per row and touch level: first and last column at that level */
    float *next;           /* Jacobi buffer of the sparse passes */
};

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
             (self->rinv = tb_malloc(cells * sizeof(float), "hillslope rates", err)) &&
             (self->list = tb_malloc(cells * sizeof(int32_t), "hillslope list", err)) &&
             (self->next = tb_malloc(cells * sizeof(float), "hillslope buffer", err)) &&
             (self->h0 = tb_calloc(cells, sizeof(float), "hillslope start heights", err)) &&
             (self->first = tb_malloc(cells / (size_t)w * (S_MAX_LEVEL + 1) * sizeof(int32_t),
                                      "hillslope spans", err)) &&
             (self->last = tb_malloc(cells / (size_t)w * (S_MAX_LEVEL + 1) * sizeof(int32_t),
                                     "hillslope spans", err));
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
    free(self->rinv);
    free(self->list);
    free(self->next);
    free(self->first);
    free(self->last);
    free(self->h0);
    free(self->flux_mem);
    free(self);
    *self_p = NULL;
}

typedef struct {
    float cw[8];        /* coeff * w_k */
    float inv_crit2[8]; /* 1 / (Sc dx dist_k)^2 */
    int cap_level;
    bool full_spans; /* tb_hillslope_params_t's */
} s_consts_t;

/* M of a drop d across a face whose 1 / (critical height)^2 is ic2: 1 / (1 - r^2), r capped. */
static inline float s_mk(float d, float ic2)
{
    float r2 = d * d * ic2;
    r2 = r2 < S_R2_CAP ? r2 : S_R2_CAP;
    return 1.0f / (1.0f - r2);
}

/* M of a drop d across a face of direction k. */
static inline float s_m(const s_consts_t *q, float d, int k)
{
    return s_mk(d, q->inv_crit2[k]);
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

/* M at the start for the face of solved cell c towards k, from the start heights h0: a forward
 * face (k >= 4) from its own drop, a backward one as its owner n computes it (n's forward face
 * 7 - k, whose far end is c), so both ends of a face see the same bits. */
static inline float s_m0(const s_consts_t *q, const tb_topo_t *t, const float *h0, uint8_t node_c,
                         size_t c, int k)
{
    size_t n = tb_topo_nb(t, node_c, c, k);
    if (k >= 4)
        return s_m(q, h0[n] - h0[c], k);
    return s_m(q, h0[c] - h0[n], 7 - k);
}

/* S_c of solved cell c (any column): coeff w_k M_k over its eight faces, in neighbour order. */
static inline float s_need(const tb_topo_t *t, const uint8_t *node, const float *h0,
                           const s_consts_t *q, size_t c)
{
    float need = 0;
    for (int k = 0; k < 8; k++)
        need += q->cw[k] * s_m0(q, t, h0, node[c], c, k);
    return need;
}

/* The smallest level L <= cap with 2^L >= need, branch-free. */
static inline uint8_t s_level_of(float need, int cap)
{
    /* A fixed trip count (the comparison is monotone in L, so capping after counting is the
     * same), so the row loops around it vectorise. */
    int lv = 0;
    for (int L = 0; L < S_MAX_LEVEL; L++)
        lv += need > s_rate[L];
    return (uint8_t)(lv < cap ? lv : cap);
}

/* The highest value of v over cell c's 3 x 3 (any column). */
static inline uint8_t s_max9(const tb_topo_t *t, const uint8_t *node, const uint8_t *v, size_t c)
{
    uint8_t m = v[c];
    for (int k = 0; k < 8; k++) {
        uint8_t o = v[tb_topo_nb(t, node[c], c, k)];
        m = o > m ? o : m;
    }
    return m;
}

static inline uint8_t s_max2(uint8_t a, uint8_t b)
{
    return a > b ? a : b;
}

/* The same for column i of a row (dn, mid and up: the rows below, at and above), written out on
 * row pointers so the row loops around it vectorise. */
static inline uint8_t s_max9_rows(const uint8_t *restrict dn, const uint8_t *restrict mid,
                                  const uint8_t *restrict up, int64_t i)
{
    uint8_t a = s_max2(s_max2(dn[i - 1], dn[i]), dn[i + 1]);
    uint8_t b = s_max2(s_max2(mid[i - 1], mid[i]), mid[i + 1]);
    uint8_t c = s_max2(s_max2(up[i - 1], up[i]), up[i + 1]);
    return s_max2(s_max2(a, b), c);
}

/* Sets the ring of the box (rows 0 and h-1, and columns 0 and w-1 unless it wraps) to the values a
 * fixed cell takes: level 0, no limiter, rate 1. */
static void s_ring(tb_hillslope_t *self, const tb_topo_t *t)
{
    int64_t w = t->w, hh = t->h;
    for (int64_t j = 0; j < hh; j++) {
        int ring_row = j == 0 || j == hh - 1;
        for (int64_t i = 0; i < w; i += ring_row || t->wraps ? 1 : w - 1) {
            if (!ring_row && t->wraps)
                break;
            size_t c = (size_t)j * (size_t)w + (size_t)i;
            self->own[c] = self->level[c] = self->touch[c] = 0;
            self->limit[c] = self->rinv[c] = 1;
        }
    }
}

/* B, C and the touch census, a band of rows [j0, j1) at a time; a section boundary between them
 * (each reads its predecessor's output in the rows either side). */

/* A and B: the start heights of rows [c0, c1) copied to h0, and each solved cell's need (kept in
 * limit for now) and own level in rows [j0, j1); returns the band's highest own level. Row loops
 * over the inner columns with fixed offsets; the first and last columns of a wrapping box go
 * through tb_topo_nb. h is the start of the step (nothing moves it before the firings). */
/* M of the forward faces E, NW, N, NE (into fm[0..3]) of row j's cells, every column whose face
 * has its far end in the box's memory at the plain offset (a wrapping box's seam faces are
 * recomputed where they are used). */
static inline __attribute__((always_inline)) void
s_forward_row(const float *h, int64_t w, int64_t j, const float ic2[8], float *const fm[4])
{
    const ptrdiff_t W = (ptrdiff_t)w;
    const float *restrict hc = h + (size_t)j * (size_t)w;
    /* A loop a face (one offset each), as the compiler vectorises them. */
    for (int f = 0; f < 4; f++) {
        const float *restrict hn = hc + tb_nb_dx[f + 4] + tb_nb_dy[f + 4] * W;
        float *restrict out = fm[f], ic = ic2[f + 4];
        for (int64_t i = 1; i < w - 1; i++)
            out[i] = s_mk(hn[i] - hc[i], ic);
    }
    fm[0][0] = s_mk(hc[1] - hc[0], ic2[4]);
    fm[3][0] = s_mk(hc[W + 1] - hc[0], ic2[7]);
    fm[1][w - 1] = s_mk(hc[W + w - 2] - hc[w - 1], ic2[5]);
}

static inline __attribute__((always_inline)) uint8_t
s_need_rows(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
            const s_consts_t *q, int cap, int64_t c0, int64_t c1, int64_t j0, int64_t j1,
            float *fbuf)
{
    int64_t w = t->w;
    uint8_t top = 0;
    float cw[8], ic2[8]; /* local copies: the byte stores below may alias anything */
    for (int k = 0; k < 8; k++) {
        cw[k] = q->cw[k];
        ic2[k] = q->inv_crit2[k];
    }
    memcpy(self->h0 + (size_t)c0 * (size_t)w, h + (size_t)c0 * (size_t)w,
           (size_t)(c1 - c0) * (size_t)w * sizeof(float));
    /* M of the forward faces a row at a time into two rows of buffers (the row below's are its
     * backward faces), each face once, in cache: the same values the cells at both ends see. */
    float *fm[2][4];
    for (int f = 0; f < 8; f++)
        fm[f / 4][f % 4] = fbuf + (size_t)f * (size_t)w;
    int cur = 0;
    s_forward_row(h, w, j0 - 1, ic2, fm[1]);
    for (int64_t j = j0; j < j1; j++, cur ^= 1) {
        size_t row = (size_t)j * (size_t)w;
        uint8_t *restrict own = self->own + row;
        float *restrict need_out = self->limit + row;
        const uint8_t *restrict nd = node + row;
        s_forward_row(h, w, j, ic2, fm[cur]);
        const float *restrict e = fm[cur][0], *restrict nw = fm[cur][1], *restrict n = fm[cur][2],
                              *restrict ne = fm[cur][3];
        const float *restrict b_nw = fm[cur ^ 1][1], *restrict b_n = fm[cur ^ 1][2],
                              *restrict b_ne = fm[cur ^ 1][3];
        /* Two loops without branches or mixed-width selects, so both vectorise: the needs, then
         * the levels (fixed cells: level 0, need 1). */
        for (int64_t i = 1; i < w - 1; i++) {
            float need = 0;
            need += cw[0] * b_ne[i - 1];
            need += cw[1] * b_n[i];
            need += cw[2] * b_nw[i + 1];
            need += cw[3] * e[i - 1];
            need += cw[4] * e[i];
            need += cw[5] * nw[i];
            need += cw[6] * n[i];
            need += cw[7] * ne[i];
            need_out[i] = need;
        }
        for (int64_t i = 1; i < w - 1; i++) {
            int is = nd[i] & TB_NODE_SOLVED;
            float need = need_out[i];
            int lv = 0;
            for (int L = 0; L < S_MAX_LEVEL; L++)
                lv += need > s_rate[L];
            lv = lv < cap ? lv : cap;
            own[i] = (uint8_t)(lv * is);
            need_out[i] = is ? need : 1.0f;
        }
        if (t->wraps)
            for (int64_t i = 0; i < w; i += w - 1) {
                size_t c = row + (size_t)i;
                int is = nd[i] & TB_NODE_SOLVED;
                float need = is ? s_need(t, node, h, q, c) : 1.0f;
                own[i] = is ? s_level_of(need, cap) : 0;
                need_out[i] = need;
            }
        for (int64_t i = 0; i < w; i++)
            top = own[i] > top ? own[i] : top;
    }
    return top;
}

/* C: the level used (the highest own level in the 3 x 3, or `box_top` for the BOX control), the
 * limiter and the inverse rate. Fixed cells get level 0, limiter 1, rate 1. */
static inline __attribute__((always_inline)) void
s_level_rows(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
             tb_hillslope_bound_t bound, uint8_t box_top, int64_t j0, int64_t j1)
{
    int64_t w = t->w;
    const ptrdiff_t W = (ptrdiff_t)w;
    int limited = bound != TB_HILLSLOPE_BOUND_ONE, box = bound == TB_HILLSLOPE_BOUND_BOX;
    for (int64_t j = j0; j < j1; j++) {
        size_t row = (size_t)j * (size_t)w;
        const uint8_t *restrict nd = node + row, *restrict own = self->own;
        uint8_t *restrict lvl = self->level + row;
        float *restrict lim = self->limit + row, *restrict ri = self->rinv + row;
        /* Vectorises: the rates 2^lv and 2^-lv are built from their exponent bits (exact), not
         * looked up. */
        const uint8_t *own_dn = own + row - W, *own_mid = own + row, *own_up = own + row + W;
        for (int64_t i = 1; i < w - 1; i++) {
            uint8_t lv = s_max9_rows(own_dn, own_mid, own_up, i);
            lv = box ? box_top : lv;
            lvl[i] = (uint8_t)(lv * (nd[i] & TB_NODE_SOLVED));
        }
        for (int64_t i = 1; i < w - 1; i++) {
            int32_t lv = lvl[i];
            uint32_t ub = (uint32_t)(127 + lv) << 23, ib = (uint32_t)(127 - lv) << 23;
            float need = lim[i], rate, inv;
            memcpy(&rate, &ub, sizeof rate);
            memcpy(&inv, &ib, sizeof inv);
            float part = rate / need; /* need > 0: every face weighs at least its coefficient */
            lim[i] = (need > rate) & limited ? part : 1.0f;
            ri[i] = inv;
        }
        if (t->wraps)
            for (int64_t i = 0; i < w; i += w - 1) {
                size_t c = row + (size_t)i;
                uint8_t lv = box ? box_top : s_max9(t, node, self->own, c);
                lv = (nd[i] & TB_NODE_SOLVED) ? lv : 0;
                float need = lim[i], rate = s_rate[lv];
                lvl[i] = lv;
                lim[i] = need > rate && limited ? rate / need : 1.0f;
                ri[i] = s_inv_rate[lv];
            }
    }
}

/* The touch level (the highest level among a cell's faces), the census the firing loop needs, and
 * per row the first and last column at each touch level (a firing of level L only has work
 * between those of the levels >= L); rows [i0, i1) get their spans reset, rows [j0, j1) are
 * counted. Returns the highest touch level; *solved and at[L] count the solved cells. */
static inline __attribute__((always_inline)) int
s_touch_rows(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, int64_t i0, int64_t i1,
             int64_t j0, int64_t j1, size_t *solved, size_t at[S_MAX_LEVEL + 2])
{
    int64_t w = t->w;
    const ptrdiff_t W = (ptrdiff_t)w;
    int most = 0;
    *solved = 0;
    for (int64_t j = i0; j < i1; j++)
        for (int L = 0; L <= S_MAX_LEVEL; L++) {
            self->first[j * (S_MAX_LEVEL + 1) + L] = (int32_t)w;
            self->last[j * (S_MAX_LEVEL + 1) + L] = -1;
        }
    int64_t i_lo = t->wraps ? 0 : 1, i_hi = t->wraps ? w : w - 1;
    for (int64_t j = j0; j < j1; j++) {
        size_t row = (size_t)j * (size_t)w;
        int32_t *first = self->first + j * (S_MAX_LEVEL + 1),
                *last = self->last + j * (S_MAX_LEVEL + 1);
        /* The touch levels, branch-free over the inner columns (it vectorises). */
        const uint8_t *restrict nd = node + row;
        uint8_t *restrict tr = self->touch + row;
        const uint8_t *lv_dn = self->level + row - W, *lv_mid = self->level + row,
                      *lv_up = self->level + row + W;
        for (int64_t i = 1; i < w - 1; i++) {
            uint8_t lv = s_max9_rows(lv_dn, lv_mid, lv_up, i);
            tr[i] = (uint8_t)(lv * (nd[i] & TB_NODE_SOLVED));
        }
        if (t->wraps)
            for (int64_t i = 0; i < w; i += w - 1)
                tr[i] =
                    (nd[i] & TB_NODE_SOLVED) ? s_max9(t, node, self->level, row + (size_t)i) : 0;
        /* The census: a row at one level (the common case) in one pass of reductions, on bytes
         * so that it vectorises (a fixed cell's touch is 0 above, so it never raises mx). */
        uint8_t mn = 255, mx = 0;
        uint32_t cnt = 0;
        for (int64_t i = i_lo; i < i_hi; i++) {
            uint8_t is = (uint8_t)((nd[i] & TB_NODE_SOLVED) != 0), v = tr[i];
            uint8_t a = v | (uint8_t)(is - 1); /* 255 where fixed */
            mn = a < mn ? a : mn;
            mx = v > mx ? v : mx;
            cnt += is;
        }
        if (cnt == 0)
            continue;
        *solved += cnt;
        most = mx > most ? mx : most;
        if (mn == mx) {
            int64_t fs = i_lo, ls = i_hi - 1;
            while (!(nd[fs] & TB_NODE_SOLVED))
                fs++;
            while (!(nd[ls] & TB_NODE_SOLVED))
                ls--;
            first[mn] = first[mn] < (int32_t)fs ? first[mn] : (int32_t)fs;
            last[mn] = last[mn] > (int32_t)ls ? last[mn] : (int32_t)ls;
            at[mn] += cnt;
            continue;
        }
        for (int64_t i = i_lo; i < i_hi; i++) {
            if (!(nd[i] & TB_NODE_SOLVED))
                continue;
            uint8_t lv = tr[i];
            first[lv] = first[lv] < (int32_t)i ? first[lv] : (int32_t)i;
            last[lv] = (int32_t)i;
            at[lv]++;
        }
    }
    return most;
}

/* The flux across the face from c to n (direction k, drop d_start at the start) at a firing of
 * level threshold with inverse rate thr (1 at the first firing): the face's share of the step (its
 * faster cell's 1/rate, the smaller limiter), times M of the drop now but never above M at the
 * start, which is what the rates were chosen for - so every firing is a convex combination at
 * every cell. Zero when the face does not fire at this time. */
static inline float s_flux(const tb_hillslope_t *self, const s_consts_t *q, size_t c, size_t n,
                           int k, float d_start, float hc, float hn, float thr)
{
    float d = hn - hc;
    float ri = self->rinv[c] < self->rinv[n] ? self->rinv[c] : self->rinv[n];
    float lim = self->limit[c] < self->limit[n] ? self->limit[c] : self->limit[n];
    /* min(M now, M at the start) as M of the smaller squared drop (s_row_fluxes); at the first
     * firing the two drops are one. A face's two directions have the same critical height. */
    float dd = d * d, dd0 = d_start * d_start;
    float r2 = (dd < dd0 ? dd : dd0) * q->inv_crit2[k];
    r2 = r2 < S_R2_CAP ? r2 : S_R2_CAP;
    float f = q->cw[k] * lim * ri * (1.0f / (1.0f - r2)) * d;
    return ri <= thr ? f : 0;
}

/* Columns a block of s_row_fluxes: 8 row stretches of 4 bytes, 8 KiB of L1. */
#define S_FLUX_BLOCK 256

/* The inner columns [lo, hi) of s_row_fluxes' four faces. */
static inline __attribute__((always_inline)) void
s_row_fluxes_span(const tb_hillslope_t *self, const tb_topo_t *t, const float *h,
                  const s_consts_t *q, size_t row, float thr, int first, float *const fx[4],
                  int64_t lo, int64_t hi)
{
    for (int f = 0; f < 4; f++) {
        int k = f + 4;
        ptrdiff_t o = t->noff[0][k];
        const float *h0 = self->h0;
        float *out = fx[f];
        /* Inner columns: one offset, selects only, so this vectorises; the same arithmetic as
         * s_flux, operation for operation. */
        const float *restrict hc = h + row, *restrict hn = h + row + o;
        const float *restrict rc = self->rinv + row, *restrict rn = self->rinv + row + o;
        const float *restrict lc = self->limit + row, *restrict ln = self->limit + row + o;
        const float *restrict h0c = h0 + row, *restrict h0n = h0 + row + o;
        float *restrict dst = out;
        float cw = q->cw[k], ic2 = q->inv_crit2[k];
        if (first) { /* the heights are the start's: M now is M at the start */
            for (int64_t i = lo; i < hi; i++) {
                float d = hn[i] - hc[i];
                float ri = rc[i] < rn[i] ? rc[i] : rn[i];
                float lim = lc[i] < ln[i] ? lc[i] : ln[i];
                float fl = cw * lim * ri * s_mk(d, ic2) * d;
                dst[i] = ri <= thr ? fl : 0.0f;
            }
        } else {
            for (int64_t i = lo; i < hi; i++) {
                float d = hn[i] - hc[i];
                float ri = rc[i] < rn[i] ? rc[i] : rn[i];
                float lim = lc[i] < ln[i] ? lc[i] : ln[i];
                /* min(M now, M at the start) is M of the smaller drop: M rises with the drop's
                 * square, every rounding on the way is monotone, so it is the same float, at one
                 * division instead of two */
                float d0 = h0n[i] - h0c[i], dd = d * d, dd0 = d0 * d0;
                float r2 = (dd < dd0 ? dd : dd0) * ic2;
                r2 = r2 < S_R2_CAP ? r2 : S_R2_CAP;
                float m = 1.0f / (1.0f - r2);
                float fl = cw * lim * ri * m * d;
                dst[i] = ri <= thr ? fl : 0.0f;
            }
        }
    }
}

/* The forward-face fluxes of row j (0 <= j < h-1) into fx. */
static inline __attribute__((always_inline)) void
s_row_fluxes(const tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
             const s_consts_t *q, int64_t j, float thr, int first, float *const fx[4], int64_t lo,
             int64_t hi)
{
    int64_t w = t->w;
    size_t row = (size_t)j * (size_t)w;
    /* In blocks of columns, the four faces of a block at a time: a face reads eight row
     * stretches (heights now and at the start, rates, limiters, of rows j and j + 1), which for
     * a whole row of a wide box would not stay in L1 until the next face. */
    for (int64_t blo = lo; blo < hi; blo += S_FLUX_BLOCK) {
        int64_t bhi = blo + S_FLUX_BLOCK < hi ? blo + S_FLUX_BLOCK : hi;
        s_row_fluxes_span(self, t, h, q, row, thr, first, fx, blo, bhi);
    }
    for (int f = 0; f < 4; f++) {
        int k = f + 4;
        float *out = fx[f];
        const float *h0 = self->h0;
        for (int64_t i = 0; i < w; i += w - 1) {
            int64_t ni = i + tb_nb_dx[k];
            out[i] = 0;
            if (!t->wraps && (ni < 0 || ni >= w))
                continue;
            size_t c = row + (size_t)i, n = (size_t)((ptrdiff_t)c + s_off(t, i)[k]);
            out[i] = s_flux(self, q, c, n, k, h0[n] - h0[c], h[c], h[n], thr);
        }
    }
    (void)node;
}

/* A row of forward-face fluxes: four faces, the span of columns computed for this firing, and
 * the columns it may hold non-zero values in (what has to be cleared before it is reused). */
typedef struct {
    float *f[4];
    int64_t lo, hi;   /* computed span of inner columns */
    int64_t dlo, dhi; /* columns possibly non-zero */
} s_fluxrow_t;

/* The forward fluxes of row j (0 <= j < h-1) for the firing of level lr into r: only the columns
 * where a cell's touch level reaches lr, in this row or the next (a fixed cell here owns faces to
 * the next row, and its own touch level is 0), one either side (a fixed cell's east face); zeros
 * elsewhere. Reads rows j and j + 1. */
static inline __attribute__((always_inline)) void
s_flux_row(const tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
           const s_consts_t *q, int lr, int64_t j, s_fluxrow_t *r)
{
    int64_t w = t->w;
    int first = lr == 0;
    int64_t lo = 1, hi = w - 1;
    if (!first && !t->wraps && !q->full_spans) {
        int64_t a = w, z = -1;
        for (int64_t rr = j; rr <= j + 1; rr++)
            for (int L = lr; L <= S_MAX_LEVEL; L++) {
                int64_t fa = self->first[rr * (S_MAX_LEVEL + 1) + L];
                int64_t la = self->last[rr * (S_MAX_LEVEL + 1) + L];
                a = fa < a ? fa : a;
                z = la > z ? la : z;
            }
        lo = a - 1 < 1 ? 1 : a - 1;
        hi = z + 2 > w - 1 ? w - 1 : z + 2;
        if (z < 0)
            lo = hi = 1;
    }
    /* Clear what the buffer held before outside the span computed now (s_row_fluxes writes every
     * column of [lo, hi) when it runs, and it runs whenever that span is not empty). */
    int64_t c0 = r->dhi < lo ? r->dhi : lo, c1 = r->dlo > hi ? r->dlo : hi;
    for (int f = 0; f < 4; f++) {
        if (c0 > r->dlo)
            memset(r->f[f] + r->dlo, 0, (size_t)(c0 - r->dlo) * sizeof(float));
        if (r->dhi > c1)
            memset(r->f[f] + c1, 0, (size_t)(r->dhi - c1) * sizeof(float));
        r->f[f][0] = r->f[f][w - 1] = 0; /* the edge columns, written whenever a row is computed */
    }
    if (hi > lo || first || t->wraps)
        s_row_fluxes(self, t, node, h, q, j, s_inv_rate[lr], first, r->f, lo, hi);
    r->lo = lo;
    r->hi = hi;
    r->dlo = first || t->wraps ? 0 : lo;
    r->dhi = first || t->wraps ? w : hi;
}

/* Row j's update: forward faces from fx, backward ones from the row below's (below) and from the
 * west neighbour's E face, added in neighbour order 0..7. Only cells next to a computed face can
 * move: the union of this row's span and what the row below holds. */
static inline __attribute__((always_inline)) void s_update_row(const tb_topo_t *t,
                                                               const uint8_t *node, float *h,
                                                               int64_t j, const s_fluxrow_t *cur,
                                                               const s_fluxrow_t *bel)
{
    int64_t w = t->w;
    int64_t ulo = cur->lo < bel->dlo ? cur->lo : bel->dlo;
    int64_t uhi = cur->hi > bel->dhi ? cur->hi : bel->dhi;
    ulo = ulo < 1 ? 1 : ulo;
    uhi = uhi + 1 > w - 1 ? w - 1 : uhi + 1;
    size_t row = (size_t)j * (size_t)w;
    float *restrict hr = h + row;
    const uint8_t *restrict nd = node + row;
    const float *restrict e = cur->f[0], *restrict nw = cur->f[1], *restrict n = cur->f[2],
                          *restrict ne = cur->f[3];
    const float *restrict b_nw = bel->f[1], *restrict b_n = bel->f[2], *restrict b_ne = bel->f[3];
    for (int64_t i = ulo; i < uhi; i++) {
        float sum = 0;
        sum -= b_ne[i - 1]; /* 0 SW: the NE face of the SW neighbour */
        sum -= b_n[i];      /* 1 S */
        sum -= b_nw[i + 1]; /* 2 SE: the NW face of the SE neighbour */
        sum -= e[i - 1];    /* 3 W: the E face of the W neighbour */
        sum += e[i];        /* 4 E */
        sum += nw[i];       /* 5 NW */
        sum += n[i];        /* 6 N */
        sum += ne[i];       /* 7 NE */
        float add = (nd[i] & TB_NODE_SOLVED) ? sum : 0.0f;
        hr[i] += add;
    }
    if (t->wraps)
        for (int64_t i = 0; i < w; i += w - 1) {
            if (!(nd[i] & TB_NODE_SOLVED))
                continue;
            int64_t iw = i == 0 ? w - 1 : i - 1, ie = i == w - 1 ? 0 : i + 1;
            float sum = 0;
            sum -= b_ne[iw];
            sum -= b_n[i];
            sum -= b_nw[ie];
            sum -= e[iw];
            sum += e[i];
            sum += nw[i];
            sum += n[i];
            sum += ne[i];
            hr[i] += sum;
        }
}

/* What the band sections of one call share. */
typedef struct {
    tb_hillslope_t *self;
    const tb_topo_t *t;
    const uint8_t *node;
    float *h;
    s_consts_t q;
    tb_hillslope_bound_t bound;
    const tb_band_t *bands;
    int nbands;
    int cap;         /* the highest level a cell may take */
    uint8_t box_top; /* the box's highest own level (the BOX control) */
    int lr;          /* the current firing's level */
    size_t active, chunk;
    uint8_t top_own[TB_HILLSLOPE_MAX_BANDS];
    int most[TB_HILLSLOPE_MAX_BANDS];
    size_t solved[TB_HILLSLOPE_MAX_BANDS];
    size_t at[TB_HILLSLOPE_MAX_BANDS][S_MAX_LEVEL + 2];
    size_t fill[TB_HILLSLOPE_MAX_BANDS][S_MAX_LEVEL + 1];
    s_fluxrow_t bnd[TB_HILLSLOPE_MAX_BANDS]; /* the flux row below band b + 1 */
} s_ctx_t;

/* Band b's flux buffers: two rows of its own, and the rows at its boundaries (shared). */
static float *s_fbuf(const tb_hillslope_t *self, int64_t w, int slot)
{
    return self->flux_mem + (size_t)slot * 4 * (size_t)w;
}

static void s_bind(const tb_hillslope_t *self, int64_t w, int slot, s_fluxrow_t *r)
{
    float *base = s_fbuf(self, w, slot);
    for (int f = 0; f < 4; f++)
        r->f[f] = base + (size_t)f * (size_t)w;
}

/* Buffer slots: band b owns 2b and 2b + 1; the boundary below band b + 1 is slot 2 nbands + b. */
static int s_bnd_slot(int nbands, int b)
{
    return 2 * nbands + b;
}

static int s_grow_flux(tb_hillslope_t *self, int64_t w, int nbands)
{
    if (nbands <= self->flux_bands)
        return 0;
    float *m = calloc((size_t)(3 * nbands) * 4 * (size_t)w, sizeof(float));
    if (!m)
        return -1;
    free(self->flux_mem);
    self->flux_mem = m;
    self->flux_bands = nbands;
    return 0;
}

/* The passes over the box run in two copies, for x86-64's baseline and for AVX2 (TB_SIMD_TASK,
 * common/simd.h; the topology says which): the same C, so the same float operations on each
 * element. The rows' kernels are inlined by force, so that each copy compiles them whole. */
static inline __attribute__((always_inline)) void s_need_task_k(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    int64_t c0 = b == 0 ? 0 : x->bands[b].r0;
    int64_t c1 = (int)b == x->nbands - 1 ? x->t->h : x->bands[b].r1;
    /* the band's two flux rows, free until the firings */
    float *fbuf = s_fbuf(x->self, x->t->w, 2 * (int)b);
    x->top_own[b] = s_need_rows(x->self, x->t, x->node, x->h, &x->q, x->cap, c0, c1, x->bands[b].r0,
                                x->bands[b].r1, fbuf);
}

TB_SIMD_TASK(s_need_task, ((const s_ctx_t *)ctx_)->t->avx2)

static inline __attribute__((always_inline)) void s_level_task_k(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    s_level_rows(x->self, x->t, x->node, x->bound, x->box_top, x->bands[b].r0, x->bands[b].r1);
}

TB_SIMD_TASK(s_level_task, ((const s_ctx_t *)ctx_)->t->avx2)

static inline __attribute__((always_inline)) void s_touch_task_k(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    int64_t i0 = b == 0 ? 0 : x->bands[b].r0;
    int64_t i1 = (int)b == x->nbands - 1 ? x->t->h : x->bands[b].r1;
    memset(x->at[b], 0, sizeof x->at[b]);
    x->most[b] = s_touch_rows(x->self, x->t, x->node, i0, i1, x->bands[b].r0, x->bands[b].r1,
                              &x->solved[b], x->at[b]);
}

TB_SIMD_TASK(s_touch_task, ((const s_ctx_t *)ctx_)->t->avx2)

/* The list of cells above touch level 1, highest first, raster order within a level: band b
 * writes its cells of level L from fill[b][L]. */
static void s_list_task(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    size_t *fill = x->fill[b];
    size_t w = (size_t)x->t->w;
    for (size_t c = (size_t)x->bands[b].r0 * w; c < (size_t)x->bands[b].r1 * w; c++)
        if ((x->node[c] & TB_NODE_SOLVED) && x->self->touch[c] >= 2)
            x->self->list[fill[x->self->touch[c]]++] = (int32_t)c;
}

/* The flux row between band b and b + 1 (band b's last row), from the heights before the firing:
 * both bands read it, neither computes it (each would race the other's update). */
static inline __attribute__((always_inline)) void s_boundary_task_k(void *ctx_, size_t b,
                                                                    int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    if ((int)b >= x->nbands - 1)
        return;
    s_fluxrow_t r;
    s_bind(x->self, x->t->w, s_bnd_slot(x->nbands, (int)b), &r);
    r.dlo = 0; /* a shared row is computed once a firing: clear it whole */
    r.dhi = x->t->w;
    s_flux_row(x->self, x->t, x->node, x->h, &x->q, x->lr, x->bands[b].r1 - 1, &r);
    x->bnd[b] = r;
}

TB_SIMD_TASK(s_boundary_task, ((const s_ctx_t *)ctx_)->t->avx2)

/* A dense Jacobi pass of band b for the firing of level lr (0: the first firing, every face).
 * Row-lagged: the fluxes of row j read rows j and j+1 before row j moves. The row below the band
 * and the band's last row take the boundary rows computed before (s_boundary_task). */
static inline __attribute__((always_inline)) void s_dense_task_k(void *ctx_, size_t b_, int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    tb_hillslope_t *self = x->self;
    const tb_topo_t *t = x->t;
    int b = (int)b_;
    int64_t w = t->w, r0 = x->bands[b].r0, r1 = x->bands[b].r1;
    s_fluxrow_t own[2], below;
    for (int s = 0; s < 2; s++) {
        s_bind(self, w, 2 * b + s, &own[s]);
        own[s].dlo = 0; /* whatever the last pass left */
        own[s].dhi = w;
        own[s].lo = own[s].hi = 1;
    }
    int slot = 0;
    if (b == 0) {
        s_flux_row(self, t, x->node, x->h, &x->q, x->lr, r0 - 1, &own[slot]);
        below = own[slot];
        slot ^= 1;
    } else {
        below = x->bnd[b - 1];
    }
    for (int64_t j = r0; j < r1; j++) {
        s_fluxrow_t cur;
        if (j == r1 - 1 && b < x->nbands - 1) {
            cur = x->bnd[b];
        } else {
            s_flux_row(self, t, x->node, x->h, &x->q, x->lr, j, &own[slot]);
            cur = own[slot];
            slot ^= 1;
        }
        s_update_row(t, x->node, x->h, j, &cur, &below);
        below = cur;
    }
}

TB_SIMD_TASK(s_dense_task, ((const s_ctx_t *)ctx_)->t->avx2)

/* A sparse Jacobi pass over the listed cells whose touch reaches lr, in chunks: every new height
 * first (reads only), then every write. */
static void s_sparse_task(void *ctx_, size_t task, int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    tb_hillslope_t *self = x->self;
    const tb_topo_t *t = x->t;
    size_t from = task * x->chunk, to = from + x->chunk < x->active ? from + x->chunk : x->active;
    for (size_t a = from; a < to; a++) {
        size_t c = (size_t)self->list[a];
        float hc = x->h[c], sum = 0;
        for (int k = 0; k < 8; k++) {
            size_t n = tb_topo_nb(t, x->node[c], c, k);
            sum += s_flux(self, &x->q, c, n, k, self->h0[n] - self->h0[c], hc, x->h[n],
                          s_inv_rate[x->lr]);
        }
        self->next[a] = hc + sum;
    }
}

static void s_write_task(void *ctx_, size_t task, int thread)
{
    (void)thread;
    s_ctx_t *x = ctx_;
    size_t from = task * x->chunk, to = from + x->chunk < x->active ? from + x->chunk : x->active;
    for (size_t a = from; a < to; a++)
        x->h[x->self->list[a]] = x->self->next[a];
}

int tb_hillslope_diffuse_nonlinear(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
                                   const tb_hillslope_params_t *p, float *h,
                                   tb_hillslope_stats_t *stats, tb_err_t *err)
{
    tb_band_t one;
    tb_topo_bands(t, node, 1, false, &one);
    return tb_hillslope_diffuse_bands(self, t, node, p, h, stats, NULL, &one, 1, err);
}

int tb_hillslope_diffuse_bands(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
                               const tb_hillslope_params_t *p, float *h,
                               tb_hillslope_stats_t *stats, tb_pool_t *pool, const tb_band_t *bands,
                               int nbands, tb_err_t *err)
{
    if (!(p->diffusion_m2_yr > 0))
        return 0;
    if (nbands > TB_HILLSLOPE_MAX_BANDS)
        return tb_err_set(err, TB_E_INVALID, "hillslope: %d bands, at most %d", nbands,
                          TB_HILLSLOPE_MAX_BANDS);
    if (s_grow_flux(self, t->w, nbands) != 0)
        return tb_err_set(err, TB_E_NOMEM, "hillslope: out of memory for %d bands", nbands);
    s_ctx_t ctx, *x = &ctx;
    memset(x, 0, sizeof *x);
    x->self = self;
    x->t = t;
    x->node = node;
    x->h = h;
    x->bound = p->bound;
    x->bands = bands;
    x->nbands = nbands;
    s_consts_t *q = &x->q;
    double coeff = p->diffusion_m2_yr * p->dt_yr / (t->cell_m * t->cell_m);
    for (int k = 0; k < 8; k++) {
        q->cw[k] = (float)(coeff * (tb_nb_is_diagonal(k) ? 1.0 / 6 : 4.0 / 6));
        double crit = p->critical_slope * t->len_m[k];
        q->inv_crit2[k] = (float)(1 / (crit * crit));
    }
    q->full_spans = p->full_spans;
    q->cap_level = 0;
    while (q->cap_level < S_MAX_LEVEL && (2 << q->cap_level) <= p->max_substeps)
        q->cap_level++;
    x->cap = p->bound == TB_HILLSLOPE_BOUND_ONE ? 0 : q->cap_level;

    size_t nb = (size_t)nbands;
    s_ring(self, t);
    tb_pool_run(pool, nb, s_need_task, x);
    for (int b = 0; b < nbands; b++)
        x->box_top = x->top_own[b] > x->box_top ? x->top_own[b] : x->box_top;
    tb_pool_run(pool, nb, s_level_task, x);
    tb_pool_run(pool, nb, s_touch_task, x);
    size_t at[S_MAX_LEVEL + 2] = {0}, upto[S_MAX_LEVEL + 2] = {0}, solved = 0;
    int top = 0;
    for (int b = 0; b < nbands; b++) {
        top = x->most[b] > top ? x->most[b] : top;
        solved += x->solved[b];
        for (int L = 0; L <= S_MAX_LEVEL; L++)
            at[L] += x->at[b][L];
    }
    for (int L = S_MAX_LEVEL; L >= 0; L--)
        upto[L] = upto[L + 1] + at[L];
    if (top >= 2) {
        for (int L = 0; L <= S_MAX_LEVEL; L++) {
            size_t run = upto[L + 1];
            for (int b = 0; b < nbands; b++) {
                x->fill[b][L] = run;
                run += x->at[b][L];
            }
        }
        tb_pool_run(pool, nb, s_list_task, x);
    }

    int64_t updates = 0;
    int64_t times = (int64_t)1 << top;
    size_t tasks = (size_t)tb_pool_threads(pool) * 4;
    for (int64_t s = 0; s < times; s++) {
        int lr = s == 0 ? 0 : top - __builtin_ctzll((unsigned long long)s);
        size_t active = upto[lr > 0 ? lr : 0];
        x->lr = lr;
        if (lr <= 1 || active * 64 > solved) {
            if (nbands > 1)
                tb_pool_run(pool, nb - 1, s_boundary_task, x);
            tb_pool_run(pool, nb, s_dense_task, x);
            updates += (int64_t)(lr == 0 ? solved : active);
        } else {
            x->active = active;
            x->chunk = active / tasks + 1;
            size_t n = (active + x->chunk - 1) / x->chunk;
            tb_pool_run(pool, n, s_sparse_task, x);
            tb_pool_run(pool, n, s_write_task, x);
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
