/* Results in memory or mapped from a file, and the streaming blob decoder; see result.h. */
#include "coordinator/farm/result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "common/blob.h"
#include "common/fs.h"

/* The pieces the streaming decoder reads and writes: large enough that a system call costs
 * nothing beside zstd, small enough to stay in the cache. */
#define S_IO_BYTES ((size_t)1 << 20)

struct tb_result_t {
    void *data;
    size_t bytes;
    bool mapped;
};

tb_result_t *tb_result_from_memory(void **data_p, size_t bytes, tb_err_t *err)
{
    tb_result_t *self = tb_calloc(1, sizeof *self, "a result", err);
    if (!self) {
        free(*data_p);
        *data_p = NULL;
        return NULL;
    }
    self->data = *data_p ? *data_p : malloc(1);
    *data_p = NULL;
    if (!self->data) {
        free(self);
        tb_err_set(err, TB_E_NOMEM, "out of memory for a result");
        return NULL;
    }
    self->bytes = bytes;
    return self;
}

tb_result_t *tb_result_map_fd(int fd, size_t bytes, tb_err_t *err)
{
    tb_result_t *self = tb_calloc(1, sizeof *self, "a result", err);
    if (!self) {
        close(fd);
        return NULL;
    }
    if (bytes == 0) {
        close(fd);
        void *none = NULL;
        free(self);
        return tb_result_from_memory(&none, 0, err);
    }
    void *p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        free(self);
        tb_err_set(err, TB_E_IO, "cannot map a result of %zu bytes: %s", bytes, strerror(e));
        return NULL;
    }
    self->data = p;
    self->bytes = bytes;
    self->mapped = true;
    return self;
}

void tb_result_destroy(tb_result_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_result_t *self = *self_p;
    if (self->mapped)
        munmap(self->data, self->bytes);
    else
        free(self->data);
    free(self);
    *self_p = NULL;
}

const void *tb_result_data(const tb_result_t *self)
{
    return self->data;
}

size_t tb_result_bytes(const tb_result_t *self)
{
    return self->bytes;
}

bool tb_result_mapped(const tb_result_t *self)
{
    return self->mapped;
}

void tb_result_done_with(tb_result_t *self, size_t offset, size_t bytes)
{
    if (!self || !self->mapped || offset >= self->bytes || bytes == 0)
        return;
    if (bytes > self->bytes - offset)
        bytes = self->bytes - offset;
    /* dropping a page of a read-only file mapping loses nothing: a later read faults it in again */
    tb_fs_map_release(self->data, self->bytes, offset, offset + bytes);
}

/* ---- the streaming decoder ---- */

static int s_pread_all(int fd, void *buf, size_t n, uint64_t off, tb_err_t *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return tb_err_set(err, r == 0 ? TB_E_FORMAT : TB_E_IO, "%s after %zu of %zu bytes",
                              r == 0 ? "the blob ends early" : strerror(errno), got, n);
        got += (size_t)r;
    }
    return 0;
}

static int s_write_all(int fd, const void *buf, size_t n, tb_err_t *err)
{
    size_t put = 0;
    while (put < n) {
        ssize_t r = write(fd, (const char *)buf + put, n - put);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return tb_err_set(err, TB_E_IO, "cannot write a decoded result: %s", strerror(errno));
        put += (size_t)r;
    }
    return 0;
}

/* An unlinked temporary file in dir, open for reading and writing; -1 with *err. */
static int s_anon_file(const char *dir, tb_err_t *err)
{
    char path[4200];
    if (snprintf(path, sizeof path, "%s/.tb-result.XXXXXX", dir && *dir ? dir : "/tmp") >=
        (int)sizeof path)
        return tb_err_set(err, TB_E_INVALID, "%s: directory path too long", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot create a file for a large result: %s", path,
                          strerror(errno));
    unlink(path);
    return fd;
}

