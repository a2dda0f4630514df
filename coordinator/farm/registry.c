/* The worker and lease registry; see registry.h. */
#include "coordinator/farm/registry.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/log.h"

struct tb_registry_t {
    tb_worker_t **workers;
    size_t n, cap;
    char (*conns)[TB_WORKER_NAME_MAX]; /* conn_no -> connection */
    size_t n_conns, cap_conns;
    char (*blocklist)[TB_WORKER_NAME_MAX];
    size_t n_blocklist;
    size_t names_seen;
};

bool tb_warn_ok(tb_warn_limit_t *l, long *suppressed)
{
    double now = tb_now_s();
    *suppressed = 0;
    if (now - l->window_start_s >= 10) {
        l->window_start_s = now;
        l->in_window = 0;
    }
    if (l->in_window++ < 5) {
        *suppressed = l->suppressed;
        l->suppressed = 0;
        return true;
    }
    if (l->suppressed++ == 0)
        tb_log_warn("more than 5 warnings about one peer within 10 s: the rest are counted, not "
                    "shown");
    return false;
}

tb_registry_t *tb_registry_new(tb_err_t *err)
{
    return tb_calloc(1, sizeof(tb_registry_t), "the worker registry", err);
}

void tb_registry_destroy(tb_registry_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_registry_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++) {
        tb_transfer_reset(&self->workers[i]->result_in);
        if (self->workers[i]->sinking)
            tb_cache_sink_abort(&self->workers[i]->sink);
        free(self->workers[i]);
    }
    free(self->workers);
    free(self->conns);
    free(self->blocklist);
    free(self);
    *self_p = NULL;
}

void tb_registry_conn_id(const void *routing_id, size_t id_bytes, const char *user_id, char *out,
                         size_t n)
{
    if (user_id)
        snprintf(out, n, "key:%.100s", user_id);
    else
        snprintf(out, n, "conn:%016llx", (unsigned long long)XXH3_64bits(routing_id, id_bytes));
}

static int64_t s_conn_no(tb_registry_t *self, const char *conn)
{
    for (size_t i = 0; i < self->n_conns; i++)
        if (strcmp(self->conns[i], conn) == 0)
            return (int64_t)i;
    if (self->n_conns == self->cap_conns) {
        size_t cap = self->cap_conns ? 2 * self->cap_conns : 16;
        char(*grown)[TB_WORKER_NAME_MAX] = realloc(self->conns, cap * TB_WORKER_NAME_MAX);
        if (!grown)
            return -1;
        self->conns = grown;
        self->cap_conns = cap;
    }
    snprintf(self->conns[self->n_conns], TB_WORKER_NAME_MAX, "%s", conn);
    return (int64_t)self->n_conns++;
}

tb_worker_t *tb_registry_add(tb_registry_t *self, const void *routing_id, size_t id_bytes,
                             const char *conn, const char *name, uint32_t threads,
                             uint64_t memory_bytes, bool local)
{
    if (id_bytes > sizeof((tb_worker_t *)0)->id)
        return NULL;
    if (self->n == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 8;
        tb_worker_t **grown = realloc(self->workers, cap * sizeof *grown);
        if (!grown)
            return NULL;
        self->workers = grown;
        self->cap = cap;
    }
    int64_t no = s_conn_no(self, conn);
    tb_worker_t *w = calloc(1, sizeof *w);
    if (!w || no < 0) {
        free(w);
        return NULL;
    }
    bool seen_before = false;
    for (size_t i = 0; i < self->n; i++)
        seen_before |= strcmp(self->workers[i]->name, name) == 0;
    if (!seen_before)
        self->names_seen++;
    w->index = (int)self->n;
    memcpy(w->id, routing_id, id_bytes);
    w->id_bytes = id_bytes;
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->conn, sizeof w->conn, "%s", conn);
    w->conn_no = (uint32_t)no;
    w->threads = threads;
    w->memory_bytes = memory_bytes;
    w->alive = true;
    w->local = local;
    w->job = -1;
    w->last_seen_s = tb_now_s();
    w->sink.fd = -1;
    /* a connection quarantined before (the same CURVE key, reconnecting) stays quarantined */
    for (size_t i = 0; i < self->n; i++)
        if (self->workers[i]->conn_no == w->conn_no &&
            self->workers[i]->trust == TB_TRUST_QUARANTINED)
            w->trust = TB_TRUST_QUARANTINED;
    /* Accepts nothing until a lease sets the limit of its job's result. */
    tb_transfer_init(&w->result_in, 0);
    self->workers[self->n++] = w;
    return w;
}

