/* tb_misbehave: a deliberately broken worker, for tests/test_farm_misbehave.sh. It connects to a
 * coordinator and, in order:
 *
 *   1. sends a frame of random bytes                      (expect: logged, rejected)
 *   2. sends a truncated READY                            (expect: logged, rejected)
 *   3. says READY with another build id                   (expect: DISCONNECT "refused")
 *   4. says READY properly, waits for a JOB, then sends
 *      a. a RESULT for its job whose blob checksum lies   (expect: logged, rejected, job re-run)
 *      b. a RESULT for a job that was not leased to it    (expect: logged, rejected)
 *   5. says DISCONNECT and leaves.
 *
 * Prints one line per step to stdout and exits 0 when every step could be carried out and the
 * refusal in step 3 arrived; 1 otherwise. The coordinator's side (that each message was logged and
 * rejected and the run still completed correctly) is checked by the test script.
 *
 * With --attack NAME it is instead one hostile peer of tests/test_farm_attacks.sh, for --timeout S:
 *
 *   replay        answers each region JOB with a result from another bake's store (--from DIR, its
 *                 .cache) of the same box: a valid result made at another step count
 *   other-region  ... with a stored result of another box (another region)
 *   coast-replay  answers the first JOB, a coast job, with the coast result stored in --from DIR (a
 *                 bake of another seed: same planet size, other heights), then leaves
 *   tile-replay   answers the first JOB, a tile job, with the stored result of the same tile from
 *                 --from DIR (a bake of another seed: same tile, same sizes), then leaves
 *   other-tile    ... with a stored result of another tile from --from DIR, then leaves
 *   hijack        says READY under --name, the name of a live worker; takes any JOB it is given
 *   poison        says READY under --name (before the real worker joins) and sends malformed
 *                 messages until it is blocklisted
 *   cycle         on one connection: READY under a new name, take a JOB, FAIL it, DISCONNECT, and
 *                 again (--new-socket: a new connection each time)
 *   hoard         READY, take a JOB, then only heartbeat
 *   oversize      READY, take a JOB, announce a RESULT of 2 GiB and stream --stream-mib of it
 *   flood         300 malformed messages without READY (the warnings about it are rate-limited)
 *   storm         300 connections one after another, each READY under a new name (--name-K), then
 *                 DISCONNECT and closed (the joined/gone lines about them are rate-limited)
 *   lie           a worker that computes every JOB honestly, then alters its answer where no
 *                 check can see it (--lie-kinds: region,coast_block,tile by default): a region's
 *                 first land height 1 m higher, a coast block's middle height 1 m higher, 64
 *                 bytes of a tile's flow map flipped; its checksum recomputed, the spec's echo
 *                 intact (tests/test_farm_verify.sh: what only verification by replication finds)
 *   drop          like lie with no kind altered, but its first JOB's answer is dropped as
 *                 --drop says (tests/test_farm_dropped.sh): wrong-attempt (its RESULT under the
 *                 attempt number + 1), wrong-id (under the job id + 1), ignore-cancel (no answer at
 *                 all and its CANCEL ignored); it heartbeats on and answers later JOBs honestly
 *
 * It prints what it did ("sent", "refused", "got job") one line each, for the test to check.
 *
 *   tb_misbehave --connect ENDPOINT [--timeout S] [--attack NAME [--name NAME] [--from DIR]]
 *
 * With --tamper FILE it instead rewrites one result store entry (coordinator/farm/cache.h) the way
 * a node with failing memory or a hostile peer would, with a valid checksum over the altered bytes
 * and the spec's echo left as it was, so only the kind's own check can tell
 * (tests/test_bake_checks.sh):
 *
 *   region        its header's box moved one column east
 *   coast_block   its tally's cut 1000 units more than its first drift's sources (a budget that
 *                 no longer closes)
 *   tile          its first height 100 m higher (its 16-bit sample no longer encodes it)
 */
#include <czmq.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/blob.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/fs.h"
#include "common/pool.h"
#include "common/version.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/proto.h"
#include "jobs/coast/blocks.h"
#include "jobs/coast/coast.h"
#include "jobs/detail/tile.h"
#include "jobs/job.h"
#include "jobs/region.h"

static zsock_t *s_dealer(const char *endpoint)
{
    zsock_t *s = zsock_new(ZMQ_DEALER);
    zsock_set_linger(s, 1000);
    if (!s || zsock_connect(s, "%s", endpoint) != 0) {
        fprintf(stderr, "tb_misbehave: cannot connect to %s\n", endpoint);
        exit(1);
    }
    return s;
}

