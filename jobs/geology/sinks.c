/* Priority-flood with epsilon over the closed basins only; see sinks.h. */
#include "jobs/geology/sinks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { S_NONE = 0, S_CLOSED = 1, S_QUEUED = 2 };

/* The queue is a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) on the float's bits mapped to an
 * order-preserving uint32: the flood is monotone (a pushed level is never below the last popped),
 * which is all a radix heap needs, and it costs a few cache-friendly moves per cell instead of a
 * binary heap's log n random ones. Cells of equal level pop in no particular order; that cannot
 * change a value (see sinks.h), and tests compare with a flood that runs in another order. */
typedef struct {
    uint32_t key;
    int32_t c;
} s_item_t;

typedef struct {
    s_item_t *v;
    size_t n, cap;
} s_bucket_t;

#define S_BUCKETS 33

/* The lake growth's queue: a binary heap ordered by level, then world key, so that which of two
 * equally high cells joins a lake first is the same in every box. */
typedef struct {
    uint64_t key;
    float h;
    int32_t c;
} s_entry_t;

typedef struct {
    int32_t *v;
    size_t n, cap;
} s_list_t;

struct tb_sinks_t {
    size_t cells;
    uint8_t *mark;    /* S_* per cell; all S_NONE between calls */
    int32_t *closed;  /* cells flooded by the last call (lakes, or closed basins in the fallback) */
    size_t nclosed;
    int32_t *touched; /* seeds, to clear their marks */
    s_bucket_t bucket[S_BUCKETS];
    uint32_t last;    /* the last popped key */
    size_t queued;
    int nomem;
    /* the lake method */
    uint32_t *stamp;  /* per cell: 3 id in lake id, 3 id + 1 on its rim, 3 id + 2 filled */
    uint32_t next_id;
    float *level;     /* new heights of lake cells, computed before any is written */
    s_entry_t *heap;
    size_t nheap, heap_cap;
    s_list_t lake, rim, pits, redo;
    tb_sinks_stats_t stats;
};

