/* The wire protocol of the coordinator and its workers (docs/distribution.md): one multipart ZeroMQ
 * message per command, decoded by a parser that survives any bytes.
 *
 * A message is one header frame, plus one payload frame for JOB and RESULT. (On the coordinator's
 * ROUTER the peer's routing id comes first and is not part of the message.) The header frame is
 *
 *   "TBK"  protocol id            3 bytes
 *   u8     protocol version (1)
 *   u8     command
 *   fields of the command, little-endian, in this order, and nothing after them:
 *
 *   READY      str8 worker name, str8 build id, u32 threads, u64 memory bytes       worker -> coord
 *   JOB        u64 job id, u32 attempt, str8 kind, u32 chunk index, u32 chunk count,
 *              u64 total bytes; payload frame = that chunk of the spec blob          coord ->
 * worker PROGRESS   u64 job id, u32 attempt, u32 fraction in millionths, str16 note      worker ->
 * coord RESULT     u64 job id, u32 attempt, u32 chunk index, u32 chunk count, u64 total bytes;
 * payload frame = that chunk of the result blob       worker -> coord FAIL       u64 job id, u32
 * attempt, u32 error code (tb_errcode_t), str16 message worker -> coord HEARTBEAT  (nothing) both
 * ways DISCONNECT u32 code (tb_proto_bye_t), str16 reason                                 both ways
 *   CANCEL     u64 job id, u32 attempt                                               coord ->
 * worker
 *
 * str8 is a u8 length and that many bytes, str16 a u16 length; names, build ids and kinds are
 * printable ASCII, notes and messages any bytes but control characters. A spec or result larger
 * than one chunk travels as several JOB or RESULT messages (a "transfer") in order, so heartbeats
 * keep flowing between chunks (libzmq's GitHub issue #2709: heartbeats time out behind a big one).
 *
 * Every read is bounds-checked and every failure is `goto malformed` with a message naming the
 * command and field: nothing a peer sends can crash the process or allocate more than the limits
 * below allow (czmq's zgossip_msg_recv is the model). tests/fuzz/fuzz_proto.c fuzzes the decoder.
 */
#ifndef TB_PROTO_H
#define TB_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define TB_PROTO_ID "TBK"
#define TB_PROTO_VERSION 2 /* 2: RESULT and FAIL carry the worker's peak memory */
#define TB_PROTO_PEAK_MAX ((uint64_t)1 << 50) /* 1 PiB: no honest worker's peak */

#define TB_PROTO_NAME_MAX 127             /* worker names, build ids, job kinds */
#define TB_PROTO_TEXT_MAX 1023            /* notes, failure messages, disconnect reasons */
#define TB_PROTO_HEADER_MAX 2048          /* the longest header frame any command can need */
#define TB_PROTO_CHUNK_DEFAULT (1u << 20) /* 1 MiB: a chunk takes ~10 ms on a 1 Gbit/s link */
#define TB_PROTO_CHUNK_MAX (8u << 20)     /* the largest payload frame a peer may send */
/* ZMQ_MAXMSGSIZE: libzmq drops a peer that sends a larger frame before it is ever buffered. */
#define TB_PROTO_MAXMSGSIZE ((int64_t)TB_PROTO_CHUNK_MAX + TB_PROTO_HEADER_MAX)
/* The largest blob a transfer may announce, whatever the run's own (smaller) limit says. */
/* The environment variable in which a coordinator hands its local helper the routing id to connect
 * under: the helper's identity is its connection, not its declared name (local_workers.h). */
#define TB_PROTO_ROUTING_ENV "TB_WORKER_ROUTING_ID"
#define TB_PROTO_TRANSFER_MAX ((uint64_t)1 << 36)
/* A message has at most this many frames after the routing id. */
#define TB_PROTO_MAX_FRAMES 2

