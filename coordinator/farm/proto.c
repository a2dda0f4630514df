/* The wire protocol codec; see proto.h. The decoder reads through s_reader_t, whose getters fail
 * instead of reading past the end, and every failure jumps to `malformed` with a description of
 * what was wrong, in the manner of czmq's zgossip_msg_recv. */
#include "coordinator/farm/proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

typedef struct {
    const unsigned char *p;
    size_t len;
    size_t pos;
    const char *field; /* the field being read, for the error message */
} s_reader_t;

static bool s_get_bytes(s_reader_t *r, void *out, size_t n)
{
    if (r->len - r->pos < n)
        return false;
    memcpy(out, r->p + r->pos, n);
    r->pos += n;
    return true;
}

static bool s_get_u8(s_reader_t *r, uint8_t *v)
{
    return s_get_bytes(r, v, 1);
}

static bool s_get_u16(s_reader_t *r, uint16_t *v)
{
    unsigned char b[2];
    if (!s_get_bytes(r, b, 2))
        return false;
    *v = (uint16_t)(b[0] | (b[1] << 8));
    return true;
}

static bool s_get_u32(s_reader_t *r, uint32_t *v)
{
    unsigned char b[4];
    if (!s_get_bytes(r, b, 4))
        return false;
    *v = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
    return true;
}

static bool s_get_u64(s_reader_t *r, uint64_t *v)
{
    unsigned char b[8];
    if (!s_get_bytes(r, b, 8))
        return false;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = (*v << 8) | b[i];
    return true;
}

/* A string field of length len (already read) into dst (capacity cap + 1). `strict` allows only
 * printable ASCII (names, ids); otherwise any byte but a control character. */
static bool s_get_text(s_reader_t *r, size_t len, char *dst, size_t cap, bool strict)
{
    if (len > cap || r->len - r->pos < len)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = r->p[r->pos + i];
        if (c < 0x20 || c == 0x7f || (strict && c > 0x7e))
            return false;
    }
    memcpy(dst, r->p + r->pos, len);
    dst[len] = '\0';
    r->pos += len;
    return true;
}

static bool s_get_str8(s_reader_t *r, char *dst, size_t cap)
{
    uint8_t len;
    return s_get_u8(r, &len) && len > 0 && s_get_text(r, len, dst, cap, true);
}

static bool s_get_str16(s_reader_t *r, char *dst, size_t cap)
{
    uint16_t len;
    return s_get_u16(r, &len) && s_get_text(r, len, dst, cap, false);
}

const char *tb_proto_cmd_name(int cmd)
{
    static const char *names[] = {"?",    "READY",     "JOB",        "PROGRESS", "RESULT",
                                  "FAIL", "HEARTBEAT", "DISCONNECT", "CANCEL"};
    if (cmd >= 1 && cmd <= TB_CMD_CANCEL)
        return names[cmd];
    return "?";
}

void tb_msg_init(tb_msg_t *msg, tb_cmd_t cmd)
{
    memset(msg, 0, sizeof *msg);
    msg->cmd = cmd;
}

