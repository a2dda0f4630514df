/* A job's result as the dispatch engine hands it to its caller: the raw (uncompressed) bytes,
 * either in memory or as a read-only memory mapping of a file, behind one type so a consumer never
 * cares which (docs/distribution.md, "Results too large to hold").
 *
 * Small results (at most the engine's `large_result_bytes`, 64 MiB by default) are malloc'd
 * buffers. A larger one - a region of a 300 km planet is 2.7 GB raw - never sits in the
 * coordinator's heap: the engine streams its blob to a file, decompresses it with zstd's streaming
 * API into a second, unlinked temporary file while it hashes the bytes with XXH3's streaming API,
 * and maps that file. Reading a mapping sequentially would still put every page read in the
 * process's resident set; tb_result_done_with gives ranges already read back to the kernel
 * (madvise MADV_DONTNEED: the pages stay in the page cache and come back from the file if read
 * again), so a consumer that reads in bands holds about one band. The file has no name once mapped,
 * so it disappears with the mapping, also after a crash.
 *
 * Thread-safety: a result belongs to one owner at a time; the functions may be called on any
 * thread. Typical sizes: a tile result ~80 MB raw, a coast result 10 bytes a planet cell, a region
 * result 16 bytes a box cell.
 */
#ifndef TB_RESULT_H
#define TB_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct tb_result_t tb_result_t;

/* A result holding *data_p (malloc'd, `bytes` long), which it takes over: *data_p is set to NULL.
 * NULL with *err set when out of memory (the data is then freed). */
tb_result_t *tb_result_from_memory(void **data_p, size_t bytes, tb_err_t *err);

/* A result mapping the first `bytes` bytes of the file open as `fd`, read-only; fd is closed
 * (the mapping keeps the file alive; unlink it first so it leaves no trace). bytes may be 0 (then
 * nothing is mapped). NULL with *err set on failure (fd is closed then too). */
tb_result_t *tb_result_map_fd(int fd, size_t bytes, tb_err_t *err);

/* Frees the buffer or unmaps the file; accepts NULL and sets *self_p to NULL. */
void tb_result_destroy(tb_result_t **self_p);

/* The bytes (never NULL, also for 0 bytes) and their count. */
const void *tb_result_data(const tb_result_t *self);
size_t tb_result_bytes(const tb_result_t *self);

/* Whether the bytes are a mapping of a file (true) or a heap buffer (false). */
bool tb_result_mapped(const tb_result_t *self);

/* Says that [offset, offset + bytes) has been read and is not needed soon: a mapping gives those
 * pages back to the kernel (they are read again from the file if touched); a heap buffer ignores
 * it. Ranges outside the result are clipped. */
void tb_result_done_with(tb_result_t *self, size_t offset, size_t bytes);

/* Decodes the blob (common/blob.h) that starts at byte `offset` of the open file `fd` and is
 * `blob_bytes` long into a new result: in memory when its raw size is at most large_bytes,
 * otherwise streamed (zstd's ZSTD_decompressStream, XXH3_64bits_update) into an unlinked temporary
 * file in tmp_dir and mapped. Checks the blob's header, that the zstd frame promises the header's
 * size, the size decoded and the XXH3 of the raw bytes (TB_E_CHECKSUM), and refuses a blob that
 * would decode to more than max_raw_bytes (TB_E_INVALID) before it decodes anything. fd stays open
 * and its offset is not used (pread). *xxh3 (when not NULL) is the raw bytes' XXH3-64. */
int tb_result_decode_fd(int fd, uint64_t offset, uint64_t blob_bytes, size_t max_raw_bytes,
                        size_t large_bytes, const char *tmp_dir, tb_result_t **out, uint64_t *xxh3,
                        tb_err_t *err);

#endif
