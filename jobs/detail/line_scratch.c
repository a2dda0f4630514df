/* The line filters' scratch and its failure report; see line_scratch.h. */
#include "jobs/detail/line_scratch.h"

#include <stdbool.h>
#include <stdlib.h>

atomic_int tb_line_scratch_test_fail[TB_LINE_FILTERS];

void *tb_line_scratch_alloc(size_t bytes, tb_line_scratch_fail_t *fail)
{
    void *p = NULL;
    atomic_int *test = &tb_line_scratch_test_fail[fail->filter];
    int left = atomic_load(test);
    /* tests only: count one failure down, unless another thread took the last one */
    bool injected = false;
    while (left > 0 && !injected)
        injected = atomic_compare_exchange_weak(test, &left, left - 1);
    if (!injected)
        p = malloc(bytes);
    if (!p)
        atomic_store(&fail->bytes, bytes ? bytes : 1);
    return p;
}

int tb_line_scratch_check(tb_line_scratch_fail_t *fail, const char *pass, tb_err_t *err)
{
    size_t bytes = atomic_load(&fail->bytes);
    if (bytes == 0)
        return 0;
    return tb_err_set(err, TB_E_NOMEM, "%s: out of memory for a line buffer of %zu bytes", pass,
                      bytes);
}
