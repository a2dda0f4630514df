/* Priority-flood with epsilon over the closed basins only; see sinks.h. */
#include "jobs/geology/sinks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { S_NONE = 0, S_CLOSED = 1, S_QUEUED = 2 };
enum { S_IN = 1, S_RIM = 2, S_FILLED = 3 }; /* lake stamps */

/* The queue is a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) on the float's bits mapped to an
 * order-preserving uint32: the flood is monotone (a pushed level is never below the last popped),
 * which is all a radix heap needs, and it costs a few cache-friendly moves per cell instead of a
 * binary heap's log n random ones. Its radix is 256, not 2: a key waits in the bucket of the
 * highest byte in which it differs from the last popped key, by that byte's value, so it moves at
 * most four times on its way down instead of up to 32 (measured on a young 2048 x 2048 box, whose
 * flood covers 85 % of it every step, the pops' instructions 140 -> 80 per cell-step under
 * callgrind). Cells of equal level pop in no particular order; that cannot change a value (see
 * sinks.h), and tests compare with a flood that runs in another order. */
typedef struct {
    uint32_t key;
    int32_t c;
} s_item_t;

typedef struct {
    s_item_t *v;
    size_t n, cap;
    uint32_t min; /* the least key held (meaningful while n > 0) */
} s_bucket_t;

#define S_LEVELS 4   /* bytes of a key */
#define S_DIGITS 256 /* values of a byte */

/* The lake growth's queue: a binary heap ordered by level, then box index (which of two equally
 * high cells joins a lake first can change the lakes on the way, never mu: see sinks.h). */
typedef struct {
    float h;
    int32_t c;
} s_entry_t;

typedef struct {
    int32_t *v;
    size_t n, cap;
} s_list_t;

/* One worker's state: the queues and lists of the lake method (and the flood's queue). Worker 0
 * is the caller's; workers 1.. resolve the lakes of one band each. */
typedef struct {
    s_bucket_t now;                         /* keys equal to the last popped */
    s_bucket_t bucket[S_LEVELS][S_DIGITS];  /* [highest byte differing from last][its value] */
    uint64_t used[S_LEVELS][S_DIGITS / 64]; /* which buckets hold keys */
    uint32_t last;                          /* the last popped key */
    size_t queued;
    int nomem;
    s_entry_t *heap;
    size_t nheap, heap_cap;
    s_list_t lake, rim, pits, redo;
    s_list_t fifo; /* the closed-basin flood's raised cells, in level order; from fifo_head */
    size_t fifo_head;
    s_list_t defer;  /* a band worker's pits whose lakes may leave its zone */
    size_t zlo, zhi; /* a lake's cells must lie in [zlo, zhi) (its band less two rows a side) */
    size_t work;     /* the last s_lakes' work: lake and rim cells */
    tb_sinks_stats_t stats;
    char pad[64];
} s_work_t;

struct tb_sinks_t {
    size_t cells;
    uint8_t *mark;   /* S_* per cell; all S_NONE between calls */
    int32_t *closed; /* cells flooded by the last call's closed-basin flood */
    size_t nclosed;
    int32_t *touched; /* seeds, to clear their marks */
    /* the lake method */
    uint8_t *stamp; /* per cell: S_IN, S_RIM or S_FILLED for a lake being resolved, else 0
                     * (cleared after each lake: one byte a cell keeps the lakes' neighbourhoods
                     * in few cache lines; band workers' lakes never share a cell) */
    float *level;   /* new heights of lake cells, computed before any is written */
    s_work_t *work; /* workers; [0] the caller's */
    int nwork;
    tb_sinks_stats_t stats;
    /* The lakes' budget (cost only, never bits: see s_budget) */
    size_t lake_work; /* the work the last lakes to finish needed */
    int flood_mode;   /* the last lakes ran out of budget */
    int probe_gap;    /* calls between probes in flood mode */
    int since_probe;
    int probing; /* this call is a probe */
};

static int s_workers(tb_sinks_t *self, int n)
{
    if (n <= self->nwork)
        return 0;
    s_work_t *w = NULL;
    if (posix_memalign((void **)&w, 64, (size_t)n * sizeof *w) != 0)
        return -1;
    memset(w, 0, (size_t)n * sizeof *w);
    if (self->work)
        memcpy(w, self->work, (size_t)self->nwork * sizeof *w);
    free(self->work);
    self->work = w;
    self->nwork = n;
    return 0;
}

