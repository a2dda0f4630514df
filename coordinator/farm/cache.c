/* The result store; see cache.h. */
#include "coordinator/farm/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "common/blob.h"
#include "common/fs.h"

#define S_MAGIC "TBR1"
#define S_HEAD TB_CACHE_HEAD_BYTES

struct tb_cache_t {
    char dir[4096];
};

static void s_update_u64(XXH3_state_t *st, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    XXH3_128bits_update(st, b, sizeof b);
}

static void s_update_bytes(XXH3_state_t *st, const void *data, size_t n)
{
    s_update_u64(st, n);
    if (n)
        XXH3_128bits_update(st, data, n);
}

void tb_cache_key_make(tb_cache_key_t *key, const char *build_id, const char *kind,
                       const void *spec, size_t spec_bytes, const uint64_t *input_hashes,
                       size_t n_inputs)
{
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    static const char tag[] = "terrain-bake result v1";
    s_update_bytes(st, tag, sizeof tag - 1);
    s_update_bytes(st, build_id, strlen(build_id));
    s_update_bytes(st, kind, strlen(kind));
    s_update_bytes(st, spec, spec_bytes);
    s_update_u64(st, n_inputs);
    for (size_t k = 0; k < n_inputs; k++)
        s_update_u64(st, input_hashes[k]);
    XXH128_hash_t d = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, d);
    memcpy(key->bytes, c.digest, 16);
}

void tb_cache_key_hex(const tb_cache_key_t *key, char hex[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", key->bytes[i]);
}

tb_cache_t *tb_cache_open(const char *dir, tb_err_t *err)
{
    if (strlen(dir) + 40 >= sizeof((tb_cache_t *)0)->dir) {
        tb_err_set(err, TB_E_INVALID, "%s: result store path too long", dir);
        return NULL;
    }
    /* No write goes through a symbolic link: a store directory that is one (OUT/.cache pointing
     * elsewhere) would put every result where its owner never asked for them. */
    if (tb_fs_refuse_link(dir, "the result store", err) != 0)
        return NULL;
    /* The directory is made with the first result stored: a run refused before it computes
     * anything (a bind or key refusal) leaves no empty store behind. */
    tb_cache_t *self = tb_calloc(1, sizeof *self, "the result store", err);
    if (!self)
        return NULL;
    snprintf(self->dir, sizeof self->dir, "%s", dir);
    return self;
}

void tb_cache_destroy(tb_cache_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free(*self_p);
    *self_p = NULL;
}

void tb_cache_path(const tb_cache_t *self, const tb_cache_key_t *key, char *out, size_t n)
{
    char hex[33];
    tb_cache_key_hex(key, hex);
    snprintf(out, n, "%s/%s.tbr", self->dir, hex);
}

int tb_cache_decode_file(const void *file_, size_t file_bytes, const tb_cache_key_t *expect,
                         size_t max_raw_bytes, void **data, size_t *bytes, tb_err_t *err)
{
    const unsigned char *file = file_;
    *data = NULL;
    *bytes = 0;
    if (file_bytes < S_HEAD || memcmp(file, S_MAGIC, 4) != 0)
        return tb_err_set(err, TB_E_FORMAT, "not a stored result (no \"%s\" header)", S_MAGIC);
    if (expect && memcmp(file + 4, expect->bytes, 16) != 0)
        return tb_err_set(err, TB_E_FORMAT, "stored under another key");
    return tb_blob_decode(file + S_HEAD, file_bytes - S_HEAD, max_raw_bytes, data, bytes, err);
}

int tb_cache_get(tb_cache_t *self, const tb_cache_key_t *key, size_t max_raw_bytes, void **data,
                 size_t *bytes, tb_err_t *err)
{
    *data = NULL;
    *bytes = 0;
    char path[4200];
    tb_cache_path(self, key, path, sizeof path);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return tb_err_set(err, TB_E_IO, "%s: %s", path, strerror(errno));
    }
    /* A stored blob is at most zstd's bound over the largest raw result, plus the headers. */
    size_t max_file = max_raw_bytes + max_raw_bytes / 128 + 4096 + S_HEAD + TB_BLOB_HEADER_BYTES;
    char *file;
    size_t n;
    if (tb_fs_read_all(path, max_file, &file, &n, err) != 0)
        return -1;
    int r = tb_cache_decode_file(file, n, key, max_raw_bytes, data, bytes, err);
    free(file);
    if (r != 0)
        return tb_err_prefix(err, "%s", path);
    return 1;
}

int tb_cache_put_blob(tb_cache_t *self, const tb_cache_key_t *key, const void *blob,
                      size_t blob_bytes, tb_err_t *err)
{
    char path[4200];
    tb_cache_path(self, key, path, sizeof path);
    tb_fs_tmp_t tmp;
    if (tb_fs_mkdir_p(self->dir, err) != 0 || tb_fs_tmp_open(&tmp, path, err) != 0)
        return -1;
    if (fwrite(S_MAGIC, 1, 4, tmp.fp) != 4 || fwrite(key->bytes, 1, 16, tmp.fp) != 16 ||
        (blob_bytes && fwrite(blob, 1, blob_bytes, tmp.fp) != blob_bytes)) {
        int e = errno;
        tb_fs_tmp_abort(&tmp);
        return tb_err_set(err, TB_E_IO, "%s: write failed: %s", path, strerror(e));
    }
    return tb_fs_tmp_commit(&tmp, err);
}

