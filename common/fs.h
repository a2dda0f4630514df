/* Files, written so that nothing is ever left half-written under its final name (docs/bake.md).
 *
 * Every output goes to "<path>.tmp.<pid>.<n>" in the same directory and is renamed over the final
 * name only once complete; a killed process leaves at worst a stray temporary, never a truncated
 * output. Reads load whole files; errors name the path and the system's reason.
 */
#ifndef TB_FS_H
#define TB_FS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdint.h>

#include "common/error.h"

/* Writes `bytes` bytes to `path` atomically (temporary name, then rename). */
int tb_fs_write_atomic(const char *path, const void *data, size_t bytes, tb_err_t *err);

/* "a FIFO", "a directory", ... for a stat mode, in messages. */
const char *tb_fs_kind_name(unsigned mode);

/* Reads the whole file into a new buffer (with a trailing NUL not counted in *bytes_out); the
 * caller frees it. Refuses files larger than max_bytes, naming both sizes, and anything but a
 * regular file (TB_E_INVALID: a FIFO, a device, a directory) without blocking on it. */
/* Refuses (TB_E_INVALID) when dir/NAME, for one of the n_names names, is the same file (device and
 * inode) as one of the inputs: a run would overwrite its own input. Inputs that do not exist and
 * NULL or empty paths are skipped. */
int tb_fs_check_outputs(const char *dir, const char *const *names, size_t n_names,
                        const char *const *inputs, size_t n_inputs, tb_err_t *err);

int tb_fs_read_all(const char *path, size_t max_bytes, char **data_out, size_t *bytes_out,
                   tb_err_t *err);

/* Opens a regular file for reading as tb_fs_read_all does (never blocking on a FIFO, refusing
 * anything but a regular file with TB_E_INVALID naming what it is): *fd_out (the caller closes it)
 * and its size. ENOENT is TB_E_IO with errno left as ENOENT. */
int tb_fs_open_regular(const char *path, int *fd_out, uint64_t *bytes_out, tb_err_t *err);

/* A file being written under a temporary name. */
typedef struct {
    FILE *fp;
    char final_path[4096];
    char tmp_path[4200];
} tb_fs_tmp_t;

/* Opens a temporary file beside `path` for writing. */
int tb_fs_tmp_open(tb_fs_tmp_t *tmp, const char *path, tb_err_t *err);
/* Flushes, closes and renames the temporary over its final name; on any failure removes it. */
int tb_fs_tmp_commit(tb_fs_tmp_t *tmp, tb_err_t *err);
/* Closes and removes the temporary without touching the final name. */
void tb_fs_tmp_abort(tb_fs_tmp_t *tmp);

/* Creates a directory and its parents (mode 0755); an existing directory is success. */
int tb_fs_mkdir_p(const char *path, tb_err_t *err);
/* Refuses (-1, naming it, what it is when `what` is not NULL, and its target) a path that is a
 * symbolic link; 0 when it is anything else or absent. A directory inside OUT that is a link would
 * put the bake's files where their owner never asked for them. */
int tb_fs_refuse_link(const char *path, const char *what, tb_err_t *err);
/* tb_fs_mkdir_p for a directory inside OUT: refuses one that is a symbolic link. */
int tb_fs_mkdir_inside(const char *path, tb_err_t *err);

bool tb_fs_exists(const char *path);

/* The XXH3-64 of a regular file's bytes, read a MiB at a time (never whole). 0, or -1 with *err
 * naming the file (missing, not a regular file, unreadable). */
int tb_fs_hash_file(const char *path, uint64_t *xxh3, tb_err_t *err);

/* Joins dir and name with one '/' into out (size n); returns -1 with *err set when it does not fit.
 */
int tb_fs_join(char *out, size_t n, const char *dir, const char *name, tb_err_t *err);

/* The directory part of a path ("." when it has none), into out (size n). */
void tb_fs_dirname(char *out, size_t n, const char *path);

/* The most a read fault on a file mapping maps at once round the faulting page: the kernel's
 * fault-around window (64 KiB by default), or the whole large folio the page belongs to, which
 * the page cache of ext4 or XFS makes up to a PMD (2 MiB on x86-64) for a file read in order. */
#define TB_FS_FAULT_AROUND_BYTES ((size_t)2 << 20)

/* Gives back to the kernel the pages of bytes [lo, hi) of a MAP_SHARED file mapping at `base`,
 * `map_bytes` long (madvise MADV_DONTNEED: the file keeps every byte, a later read faults the page
 * in again), for a reader going forward that is done with them. The range is widened to whole
 * pages, and its start down to a TB_FS_FAULT_AROUND_BYTES boundary: each fault of a new row maps
 * the pages round it, again those just behind it that were already given back, and without the
 * widening a reader of a 305 MB result mapping that released it row by row still held 276 MB at
 * its end (Linux 6.18, ext4). A page so widened over that another reader still needs only faults
 * in again. hi is clipped to the mapping's last page. */
void tb_fs_map_release(void *base, size_t map_bytes, size_t lo, size_t hi);

#endif
