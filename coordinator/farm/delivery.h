/* The hand-over of results from the dispatch engine's loop to the caller's thread: a queue the loop
 * pushes into without ever waiting, and the caller takes from inside tb_dispatch_run, where it
 * runs on_result / on_take and on_tick (dispatch.h).
 *
 * It counts what the caller has not yet finished with - results queued plus the one whose callback
 * is running - and their bytes in memory, which is what the loop compares with `max_held` before
 * it starts another job. The loop ends a batch with tb_delivery_close (0, or -1 and the error); the
 * caller's tb_delivery_wait then returns the queued results first, then the end. Thread-safe.
 */
#ifndef TB_DELIVERY_H
#define TB_DELIVERY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "coordinator/farm/result.h"

typedef struct tb_delivery_t tb_delivery_t;

/* `wake` (may be NULL) is called after the caller finishes with a result, so the loop looks again
 * at once; `wake_user` is its argument. */
tb_delivery_t *tb_delivery_new(void (*wake)(void *user), void *wake_user, tb_err_t *err);
/* Destroys queued results too; accepts NULL and sets *self_p to NULL. */
void tb_delivery_destroy(tb_delivery_t **self_p);

/* Empties the queue (destroying its results) and opens it for a new batch. */
void tb_delivery_reset(tb_delivery_t *self);

/* The loop: queues job `index`'s result (taken over; NULL for a result kept in the job table). */
void tb_delivery_push(tb_delivery_t *self, size_t index, tb_result_t *result);
/* The loop: the batch is over (rc 0, or -1 with *err); the caller gets what is queued, then this.
 */
void tb_delivery_close(tb_delivery_t *self, int rc, const tb_err_t *err);
/* The loop: what the caller has not finished with yet: count, and bytes held in memory. */
void tb_delivery_outstanding(tb_delivery_t *self, size_t *count, size_t *bytes);

/* The caller's service this batch: results it finished with, the seconds it spent on them (the one
 * it holds now included, so far), and what it has not finished (queued + held). */
void tb_delivery_service(tb_delivery_t *self, size_t *finished, double *busy_s,
                         size_t *outstanding);

typedef enum {
    TB_DELIVERY_ITEM,   /* *index and *result are set: call back, then tb_delivery_finished */
    TB_DELIVERY_TICK,   /* timeout_s passed with nothing to deliver */
    TB_DELIVERY_CLOSED, /* the batch is over and the queue empty: *rc, *err */
} tb_delivery_event_t;

/* The caller: waits up to timeout_s for the next thing to do. */
tb_delivery_event_t tb_delivery_wait(tb_delivery_t *self, double timeout_s, size_t *index,
                                     tb_result_t **result, int *rc, tb_err_t *err);
/* The caller: done with the item tb_delivery_wait gave (whose in-memory size was `bytes`). */
void tb_delivery_finished(tb_delivery_t *self, size_t bytes);

#endif