int tb_cache_put(tb_cache_t *self, const tb_cache_key_t *key, const void *data, size_t bytes,
                 tb_err_t *err)
{
    void *blob;
    size_t blob_bytes;
    if (tb_blob_encode(data, bytes, 0, &blob, &blob_bytes, err) != 0)
        return -1;
    int r = tb_cache_put_blob(self, key, blob, blob_bytes, err);
    free(blob);
    return r;
}

const char *tb_cache_dir(const tb_cache_t *self)
{
    return self->dir;
}

int tb_cache_get_result(tb_cache_t *self, const tb_cache_key_t *key, size_t max_raw_bytes,
                        size_t large_bytes, tb_result_t **out, uint64_t *xxh3, tb_err_t *err)
{
    *out = NULL;
    char path[4200];
    tb_cache_path(self, key, path, sizeof path);
    int fd;
    uint64_t size;
    if (tb_fs_open_regular(path, &fd, &size, err) != 0) {
        /* none stored only when nothing is there: errno after a refused FIFO or directory is
         * whatever an earlier call left (an ENOENT from another lookup made a FIFO "not stored") */
        struct stat st;
        return lstat(path, &st) != 0 && errno == ENOENT ? 0 : -1;
    }
    unsigned char head[S_HEAD];
    ssize_t n = size >= S_HEAD ? pread(fd, head, S_HEAD, 0) : 0;
    int r = -1;
    if (n != S_HEAD || memcmp(head, S_MAGIC, 4) != 0)
        tb_err_set(err, TB_E_FORMAT, "not a stored result (no \"%s\" header)", S_MAGIC);
    else if (memcmp(head + 4, key->bytes, 16) != 0)
        tb_err_set(err, TB_E_FORMAT, "stored under another key");
    else
        r = tb_result_decode_fd(fd, S_HEAD, size - S_HEAD, max_raw_bytes, large_bytes, self->dir,
                                out, xxh3, err);
    close(fd);
    if (r != 0)
        return tb_err_prefix(err, "%s", path);
    return 1;
}

int tb_cache_remove(tb_cache_t *self, const tb_cache_key_t *key, tb_err_t *err)
{
    char path[4200];
    tb_cache_path(self, key, path, sizeof path);
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    /* a directory in an entry's place is not ours to remove recursively: say so */
    if (S_ISDIR(st.st_mode) ? rmdir(path) != 0 : unlink(path) != 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot remove the unusable entry: %s", path,
                          strerror(errno));
    return 0;
}

static atomic_uint s_sink_counter;

int tb_cache_sink_open(tb_cache_sink_t *sink, const char *dir, const tb_cache_key_t *key,
                       tb_err_t *err)
{
    memset(sink, 0, sizeof *sink);
    sink->fd = -1;
    char hex[33];
    tb_cache_key_hex(key, hex);
    if (snprintf(sink->final_path, sizeof sink->final_path, "%s/%s.tbr", dir, hex) >=
        (int)sizeof sink->final_path)
        return tb_err_set(err, TB_E_INVALID, "%s: result store path too long", dir);
    snprintf(sink->tmp_path, sizeof sink->tmp_path, "%s.tmp.%ld.s%u", sink->final_path,
             (long)getpid(), atomic_fetch_add(&s_sink_counter, 1));
    if (tb_fs_mkdir_p(dir, err) != 0)
        return -1;
    sink->fd = open(sink->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (sink->fd < 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot create: %s", sink->tmp_path, strerror(errno));
    unsigned char head[S_HEAD];
    memcpy(head, S_MAGIC, 4);
    memcpy(head + 4, key->bytes, 16);
    if (write(sink->fd, head, S_HEAD) != S_HEAD) {
        int e = errno;
        tb_cache_sink_abort(sink);
        return tb_err_set(err, TB_E_IO, "%s: write failed: %s", sink->tmp_path, strerror(e));
    }
    return 0;
}

int tb_cache_sink_write(tb_cache_sink_t *sink, const void *data, size_t bytes, tb_err_t *err)
{
    size_t put = 0;
    while (put < bytes) {
        ssize_t r = write(sink->fd, (const char *)data + put, bytes - put);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return tb_err_set(err, TB_E_IO, "%s: write failed: %s", sink->tmp_path,
                              strerror(errno));
        put += (size_t)r;
    }
    sink->blob_bytes += bytes;
    return 0;
}

int tb_cache_sink_commit(tb_cache_sink_t *sink, tb_err_t *err)
{
    if (sink->fd >= 0 && close(sink->fd) != 0) {
        sink->fd = -1;
        int e = errno;
        tb_cache_sink_abort(sink);
        return tb_err_set(err, TB_E_IO, "%s: write failed: %s", sink->final_path, strerror(e));
    }
    sink->fd = -1;
    if (rename(sink->tmp_path, sink->final_path) != 0) {
        int e = errno;
        tb_cache_sink_abort(sink);
        return tb_err_set(err, TB_E_IO, "%s: cannot rename into place: %s", sink->final_path,
                          strerror(e));
    }
    sink->tmp_path[0] = '\0';
    return 0;
}

void tb_cache_sink_abort(tb_cache_sink_t *sink)
{
    if (sink->fd >= 0)
        close(sink->fd);
    sink->fd = -1;
    if (sink->tmp_path[0])
        unlink(sink->tmp_path);
    sink->tmp_path[0] = '\0';
}
