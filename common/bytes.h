/* Little-endian byte buffers: a growable writer and a bounds-checked reader.
 *
 * For the small binary encodings that travel between a worker and the coordinator (histograms,
 * statistics). The writer never fails half-way through a value: an allocation failure sets `failed`
 * and every later put is ignored, so a caller checks once at the end. The reader never reads past
 * its end: a short or malformed read sets `failed`, returns 0 and every later read returns 0 too,
 * so a decoder reads a whole structure and checks `failed` once (czmq `zgossip_msg_recv`'s `goto
 * malformed`, without the goto). Integers are little-endian; doubles are IEEE 754 binary64 bit
 * patterns; varints are unsigned LEB128 of at most 10 bytes.
 */
#ifndef TB_BYTES_H
#define TB_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct {
    uint8_t *data;
    size_t len, cap;
    bool failed; /* an allocation failed; the contents are incomplete */
} tb_bytes_t;

/* An empty writer (no allocation until the first put). */
void tb_bytes_init(tb_bytes_t *b);
/* Frees the buffer and empties the writer; accepts NULL. */
void tb_bytes_free(tb_bytes_t *b);
/* Hands the bytes to the caller (who frees them) and empties the writer; NULL when failed or empty
 * (*len is then 0, or the number of bytes when empty and not failed). */
uint8_t *tb_bytes_take(tb_bytes_t *b, size_t *len);

void tb_bytes_put(tb_bytes_t *b, const void *src, size_t n);
void tb_bytes_put_u8(tb_bytes_t *b, uint8_t v);
void tb_bytes_put_u16(tb_bytes_t *b, uint16_t v);
void tb_bytes_put_u32(tb_bytes_t *b, uint32_t v);
void tb_bytes_put_u64(tb_bytes_t *b, uint64_t v);
void tb_bytes_put_i64(tb_bytes_t *b, int64_t v);
void tb_bytes_put_f64(tb_bytes_t *b, double v);
void tb_bytes_put_varint(tb_bytes_t *b, uint64_t v);

typedef struct {
    const uint8_t *data;
    size_t len, pos;
    bool failed; /* a read ran past the end or met a malformed varint */
} tb_reader_t;

/* A reader over `len` bytes the caller keeps alive. */
void tb_reader_init(tb_reader_t *r, const void *data, size_t len);
/* Bytes not yet read (0 after a failure). */
size_t tb_reader_left(const tb_reader_t *r);
/* Copies n bytes to dst (zeros on failure); returns whether it could. */
bool tb_reader_get(tb_reader_t *r, void *dst, size_t n);
uint8_t tb_reader_u8(tb_reader_t *r);
uint16_t tb_reader_u16(tb_reader_t *r);
uint32_t tb_reader_u32(tb_reader_t *r);
uint64_t tb_reader_u64(tb_reader_t *r);
int64_t tb_reader_i64(tb_reader_t *r);
double tb_reader_f64(tb_reader_t *r);
uint64_t tb_reader_varint(tb_reader_t *r);

/* Reads u32 magic | u32 version; 0 when they are the ones given, or -1 with *err set (TB_E_FORMAT
 * "WHAT: not a WHAT (bad magic)" or "WHAT: version V, this build reads W") and the reader failed.
 */
int tb_reader_magic(tb_reader_t *r, uint32_t magic, uint32_t version, const char *what,
                    tb_err_t *err);

/* The preamble the job codecs share (docs/distribution.md, "Verifying results"): u32 magic | u32
 * version | u32 text bytes | text. Reads it and returns the text NUL-terminated (the caller frees
 * it), or NULL with *err set: TB_E_FORMAT "WHAT: not a WHAT (bad magic)", "WHAT: version V, this
 * build reads W", "WHAT: header of N bytes, M left" (over max_bytes or past the end), or
 * TB_E_NOMEM. Never reads past the end; allocates at most max_bytes + 1. */
char *tb_reader_preamble(tb_reader_t *r, uint32_t magic, uint32_t version, uint32_t max_bytes,
                         const char *what, tb_err_t *err);

#endif
