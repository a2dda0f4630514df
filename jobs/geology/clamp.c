/* The repose clamp as a monotone fixed point; see clamp.h. */
#include "jobs/geology/clamp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/simd.h"

/* A band's scan: its row of marks and the cells it found too high. */
typedef struct {
    int32_t *flag; /* one row: cells the smallest allowance would lower */
    int32_t *hits; /* cells that violate on the scanned surface */
    size_t nhits, cap;
    int failed;
} s_scan_t;

struct tb_clamp_t {
    int32_t *ring; /* FIFO of lowered cells (each at most once in it) */
    uint8_t *queued;
    size_t cap;
    int64_t w;
    int32_t *flag;  /* one row: cells the smallest allowance would lower */
    s_scan_t *scan; /* per band */
    int nscan;
};

tb_clamp_t *tb_clamp_new(size_t cells, int64_t w, tb_err_t *err)
{
    tb_clamp_t *self = tb_calloc(1, sizeof *self, "clamp workspace", err);
    if (!self)
        return NULL;
    self->cap = cells;
    self->w = w;
    self->ring = tb_malloc(cells * sizeof(int32_t), "clamp worklist", err);
    self->queued = self->ring ? tb_calloc(cells, 1, "clamp flags", err) : NULL;
    self->flag = self->queued ? tb_calloc((size_t)w, sizeof(int32_t), "clamp row", err) : NULL;
    if (!self->flag) {
        tb_clamp_destroy(&self);
        return NULL;
    }
    return self;
}

void tb_clamp_destroy(tb_clamp_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free((*self_p)->ring);
    free((*self_p)->queued);
    free((*self_p)->flag);
    for (int b = 0; b < (*self_p)->nscan; b++) {
        free((*self_p)->scan[b].flag);
        free((*self_p)->scan[b].hits);
    }
    free((*self_p)->scan);
    free(*self_p);
    *self_p = NULL;
}

typedef struct {
    float lo[8];       /* (1 - J) tan dist_k: the smallest allowance any cell can have */
    double tan_len[8]; /* tan dist_k, metres */
    const tb_clamp_params_t *p;
    const tb_topo_t *t;
} s_clamp_t;

/* The allowance factor of cell c this step. */
static double s_factor(const s_clamp_t *s, size_t c)
{
    int64_t j = (int64_t)(c / (size_t)s->t->w), i = (int64_t)(c % (size_t)s->t->w);
    uint64_t bits =
        tb_hash_cell(s->p->key, tb_frame_lattice_x(s->t->box, i), tb_frame_lattice_y(s->t->box, j));
    return 1.0 - s->p->jitter * tb_hash_unit(bits);
}

/* The allowance of cell c towards direction k, as the float every evaluation uses. */
static inline float s_allow(const s_clamp_t *s, double factor, int k)
{
    return (float)(factor * s->tan_len[k]);
}

/* The lowest height solved cell c may have under its neighbours' current heights (its own height
 * when nothing binds). Hashes only when the smallest possible allowance would bind. */
static float s_limit(const s_clamp_t *s, const uint8_t *node, const float *h, size_t c)
{
    const ptrdiff_t *off = s->t->noff[tb_topo_edge(node[c])];
    float hc = h[c], lo = hc;
    for (int k = 0; k < 8; k++) {
        float v = h[(ptrdiff_t)c + off[k]] + s->lo[k];
        lo = v < lo ? v : lo;
    }
    if (!(lo < hc))
        return hc;
    double f = s_factor(s, c);
    float best = hc;
    for (int k = 0; k < 8; k++) {
        float v = h[(ptrdiff_t)c + off[k]] + s_allow(s, f, k);
        best = v < best ? v : best;
    }
    return best;
}

static void s_init(s_clamp_t *s, const tb_topo_t *t, const tb_clamp_params_t *p)
{
    s->p = p;
    s->t = t;
    for (int k = 0; k < 8; k++) {
        s->tan_len[k] = p->tan_talus * t->len_m[k];
        s->lo[k] = (float)((1.0 - p->jitter) * s->tan_len[k]);
        /* The float of the smallest factor must not exceed any factor's float. */
        if ((double)s->lo[k] > (1.0 - p->jitter) * s->tan_len[k])
            s->lo[k] = nextafterf(s->lo[k], 0);
    }
}

/* Marks in fl[] the cells of row j that even the smallest allowance would lower: a branch-free
 * pass over the inner columns (it vectorises); the edge columns of a wrapping box are always
 * marked (they take the exact test). */
