/* MFD accumulation in Kahn order (one band per thread) and D8 accumulation along the stack; see
 * accumulation.h. */
#include "jobs/geology/accumulation.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/simd.h"

#define S_DONE 0xff        /* processed, partition by exponent */
#define S_PAD 16           /* bytes of counters past the box */
#define S_DONE_LINEAR 0xfe /* processed, every exponent weight underflowed: partition by drop */

/* Cells of one boundary row handed over by the neighbouring band: one producer, one consumer. */
typedef struct {
    int32_t *v;      /* capacity: a row */
    atomic_size_t n; /* entries published (release) */
    size_t taken;    /* entries the consumer has taken */
} s_inbox_t;

/* A growing list of cells. */
typedef struct {
    int32_t *v;
    size_t n, cap;
} s_list32_t;

/* One band's walk state; each on its own cache lines. */
typedef struct {
    int64_t r0, r1;
    size_t lo, hi;           /* the band's cells [lo, hi) */
    size_t slow_lo, slow_hi; /* cells outside [slow_lo, slow_hi) may release into other bands */
    size_t atom_lo, atom_hi; /* counters outside [atom_lo, atom_hi) are shared with a neighbour */
    size_t solved, order_at, norder, stuck;
    unsigned lmin; /* the least `lower` of the band's cells: 0 when one had no lower neighbour */
    int dir0;      /* the first sweep's direction */
    int passes;    /* a strip walk's passes over the strips */
    double wait_s, walk_s;
    s_inbox_t in_top, in_bot; /* cells of row r0 freed by band b - 1, of row r1 - 1 by band b + 1 */
    char pad[64];
} s_band_t;

struct tb_accum_t {
    size_t cells;
    int64_t w;
    uint8_t *pending; /* strictly higher solved neighbours not yet processed; S_DONE* once done */
    float *q;         /* A / W of processed cells: area per unit of partition weight; 0 on
                       * fixed cells (tb_accum_prepare) */
    int32_t *ready;   /* per row, from the row's first cell: the cells with nothing above them, in
                       * raster order (a row has at most w) */
    int32_t *nready;  /* per row: how many; 0 once the walk has taken them */
    int32_t *stack;   /* the chase stacks: band b uses [lo, hi) */
    s_band_t *band;
    int band_cap;
    int32_t *inbox_mem; /* 2 rows per band */
    int32_t **later;    /* per band: two row-sized lists of cells freed in the sweep's next row */
    int32_t *later_mem;
    atomic_int finished; /* bands whose walk is over */
    atomic_int failed;   /* a band's list could not grow: every band stops */
    /* The walk in column strips (s_strips_walk) */
    int strip_log2;     /* strips of 2^strip_log2 columns; 0: whole rows */
    int32_t *strip_at;  /* per row: the ready cells the strips have taken */
    s_list32_t *handed; /* per band and strip: cells the neighbouring bands handed over in it */
    int nhanded;        /* lists handed has room for */
    int passes;         /* the last strip walk's most passes over the strips (a band's) */
    int32_t *own_order; /* the order and the areas in its places when the caller keeps neither */
    float *own_aseq;
};

tb_accum_t *tb_accum_new(size_t cells, int64_t w, tb_err_t *err)
{
    tb_accum_t *self = tb_calloc(1, sizeof *self, "accumulation workspace", err);
    if (!self)
        return NULL;
    self->cells = cells;
    self->w = w;
    self->strip_log2 = TB_ACCUM_STRIP_LOG2;
    size_t rows = cells / (size_t)w + 1;
    /* The counters have S_PAD bytes beyond the box: the release of a cell updates its three rows of
     * counters four bytes at a time (s_release4), one byte past its last neighbour. */
    int ok = (self->pending = tb_calloc(cells + S_PAD, 1, "accumulation counters", err)) &&
             (self->q = tb_calloc(cells, sizeof(float), "accumulation partition", err)) &&
             (self->ready = tb_malloc(cells * sizeof(int32_t), "accumulation lists", err)) &&
             (self->nready = tb_malloc(rows * sizeof(int32_t), "accumulation rows", err)) &&
             (self->stack = tb_malloc(cells * sizeof(int32_t), "accumulation stack", err)) &&
             (self->strip_at = tb_calloc(rows, sizeof(int32_t), "accumulation strips", err));
    if (!ok) {
        tb_accum_destroy(&self);
        return NULL;
    }
    return self;
}

void tb_accum_destroy(tb_accum_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_accum_t *self = *self_p;
    free(self->pending);
    free(self->q);
    free(self->ready);
    free(self->nready);
    free(self->stack);
    free(self->band);
    free(self->inbox_mem);
    free(self->later_mem);
    free(self->later);
    free(self->strip_at);
    free(self->own_order);
    free(self->own_aseq);
    for (int k = 0; k < self->nhanded; k++)
        free(self->handed[k].v);
    free(self->handed);
    free(self);
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
    int linear; /* exponent == 1: no pow */
    float inv_dist[8];
    float contour[8]; /* L_k in cells */
} s_weights_t;

/* The partition weight of a drop (metres, > 0) towards neighbour direction k. Both ends of a link
 * evaluate it from the same float drop, so the sender's W and the receiver's pull agree bit for
 * bit. mode S_DONE_LINEAR is the fallback for exponents so high that every weight underflowed. */
static inline float s_weight_linear(float drop, int k)
{
    return (drop > S_MIN_DROP ? drop : S_MIN_DROP) * s_cw[k];
}

static inline float s_weight(const s_weights_t *wt, float drop, int k, uint8_t mode)
{
    if (wt->linear || mode == S_DONE_LINEAR)
        return s_weight_linear(drop, k);
    drop = drop > S_MIN_DROP ? drop : S_MIN_DROP;
    return powf(drop * wt->inv_dist[k], wt->exponent) * wt->contour[k];
}

/* The sum of eight floats in one fixed order: lanes k and k + 4 first, then (0 + 2) + (1 + 3). */
static inline float s_tree(const float v[8])
{
    float p0 = v[0] + v[4], p1 = v[1] + v[5], p2 = v[2] + v[6], p3 = v[3] + v[7];
    return (p0 + p2) + (p1 + p3);
}

/* Four lanes; the compiler lowers them to SSE on x86-64 and to NEON on arm64, and to scalar code
 * elsewhere. Every lane operation is the scalar one, so the bits are the same. */
typedef float s_v4 __attribute__((vector_size(16)));
typedef int32_t s_v4i __attribute__((vector_size(16)));
#if defined(__clang__)
#define S_SHUF(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#else
#define S_SHUF(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (s_v4i){i0, i1, i2, i3})
#endif

