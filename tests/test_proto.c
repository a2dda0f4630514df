/* The wire protocol: every command round-trips, and the decoder survives any bytes - random frames,
 * every truncation and every bit flip of valid messages, wrong frame counts, lying chunk headers.
 */
#include <check.h>
#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "common/hash.h"
#include "coordinator/farm/proto.h"

static const unsigned char s_payload[] = "0123456789abcdef";

/* One valid example of every command. */
static int s_examples(tb_msg_t *out)
{
    int n = 0;
    tb_msg_t *m;
    m = &out[n++];
    tb_msg_init(m, TB_CMD_READY);
    strcpy(m->name, "node-7");
    strcpy(m->build_id, "0.1.0+0123456789abcdef");
    m->threads = 16;
    m->memory_bytes = 64ull << 30;
    m = &out[n++];
    tb_msg_init(m, TB_CMD_JOB);
    m->job_id = 42;
    m->attempt = 3;
    strcpy(m->kind, "checksum-grind");
    m->chunk_index = 1;
    m->chunk_count = 2;
    m->total_bytes = 30;
    m->chunk = s_payload;
    m->chunk_bytes = 16;
    m = &out[n++];
    tb_msg_init(m, TB_CMD_PROGRESS);
    m->job_id = 42;
    m->attempt = 3;
    m->fraction_ppm = 500000;
    strcpy(m->text, "step 12/24");
    m = &out[n++];
    tb_msg_init(m, TB_CMD_RESULT);
    m->job_id = 1ull << 40;
    m->attempt = 1;
    m->chunk_index = 0;
    m->chunk_count = 1;
    m->total_bytes = 16;
    m->peak_rss_bytes = 3ull << 30;
    m->chunk = s_payload;
    m->chunk_bytes = 16;
    m = &out[n++];
    tb_msg_init(m, TB_CMD_FAIL);
    m->job_id = 5;
    m->attempt = 2;
    m->code = TB_E_JOB;
    m->peak_rss_bytes = 123456789;
    strcpy(m->text, "region 5: solve diverged");
    m = &out[n++];
    tb_msg_init(m, TB_CMD_HEARTBEAT);
    m = &out[n++];
    tb_msg_init(m, TB_CMD_DISCONNECT);
    m->code = TB_BYE_REFUSED;
    strcpy(m->text, "build id differs");
    m = &out[n++];
    tb_msg_init(m, TB_CMD_CANCEL);
    m->job_id = 9;
    m->attempt = 4;
    return n;
}

/* Encodes m into header + payload frames. */
static size_t s_frames(const tb_msg_t *m, unsigned char *header, tb_proto_frame_t *frames)
{
    size_t len;
    tb_err_t err;
    ck_assert_msg(tb_proto_encode(m, header, TB_PROTO_HEADER_MAX, &len, &err) == 0, "%s", err.msg);
    frames[0].data = header;
    frames[0].bytes = len;
    if (m->cmd == TB_CMD_JOB || m->cmd == TB_CMD_RESULT) {
        frames[1].data = m->chunk;
        frames[1].bytes = m->chunk_bytes;
        return 2;
    }
    return 1;
}

START_TEST(test_every_command_round_trips)
{
    tb_msg_t ex[16];
    int n = s_examples(ex);
    ck_assert_int_eq(n, 8);
    for (int i = 0; i < n; i++) {
        unsigned char header[TB_PROTO_HEADER_MAX];
        tb_proto_frame_t frames[2];
        size_t nf = s_frames(&ex[i], header, frames);
        tb_msg_t back;
        tb_err_t err;
        ck_assert_msg(tb_proto_decode(frames, nf, &back, &err) == 0, "%s: %s",
                      tb_proto_cmd_name(ex[i].cmd), err.msg);
        ck_assert_int_eq(back.cmd, ex[i].cmd);
        ck_assert_str_eq(back.name, ex[i].name);
        ck_assert_str_eq(back.build_id, ex[i].build_id);
        ck_assert_str_eq(back.kind, ex[i].kind);
        ck_assert_str_eq(back.text, ex[i].text);
        ck_assert_uint_eq(back.threads, ex[i].threads);
        ck_assert_uint_eq(back.memory_bytes, ex[i].memory_bytes);
        ck_assert_uint_eq(back.job_id, ex[i].job_id);
        ck_assert_uint_eq(back.attempt, ex[i].attempt);
        ck_assert_uint_eq(back.chunk_index, ex[i].chunk_index);
        ck_assert_uint_eq(back.chunk_count, ex[i].chunk_count);
        ck_assert_uint_eq(back.total_bytes, ex[i].total_bytes);
        ck_assert_uint_eq(back.chunk_bytes, ex[i].chunk_bytes);
        ck_assert_uint_eq(back.fraction_ppm, ex[i].fraction_ppm);
        ck_assert_uint_eq(back.code, ex[i].code);
        ck_assert_uint_eq(back.peak_rss_bytes, ex[i].peak_rss_bytes);
        if (ex[i].chunk_bytes)
            ck_assert(memcmp(back.chunk, ex[i].chunk, ex[i].chunk_bytes) == 0);
    }
}
END_TEST