static inline __attribute__((always_inline)) void s_mark_row_k(const s_clamp_t *s, const float *h,
                                                               int64_t j, int32_t *restrict fl)
{
    const tb_topo_t *t = s->t;
    int64_t w = t->w;
    const ptrdiff_t W = (ptrdiff_t)w;
    const float *restrict hr = h + (size_t)j * (size_t)w;
    float l0 = s->lo[0], l1 = s->lo[1], l2 = s->lo[2], l3 = s->lo[3], l4 = s->lo[4], l5 = s->lo[5],
          l6 = s->lo[6], l7 = s->lo[7];
    for (int64_t i = 1; i < w - 1; i++) {
        float lo = hr[i - W - 1] + l0;
        float v = hr[i - W] + l1;
        lo = v < lo ? v : lo;
        v = hr[i - W + 1] + l2;
        lo = v < lo ? v : lo;
        v = hr[i - 1] + l3;
        lo = v < lo ? v : lo;
        v = hr[i + 1] + l4;
        lo = v < lo ? v : lo;
        v = hr[i + W - 1] + l5;
        lo = v < lo ? v : lo;
        v = hr[i + W] + l6;
        lo = v < lo ? v : lo;
        v = hr[i + W + 1] + l7;
        lo = v < lo ? v : lo;
        fl[i] = lo < hr[i];
    }
    fl[0] = fl[w - 1] = t->wraps;
}

static void s_mark_row_sse2(const s_clamp_t *s, const float *h, int64_t j, int32_t *restrict fl)
{
    s_mark_row_k(s, h, j, fl);
}

#if TB_SIMD_HAVE_AVX2
TB_SIMD_AVX2 static void s_mark_row_avx2(const s_clamp_t *s, const float *h, int64_t j,
                                         int32_t *restrict fl)
{
    s_mark_row_k(s, h, j, fl);
}
#endif

/* s_mark_row in the copy the box's topology names (common/simd.h). */
static void s_mark_row(const s_clamp_t *s, const float *h, int64_t j, int32_t *restrict fl)
{
#if TB_SIMD_HAVE_AVX2
    if (s->t->avx2) {
        s_mark_row_avx2(s, h, j, fl);
        return;
    }
#endif
    s_mark_row_sse2(s, h, j, fl);
}

/* Lowers cell c to lim and queues it (once) so its neighbours are looked at again. */
static inline void s_lower(tb_clamp_t *self, size_t c, float lim, float *h, size_t *tail,
                           size_t *len)
{
    h[c] = lim;
    if (!self->queued[c]) {
        self->queued[c] = 1;
        self->ring[*tail] = (int32_t)c;
        *tail = *tail + 1 == self->cap ? 0 : *tail + 1;
        (*len)++;
    }
}

/* The worklist: a lowered cell may now hold its neighbours too high. Returns the moves. */
static int64_t s_worklist(tb_clamp_t *self, const s_clamp_t *s, const uint8_t *node, float *h,
                          size_t head, size_t tail, size_t len)
{
    const tb_topo_t *t = s->t;
    int64_t moves = 0;
    while (len > 0) {
        size_t c = (size_t)self->ring[head];
        head = head + 1 == self->cap ? 0 : head + 1;
        len--;
        self->queued[c] = 0;
        const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            if (!(node[n] & TB_NODE_SOLVED))
                continue;
            float lim = s_limit(s, node, h, n);
            if (lim < h[n]) {
                s_lower(self, n, lim, h, &tail, &len);
                moves++;
            }
        }
    }
    return moves;
}

int64_t tb_clamp_repose(tb_clamp_t *self, const tb_topo_t *t, const uint8_t *node,
                        const tb_clamp_params_t *p, float *h)
{
    s_clamp_t s;
    s_init(&s, t, p);
    size_t tail = 0, len = 0;
    int64_t moves = 0;
    /* The scan: lower every cell that violates, in place, and queue it so its neighbours are
     * looked at again with its new height. Only marked cells take the exact test. A cell that
     * only comes to violate because a neighbour was lowered later in the scan is caught by that
     * neighbour's turn in the worklist, so the fixed point is the same. */
    int64_t w = t->w;
    for (int64_t j = 1; j < t->h - 1; j++) {
        size_t row = (size_t)j * (size_t)w;
        s_mark_row(&s, h, j, self->flag);
        for (int64_t i = 0; i < w; i++) {
            size_t c = row + (size_t)i;
            if (!self->flag[i] || !(node[c] & TB_NODE_SOLVED))
                continue;
            float lim = s_limit(&s, node, h, c);
            if (lim < h[c]) {
                s_lower(self, c, lim, h, &tail, &len);
                moves++;
            }
        }
    }
    return moves + s_worklist(self, &s, node, h, 0, tail, len);
}

