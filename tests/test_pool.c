/* The thread pool: every task runs exactly once, sections reuse the same threads, and a per-task
 * computation reduced in task order gives the same bits at every thread count. */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/pool.h"

typedef struct {
    atomic_int *hits;
    double *partial;
    atomic_int threads_seen[8];
} s_ctx_t;

static void s_task(void *ctx_, size_t task, int thread)
{
    s_ctx_t *ctx = ctx_;
    atomic_fetch_add(&ctx->hits[task], 1);
    atomic_fetch_add(&ctx->threads_seen[thread], 1);
    double acc =
        0; /* a float sum whose bits depend on its order: per task, then reduced in order */
    for (int i = 1; i <= 1000; i++)
        acc += 1.0 / ((double)task * 1000 + i);
    ctx->partial[task] = acc;
}

static double s_run(tb_pool_t *pool, size_t n, s_ctx_t *ctx)
{
    for (size_t i = 0; i < n; i++)
        atomic_store(&ctx->hits[i], 0);
    tb_pool_run(pool, n, s_task, ctx);
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(atomic_load(&ctx->hits[i]), 1);
        total += ctx->partial[i];
    }
    return total;
}

START_TEST(test_every_task_once_and_same_bits)
{
    enum { N = 5000 };
    s_ctx_t ctx = {.hits = calloc(N, sizeof(atomic_int)), .partial = calloc(N, sizeof(double))};
    double serial = s_run(NULL, N, &ctx);
    for (int threads = 1; threads <= 4; threads++) {
        tb_pool_t *pool = tb_pool_new(threads, NULL);
        ck_assert_ptr_nonnull(pool);
        ck_assert_int_eq(tb_pool_threads(pool), threads);
        for (int rep = 0; rep < 50; rep++) /* many sections on the same threads */
            ck_assert_double_eq(s_run(pool, N, &ctx), serial);
        ck_assert_double_eq(s_run(pool, 1, &ctx), ctx.partial[0]);
        s_run(pool, 0, &ctx);
        tb_pool_destroy(&pool);
        ck_assert_ptr_null(pool);
    }
    free(ctx.hits);
    free(ctx.partial);
}
END_TEST

START_TEST(test_helpers_take_part)
{
    /* With 2 threads and slow tasks, both threads run some. */
    enum { N = 64 };
    s_ctx_t ctx = {.hits = calloc(N, sizeof(atomic_int)), .partial = calloc(N, sizeof(double))};
    tb_pool_t *pool = tb_pool_new(2, NULL);
    for (int rep = 0; rep < 200; rep++)
        s_run(pool, N, &ctx);
    ck_assert_int_gt(atomic_load(&ctx.threads_seen[0]), 0);
    ck_assert_int_gt(atomic_load(&ctx.threads_seen[1]), 0);
    tb_pool_destroy(&pool);
    free(ctx.hits);
    free(ctx.partial);
    ck_assert_int_ge(tb_pool_default_threads(), 1);
}
END_TEST

Suite *pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_task_once_and_same_bits);
    tcase_add_test(tc, test_helpers_take_part);
    suite_add_tcase(s, tc);
    return s;
}