static inline s_v4 s_load4(const float *p)
{
    s_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline s_v4 s_sel(s_v4i m, s_v4 a, s_v4 b)
{
    return (s_v4)((m & (s_v4i)a) | (~m & (s_v4i)b));
}

/* Lane-wise a > b ? a : b, a where m is set else 0, and the sign bits of m as four bits: one
 * instruction each where SSE has them (x86-64 always does), the same values elsewhere. */
#if defined(__SSE__)
#include <xmmintrin.h>
static inline s_v4 s_max(s_v4 a, s_v4 b)
{
    return (s_v4)_mm_max_ps((__m128)a, (__m128)b);
}
static inline int s_mask4(s_v4i m)
{
    return _mm_movemask_ps((__m128)m);
}
#else
static inline s_v4 s_max(s_v4 a, s_v4 b)
{
    return s_sel(a > b, a, b);
}
static inline int s_mask4(s_v4i m)
{
    return (m[0] & 1) | (m[1] & 2) | (m[2] & 4) | (m[3] & 8);
}
#endif
static inline s_v4 s_and(s_v4i m, s_v4 a)
{
    return (s_v4)(m & (s_v4i)a);
}

#if defined(__SSE2__)
#include <emmintrin.h>
/* The release masks of the eight neighbours as bytes of 0xff (adding one subtracts one), by the
 * eight bits of `lower`: bytes 0..2 are the row below (columns i - 1 .. i + 1), bytes 8 and 10 the
 * west and east neighbours (byte 9 is the cell itself, never released), bytes 0..2 of the second
 * vector the row above. A table, so a release builds no mask (8 KiB: in L1 through the walk). */
#define S_B(l, k) (uint8_t)(0u - (((l) >> (k)) & 1u))
#define S_M(l)                                                                                     \
    {                                                                                              \
        {S_B(l, 0), S_B(l, 1), S_B(l, 2), 0, 0, 0, 0, 0, S_B(l, 3), 0, S_B(l, 4), 0, 0, 0, 0, 0},  \
        {                                                                                          \
            S_B(l, 5), S_B(l, 6), S_B(l, 7), 0                                                     \
        }                                                                                          \
    }
#define S_M4(l) S_M(l), S_M((l) + 1), S_M((l) + 2), S_M((l) + 3)
#define S_M16(l) S_M4(l), S_M4((l) + 4), S_M4((l) + 8), S_M4((l) + 12)
#define S_M64(l) S_M16(l), S_M16((l) + 16), S_M16((l) + 32), S_M16((l) + 48)
typedef struct {
    _Alignas(16) uint8_t below_mid[16];
    uint8_t above[4];
} s_rmask_t;
static const s_rmask_t s_rmask[256] = {S_M64(0), S_M64(64), S_M64(128), S_M64(192)};
#undef S_B
#undef S_M
#undef S_M4
#undef S_M16
#undef S_M64

/* The releases of inner cell c (row stride W >= 8) at once: the row below and c's own row are
 * read and written eight bytes at a time (columns i - 1 .. i + 6), the row above four (i - 1 ..
 * i + 2); the caller makes sure no other thread writes them. One is subtracted where `lower` has
 * the neighbour, byte by byte (a fixed neighbour's counter wraps without borrowing from the next),
 * and c's own counter is set to `mode`. Returns the freed neighbours (counters now 0) as bits
 * 8 r + (dx + 1) of rows r = 0 (below), 1, 2 (above): in neighbour order. */
static inline unsigned s_release_rows(uint8_t *pend, size_t c, ptrdiff_t W, unsigned lower,
                                      uint8_t mode)
{
    uint8_t *dn = pend + c - W - 1, *mid = pend + c - 1, *up = pend + c + W - 1;
    const s_rmask_t *rm = &s_rmask[lower];
    __m128i m = _mm_load_si128((const __m128i *)rm->below_mid);
    uint32_t mu, u;
    memcpy(&mu, rm->above, 4);
    memcpy(&u, up, 4);
    __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)dn),
                                   _mm_loadl_epi64((const __m128i *)mid));
    __m128i vu = _mm_cvtsi32_si128((int)u), mv = _mm_cvtsi32_si128((int)mu);
    v = _mm_add_epi8(v, m);
    vu = _mm_add_epi8(vu, mv);
    __m128i zero = _mm_setzero_si128();
    unsigned freed = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(v, zero), m));
    unsigned freed_up = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(vu, zero), mv));
    _mm_storel_epi64((__m128i *)dn, v);
    _mm_storeh_pd((double *)mid, _mm_castsi128_pd(v));
    u = (uint32_t)_mm_cvtsi128_si32(vu);
    memcpy(up, &u, 4);
    pend[c] = mode;
    return freed | freed_up << 16;
}
#endif

/* The eight neighbours of inner cell c of a row of stride W, in tb_nb order: lanes 0..3 (row
 * below and west) in *a, 4..7 (east and row above) in *b. Reads p[c - W - 1 .. c + W + 1] only. */
#if defined(__SSE__)
static inline void s_nb8(const float *p, size_t c, ptrdiff_t W, s_v4 *a, s_v4 *b)
{
    __m128 va, vb;
    tb_topo_nb8_ps(p, c, W, &va, &vb);
    *a = (s_v4)va;
    *b = (s_v4)vb;
}
#else
static inline void s_nb8(const float *p, size_t c, ptrdiff_t W, s_v4 *a, s_v4 *b)
{
    s_v4 lo = s_load4(p + c - W - 1), mid = s_load4(p + c - 1), hi = s_load4(p + c + W - 2);
    *a = S_SHUF(lo, mid, 0, 1, 2, 4);
    *b = S_SHUF(mid, hi, 2, 5, 6, 7);
}
#endif

/* The pull (area received) and outgoing weight sum of solved cell c at p = 1: lane-wise over the
 * eight neighbours, then summed in the fixed tree of s_tree. Inner columns only. */
static inline __attribute__((always_inline)) float s_pull_linear_v(const float *h, const float *q,
                                                                   size_t c, ptrdiff_t W, float hc,
                                                                   float *wsum, unsigned *lower)
{
    s_v4 ha, hb, qa, qb;
    s_nb8(h, c, W, &ha, &hb);
    s_nb8(q, c, W, &qa, &qb);
    const s_v4 cwa = {0.25f, 0.5f, 0.25f, 0.5f}, cwb = {0.5f, 0.25f, 0.5f, 0.25f};
    const s_v4 mind = {S_MIN_DROP, S_MIN_DROP, S_MIN_DROP, S_MIN_DROP};
    const s_v4i abs = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
    s_v4 hcv = {hc, hc, hc, hc};
    /* One weight a lane: hc - hn is exactly -(hn - hc), so |hn - hc| is the drop up a higher
     * neighbour and down a lower one, and the lane's mask picks which it is. */
    s_v4 wa = s_max(s_and(abs, ha - hcv), mind) * cwa, wb = s_max(s_and(abs, hb - hcv), mind) * cwb;
    s_v4i gta = ha > hcv, gtb = hb > hcv, lta = ha < hcv, ltb = hb < hcv;
    s_v4 pa = s_and(gta, qa * wa), pb = s_and(gtb, qb * wb);
    s_v4 da = s_and(lta, wa), db = s_and(ltb, wb);
    s_v4 p = pa + pb, d = da + db;
    /* both trees at once: lanes (p0 + p2, p1 + p3, d0 + d2, d1 + d3), then each pair added */
    s_v4 s = S_SHUF(p, d, 0, 1, 4, 5) + S_SHUF(p, d, 2, 3, 6, 7);
    s_v4 sum = s + S_SHUF(s, s, 1, 0, 3, 2);
    *wsum = sum[2];
    *lower = (unsigned)(s_mask4(lta) | s_mask4(ltb) << 4);
    return sum[0];
}

