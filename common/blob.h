/* Blobs: zstd-compressed bytes with the XXH3-64 of what they decompress to (docs/determinism.md).
 *
 * Every job spec and every job result crosses the wire and lands in the result store as a blob. The
 * encoding is a fixed 32-byte little-endian header followed by one zstd frame:
 *
 *   offset 0  "TBB" + format version (1)          4 bytes
 *   offset 4  codec (1 = zstd), 3 bytes zero      4 bytes
 *   offset 8  raw_bytes: uncompressed size        u64
 *   offset 16 raw_xxh3: XXH3-64 of the raw bytes  u64
 *   offset 24 packed_bytes: zstd frame size       u64
 *   offset 32 the zstd frame
 *
 * The checksum is over the uncompressed bytes, because zstd may compress the same bytes differently
 * in another version. Decoding never trusts the header: sizes are checked against the buffer and
 * the caller's maximum before anything is allocated, and a checksum mismatch is TB_E_CHECKSUM,
 * never a wrong answer. Typical sizes: a job spec a few hundred bytes to a few MiB, a region result
 * tens to hundreds of MiB raw.
 */
#ifndef TB_BLOB_H
#define TB_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define TB_BLOB_HEADER_BYTES 32
#define TB_BLOB_DEFAULT_LEVEL 3

/* What a blob's header says, once checked for internal consistency. */
typedef struct {
    uint64_t raw_bytes;    /* uncompressed size */
    uint64_t raw_xxh3;     /* XXH3-64 of the uncompressed bytes */
    uint64_t packed_bytes; /* size of the zstd frame after the header */
} tb_blob_info_t;

/* Compresses data[0..bytes) at zstd `level` (TB_BLOB_DEFAULT_LEVEL when 0) into a new blob written
 * to *blob_out (malloc'd; the caller frees it) of *blob_bytes_out bytes. */
int tb_blob_encode(const void *data, size_t bytes, int level, void **blob_out,
                   size_t *blob_bytes_out, tb_err_t *err);

/* Reads and checks the header of blob[0..blob_bytes): the magic, version and codec, and that the
 * packed size is exactly what follows the header. Does not decompress. TB_E_FORMAT on any mismatch.
 */
int tb_blob_peek(const void *blob, size_t blob_bytes, tb_blob_info_t *info, tb_err_t *err);

/* Decompresses a blob into a new buffer *data_out (malloc'd, the caller frees; never NULL on
 * success, even for zero bytes) of *bytes_out bytes. Refuses a blob that would decompress to more
 * than max_raw_bytes (TB_E_INVALID) before allocating; a malformed header or zstd frame is
 * TB_E_FORMAT; bytes whose XXH3 differs from the header's is TB_E_CHECKSUM. On failure *data_out is
 * NULL. */
int tb_blob_decode(const void *blob, size_t blob_bytes, size_t max_raw_bytes, void **data_out,
                   size_t *bytes_out, tb_err_t *err);

/* The first min(want, raw size) bytes a blob decompresses to, into a new buffer *data_out of
 * *bytes_out bytes (malloc'd, the caller frees), with the header's size and checksum in *info.
 * Only those bytes are decompressed (zstd streaming), so the checksum over the whole is not
 * verified: for a blob this process made and kept (a job's spec, whose head a result check reads:
 * tb_job_check_result_head). A malformed header or frame is TB_E_FORMAT. */
int tb_blob_decode_head(const void *blob, size_t blob_bytes, size_t want, tb_blob_info_t *info,
                        void **data_out, size_t *bytes_out, tb_err_t *err);

#endif