/* A RESULT's and a FAIL's peak memory (the worker's VmHWM over the attempt) is bounded: 1 PiB and
 * more is no honest worker's, refused by the encoder and, written by hand, by the decoder; the
 * bound itself passes (the control). */
START_TEST(test_a_peak_beyond_the_bound_is_refused)
{
    tb_msg_t ex[16];
    int n = s_examples(ex);
    int seen = 0;
    for (int i = 0; i < n; i++) {
        if (ex[i].cmd != TB_CMD_RESULT && ex[i].cmd != TB_CMD_FAIL)
            continue;
        seen++;
        unsigned char header[TB_PROTO_HEADER_MAX];
        tb_proto_frame_t frames[2];
        tb_msg_t back;
        tb_err_t err;
        size_t len;
        ex[i].peak_rss_bytes = TB_PROTO_PEAK_MAX;
        size_t nf = s_frames(&ex[i], header, frames);
        ck_assert_int_eq(tb_proto_decode(frames, nf, &back, &err), 0);
        ck_assert_uint_eq(back.peak_rss_bytes, TB_PROTO_PEAK_MAX);
        ex[i].peak_rss_bytes = TB_PROTO_PEAK_MAX + 1;
        unsigned char scratch[TB_PROTO_HEADER_MAX];
        ck_assert_int_eq(tb_proto_encode(&ex[i], scratch, sizeof scratch, &len, &err), -1);
        /* the same bytes by hand: the peak's 8 bytes are found by their value */
        size_t at = SIZE_MAX;
        for (size_t k = 0; k + 8 <= frames[0].bytes; k++) {
            uint64_t v;
            memcpy(&v, header + k, 8);
            if (v == htole64(TB_PROTO_PEAK_MAX))
                at = k;
        }
        ck_assert(at != SIZE_MAX);
        uint64_t big = htole64(TB_PROTO_PEAK_MAX + 1);
        memcpy(header + at, &big, 8);
        ck_assert_int_eq(tb_proto_decode(frames, nf, &back, &err), -1);
        ck_assert_msg(strstr(err.msg, "peak memory") != NULL, "%s", err.msg);
    }
    ck_assert_int_eq(seen, 2);
}
END_TEST

START_TEST(test_every_truncation_and_extension_is_refused)
{
    tb_msg_t ex[16];
    int n = s_examples(ex);
    for (int i = 0; i < n; i++) {
        unsigned char header[TB_PROTO_HEADER_MAX];
        tb_proto_frame_t frames[3];
        size_t nf = s_frames(&ex[i], header, frames);
        size_t full = frames[0].bytes;
        tb_msg_t back;
        tb_err_t err;
        for (size_t cut = 0; cut < full; cut++) {
            frames[0].bytes = cut;
            ck_assert_int_eq(tb_proto_decode(frames, nf, &back, &err), -1);
            ck_assert_int_eq(err.code, TB_E_PROTOCOL);
            ck_assert_int_eq(back.cmd, 0);
        }
        /* One trailing byte. */
        header[full] = 0;
        frames[0].bytes = full + 1;
        ck_assert_int_eq(tb_proto_decode(frames, nf, &back, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "trailing"));
        frames[0].bytes = full;
        /* Missing payload / extra frame. */
        ck_assert_int_eq(tb_proto_decode(frames, nf == 2 ? 1 : 2, &back, &err), -1);
        frames[2] = frames[0];
        ck_assert_int_eq(tb_proto_decode(frames, 3, &back, &err), -1);
        ck_assert_int_eq(tb_proto_decode(frames, 0, &back, &err), -1);
        /* Negative control: the untouched frames still decode. */
        ck_assert_int_eq(tb_proto_decode(frames, nf, &back, &err), 0);
    }
}
END_TEST