tb_sinks_t *tb_sinks_new(size_t cells, tb_err_t *err)
{
    tb_sinks_t *self = tb_calloc(1, sizeof *self, "sinks workspace", err);
    if (!self)
        return NULL;
    self->cells = cells;
    self->mark = tb_calloc(cells, 1, "sinks marks", err);
    self->closed = self->mark ? tb_malloc(cells * sizeof(int32_t), "sinks closed list", err) : NULL;
    self->touched =
        self->closed ? tb_malloc(cells * sizeof(int32_t), "sinks seed list", err) : NULL;
    self->stamp = self->touched ? tb_calloc(cells, 1, "sinks stamps", err) : NULL;
    self->level = self->stamp ? tb_malloc(cells * sizeof(float), "sinks levels", err) : NULL;
    if (self->level && s_workers(self, 1) != 0)
        tb_err_set(err, TB_E_NOMEM, "sinks: out of memory");
    if (!self->work) {
        tb_sinks_destroy(&self);
        return NULL;
    }
    return self;
}

void tb_sinks_destroy(tb_sinks_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_sinks_t *self = *self_p;
    free(self->mark);
    free(self->closed);
    free(self->touched);
    free(self->stamp);
    free(self->level);
    for (int i = 0; i < self->nwork; i++) {
        s_work_t *wk = &self->work[i];
        free(wk->heap);
        s_list_t *lists[] = {&wk->lake, &wk->rim, &wk->pits, &wk->redo, &wk->defer, &wk->fifo};
        for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
            free(lists[l]->v);
        free(wk->now.v);
        for (int l = 0; l < S_LEVELS; l++)
            for (int d = 0; d < S_DIGITS; d++)
                free(wk->bucket[l][d].v);
    }
    free(self->work);
    free(self);
    *self_p = NULL;
}

const int32_t *tb_sinks_closed(const tb_sinks_t *self, size_t *count)
{
    *count = self->nclosed;
    return self->closed;
}