typedef enum {
    TB_CMD_READY = 1,
    TB_CMD_JOB = 2,
    TB_CMD_PROGRESS = 3,
    TB_CMD_RESULT = 4,
    TB_CMD_FAIL = 5,
    TB_CMD_HEARTBEAT = 6,
    TB_CMD_DISCONNECT = 7,
    TB_CMD_CANCEL = 8
} tb_cmd_t;

/* Why a DISCONNECT was sent. A worker exits 0 on TB_BYE_DONE and non-zero on TB_BYE_REFUSED. */
typedef enum {
    TB_BYE_DONE = 0,    /* the run is over; nothing more to do */
    TB_BYE_REFUSED = 1, /* this worker may not take part (build id, blocklist, protocol version) */
    TB_BYE_LEAVING = 2  /* a worker going away (signal, shutdown) */
} tb_proto_bye_t;

/* One decoded command. Fields not used by `cmd` are zero. `chunk` points into the frame it was
 * decoded from (it is borrowed, valid only as long as those frames). */
typedef struct {
    tb_cmd_t cmd;
    /* READY */
    char name[TB_PROTO_NAME_MAX + 1];
    char build_id[TB_PROTO_NAME_MAX + 1];
    uint32_t threads;
    uint64_t memory_bytes;
    /* JOB, PROGRESS, RESULT, FAIL, CANCEL */
    uint64_t job_id;
    uint32_t attempt;
    /* JOB */
    char kind[TB_PROTO_NAME_MAX + 1];
    /* JOB, RESULT: one chunk of a transfer */
    uint32_t chunk_index;
    uint32_t chunk_count;
    uint64_t total_bytes;
    const void *chunk;
    size_t chunk_bytes;
    /* RESULT, FAIL: the worker's peak resident memory during the attempt (its VmHWM, reset when
     * the job started); 0: not measured. At most TB_PROTO_PEAK_MAX. */
    uint64_t peak_rss_bytes;
    /* PROGRESS */
    uint32_t fraction_ppm; /* 0..1000000 */
    /* FAIL (tb_errcode_t), DISCONNECT (tb_proto_bye_t) */
    uint32_t code;
    /* PROGRESS note, FAIL message, DISCONNECT reason */
    char text[TB_PROTO_TEXT_MAX + 1];
} tb_msg_t;

/* A frame as bytes, for the decoder (so it can be driven without ZeroMQ, e.g. by the fuzzer). */
typedef struct {
    const void *data;
    size_t bytes;
} tb_proto_frame_t;

/* "READY", "JOB", ...; "?" for a value that is no command. */
const char *tb_proto_cmd_name(int cmd);

/* Clears *msg and sets its command. */
void tb_msg_init(tb_msg_t *msg, tb_cmd_t cmd);

/* Copies text into a message string of capacity cap (+1 for the NUL), truncating it and turning
 * control characters into '?', so what is sent always decodes. */
void tb_msg_set_text(char *dst, size_t cap, const char *text);

/* Decodes frames[0..n_frames) (the routing id already removed) into *msg. Returns 0, or -1 with
 * TB_E_PROTOCOL and a message naming the command and field for anything malformed: a wrong protocol
 * id or version, an unknown command, a truncated or over-long field, trailing bytes, a wrong frame
 * count, an inconsistent chunk. Never reads outside the frames. */
int tb_proto_decode(const tb_proto_frame_t *frames, size_t n_frames, tb_msg_t *msg, tb_err_t *err);

/* Encodes the header frame of *msg into buf[0..cap) and its length into *len. The payload (JOB and
 * RESULT) is msg->chunk, sent as a second frame. Fails with TB_E_INVALID on a field the decoder
 * would refuse (an over-long name, a chunk larger than TB_PROTO_CHUNK_MAX). */
int tb_proto_encode(const tb_msg_t *msg, unsigned char *buf, size_t cap, size_t *len,
                    tb_err_t *err);

/* Sends *msg on a raw libzmq socket (zsock_resolve() of a czmq one), preceded by the routing id
 * when routing_id is not NULL (ROUTER). flags is 0 or ZMQ_DONTWAIT. Returns 0, or -1 with *err set
 * and errno left as libzmq set it (EAGAIN, EHOSTUNREACH) so the caller can act on it. */
