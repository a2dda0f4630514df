/* The result hand-over; see delivery.h. A growable ring of (index, result) under one mutex. */
#include "coordinator/farm/delivery.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

typedef struct {
    size_t index;
    tb_result_t *result;
} s_item_t;

struct tb_delivery_t {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    s_item_t *ring;
    size_t head, n, cap;
    size_t outstanding;       /* queued + the one the caller holds */
    size_t outstanding_bytes; /* of those, in memory */
    bool closed;
    int rc;
    tb_err_t err;
    void (*wake)(void *user);
    void *wake_user;
    /* the caller's time with its results, this batch: for the cost model (report/progress.h) */
    double held_since_s; /* when the item it holds was handed out; 0: none */
    double busy_s;
    size_t finished;
};

static size_t s_mem_bytes(const tb_result_t *r)
{
    return r && !tb_result_mapped(r) ? tb_result_bytes(r) : 0;
}

tb_delivery_t *tb_delivery_new(void (*wake)(void *user), void *wake_user, tb_err_t *err)
{
    tb_delivery_t *self = tb_calloc(1, sizeof *self, "the delivery queue", err);
    if (!self)
        return NULL;
    pthread_mutex_init(&self->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&self->cv, &ca);
    pthread_condattr_destroy(&ca);
    self->wake = wake;
    self->wake_user = wake_user;
    return self;
}

static void s_empty(tb_delivery_t *self)
{
    while (self->n) {
        tb_result_destroy(&self->ring[self->head].result);
        self->head = (self->head + 1) % self->cap;
        self->n--;
    }
    self->head = 0;
    self->outstanding = 0;
    self->outstanding_bytes = 0;
}

void tb_delivery_destroy(tb_delivery_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_delivery_t *self = *self_p;
    s_empty(self);
    free(self->ring);
    pthread_mutex_destroy(&self->mu);
    pthread_cond_destroy(&self->cv);
    free(self);
    *self_p = NULL;
}

void tb_delivery_reset(tb_delivery_t *self)
{
    pthread_mutex_lock(&self->mu);
    s_empty(self);
    self->closed = false;
    self->rc = 0;
    self->held_since_s = self->busy_s = 0;
    self->finished = 0;
    memset(&self->err, 0, sizeof self->err);
    pthread_mutex_unlock(&self->mu);
}

void tb_delivery_push(tb_delivery_t *self, size_t index, tb_result_t *result)
{
    pthread_mutex_lock(&self->mu);
    if (self->n == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 16;
        s_item_t *grown = malloc(cap * sizeof *grown);
        if (!grown) { /* the caller then misses it; the batch cannot end well without memory */
            pthread_mutex_unlock(&self->mu);
            tb_result_destroy(&result);
            return;
        }
        for (size_t k = 0; k < self->n; k++)
            grown[k] = self->ring[(self->head + k) % self->cap];
        free(self->ring);
        self->ring = grown;
        self->head = 0;
        self->cap = cap;
    }
    self->ring[(self->head + self->n) % self->cap] = (s_item_t){index, result};
    self->n++;
    self->outstanding++;
    self->outstanding_bytes += s_mem_bytes(result);
    pthread_cond_broadcast(&self->cv);
    pthread_mutex_unlock(&self->mu);
}

void tb_delivery_close(tb_delivery_t *self, int rc, const tb_err_t *err)
{
    pthread_mutex_lock(&self->mu);
    if (!self->closed) {
        self->closed = true;
        self->rc = rc;
        if (err)
            self->err = *err;
    }
    pthread_cond_broadcast(&self->cv);
    pthread_mutex_unlock(&self->mu);
}

void tb_delivery_outstanding(tb_delivery_t *self, size_t *count, size_t *bytes)
{
    pthread_mutex_lock(&self->mu);
    *count = self->outstanding;
    *bytes = self->outstanding_bytes;
    pthread_mutex_unlock(&self->mu);
}

void tb_delivery_service(tb_delivery_t *self, size_t *finished, double *busy_s, size_t *outstanding)
{
    pthread_mutex_lock(&self->mu);
    *finished = self->finished;
    *busy_s = self->busy_s + (self->held_since_s > 0 ? tb_now_s() - self->held_since_s : 0);
    *outstanding = self->outstanding;
    pthread_mutex_unlock(&self->mu);
}

tb_delivery_event_t tb_delivery_wait(tb_delivery_t *self, double timeout_s, size_t *index,
                                     tb_result_t **result, int *rc, tb_err_t *err)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long ns = until.tv_nsec + (long)(timeout_s * 1e9);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&self->mu);
    for (;;) {
        /* a failed batch drops what is queued; a finished one delivers it all first */
        if (self->closed && (self->rc != 0 || self->n == 0)) {
            *rc = self->rc;
            if (err)
                *err = self->err;
            s_empty(self);
            pthread_mutex_unlock(&self->mu);
            return TB_DELIVERY_CLOSED;
        }
        if (self->n) {
            s_item_t it = self->ring[self->head];
            self->head = (self->head + 1) % self->cap;
            self->n--;
            *index = it.index;
            *result = it.result;
            self->held_since_s = tb_now_s();
            pthread_mutex_unlock(&self->mu);
            return TB_DELIVERY_ITEM;
        }
        if (pthread_cond_timedwait(&self->cv, &self->mu, &until) == ETIMEDOUT) {
            pthread_mutex_unlock(&self->mu);
            return TB_DELIVERY_TICK;
        }
    }
}

void tb_delivery_finished(tb_delivery_t *self, size_t bytes)
{
    pthread_mutex_lock(&self->mu);
    if (self->outstanding)
        self->outstanding--;
    self->outstanding_bytes = self->outstanding_bytes > bytes ? self->outstanding_bytes - bytes : 0;
    if (self->held_since_s > 0) {
        self->busy_s += tb_now_s() - self->held_since_s;
        self->finished++;
        self->held_since_s = 0;
    }
    pthread_mutex_unlock(&self->mu);
    if (self->wake)
        self->wake(self->wake_user);
}