/* The same for any column (neighbour offsets off), one lane at a time. */
static inline __attribute__((always_inline)) float s_pull_linear(const float *h, const float *q,
                                                                 size_t c, const ptrdiff_t *off,
                                                                 float hc, float *wsum,
                                                                 unsigned *lower)
{
    float hn[8], qn[8], pull[8], wd[8];
    for (int k = 0; k < 8; k++) {
        size_t n = (size_t)((ptrdiff_t)c + off[k]);
        hn[k] = h[n];
        qn[k] = hn[k] > hc ? q[n] : 0.0f;
    }
    unsigned low = 0;
    for (int k = 0; k < 8; k++) {
        float up = hn[k] - hc, dn = hc - hn[k];
        float wu = (up > S_MIN_DROP ? up : S_MIN_DROP) * s_cw[k];
        float wdk = (dn > S_MIN_DROP ? dn : S_MIN_DROP) * s_cw[k];
        float pk = qn[k] * wu;
        pull[k] = hn[k] > hc ? pk : 0.0f;
        wd[k] = hn[k] < hc ? wdk : 0.0f;
        low |= (unsigned)(hn[k] < hc) << k;
    }
    *lower = low;
    *wsum = s_tree(wd);
    return s_tree(pull);
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

/* What every band's walk reads. */
typedef struct {
    tb_accum_t *self;
    const tb_topo_t *t;
    const uint8_t *node;
    const float *h;
    s_weights_t wt;
    float *area;    /* the coast cells' areas (the box's raster) */
    int32_t *order; /* the order, and the solved cells' areas in its places */
    float *aseq;
    int nbands;
    /* read for every cell: copied out of the topology, as a store to a counter could alias it */
    ptrdiff_t W; /* row stride */
    float a0;    /* a cell's own area, (float) of the topology's */
    bool rows;   /* W >= 8: inner releases take whole rows (s_release_rows) */
    float *q;    /* self->q and self->pending: a store to a counter may alias self */
    uint8_t *pend;
    /* the offset of the neighbour whose bit s_release_rows returns as bit p: (p / 8 - 1) W +
     * p % 8 - 1 (a load, where the arithmetic was five instructions a freed cell) */
    ptrdiff_t roff[24];
} s_ctx_t;

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A band's chase during a sweep: the stack, and the rows reached so far, cells [wlo, wlo + wspan).
 * A cell freed there is chased at once (depth-first: it is near); one freed in the next row of the
 * sweep waits in `later` for the sweep to get there. */
typedef struct {
    int32_t *stack;
    size_t top;
    size_t wlo, wspan;
    int32_t *later;
    size_t nlater;
    int32_t *order; /* the band's part of the order */
    size_t norder;  /* cells processed */
    float *aseq;    /* the band's part of the areas in the order's places */
} s_chase_t;

/* A cell of this band that has just been freed: chased when its row is reached, listed for the
 * next row otherwise (a neighbour of a reached cell is at most one row ahead). */
static inline __attribute__((always_inline)) void s_route(s_chase_t *ch, size_t n)
{
    if (n - ch->wlo < ch->wspan)
        ch->stack[ch->top++] = (int32_t)n;
    else
        ch->later[ch->nlater++] = (int32_t)n;
}

/* Hands cell n (freed by band b) to the band that owns it. */
static void s_hand_over(tb_accum_t *self, const s_band_t *bd, int b, size_t n)
{
    s_inbox_t *ib = n < bd->lo ? &self->band[b - 1].in_bot : &self->band[b + 1].in_top;
    size_t k = atomic_load_explicit(&ib->n, memory_order_relaxed);
    ib->v[k] = (int32_t)n;
    atomic_store_explicit(&ib->n, k + 1, memory_order_release);
}

/* The outgoing weight sum by drop alone (S_DONE_LINEAR), for a cell whose every exponent weight
 * underflowed: rare, so out of the walk's line. */
__attribute__((noinline, cold)) static float
s_linear_wsum(const float *h, size_t c, const ptrdiff_t *off, float hc, unsigned lower)
{
    float wsum = 0;
    for (int k = 0; k < 8; k++)
        if (lower & (1u << k))
            wsum += s_weight_linear(hc - h[(ptrdiff_t)c + off[k]], k);
    return wsum;
}

/* What the pull of a cell leaves for its releases. */
typedef struct {
    unsigned lower; /* the strictly lower neighbours, bit k for direction k */
    uint8_t mode;   /* S_DONE or S_DONE_LINEAR */
    uint8_t edge;   /* tb_topo_edge of the cell */
} s_pulled_t;

/* The first half of processing solved cell c, whose higher neighbours are all done: its place in
 * the band's order, its area and q. `slow` as in s_release. Inlined by force: the walk calls it
 * from several places with `slow` a constant, and a call in the walk's loop costs a quarter of the
 * walk's time. The walk passes a copy of the context, so nothing it reads per cell is loaded
 * again after each store to the counters. */
static inline __attribute__((always_inline)) s_pulled_t s_pull(const s_ctx_t *x, s_chase_t *ch,
                                                               size_t c, int slow)
{
    unsigned edge = tb_topo_edge(x->node[c]);
    const float *h = x->h;
    float hc = h[c], a = x->a0, wsum = 0;
    unsigned lower = 0;
    uint8_t mode = S_DONE;
    ch->order[ch->norder] = (int32_t)c;
    if (x->wt.linear) {
        /* Inner cells away from other bands read every neighbour's q; the others read only the
         * higher neighbours' (a lower one of another band may be in the middle of a write).
         * A p = 1 weight is at least S_MIN_DROP / 4, a normal float, so wsum > 0 whenever a
         * neighbour is lower: the fallback below is never needed here. */
        if (!slow && edge == 0)
            a += s_pull_linear_v(h, x->q, c, x->W, hc, &wsum, &lower);
        else
            a += s_pull_linear(h, x->q, c, x->t->noff[edge], hc, &wsum, &lower);
    } else {
        const ptrdiff_t *off = x->t->noff[edge];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            float hn = h[n];
            if (hn > hc) {
                /* A higher neighbour with q = 0 (a fixed cell, when c lies below the sea) adds
                 * nothing, and its mode byte may be a counter another band is decrementing. */
                float qn = x->q[n];
                if (qn != 0)
                    a += qn * s_weight(&x->wt, hn - hc, 7 - k, x->pend[n]);
            } else if (hn < hc) {
                wsum += s_weight(&x->wt, hc - hn, k, S_DONE);
                lower |= 1u << k;
            }
        }
        if (__builtin_expect(!(wsum > 0) && lower, 0)) {
            mode = S_DONE_LINEAR;
            wsum = s_linear_wsum(h, c, off, hc, lower);
        }
    }
    /* in the order's place, not the box's: written in sequence, not scattered over the rows the
     * chase is in (3 ns a land cell-step at 2048 squared) */
    ch->aseq[ch->norder++] = a;
    x->q[c] = wsum > 0 ? a / wsum : 0;
    return (s_pulled_t){lower, mode, (uint8_t)edge};
}