/* Float to uint32, order-preserving (negatives flipped, positives offset). */
static inline uint32_t s_key(float h)
{
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static void s_bucket_add(s_work_t *self, s_bucket_t *bk, s_item_t it)
{
    if (bk->n == bk->cap) {
        size_t cap = bk->cap ? 2 * bk->cap : 256;
        s_item_t *v = realloc(bk->v, cap * sizeof *v);
        if (!v) {
            self->nomem = 1;
            return;
        }
        bk->v = v;
        bk->cap = cap;
    }
    if (bk->n == 0 || it.key < bk->min)
        bk->min = it.key;
    bk->v[bk->n++] = it;
}

/* Files an item by its key against the last popped one (key >= last). */
static inline void s_file(s_work_t *self, s_item_t it)
{
    uint32_t x = it.key ^ self->last;
    if (x == 0) {
        s_bucket_add(self, &self->now, it);
        return;
    }
    int lv = (31 - __builtin_clz(x)) >> 3;
    unsigned d = (it.key >> (8 * lv)) & 0xffu;
    self->used[lv][d >> 6] |= 1ull << (d & 63);
    s_bucket_add(self, &self->bucket[lv][d], it);
}

static void s_push(s_work_t *self, size_t c, float h)
{
    s_item_t it = {s_key(h), (int32_t)c};
    s_file(self, it);
    self->queued++;
}

/* The lowest bucket held (`now` empty, something queued): its digit, its byte level in *lv. */
static unsigned s_lowest(const s_work_t *self, int *lv)
{
    int l = 0, word = 0;
    while (self->used[l][word] == 0) {
        if (++word == S_DIGITS / 64) {
            word = 0;
            l++;
        }
    }
    *lv = l;
    return (unsigned)word * 64 + (unsigned)__builtin_ctzll(self->used[l][word]);
}

/* Pops a cell of the lowest level (the queue is not empty). The lowest keys are in the first
 * bucket held at the lowest byte level: their bytes above it equal last's and that byte is the
 * smallest there; once last is their least key they share its bytes down to that one, so every one
 * moves to a lower level, and no other bucket has to move. */
static size_t s_pop(s_work_t *self)
{
    if (self->now.n == 0) {
        int lv;
        unsigned d = s_lowest(self, &lv);
        self->used[lv][d >> 6] &= ~(1ull << (d & 63));
        s_bucket_t *bk = &self->bucket[lv][d];
        self->last = bk->min;
        size_t n = bk->n;
        bk->n = 0;
        for (size_t s = 0; s < n; s++)
            s_file(self, bk->v[s]);
    }
    self->queued--;
    return (size_t)self->now.v[--self->now.n].c;
}

/* The least key queued (the queue is not empty), without moving anything: the key of `now`, or
 * the least of the lowest bucket held, which s_pop would make the last popped. */
static uint32_t s_min_key(const s_work_t *self)
{
    if (self->now.n > 0)
        return self->last;
    int lv;
    unsigned d = s_lowest(self, &lv);
    return self->bucket[lv][d].min;
}

static void s_reset_queue(s_work_t *self)
{
    self->now.n = 0;
    for (int l = 0; l < S_LEVELS; l++)
        for (int w = 0; w < S_DIGITS / 64; w++) {
            for (uint64_t u = self->used[l][w]; u; u &= u - 1)
                self->bucket[l][w * 64 + __builtin_ctzll(u)].n = 0;
            self->used[l][w] = 0;
        }
    self->last = 0;
    self->queued = 0;
    self->nomem = 0;
}

/* Neighbour k of any cell (solved: fast path; fixed, possibly on the ring: checked), or -1. */
static inline int64_t s_nb_any(const tb_topo_t *t, const uint8_t *node, size_t c, int k)
{
    if (node[c] & TB_NODE_SOLVED)
        return (int64_t)tb_topo_nb(t, node[c], c, k);
    return tb_topo_nb_checked(t, (int64_t)(c % (size_t)t->w), (int64_t)(c / (size_t)t->w), k);
}

const tb_sinks_stats_t *tb_sinks_stats(const tb_sinks_t *self)
{
    return &self->stats;
}

/* ---- the closed-basin flood (fallback and reference) ---- */

static int s_list_add(s_work_t *wk, s_list_t *l, int32_t v);

/* Pops the queue until empty, raising the S_CLOSED neighbours of each popped cell. A neighbour
 * the flood raises (to one float step above the cell it was reached from) goes to a FIFO instead
 * of the radix heap, and one it leaves at its own height to the heap (the plain queue of Zhou, Sun
 * & Fu 2016, "An efficient variant of the Priority-Flood algorithm for filling depressions in
 * raster digital elevation models", Computers & Geosciences 90, and Barnes et al. 2014's
 * Algorithm 3, applied to the epsilon fill). Every cell is taken from whichever of the two holds
 * the lower level, so cells leave in level order as from one queue, each cell's level is fixed
 * when it is first reached, and the result is mu to the bit (sinks.h). Why the FIFO stays sorted:
 * the levels taken never fall, and each raised level is one step above the level just taken.
 * Why the heap's order holds: a cell is taken from the FIFO only when its level is at most the
 * heap's least key, and the heap's last popped key is at most that level, so what it pushes is
 * above the heap's last popped key (what a radix heap needs). Raised cells, most of a lake, cost
 * a list append instead of a heap's filing and moves. */
static void s_flood(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h)
{
    s_work_t *wk = &self->work[0];
    s_list_t *fifo = &wk->fifo;
    fifo->n = 0;
    wk->fifo_head = 0;
    for (;;) {
        size_t c;
        if (wk->fifo_head < fifo->n &&
            (wk->queued == 0 || s_key(h[fifo->v[wk->fifo_head]]) <= s_min_key(wk))) {
            c = (size_t)fifo->v[wk->fifo_head++];
            if (wk->fifo_head == fifo->n)
                fifo->n = wk->fifo_head = 0;
        } else if (wk->queued > 0) {
            c = s_pop(wk);
        } else {
            break;
        }
        float next = tb_next_up(h[c]);
        /* a solved cell's neighbours by its offsets; a fixed one's (a seed, possibly on the
         * ring) checked */
        const ptrdiff_t *off = (node[c] & TB_NODE_SOLVED) ? t->noff[tb_topo_edge(node[c])] : NULL;
        for (int k = 0; k < 8; k++) {
            int64_t n = off ? (int64_t)((ptrdiff_t)c + off[k]) : s_nb_any(t, node, c, k);
            if (n < 0 || self->mark[n] != S_CLOSED)
                continue;
            self->mark[n] = S_QUEUED;
            if (h[n] < next) {
                h[n] = next;
                s_list_add(wk, fifo, (int32_t)n);
            } else {
                s_push(wk, (size_t)n, h[n]);
            }
        }
    }
}

/* Recomputes the receivers of the flooded cells and clears every mark the flood set. */
static int s_finish(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                    uint8_t *dir, size_t ntouched, const tb_router_jitter_t *jit, tb_err_t *err)
{
    size_t left = tb_receivers_d8_cells(t, node, h, jit, self->closed, self->nclosed, dir);
    for (size_t s = 0; s < self->nclosed; s++)
        self->mark[self->closed[s]] = S_NONE;
    for (size_t s = 0; s < ntouched; s++)
        self->mark[self->touched[s]] = S_NONE;
    if (self->work[0].nomem)
        return tb_err_set(err, TB_E_NOMEM, "sinks: the flood queue cannot grow");
    if (left > 0)
        return tb_err_set(err, TB_E_INTERNAL,
                          "sinks: %zu of %zu flooded cells still have no lower neighbour", left,
                          self->nclosed);
    return 0;
}

/* Seeds the flood of the closed cells (marked S_CLOSED, listed in self->closed): the open and
 * fixed cells bordering them, at their own heights (their flood level). Returns how many. */
static size_t s_seed_border(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node,
                            const float *h)
{
    size_t ntouched = 0;
    for (size_t s = 0; s < self->nclosed; s++) {
        size_t c = (size_t)self->closed[s];
        const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            if (self->mark[n] == S_NONE) {
                self->mark[n] = S_QUEUED;
                self->touched[ntouched++] = (int32_t)n;
                s_push(&self->work[0], n, h[n]);
            }
        }
    }
    return ntouched;
}