void tb_msg_set_text(char *dst, size_t cap, const char *text)
{
    size_t n = 0;
    for (; text && text[n] && n < cap; n++) {
        unsigned char c = (unsigned char)text[n];
        dst[n] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    dst[n] = '\0';
}

static bool s_has_payload(int cmd)
{
    return cmd == TB_CMD_JOB || cmd == TB_CMD_RESULT;
}

/* The checks on one chunk that need no state: an index inside the count, a size inside the total
 * and the limits, and no more chunks than bytes to fill them. */
static const char *s_check_chunk(const tb_msg_t *m)
{
    if (m->chunk_count == 0)
        return "chunk count is 0";
    if (m->chunk_index >= m->chunk_count)
        return "chunk index is not below the chunk count";
    if (m->total_bytes > TB_PROTO_TRANSFER_MAX)
        return "total bytes exceed the protocol's transfer limit";
    if (m->chunk_bytes > TB_PROTO_CHUNK_MAX)
        return "chunk is larger than the protocol's chunk limit";
    if (m->chunk_bytes > m->total_bytes)
        return "chunk is larger than the whole transfer";
    if (m->chunk_count > 1 && (uint64_t)m->chunk_count > m->total_bytes)
        return "more chunks than bytes";
    return NULL;
}

int tb_proto_decode(const tb_proto_frame_t *frames, size_t n_frames, tb_msg_t *msg, tb_err_t *err)
{
    tb_msg_init(msg, 0);
    const char *why = "";
    uint8_t version = 0, cmd = 0;
    char id[4] = {0};
    s_reader_t r = {NULL, 0, 0, NULL};
    if (n_frames < 1) {
        why = "no frames";
        goto malformed;
    }
    if (!frames[0].data && frames[0].bytes) {
        why = "null frame";
        goto malformed;
    }
    r.p = frames[0].data;
    r.len = frames[0].bytes;
    if (!s_get_bytes(&r, id, 3) || memcmp(id, TB_PROTO_ID, 3) != 0) {
        why = "not a terrain-bake message (protocol id is not \"" TB_PROTO_ID "\")";
        goto malformed;
    }
    if (!s_get_u8(&r, &version)) {
        why = "truncated before the version";
        goto malformed;
    }
    if (version != TB_PROTO_VERSION) {
        why = "unsupported protocol version";
        goto malformed;
    }
    if (!s_get_u8(&r, &cmd) || cmd < TB_CMD_READY || cmd > TB_CMD_CANCEL) {
        why = "unknown or missing command";
        goto malformed;
    }
    msg->cmd = cmd;
    size_t want_frames = s_has_payload(cmd) ? 2 : 1;
    if (n_frames != want_frames) {
        why = s_has_payload(cmd) ? "expected a header and a payload frame" : "expected one frame";
        goto malformed;
    }
    bool ok = true;
    switch (cmd) {
    case TB_CMD_READY:
        r.field = "worker name";
        ok = s_get_str8(&r, msg->name, TB_PROTO_NAME_MAX);
        if (ok) {
            r.field = "build id";
            ok = s_get_str8(&r, msg->build_id, TB_PROTO_NAME_MAX);
        }
        if (ok) {
            r.field = "threads";
            ok = s_get_u32(&r, &msg->threads) && msg->threads >= 1;
        }
        if (ok) {
            r.field = "memory bytes";
            ok = s_get_u64(&r, &msg->memory_bytes);
        }
        break;
    case TB_CMD_JOB:
    case TB_CMD_RESULT:
        r.field = "job id";
        ok = s_get_u64(&r, &msg->job_id);
        if (ok) {
            r.field = "attempt";
            ok = s_get_u32(&r, &msg->attempt);
        }
        if (ok && cmd == TB_CMD_JOB) {
            r.field = "kind";
            ok = s_get_str8(&r, msg->kind, TB_PROTO_NAME_MAX);
        }
        if (ok) {
            r.field = "chunk index, count and total";
            ok = s_get_u32(&r, &msg->chunk_index) && s_get_u32(&r, &msg->chunk_count) &&
                 s_get_u64(&r, &msg->total_bytes);
        }
        if (ok && cmd == TB_CMD_RESULT) {
            r.field = "peak memory";
            ok = s_get_u64(&r, &msg->peak_rss_bytes) && msg->peak_rss_bytes <= TB_PROTO_PEAK_MAX;
        }
        if (ok) {
            msg->chunk = frames[1].data;
            msg->chunk_bytes = frames[1].bytes;
            if (!msg->chunk && msg->chunk_bytes) {
                why = "null payload frame";
                goto malformed;
            }
            const char *bad = s_check_chunk(msg);
            if (bad) {
                why = bad;
                goto malformed;
            }
        }
        break;
    case TB_CMD_PROGRESS:
        r.field = "job id and attempt";
        ok = s_get_u64(&r, &msg->job_id) && s_get_u32(&r, &msg->attempt);
        if (ok) {
            r.field = "fraction";
            ok = s_get_u32(&r, &msg->fraction_ppm) && msg->fraction_ppm <= 1000000;
        }
        if (ok) {
            r.field = "note";
            ok = s_get_str16(&r, msg->text, TB_PROTO_TEXT_MAX);
        }
        break;
    case TB_CMD_FAIL:
        r.field = "job id and attempt";
        ok = s_get_u64(&r, &msg->job_id) && s_get_u32(&r, &msg->attempt);
        if (ok) {
            r.field = "error code";
            ok = s_get_u32(&r, &msg->code);
        }
        if (ok) {
            r.field = "peak memory";
            ok = s_get_u64(&r, &msg->peak_rss_bytes) && msg->peak_rss_bytes <= TB_PROTO_PEAK_MAX;
        }
        if (ok) {
            r.field = "message";
            ok = s_get_str16(&r, msg->text, TB_PROTO_TEXT_MAX);
        }
        break;
    case TB_CMD_HEARTBEAT:
        break;
    case TB_CMD_DISCONNECT:
        r.field = "code";
        ok = s_get_u32(&r, &msg->code) && msg->code <= TB_BYE_LEAVING;
        if (ok) {
            r.field = "reason";
            ok = s_get_str16(&r, msg->text, TB_PROTO_TEXT_MAX);
        }
        break;
    case TB_CMD_CANCEL:
        r.field = "job id and attempt";
        ok = s_get_u64(&r, &msg->job_id) && s_get_u32(&r, &msg->attempt);
        break;
    }
    if (!ok) {
        why = "truncated, over-long or invalid field";
        goto malformed;
    }
    if (r.pos != r.len) {
        r.field = "end of header";
        why = "trailing bytes after the last field";
        goto malformed;
    }
    return 0;

malformed : {
    int c = msg->cmd;
    const char *field = (c && r.field) ? r.field : NULL;
    tb_msg_init(msg, 0);
    return tb_err_set(err, TB_E_PROTOCOL, "malformed %s message%s%s%s: %s",
                      c ? tb_proto_cmd_name(c) : "protocol", field ? " (" : "", field ? field : "",
                      field ? ")" : "", why);
}
}

/* A growing header buffer with a capacity; overflow is reported once at the end. */
typedef struct {
    unsigned char *p;
    size_t cap;
    size_t len;
    bool overflow;
} s_writer_t;

static void s_put_bytes(s_writer_t *w, const void *data, size_t n)
{
    if (w->overflow || w->cap - w->len < n) {
        w->overflow = true;
        return;
    }
    memcpy(w->p + w->len, data, n);
    w->len += n;
}

static void s_put_u8(s_writer_t *w, uint8_t v)
{
    s_put_bytes(w, &v, 1);
}
static void s_put_u16(s_writer_t *w, uint16_t v)
{
    unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    s_put_bytes(w, b, 2);
}
static void s_put_u32(s_writer_t *w, uint32_t v)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    s_put_bytes(w, b, 4);
}
static void s_put_u64(s_writer_t *w, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    s_put_bytes(w, b, 8);
}

