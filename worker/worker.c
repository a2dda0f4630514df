/* The worker loop; see worker.h. One job at a time: the I/O thread (the caller) receives a spec in
 * chunks, starts a job thread, forwards its progress, and sends exactly one terminal message per
 * JOB - the last RESULT chunk or a FAIL - one chunk per loop turn so heartbeats and
 * CANCEL/DISCONNECT are handled between chunks. Every send is non-blocking: a coordinator that went
 * away must never hang the worker inside zmq_send. */
#include "worker/worker.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/blob.h"
#include "common/log.h"
#include "common/pool.h"
#include "coordinator/farm/proto.h"
#include "common/version.h"
#include "jobs/job.h"

/* Specs larger than this (compressed) are refused whatever the kind says. */
#define S_MAX_SPEC_BLOB ((uint64_t)256 << 20)

typedef struct {
    /* set before the thread starts, read-only afterwards */
    uint64_t job_id;
    uint32_t attempt;
    char kind[TB_PROTO_NAME_MAX + 1];
    void *spec_blob;
    size_t spec_blob_bytes;
    tb_pool_t *pool;
    int wake_fd;
    int zstd_level;
    pthread_t thread;
    double started_s;
    /* progress, under lock */
    pthread_mutex_t lock;
    double fraction;
    char note[128];
    bool progress_dirty;
    double last_wake_s;
    /* control and outcome */
    atomic_bool cancel;
    atomic_bool done;
    int rc;
    tb_err_t err;
    void *result_blob;
    size_t result_blob_bytes;
    size_t result_raw_bytes;
    double seconds;
    bool peak_reset;         /* the high-water mark was reset when the job started */
    uint64_t peak_rss_bytes; /* VmHWM at its end: its peak (0: not measured) */
} s_job_t;

typedef enum { S_OUT_NONE, S_OUT_RESULT, S_OUT_FAIL } s_out_kind_t;

typedef struct {
    tb_worker_opts_t opts;
    char name[TB_PROTO_NAME_MAX + 1];
    zsock_t *sock;
    void *raw;
    zcert_t *cert;
    char server_key[64];
    tb_pool_t *pool;
    int wake[2];
    double last_recv_s;
    double last_send_s;
    double lost_since_s; /* when the coordinator was last heard from, across reconnects */
    bool heard;          /* a message came on this connection */
    int backoff_ms;
    bool connected_once;
    /* the spec being received */
    tb_transfer_t spec_in;
    char spec_kind[TB_PROTO_NAME_MAX + 1];
    /* the job running, if any */
    s_job_t *job;
    double last_progress_sent_s;
    /* the terminal message being sent, if any */
    s_out_kind_t out_kind;
    uint64_t out_job;
    uint32_t out_attempt;
    unsigned char *out_blob;
    uint64_t out_peak; /* the attempt's peak memory, sent with its RESULT */
    size_t out_bytes;
    size_t out_offset;
    uint32_t out_index;
    uint32_t out_count;
    tb_msg_t out_fail;
    bool out_blocked; /* the last send found the queue full: wait a little before retrying */
} s_worker_t;

void tb_worker_opts_defaults(tb_worker_opts_t *o)
{
    if (o->threads <= 0)
        o->threads = tb_pool_default_threads();
    if (o->heartbeat_ms <= 0)
        o->heartbeat_ms = 1000;
    if (o->liveness <= 0)
        o->liveness = 3;
    if (o->backoff_init_ms <= 0)
        o->backoff_init_ms = 1000;
    if (o->backoff_max_ms <= 0)
        o->backoff_max_ms = 32000;
    if (o->backoff_max_ms < o->backoff_init_ms)
        o->backoff_max_ms = o->backoff_init_ms;
    if (o->chunk_bytes == 0)
        o->chunk_bytes = TB_PROTO_CHUNK_DEFAULT;
    if (o->chunk_bytes > TB_PROTO_CHUNK_MAX)
        o->chunk_bytes = TB_PROTO_CHUNK_MAX;
}

static bool s_interrupted(const s_worker_t *w)
{
    return w->opts.interrupted && *w->opts.interrupted;
}