/* Floods the closed basins of the listed pits (everything whose D8 path ends in one). */
static int s_closed_basins(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                           uint8_t *dir, const int32_t *pits, size_t npits,
                           const tb_router_jitter_t *jit, tb_err_t *err)
{
    self->nclosed = 0;
    s_reset_queue(&self->work[0]);
    for (size_t s = 0; s < npits; s++) {
        if (self->mark[pits[s]] != S_NONE) /* listed twice: closed[] holds each cell once */
            continue;
        self->mark[pits[s]] = S_CLOSED;
        self->closed[self->nclosed++] = pits[s];
    }
    for (size_t s = 0; s < self->nclosed; s++) {
        size_t c = (size_t)self->closed[s];
        const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            if ((node[n] & TB_NODE_SOLVED) && self->mark[n] == S_NONE && dir[n] == 7 - k) {
                self->mark[n] = S_CLOSED;
                self->closed[self->nclosed++] = (int32_t)n;
            }
        }
    }
    /* Cost only: a large closed set in raster order, so that seeding its border and routing it
     * afterwards stream through memory instead of following the walk up the trees. */
    if (self->nclosed > t->n / 32) {
        size_t m = 0;
        for (size_t c = 0; c < t->n; c++)
            if (self->mark[c] == S_CLOSED)
                self->closed[m++] = (int32_t)c;
    }
    size_t ntouched = s_seed_border(self, t, node, h);
    s_flood(self, t, node, h);
    self->stats.basin_cells += (int64_t)self->nclosed;
    return s_finish(self, t, node, h, dir, ntouched, jit, err);
}

int tb_sinks_fill_priority_flood_full(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node,
                                      float *h, uint8_t *dir, const tb_router_jitter_t *jit,
                                      tb_err_t *err)
{
    self->nclosed = 0;
    s_reset_queue(&self->work[0]);
    for (size_t c = 0; c < t->n; c++)
        if (node[c] & TB_NODE_SOLVED) {
            self->mark[c] = S_CLOSED;
            self->closed[self->nclosed++] = (int32_t)c;
        }
    size_t ntouched = s_seed_border(self, t, node, h);
    s_flood(self, t, node, h);
    return s_finish(self, t, node, h, dir, ntouched, jit, err);
}

/* ---- the lake method ---- */

static int s_list_add(s_work_t *wk, s_list_t *l, int32_t v)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        int32_t *p = realloc(l->v, cap * sizeof *p);
        if (!p) {
            wk->nomem = 1;
            return -1;
        }
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

static inline int s_before(const s_entry_t *a, const s_entry_t *b)
{
    return a->h < b->h || (a->h == b->h && a->c < b->c);
}

static int s_heap_push(s_work_t *wk, size_t c, float h)
{
    if (wk->nheap == wk->heap_cap) {
        size_t cap = wk->heap_cap ? 2 * wk->heap_cap : 1024;
        s_entry_t *p = realloc(wk->heap, cap * sizeof *p);
        if (!p) {
            wk->nomem = 1;
            return -1;
        }
        wk->heap = p;
        wk->heap_cap = cap;
    }
    s_entry_t e = {h, (int32_t)c};
    size_t i = wk->nheap++;
    while (i > 0 && s_before(&e, &wk->heap[(i - 1) / 2])) {
        wk->heap[i] = wk->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    wk->heap[i] = e;
    return 0;
}

static size_t s_heap_pop(s_work_t *wk)
{
    size_t top = (size_t)wk->heap[0].c;
    s_entry_t last = wk->heap[--wk->nheap];
    size_t n = wk->nheap, i = 0;
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        size_t m = (l + 1 < n && s_before(&wk->heap[l + 1], &wk->heap[l])) ? l + 1 : l;
        if (!s_before(&wk->heap[m], &last))
            break;
        wk->heap[i] = wk->heap[m];
        i = m;
    }
    if (n > 0)
        wk->heap[i] = last;
    return top;
}

/* Clears the stamps of the lake and rim just resolved (or given up). */
static void s_unstamp(tb_sinks_t *self, s_work_t *wk)
{
    for (size_t s = 0; s < wk->lake.n; s++)
        self->stamp[wk->lake.v[s]] = 0;
    for (size_t s = 0; s < wk->rim.n; s++)
        self->stamp[wk->rim.v[s]] = 0;
}

