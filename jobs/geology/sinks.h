/* Sink resolution: priority-flood with epsilon (Barnes, Lehman & Mulla 2014, "Priority-flood: an
 * optimal depression-filling and watershed-labeling algorithm for digital elevation models",
 * Computers & Geosciences 62), run only where the D8 router found pits.
 *
 * What it computes: the least surface mu >= h on which every solved cell has a strictly lower
 * neighbour, where "strictly lower" is one float step: the least fixed point of
 *     mu_c = max(h_c, min_k nextafter(mu_k)),   fixed cells held at their height.
 * That surface is unique, so it does not depend on the order any queue pops ties in, on the box, or
 * on which of the methods below produced it; every filled lake becomes a flat with the smallest
 * possible ladder down to its pour point. Afterwards the receivers of every changed cell (and of
 * its neighbours) are recomputed by the jittered router on the filled surface, so every receiver
 * is strictly lower than its donor and no pit is left.
 *
 * How, cheaply: a pit's depression is usually a handful of cells on a channel that the hillslope
 * diffusion just silted up, while its closed basin (everything draining into it) can be a large
 * part of the landmass. So each pit grows its lake in level order (ties by box index) until the
 * pour point - the lowest rim cell that is fixed or has a lower neighbour outside the lake - and
 * the lake alone is flooded, seeded by its rim, then the lake and its rim are re-routed. A fill can
 * leave a pit behind on the rim (a lake that spills into another depression, or a chain of cells an
 * ulp apart on an old lake bed that diffusion roughened); it joins the worklist and is grown next,
 * so a chain costs its length. When the lakes' work passes a budget that follows the earlier calls
 * (half the box's cells at least; sinks.c, s_budget), or from the start
 * when one cell in 64 is a pit (a flat start's nest of lakes), the closed basins of the pits left
 * (everything draining into them) are flooded in one pass instead. Each lake fill only raises cells
 * towards mu and the work stops only when no pit remains, i.e. at mu, so neither the order of the
 * pits nor the switch shows in the result. The queue of the one-pass flood is a radix heap
 * (monotone).
 *
 * tb_sinks_fill_priority_flood_full, the textbook flood of the whole box, is the test reference.
 */
#ifndef TB_GEOLOGY_SINKS_H
#define TB_GEOLOGY_SINKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/pool.h"
#include "jobs/geology/receivers.h"
#include "jobs/geology/topology.h"

typedef struct {
    int64_t calls;       /* calls that had pits */
    int64_t lakes;       /* lakes grown */
    int64_t one_cell;    /* ... of them one-cell lakes taken on the fast path */
    int64_t band_lakes;  /* ... of them resolved by band workers, in parallel */
    int64_t lake_cells;  /* cells in grown lakes */
    int64_t rim_cells;   /* rim cells looked at */
    int64_t fallbacks;   /* calls that ended in the closed-basin flood */
    int64_t basin_cells; /* cells flooded by it */
    double serial_s;     /* wall seconds of the one-thread part (all of it without bands) */
} tb_sinks_stats_t;

typedef struct tb_sinks_t tb_sinks_t;

/* A workspace for boxes of up to `cells` cells (about 17 bytes a cell, plus lists and queues grown
 * on demand and kept). Returns NULL with *err set when memory runs out. The caller owns it. */
tb_sinks_t *tb_sinks_new(size_t cells, tb_err_t *err);

/* Frees the workspace and sets *self_p to NULL; accepts NULL. */
void tb_sinks_destroy(tb_sinks_t **self_p);

/* Resolves the pits the router listed: heights in h are raised to mu (never lowered) and the
 * receivers in dir recomputed where anything changed, with the same jitter. Returns the number of
 * cells flooded (0 when npits is 0), or -1 with *err set when memory runs out or a pit survives
 * (a bug). */
int64_t tb_sinks_fill_priority_flood(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node,
                                     float *h, uint8_t *dir, const int32_t *pits, size_t npits,
                                     const tb_router_jitter_t *jit, tb_err_t *err);

/* The same on `pool`: one worker per band of rows (bands[0..nbands), covering the inner rows)
 * resolves, in parallel, the pits of its rows whose lakes stay two rows clear of its edges (no two
 * workers then touch one cell); the caller's thread resolves the rest, then falls back to the
 * closed-basin flood as above. On a flat start (one cell in 64 a pit) it is one thread. The result
 * is the unique mu, so the bits are those of one thread. */
int64_t tb_sinks_fill_bands(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node, float *h,
                            uint8_t *dir, const int32_t *pits, size_t npits,
                            const tb_router_jitter_t *jit, tb_pool_t *pool, const tb_band_t *bands,
                            int nbands, tb_err_t *err);

/* The reference: the textbook flood over every solved cell of the box, seeded with every fixed cell
 * that borders one, then the receivers of every solved cell. A queue operation per cell on every
 * call; for tests and the benchmark, never the solve. Returns 0 or -1 like the above. */
int tb_sinks_fill_priority_flood_full(tb_sinks_t *self, const tb_topo_t *t, const uint8_t *node,
                                      float *h, uint8_t *dir, const tb_router_jitter_t *jit,
                                      tb_err_t *err);

/* The cells the last one-pass flood covered (the closed basins, or the whole box for _full). */
const int32_t *tb_sinks_closed(const tb_sinks_t *self, size_t *count);

/* Counters accumulated over every call. */
const tb_sinks_stats_t *tb_sinks_stats(const tb_sinks_t *self);

#endif
