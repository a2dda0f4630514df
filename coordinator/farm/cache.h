/* The result store (`out/.cache`): every job result a run has ever received, under a key that names
 * exactly what produced it, so a rerun - after a kill, a crash or a change to one input - reuses
 * every result that is still valid and recomputes only the rest (docs/distribution.md).
 *
 * The key is XXH3-128 over the build id (the model code), the job kind, the canonical job spec and
 * the hashes of the job's inputs; nothing else - not the worker, the time or the attempt - may
 * enter it. A stored result is one file `<dir>/<32 hex digits>.tbr`:
 *
 *   "TBR1"            4 bytes
 *   the key           16 bytes (must match the file name's key)
 *   a blob            common/blob.h: zstd bytes with the XXH3-64 of the uncompressed result
 *
 * written atomically (temporary name, then rename), so a killed run leaves a whole file or none. A
 * file that fails its checks - truncated, renamed, bit-flipped - is reported as unusable (never as
 * a result) and the caller recomputes and overwrites it. Sizes: one file per job, as large as the
 * job's compressed result.
 */
#ifndef TB_CACHE_H
#define TB_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/farm/result.h"

typedef struct {
    unsigned char bytes[16];
} tb_cache_key_t;

/* The key of a job: XXH3-128 over build id, kind, spec and input hashes, each length-prefixed so
 * no two different tuples share a serialisation. */
void tb_cache_key_make(tb_cache_key_t *key, const char *build_id, const char *kind,
                       const void *spec, size_t spec_bytes, const uint64_t *input_hashes,
                       size_t n_inputs);

/* The key as 32 lowercase hex digits and a NUL. */
void tb_cache_key_hex(const tb_cache_key_t *key, char hex[33]);

typedef struct tb_cache_t tb_cache_t;

/* Opens (creating it and its parents when needed) the store in `dir`. */
tb_cache_t *tb_cache_open(const char *dir, tb_err_t *err);
/* Closes the store; accepts NULL and sets *self_p to NULL. */
void tb_cache_destroy(tb_cache_t **self_p);

/* The file a key is stored in, into out (size n). */
void tb_cache_path(const tb_cache_t *self, const tb_cache_key_t *key, char *out, size_t n);

/* Looks a key up. Returns 1 with *data (malloc'd, the caller frees) and *bytes set when a valid
 * result is stored; 0 when none is; -1 with *err set when a file is there but unusable
 * (TB_E_CHECKSUM for a checksum mismatch, TB_E_FORMAT for a damaged or foreign file, TB_E_INVALID
 * for one that claims more than max_raw_bytes, TB_E_IO). */
int tb_cache_get(tb_cache_t *self, const tb_cache_key_t *key, size_t max_raw_bytes, void **data,
                 size_t *bytes, tb_err_t *err);

/* Stores a result given as a blob (as it arrived from a worker), atomically. */
int tb_cache_put_blob(tb_cache_t *self, const tb_cache_key_t *key, const void *blob,
                      size_t blob_bytes, tb_err_t *err);

/* Stores a result given as raw bytes (compressing it), atomically. */
int tb_cache_put(tb_cache_t *self, const tb_cache_key_t *key, const void *data, size_t bytes,
                 tb_err_t *err);

/* Looks a key up as tb_cache_get does, into a result (result.h): in memory when the raw result is
 * at most large_bytes, otherwise decoded in a stream into an unlinked file in the store's
 * directory and mapped, so a 2.7 GB entry never sits in the heap. *xxh3 (when not NULL) is the
 * raw bytes' XXH3-64. Returns 1, 0 or -1 like tb_cache_get. */
int tb_cache_get_result(tb_cache_t *self, const tb_cache_key_t *key, size_t max_raw_bytes,
                        size_t large_bytes, tb_result_t **out, uint64_t *xxh3, tb_err_t *err);

/* Removes the entry of a key (one that failed a check, so that it is recomputed and never read
 * again); 0 also when there is none. */
int tb_cache_remove(tb_cache_t *self, const tb_cache_key_t *key, tb_err_t *err);

/* The store's directory. */
const char *tb_cache_dir(const tb_cache_t *self);

/* A stored-result file written piece by piece as a result arrives (a large result never sits in
 * memory): "TBR1" and the key are written at open, then the blob's bytes as they come, under a
 * temporary name beside the entry's; commit renames it into place. `dir` is the store's directory
 * (tb_cache_dir), or any scratch directory when the file is only to be decoded and then dropped. */
typedef struct {
    int fd;
    uint64_t blob_bytes; /* written after the 20-byte head */
    char tmp_path[4200];
    char final_path[4200];
} tb_cache_sink_t;

/* The offset of the blob in a stored-result file. */
#define TB_CACHE_HEAD_BYTES 20

int tb_cache_sink_open(tb_cache_sink_t *sink, const char *dir, const tb_cache_key_t *key,
                       tb_err_t *err);
int tb_cache_sink_write(tb_cache_sink_t *sink, const void *data, size_t bytes, tb_err_t *err);
/* Closes the file and renames it over the key's entry. */
int tb_cache_sink_commit(tb_cache_sink_t *sink, tb_err_t *err);
/* Closes and removes the temporary file; safe on a sink never opened (fd -1) or already closed. */
void tb_cache_sink_abort(tb_cache_sink_t *sink);

/* Decodes the bytes of a stored-result file (what tb_cache_get reads), checking the magic, the key
 * when `expect` is not NULL, the blob and its checksum. Exposed for tests and the fuzzer. */
int tb_cache_decode_file(const void *file, size_t file_bytes, const tb_cache_key_t *expect,
                         size_t max_raw_bytes, void **data, size_t *bytes, tb_err_t *err);

#endif
