/* The dispatch engine's worker and lease registry: every worker the engine has met (alive or gone,
 * so the records can name them), its identity, its lease, its counters, and the blocklist
 * (docs/distribution.md, "Worker identity", "Leases, fencing and the failure rules").
 *
 * A worker is its connection: the ROUTER's routing id, and with CURVE the client's public key
 * ("key:Z85"; else "conn:" and the XXH3 of the routing id). Its declared name is a label. Each
 * distinct connection gets a small number (tb_worker_t.conn_no) that the job table keeps instead of
 * the string, so a job's "failed on" set costs 4 bytes an entry. Entries are never removed, and
 * pointers to them stay valid for the registry's life (they are allocated one by one).
 *
 * A lease is (job, attempt, worker, start): the worker side of it lives here (`job`, `attempt`,
 * `lease_started_s`), the job side in the job table; the engine's loop changes both together. Not
 * thread-safe: the loop owns it, and the engine's mutex guards other readers.
 */
#ifndef TB_REGISTRY_H
#define TB_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/proto.h"

typedef struct cJSON cJSON;

#define TB_WORKER_NAME_MAX 128

/* A rate limit on repeated warnings: 5 a 10-second window, then one line saying the rest are
 * counted, and the count with the next one printed. */
typedef struct {
    double window_start_s;
    int in_window;
    long suppressed;
} tb_warn_limit_t;

/* Whether a warning may print now; *suppressed is how many were held back before it (print it). */
bool tb_warn_ok(tb_warn_limit_t *l, long *suppressed);

/* Trust (docs/distribution.md, "Verification by replication"). */
typedef enum {
    TB_TRUST_NEW = 0,    /* every result is verified on another worker */
    TB_TRUST_TRUSTED,    /* agreed with another worker; a share of its results is verified */
    TB_TRUST_QUARANTINED /* outside a majority: gets no work, its results are never used */
} tb_trust_t;

typedef struct {
    int index; /* in the registry: stable */
    unsigned char id[256];
    size_t id_bytes;
    char name[TB_WORKER_NAME_MAX]; /* what it declared: for records and logs */
    char conn[TB_WORKER_NAME_MAX]; /* its identity */
    uint32_t conn_no;              /* the connection's number (shared by reconnections of a key) */
    uint32_t threads;
    uint64_t memory_bytes;
    bool alive;
    bool local; /* one of this coordinator's local helpers */
    double last_seen_s;
    double last_sent_s;
    /* the lease */
    int64_t job; /* its job's index in the batch, or -1 */
    uint32_t attempt;
    double lease_started_s;
    /* the spec going out, one chunk a turn (so a large spec never holds up the loop) */
    uint32_t spec_next;
    uint32_t spec_chunks;
    /* the result coming in: in memory, or, when large, straight into a file (`sinking`) */
    tb_transfer_t result_in;
    bool sinking; /* the transfer goes to `sink` (opened at its first bytes) */
    tb_cache_sink_t sink;
    tb_cache_key_t sink_key; /* the entry it becomes */
    const char *sink_dir;    /* the store's directory, or a scratch one */
    /* a cancelled lease whose terminal message is still to come */
    bool draining;
    uint64_t drain_job;
    uint32_t drain_attempt;
    double drain_since_s; /* a worker that never answers its cancel is free again after a while */
    int failures;
    tb_warn_limit_t warn;
    int jobs_done;
    double busy_s;
    tb_trust_t trust;
    int agreed;          /* results that matched another worker's */
    int used_unverified; /* its results used without a second opinion, in every batch so far */
} tb_worker_t;

typedef struct tb_registry_t tb_registry_t;

tb_registry_t *tb_registry_new(tb_err_t *err);
/* Frees the entries (and any result half-received); accepts NULL and sets *self_p to NULL. */
void tb_registry_destroy(tb_registry_t **self_p);

/* The identity of a connection: "key:Z85" for a CURVE user id, else "conn:" + XXH3 of the routing
 * id in hex. */
void tb_registry_conn_id(const void *routing_id, size_t id_bytes, const char *user_id, char *out,
                         size_t n);

/* Registers a worker that said READY (alive, no lease, its transfer accepting nothing until a
 * lease sets the limit). NULL when out of memory or the routing id is over 256 bytes. */
tb_worker_t *tb_registry_add(tb_registry_t *self, const void *routing_id, size_t id_bytes,
                             const char *conn, const char *name, uint32_t threads,
                             uint64_t memory_bytes, bool local);

/* Entries in joining order, alive or not. */
size_t tb_registry_count(const tb_registry_t *self);
tb_worker_t *tb_registry_at(const tb_registry_t *self, size_t i);

/* The live worker with this routing id / declared name, or NULL. */
tb_worker_t *tb_registry_by_id(const tb_registry_t *self, const void *routing_id, size_t bytes);
tb_worker_t *tb_registry_by_name(const tb_registry_t *self, const char *name);

/* Live workers; live ones not quarantined. */
size_t tb_registry_alive(const tb_registry_t *self);

/* Distinct declared names ever registered (meta.json's workers_seen). */
size_t tb_registry_names_seen(const tb_registry_t *self);

/* The blocklist holds connections (never names). */
void tb_registry_blocklist(tb_registry_t *self, const char *conn);
bool tb_registry_blocklisted(const tb_registry_t *self, const char *conn);

/* The workers as meta.json's "workers" array (name, threads, memory_bytes, jobs_done, failures,
 * busy_seconds, local, blocklisted, alive, trust; the job a live one holds is the caller's to add).
 * The caller owns it. */
cJSON *tb_registry_json(const tb_registry_t *self);

/* The name of worker index i, or "?" for an index the registry does not have. */
const char *tb_registry_name(const tb_registry_t *self, int i);

/* "new", "trusted", "quarantined". */
const char *tb_trust_name(tb_trust_t t);

#endif