static void s_wake(int fd)
{
    char c = 'x';
    ssize_t n = write(fd, &c, 1); /* a full pipe already means "wake up" */
    (void)n;
}

/* ---- the job thread ---- */

static bool s_on_progress(void *user, double fraction, const char *note)
{
    s_job_t *job = user;
    double now = tb_now_s();
    bool wake = false;
    pthread_mutex_lock(&job->lock);
    job->fraction = fraction;
    snprintf(job->note, sizeof job->note, "%s", note ? note : "");
    job->progress_dirty = true;
    if (now - job->last_wake_s > 0.2) {
        job->last_wake_s = now;
        wake = true;
    }
    pthread_mutex_unlock(&job->lock);
    if (wake)
        s_wake(job->wake_fd);
    return atomic_load(&job->cancel);
}

/* The peak resident memory of this process since the last reset (Linux: VmHWM of
 * /proc/self/status, which writing "5" to /proc/self/clear_refs resets to the current RSS). One job
 * runs at a time, so from its start the peak is the job's (with the worker's own few MiB and the
 * spec it was sent). 0 when not readable. */
static bool s_peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static uint64_t s_peak_read(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (uint64_t)kib * 1024;
}

static void *s_job_main(void *arg)
{
    s_job_t *job = arg;
    const tb_job_kind_t *kind = tb_job_find(job->kind);
    void *spec = NULL;
    size_t spec_bytes = 0;
    job->rc = -1;
    if (!kind) {
        tb_err_set(&job->err, TB_E_INVALID, "this worker has no job kind \"%s\"", job->kind);
    } else if (tb_blob_decode(job->spec_blob, job->spec_blob_bytes, kind->max_spec_bytes, &spec,
                              &spec_bytes, &job->err) != 0) {
        tb_err_prefix(&job->err, "spec of job %llu", (unsigned long long)job->job_id);
    } else {
        tb_job_ctx_t ctx = {.threads = tb_pool_threads(job->pool),
                            .pool = job->pool,
                            .progress = s_on_progress,
                            .user = job};
        tb_job_output_t out;
        if (tb_job_run(job->kind, spec, spec_bytes, &ctx, &out, &job->err) == 0) {
            job->result_raw_bytes = out.bytes;
            job->rc = tb_blob_encode(out.data, out.bytes, job->zstd_level, &job->result_blob,
                                     &job->result_blob_bytes, &job->err);
            tb_job_output_free(&out);
        }
        free(spec);
    }
    job->seconds = tb_now_s() - job->started_s;
    /* without a reset the mark is the process's whole life: not the job's, so not sent */
    job->peak_rss_bytes = job->peak_reset ? s_peak_read() : 0;
    atomic_store(&job->done, true);
    s_wake(job->wake_fd);
    return NULL;
}

static void s_job_free(s_job_t **job_p)
{
    s_job_t *job = *job_p;
    if (!job)
        return;
    pthread_mutex_destroy(&job->lock);
    free(job->spec_blob);
    free(job->result_blob);
    free(job);
    *job_p = NULL;
}

/* Cancels and joins the running job, if any, and forgets it. */
static void s_drop_job(s_worker_t *w)
{
    if (w->job) {
        atomic_store(&w->job->cancel, true);
        pthread_join(w->job->thread, NULL);
        s_job_free(&w->job);
    }
    free(w->out_blob);
    w->out_blob = NULL;
    w->out_kind = S_OUT_NONE;
    tb_transfer_reset(&w->spec_in);
}

/* ---- sending ---- */

static int s_send(s_worker_t *w, const tb_msg_t *msg)
{
    tb_err_t err;
    if (tb_proto_send(w->raw, NULL, 0, msg, ZMQ_DONTWAIT, &err) != 0) {
        if (errno != EAGAIN)
            tb_log_debug("%s", err.msg);
        return -1;
    }
    w->last_send_s = tb_now_s();
    return 0;
}