/* A str8 field: 1..TB_PROTO_NAME_MAX printable ASCII characters. */
static bool s_put_str8(s_writer_t *w, const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > TB_PROTO_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
            return false;
    s_put_u8(w, (uint8_t)n);
    s_put_bytes(w, s, n);
    return true;
}

static void s_put_str16(s_writer_t *w, const char *s)
{
    char clean[TB_PROTO_TEXT_MAX + 1];
    tb_msg_set_text(clean, TB_PROTO_TEXT_MAX, s);
    size_t n = strlen(clean);
    s_put_u16(w, (uint16_t)n);
    s_put_bytes(w, clean, n);
}

int tb_proto_encode(const tb_msg_t *m, unsigned char *buf, size_t cap, size_t *len, tb_err_t *err)
{
    s_writer_t w = {buf, cap, 0, false};
    *len = 0;
    s_put_bytes(&w, TB_PROTO_ID, 3);
    s_put_u8(&w, TB_PROTO_VERSION);
    s_put_u8(&w, (uint8_t)m->cmd);
    bool ok = true;
    switch (m->cmd) {
    case TB_CMD_READY:
        ok = s_put_str8(&w, m->name) && s_put_str8(&w, m->build_id) && m->threads >= 1;
        s_put_u32(&w, m->threads);
        s_put_u64(&w, m->memory_bytes);
        break;
    case TB_CMD_JOB:
    case TB_CMD_RESULT:
        s_put_u64(&w, m->job_id);
        s_put_u32(&w, m->attempt);
        if (m->cmd == TB_CMD_JOB)
            ok = s_put_str8(&w, m->kind);
        s_put_u32(&w, m->chunk_index);
        s_put_u32(&w, m->chunk_count);
        s_put_u64(&w, m->total_bytes);
        if (m->cmd == TB_CMD_RESULT) {
            ok = ok && m->peak_rss_bytes <= TB_PROTO_PEAK_MAX;
            s_put_u64(&w, m->peak_rss_bytes);
        }
        if (ok && s_check_chunk(m))
            return tb_err_set(err, TB_E_INVALID, "%s job %llu: %s", tb_proto_cmd_name(m->cmd),
                              (unsigned long long)m->job_id, s_check_chunk(m));
        break;
    case TB_CMD_PROGRESS:
        s_put_u64(&w, m->job_id);
        s_put_u32(&w, m->attempt);
        s_put_u32(&w, m->fraction_ppm > 1000000 ? 1000000 : m->fraction_ppm);
        s_put_str16(&w, m->text);
        break;
    case TB_CMD_FAIL:
        s_put_u64(&w, m->job_id);
        s_put_u32(&w, m->attempt);
        s_put_u32(&w, m->code);
        ok = m->peak_rss_bytes <= TB_PROTO_PEAK_MAX;
        s_put_u64(&w, m->peak_rss_bytes);
        s_put_str16(&w, m->text);
        break;
    case TB_CMD_HEARTBEAT:
        break;
    case TB_CMD_DISCONNECT:
        ok = m->code <= TB_BYE_LEAVING;
        s_put_u32(&w, m->code);
        s_put_str16(&w, m->text);
        break;
    case TB_CMD_CANCEL:
        s_put_u64(&w, m->job_id);
        s_put_u32(&w, m->attempt);
        break;
    default:
        return tb_err_set(err, TB_E_INVALID, "cannot encode command %d", (int)m->cmd);
    }
    if (!ok)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: a name, build id or kind is empty, longer than %d characters or not "
                          "printable ASCII, or a count or code is out of range",
                          tb_proto_cmd_name(m->cmd), TB_PROTO_NAME_MAX);
    if (w.overflow)
        return tb_err_set(err, TB_E_INVALID, "%s: header longer than the %zu-byte buffer",
                          tb_proto_cmd_name(m->cmd), cap);
    *len = w.len;
    return 0;
}