/* Grows the lake of pit p on the current heights (read only) until its pour point: the lowest rim
 * cell that is fixed or has a lower neighbour outside the lake. The lake's cells are appended to
 * wk->lake and its rim (every non-lake neighbour, pour point included) to wk->rim. Returns 0, -1
 * when memory runs out, 1 when the lake would take a cell outside the worker's zone. */
static int s_grow(tb_sinks_t *self, s_work_t *wk, const tb_topo_t *t, const uint8_t *node,
                  const float *h, size_t p)
{
    const uint8_t in = S_IN, rim = S_RIM;
    wk->nheap = 0;
    size_t c = p;
    for (;;) {
        /* c joins the lake; its neighbours join the rim. */
        if (c < wk->zlo || c >= wk->zhi)
            return 1;
        self->stamp[c] = in;
        if (s_list_add(wk, &wk->lake, (int32_t)c) != 0)
            return -1;
        const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            if (self->stamp[n] == in || self->stamp[n] == rim)
                continue;
            self->stamp[n] = rim;
            if (s_list_add(wk, &wk->rim, (int32_t)n) != 0 || s_heap_push(wk, n, h[n]) != 0)
                return -1;
        }
        /* The lowest rim cell: a pour point, or the lake's next cell. */
        size_t b = s_heap_pop(wk);
        if (!(node[b] & TB_NODE_SOLVED))
            return 0;
        float hb = h[b];
        const ptrdiff_t *ob = t->noff[tb_topo_edge(node[b])];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)b + ob[k]);
            if (h[n] < hb && self->stamp[n] != in)
                return 0;
        }
        c = b;
    }
}

/* Priority-flood of the lake just grown into self->level: the least levels with every lake cell
 * one float step above some neighbour (rim cells at their heights). Dijkstra over the lake cells
 * only, from the ones next to the rim, so the flood touches the lake and its rim and nothing
 * further (the rim's outer side is cold memory). Lakes are filled one after another on the
 * current heights: whatever order the pits come in, each fill only raises cells towards mu and
 * the work ends at mu, so the order cannot show. */
static void s_fill_lake(tb_sinks_t *self, s_work_t *wk, const tb_topo_t *t, const uint8_t *node,
                        const float *h)
{
    s_reset_queue(wk);
    const uint8_t in = S_IN, rim = S_RIM, filled = S_FILLED;
    for (size_t s = 0; s < wk->lake.n; s++) {
        size_t c = (size_t)wk->lake.v[s];
        const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
        float lo = INFINITY;
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            if (self->stamp[n] == rim && h[n] < lo)
                lo = h[n];
        }
        self->level[c] = INFINITY;
        if (lo < INFINITY) {
            float v = tb_next_up(lo);
            self->level[c] = v > h[c] ? v : h[c];
            s_push(wk, c, self->level[c]);
        }
    }
    while (wk->queued > 0) {
        size_t c = s_pop(wk);
        if (self->stamp[c] == filled) /* an older, higher entry */
            continue;
        self->stamp[c] = filled;
        float next = tb_next_up(self->level[c]);
        const ptrdiff_t *off = t->noff[tb_topo_edge(node[c])];
        for (int k = 0; k < 8; k++) {
            size_t n = (size_t)((ptrdiff_t)c + off[k]);
            if (self->stamp[n] != in)
                continue;
            float v = next > h[n] ? next : h[n];
            if (v < self->level[n]) {
                self->level[n] = v;
                s_push(wk, n, v);
            }
        }
    }
}

/* Receivers of the cells the last lake changed: every lake cell, and the rim cells that drained
 * into the lake (a rim cell draining elsewhere keeps its receiver: the lake only rose, which can
 * only lower the lake cells' jittered scores). The ones left without a lower neighbour join the
 * worklist of pits. */
static void s_reroute(tb_sinks_t *self, s_work_t *wk, const tb_topo_t *t, const uint8_t *node,
                      const float *h, uint8_t *dir, const tb_router_jitter_t *jit)
{
    const uint8_t filled = S_FILLED, rim = S_RIM;
    wk->redo.n = 0;
    for (size_t s = 0; s < wk->lake.n; s++)
        s_list_add(wk, &wk->redo, wk->lake.v[s]);
    for (size_t s = 0; s < wk->rim.n; s++) {
        size_t c = (size_t)wk->rim.v[s];
        if (self->stamp[c] != rim || !(node[c] & TB_NODE_SOLVED) || dir[c] == TB_DIR_NONE)
            continue;
        if (self->stamp[tb_topo_nb(t, node[c], c, dir[c])] == filled)
            s_list_add(wk, &wk->redo, (int32_t)c);
    }
    tb_receivers_d8_cells(t, node, h, jit, wk->redo.v, wk->redo.n, dir);
    for (size_t s = 0; s < wk->redo.n; s++)
        if (dir[wk->redo.v[s]] == TB_DIR_NONE)
            s_list_add(wk, &wk->pits, wk->redo.v[s]);
}

