/* Blobs; see blob.h. Integers are packed little-endian explicitly so a blob written on one host
 * reads on any other a farm may mix. */
#include "common/blob.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#define S_MAGIC "TBB"
#define S_VERSION 1
#define S_CODEC_ZSTD 1

static void s_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t s_get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

int tb_blob_encode(const void *data, size_t bytes, int level, void **blob_out,
                   size_t *blob_bytes_out, tb_err_t *err)
{
    *blob_out = NULL;
    *blob_bytes_out = 0;
    if (level == 0)
        level = TB_BLOB_DEFAULT_LEVEL;
    size_t bound = ZSTD_compressBound(bytes);
    if (ZSTD_isError(bound))
        return tb_err_set(err, TB_E_INVALID, "blob: %zu bytes are too many to compress", bytes);
    unsigned char *blob = tb_malloc(TB_BLOB_HEADER_BYTES + bound, "a blob", err);
    if (!blob)
        return -1;
    size_t packed = ZSTD_compress(blob + TB_BLOB_HEADER_BYTES, bound, data, bytes, level);
    if (ZSTD_isError(packed)) {
        free(blob);
        return tb_err_set(err, TB_E_INTERNAL, "blob: zstd could not compress %zu bytes: %s", bytes,
                          ZSTD_getErrorName(packed));
    }
    memcpy(blob, S_MAGIC, 3);
    blob[3] = S_VERSION;
    blob[4] = S_CODEC_ZSTD;
    blob[5] = blob[6] = blob[7] = 0;
    s_put64(blob + 8, (uint64_t)bytes);
    s_put64(blob + 16, XXH3_64bits(data, bytes));
    s_put64(blob + 24, (uint64_t)packed);
    /* Give back the slack of the compress bound; a failed shrink keeps the larger block. */
    void *shrunk = realloc(blob, TB_BLOB_HEADER_BYTES + packed);
    *blob_out = shrunk ? shrunk : blob;
    *blob_bytes_out = TB_BLOB_HEADER_BYTES + packed;
    return 0;
}

int tb_blob_peek(const void *blob_, size_t blob_bytes, tb_blob_info_t *info, tb_err_t *err)
{
    const unsigned char *blob = blob_;
    memset(info, 0, sizeof *info);
    if (blob_bytes < TB_BLOB_HEADER_BYTES)
        return tb_err_set(err, TB_E_FORMAT, "blob: %zu bytes, shorter than its %d-byte header",
                          blob_bytes, TB_BLOB_HEADER_BYTES);
    if (memcmp(blob, S_MAGIC, 3) != 0)
        return tb_err_set(err, TB_E_FORMAT, "blob: does not start with \"%s\"", S_MAGIC);
    if (blob[3] != S_VERSION)
        return tb_err_set(err, TB_E_FORMAT, "blob: format version %u, expected %u", blob[3],
                          S_VERSION);
    if (blob[4] != S_CODEC_ZSTD || blob[5] || blob[6] || blob[7])
        return tb_err_set(err, TB_E_FORMAT, "blob: codec %u, expected %u (zstd)", blob[4],
                          S_CODEC_ZSTD);
    info->raw_bytes = s_get64(blob + 8);
    info->raw_xxh3 = s_get64(blob + 16);
    info->packed_bytes = s_get64(blob + 24);
    if (info->packed_bytes != blob_bytes - TB_BLOB_HEADER_BYTES)
        return tb_err_set(
            err, TB_E_FORMAT, "blob: header says %llu compressed bytes, %zu follow the header",
            (unsigned long long)info->packed_bytes, blob_bytes - TB_BLOB_HEADER_BYTES);
    return 0;
}

int tb_blob_decode(const void *blob_, size_t blob_bytes, size_t max_raw_bytes, void **data_out,
                   size_t *bytes_out, tb_err_t *err)
{
    const unsigned char *blob = blob_;
    *data_out = NULL;
    *bytes_out = 0;
    tb_blob_info_t info;
    if (tb_blob_peek(blob, blob_bytes, &info, err) != 0)
        return -1;
    if (info.raw_bytes > max_raw_bytes)
        return tb_err_set(err, TB_E_INVALID,
                          "blob: decompresses to %llu bytes, more than the %zu allowed",
                          (unsigned long long)info.raw_bytes, max_raw_bytes);
    const unsigned char *frame = blob + TB_BLOB_HEADER_BYTES;
    size_t packed = (size_t)info.packed_bytes;
    /* The zstd frame must promise exactly the header's size: a frame without a content size, or
     * with another, is refused before decompressing into a buffer sized from untrusted input. */
    unsigned long long content = ZSTD_getFrameContentSize(frame, packed);
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN)
        return tb_err_set(err, TB_E_FORMAT, "blob: the zstd frame has no readable content size");
    if (content != info.raw_bytes)
        return tb_err_set(err, TB_E_FORMAT,
                          "blob: header says %llu bytes, the zstd frame says %llu",
                          (unsigned long long)info.raw_bytes, content);
    size_t raw = (size_t)info.raw_bytes;
    unsigned char *data = tb_malloc(raw, "a decoded blob", err);
    if (!data)
        return -1;
    size_t got = ZSTD_decompress(data, raw, frame, packed);
    if (ZSTD_isError(got) || got != raw) {
        free(data);
        return tb_err_set(err, TB_E_FORMAT, "blob: zstd frame does not decompress to %zu bytes: %s",
                          raw, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
    }
    uint64_t sum = XXH3_64bits(data, raw);
    if (sum != info.raw_xxh3) {
        free(data);
        return tb_err_set(err, TB_E_CHECKSUM,
                          "blob: XXH3 of the %zu decoded bytes is %016llx, the header says %016llx",
                          raw, (unsigned long long)sum, (unsigned long long)info.raw_xxh3);
    }
    *data_out = data;
    *bytes_out = raw;
    return 0;
}

int tb_blob_decode_head(const void *blob_, size_t blob_bytes, size_t want, tb_blob_info_t *info,
                        void **data_out, size_t *bytes_out, tb_err_t *err)
{
    const unsigned char *blob = blob_;
    *data_out = NULL;
    *bytes_out = 0;
    if (tb_blob_peek(blob, blob_bytes, info, err) != 0)
        return -1;
    size_t n = info->raw_bytes < want ? (size_t)info->raw_bytes : want;
    unsigned char *data = malloc(n ? n : 1);
    ZSTD_DStream *z = ZSTD_createDStream();
    if (!data || !z) {
        free(data);
        ZSTD_freeDStream(z);
        return tb_err_set(err, TB_E_NOMEM, "blob: out of memory for its first %zu bytes", n);
    }
    ZSTD_inBuffer in = {blob + TB_BLOB_HEADER_BYTES, (size_t)info->packed_bytes, 0};
    ZSTD_outBuffer out = {data, n, 0};
    size_t rc = 0;
    while (out.pos < n) {
        size_t before_in = in.pos, before_out = out.pos;
        rc = ZSTD_decompressStream(z, &out, &in);
        if (ZSTD_isError(rc) || rc == 0 || (in.pos == before_in && out.pos == before_out))
            break;
    }
    ZSTD_freeDStream(z);
    if (out.pos < n) {
        free(data);
        return tb_err_set(err, TB_E_FORMAT,
                          "blob: the zstd frame gave %zu of its first %zu bytes: %s", out.pos, n,
                          ZSTD_isError(rc) ? ZSTD_getErrorName(rc) : "short");
    }
    *data_out = data;
    *bytes_out = n;
    return 0;
}