static void s_send(zsock_t *s, const tb_msg_t *m)
{
    tb_err_t err;
    if (tb_proto_send(zsock_resolve(s), NULL, 0, m, 0, &err) != 0) {
        fprintf(stderr, "tb_misbehave: %s\n", err.msg);
        exit(1);
    }
}

/* Waits up to timeout_s for a message of command `want`, skipping heartbeats; 0 when it came. */
static int s_wait_for(zsock_t *s, tb_cmd_t want, tb_msg_t *m, tb_proto_rx_t *rx, double timeout_s)
{
    double until = tb_now_s() + timeout_s;
    while (tb_now_s() < until) {
        zmq_pollitem_t item = {zsock_resolve(s), 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) <= 0)
            continue;
        if (tb_proto_recv(zsock_resolve(s), rx, 0) != 0)
            continue;
        tb_err_t err;
        if (tb_proto_rx_decode(rx, 0, m, &err) == 0 && m->cmd == want)
            return 0;
        tb_proto_rx_close(rx);
    }
    return -1;
}

static void s_ready(tb_msg_t *m, const char *name, const char *build_id)
{
    tb_msg_init(m, TB_CMD_READY);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->build_id, sizeof m->build_id, "%s", build_id);
    m->threads = 1;
    m->memory_bytes = 1 << 30;
}

/* ---- attacks ---- */

typedef struct {
    zsock_t *sock;
    const char *endpoint;
    double until_s;
    double last_hb_s;
} s_peer_t;

static void s_heartbeat(s_peer_t *p)
{
    if (tb_now_s() - p->last_hb_s < 0.1)
        return;
    tb_msg_t hb;
    tb_msg_init(&hb, TB_CMD_HEARTBEAT);
    s_send(p->sock, &hb);
    p->last_hb_s = tb_now_s();
}

/* Waits for a whole JOB (its spec reassembled into *spec) or a DISCONNECT, heartbeating meanwhile.
 * Returns TB_CMD_JOB, TB_CMD_DISCONNECT (text in bye) or -1 at the deadline. */
static int s_next(s_peer_t *p, tb_msg_t *job, void **spec, size_t *spec_bytes, char *bye, size_t n)
{
    tb_transfer_t t;
    tb_transfer_init(&t, (uint64_t)1 << 34);
    while (tb_now_s() < p->until_s) {
        s_heartbeat(p);
        zmq_pollitem_t item = {zsock_resolve(p->sock), 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 50) <= 0)
            continue;
        tb_proto_rx_t rx;
        if (tb_proto_recv(zsock_resolve(p->sock), &rx, 0) != 0)
            continue;
        tb_msg_t m;
        tb_err_t err;
        int cmd = -2;
        if (tb_proto_rx_decode(&rx, 0, &m, &err) == 0) {
            if (m.cmd == TB_CMD_DISCONNECT) {
                snprintf(bye, n, "%s", m.text);
                cmd = TB_CMD_DISCONNECT;
            } else if (m.cmd == TB_CMD_JOB && tb_transfer_add(&t, &m, &err) == 1) {
                *job = m;
                job->chunk = NULL;
                size_t blob_bytes;
                void *blob = tb_transfer_take(&t, &blob_bytes);
                if (tb_blob_decode(blob, blob_bytes, (size_t)1 << 34, spec, spec_bytes, &err) != 0)
                    *spec = NULL, *spec_bytes = 0;
                free(blob);
                cmd = TB_CMD_JOB;
            }
        }
        tb_proto_rx_close(&rx);
        if (cmd != -2) {
            tb_transfer_reset(&t);
            return cmd;
        }
    }
    tb_transfer_reset(&t);
    return -1;
}

/* Sends blob as the RESULT of (job, attempt) in 1 MiB chunks. */
static void s_send_result(s_peer_t *p, const tb_msg_t *job, const void *blob, size_t blob_bytes)
{
    size_t chunk = 1 << 20;
    uint32_t count = tb_proto_chunk_count(blob_bytes, chunk);
    for (uint32_t c = 0; c < count; c++) {
        tb_msg_t m;
        tb_msg_init(&m, TB_CMD_RESULT);
        m.job_id = job->job_id;
        m.attempt = job->attempt;
        m.chunk_index = c;
        m.chunk_count = count;
        m.total_bytes = blob_bytes;
        size_t off = (size_t)c * chunk;
        m.chunk = (const unsigned char *)blob + off;
        m.chunk_bytes = blob_bytes - off < chunk ? blob_bytes - off : chunk;
        s_send(p->sock, &m);
    }
}