/* The commonest lake, one cell: pit p whose lowest neighbour is a pour point (fixed, or with a
 * strictly lower neighbour other than p). Its fill is p = nextafter(that height) - what the lake
 * method computes for the lake {p} - and only p and the cells that drained into p can change
 * receiver (p only rose: for any other neighbour the rise can only lower p's jittered score, which
 * was not the best). A chain of them (an ulp ladder across an old lake bed, broken at its low end
 * by diffusion) then costs a few dozen loads a cell instead of a lake's heap and queue. Donors left
 * without a lower neighbour join the worklist. Returns 1 when p was such a lake, 0 otherwise (and
 * then changes nothing). */
static int s_one_cell_lake(s_work_t *wk, const tb_topo_t *t, const uint8_t *node, float *h,
                           uint8_t *dir, const tb_router_jitter_t *jit, size_t p)
{
    const ptrdiff_t *off = t->noff[tb_topo_edge(node[p])];
    float m = h[(ptrdiff_t)p + off[0]];
    for (int k = 1; k < 8; k++) {
        float v = h[(ptrdiff_t)p + off[k]];
        m = v < m ? v : m;
    }
    int pour = 0;
    for (int k = 0; k < 8 && !pour; k++) {
        size_t q = (size_t)((ptrdiff_t)p + off[k]);
        if (h[q] != m)
            continue;
        if (!(node[q] & TB_NODE_SOLVED)) {
            pour = 1;
            break;
        }
        const ptrdiff_t *oq = t->noff[tb_topo_edge(node[q])];
        for (int kk = 0; kk < 8; kk++) {
            size_t n = (size_t)((ptrdiff_t)q + oq[kk]);
            if (n != p && h[n] < m) {
                pour = 1;
                break;
            }
        }
    }
    if (!pour)
        return 0;
    h[p] = tb_next_up(m);
    int32_t left[8];
    size_t nleft = tb_receivers_d8_after_rise(t, node, h, jit, p, dir, left);
    for (size_t s = 0; s < nleft; s++)
        s_list_add(wk, &wk->pits, left[s]);
    return 1;
}

/* Resolves pits[0..npits) and every pit their lakes leave on their rims (taken at once, while
 * their neighbourhood is still in cache), lake by lake, until the lakes' work (cells and rims)
 * passes `budget`. A band worker (zlo > 0 or zhi < SIZE_MAX) leaves every pit whose lake would
 * leave its zone, and all it did not reach, in wk->defer. Returns 0 when everything was
 * resolved, 1 when the budget ran out (the pits left are in wk->pits), -1 when memory ran out. */
static int s_lakes(tb_sinks_t *self, s_work_t *wk, const tb_topo_t *t, const uint8_t *node,
                   float *h, uint8_t *dir, const tb_router_jitter_t *jit, const int32_t *pits,
                   size_t npits, size_t budget)
{
    size_t work = 0;
    wk->pits.n = 0;
    for (size_t next = 0;;) {
        size_t p;
        if (wk->pits.n > 0)
            p = (size_t)wk->pits.v[--wk->pits.n];
        else if (next < npits)
            p = (size_t)pits[next++];
        else
            break;
        if (dir[p] != TB_DIR_NONE) /* a later lake took it in, or listed twice */
            continue;
        if (p < wk->zlo || p >= wk->zhi) {
            s_list_add(wk, &wk->defer, (int32_t)p);
            continue;
        }
        if (work > budget) {
            s_list_add(wk, &wk->pits, (int32_t)p);
            for (; next < npits; next++)
                s_list_add(wk, &wk->pits, pits[next]);
            wk->work = work;
            return wk->nomem ? -1 : 1;
        }
        if (s_one_cell_lake(wk, t, node, h, dir, jit, p)) {
            wk->stats.lakes++;
            wk->stats.one_cell++;
            wk->stats.lake_cells++;
            wk->stats.rim_cells += 8;
            work += 9;
            continue;
        }
        wk->lake.n = 0;
        wk->rim.n = 0;
        int g = s_grow(self, wk, t, node, h, p);
        if (g != 0) {
            s_unstamp(self, wk);
            if (g < 0)
                return -1;
            s_list_add(wk, &wk->defer, (int32_t)p); /* out of the zone */
            continue;
        }
        s_fill_lake(self, wk, t, node, h);
        for (size_t q = 0; q < wk->lake.n; q++)
            h[wk->lake.v[q]] = self->level[wk->lake.v[q]];
        s_reroute(self, wk, t, node, h, dir, jit);
        s_unstamp(self, wk);
        wk->stats.lakes++;
        wk->stats.lake_cells += (int64_t)wk->lake.n;
        wk->stats.rim_cells += (int64_t)wk->rim.n;
        work += wk->lake.n + wk->rim.n;
    }
    wk->work = work;
    return wk->nomem ? -1 : 0;
}