/* One subtracted from the counter of each neighbour in `lower` (offsets off), every counter
 * written, without a branch; returns the freed ones (counters now 0) as bits k. */
static inline __attribute__((always_inline)) unsigned
s_release_each(uint8_t *pend, size_t c, const ptrdiff_t *off, unsigned lower)
{
    unsigned freed = 0;
    for (int k = 0; k < 8; k++) {
        size_t n = (size_t)((ptrdiff_t)c + off[k]);
        unsigned d = (lower >> k) & 1;
        uint8_t v = (uint8_t)(pend[n] - d);
        pend[n] = v;
        freed |= (d & (v == 0)) << k;
    }
    return freed;
}

/* The releases of a cell that may have a lower neighbour whose counter another band shares
 * (atomic) or owns: a freed cell of another band is handed over to it; returns this band's freed
 * ones as bits k (offsets off). */
static inline __attribute__((always_inline)) unsigned
s_release_shared(tb_accum_t *self, s_band_t *bd, int b, size_t c, const ptrdiff_t *off,
                 unsigned lower)
{
    unsigned mine = 0;
    while (lower) {
        int k = __builtin_ctz(lower);
        lower &= lower - 1;
        size_t n = (size_t)((ptrdiff_t)c + off[k]);
        uint8_t left = (n < bd->atom_lo || n >= bd->atom_hi)
                           ? __atomic_sub_fetch(&self->pending[n], 1, __ATOMIC_ACQ_REL)
                           : --self->pending[n];
        if (left != 0)
            continue;
        if (n >= bd->lo && n < bd->hi)
            mine |= 1u << k;
        else
            s_hand_over(self, bd, b, n);
    }
    return mine;
}

/* The second half: c's counter set to its mode and the releases of its lower neighbours, the
 * freed ones routed in neighbour order. `slow`: c may have a lower neighbour whose counter another
 * band shares (atomic) or owns (handed over). Fixed neighbours need no test: their counters start
 * at 0 each step, so a decrement wraps far from 0. */
static inline __attribute__((always_inline)) void
s_release(const s_ctx_t *x, s_band_t *bd, int b, s_chase_t *ch, size_t c, int slow, s_pulled_t pu)
{
    tb_accum_t *self = x->self;
    unsigned lower = pu.lower;
#if defined(__SSE2__)
    if (!slow && pu.edge == 0 && x->rows) {
        ptrdiff_t W = x->W;
        unsigned freed = s_release_rows(x->pend, c, W, lower, pu.mode);
        while (freed) {
            int p = __builtin_ctz(freed);
            freed &= freed - 1;
            s_route(ch, (size_t)((ptrdiff_t)c + x->roff[p]));
        }
        return;
    }
#endif
    const ptrdiff_t *off = x->t->noff[pu.edge];
    x->pend[c] = pu.mode;
    if (!slow) {
        /* Only this thread writes these eight counters, so every one is written, less one where
         * the neighbour is lower, without a branch (how many of eight are lower, and which one a
         * release frees, are coin tosses to a branch predictor); then the freed ones are routed in
         * neighbour order, as the loop below would. */
        unsigned freed = s_release_each(x->pend, c, off, lower);
        while (freed) {
            int k = __builtin_ctz(freed);
            freed &= freed - 1;
            s_route(ch, (size_t)((ptrdiff_t)c + off[k]));
        }
        return;
    }
    unsigned freed = s_release_shared(self, bd, b, c, off, lower);
    while (freed) {
        int k = __builtin_ctz(freed);
        freed &= freed - 1;
        s_route(ch, (size_t)((ptrdiff_t)c + off[k]));
    }
}

/* Processes solved cell c of band b: s_pull, then s_release. Returns its lower neighbours (0: c
 * had nowhere to send its area; wsum > 0 exactly when a neighbour is lower, after the fallback). */
static inline __attribute__((always_inline)) unsigned
s_process(const s_ctx_t *x, s_band_t *bd, int b, s_chase_t *ch, size_t c, int slow)
{
    s_pulled_t pu = s_pull(x, ch, c, slow);
    s_release(x, bd, b, ch, c, slow, pu);
    return pu.lower;
}

/* The sweep of band bd, going dir, reaches the row that starts at cell `row`: the window of
 * reached rows (from the sweep's first row to this one), the cells listed for this row (the two
 * `later` lists swap) and the ready cells ready[row + a .. row + z) on the stack, last first, so
 * the stack hands them out in raster order. */
static inline __attribute__((always_inline)) void
s_reach_row(s_chase_t *ch, const s_band_t *bd, int dir, size_t row, size_t w, int32_t **later_next,
            const int32_t *ready, int32_t a, int32_t z)
{
    ch->wlo = dir > 0 ? bd->lo : row;
    ch->wspan = dir > 0 ? row + w - bd->lo : bd->hi - row;
    int32_t *from = ch->later;
    size_t nfrom = ch->nlater;
    ch->later = *later_next;
    *later_next = from;
    ch->nlater = 0;
    for (size_t s = 0; s < nfrom; s++)
        ch->stack[ch->top++] = from[s];
    for (int32_t s = z; s-- > a;)
        ch->stack[ch->top++] = ready[row + (size_t)s];
}

/* Chases what the neighbouring bands handed over (cells of row r0 and of row r1 - 1) once the
 * sweep has reached their row; until then they wait in the inbox. Returns how many were taken. */
static inline __attribute__((always_inline)) size_t s_poll(s_band_t *bd, s_chase_t *ch)
{
    size_t got = 0;
    s_inbox_t *ibs[2] = {&bd->in_top, &bd->in_bot};
    size_t at[2] = {bd->lo, bd->hi - 1};
    for (int s = 0; s < 2; s++) {
        s_inbox_t *ib = ibs[s];
        if (at[s] - ch->wlo >= ch->wspan)
            continue;
        size_t n = atomic_load_explicit(&ib->n, memory_order_acquire);
        for (; ib->taken < n; ib->taken++, got++)
            ch->stack[ch->top++] = ib->v[ib->taken];
    }
    return got;
}

/* Waits until a neighbouring band hands something over, or every other band has finished (then
 * nothing more can come), or a band failed (then the walk is given up). */