static void s_say_ready(s_peer_t *p, const char *name)
{
    tb_msg_t m;
    s_ready(&m, name, tb_build_id());
    s_send(p->sock, &m);
    p->last_hb_s = tb_now_s();
}

/* What a pick looks for: a region result (box set), a tile result (tile set) or a coast result
 * (neither), and of the same box or tile or another one. */
typedef struct {
    const tb_frame_t *box;
    const tb_tile_id_t *tile;
    bool same;
} s_want_t;

/* Whether a stored result (its raw bytes, entry `name`) is the one wanted; says which it picked. */
static bool s_take(const char *name, const void *raw, size_t raw_bytes, const s_want_t *w)
{
    char what[128];
    bool same = true;
    tb_err_t err;
    if (w->box) {
        tb_region_result_t r;
        if (tb_region_result_decode(raw, raw_bytes, &r, &err) != 0)
            return false;
        same = r.box.x0 == w->box->x0 && r.box.y0 == w->box->y0 && r.box.w == w->box->w &&
               r.box.h == w->box->h;
        snprintf(what, sizeof what, "%d steps, box %lld,%lld %lldx%lld", r.steps,
                 (long long)r.box.x0, (long long)r.box.y0, (long long)r.box.w, (long long)r.box.h);
        tb_region_result_free(&r);
    } else if (w->tile) {
        tb_tile_result_t t;
        if (tb_tile_result_decode(raw, raw_bytes, &t, &err) != 0)
            return false;
        same = t.id.col == w->tile->col && t.id.row == w->tile->row;
        char id[TB_TILE_ID_MAX];
        tb_tile_id_format(t.id, id);
        snprintf(what, sizeof what, "tile %s", id);
        tb_tile_result_free(&t);
    } else {
        /* the bake's coast is a job of kind coast_block (one block on a small planet) */
        tb_coast_block_result_t c;
        if (tb_coast_block_result_decode(raw, raw_bytes, &c, &err) != 0)
            return false;
        snprintf(what, sizeof what, "coast block, %lld x %lld", (long long)c.interior.w,
                 (long long)c.interior.h);
        tb_coast_block_result_free(&c);
    }
    if (same != w->same)
        return false;
    printf("picked %s (%s)\n", name, what);
    return true;
}

/* The first stored result in dir that is the one wanted, as the blob a worker would send (the
 * entry after the store's 20-byte header), or NULL. Heartbeats between entries: decoding a store
 * of tile results takes seconds on a loaded machine, and the lease must not expire meanwhile. */
static void *s_pick(s_peer_t *p, const char *dir, const s_want_t *want, size_t *bytes)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    struct dirent *e;
    void *found = NULL;
    while (!found && (e = readdir(d))) {
        s_heartbeat(p);
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".tbr") != 0)
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *file;
        size_t n;
        tb_err_t err;
        if (tb_fs_read_all(path, (size_t)1 << 34, &file, &n, &err) != 0)
            continue;
        void *raw;
        size_t raw_bytes;
        if (tb_cache_decode_file(file, n, NULL, (size_t)1 << 34, &raw, &raw_bytes, &err) == 0) {
            if (s_take(e->d_name, raw, raw_bytes, want)) {
                *bytes = n - 20;
                found = malloc(*bytes);
                memcpy(found, file + 20, *bytes);
            }
            free(raw);
        }
        free(file);
    }
    closedir(d);
    return found;
}

/* coast-replay, tile-replay, other-tile: one wrong answer to the first job, then DISCONNECT. */
static int s_answer_once(s_peer_t *p, const char *attack, const char *name, const char *from,
                         int *jobs, int *sent)
{
    tb_msg_t job;
    void *spec = NULL;
    size_t spec_bytes = 0;
    char bye[TB_PROTO_TEXT_MAX + 1] = "";
    bool coast = strcmp(attack, "coast-replay") == 0;
    s_say_ready(p, name);
    int cmd = s_next(p, &job, &spec, &spec_bytes, bye, sizeof bye);
    if (cmd != TB_CMD_JOB)
        return cmd;
    (*jobs)++;
    printf("got job %llu attempt %u of kind %s\n", (unsigned long long)job.job_id, job.attempt,
           job.kind);
    void *blob = NULL;
    size_t blob_bytes = 0;
    tb_err_t err;
    if (coast && strcmp(job.kind, "coast_block") == 0) {
        s_want_t want = {NULL, NULL, true};
        blob = s_pick(p, from, &want, &blob_bytes);
    } else if (!coast && strcmp(job.kind, "tile") == 0) {
        tb_tile_spec_owned_t ts;
        if (spec && tb_tile_spec_decode(spec, spec_bytes, &ts, &err) == 0) {
            s_want_t want = {NULL, &ts.spec.id, strcmp(attack, "tile-replay") == 0};
            blob = s_pick(p, from, &want, &blob_bytes);
            tb_tile_spec_free(&ts);
        }
    }
    free(spec);
    if (blob) {
        s_send_result(p, &job, blob, blob_bytes);
        free(blob);
        printf("sent a replayed result for job %llu attempt %u\n", (unsigned long long)job.job_id,
               job.attempt);
        (*sent)++;
    } else {
        printf("no stored result to replay for job %llu\n", (unsigned long long)job.job_id);
    }
    tb_msg_t d;
    tb_msg_init(&d, TB_CMD_DISCONNECT);
    d.code = TB_BYE_LEAVING;
    snprintf(d.text, sizeof d.text, "answered once");
    s_send(p->sock, &d);
    return -1;
}