int tb_proto_send(void *socket, const void *routing_id, size_t id_bytes, const tb_msg_t *msg,
                  int flags, tb_err_t *err)
{
    unsigned char header[TB_PROTO_HEADER_MAX];
    size_t len;
    if (tb_proto_encode(msg, header, sizeof header, &len, err) != 0) {
        errno = EINVAL;
        return -1;
    }
    bool payload = s_has_payload(msg->cmd);
    if (routing_id && zmq_send(socket, routing_id, id_bytes, flags | ZMQ_SNDMORE) < 0)
        goto failed;
    if (zmq_send(socket, header, len, flags | (payload ? ZMQ_SNDMORE : 0)) < 0)
        goto failed;
    if (payload && zmq_send(socket, msg->chunk, msg->chunk_bytes, flags) < 0)
        goto failed;
    return 0;
failed : {
    int e = errno;
    tb_err_set(err, TB_E_IO, "cannot send %s: %s", tb_proto_cmd_name(msg->cmd), zmq_strerror(e));
    errno = e;
    return -1;
}
}

const char *tb_proto_rx_user_id(const tb_proto_rx_t *rx)
{
    if (rx->n_frames == 0)
        return NULL;
    const char *id = zmq_msg_gets(rx->frames[rx->n_frames - 1], "User-Id");
    return id && *id ? id : NULL;
}

