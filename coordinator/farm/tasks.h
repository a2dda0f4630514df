/* The dispatch engine's helper threads: work that must never run on the event loop - making and
 * compressing a spec, reading and decoding a stored result, decoding, checking and storing a
 * worker's result - runs here, and the loop collects what finished at its next turn.
 *
 * A task is a struct of the caller's that begins with a tb_task_t; tb_tasks_post queues it, one of
 * the threads runs task->run(task), and the finished task waits on the done list until
 * tb_tasks_take hands it back on the loop's thread. The wake descriptor is readable whenever a task
 * has finished (or tb_tasks_wake was called), so the loop sleeps in zmq_poll on its socket and that
 * descriptor together and wakes at once. Tasks run in the order they were posted (first free
 * thread takes the oldest); nothing is cancelled: destroy waits for the queued and running tasks
 * and hands the unfinished and uncollected ones to `discard` (the owner frees them there).
 */
#ifndef TB_TASKS_H
#define TB_TASKS_H

#include "common/error.h"

typedef struct tb_task_t tb_task_t;
struct tb_task_t {
    void (*run)(tb_task_t *task); /* on a helper thread; must not touch the loop's state */
    tb_task_t *next;              /* the queue's link: not for the owner */
};

typedef struct tb_tasks_t tb_tasks_t;

/* Starts `threads` helper threads (at least 1). NULL with *err on failure. */
tb_tasks_t *tb_tasks_new(int threads, tb_err_t *err);

/* Waits for every queued and running task, passes each task not collected by tb_tasks_take to
 * discard (may be NULL), stops the threads; accepts NULL and sets *self_p to NULL. */
void tb_tasks_destroy(tb_tasks_t **self_p, void (*discard)(tb_task_t *task));

/* Queues a task; it runs on a helper thread and is then handed back by tb_tasks_take. */
void tb_tasks_post(tb_tasks_t *self, tb_task_t *task);

/* One finished task (oldest first), or NULL when none has finished. Also clears the wake
 * descriptor once the done list is empty. */
tb_task_t *tb_tasks_take(tb_tasks_t *self);

/* A descriptor that is readable while a finished task waits or after tb_tasks_wake. */
int tb_tasks_wake_fd(const tb_tasks_t *self);

/* Makes the wake descriptor readable: another thread (the caller's) telling the loop to look again.
 * Async-signal-safe. */
void tb_tasks_wake(tb_tasks_t *self);

/* Tasks posted and not yet collected. */
int tb_tasks_pending(const tb_tasks_t *self);

#endif
