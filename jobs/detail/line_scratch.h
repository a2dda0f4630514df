/* Scratch for the line filters of the detail passes (the shore's and the sea floor's box sums,
 * the deposit's settling): each pool task allocates a line or a block of columns, and a task
 * cannot return an error. tb_line_scratch_alloc records a failed allocation's size in the pass's
 * tb_line_scratch_fail_t, and the pass, after tb_pool_run, turns it into TB_E_NOMEM naming itself
 * and the bytes (tb_line_scratch_check), so a tile whose filter could not run fails instead of
 * coming out unfiltered with exit 0.
 *
 * Tests only: tb_line_scratch_test_fail[filter], when set above 0, makes that many of the next
 * allocations of that filter fail (each failing one counts it down). Nothing but a test sets it;
 * at 0 (always, in a bake) the allocator is malloc. */
#ifndef TB_DETAIL_LINE_SCRATCH_H
#define TB_DETAIL_LINE_SCRATCH_H

#include <stdatomic.h>
#include <stddef.h>

#include "common/error.h"

typedef enum {
    TB_LINE_SEA_FLOOR, /* tile.c: the sea floor's box sums */
    TB_LINE_SETTLE,    /* erosion_droplets_beyer.c: the deposit's settling */
    TB_LINE_SHORE,     /* shore.c: the waterline distance's smoothing */
    TB_LINE_FILTERS
} tb_line_filter_t;

typedef struct {
    tb_line_filter_t filter;
    atomic_size_t bytes; /* the size of a failed allocation, 0 when none failed */
} tb_line_scratch_fail_t;

extern atomic_int tb_line_scratch_test_fail[TB_LINE_FILTERS];

/* malloc(bytes), or NULL with `bytes` recorded in *fail. */
void *tb_line_scratch_alloc(size_t bytes, tb_line_scratch_fail_t *fail);

/* 0 when no allocation failed, else -1 with *err TB_E_NOMEM: "PASS: out of memory for a line
 * buffer of N bytes". */
int tb_line_scratch_check(tb_line_scratch_fail_t *fail, const char *pass, tb_err_t *err);

#endif