/* ---- lie: an honest computation, a dishonest answer ---- */

static const char *s_lie_kinds = "region,coast_block,tile"; /* --lie-kinds */
static const char *s_drop = NULL;                           /* --drop (attack drop) */

typedef struct {
    const char *kind;
    void *spec;
    size_t spec_bytes;
    tb_job_output_t out;
    tb_err_t err;
    int rc;
    atomic_bool done;
} s_work_t;

static void *s_work(void *arg)
{
    s_work_t *w = arg;
    tb_pool_t *pool = tb_pool_new(1, &w->err);
    tb_job_ctx_t ctx = {.threads = 1, .pool = pool};
    w->rc = pool ? tb_job_run(w->kind, w->spec, w->spec_bytes, &ctx, &w->out, &w->err) : -1;
    tb_pool_destroy(&pool);
    atomic_store(&w->done, true);
    return NULL;
}

/* Alters a result of `kind` where its check cannot see it; 1 when it did (*data replaced). */
static int s_alter(const char *kind, void **data, size_t *bytes)
{
    tb_err_t err;
    void *out = NULL;
    size_t n = 0;
    int rc = -1;
    if (strcmp(kind, "region") == 0) {
        tb_region_result_t r;
        if (tb_region_result_decode(*data, *bytes, &r, &err) != 0)
            return 0;
        size_t cells = (size_t)r.box.w * (size_t)r.box.h;
        for (size_t i = 0; i < cells; i++)
            if (r.height_m[i] != 0) {
                r.height_m[i] += 1;
                break;
            }
        rc = tb_region_result_encode(&r, &out, &n, &err);
        tb_region_result_free(&r);
    } else if (strcmp(kind, "coast_block") == 0) {
        tb_coast_block_result_t c;
        if (tb_coast_block_result_decode(*data, *bytes, &c, &err) != 0)
            return 0;
        if (c.height_m)
            c.height_m[(size_t)c.interior.w * (size_t)c.interior.h / 2] += 1;
        else
            c.tally.beach_cells ^= 1; /* a probe: its tally only */
        rc = tb_coast_block_result_encode(&c, &out, &n, &err);
        tb_coast_block_result_free(&c);
    } else if (strcmp(kind, "tile") == 0) {
        tb_tile_result_t t;
        if (tb_tile_result_decode(*data, *bytes, &t, &err) != 0)
            return 0;
        size_t cells = (size_t)t.interior.w * (size_t)t.interior.h;
        for (size_t i = 0; i < 64 && i < cells; i++)
            t.flow[(cells / 2 + i) % cells] ^= 0xff;
        rc = tb_tile_result_encode(&t, &out, &n, &err);
        tb_tile_result_free(&t);
    }
    if (rc != 0)
        return 0;
    free(*data);
    *data = out;
    *bytes = n;
    return 1;
}

/* lie: READY, then every JOB computed (heartbeating meanwhile), altered when its kind is one of
 * `kinds`, and sent; until DISCONNECT or the deadline. */
