/* Connected components on the cylinder, a row at a time.
 *
 * A cell is foreground when select[value] is non-zero. Each row is cut into horizontal runs of
 * foreground, and a run joins the runs of the row above that it touches 8-connectedly (overlapping
 * or diagonal columns, and across the seam with X wrap: column w - 1 touches column 0) and, in its
 * own row, the run it meets across the seam. Sets of runs are kept with union-find over
 * provisional labels: a run that touches nothing above opens a new label, so labels are numbered
 * in raster order of the runs that open them, and a set's smallest label (its root) is the label of
 * its earliest run. Only the previous row's runs and one parent per label are held: O(w) plus
 * O(labels), never O(cells).
 *
 * After the last row, tb_ccl_stream_resolve numbers the components 0.. in raster order of their
 * first run (the order of the roots), a function of the mask alone. Feeding the same rows to a
 * fresh stream gives every run the same label again (the stream is deterministic), so a later
 * pass over the same rows finds each run's final component through the first pass's resolution:
 * that is how the plan revisits a raster it could not hold (docs/plan.md, "The streamed plan").
 *
 * A stream may carry a record per label (tb_ccl_records_t): each run is added to the record of
 * the label it joins before that label is united with the other sets the run touches, so a record
 * always describes a connected set (its columns form one arc of the circle). Records move when
 * the table grows: a pointer from tb_ccl_stream_record is good until the next row.
 *
 * Typical sizes: a row of 37500 cells has a few hundred runs; the 300 km demo's land opens 310
 * labels (its coasts are smooth: a label opens at every run that touches nothing above it), a
 * ragged painting of the same size many more.
 */
#ifndef TB_PLAN_CCL_H
#define TB_PLAN_CCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct {
    int32_t x0, x1; /* first and last column, inclusive */
    int64_t label;  /* a label of its set, the same in every pass over the same rows */
} tb_ccl_run_t;

/* Per-label records: rec_bytes each (zeroed when the label opens). add folds a run of row y into
 * the record of its label; merge folds record `from` into `into` when two sets unite (into's label
 * is the smaller, the set with the earlier first run). */
typedef struct {
    size_t rec_bytes;
    void (*add)(void *ctx, void *rec, int64_t y, int32_t x0, int32_t x1);
    void (*merge)(void *ctx, void *into, const void *from);
    void *ctx;
} tb_ccl_records_t;

typedef struct tb_ccl_stream_t tb_ccl_stream_t;

/* A stream over rows of w cells (1 <= w < 2^31), X wrapping when wrap_x, foreground where
 * select[value] != 0 (the table is copied). records may be NULL. NULL with *err when memory runs
 * out or w is out of range. */
tb_ccl_stream_t *tb_ccl_stream_new(int64_t w, bool wrap_x, const uint8_t select[256],
                                   const tb_ccl_records_t *records, tb_err_t *err);

/* Adds the next row (w values). 0, or -1 with *err when memory runs out. */
int tb_ccl_stream_row(tb_ccl_stream_t *self, const uint8_t *values, tb_err_t *err);

/* The runs of the row added last, in column order; *n gets their count. Valid until the next row.
 */
const tb_ccl_run_t *tb_ccl_stream_runs(const tb_ccl_stream_t *self, int64_t *n);

/* The root label of label's set as it stands (path halving: not const). */
int64_t tb_ccl_stream_find(tb_ccl_stream_t *self, int64_t label);

/* The record of a root label (NULL without records). Good until the next row. */
void *tb_ccl_stream_record(tb_ccl_stream_t *self, int64_t root);

/* Labels opened so far. */
int64_t tb_ccl_stream_labels(const tb_ccl_stream_t *self);

/* The component of every label (a new array of tb_ccl_stream_labels entries the caller frees),
 * numbered 0.. in raster order of each component's first run, and their count. 0 or -1 with *err.
 */
int tb_ccl_stream_resolve(tb_ccl_stream_t *self, int32_t **comp_out, int64_t *n_comps,
                          tb_err_t *err);

/* Frees the stream and sets *self_p to NULL; accepts NULL. */
void tb_ccl_stream_destroy(tb_ccl_stream_t **self_p);

/* The run of runs[0..n) (column order) that holds column x, or -1. */
int64_t tb_ccl_run_at(const tb_ccl_run_t *runs, int64_t n, int64_t x);

#endif