static void s_queue_fail(s_worker_t *w, uint64_t job_id, uint32_t attempt, const tb_err_t *err)
{
    tb_msg_init(&w->out_fail, TB_CMD_FAIL);
    w->out_fail.job_id = job_id;
    w->out_fail.attempt = attempt;
    w->out_fail.code = (uint32_t)err->code;
    tb_msg_set_text(w->out_fail.text, TB_PROTO_TEXT_MAX, err->msg);
    w->out_kind = S_OUT_FAIL;
    w->out_job = job_id;
    w->out_attempt = attempt;
}

/* Sends the next piece of the terminal message; the last one frees the worker for a new job. */
static void s_send_pending(s_worker_t *w)
{
    if (w->out_kind == S_OUT_FAIL) {
        w->out_blocked = s_send(w, &w->out_fail) != 0;
        if (!w->out_blocked)
            w->out_kind = S_OUT_NONE;
        return;
    }
    if (w->out_kind != S_OUT_RESULT)
        return;
    tb_msg_t m;
    tb_msg_init(&m, TB_CMD_RESULT);
    m.job_id = w->out_job;
    m.attempt = w->out_attempt;
    m.chunk_index = w->out_index;
    m.chunk_count = w->out_count;
    m.total_bytes = w->out_bytes;
    m.peak_rss_bytes = w->out_peak;
    m.chunk = w->out_blob + w->out_offset;
    size_t left = w->out_bytes - w->out_offset;
    m.chunk_bytes = left < w->opts.chunk_bytes ? left : w->opts.chunk_bytes;
    w->out_blocked = s_send(w, &m) != 0;
    if (w->out_blocked)
        return;
    w->out_offset += m.chunk_bytes;
    if (++w->out_index == w->out_count) {
        tb_log_debug("job %llu attempt %u: result sent in %u chunks",
                     (unsigned long long)w->out_job, w->out_attempt, w->out_count);
        free(w->out_blob);
        w->out_blob = NULL;
        w->out_kind = S_OUT_NONE;
    }
}

static void s_send_progress(s_worker_t *w)
{
    s_job_t *job = w->job;
    if (!job)
        return;
    tb_msg_t m;
    tb_msg_init(&m, TB_CMD_PROGRESS);
    m.job_id = job->job_id;
    m.attempt = job->attempt;
    pthread_mutex_lock(&job->lock);
    bool dirty = job->progress_dirty;
    double f = job->fraction;
    tb_msg_set_text(m.text, 127, job->note);
    job->progress_dirty = false;
    pthread_mutex_unlock(&job->lock);
    if (!dirty)
        return;
    m.fraction_ppm = (uint32_t)(f < 0 ? 0 : f > 1 ? 1000000 : f * 1e6);
    s_send(w, &m);
    w->last_progress_sent_s = tb_now_s();
}

/* ---- the connection ---- */

static void s_close(s_worker_t *w, int linger_ms)
{
    if (w->sock) {
        zsock_set_linger(w->sock, linger_ms);
        zsock_destroy(&w->sock);
    }
    w->raw = NULL;
}

static int s_connect(s_worker_t *w, tb_err_t *err)
{
    w->sock = zsock_new(ZMQ_DEALER);
    if (!w->sock)
        return tb_err_set(err, TB_E_IO, "cannot create a ZeroMQ socket: %s",
                          zmq_strerror(zmq_errno()));
    zsock_set_linger(w->sock, 0);
    zsock_set_maxmsgsize(w->sock, (int)TB_PROTO_MAXMSGSIZE);
    zsock_set_reconnect_ivl(w->sock, 200);
    if (w->server_key[0]) {
        zcert_apply(w->cert, w->sock);
        zsock_set_curve_serverkey(w->sock, w->server_key);
    }
    /* A local helper connects under the routing id its coordinator handed it, which is how the
     * coordinator knows it for its own (coordinator/farm/local_workers.h). */
    const char *routing_id = getenv(TB_PROTO_ROUTING_ENV);
    if (routing_id && *routing_id && strlen(routing_id) < 256)
        zmq_setsockopt(zsock_resolve(w->sock), ZMQ_ROUTING_ID, routing_id, strlen(routing_id));
    if (zsock_connect(w->sock, "%s", w->opts.endpoint) != 0) {
        int e = zmq_errno();
        s_close(w, 0);
        return tb_err_set(err, TB_E_INVALID, "cannot connect to %s: %s", w->opts.endpoint,
                          zmq_strerror(e));
    }
    w->raw = zsock_resolve(w->sock);
    tb_msg_t ready;
    tb_msg_init(&ready, TB_CMD_READY);
    snprintf(ready.name, sizeof ready.name, "%s", w->name);
    snprintf(ready.build_id, sizeof ready.build_id, "%s", tb_build_id());
    ready.threads = (uint32_t)w->opts.threads;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    ready.memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    s_send(w, &ready);
    w->last_recv_s = tb_now_s(); /* liveness starts now */
    w->heard = false;
    return 0;
}

