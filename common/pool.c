/* The thread pool; see pool.h. A section is published under the mutex with a generation number;
 * each helper takes tasks from an atomic counter until none are left, then reports done. The caller
 * works too and waits until every helper has checked out of the generation. */
#include "common/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct tb_pool_t {
    int threads;
    pthread_t *helpers;
    pthread_mutex_t lock;
    pthread_cond_t start; /* signalled when a new generation is published or on shutdown */
    pthread_cond_t done;  /* signalled when the last helper leaves a generation */
    unsigned long generation;
    int running; /* helpers still inside the current generation */
    int shutdown;
    /* the current section */
    tb_pool_fn fn;
    void *ctx;
    size_t n_tasks;
    atomic_size_t next;
};

typedef struct {
    tb_pool_t *pool;
    int thread;
} s_helper_arg_t;

static void s_work(tb_pool_t *self, int thread)
{
    for (;;) {
        size_t task = atomic_fetch_add(&self->next, 1);
        if (task >= self->n_tasks)
            return;
        self->fn(self->ctx, task, thread);
    }
}

static void *s_helper_main(void *arg_)
{
    s_helper_arg_t *arg = arg_;
    tb_pool_t *self = arg->pool;
    int thread = arg->thread;
    free(arg);
    unsigned long seen = 0;
    pthread_mutex_lock(&self->lock);
    for (;;) {
        while (!self->shutdown && self->generation == seen)
            pthread_cond_wait(&self->start, &self->lock);
        if (self->shutdown)
            break;
        seen = self->generation;
        pthread_mutex_unlock(&self->lock);
        s_work(self, thread);
        pthread_mutex_lock(&self->lock);
        if (--self->running == 0)
            pthread_cond_signal(&self->done);
    }
    pthread_mutex_unlock(&self->lock);
    return NULL;
}

tb_pool_t *tb_pool_new(int threads, tb_err_t *err)
{
    if (threads < 1)
        threads = 1;
    tb_pool_t *self = tb_calloc(1, sizeof *self, "thread pool", err);
    if (!self)
        return NULL;
    self->threads = threads;
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->start, NULL);
    pthread_cond_init(&self->done, NULL);
    self->helpers = tb_calloc((size_t)threads, sizeof(pthread_t), "thread pool", err);
    if (!self->helpers) {
        free(self);
        return NULL;
    }
    for (int t = 1; t < threads; t++) {
        s_helper_arg_t *arg = malloc(sizeof *arg);
        if (!arg || pthread_create(&self->helpers[t], NULL, s_helper_main,
                                   (*arg = (s_helper_arg_t){self, t}, arg)) != 0) {
            free(arg);
            self->threads = t; /* join only those started */
            tb_pool_destroy(&self);
            tb_err_set(err, TB_E_NOMEM, "thread pool: cannot start thread %d of %d", t, threads);
            return NULL;
        }
    }
    return self;
}

void tb_pool_destroy(tb_pool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_pool_t *self = *self_p;
    pthread_mutex_lock(&self->lock);
    self->shutdown = 1;
    pthread_cond_broadcast(&self->start);
    pthread_mutex_unlock(&self->lock);
    for (int t = 1; t < self->threads; t++)
        pthread_join(self->helpers[t], NULL);
    pthread_mutex_destroy(&self->lock);
    pthread_cond_destroy(&self->start);
    pthread_cond_destroy(&self->done);
    free(self->helpers);
    free(self);
    *self_p = NULL;
}

int tb_pool_threads(const tb_pool_t *self)
{
    return self ? self->threads : 1;
}

void tb_pool_run(tb_pool_t *self, size_t n_tasks, tb_pool_fn fn, void *ctx)
{
    if (!self || self->threads == 1 || n_tasks <= 1) {
        for (size_t t = 0; t < n_tasks; t++)
            fn(ctx, t, 0);
        return;
    }
    pthread_mutex_lock(&self->lock);
    self->fn = fn;
    self->ctx = ctx;
    self->n_tasks = n_tasks;
    atomic_store(&self->next, 0);
    self->running = self->threads - 1;
    self->generation++;
    pthread_cond_broadcast(&self->start);
    pthread_mutex_unlock(&self->lock);
    s_work(self, 0);
    pthread_mutex_lock(&self->lock);
    while (self->running > 0)
        pthread_cond_wait(&self->done, &self->lock);
    pthread_mutex_unlock(&self->lock);
}

int tb_pool_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

int tb_pool_max_threads(void)
{
    return TB_POOL_MAX_PER_CORE * tb_pool_default_threads();
}