int tb_proto_recv(void *socket, tb_proto_rx_t *rx, int flags)
{
    memset(rx, 0, sizeof *rx);
    zmq_msg_t part;
    for (;;) {
        zmq_msg_init(&part);
        /* Once the first frame is in, the rest of the message is already queued: never block. */
        if (zmq_msg_recv(&part, socket, rx->n_frames + rx->dropped_frames ? 0 : flags) < 0) {
            int e = errno;
            zmq_msg_close(&part);
            tb_proto_rx_close(rx);
            errno = e;
            return -1;
        }
        int more = zmq_msg_more(&part);
        if (rx->n_frames < TB_PROTO_MAX_FRAMES + 1) {
            zmq_msg_t *keep = malloc(sizeof *keep);
            if (!keep) {
                zmq_msg_close(&part);
                rx->dropped_frames++;
            } else {
                zmq_msg_init(keep);
                zmq_msg_move(keep, &part);
                zmq_msg_close(&part);
                rx->frames[rx->n_frames++] = keep;
            }
        } else {
            zmq_msg_close(&part);
            rx->dropped_frames++;
        }
        if (!more)
            return 0;
    }
}

tb_proto_frame_t tb_proto_rx_frame(const tb_proto_rx_t *rx, size_t i)
{
    tb_proto_frame_t f = {NULL, 0};
    if (i < rx->n_frames) {
        f.data = zmq_msg_data(rx->frames[i]);
        f.bytes = zmq_msg_size(rx->frames[i]);
    }
    return f;
}

int tb_proto_rx_decode(const tb_proto_rx_t *rx, size_t skip, tb_msg_t *msg, tb_err_t *err)
{
    if (rx->dropped_frames) {
        tb_msg_init(msg, 0);
        return tb_err_set(err, TB_E_PROTOCOL, "malformed protocol message: %zu frames, at most %d",
                          rx->n_frames + rx->dropped_frames - skip, TB_PROTO_MAX_FRAMES);
    }
    if (rx->n_frames < skip) {
        tb_msg_init(msg, 0);
        return tb_err_set(err, TB_E_PROTOCOL, "malformed protocol message: no routing id");
    }
    tb_proto_frame_t frames[TB_PROTO_MAX_FRAMES + 1];
    size_t n = 0;
    for (size_t i = skip; i < rx->n_frames; i++)
        frames[n++] = tb_proto_rx_frame(rx, i);
    return tb_proto_decode(frames, n, msg, err);
}

void tb_proto_rx_close(tb_proto_rx_t *rx)
{
    for (size_t i = 0; i < rx->n_frames; i++) {
        zmq_msg_close(rx->frames[i]);
        free(rx->frames[i]);
        rx->frames[i] = NULL;
    }
    rx->n_frames = 0;
}