static int s_lie(s_peer_t *p, const char *name, const char *kinds, int *jobs, int *sent)
{
    s_say_ready(p, name);
    char bye[TB_PROTO_TEXT_MAX + 1] = "";
    tb_msg_t job;
    void *spec;
    size_t spec_bytes;
    int cmd;
    while ((cmd = s_next(p, &job, &spec, &spec_bytes, bye, sizeof bye)) == TB_CMD_JOB) {
        (*jobs)++;
        if (s_drop && *jobs == 1 && strcmp(s_drop, "ignore-cancel") == 0) {
            free(spec);
            printf("dropped job %llu attempt %u (%s): no answer, its cancel ignored\n",
                   (unsigned long long)job.job_id, job.attempt, job.kind);
            continue; /* s_next heartbeats, and skips the CANCEL */
        }
        s_work_t w = {.kind = job.kind, .spec = spec, .spec_bytes = spec_bytes};
        atomic_init(&w.done, false);
        pthread_t th;
        if (!spec || pthread_create(&th, NULL, s_work, &w) != 0) {
            free(spec);
            continue;
        }
        while (!atomic_load(&w.done)) {
            s_heartbeat(p);
            zclock_sleep(20);
        }
        pthread_join(th, NULL);
        free(spec);
        if (w.rc != 0) {
            printf("job %llu (%s) failed here: %s\n", (unsigned long long)job.job_id, job.kind,
                   w.err.msg);
            continue;
        }
        char want[64];
        snprintf(want, sizeof want, ",%s,", job.kind);
        char list[256];
        snprintf(list, sizeof list, ",%s,", kinds);
        bool lied = strstr(list, want) && s_alter(job.kind, &w.out.data, &w.out.bytes);
        void *blob;
        size_t blob_bytes;
        tb_err_t err;
        tb_msg_t as = job;
        bool dropped = s_drop && *jobs == 1;
        if (dropped && strcmp(s_drop, "wrong-attempt") == 0)
            as.attempt++;
        else if (dropped)
            as.job_id++;
        if (dropped)
            printf("dropped job %llu attempt %u (%s): answered as job %llu attempt %u\n",
                   (unsigned long long)job.job_id, job.attempt, job.kind,
                   (unsigned long long)as.job_id, as.attempt);
        if (tb_blob_encode(w.out.data, w.out.bytes, 1, &blob, &blob_bytes, &err) == 0) {
            s_send_result(p, &as, blob, blob_bytes);
            free(blob);
            (*sent)++;
            printf("%s result of job %llu attempt %u (%s)\n", lied ? "sent an altered" : "sent the",
                   (unsigned long long)job.job_id, job.attempt, job.kind);
        }
        tb_job_output_free(&w.out);
    }
    if (cmd == TB_CMD_DISCONNECT)
        printf("refused: %s\n", bye);
    return cmd;
}

