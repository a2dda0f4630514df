/* libFuzzer target for the wire protocol decoder (CC=clang, -DTB_FUZZ=ON):
 *
 *   build-fuzz/fuzz_proto -max_total_time=60 tests/fuzz/corpus-proto tests/fuzz/seeds/proto
 *
 * The input is split into frames (first byte: frame count 1..4; then each frame is a 16-bit length
 * and that many bytes), decoded, and - when it decodes - re-encoded and decoded again, which must
 * give the same message: the decoder never reads out of bounds (ASan), never accepts what the
 * encoder would refuse, and round-trips what it accepts. A transfer is fed every accepted chunk
 * too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/farm/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t n_frames = 1 + data[0] % 4, pos = 1;
    tb_proto_frame_t frames[4];
    for (size_t i = 0; i < n_frames; i++) {
        size_t len = 0;
        if (pos + 2 <= size) {
            len = data[pos] | (size_t)data[pos + 1] << 8;
            pos += 2;
        }
        if (len > size - pos)
            len = size - pos;
        frames[i].data = data + pos;
        frames[i].bytes = len;
        pos += len;
    }
    tb_msg_t m;
    tb_err_t err;
    if (tb_proto_decode(frames, n_frames, &m, &err) != 0)
        return 0;
    unsigned char header[TB_PROTO_HEADER_MAX];
    size_t len;
    if (tb_proto_encode(&m, header, sizeof header, &len, &err) != 0)
        abort(); /* accepted something the encoder refuses */
    tb_proto_frame_t again[2] = {{header, len}, {m.chunk, m.chunk_bytes}};
    tb_msg_t m2;
    if (tb_proto_decode(again, n_frames, &m2, &err) != 0)
        abort();
    if (m2.cmd != m.cmd || m2.job_id != m.job_id || m2.attempt != m.attempt ||
        strcmp(m2.name, m.name) || strcmp(m2.text, m.text) || m2.total_bytes != m.total_bytes)
        abort();
    if (m.cmd == TB_CMD_JOB || m.cmd == TB_CMD_RESULT) {
        tb_transfer_t t;
        tb_transfer_init(&t, 1 << 20);
        if (tb_transfer_add(&t, &m, &err) == 1) {
            size_t bytes;
            free(tb_transfer_take(&t, &bytes));
        }
        tb_transfer_reset(&t);
    }
    return 0;
}