typedef struct {
    tb_clamp_t *self;
    const s_clamp_t *s;
    const uint8_t *node;
    const float *h;
    const tb_band_t *bands;
} s_scan_ctx_t;

/* Band b's scan: lists the cells that violate on the surface as it is, writing nothing else. */
static void s_scan_band(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_scan_ctx_t *x = ctx_;
    s_scan_t *sc = &x->self->scan[b];
    const tb_topo_t *t = x->s->t;
    size_t w = (size_t)t->w;
    sc->nhits = 0;
    sc->failed = 0;
    for (int64_t j = x->bands[b].r0; j < x->bands[b].r1; j++) {
        s_mark_row(x->s, x->h, j, sc->flag);
        for (size_t i = 0; i < w; i++) {
            size_t c = (size_t)j * w + i;
            if (!sc->flag[i] || !(x->node[c] & TB_NODE_SOLVED) ||
                !(s_limit(x->s, x->node, x->h, c) < x->h[c]))
                continue;
            if (sc->nhits == sc->cap) {
                size_t cap = sc->cap ? 2 * sc->cap : 1024;
                int32_t *v = realloc(sc->hits, cap * sizeof *v);
                if (!v) {
                    sc->failed = 1;
                    return;
                }
                sc->hits = v;
                sc->cap = cap;
            }
            sc->hits[sc->nhits++] = (int32_t)c;
        }
    }
}

int64_t tb_clamp_repose_bands(tb_clamp_t *self, const tb_topo_t *t, const uint8_t *node,
                              const tb_clamp_params_t *p, float *h, tb_pool_t *pool,
                              const tb_band_t *bands, int nbands)
{
    if (nbands <= 1 || tb_pool_threads(pool) <= 1)
        return tb_clamp_repose(self, t, node, p, h);
    if (nbands > self->nscan) {
        s_scan_t *sc = realloc(self->scan, (size_t)nbands * sizeof *sc);
        if (!sc)
            return tb_clamp_repose(self, t, node, p, h);
        memset(sc + self->nscan, 0, (size_t)(nbands - self->nscan) * sizeof *sc);
        self->scan = sc;
        for (; self->nscan < nbands; self->nscan++)
            if (!(sc[self->nscan].flag = calloc((size_t)self->w, sizeof(int32_t))))
                return tb_clamp_repose(self, t, node, p, h);
    }
    s_clamp_t s;
    s_init(&s, t, p);
    s_scan_ctx_t x = {self, &s, node, h, bands};
    tb_pool_run(pool, (size_t)nbands, s_scan_band, &x);
    for (int b = 0; b < nbands; b++)
        if (self->scan[b].failed)
            return tb_clamp_repose(self, t, node, p, h);
    /* One thread from here: the listed cells in raster order (each re-tested, as the scan would
     * have: an earlier one may have been lowered already), then the worklist. */
    size_t tail = 0, len = 0;
    int64_t moves = 0;
    for (int b = 0; b < nbands; b++)
        for (size_t i = 0; i < self->scan[b].nhits; i++) {
            size_t c = (size_t)self->scan[b].hits[i];
            float lim = s_limit(&s, node, h, c);
            if (lim < h[c]) {
                s_lower(self, c, lim, h, &tail, &len);
                moves++;
            }
        }
    return moves + s_worklist(self, &s, node, h, 0, tail, len);
}

int64_t tb_clamp_repose_sweep(const tb_topo_t *t, const uint8_t *node, const tb_clamp_params_t *p,
                              float *h)
{
    s_clamp_t s;
    s_init(&s, t, p);
    float *next = malloc(t->n * sizeof *next);
    if (!next)
        return -1;
    int64_t moves = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t c = 0; c < t->n; c++)
            next[c] = (node[c] & TB_NODE_SOLVED) ? s_limit(&s, node, h, c) : h[c];
        for (size_t c = 0; c < t->n; c++)
            if (next[c] < h[c]) {
                h[c] = next[c];
                changed = 1;
                moves++;
            }
    }
    free(next);
    return moves;
}