static void s_wait(tb_accum_t *self, s_band_t *bd, int nbands)
{
    double t0 = s_now();
    for (unsigned spin = 0;; spin++) {
        if (atomic_load_explicit(&bd->in_top.n, memory_order_acquire) > bd->in_top.taken ||
            atomic_load_explicit(&bd->in_bot.n, memory_order_acquire) > bd->in_bot.taken ||
            atomic_load_explicit(&self->finished, memory_order_acquire) >= nbands - 1 ||
            atomic_load_explicit(&self->failed, memory_order_relaxed))
            break;
        if (spin > 64)
            sched_yield();
    }
    bd->wait_s += s_now() - t0;
}

/* The count pass of band b: release counts of its rows (strictly higher solved neighbours), and
 * the ready lists of the cells that start with none. Fixed cells get 0 every step, because
 * decrements wrap their counters. Inner columns have one offset per direction, so the count
 * vectorises. */
static inline __attribute__((always_inline)) void s_count_band_k(void *ctx_, size_t b, int thread)
{
    (void)thread;
    const s_ctx_t *x = ctx_;
    tb_accum_t *self = x->self;
    const tb_topo_t *t = x->t;
    const uint8_t *node = x->node;
    const float *h = x->h;
    const s_band_t *bd = &self->band[b];
    int64_t w = t->w;
    const ptrdiff_t W = (ptrdiff_t)w;
    if (b == 0)
        memset(self->pending, 0, (size_t)w);
    if ((int)b == x->nbands - 1)
        memset(self->pending + (size_t)(t->h - 1) * (size_t)w, 0, (size_t)w);
    for (int64_t j = bd->r0; j < bd->r1; j++) {
        size_t row = (size_t)j * (size_t)w;
        const uint8_t *restrict nd = node + row;
        const float *restrict hr = h + row;
        uint8_t *restrict pend = self->pending + row;
        /* Floats only: every higher neighbour counts. A fixed neighbour (0 m) can only be higher
         * than a solved cell below sea level, which is recounted below. */
        int below = 0; /* a solved cell under the sea: rare, recounted cell by cell */
        for (int64_t i = 1; i < w - 1; i++) {
            float hc = hr[i];
            int cnt = (hr[i - W - 1] > hc) + (hr[i - W] > hc) + (hr[i - W + 1] > hc) +
                      (hr[i - 1] > hc) + (hr[i + 1] > hc) + (hr[i + W - 1] > hc) +
                      (hr[i + W] > hc) + (hr[i + W + 1] > hc);
            int solved = nd[i] & TB_NODE_SOLVED;
            pend[i] = (uint8_t)(cnt * solved);
            below |= solved & (hc < 0);
        }
        if (below)
            for (int64_t i = 1; i < w - 1; i++)
                if ((nd[i] & TB_NODE_SOLVED) && hr[i] < 0)
                    pend[i] = s_count(t, node, h, row + (size_t)i);
        for (int64_t i = 0; i < w; i += w - 1)
            pend[i] = (nd[i] & TB_NODE_SOLVED) ? s_count(t, node, h, row + (size_t)i) : 0;
        /* The cells with nothing above them, in raster order, in a list the sweep takes when it
         * reaches the row; only the row's start of the list array is touched. */
        int32_t *restrict list = self->ready + row, n = 0;
        int64_t i = 0;
#if defined(__SSE2__)
        /* sixteen cells a test: a ready cell is solved with a zero count */
        const __m128i one = _mm_set1_epi8(TB_NODE_SOLVED), zero = _mm_setzero_si128();
        for (; i + 16 <= w; i += 16) {
            __m128i sv = _mm_and_si128(_mm_loadu_si128((const __m128i *)(nd + i)), one);
            __m128i pz = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(pend + i)), zero);
            unsigned bits = (unsigned)_mm_movemask_epi8(_mm_and_si128(pz, _mm_cmpeq_epi8(sv, one)));
            while (bits) {
                list[n++] = (int32_t)(row + (size_t)i + (size_t)__builtin_ctz(bits));
                bits &= bits - 1;
            }
        }
#endif
        /* written without a branch (every cell is stored, a ready one kept) */
        for (; i < w; i++) {
            list[n] = (int32_t)(row + (size_t)i);
            n += (nd[i] & TB_NODE_SOLVED) && pend[i] == 0;
        }
        self->nready[j] = n;
    }
}

TB_SIMD_TASK(s_count_band, ((const s_ctx_t *)ctx_)->t->avx2)

/* The walk of band b: sweeps over its rows, alternately in each direction, until every solved
 * cell of the band is done. With one band the first sweep does everything; with several, a later
 * sweep takes what the neighbours handed over after the sweep passed its row. */
static inline __attribute__((always_inline)) void s_walk_band_k(void *ctx_, size_t b_, int thread)
{
    (void)thread;
    const s_ctx_t xv = *(const s_ctx_t *)ctx_, *x = &xv; /* a copy: see s_pull */
    tb_accum_t *self = x->self;
    int b = (int)b_;
    s_band_t *bd = &self->band[b];
    size_t w = (size_t)x->t->w;
    const size_t slow_lo = bd->slow_lo, slow_hi = bd->slow_hi;
    unsigned lmin = ~0u;
    s_chase_t ch = {self->stack + bd->lo,  0, 0, 0, self->later[b], 0, x->order + bd->order_at, 0,
                    x->aseq + bd->order_at};
    /* two cells at a time at p = 1, which test_accum checks bit for bit against a sorted pull */
    const int pair = x->wt.linear;
    int32_t *later_next = self->later[b] + w;
    size_t done = 0;
    int dir = bd->dir0, idle = 0;
    double t0 = s_now();
    while (done < bd->solved) {
        size_t before = done, got = 0;
        ch.nlater = 0;
        for (int64_t j = dir > 0 ? bd->r0 : bd->r1 - 1; j >= bd->r0 && j < bd->r1; j += dir) {
            s_reach_row(&ch, bd, dir, (size_t)j * w, w, &later_next, self->ready, 0,
                        self->nready[j]);
            self->nready[j] = 0;
            if (x->nbands > 1)
                got += s_poll(bd, &ch);
            while (ch.top > 0) {
                size_t c = (size_t)ch.stack[--ch.top];
                int slow = c < slow_lo || c >= slow_hi;
                /* Two ready cells away from other bands at once: neither is higher than the
                 * other (each would still wait for it), so their pulls are independent, and the
                 * chain of dependent loads from a release to the next cell's pull is shared by
                 * two. */
                if (pair && ch.top > 0 && !slow) {
                    size_t c2 = (size_t)ch.stack[ch.top - 1];
                    if (c2 >= slow_lo && c2 < slow_hi) {
                        ch.top--;
                        s_pulled_t p1 = s_pull(x, &ch, c, 0), p2 = s_pull(x, &ch, c2, 0);
                        s_release(x, bd, b, &ch, c, 0, p1);
                        s_release(x, bd, b, &ch, c2, 0, p2);
                        lmin = p1.lower < lmin ? p1.lower : lmin;
                        lmin = p2.lower < lmin ? p2.lower : lmin;
                        done += 2;
                        continue;
                    }
                }
                unsigned l = slow ? s_process(x, bd, b, &ch, c, 1) : s_process(x, bd, b, &ch, c, 0);
                lmin = l < lmin ? l : lmin;
                done++;
            }
        }
        dir = -dir;
        if (done > before || got > 0) {
            idle = 0;
            continue;
        }
        /* Nothing was ready: the rest waits for another band (or, after a bug, for nothing). */
        if (x->nbands == 1 || ++idle > 2 + 2 * x->nbands)
            break;
        s_wait(self, bd, x->nbands);
    }
    bd->lmin = lmin;
    bd->norder = ch.norder;
    bd->walk_s = s_now() - t0;
    atomic_fetch_add_explicit(&self->finished, 1, memory_order_acq_rel);
}