size_t tb_registry_count(const tb_registry_t *self)
{
    return self->n;
}

tb_worker_t *tb_registry_at(const tb_registry_t *self, size_t i)
{
    return i < self->n ? self->workers[i] : NULL;
}

tb_worker_t *tb_registry_by_id(const tb_registry_t *self, const void *routing_id, size_t bytes)
{
    for (size_t i = 0; i < self->n; i++) {
        tb_worker_t *w = self->workers[i];
        if (w->alive && w->id_bytes == bytes && memcmp(w->id, routing_id, bytes) == 0)
            return w;
    }
    return NULL;
}

tb_worker_t *tb_registry_by_name(const tb_registry_t *self, const char *name)
{
    for (size_t i = 0; i < self->n; i++)
        if (self->workers[i]->alive && strcmp(self->workers[i]->name, name) == 0)
            return self->workers[i];
    return NULL;
}

size_t tb_registry_alive(const tb_registry_t *self)
{
    size_t k = 0;
    for (size_t i = 0; i < self->n; i++)
        k += self->workers[i]->alive;
    return k;
}

size_t tb_registry_names_seen(const tb_registry_t *self)
{
    return self->names_seen;
}

void tb_registry_blocklist(tb_registry_t *self, const char *conn)
{
    if (tb_registry_blocklisted(self, conn))
        return;
    char(*grown)[TB_WORKER_NAME_MAX] =
        realloc(self->blocklist, (self->n_blocklist + 1) * TB_WORKER_NAME_MAX);
    if (!grown)
        return;
    self->blocklist = grown;
    snprintf(self->blocklist[self->n_blocklist++], TB_WORKER_NAME_MAX, "%s", conn);
}

bool tb_registry_blocklisted(const tb_registry_t *self, const char *conn)
{
    for (size_t i = 0; i < self->n_blocklist; i++)
        if (strcmp(self->blocklist[i], conn) == 0)
            return true;
    return false;
}

const char *tb_trust_name(tb_trust_t t)
{
    return t == TB_TRUST_TRUSTED ? "trusted" : t == TB_TRUST_QUARANTINED ? "quarantined" : "new";
}

const char *tb_registry_name(const tb_registry_t *self, int i)
{
    return i >= 0 && (size_t)i < self->n ? self->workers[i]->name : "?";
}

cJSON *tb_registry_json(const tb_registry_t *self)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < self->n; i++) {
        const tb_worker_t *w = self->workers[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", w->name);
        cJSON_AddNumberToObject(o, "threads", w->threads);
        cJSON_AddNumberToObject(o, "memory_bytes", (double)w->memory_bytes);
        cJSON_AddNumberToObject(o, "jobs_done", w->jobs_done);
        cJSON_AddNumberToObject(o, "failures", w->failures);
        cJSON_AddNumberToObject(o, "busy_seconds", w->busy_s);
        cJSON_AddBoolToObject(o, "local", w->local);
        cJSON_AddBoolToObject(o, "blocklisted", tb_registry_blocklisted(self, w->conn));
        cJSON_AddBoolToObject(o, "alive", w->alive);
        cJSON_AddStringToObject(o, "trust", tb_trust_name(w->trust));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}