static int s_attack(const char *attack, const char *endpoint, const char *name, const char *from,
                    bool new_socket, double timeout_s, int stream_mib)
{
    s_peer_t p = {s_dealer(endpoint), endpoint, tb_now_s() + timeout_s, 0};
    tb_msg_t job;
    void *spec = NULL;
    size_t spec_bytes = 0;
    char bye[TB_PROTO_TEXT_MAX + 1] = "";
    int sent = 0, jobs = 0, cmd;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(attack, "replay") == 0 || strcmp(attack, "other-region") == 0) {
        s_say_ready(&p, name);
        while ((cmd = s_next(&p, &job, &spec, &spec_bytes, bye, sizeof bye)) == TB_CMD_JOB) {
            jobs++;
            tb_region_spec_owned_t rs;
            tb_err_t err;
            if (!spec || tb_region_spec_decode(spec, spec_bytes, &rs, &err) != 0) {
                free(spec);
                continue;
            }
            size_t blob_bytes;
            s_want_t want = {&rs.spec.box, NULL, strcmp(attack, "replay") == 0};
            void *blob = s_pick(&p, from, &want, &blob_bytes);
            tb_region_spec_free(&rs);
            free(spec);
            if (!blob) {
                printf("no stored result to replay for job %llu\n", (unsigned long long)job.job_id);
                continue;
            }
            s_send_result(&p, &job, blob, blob_bytes);
            free(blob);
            printf("sent a replayed result for job %llu attempt %u\n",
                   (unsigned long long)job.job_id, job.attempt);
            sent++;
        }
    } else if (strcmp(attack, "coast-replay") == 0 || strcmp(attack, "tile-replay") == 0 ||
               strcmp(attack, "other-tile") == 0) {
        cmd = s_answer_once(&p, attack, name, from, &jobs, &sent);
    } else if (strcmp(attack, "hijack") == 0 || strcmp(attack, "hoard") == 0) {
        s_say_ready(&p, name);
        while ((cmd = s_next(&p, &job, &spec, &spec_bytes, bye, sizeof bye)) == TB_CMD_JOB) {
            free(spec);
            jobs++;
            printf("got job %llu attempt %u (holding it)\n", (unsigned long long)job.job_id,
                   job.attempt);
        }
    } else if (strcmp(attack, "lie") == 0 || strcmp(attack, "drop") == 0) {
        if (strcmp(attack, "drop") == 0) {
            s_lie_kinds = "";
            if (!s_drop) {
                fprintf(stderr, "tb_misbehave: --attack drop needs --drop\n");
                return 2;
            }
        }
        s_lie(&p, name, s_lie_kinds, &jobs, &sent);
        printf("%s: %d jobs received, %d answers sent\n", attack, jobs, sent);
        zsock_destroy(&p.sock);
        return 0;
    } else if (strcmp(attack, "flood") == 0) {
        /* 300 malformed messages from a peer that never says READY */
        for (int i = 0; i < 300; i++) {
            unsigned char junk[] = {'x', (unsigned char)i, 1, 2, 3};
            zmq_send(zsock_resolve(p.sock), junk, sizeof junk, 0);
            sent++;
        }
        zclock_sleep(500);
        cmd = -1;
    } else if (strcmp(attack, "poison") == 0) {
        s_say_ready(&p, name);
        zclock_sleep(200);
        for (int i = 0; i < 3; i++) {
            unsigned char junk[] = {'T', 'B', 'K', 1, 0xee, 1, 2, 3};
            zmq_send(zsock_resolve(p.sock), junk, sizeof junk, 0);
        }
        printf("sent 3 malformed messages as %s\n", name);
        while ((cmd = s_next(&p, &job, &spec, &spec_bytes, bye, sizeof bye)) == TB_CMD_JOB)
            free(spec);
    } else if (strcmp(attack, "cycle") == 0) {
        for (int k = 1; tb_now_s() < p.until_s; k++) {
            char cname[64];
            snprintf(cname, sizeof cname, "%s-%d", name, k);
            s_say_ready(&p, cname);
            cmd = s_next(&p, &job, &spec, &spec_bytes, bye, sizeof bye);
            free(spec);
            spec = NULL;
            if (cmd != TB_CMD_JOB)
                break;
            jobs++;
            tb_msg_t f;
            tb_msg_init(&f, TB_CMD_FAIL);
            f.job_id = job.job_id;
            f.attempt = job.attempt;
            f.code = TB_E_JOB;
            snprintf(f.text, sizeof f.text, "cycled failure %d", k);
            s_send(p.sock, &f);
            tb_msg_t d;
            tb_msg_init(&d, TB_CMD_DISCONNECT);
            d.code = TB_BYE_LEAVING;
            snprintf(d.text, sizeof d.text, "cycling");
            s_send(p.sock, &d);
            sent++;
            printf("failed job %llu attempt %u as %s\n", (unsigned long long)job.job_id,
                   job.attempt, cname);
            if (new_socket) {
                zclock_sleep(50);
                zsock_destroy(&p.sock);
                p.sock = s_dealer(endpoint);
            }
        }
        cmd = -1;
    } else if (strcmp(attack, "storm") == 0) {
        zsock_destroy(&p.sock);
        for (int k = 1; k <= 300 && tb_now_s() < p.until_s; k++) {
            char cname[64];
            snprintf(cname, sizeof cname, "%s-%d", name, k);
            p.sock = s_dealer(endpoint);
            s_say_ready(&p, cname);
            zclock_sleep(5);
            tb_msg_t d;
            tb_msg_init(&d, TB_CMD_DISCONNECT);
            d.code = TB_BYE_LEAVING;
            snprintf(d.text, sizeof d.text, "storm");
            s_send(p.sock, &d);
            zsock_destroy(&p.sock);
            sent++;
        }
        p.sock = s_dealer(endpoint);
        cmd = -1;
    } else if (strcmp(attack, "oversize") == 0) {
        s_say_ready(&p, name);
        cmd = s_next(&p, &job, &spec, &spec_bytes, bye, sizeof bye);
        free(spec);
        if (cmd == TB_CMD_JOB) {
            jobs++;
            uint64_t total = (uint64_t)2 << 30, chunk = 1 << 20;
            static unsigned char block[1 << 20];
            for (int c = 0; c < stream_mib && tb_now_s() < p.until_s; c++) {
                tb_msg_t m;
                tb_msg_init(&m, TB_CMD_RESULT);
                m.job_id = job.job_id;
                m.attempt = job.attempt;
                m.chunk_index = (uint32_t)c;
                m.chunk_count = (uint32_t)(total / chunk);
                m.total_bytes = total;
                m.chunk = block;
                m.chunk_bytes = chunk;
                s_send(p.sock, &m);
                sent++;
            }
            printf("announced a %llu-byte result and streamed %d MiB of it\n",
                   (unsigned long long)total, sent);
        }
        while ((cmd = s_next(&p, &job, &spec, &spec_bytes, bye, sizeof bye)) == TB_CMD_JOB)
            free(spec);
    } else {
        fprintf(stderr, "tb_misbehave: unknown attack %s\n", attack);
        return 2;
    }
    if (cmd == TB_CMD_DISCONNECT)
        printf("refused: %s\n", bye);
    printf("%s: %d jobs received, %d answers sent\n", attack, jobs, sent);
    zsock_destroy(&p.sock);
    return 0;
}