/* ---- receiving ---- */

static void s_start_job(s_worker_t *w, const tb_msg_t *last_chunk)
{
    s_job_t *job = calloc(1, sizeof *job);
    tb_err_t err;
    if (!job) {
        tb_err_set(&err, TB_E_NOMEM, "out of memory starting a job");
        tb_transfer_reset(&w->spec_in);
        s_queue_fail(w, last_chunk->job_id, last_chunk->attempt, &err);
        return;
    }
    job->job_id = last_chunk->job_id;
    job->attempt = last_chunk->attempt;
    snprintf(job->kind, sizeof job->kind, "%s", w->spec_kind);
    job->spec_blob = tb_transfer_take(&w->spec_in, &job->spec_blob_bytes);
    job->pool = w->pool;
    job->wake_fd = w->wake[1];
    job->zstd_level = w->opts.zstd_level;
    job->started_s = tb_now_s();
    /* The heap the previous job freed goes back to the system first (glibc keeps freed chunks
     * below its mmap threshold resident), so the peak is this job's and not its predecessor's. */
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    job->peak_reset = s_peak_reset();
    pthread_mutex_init(&job->lock, NULL);
    atomic_init(&job->cancel, false);
    atomic_init(&job->done, false);
    if (pthread_create(&job->thread, NULL, s_job_main, job) != 0) {
        tb_err_set(&err, TB_E_INTERNAL, "cannot start a job thread");
        s_queue_fail(w, job->job_id, job->attempt, &err);
        s_job_free(&job);
        return;
    }
    w->job = job;
    tb_log_info("job %llu attempt %u (%s, %zu-byte spec) started on %d threads",
                (unsigned long long)job->job_id, job->attempt, job->kind, job->spec_blob_bytes,
                w->opts.threads);
}

static void s_on_job_chunk(s_worker_t *w, const tb_msg_t *m)
{
    if (w->job || w->out_kind != S_OUT_NONE) {
        /* Answering would break the one-terminal-message rule for the job this worker holds. */
        tb_log_warn("busy: ignored chunk %u of JOB %llu attempt %u", m->chunk_index,
                    (unsigned long long)m->job_id, m->attempt);
        return;
    }
    if (m->chunk_index == 0 && w->spec_in.started) {
        tb_log_warn("JOB %llu attempt %u replaces an unfinished spec transfer",
                    (unsigned long long)m->job_id, m->attempt);
        tb_transfer_reset(&w->spec_in);
    }
    if (m->chunk_index == 0)
        snprintf(w->spec_kind, sizeof w->spec_kind, "%s", m->kind);
    tb_err_t err;
    int r = tb_transfer_add(&w->spec_in, m, &err);
    if (r < 0) {
        tb_log_warn("rejected a JOB chunk: %s", err.msg);
        s_queue_fail(w, m->job_id, m->attempt, &err);
    } else if (r == 1) {
        s_start_job(w, m);
    }
}