int tb_proto_send(void *socket, const void *routing_id, size_t id_bytes, const tb_msg_t *msg,
                  int flags, tb_err_t *err);

/* One received multipart message. At most TB_PROTO_MAX_FRAMES + 1 frames are kept; any more are
 * counted in `dropped_frames` and discarded as they arrive, so a peer cannot make us hold more. */
typedef struct {
    void *frames[TB_PROTO_MAX_FRAMES + 1]; /* zmq_msg_t, allocated by tb_proto_recv */
    size_t n_frames;
    size_t dropped_frames;
} tb_proto_rx_t;

/* Receives one whole multipart message from a raw libzmq socket into *rx (which the caller closes
 * with tb_proto_rx_close). flags is 0 or ZMQ_DONTWAIT. Returns 0, or -1 with errno set (EAGAIN
 * when nothing is waiting, EINTR on a signal). */
int tb_proto_recv(void *socket, tb_proto_rx_t *rx, int flags);

/* Frame i of a received message as bytes; i < rx->n_frames. */
tb_proto_frame_t tb_proto_rx_frame(const tb_proto_rx_t *rx, size_t i);

/* Decodes a received message, skipping `skip` leading frames (1 for the routing id on a ROUTER). */
int tb_proto_rx_decode(const tb_proto_rx_t *rx, size_t skip, tb_msg_t *msg, tb_err_t *err);

/* The ZAP user id of the connection a received message came by (with CURVE and zauth: the client's
 * public key in Z85), or NULL when the connection has none (no CURVE, ipc). Valid until close. */
const char *tb_proto_rx_user_id(const tb_proto_rx_t *rx);

/* Releases the frames of *rx; safe to call twice. */
void tb_proto_rx_close(tb_proto_rx_t *rx);

/* The number of chunks a transfer of total bytes takes at chunk_bytes a chunk (at least 1). */
uint32_t tb_proto_chunk_count(uint64_t total, size_t chunk_bytes);

/* Reassembles a spec or result from its chunks, checking that they belong to one transfer, arrive
 * in order and add up to the announced size, which must not exceed max_bytes. The buffer grows with
 * the bytes that actually arrive, never with what a header claims. */
typedef struct {
    uint64_t job_id;
    uint32_t attempt;
    uint32_t chunk_count;
    uint32_t next_index;
    uint64_t total_bytes;
    uint64_t max_bytes;
    unsigned char *data;
    size_t bytes;
    size_t capacity;
    bool started;
    /* when set, chunks go to it instead of the buffer (tb_transfer_set_sink) */
    int (*sink)(void *user, const void *data, size_t bytes, tb_err_t *err);
    void *sink_user;
} tb_transfer_t;

/* Starts an empty transfer accepting at most max_bytes in all. */
void tb_transfer_init(tb_transfer_t *t, uint64_t max_bytes);
/* Adds one JOB or RESULT chunk. Returns 1 when the transfer is complete (t->data holds
 * t->total_bytes bytes), 0 when more chunks are expected, -1 with TB_E_PROTOCOL when the chunk does
 * not continue this transfer or exceeds the limit (the transfer is then reset). */
int tb_transfer_add(tb_transfer_t *t, const tb_msg_t *msg, tb_err_t *err);
/* Passes every chunk's bytes to `sink` instead of buffering them (a transfer too large to hold:
 * the dispatch engine writes it to a file); the checks are the same, and a sink's failure fails the
 * chunk with the sink's error. Cleared by reset and init. */
void tb_transfer_set_sink(tb_transfer_t *t,
                          int (*sink)(void *user, const void *data, size_t bytes, tb_err_t *err),
                          void *user);
/* Hands the completed bytes to the caller (who frees them) and resets the transfer. */
void *tb_transfer_take(tb_transfer_t *t, size_t *bytes_out);
/* Frees any partial data and starts over with the same limit. */
void tb_transfer_reset(tb_transfer_t *t);

#endif