START_TEST(test_bit_flips_never_crash_and_keep_invariants)
{
    tb_msg_t ex[16];
    int n = s_examples(ex);
    int refused = 0, accepted = 0;
    for (int i = 0; i < n; i++) {
        unsigned char header[TB_PROTO_HEADER_MAX], bad[TB_PROTO_HEADER_MAX];
        tb_proto_frame_t frames[2];
        size_t nf = s_frames(&ex[i], header, frames);
        for (size_t at = 0; at < frames[0].bytes; at++)
            for (int bit = 0; bit < 8; bit++) {
                memcpy(bad, header, frames[0].bytes);
                bad[at] ^= (unsigned char)(1u << bit);
                tb_proto_frame_t f2[2] = {{bad, frames[0].bytes}, frames[1]};
                tb_msg_t back;
                tb_err_t err;
                if (tb_proto_decode(f2, nf, &back, &err) == 0) {
                    accepted++;
                    /* Whatever was accepted obeys the invariants the rest of the code relies on. */
                    ck_assert(back.cmd >= TB_CMD_READY && back.cmd <= TB_CMD_CANCEL);
                    ck_assert(strlen(back.name) <= TB_PROTO_NAME_MAX);
                    ck_assert(strlen(back.text) <= TB_PROTO_TEXT_MAX);
                    ck_assert(back.fraction_ppm <= 1000000);
                    if (back.cmd == TB_CMD_JOB || back.cmd == TB_CMD_RESULT) {
                        ck_assert_uint_lt(back.chunk_index, back.chunk_count);
                        ck_assert_uint_le(back.chunk_bytes, back.total_bytes);
                    }
                } else {
                    refused++;
                    ck_assert_int_eq(err.code, TB_E_PROTOCOL);
                }
            }
    }
    /* Flips in ids and lengths must be refused; flips inside numbers may be valid messages. */
    ck_assert_int_gt(refused, 0);
    ck_assert_int_gt(accepted, 0);
}
END_TEST

START_TEST(test_random_frames_are_refused)
{
    unsigned char buf[600];
    int accepted = 0;
    for (int k = 0; k < 200000; k++) {
        size_t len = tb_hash(k, TB_SALT_TEST, 0, 0, 0) % sizeof buf;
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)tb_hash(k, TB_SALT_TEST, (int64_t)i, 1, 0);
        /* Half the time, a valid prefix so the decoder gets past the protocol id. */
        if ((k & 1) && len >= 5) {
            memcpy(buf, "TBK\x01", 4);
            buf[4] = (unsigned char)(1 + k % 8);
        }
        tb_proto_frame_t frames[2] = {{buf, len}, {buf, len / 2}};
        tb_msg_t m;
        tb_err_t err;
        if (tb_proto_decode(frames, 1 + (size_t)(k % 3 == 0), &m, &err) == 0)
            accepted++;
        else
            ck_assert_int_eq(err.code, TB_E_PROTOCOL);
    }
    /* A HEARTBEAT header is exactly 5 bytes, so random data is almost never a message. */
    ck_assert_int_lt(accepted, 2000);
}
END_TEST

START_TEST(test_lying_chunk_headers)
{
    tb_msg_t m;
    tb_msg_init(&m, TB_CMD_RESULT);
    m.job_id = 1;
    m.attempt = 1;
    m.chunk = s_payload;
    struct {
        uint32_t index, count;
        uint64_t total;
        size_t bytes;
    } cases[] = {
        {0, 0, 16, 16},                        /* no chunks */
        {2, 2, 16, 16},                        /* index past count */
        {0, 1, 8, 16},                         /* chunk bigger than the whole */
        {0, 1000, 16, 16},                     /* more chunks than bytes */
        {0, 1, TB_PROTO_TRANSFER_MAX + 1, 16}, /* over the protocol's limit */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m.chunk_index = cases[i].index;
        m.chunk_count = cases[i].count;
        m.total_bytes = cases[i].total;
        m.chunk_bytes = cases[i].bytes;
        unsigned char header[TB_PROTO_HEADER_MAX];
        size_t len;
        tb_err_t err;
        /* The encoder refuses to produce them ... */
        ck_assert_int_eq(tb_proto_encode(&m, header, sizeof header, &len, &err), -1);
        /* ... and the decoder refuses them when a peer does. */
        tb_msg_t ok = m;
        ok.chunk_index = 0;
        ok.chunk_count = 1;
        ok.total_bytes = 16;
        ok.chunk_bytes = 16;
        ck_assert_int_eq(tb_proto_encode(&ok, header, sizeof header, &len, &err), 0);
        /* Patch index, count and total in place: they follow cmd (5), job id (8), attempt (4). */
        unsigned char *p = header + 17;
        for (int b = 0; b < 4; b++)
            p[b] = (unsigned char)(cases[i].index >> (8 * b));
        for (int b = 0; b < 4; b++)
            p[4 + b] = (unsigned char)(cases[i].count >> (8 * b));
        for (int b = 0; b < 8; b++)
            p[8 + b] = (unsigned char)(cases[i].total >> (8 * b));
        tb_proto_frame_t frames[2] = {{header, len}, {s_payload, cases[i].bytes}};
        tb_msg_t back;
        ck_assert_int_eq(tb_proto_decode(frames, 2, &back, &err), -1);
        ck_assert_int_eq(err.code, TB_E_PROTOCOL);
    }
}
END_TEST