/* --tamper FILE: see the top. 0, or 1 naming what failed. */
static int s_tamper(const char *path)
{
    char *file;
    size_t n;
    tb_err_t err;
    void *raw = NULL, *out = NULL;
    size_t raw_bytes, out_bytes = 0;
    if (tb_fs_read_all(path, (size_t)1 << 34, &file, &n, &err) != 0 ||
        tb_cache_decode_file(file, n, NULL, (size_t)1 << 34, &raw, &raw_bytes, &err) != 0) {
        fprintf(stderr, "tb_misbehave: %s: %s\n", path, err.msg);
        return 1;
    }
    tb_region_result_t rr;
    tb_coast_block_result_t cb;
    tb_tile_result_t tr;
    const char *what = NULL;
    int rc = -1;
    if (tb_region_result_decode(raw, raw_bytes, &rr, &err) == 0) {
        rr.box.x0 = (rr.box.x0 + 1) % rr.box.lattice_w;
        rc = tb_region_result_encode(&rr, &out, &out_bytes, &err);
        tb_region_result_free(&rr);
        what = "a region result: its box moved one column east";
    } else if (tb_coast_block_result_decode(raw, raw_bytes, &cb, &err) == 0) {
        cb.tally.cut_units += 1000;
        rc = tb_coast_block_result_encode(&cb, &out, &out_bytes, &err);
        tb_coast_block_result_free(&cb);
        what = "a coast block result: its cut 1000 units more than its sources hold";
    } else if (tb_tile_result_decode(raw, raw_bytes, &tr, &err) == 0) {
        tr.height_m[0] += 100;
        rc = tb_tile_result_encode(&tr, &out, &out_bytes, &err);
        tb_tile_result_free(&tr);
        what = "a tile result: its first height 100 m higher";
    } else {
        tb_err_set(&err, TB_E_FORMAT, "not a region, coast block or tile result");
    }
    void *blob = NULL;
    size_t blob_bytes = 0;
    if (rc == 0)
        rc = tb_blob_encode(out, out_bytes, 1, &blob, &blob_bytes, &err);
    if (rc == 0) {
        FILE *f = fopen(path, "wb");
        rc = f && fwrite(file, 1, TB_CACHE_HEAD_BYTES, f) == TB_CACHE_HEAD_BYTES &&
                     fwrite(blob, 1, blob_bytes, f) == blob_bytes
                 ? 0
                 : -1;
        if (f && fclose(f) != 0)
            rc = -1;
        if (rc != 0)
            tb_err_set(&err, TB_E_IO, "cannot rewrite it");
    }
    free(file);
    free(raw);
    free(out);
    free(blob);
    if (rc != 0) {
        fprintf(stderr, "tb_misbehave: %s: %s\n", path, err.msg);
        return 1;
    }
    printf("tampered with %s (%s), checksum recomputed\n", path, what);
    return 0;
}

