/* A fixed pool of worker threads for data-parallel kernels (docs/solve.md, "Threads").
 *
 * Threads are created once (per solve or per process) and reused for every parallel section: a
 * section is `n_tasks` independent calls fn(ctx, task, thread), handed out dynamically from an
 * atomic counter. Which thread runs which task varies from run to run, so a kernel is deterministic
 * only if each task writes its own outputs and any reduction over tasks is done afterwards, in task
 * order, by the caller: 1 and N threads stay bit-identical (docs/determinism.md, rule 3). The
 * calling thread takes part, so a pool of T threads runs T tasks at once with T - 1 helpers.
 */
#ifndef TB_POOL_H
#define TB_POOL_H

#include <stddef.h>

#include "common/error.h"

typedef struct tb_pool_t tb_pool_t;

/* One task of a parallel section: `task` in [0, n_tasks), `thread` in [0, threads) names the thread
 * running it (for per-thread scratch). */
typedef void (*tb_pool_fn)(void *ctx, size_t task, int thread);

/* A pool that runs sections on `threads` threads in all (the caller plus threads - 1 helpers);
 * threads < 1 means 1. Returns NULL with *err set when a thread cannot be created. */
tb_pool_t *tb_pool_new(int threads, tb_err_t *err);
/* Stops and joins the helpers; accepts NULL and sets *self_p to NULL. */
void tb_pool_destroy(tb_pool_t **self_p);

/* Threads in the pool, the caller included; a NULL pool has 1. */
int tb_pool_threads(const tb_pool_t *self);

/* Runs fn(ctx, task, thread) for every task in [0, n_tasks) and returns when all have finished. A
 * NULL pool or a single-thread pool runs them in order on the caller. Not re-entrant: a task must
 * not start another section on the same pool. */
void tb_pool_run(tb_pool_t *self, size_t n_tasks, tb_pool_fn fn, void *ctx);

/* The number of online processors (at least 1): the default for --threads. */
/* The most threads a run may ask for: TB_POOL_MAX_PER_CORE x the online cores (more only
 * time-slices the same cores, and thousands of threads stall a bake; docs/distribution.md). */
#define TB_POOL_MAX_PER_CORE 8
int tb_pool_max_threads(void);

int tb_pool_default_threads(void);

#endif