START_TEST(test_names_and_text)
{
    tb_msg_t m;
    tb_msg_init(&m, TB_CMD_READY);
    m.threads = 1;
    strcpy(m.build_id, "x");
    unsigned char header[TB_PROTO_HEADER_MAX];
    size_t len;
    tb_err_t err;
    /* Empty and non-printable names are refused by the encoder. */
    ck_assert_int_eq(tb_proto_encode(&m, header, sizeof header, &len, &err), -1);
    strcpy(m.name, "bad\nname");
    ck_assert_int_eq(tb_proto_encode(&m, header, sizeof header, &len, &err), -1);
    strcpy(m.name, "good");
    ck_assert_int_eq(tb_proto_encode(&m, header, sizeof header, &len, &err), 0);
    /* Text is sanitised on the way in, so anything sent decodes. */
    tb_msg_t f;
    tb_msg_init(&f, TB_CMD_FAIL);
    tb_msg_set_text(f.text, TB_PROTO_TEXT_MAX, "line one\nline two\x7f");
    ck_assert_str_eq(f.text, "line one?line two?");
    char long_text[3000];
    memset(long_text, 'a', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    tb_msg_set_text(f.text, TB_PROTO_TEXT_MAX, long_text);
    ck_assert_uint_eq(strlen(f.text), TB_PROTO_TEXT_MAX);
    ck_assert_int_eq(tb_proto_encode(&f, header, sizeof header, &len, &err), 0);
    tb_proto_frame_t frames[1] = {{header, len}};
    tb_msg_t back;
    ck_assert_int_eq(tb_proto_decode(frames, 1, &back, &err), 0);
    ck_assert_uint_eq(strlen(back.text), TB_PROTO_TEXT_MAX);
}
END_TEST

static tb_msg_t s_chunk(uint64_t job, uint32_t attempt, uint32_t index, uint32_t count,
                        uint64_t total, const void *data, size_t bytes)
{
    tb_msg_t m;
    tb_msg_init(&m, TB_CMD_RESULT);
    m.job_id = job;
    m.attempt = attempt;
    m.chunk_index = index;
    m.chunk_count = count;
    m.total_bytes = total;
    m.chunk = data;
    m.chunk_bytes = bytes;
    return m;
}

START_TEST(test_transfer_reassembles_in_order_only)
{
    unsigned char data[100];
    for (int i = 0; i < 100; i++)
        data[i] = (unsigned char)i;
    tb_transfer_t t;
    tb_err_t err;
    tb_transfer_init(&t, 1000);
    uint32_t count = tb_proto_chunk_count(100, 30);
    ck_assert_uint_eq(count, 4);
    for (uint32_t c = 0; c < count; c++) {
        size_t off = c * 30, n = 100 - off < 30 ? 100 - off : 30;
        tb_msg_t m = s_chunk(7, 2, c, count, 100, data + off, n);
        int r = tb_transfer_add(&t, &m, &err);
        ck_assert_int_eq(r, c + 1 == count ? 1 : 0);
    }
    size_t bytes;
    unsigned char *got = tb_transfer_take(&t, &bytes);
    ck_assert_uint_eq(bytes, 100);
    ck_assert(memcmp(got, data, 100) == 0);
    free(got);
    /* Out of order, another attempt, a lie about the total, over the limit: all refused. */
    tb_msg_t first = s_chunk(7, 2, 0, 4, 100, data, 30);
    tb_msg_t skip = s_chunk(7, 2, 2, 4, 100, data, 30);
    ck_assert_int_eq(tb_transfer_add(&t, &first, &err), 0);
    ck_assert_int_eq(tb_transfer_add(&t, &skip, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "out of order"));
    ck_assert_int_eq(tb_transfer_add(&t, &first, &err), 0);
    tb_msg_t other = s_chunk(7, 3, 1, 4, 100, data, 30);
    ck_assert_int_eq(tb_transfer_add(&t, &other, &err), -1);
    tb_msg_t late = s_chunk(7, 2, 1, 4, 100, data, 30);
    ck_assert_int_eq(tb_transfer_add(&t, &late, &err), -1); /* reset: must start at 0 */
    tb_msg_t big = s_chunk(8, 1, 0, 2, 2000, data, 30);
    ck_assert_int_eq(tb_transfer_add(&t, &big, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "allowed"));
    tb_msg_t short_last = s_chunk(9, 1, 0, 1, 100, data, 60);
    ck_assert_int_eq(tb_transfer_add(&t, &short_last, &err), -1);
    tb_transfer_reset(&t);
    /* An empty transfer is one empty chunk. */
    tb_msg_t empty = s_chunk(10, 1, 0, 1, 0, data, 0);
    ck_assert_int_eq(tb_transfer_add(&t, &empty, &err), 1);
    got = tb_transfer_take(&t, &bytes);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(bytes, 0);
    free(got);
}
END_TEST

START_TEST(test_over_a_socket_extra_frames_are_bounded)
{
    void *ctx = zmq_ctx_new();
    void *a = zmq_socket(ctx, ZMQ_PAIR), *b = zmq_socket(ctx, ZMQ_PAIR);
    ck_assert_int_eq(zmq_bind(a, "inproc://proto-test"), 0);
    ck_assert_int_eq(zmq_connect(b, "inproc://proto-test"), 0);
    tb_msg_t ex[16];
    int n = s_examples(ex);
    tb_err_t err;
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(tb_proto_send(b, NULL, 0, &ex[i], 0, &err), 0);
        tb_proto_rx_t rx;
        ck_assert_int_eq(tb_proto_recv(a, &rx, 0), 0);
        tb_msg_t back;
        ck_assert_int_eq(tb_proto_rx_decode(&rx, 0, &back, &err), 0);
        ck_assert_int_eq(back.cmd, ex[i].cmd);
        tb_proto_rx_close(&rx);
    }
    /* 1000 frames in one message: kept at 3, the rest dropped and the message refused. */
    for (int i = 0; i < 1000; i++)
        zmq_send(b, "TBK\x01\x06", 5, i < 999 ? ZMQ_SNDMORE : 0);
    tb_proto_rx_t rx;
    ck_assert_int_eq(tb_proto_recv(a, &rx, 0), 0);
    ck_assert_uint_eq(rx.n_frames, TB_PROTO_MAX_FRAMES + 1);
    ck_assert_uint_eq(rx.dropped_frames, 1000 - TB_PROTO_MAX_FRAMES - 1);
    tb_msg_t back;
    ck_assert_int_eq(tb_proto_rx_decode(&rx, 0, &back, &err), -1);
    tb_proto_rx_close(&rx);
    tb_proto_rx_close(&rx);
    /* Nothing waiting: EAGAIN. */
    ck_assert_int_eq(tb_proto_recv(a, &rx, ZMQ_DONTWAIT), -1);
    zmq_close(a);
    zmq_close(b);
    zmq_ctx_term(ctx);
}
END_TEST

Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_command_round_trips);
    tcase_add_test(tc, test_a_peak_beyond_the_bound_is_refused);
    tcase_add_test(tc, test_every_truncation_and_extension_is_refused);
    tcase_add_test(tc, test_bit_flips_never_crash_and_keep_invariants);
    tcase_add_test(tc, test_random_frames_are_refused);
    tcase_add_test(tc, test_lying_chunk_headers);
    tcase_add_test(tc, test_names_and_text);
    tcase_add_test(tc, test_transfer_reassembles_in_order_only);
    tcase_add_test(tc, test_over_a_socket_extra_frames_are_bounded);
    suite_add_tcase(s, tc);
    return s;
}
