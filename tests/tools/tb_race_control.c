/* The ThreadSanitizer step's negative control (scripts/test): a pool section whose tasks all add to
 * one counter without synchronisation - a data race on purpose. Built in build-tsan, it must make
 * ThreadSanitizer report and exit 66; if it does not, the TSan step cannot see a race and says so.
 * Never run as a test of the code. */
#include <stdio.h>

#include "common/pool.h"

static volatile long s_counter; /* volatile: every increment is a memory access */

static void s_task(void *ctx, size_t task, int thread)
{
    (void)ctx;
    (void)task;
    (void)thread;
    for (int i = 0; i < 100000; i++)
        s_counter++;
}

int main(void)
{
    tb_err_t err;
    tb_pool_t *pool = tb_pool_new(4, &err);
    if (!pool) {
        fprintf(stderr, "tb_race_control: %s\n", err.msg);
        return 1;
    }
    tb_pool_run(pool, 8, s_task, NULL);
    tb_pool_destroy(&pool);
    printf("%ld\n", s_counter);
    return 0;
}