/* Handles one message from the coordinator. Returns -1 to keep going, or an exit status. */
static int s_on_message(s_worker_t *w, const tb_msg_t *m)
{
    switch (m->cmd) {
    case TB_CMD_JOB:
        s_on_job_chunk(w, m);
        return -1;
    case TB_CMD_CANCEL:
        if (w->job && w->job->job_id == m->job_id && w->job->attempt == m->attempt) {
            tb_log_info("job %llu attempt %u cancelled by the coordinator",
                        (unsigned long long)m->job_id, m->attempt);
            atomic_store(&w->job->cancel, true);
        } else if (w->out_kind == S_OUT_RESULT && w->out_job == m->job_id &&
                   w->out_attempt == m->attempt) {
            free(w->out_blob);
            w->out_blob = NULL;
            tb_err_t err;
            tb_err_set(&err, TB_E_INTERRUPTED, "cancelled while sending the result");
            s_queue_fail(w, m->job_id, m->attempt, &err);
        }
        return -1;
    case TB_CMD_HEARTBEAT:
        return -1;
    case TB_CMD_DISCONNECT:
        if (m->code == TB_BYE_REFUSED) {
            tb_log_error("the coordinator refused this worker: %s", m->text);
            return 3;
        }
        tb_log_info("the coordinator said goodbye (%s)", m->text[0] ? m->text : "done");
        return 0;
    default:
        tb_log_warn("ignored a %s message: workers do not accept it", tb_proto_cmd_name(m->cmd));
        return -1;
    }
}

/* Drains every message waiting on the socket. Returns -1 to keep going, or an exit status. */
static int s_receive(s_worker_t *w)
{
    for (int k = 0; k < 1000; k++) {
        tb_proto_rx_t rx;
        if (tb_proto_recv(w->raw, &rx, ZMQ_DONTWAIT) != 0)
            return -1;
        w->last_recv_s = w->lost_since_s = tb_now_s();
        w->heard = true;
        w->backoff_ms = w->opts.backoff_init_ms;
        tb_msg_t m;
        tb_err_t err;
        int status = -1;
        if (tb_proto_rx_decode(&rx, 0, &m, &err) != 0)
            tb_log_warn("rejected a message from the coordinator: %s", err.msg);
        else
            status = s_on_message(w, &m);
        tb_proto_rx_close(&rx);
        if (status >= 0)
            return status;
    }
    return -1;
}

/* Collects a finished job: its result goes out in chunks, its error as a FAIL. */
static void s_collect_job(s_worker_t *w)
{
    s_job_t *job = w->job;
    if (!job || !atomic_load(&job->done))
        return;
    pthread_join(job->thread, NULL);
    s_send_progress(w);
    if (job->rc == 0) {
        tb_log_info("job %llu attempt %u done in %.2f s: %zu bytes, %zu compressed",
                    (unsigned long long)job->job_id, job->attempt, job->seconds,
                    job->result_raw_bytes, job->result_blob_bytes);
        w->out_kind = S_OUT_RESULT;
        w->out_peak = job->peak_rss_bytes;
        w->out_job = job->job_id;
        w->out_attempt = job->attempt;
        w->out_blob = job->result_blob;
        job->result_blob = NULL;
        w->out_bytes = job->result_blob_bytes;
        w->out_offset = 0;
        w->out_index = 0;
        w->out_count = tb_proto_chunk_count(w->out_bytes, w->opts.chunk_bytes);
    } else {
        tb_log_warn("job %llu attempt %u failed after %.2f s: %s", (unsigned long long)job->job_id,
                    job->attempt, job->seconds, job->err.msg);
        s_queue_fail(w, job->job_id, job->attempt, &job->err);
        w->out_fail.peak_rss_bytes = job->peak_rss_bytes;
    }
    s_job_free(&w->job);
}

/* Sleeps up to ms, waking early on a signal; returns true when interrupted. */
static bool s_sleep(s_worker_t *w, int ms)
{
    for (int slept = 0; slept < ms; slept += 50) {
        if (s_interrupted(w))
            return true;
        zclock_sleep(ms - slept < 50 ? ms - slept : 50);
    }
    return s_interrupted(w);
}

