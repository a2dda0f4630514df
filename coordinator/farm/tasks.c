/* The engine's helper threads; see tasks.h. Two lists under one mutex (queued, done) and a pipe
 * whose read end the loop polls. */
#include "coordinator/farm/tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_MAX_THREADS 16

typedef struct {
    tb_task_t *head, *tail;
} s_list_t;

struct tb_tasks_t {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    s_list_t queued, done;
    int pending; /* posted, not yet taken */
    bool stopping;
    int wake[2];
    pthread_t threads[S_MAX_THREADS];
    int n_threads;
};

static void s_push(s_list_t *l, tb_task_t *t)
{
    t->next = NULL;
    if (l->tail)
        l->tail->next = t;
    else
        l->head = t;
    l->tail = t;
}

static tb_task_t *s_pop(s_list_t *l)
{
    tb_task_t *t = l->head;
    if (t) {
        l->head = t->next;
        if (!l->head)
            l->tail = NULL;
        t->next = NULL;
    }
    return t;
}

void tb_tasks_wake(tb_tasks_t *self)
{
    char c = 'w';
    ssize_t n = write(self->wake[1], &c, 1); /* a full pipe already means "look again" */
    (void)n;
}

static void *s_main(void *arg)
{
    tb_tasks_t *self = arg;
    pthread_mutex_lock(&self->mu);
    for (;;) {
        while (!self->queued.head && !self->stopping)
            pthread_cond_wait(&self->cv, &self->mu);
        tb_task_t *t = s_pop(&self->queued);
        if (!t)
            break; /* stopping, and nothing left to run */
        pthread_mutex_unlock(&self->mu);
        t->run(t);
        pthread_mutex_lock(&self->mu);
        s_push(&self->done, t);
        tb_tasks_wake(self);
    }
    pthread_mutex_unlock(&self->mu);
    return NULL;
}

tb_tasks_t *tb_tasks_new(int threads, tb_err_t *err)
{
    tb_tasks_t *self = tb_calloc(1, sizeof *self, "the helper threads", err);
    if (!self)
        return NULL;
    if (pipe(self->wake) != 0) {
        free(self);
        tb_err_set(err, TB_E_IO, "cannot create a pipe: %s", strerror(errno));
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(self->wake[i], F_SETFL, fcntl(self->wake[i], F_GETFL) | O_NONBLOCK);
        fcntl(self->wake[i], F_SETFD, FD_CLOEXEC);
    }
    pthread_mutex_init(&self->mu, NULL);
    pthread_cond_init(&self->cv, NULL);
    if (threads < 1)
        threads = 1;
    if (threads > S_MAX_THREADS)
        threads = S_MAX_THREADS;
    /* the program's SIGINT and SIGTERM go to its own threads, never to these */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&self->threads[self->n_threads], NULL, s_main, self) == 0)
            self->n_threads++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (self->n_threads == 0) {
        tb_tasks_destroy(&self, NULL);
        tb_err_set(err, TB_E_INTERNAL, "cannot start the engine's helper threads");
        return NULL;
    }
    return self;
}

void tb_tasks_destroy(tb_tasks_t **self_p, void (*discard)(tb_task_t *task))
{
    if (!self_p || !*self_p)
        return;
    tb_tasks_t *self = *self_p;
    pthread_mutex_lock(&self->mu);
    self->stopping = true;
    pthread_cond_broadcast(&self->cv);
    pthread_mutex_unlock(&self->mu);
    for (int i = 0; i < self->n_threads; i++)
        pthread_join(self->threads[i], NULL);
    tb_task_t *t;
    while ((t = s_pop(&self->done)) != NULL)
        if (discard)
            discard(t);
    pthread_mutex_destroy(&self->mu);
    pthread_cond_destroy(&self->cv);
    close(self->wake[0]);
    close(self->wake[1]);
    free(self);
    *self_p = NULL;
}

void tb_tasks_post(tb_tasks_t *self, tb_task_t *task)
{
    pthread_mutex_lock(&self->mu);
    s_push(&self->queued, task);
    self->pending++;
    pthread_cond_signal(&self->cv);
    pthread_mutex_unlock(&self->mu);
}

tb_task_t *tb_tasks_take(tb_tasks_t *self)
{
    pthread_mutex_lock(&self->mu);
    tb_task_t *t = s_pop(&self->done);
    if (t)
        self->pending--;
    else {
        char drain[64];
        while (read(self->wake[0], drain, sizeof drain) > 0) {
        }
    }
    pthread_mutex_unlock(&self->mu);
    return t;
}

int tb_tasks_wake_fd(const tb_tasks_t *self)
{
    return self->wake[0];
}

int tb_tasks_pending(const tb_tasks_t *self)
{
    pthread_mutex_t *mu = (pthread_mutex_t *)&self->mu;
    pthread_mutex_lock(mu);
    int n = self->pending;
    pthread_mutex_unlock(mu);
    return n;
}
