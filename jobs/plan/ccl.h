/* Connected components on the cylinder, by runs.
 *
 * A cell is foreground when select[value] is non-zero. Foreground cells are cut into horizontal
 * runs and runs are joined with union-find when they touch 8-connectedly: overlapping or diagonal
 * in the row above, and, with X wrap, across the seam (column w - 1 touches column 0 in the same
 * row and the rows either side). Components are numbered 0.. in the order of their first run in
 * raster order (row 0 first), so the numbering is a function of the mask alone.
 *
 * Typical sizes: 76 M cells make some 10^5 to 10^6 runs; runs, not cells, are what is stored, so a
 * label raster is only written by callers that need one.
 */
#ifndef TB_PLAN_CCL_H
#define TB_PLAN_CCL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

typedef struct {
    int32_t y;      /* row */
    int32_t x0, x1; /* first and last column, inclusive */
    int32_t comp;   /* component, 0-based */
} tb_run_t;

typedef struct {
    int64_t w, h;
    bool wrap_x;
    tb_run_t *runs; /* in raster order */
    int64_t n_runs;
    int64_t *row_start; /* h + 1 entries: the runs of row y are row_start[y] .. row_start[y+1]-1 */
    int64_t n_components;
    /* Runs grouped by component: comp_runs[comp_start[c] .. comp_start[c+1]-1] index runs[]. */
    int64_t *comp_start; /* n_components + 1 entries */
    int64_t *comp_runs;  /* n_runs entries */
} tb_ccl_t;

/* Labels the foreground of the w x h row-major `values` (foreground where select[value] != 0).
 * Fills *out, which the caller frees with tb_ccl_free. Returns 0, or -1 with *err set when memory
 * runs out or the grid is wider or taller than 2^31 - 1. */
int tb_ccl_label(const uint8_t *values, int64_t w, int64_t h, bool wrap_x,
                 const uint8_t select[256], tb_ccl_t *out, tb_err_t *err);

/* Frees what tb_ccl_label allocated; accepts a zeroed struct. */
void tb_ccl_free(tb_ccl_t *ccl);

/* The run of row y that contains column x, or -1 when (x, y) is background. */
int64_t tb_ccl_find(const tb_ccl_t *ccl, int64_t x, int64_t y);

#endif