tb_sinks_t *tb_sinks_new(size_t cells, tb_err_t *err)
{
    tb_sinks_t *self = tb_calloc(1, sizeof *self, "sinks workspace", err);
    if (!self)
        return NULL;
    self->cells = cells;
    self->mark = tb_calloc(cells, 1, "sinks marks", err);
    self->closed = self->mark ? tb_malloc(cells * sizeof(int32_t), "sinks closed list", err) : NULL;
    self->touched = self->closed ? tb_malloc(cells * sizeof(int32_t), "sinks seed list", err) : NULL;
    self->stamp = self->touched ? tb_calloc(cells, sizeof(uint32_t), "sinks stamps", err) : NULL;
    self->level = self->stamp ? tb_malloc(cells * sizeof(float), "sinks levels", err) : NULL;
    if (!self->level) {
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
    free(self->heap);
    s_list_t *lists[] = {&self->lake, &self->rim, &self->pits, &self->redo};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        free(lists[i]->v);
    for (int b = 0; b < S_BUCKETS; b++)
        free(self->bucket[b].v);
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

static inline int s_bucket_of(uint32_t key, uint32_t last)
{
    return key == last ? 0 : 32 - __builtin_clz(key ^ last);
}

static void s_bucket_add(tb_sinks_t *self, int b, s_item_t it)
{
    s_bucket_t *bk = &self->bucket[b];
    if (bk->n == bk->cap) {
        size_t cap = bk->cap ? 2 * bk->cap : 1024;
        s_item_t *v = realloc(bk->v, cap * sizeof *v);
        if (!v) {
            self->nomem = 1;
            return;
        }
        bk->v = v;
        bk->cap = cap;
    }
    bk->v[bk->n++] = it;
}

static void s_push(tb_sinks_t *self, size_t c, float h)
{
    s_item_t it = {s_key(h), (int32_t)c};
    s_bucket_add(self, s_bucket_of(it.key, self->last), it);
    self->queued++;
}

/* Pops a cell of the lowest level (the queue is not empty). */
static size_t s_pop(tb_sinks_t *self)
{
    if (self->bucket[0].n == 0) {
        int b = 1;
        while (self->bucket[b].n == 0)
            b++;
        s_bucket_t *bk = &self->bucket[b];
        uint32_t low = bk->v[0].key;
        for (size_t s = 1; s < bk->n; s++)
            low = bk->v[s].key < low ? bk->v[s].key : low;
        self->last = low;
        size_t n = bk->n;
        bk->n = 0;
        for (size_t s = 0; s < n; s++) /* every item lands in a lower bucket than b */
            s_bucket_add(self, s_bucket_of(bk->v[s].key, low), bk->v[s]);
    }
    self->queued--;
    return (size_t)self->bucket[0].v[--self->bucket[0].n].c;
}

static void s_reset_queue(tb_sinks_t *self)
{
    for (int b = 0; b < S_BUCKETS; b++)
        self->bucket[b].n = 0;
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

const tb_sinks_stats_t *tb_sinks_stats(const tb_sinks_t *self) { return &self->stats; }

/* ---- the closed-basin flood (fallback and reference) ---- */

/* Pops the queue until empty, raising the S_CLOSED neighbours of each popped cell. */
static void s_flood(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h)
{
    while (self->queued > 0) {
        size_t c = s_pop(self);
        float next = tb_next_up(h[c]);
        for (int k = 0; k < 8; k++) {
            int64_t n = s_nb_any(t, node, c, k);
            if (n < 0 || self->mark[n] != S_CLOSED)
                continue;
            self->mark[n] = S_QUEUED;
            if (h[n] < next)
                h[n] = next;
            s_push(self, (size_t)n, h[n]);
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
    if (self->nomem)
        return tb_err_set(err, TB_E_NOMEM, "sinks: the flood queue cannot grow");
    if (left > 0)
        return tb_err_set(err, TB_E_INTERNAL,
                          "sinks: %zu of %zu flooded cells still have no lower neighbour", left,
                          self->nclosed);
    return 0;
}

/* Floods the closed basins of the listed pits (everything whose D8 path ends in one). */
static int s_closed_basins(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                           uint8_t *dir, const int32_t *pits, size_t npits,
                           const tb_router_jitter_t *jit, tb_err_t *err)
{
    self->nclosed = 0;
    s_reset_queue(self);
    for (size_t s = 0; s < npits; s++) {
        if (self->mark[pits[s]] != S_NONE) /* listed twice: closed[] holds each cell once */
            continue;
        self->mark[pits[s]] = S_CLOSED;
        self->closed[self->nclosed++] = pits[s];
    }
    for (size_t s = 0; s < self->nclosed; s++) {
        size_t c = (size_t)self->closed[s];
        for (int k = 0; k < 8; k++) {
            size_t n = tb_topo_nb(t, node[c], c, k);
            if ((node[n] & TB_NODE_SOLVED) && self->mark[n] == S_NONE && dir[n] == 7 - k) {
                self->mark[n] = S_CLOSED;
                self->closed[self->nclosed++] = (int32_t)n;
            }
        }
    }
    /* Seeds: the open and fixed cells bordering them, at their own heights (their flood level). */
    size_t ntouched = 0;
    for (size_t s = 0; s < self->nclosed; s++) {
        size_t c = (size_t)self->closed[s];
        for (int k = 0; k < 8; k++) {
            size_t n = tb_topo_nb(t, node[c], c, k);
            if (self->mark[n] == S_NONE) {
                self->mark[n] = S_QUEUED;
                self->touched[ntouched++] = (int32_t)n;
                s_push(self, n, h[n]);
            }
        }
    }
    s_flood(self, t, node, h);
    self->stats.basin_cells += (int64_t)self->nclosed;
    return s_finish(self, t, node, h, dir, ntouched, jit, err);
}

int tb_sinks_fill_priority_flood_full(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node,
                                      float *h, uint8_t *dir, const tb_router_jitter_t *jit,
                                      tb_err_t *err)
{
    self->nclosed = 0;
    s_reset_queue(self);
    size_t ntouched = 0;
    for (size_t c = 0; c < t->n; c++)
        if (node[c] & TB_NODE_SOLVED) {
            self->mark[c] = S_CLOSED;
            self->closed[self->nclosed++] = (int32_t)c;
        }
    for (size_t s = 0; s < self->nclosed; s++) {
        size_t c = (size_t)self->closed[s];
        for (int k = 0; k < 8; k++) {
            size_t n = tb_topo_nb(t, node[c], c, k);
            if (self->mark[n] == S_NONE) {
                self->mark[n] = S_QUEUED;
                self->touched[ntouched++] = (int32_t)n;
                s_push(self, n, h[n]);
            }
        }
    }
    s_flood(self, t, node, h);
    return s_finish(self, t, node, h, dir, ntouched, jit, err);
}

/* ---- the lake method ---- */

static int s_list_add(tb_sinks_t *self, s_list_t *l, int32_t v)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        int32_t *p = realloc(l->v, cap * sizeof *p);
        if (!p) {
            self->nomem = 1;
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
    return a->h < b->h || (a->h == b->h && a->key < b->key);
}

static int s_heap_push(tb_sinks_t *self, const tb_topo_t *t, size_t c, float h)
{
    if (self->nheap == self->heap_cap) {
        size_t cap = self->heap_cap ? 2 * self->heap_cap : 1024;
        s_entry_t *p = realloc(self->heap, cap * sizeof *p);
        if (!p) {
            self->nomem = 1;
            return -1;
        }
        self->heap = p;
        self->heap_cap = cap;
    }
    s_entry_t e = {tb_topo_world_key(t, c), h, (int32_t)c};
    size_t i = self->nheap++;
    while (i > 0 && s_before(&e, &self->heap[(i - 1) / 2])) {
        self->heap[i] = self->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    self->heap[i] = e;
    return 0;
}

static size_t s_heap_pop(tb_sinks_t *self)
{
    size_t top = (size_t)self->heap[0].c;
    s_entry_t last = self->heap[--self->nheap];
    size_t n = self->nheap, i = 0;
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        size_t m = (l + 1 < n && s_before(&self->heap[l + 1], &self->heap[l])) ? l + 1 : l;
        if (!s_before(&self->heap[m], &last))
            break;
        self->heap[i] = self->heap[m];
        i = m;
    }
    if (n > 0)
        self->heap[i] = last;
    return top;
}

/* A fresh id (stamps 3 id, 3 id + 1, 3 id + 2); clears the stamps on wrap-around. */
static uint32_t s_new_id(tb_sinks_t *self)
{
    if (self->next_id >= 0x50000000u) {
        memset(self->stamp, 0, self->cells * sizeof(uint32_t));
        self->next_id = 0;
    }
    return ++self->next_id;
}

/* Grows the lake of pit p on the current heights (read only) until its pour point: the lowest rim
 * cell that is fixed or has a lower neighbour outside the lake. The lake's cells are appended to
 * self->lake and its rim (every non-lake neighbour, pour point included) to self->rim. */
static int s_grow(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                  size_t p)
{
    uint32_t id = s_new_id(self), in = 3 * id, rim = 3 * id + 1;
    self->nheap = 0;
    size_t c = p;
    for (;;) {
        /* c joins the lake; its neighbours join the rim. */
        self->stamp[c] = in;
        if (s_list_add(self, &self->lake, (int32_t)c) != 0)
            return -1;
        for (int k = 0; k < 8; k++) {
            size_t n = tb_topo_nb(t, node[c], c, k);
            if (self->stamp[n] == in || self->stamp[n] == rim)
                continue;
            self->stamp[n] = rim;
            if (s_list_add(self, &self->rim, (int32_t)n) != 0 || s_heap_push(self, t, n, h[n]) != 0)
                return -1;
        }
        /* The lowest rim cell: a pour point, or the lake's next cell. */
        size_t b = s_heap_pop(self);
        if (!(node[b] & TB_NODE_SOLVED))
            return 0;
        float hb = h[b];
        for (int k = 0; k < 8; k++) {
            size_t n = tb_topo_nb(t, node[b], b, k);
            if (h[n] < hb && self->stamp[n] != in)
                return 0;
        }
        c = b;
    }
}

/* Priority-flood of the lake just grown (cells lake[l0, l1), rim[r0, r1)) into self->level. Lakes
 * are filled one after another on the current heights: whatever order the pits come in, each fill
 * only raises cells towards mu and the work ends at mu, so the order cannot show. */
static void s_fill_lake(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                        size_t l0, size_t l1, size_t r0, size_t r1)
{
    s_reset_queue(self);
    uint32_t in = self->stamp[self->lake.v[l0]], rim = in + 1, filled = in + 2;
    for (size_t s = l0; s < l1; s++)
        self->level[self->lake.v[s]] = h[self->lake.v[s]];
    for (size_t s = r0; s < r1; s++) /* the rim list also holds the cells that joined the lake */
        if (self->stamp[self->rim.v[s]] == rim)
            s_push(self, (size_t)self->rim.v[s], h[self->rim.v[s]]);
    while (self->queued > 0) {
        size_t c = s_pop(self);
        /* A rim cell's level is its height; a lake cell's is in self->level. */
        float hc = self->stamp[c] == filled ? self->level[c] : h[c];
        float next = tb_next_up(hc);
        for (int k = 0; k < 8; k++) {
            int64_t n = s_nb_any(t, node, c, k);
            if (n < 0 || self->stamp[n] != in)
                continue;
            self->stamp[n] = filled;
            if (self->level[n] < next)
                self->level[n] = next;
            s_push(self, (size_t)n, self->level[n]);
        }
    }
}

/* Receivers of the cells the last lake touched (lake and solved rim cells, once each); the ones
 * left without a lower neighbour join the worklist of pits. */
static void s_reroute(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, const float *h,
                      uint8_t *dir, const tb_router_jitter_t *jit, size_t l0, size_t r0)
{
    uint32_t id = s_new_id(self), seen = 3 * id;
    self->redo.n = 0;
    for (size_t s = l0; s < self->lake.n; s++) {
        self->stamp[self->lake.v[s]] = seen;
        s_list_add(self, &self->redo, self->lake.v[s]);
    }
    for (size_t s = r0; s < self->rim.n; s++) {
        int32_t c = self->rim.v[s];
        if ((node[c] & TB_NODE_SOLVED) && self->stamp[c] != seen) {
            self->stamp[c] = seen;
            s_list_add(self, &self->redo, c);
        }
    }
    tb_receivers_d8_cells(t, node, h, jit, self->redo.v, self->redo.n, dir);
    for (size_t s = 0; s < self->redo.n; s++)
        if (dir[self->redo.v[s]] == TB_DIR_NONE)
            s_list_add(self, &self->pits, self->redo.v[s]);
}

int64_t tb_sinks_fill_priority_flood(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node,
                                     float *h, uint8_t *dir, const int32_t *pits, size_t npits,
                                     const tb_router_jitter_t *jit, tb_err_t *err)
{
    self->nclosed = 0;
    self->nomem = 0;
    if (npits == 0)
        return 0;
    self->stats.calls++;
    self->pits.n = 0;
    for (size_t s = 0; s < npits; s++)
        s_list_add(self, &self->pits, pits[s]);
    int64_t flooded = 0;
    /* Cost only, never bits: a box where one cell in 64 is a pit is a flat start's nest of lakes,
     * which the one-pass flood does at once; otherwise the lakes get half the box of work. */
    size_t work = 0, budget = npits > t->n / 64 ? 0 : t->n / 2 + 4096;
    /* A worklist: a lake's fill can leave a rim cell with no lower neighbour (a chain of cells an
     * ulp apart on an old lake bed), and that pit is taken next, so a chain costs its length. */
    for (size_t next = 0; next < self->pits.n; next++) {
        size_t p = (size_t)self->pits.v[next];
        if (dir[p] != TB_DIR_NONE) /* a later lake took it in, or listed twice */
            continue;
        if (work > budget) {
            /* Deep nests of depressions: flood the closed basins of what is left in one pass.
             * Both compute the same least fixed point, so the switch does not show. */
            self->stats.fallbacks++;
            size_t left = 0;
            for (size_t s = next; s < self->pits.n; s++)
                if (dir[self->pits.v[s]] == TB_DIR_NONE)
                    self->pits.v[left++] = self->pits.v[s];
            if (s_closed_basins(self, t, node, h, dir, self->pits.v, left, jit, err) != 0)
                return -1;
            return flooded + (int64_t)self->nclosed;
        }
        self->lake.n = 0;
        self->rim.n = 0;
        if (s_grow(self, t, node, h, p) != 0)
            break;
        s_fill_lake(self, t, node, h, 0, self->lake.n, 0, self->rim.n);
        for (size_t q = 0; q < self->lake.n; q++)
            h[self->lake.v[q]] = self->level[self->lake.v[q]];
        s_reroute(self, t, node, h, dir, jit, 0, 0);
        self->stats.lakes++;
        self->stats.lake_cells += (int64_t)self->lake.n;
        self->stats.rim_cells += (int64_t)self->rim.n;
        work += self->lake.n + self->rim.n;
        flooded += (int64_t)self->lake.n;
    }
    if (self->nomem)
        return tb_err_set(err, TB_E_NOMEM, "sinks: the lake lists cannot grow");
    return flooded;
}