/* One streaming decode: zstd's state, the hash, the output buffer and where it goes. */
typedef struct {
    ZSTD_DStream *z;
    XXH3_state_t *h;
    unsigned char *out;
    uint64_t raw;      /* what the frame must decode to */
    uint64_t produced; /* so far */
    int out_fd;
} s_stream_t;

/* Decodes what zstd gives for the input left in *ib into one output buffer, hashes and writes it;
 * *last is zstd's hint (0: the frame is complete). */
static int s_pump(s_stream_t *st, ZSTD_inBuffer *ib, size_t *last, tb_err_t *err)
{
    ZSTD_outBuffer ob = {st->out, S_IO_BYTES, 0};
    *last = ZSTD_decompressStream(st->z, &ob, ib);
    if (ZSTD_isError(*last))
        return tb_err_set(err, TB_E_FORMAT, "blob: zstd frame does not decompress: %s",
                          ZSTD_getErrorName(*last));
    if (st->produced + ob.pos > st->raw)
        return tb_err_set(err, TB_E_FORMAT, "blob: zstd frame decodes to more than %llu bytes",
                          (unsigned long long)st->raw);
    XXH3_64bits_update(st->h, st->out, ob.pos);
    if (s_write_all(st->out_fd, st->out, ob.pos, err) != 0)
        return -1;
    st->produced += ob.pos;
    return 0;
}

/* Streams the zstd frame of `packed` bytes at `off` of in_fd into out_fd, hashing what comes out;
 * the frame must decode to exactly `raw` bytes. */
static int s_stream(int in_fd, uint64_t off, uint64_t packed, uint64_t raw, int out_fd,
                    uint64_t *sum, tb_err_t *err)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    XXH3_state_t *h = XXH3_createState();
    unsigned char *in = malloc(S_IO_BYTES), *out = malloc(S_IO_BYTES);
    int rc = -1;
    if (!z || !h || !in || !out) {
        tb_err_set(err, TB_E_NOMEM, "out of memory decoding a large result");
        goto done;
    }
    ZSTD_initDStream(z);
    XXH3_64bits_reset(h);
    s_stream_t st = {z, h, out, raw, 0, out_fd};
    uint64_t read_off = 0;
    size_t last = 1;
    bool header_checked = false;
    while (read_off < packed) {
        size_t n = packed - read_off < S_IO_BYTES ? (size_t)(packed - read_off) : S_IO_BYTES;
        if (s_pread_all(in_fd, in, n, off + read_off, err) != 0)
            goto done;
        if (!header_checked) {
            /* The frame must promise the header's size, as tb_blob_decode requires. */
            unsigned long long content = ZSTD_getFrameContentSize(in, n);
            if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN) {
                tb_err_set(err, TB_E_FORMAT, "blob: the zstd frame has no readable content size");
                goto done;
            }
            if (content != raw) {
                tb_err_set(err, TB_E_FORMAT,
                           "blob: header says %llu bytes, the zstd frame says %llu",
                           (unsigned long long)raw, content);
                goto done;
            }
            header_checked = true;
        }
        read_off += n;
        ZSTD_inBuffer ib = {in, n, 0};
        while (ib.pos < ib.size) {
            if (s_pump(&st, &ib, &last, err) != 0)
                goto done;
            if (last == 0 && ib.pos < ib.size) {
                tb_err_set(err, TB_E_FORMAT, "blob: bytes after the zstd frame");
                goto done;
            }
        }
    }
    /* Output still held inside zstd after the last input. */
    while (last != 0) {
        ZSTD_inBuffer ib = {in, 0, 0};
        size_t before = st.produced;
        if (s_pump(&st, &ib, &last, err) != 0)
            goto done;
        if (st.produced == before && last != 0) {
            tb_err_set(err, TB_E_FORMAT, "blob: zstd frame is truncated");
            goto done;
        }
    }
    if (st.produced != raw) {
        tb_err_set(err, TB_E_FORMAT, "blob: zstd frame does not decompress to %llu bytes: short",
                   (unsigned long long)raw);
        goto done;
    }
    *sum = XXH3_64bits_digest(h);
    rc = 0;