uint32_t tb_proto_chunk_count(uint64_t total, size_t chunk_bytes)
{
    if (chunk_bytes == 0 || total == 0)
        return 1;
    uint64_t n = (total + chunk_bytes - 1) / chunk_bytes;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

void tb_transfer_init(tb_transfer_t *t, uint64_t max_bytes)
{
    memset(t, 0, sizeof *t);
    t->max_bytes = max_bytes;
}

void tb_transfer_reset(tb_transfer_t *t)
{
    free(t->data);
    tb_transfer_init(t, t->max_bytes);
}

static int s_transfer_fail(tb_transfer_t *t, const tb_msg_t *m, tb_err_t *err, const char *why)
{
    tb_err_set(err, TB_E_PROTOCOL, "%s job %llu attempt %u chunk %u of %u: %s",
               tb_proto_cmd_name(m->cmd), (unsigned long long)m->job_id, m->attempt, m->chunk_index,
               m->chunk_count, why);
    tb_transfer_reset(t);
    return -1;
}

int tb_transfer_add(tb_transfer_t *t, const tb_msg_t *m, tb_err_t *err)
{
    if (m->cmd != TB_CMD_JOB && m->cmd != TB_CMD_RESULT)
        return s_transfer_fail(t, m, err, "not a chunk");
    if (!t->started) {
        if (m->chunk_index != 0)
            return s_transfer_fail(t, m, err, "a transfer must start with chunk 0");
        if (m->total_bytes > t->max_bytes) {
            char why[128];
            snprintf(why, sizeof why, "announces %llu bytes, more than the %llu allowed",
                     (unsigned long long)m->total_bytes, (unsigned long long)t->max_bytes);
            return s_transfer_fail(t, m, err, why);
        }
        t->started = true;
        t->job_id = m->job_id;
        t->attempt = m->attempt;
        t->chunk_count = m->chunk_count;
        t->total_bytes = m->total_bytes;
        t->next_index = 0;
    }
    if (m->job_id != t->job_id || m->attempt != t->attempt || m->chunk_count != t->chunk_count ||
        m->total_bytes != t->total_bytes)
        return s_transfer_fail(t, m, err, "does not continue the transfer in progress");
    if (m->chunk_index != t->next_index)
        return s_transfer_fail(t, m, err, "out of order");
    if (m->chunk_bytes > t->total_bytes - t->bytes)
        return s_transfer_fail(t, m, err, "more bytes than the transfer announced");
    bool last = m->chunk_index + 1 == m->chunk_count;
    if (last && t->bytes + m->chunk_bytes != t->total_bytes)
        return s_transfer_fail(t, m, err, "the chunks add up to less than the transfer announced");
    if (!last && m->chunk_bytes == 0)
        return s_transfer_fail(t, m, err, "an empty chunk before the last");
    if (t->sink) {
        /* a large result goes straight to its file (dispatch.h, large_result_bytes) */
        if (m->chunk_bytes && t->sink(t->sink_user, m->chunk, m->chunk_bytes, err) != 0) {
            tb_transfer_reset(t);
            return -1;
        }
        t->bytes += m->chunk_bytes;
        t->next_index++;
        return last ? 1 : 0;
    }
    if (t->capacity - t->bytes < m->chunk_bytes) {
        size_t want = t->capacity ? t->capacity : 4096;
        while (want - t->bytes < m->chunk_bytes)
            want *= 2;
        if (want > t->total_bytes)
            want = (size_t)t->total_bytes;
        unsigned char *grown = realloc(t->data, want ? want : 1);
        if (!grown)
            return s_transfer_fail(t, m, err, "out of memory");
        t->data = grown;
        t->capacity = want;
    }
    if (m->chunk_bytes)
        memcpy(t->data + t->bytes, m->chunk, m->chunk_bytes);
    t->bytes += m->chunk_bytes;
    t->next_index++;
    return last ? 1 : 0;
}

void tb_transfer_set_sink(tb_transfer_t *t,
                          int (*sink)(void *user, const void *data, size_t bytes, tb_err_t *err),
                          void *user)
{
    t->sink = sink;
    t->sink_user = user;
}

void *tb_transfer_take(tb_transfer_t *t, size_t *bytes_out)
{
    void *data = t->data;
    *bytes_out = t->bytes;
    if (!data)
        data = malloc(1);
    t->data = NULL;
    tb_transfer_init(t, t->max_bytes);
    return data;
}