TB_SIMD_TASK(s_walk_band, ((const s_ctx_t *)ctx_)->t->avx2)

/* ---- the walk in column strips ---- */

/* What a strip's chase needs beyond s_chase_t: its strip and where the others' cells go. */
typedef struct {
    s_chase_t ch;
    uint64_t inv_w; /* ceil(2^64 / W): s_col */
    int64_t w;
    int k, ls;          /* the strip, 2^ls columns a strip */
    s_list32_t *handed; /* the band's lists, one a strip */
    int nomem;
    s_band_t *bd; /* the band, b */
    int b;
} s_strip_t;

/* The column of cell c, by a multiply: floor(c / W) is the high half of c ceil(2^64 / W) exactly,
 * as c W < 2^62 (boxes are under 2^31 cells), and a division would be on the chase's path. */
static inline size_t s_col(const s_strip_t *st, size_t c)
{
#if defined(__SIZEOF_INT128__)
    uint64_t j = (uint64_t)(((unsigned __int128)c * st->inv_w) >> 64);
    return c - (size_t)j * (size_t)st->w;
#else
    return (size_t)((uint32_t)c % (uint32_t)st->w);
#endif
}

static void s_hand_strip(s_strip_t *st, int kn, size_t n)
{
    s_list32_t *l = &st->handed[kn];
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        int32_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            st->nomem = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (int32_t)n;
}

/* Chases the strip's stack empty, two ready cells at a time at p = 1 (as s_walk_band_k: neither
 * of two ready cells is higher than the other) when neither is slow. `multi`: the walk has
 * several bands, so cells near their boundaries are slow. Returns the cells processed. */
static inline __attribute__((always_inline)) size_t s_strip_chase(const s_ctx_t *x, s_strip_t *st,
                                                                  unsigned *lmin, const int multi)
{
    s_chase_t *ch = &st->ch;
    const size_t slow_lo = st->bd->slow_lo, slow_hi = st->bd->slow_hi;
    size_t done = 0;
    while (ch->top > 0) {
        size_t c = (size_t)ch->stack[--ch->top];
        int slow = multi && (c < slow_lo || c >= slow_hi);
        if (x->wt.linear && ch->top > 0 && !slow) {
            size_t c2 = (size_t)ch->stack[ch->top - 1];
            if (!multi || (c2 >= slow_lo && c2 < slow_hi)) {
                ch->top--;
                s_pulled_t p1 = s_pull(x, ch, c, 0), p2 = s_pull(x, ch, c2, 0);
                s_release(x, st->bd, st->b, ch, c, 0, p1);
                s_release(x, st->bd, st->b, ch, c2, 0, p2);
                *lmin = p1.lower < *lmin ? p1.lower : *lmin;
                *lmin = p2.lower < *lmin ? p2.lower : *lmin;
                done += 2;
                continue;
            }
        }
        s_pulled_t pu = slow ? s_pull(x, ch, c, 1) : s_pull(x, ch, c, 0);
        if (slow)
            s_release(x, st->bd, st->b, ch, c, 1, pu);
        else
            s_release(x, st->bd, st->b, ch, c, 0, pu);
        *lmin = pu.lower < *lmin ? pu.lower : *lmin;
        done++;
    }
    return done;
}

/* Chases what was handed to the strip (ready cells: chased in any row), then puts the
 * window of reached rows back. */
static inline __attribute__((always_inline)) size_t s_strip_take(const s_ctx_t *x, s_strip_t *st,
                                                                 unsigned *lmin, const int multi)
{
    s_chase_t *ch = &st->ch;
    s_list32_t *l = &st->handed[st->k];
    size_t done = 0, wlo = ch->wlo, wspan = ch->wspan;
    ch->wlo = 0;
    ch->wspan = SIZE_MAX;
    while (l->n > 0) {
        while (l->n > 0)
            ch->stack[ch->top++] = l->v[--l->n];
        done += s_strip_chase(x, st, lmin, multi);
    }
    ch->wlo = wlo;
    ch->wspan = wspan;
    return done;
}

/* What the neighbouring bands handed over, put on the lists of the cells' strips. */
static size_t s_strip_poll(s_strip_t *st)
{
    size_t got = 0;
    s_inbox_t *ibs[2] = {&st->bd->in_top, &st->bd->in_bot};
    for (int s = 0; s < 2; s++) {
        s_inbox_t *ib = ibs[s];
        size_t n = atomic_load_explicit(&ib->n, memory_order_acquire);
        for (; ib->taken < n; ib->taken++, got++) {
            size_t c = (size_t)ib->v[ib->taken];
            s_hand_strip(st, (int)(s_col(st, c) >> st->ls), c);
        }
    }
    return got;
}

/* The walk of band b strip by strip: each strip sweeps its rows as s_walk_band_k sweeps whole rows
 * (in the band's first direction), chasing in the rows reached; a cell the band frees is chased in
 * whichever strip it lies. With several bands (multi), what the neighbouring bands hand over is
 * put on its strip's list at every row and between passes, each strip chases its list before its
 * sweep and after each row, passes over the strips chase what was handed to strips that had had
 * their turn until nothing is handed, and a band with nothing to do waits for its neighbours. */