int main(int argc, char **argv)
{
    const char *endpoint = NULL;
    double timeout_s = 10;
    const char *attack = NULL, *name = "attacker", *from = NULL;
    bool new_socket = false;
    int64_t stream_mib = 256;
    const char *tamper = NULL;
    tb_opt_t opts[] = {
        {"tamper", TB_OPT_STRING, &tamper, NULL, "FILE", "rewrite a store entry (see the top)"},
        {"connect", TB_OPT_STRING, &endpoint, NULL, "ENDPOINT", "the coordinator"},
        {"timeout", TB_OPT_DOUBLE, &timeout_s, NULL, "S", "how long to wait for replies (10)"},
        {"attack", TB_OPT_STRING, &attack, NULL, "NAME", "one hostile peer (see the top)"},
        {"name", TB_OPT_STRING, &name, NULL, "NAME", "the name it declares (attacker)"},
        {"from", TB_OPT_STRING, &from, NULL, "DIR", "replay: a result store to take results from"},
        {"drop", TB_OPT_STRING, &s_drop, NULL, "HOW",
         "drop: wrong-attempt, wrong-id or ignore-cancel"},
        {"lie-kinds", TB_OPT_STRING, &s_lie_kinds, NULL, "K,K",
         "lie: the kinds whose answers it alters (region,coast_block,tile)"},
        {"new-socket", TB_OPT_FLAG, &new_socket, NULL, NULL, "cycle: a new connection each time"},
        {"stream-mib", TB_OPT_INT, &stream_mib, NULL, "MIB", "oversize: MiB to stream (256)"},
    };
    tb_err_t err;
    int n_pos;
    if (tb_args_parse(argc - 1, argv + 1, opts, TB_ARGS_N(opts), NULL, 0, &n_pos, &err) == 0 &&
        tamper)
        return s_tamper(tamper);
    if (tb_args_parse(argc - 1, argv + 1, opts, TB_ARGS_N(opts), NULL, 0, &n_pos, &err) != 0 ||
        !endpoint) {
        fprintf(stderr, "usage: tb_misbehave --connect ENDPOINT [--timeout S] [--attack NAME]\n");
        return 2;
    }
    zsys_handler_set(NULL);
    if (attack)
        return s_attack(attack, endpoint, name, from ? from : ".", new_socket, timeout_s,
                        (int)stream_mib);
    int status = 0;

    /* 1. Random bytes. */
    zsock_t *a = s_dealer(endpoint);
    unsigned char noise[200];
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (unsigned char)tb_hash(99, TB_SALT_TEST, (int64_t)i, 0, 0);
    zmq_send(zsock_resolve(a), noise, sizeof noise, 0);
    printf("step 1: sent %zu random bytes\n", sizeof noise);

    /* 2. A READY cut off in the middle of its build id. */
    tb_msg_t m;
    s_ready(&m, "truncated", tb_build_id());
    unsigned char header[TB_PROTO_HEADER_MAX];
    size_t len;
    tb_proto_encode(&m, header, sizeof header, &len, &err);
    zmq_send(zsock_resolve(a), header, len - 12, 0);
    printf("step 2: sent a READY truncated to %zu of %zu bytes\n", len - 12, len);

    /* 3. Another build id: the coordinator must refuse. */
    zsock_t *b = s_dealer(endpoint);
    s_ready(&m, "other-build", "0.0.0+not-this-build");
    s_send(b, &m);
    tb_proto_rx_t rx;
    if (s_wait_for(b, TB_CMD_DISCONNECT, &m, &rx, timeout_s) == 0 && m.code == TB_BYE_REFUSED) {
        printf("step 3: refused: %s\n", m.text);
        tb_proto_rx_close(&rx);
    } else {
        printf("step 3: FAILED: no refusal for another build id\n");
        status = 1;
    }

    /* 4. A proper worker that answers badly. */
    zsock_t *c = s_dealer(endpoint);
    s_ready(&m, "misbehave", tb_build_id());
    s_send(c, &m);
    if (s_wait_for(c, TB_CMD_JOB, &m, &rx, timeout_s) != 0) {
        printf("step 4: FAILED: no JOB arrived\n");
        status = 1;
    } else {
        uint64_t job = m.job_id;
        uint32_t attempt = m.attempt;
        tb_proto_rx_close(&rx);
        printf("step 4: got job %llu attempt %u\n", (unsigned long long)job, attempt);
        /* a. Our job, with a blob whose checksum does not match its bytes (first: a lease holder
         * that answers another job loses its lease at once, docs/distribution.md). */
        const char payload[] = "not the result you are looking for";
        void *blob;
        size_t blob_bytes;
        tb_blob_encode(payload, sizeof payload, 1, &blob, &blob_bytes, &err);
        ((unsigned char *)blob)[16] ^= 0xff;
        tb_msg_init(&m, TB_CMD_RESULT);
        m.job_id = job;
        m.attempt = attempt;
        m.chunk_index = 0;
        m.chunk_count = 1;
        m.total_bytes = blob_bytes;
        m.chunk = blob;
        m.chunk_bytes = blob_bytes;
        s_send(c, &m);
        printf("step 4a: sent a RESULT for job %llu attempt %u with a wrong checksum\n",
               (unsigned long long)job, attempt);
        /* b. A result for a job that is not ours. */
        ((unsigned char *)blob)[16] ^= 0xff;
        m.job_id = job ^ 1;
        m.attempt = attempt + 7;
        s_send(c, &m);
        printf("step 4b: sent a RESULT for job %llu attempt %u, not leased to us\n",
               (unsigned long long)m.job_id, m.attempt);
        free(blob);
    }
    /* 5. Leave; let the coordinator read everything first. */
    zclock_sleep(300);
    tb_msg_init(&m, TB_CMD_DISCONNECT);
    m.code = TB_BYE_LEAVING;
    snprintf(m.text, sizeof m.text, "misbehaving client done");
    s_send(c, &m);
    printf("step 5: left\n");
    zsock_destroy(&a);
    zsock_destroy(&b);
    zsock_destroy(&c);
    return status;
}