static int s_setup_curve(s_worker_t *w, tb_err_t *err)
{
    const char *key = w->opts.server_key;
    if (!key) {
        if (w->opts.cert_path)
            return tb_err_set(err, TB_E_INVALID, "--cert needs --server-key as well");
        return 0;
    }
    if (zsys_file_exists(key)) {
        zcert_t *server = zcert_load(key);
        if (!server)
            return tb_err_set(err, TB_E_INVALID, "%s: not a ZeroMQ certificate", key);
        snprintf(w->server_key, sizeof w->server_key, "%s", zcert_public_txt(server));
        zcert_destroy(&server);
    } else if (strlen(key) == 40) {
        snprintf(w->server_key, sizeof w->server_key, "%s", key);
    } else {
        return tb_err_set(err, TB_E_INVALID,
                          "--server-key %s: neither a certificate file nor a 40-character Z85 key",
                          key);
    }
    w->cert = w->opts.cert_path ? zcert_load(w->opts.cert_path) : zcert_new();
    if (!w->cert)
        return tb_err_set(err, TB_E_INVALID, "%s: cannot load the worker certificate",
                          w->opts.cert_path ? w->opts.cert_path : "(new)");
    return 0;
}

static int s_leave(s_worker_t *w, int status)
{
    s_drop_job(w);
    if (w->raw) {
        tb_msg_t bye;
        tb_msg_init(&bye, TB_CMD_DISCONNECT);
        bye.code = TB_BYE_LEAVING;
        tb_msg_set_text(bye.text, TB_PROTO_TEXT_MAX, "worker stopped by a signal");
        s_send(w, &bye);
    }
    s_close(w, 200);
    return status;
}