static inline __attribute__((always_inline)) void s_strips_walk(void *ctx_, size_t b_,
                                                                const int multi)
{
    s_ctx_t xv = *(const s_ctx_t *)ctx_; /* a copy: see s_pull */
    xv.rows = true;                      /* strips are at least 4 columns, 2 a box (below) */
    const s_ctx_t *x = &xv;
    tb_accum_t *self = x->self;
    int b = (int)b_;
    s_band_t *bd = &self->band[b];
    size_t w = (size_t)x->t->w;
    int ls = self->strip_log2, ns = (int)((w + ((size_t)1 << ls) - 1) >> ls);
    s_strip_t st = {{self->stack + bd->lo, 0, 0, 0, self->later[b], 0, x->order + bd->order_at, 0,
                     x->aseq + bd->order_at},
                    UINT64_MAX / w + 1,
                    (int64_t)w,
                    0,
                    ls,
                    self->handed + (size_t)b * (size_t)ns,
                    0,
                    bd,
                    b};
    s_chase_t *ch = &st.ch;
    unsigned lmin = ~0u;
    size_t done = 0;
    int32_t *later_next = self->later[b] + w;
    const int dir = bd->dir0;
    double t0 = s_now();
    for (int64_t j = bd->r0; j < bd->r1; j++)
        self->strip_at[j] = 0;
    int pass = 0, idle = 0;
    for (;; pass++) {
        size_t before = done, got = 0;
        for (int k = 0; k < ns; k++) {
            st.k = k;
            if (multi)
                got += s_strip_poll(&st);
            done += s_strip_take(x, &st, &lmin, multi);
            if (pass > 0)
                continue;
            int64_t x1 = (int64_t)(((size_t)k + 1) << ls);
            ch->nlater = 0;
            for (int64_t j = dir > 0 ? bd->r0 : bd->r1 - 1; j >= bd->r0 && j < bd->r1; j += dir) {
                /* this strip's ready cells of the row: the next run of its list (raster order) */
                size_t row = (size_t)j * w;
                int32_t a = self->strip_at[j], z = a;
                while (z < self->nready[j] &&
                       (int64_t)((size_t)self->ready[row + (size_t)z] - row) < x1)
                    z++;
                s_reach_row(ch, bd, dir, row, w, &later_next, self->ready, a, z);
                self->strip_at[j] = z;
                done += s_strip_chase(x, &st, &lmin, multi);
                if (multi) {
                    got += s_strip_poll(&st);
                    done += s_strip_take(x, &st, &lmin, multi);
                }
            }
        }
        if (st.nomem) {
            /* a cell was dropped: no band can finish, so none waits for another */
            atomic_store_explicit(&self->failed, 1, memory_order_relaxed);
            break;
        }
        if (done == bd->solved || atomic_load_explicit(&self->failed, memory_order_relaxed))
            break;
        if (pass == 0 || done > before || got > 0) {
            idle = 0;
            continue;
        }
        /* Nothing was handed: the rest waits for another band (or, after a bug, for nothing). */
        if (!multi || ++idle > 2 + 2 * x->nbands)
            break;
        s_wait(self, bd, x->nbands);
    }
    for (int64_t j = bd->r0; j < bd->r1; j++)
        self->nready[j] = 0;
    for (int k = 0; k < ns; k++)
        st.handed[k].n = 0;
    bd->passes = pass + 1;
    bd->lmin = lmin;
    bd->norder = ch->norder;
    bd->walk_s = s_now() - t0;
    atomic_fetch_add_explicit(&self->finished, 1, memory_order_acq_rel);
}

static inline __attribute__((always_inline)) void s_strips1_k(void *ctx_, size_t b_, int thread)
{
    (void)thread;
    s_strips_walk(ctx_, b_, 0);
}

static inline __attribute__((always_inline)) void s_stripsn_k(void *ctx_, size_t b_, int thread)
{
    (void)thread;
    s_strips_walk(ctx_, b_, 1);
}

TB_SIMD_TASK(s_strips1, ((const s_ctx_t *)ctx_)->t->avx2)
TB_SIMD_TASK(s_stripsn, ((const s_ctx_t *)ctx_)->t->avx2)

void tb_accum_set_strips(tb_accum_t *self, int log2_columns)
{
    self->strip_log2 = log2_columns < 0 ? 0 : log2_columns > 20 ? 20 : log2_columns;
}

int tb_accum_strip_passes(const tb_accum_t *self)
{
    return self->passes > 0 ? self->passes : 0;
}

/* Sizes the per-band state for nbands bands and sets it up for this call. */
static int s_setup(tb_accum_t *self, const tb_topo_t *t, const tb_band_t *bands, int nbands)
{
    if (nbands > self->band_cap) {
        void *bp = NULL;
        if (posix_memalign(&bp, 64, (size_t)nbands * sizeof(s_band_t)) != 0)
            return -1;
        int32_t *ib = malloc((size_t)nbands * 2 * (size_t)t->w * sizeof(int32_t));
        int32_t *lm = malloc((size_t)nbands * 2 * (size_t)t->w * sizeof(int32_t));
        int32_t **lp = malloc((size_t)nbands * sizeof(int32_t *));
        if (!ib || !lm || !lp) {
            free(bp);
            free(ib);
            free(lm);
            free(lp);
            return -1;
        }
        free(self->band);
        free(self->inbox_mem);
        free(self->later_mem);
        free(self->later);
        self->band = bp;
        self->inbox_mem = ib;
        self->later_mem = lm;
        self->later = lp;
        for (int b = 0; b < nbands; b++)
            lp[b] = lm + (size_t)(2 * b) * (size_t)t->w;
        self->band_cap = nbands;
    }
    size_t w = (size_t)t->w, at = 0;
    for (int b = 0; b < nbands; b++) {
        s_band_t *bd = &self->band[b];
        memset(bd, 0, sizeof *bd);
        bd->r0 = bands[b].r0;
        bd->r1 = bands[b].r1;
        bd->lo = (size_t)bd->r0 * w;
        bd->hi = (size_t)bd->r1 * w;
        bd->solved = bands[b].solved;
        bd->order_at = at;
        at += bd->solved;
        bd->slow_lo = b > 0 ? (size_t)(bd->r0 + 2) * w : 0;
        /* three rows: a fast cell's counters are written four at a time, up to the first cell of
         * the row two above it (s_release_rows) */
        bd->slow_hi = b < nbands - 1 ? (size_t)(bd->r1 - 3) * w : SIZE_MAX;
        bd->atom_lo = b > 0 ? (size_t)(bd->r0 + 1) * w : 0;
        bd->atom_hi = b < nbands - 1 ? (size_t)(bd->r1 - 1) * w : SIZE_MAX;
        /* Neighbouring bands start at their shared boundary: band 0 sweeps up, band 1 down. */
        bd->dir0 = (b % 2 == 0 && nbands > 1) ? -1 : 1;
        bd->in_top.v = self->inbox_mem + (size_t)(2 * b) * w;
        bd->in_bot.v = self->inbox_mem + (size_t)(2 * b + 1) * w;
        atomic_init(&bd->in_top.n, 0);
        atomic_init(&bd->in_bot.n, 0);
    }
    atomic_init(&self->finished, 0);
    atomic_init(&self->failed, 0);
    return 0;
}

/* The sea's share of coast cells [from, to), gathered in neighbour order. */
static void s_coast(const s_ctx_t *x, const int32_t *coast, size_t from, size_t to)
{
    const tb_topo_t *t = x->t;
    for (size_t s = from; s < to; s++) {
        size_t f = (size_t)coast[s];
        int64_t i = (int64_t)(f % (size_t)t->w), j = (int64_t)(f / (size_t)t->w);
        float hf = x->h[f], a = 0;
        for (int k = 0; k < 8; k++) {
            int64_t n = tb_topo_nb_checked(t, i, j, k);
            if (n >= 0 && (x->node[n] & TB_NODE_SOLVED) && x->h[n] > hf)
                a += x->self->q[n] * s_weight(&x->wt, x->h[n] - hf, 7 - k, x->self->pending[n]);
        }
        x->area[f] = a;
    }
}