/* ---- the bands ---- */

typedef struct {
    tb_sinks_t *self;
    const tb_topo_t *t;
    const uint8_t *node;
    float *h;
    uint8_t *dir;
    const tb_router_jitter_t *jit;
    const int32_t *pits;
    size_t npits;
    const tb_band_t *bands;
    int nbands;
    size_t budget; /* the call's lakes budget (s_budget), shared out by rows */
} s_band_ctx_t;

/* The first index of sorted v[0..n) holding a value >= x. */
static size_t s_lower_bound(const int32_t *v, size_t n, size_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((size_t)v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Band b's worker: the pits of its rows (pits are in raster order), lakes confined to its rows
 * less two a side, so no two workers touch one cell: a lake and its rim stay in the band's rows
 * less one a side, and what they read (the rim's neighbours) in the band. */
static void s_band_task(void *ctx_, size_t b, int thread)
{
    (void)thread;
    s_band_ctx_t *x = ctx_;
    s_work_t *wk = &x->self->work[1 + b];
    size_t w = (size_t)x->t->w;
    const tb_band_t *bd = &x->bands[b];
    size_t lo = (size_t)bd->r0 * w, hi = (size_t)bd->r1 * w;
    size_t from = s_lower_bound(x->pits, x->npits, lo), to = s_lower_bound(x->pits, x->npits, hi);
    wk->zlo = (size_t)(bd->r0 + 2) * w;
    wk->zhi = (size_t)(bd->r1 - 2) * w;
    wk->defer.n = 0;
    wk->nomem = 0;
    /* The band's share of the call's budget by rows: a band whose lakes chain (a young plateau
     * spills from lake to lake, 2.2 cells of work a box cell) finishes them here, not on one
     * thread after all the bands. */
    size_t budget = (size_t)((double)x->budget * (double)(hi - lo) / (double)x->t->n) + 4096;
    int rc = s_lakes(x->self, wk, x->t, x->node, x->h, x->dir, x->jit, x->pits + from, to - from,
                     budget);
    if (rc == 1) /* the budget: the rest goes to the serial pass */
        for (size_t s = 0; s < wk->pits.n; s++)
            s_list_add(wk, &wk->defer, wk->pits.v[s]);
}

static void s_stats_add(tb_sinks_stats_t *to, const tb_sinks_stats_t *from)
{
    to->lakes += from->lakes;
    to->one_cell += from->one_cell;
    to->lake_cells += from->lake_cells;
    to->rim_cells += from->rim_cells;
}

int64_t tb_sinks_fill_priority_flood(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node,
                                     float *h, uint8_t *dir, const int32_t *pits, size_t npits,
                                     const tb_router_jitter_t *jit, tb_err_t *err)
{
    tb_band_t one = {1, t->h - 1, 0};
    return tb_sinks_fill_bands(self, t, node, h, dir, pits, npits, jit, NULL, &one, 1, err);
}

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t s_fill(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                      uint8_t *dir, const int32_t *pits, size_t npits,
                      const tb_router_jitter_t *jit, tb_pool_t *pool, const tb_band_t *bands,
                      int nbands, double *serial_from, tb_err_t *err);

/* The lakes' budget, in lake and rim cells, before the closed-basin flood takes what is left.
 * Cost only: both reach mu, so no budget changes a bit. The lakes cost about 30 ns a cell of work
 * and the flood about 150 ns a closed cell, and which wins depends on the landscape: on a young
 * 20 M-cell box at step 50 the lakes finish in 2.2 cells of work a box cell (sinks 59 ns a
 * cell-step, against 154 when they stop at half a box and the flood covers the rest), while on a
 * young 2048 x 2048 box at step 20 they would need 11 (a nest of lakes each spilling into the
 * next) and stopping at half a box is best. The landscape changes slowly from step to step, so the
 * budget follows the last calls: twice the work the last lakes to finish needed (half a box at
 * least); after lakes that ran out, half a box, with a probe of four boxes on the next call and
 * then after 2, 4, ... 1024 calls as probes fail, so failed probes cost little over a run. */
static size_t s_budget(tb_sinks_t *self, size_t n)
{
    size_t base = n / 2 + 4096;
    self->probing = 0;
    if (!self->flood_mode) {
        size_t twice = 2 * self->lake_work + 4096;
        return twice > base ? twice : base;
    }
    if (++self->since_probe < self->probe_gap)
        return base;
    self->since_probe = 0;
    self->probing = 1;
    return 4 * n + 4096;
}

static void s_budget_learn(tb_sinks_t *self, int finished, size_t work)
{
    if (finished) {
        self->lake_work = work;
        self->flood_mode = 0;
    } else if (!self->flood_mode) { /* the next call probes */
        self->flood_mode = 1;
        self->probe_gap = 1;
        self->since_probe = 0;
    } else if (self->probing && self->probe_gap < 1024) {
        self->probe_gap *= 2;
    }
    self->probing = 0;
}

int64_t tb_sinks_fill_bands(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                            uint8_t *dir, const int32_t *pits, size_t npits,
                            const tb_router_jitter_t *jit, tb_pool_t *pool, const tb_band_t *bands,
                            int nbands, tb_err_t *err)
{
    double t0 = s_now(), from = t0;
    int64_t rc = s_fill(self, t, node, h, dir, pits, npits, jit, pool, bands, nbands, &from, err);
    self->stats.serial_s += s_now() - from;
    return rc;
}

/* tb_sinks_fill_bands; *serial_from is set to the time the one-thread part started. */
static int64_t s_fill(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                      uint8_t *dir, const int32_t *pits, size_t npits,
                      const tb_router_jitter_t *jit, tb_pool_t *pool, const tb_band_t *bands,
                      int nbands, double *serial_from, tb_err_t *err)
{
    self->nclosed = 0;
    if (npits == 0)
        return 0;
    self->stats.calls++;
    /* Cost only, never bits: a box where one cell in 64 is a pit is a flat start's nest of lakes,
     * which the one-pass flood does at once; otherwise the lakes get s_budget's work. */
    int flat = npits > t->n / 64;
    size_t budget = flat ? 0 : s_budget(self, t->n);
    s_work_t *wk = &self->work[0];
    wk->nomem = 0;
    wk->zlo = 0;
    wk->zhi = SIZE_MAX;
    wk->defer.n = 0;
    const int32_t *todo = pits;
    size_t ntodo = npits;
    int64_t before = self->stats.lake_cells + self->stats.basin_cells;
    size_t band_work = 0; /* the band workers' lakes work, learnt with the serial pass's */
    if (nbands > 1 && tb_pool_threads(pool) > 1 && !flat) {
        /* The lakes that stay inside a band, one worker a band; then the rest on this thread. */
        if (s_workers(self, 1 + nbands) != 0)
            return tb_err_set(err, TB_E_NOMEM, "sinks: out of memory for %d workers", nbands);
        wk = &self->work[0];
        s_band_ctx_t x = {self, t, node, h, dir, jit, pits, npits, bands, nbands, budget};
        tb_pool_run(pool, (size_t)nbands, s_band_task, &x);
        *serial_from = s_now();
        wk->defer.n = 0;
        for (int b = 0; b < nbands; b++) {
            s_work_t *bw = &self->work[1 + b];
            if (bw->nomem)
                return tb_err_set(err, TB_E_NOMEM, "sinks: the lake lists cannot grow");
            band_work += bw->work;
            for (size_t s = 0; s < bw->defer.n; s++)
                s_list_add(wk, &wk->defer, bw->defer.v[s]);
            s_stats_add(&self->stats, &bw->stats);
            self->stats.band_lakes += bw->stats.lakes;
            memset(&bw->stats, 0, sizeof bw->stats);
        }
        todo = wk->defer.v; /* this worker's zone is the box: it defers nothing */
        ntodo = wk->defer.n;
    }
    int rc = s_lakes(self, wk, t, node, h, dir, jit, todo, ntodo, budget);
    if (!flat && rc >= 0)
        s_budget_learn(self, rc == 0, band_work + wk->work);
    s_stats_add(&self->stats, &wk->stats);
    memset(&wk->stats, 0, sizeof wk->stats);
    if (rc < 0)
        return tb_err_set(err, TB_E_NOMEM, "sinks: the lake lists cannot grow");
    if (rc == 0)
        return self->stats.lake_cells + self->stats.basin_cells - before;
    /* Deep nests of depressions: flood the closed basins of what is left in one pass. Both
     * compute the same least fixed point, so the switch does not show. */
    self->stats.fallbacks++;
    size_t left = 0;
    for (size_t s = 0; s < wk->pits.n; s++)
        if (dir[wk->pits.v[s]] == TB_DIR_NONE)
            wk->pits.v[left++] = wk->pits.v[s];
    if (s_closed_basins(self, t, node, h, dir, wk->pits.v, left, jit, err) != 0)
        return -1;
    return self->stats.lake_cells + self->stats.basin_cells - before;
}