int tb_worker_run(const tb_worker_opts_t *opts_in, tb_err_t *err)
{
    s_worker_t w;
    memset(&w, 0, sizeof w);
    w.opts = *opts_in;
    w.wake[0] = w.wake[1] = -1;
    tb_worker_opts_defaults(&w.opts);
    if (!w.opts.endpoint)
        return tb_err_set(err, TB_E_INVALID, "no endpoint to connect to (--connect)"), 1;
    if (w.opts.name && w.opts.name[0]) {
        snprintf(w.name, sizeof w.name, "%s", w.opts.name);
    } else {
        char host[64] = "worker";
        gethostname(host, sizeof host);
        host[sizeof host - 1] = '\0';
        snprintf(w.name, sizeof w.name, "%s-%ld", host, (long)getpid());
    }
    tb_msg_t probe;
    tb_msg_init(&probe, TB_CMD_READY);
    snprintf(probe.name, sizeof probe.name, "%s", w.name);
    snprintf(probe.build_id, sizeof probe.build_id, "%s", tb_build_id());
    probe.threads = 1;
    unsigned char scratch[TB_PROTO_HEADER_MAX];
    size_t len;
    if (tb_proto_encode(&probe, scratch, sizeof scratch, &len, err) != 0)
        return tb_err_prefix(err, "--name \"%s\"", w.name), 1;
    if (s_setup_curve(&w, err) != 0)
        return 1;
    if (pipe(w.wake) != 0)
        return tb_err_set(err, TB_E_IO, "cannot create a pipe: %s", strerror(errno)), 1;
    for (int i = 0; i < 2; i++) {
        fcntl(w.wake[i], F_SETFL, fcntl(w.wake[i], F_GETFL) | O_NONBLOCK);
        fcntl(w.wake[i], F_SETFD, FD_CLOEXEC);
    }
    int status = 1;
    w.pool = tb_pool_new(w.opts.threads, err);
    if (!w.pool)
        goto done;
    tb_transfer_init(&w.spec_in, S_MAX_SPEC_BLOB);
    w.backoff_ms = w.opts.backoff_init_ms;
    if (s_connect(&w, err) != 0)
        goto done;
    w.lost_since_s = tb_now_s();
    tb_log_info("worker %s (%d threads, build %s) connecting to %s", w.name, w.opts.threads,
                tb_build_id(), w.opts.endpoint);
    const double hb_s = w.opts.heartbeat_ms / 1000.0;
    for (;;) {
        if (s_interrupted(&w)) {
            tb_log_info("stopping on a signal");
            status = s_leave(&w, 128 + (int)*w.opts.interrupted);
            goto done;
        }
        double now = tb_now_s();
        long timeout_ms = (long)((w.last_send_s + hb_s - now) * 1000) + 1;
        if (timeout_ms < 1)
            timeout_ms = 1;
        if (timeout_ms > w.opts.heartbeat_ms)
            timeout_ms = w.opts.heartbeat_ms;
        if (w.out_kind != S_OUT_NONE)
            timeout_ms = w.out_blocked ? 10 : 0;
        zmq_pollitem_t items[2] = {{w.raw, 0, ZMQ_POLLIN, 0}, {NULL, w.wake[0], ZMQ_POLLIN, 0}};
        if (zmq_poll(items, 2, timeout_ms) < 0 && zmq_errno() != EINTR) {
            tb_err_set(err, TB_E_IO, "zmq_poll failed: %s", zmq_strerror(zmq_errno()));
            status = s_leave(&w, 1);
            goto done;
        }
        if (items[1].revents & ZMQ_POLLIN) {
            char drain[64];
            while (read(w.wake[0], drain, sizeof drain) > 0) {
            }
        }
        if (items[0].revents & ZMQ_POLLIN) {
            int st = s_receive(&w);
            if (st >= 0) {
                status = st;
                s_drop_job(&w);
                s_close(&w, 0);
                goto done;
            }
        }
        if (w.job) {
            s_collect_job(&w);
            if (w.job && tb_now_s() - w.last_progress_sent_s > hb_s / 2)
                s_send_progress(&w);
        }
        s_send_pending(&w);
        now = tb_now_s();
        if (now - w.last_send_s >= hb_s) {
            tb_msg_t hb;
            tb_msg_init(&hb, TB_CMD_HEARTBEAT);
            s_send(&w, &hb);
        }
        if (now - w.last_recv_s > w.opts.liveness * hb_s) {
            /* One last look before giving up: after a stall of our own (a paused VM, SIGSTOP)
             * the coordinator's heartbeats may still be on their way through libzmq's I/O
             * thread, and it is our silence, not the coordinator's, that needs forgiving. */
            zmq_pollitem_t last = {w.raw, 0, ZMQ_POLLIN, 0};
            if (zmq_poll(&last, 1, w.opts.heartbeat_ms / 2 + 1) > 0) {
                int st = s_receive(&w);
                if (st >= 0) {
                    status = st;
                    s_drop_job(&w);
                    s_close(&w, 0);
                    goto done;
                }
                continue;
            }
            if (w.opts.give_up_s > 0 && now - w.lost_since_s > w.opts.give_up_s) {
                tb_log_error("no coordinator at %s for %.0f s; giving up", w.opts.endpoint,
                             now - w.lost_since_s);
                status = s_leave(&w, 4);
                goto done;
            }
            /* Not a word on this connection: a CURVE handshake the coordinator refused looks
             * exactly like this from here (docs/distribution.md, "Security"). */
            const char *hint =
                w.heard ? ""
                : w.server_key[0]
                    ? " (no answer at all: CURVE refused this worker - check --server-key and "
                      "that its certificate is in the coordinator's --curve-clients, which logs "
                      "the refusal - or another live worker holds this --name)"
                    : " (no answer at all: a coordinator with CURVE keys refuses a worker without "
                      "--server-key, and one whose --name another live worker holds)";
            tb_log_warn("no word from the coordinator for %.1f s; reconnecting in %.1f s%s",
                        now - w.last_recv_s, w.backoff_ms / 1000.0, hint);
            s_drop_job(&w);
            s_close(&w, 0);
            if (s_sleep(&w, w.backoff_ms))
                continue;
            w.backoff_ms =
                w.backoff_ms * 2 > w.opts.backoff_max_ms ? w.opts.backoff_max_ms : w.backoff_ms * 2;
            if (s_connect(&w, err) != 0) {
                status = 1;
                goto done;
            }
        }
    }
done:
    s_drop_job(&w);
    s_close(&w, 0);
    tb_transfer_reset(&w.spec_in);
    tb_pool_destroy(&w.pool);
    zcert_destroy(&w.cert);
    for (int i = 0; i < 2; i++)
        if (w.wake[i] >= 0)
            close(w.wake[i]);
    return status;
}