typedef struct {
    const s_ctx_t *x;
    const int32_t *coast;
    size_t ncoast, chunk;
} s_coast_ctx_t;

static void s_coast_task(void *ctx_, size_t task, int thread)
{
    (void)thread;
    const s_coast_ctx_t *cc = ctx_;
    size_t from = task * cc->chunk, to = from + cc->chunk;
    s_coast(cc->x, cc->coast, from, to < cc->ncoast ? to : cc->ncoast);
}

/* The processed cells of band bd with no lower neighbour, counted once every walk is over (the
 * walk keeps only the least `lower` of its cells, so this runs only when that was 0): a
 * processed cell's counter holds its mode, and nothing releases it afterwards. */
__attribute__((cold, noinline)) static size_t s_count_stuck(const s_ctx_t *x, const s_band_t *bd)
{
    size_t n = 0;
    for (size_t c = bd->lo; c < bd->hi; c++) {
        uint8_t m = x->pend[c];
        if (!(x->node[c] & TB_NODE_SOLVED) || (m != S_DONE && m != S_DONE_LINEAR))
            continue;
        const ptrdiff_t *off = x->t->noff[tb_topo_edge(x->node[c])];
        int lower = 0;
        for (int k = 0; k < 8; k++)
            lower |= x->h[(ptrdiff_t)c + off[k]] < x->h[c];
        n += !lower;
    }
    return n;
}

size_t tb_accum_mfd_bands(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                          double exponent, const int32_t *coast, size_t ncoast, float *area_m2,
                          int32_t *order, float *area_seq, size_t *seg_start, size_t *seg_count,
                          tb_pool_t *pool, const tb_band_t *bands, int nbands, double *wait_s)
{
    if (!order && !self->own_order && !(self->own_order = malloc(self->cells * sizeof(int32_t))))
        return SIZE_MAX;
    if (!area_seq && !self->own_aseq && !(self->own_aseq = malloc(self->cells * sizeof(float))))
        return SIZE_MAX;
    s_ctx_t x = {self,
                 t,
                 node,
                 h,
                 {(float)exponent, exponent == 1, {0}, {0}},
                 area_m2,
                 order ? order : self->own_order,
                 area_seq ? area_seq : self->own_aseq,
                 nbands,
                 (ptrdiff_t)t->w,
                 (float)t->cell_area_m2,
                 t->w >= 8};
    x.q = self->q;
    x.pend = self->pending;
    for (int p = 0; p < 24; p++)
        x.roff[p] = ((p >> 3) - 1) * x.W + (p & 7) - 1;
    for (int k = 0; k < 8; k++) {
        x.wt.inv_dist[k] = (float)(1 / tb_nb_dist[k]);
        x.wt.contour[k] = tb_nb_is_diagonal(k) ? (float)(sqrt(2.0) / 4) : 0.5f;
    }
    /* The bands' walks wait on each other, so every band needs a thread of its own. */
    if ((nbands > 1 && nbands > tb_pool_threads(pool)) || s_setup(self, t, bands, nbands) != 0)
        return SIZE_MAX;
    tb_pool_run(pool, (size_t)nbands, s_count_band, &x);
    self->passes = 0;
    /* Strips from two full strips up: a box barely wider than one gains nothing from a narrow
     * second strip (the demo planet's largest region, 1245 columns: the walk 28.2 -> 29.0 ns a
     * land cell-step with two) */
    size_t strip = (size_t)1 << self->strip_log2;
    if (self->strip_log2 >= 2 && (size_t)t->w >= 2 * strip) {
        int nl = nbands * (int)(((size_t)t->w + strip - 1) / strip);
        if (nl > self->nhanded) {
            s_list32_t *hl = realloc(self->handed, (size_t)nl * sizeof *hl);
            if (!hl)
                return SIZE_MAX;
            memset(hl + self->nhanded, 0, (size_t)(nl - self->nhanded) * sizeof *hl);
            self->handed = hl;
            self->nhanded = nl;
        }
        tb_pool_run(pool, (size_t)nbands, nbands > 1 ? s_stripsn : s_strips1, &x);
        if (atomic_load_explicit(&self->failed, memory_order_relaxed))
            return SIZE_MAX; /* a list could not grow */
        for (int b = 0; b < nbands; b++)
            if (self->band[b].passes > self->passes)
                self->passes = self->band[b].passes;
    } else {
        tb_pool_run(pool, (size_t)nbands, s_walk_band, &x);
    }
    size_t stuck = 0;
    for (int b = 0; b < nbands; b++) {
        s_band_t *bd = &self->band[b];
        bd->stuck = bd->lmin == 0 ? s_count_stuck(&x, bd) : 0;
        /* A band that could not finish (only after a bug upstream) counts its cells as stuck. */
        stuck += bd->stuck + (bd->solved - bd->norder);
        if (seg_start)
            seg_start[b] = bd->order_at;
        if (seg_count)
            seg_count[b] = bd->norder;
        if (wait_s) {
            wait_s[2 * b] = bd->wait_s;
            wait_s[2 * b + 1] = bd->walk_s;
        }
    }
    int tasks = tb_pool_threads(pool) * 4;
    s_coast_ctx_t cc = {&x, coast, ncoast, ncoast / (size_t)tasks + 1};
    tb_pool_run(pool, (ncoast + cc.chunk - 1) / cc.chunk, s_coast_task, &cc);
    if (!area_seq)
        for (int b = 0; b < nbands; b++) {
            size_t at = self->band[b].order_at, n = self->band[b].norder;
            tb_accum_place(x.order + at, x.aseq + at, &(size_t){0}, &n, 1, area_m2);
        }
    return stuck;
}

void tb_accum_place(const int32_t *order, const float *area_seq, const size_t *seg_start,
                    const size_t *seg_count, int nsegs, float *area_m2)
{
    for (int b = 0; b < nsegs; b++)
        for (size_t i = seg_start[b]; i < seg_start[b] + seg_count[b]; i++)
            area_m2[order[i]] = area_seq[i];
}

size_t tb_accum_mfd_kahn(tb_accum_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                         double exponent, const int32_t *coast, size_t ncoast, float *area_m2,
                         int32_t *order)
{
    tb_band_t one;
    tb_topo_bands(t, node, 1, false, &one);
    return tb_accum_mfd_bands(self, t, node, h, exponent, coast, ncoast, area_m2, order, NULL, NULL,
                              NULL, NULL, &one, 1, NULL);
}

void tb_accum_d8_coast(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                       const int32_t *coast, size_t from, size_t to, float *area_m2)
{
    for (size_t s = from; s < to; s++) {
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

void tb_accum_d8_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                       const tb_stack_t *stack, const int32_t *coast, size_t ncoast, float *area_m2)
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
    tb_accum_d8_coast(t, node, dir, coast, 0, ncoast, area_m2);
}