done:
    ZSTD_freeDStream(z);
    XXH3_freeState(h);
    free(in);
    free(out);
    return rc;
}

int tb_result_decode_fd(int fd, uint64_t offset, uint64_t blob_bytes, size_t max_raw_bytes,
                        size_t large_bytes, const char *tmp_dir, tb_result_t **out, uint64_t *xxh3,
                        tb_err_t *err)
{
    *out = NULL;
    unsigned char head[TB_BLOB_HEADER_BYTES];
    if (blob_bytes < TB_BLOB_HEADER_BYTES)
        return tb_err_set(err, TB_E_FORMAT, "blob: %llu bytes, shorter than its %d-byte header",
                          (unsigned long long)blob_bytes, TB_BLOB_HEADER_BYTES);
    if (s_pread_all(fd, head, sizeof head, offset, err) != 0)
        return -1;
    /* tb_blob_peek checks the packed size against the bytes that follow: give it the real count
     * through a header-sized buffer by checking that one ourselves. */
    tb_blob_info_t info;
    unsigned char probe[TB_BLOB_HEADER_BYTES];
    memcpy(probe, head, sizeof probe);
    for (int i = 0; i < 8; i++) /* packed = 0, so peek accepts the header alone */
        probe[24 + i] = 0;
    if (tb_blob_peek(probe, sizeof probe, &info, err) != 0)
        return -1;
    uint64_t packed = 0;
    for (int i = 7; i >= 0; i--)
        packed = (packed << 8) | head[24 + i];
    if (packed != blob_bytes - TB_BLOB_HEADER_BYTES)
        return tb_err_set(
            err, TB_E_FORMAT, "blob: header says %llu compressed bytes, %llu follow the header",
            (unsigned long long)packed, (unsigned long long)(blob_bytes - TB_BLOB_HEADER_BYTES));
    if (info.raw_bytes > max_raw_bytes)
        return tb_err_set(err, TB_E_INVALID,
                          "blob: decompresses to %llu bytes, more than the %zu allowed",
                          (unsigned long long)info.raw_bytes, max_raw_bytes);
    if (info.raw_bytes <= large_bytes) {
        /* small: the whole blob in memory, tb_blob_decode's checks */
        if (blob_bytes > SIZE_MAX)
            return tb_err_set(err, TB_E_INVALID, "blob: too large");
        unsigned char *blob = tb_malloc((size_t)blob_bytes, "a stored blob", err);
        if (!blob)
            return -1;
        void *data = NULL;
        size_t n = 0;
        int r = s_pread_all(fd, blob, (size_t)blob_bytes, offset, err);
        if (r == 0)
            r = tb_blob_decode(blob, (size_t)blob_bytes, max_raw_bytes, &data, &n, err);
        free(blob);
        if (r != 0)
            return -1;
        if (xxh3)
            *xxh3 = info.raw_xxh3; /* tb_blob_decode compared it with the bytes */
        *out = tb_result_from_memory(&data, n, err);
        return *out ? 0 : -1;
    }
    int raw_fd = s_anon_file(tmp_dir, err);
    if (raw_fd < 0)
        return -1;
    uint64_t sum = 0;
    if (s_stream(fd, offset + TB_BLOB_HEADER_BYTES, packed, info.raw_bytes, raw_fd, &sum, err) !=
        0) {
        close(raw_fd);
        return -1;
    }
    if (sum != info.raw_xxh3) {
        close(raw_fd);
        return tb_err_set(err, TB_E_CHECKSUM,
                          "blob: XXH3 of the %llu decoded bytes is %016llx, the header says "
                          "%016llx",
                          (unsigned long long)info.raw_bytes, (unsigned long long)sum,
                          (unsigned long long)info.raw_xxh3);
    }
    if (xxh3)
        *xxh3 = sum;
    *out = tb_result_map_fd(raw_fd, (size_t)info.raw_bytes, err);
    return *out ? 0 : -1;
}
