/* Files written a row at a time, for the export (internal to coordinator/export/): grey PNG of 8
 * or 16 bits and RGBA PNG (libpng), and raw little-endian rows. Each goes to a temporary name
 * beside its final one and is renamed on close, so a failed export leaves no truncated file under
 * a final name; the XXH3 of the bytes written is kept for the import sheet. Rows go in the order
 * they are given: the caller decides which edge comes first. */
#ifndef TB_EXPORT_WRITERS_H
#define TB_EXPORT_WRITERS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef enum {
    TB_EXPORT_FILE_PNG_GRAY16,
    TB_EXPORT_FILE_PNG_GRAY8,
    TB_EXPORT_FILE_PNG_RGBA8,
    TB_EXPORT_FILE_RAW /* rows of bytes as given (little-endian samples) */
} tb_export_file_kind_t;

typedef struct tb_export_file tb_export_file_t;

/* Opens path for w x h samples of `kind` (w is samples a row; for RAW, bytes_per_sample says how
 * many bytes each takes). NULL with *err naming the path. */
tb_export_file_t *tb_export_file_open(const char *path, tb_export_file_kind_t kind, int64_t w,
                                      int64_t h, size_t bytes_per_sample, tb_err_t *err);
/* Writes the next row: w samples (uint16_t host order, uint8_t, 4 bytes RGBA, or raw bytes). */
int tb_export_file_row(tb_export_file_t *f, const void *row, tb_err_t *err);
/* Checks every row came, finishes, renames into place; *xxh3 (may be NULL) gets the XXH3-64 of
 * the file's bytes. Frees f and sets *f_p to NULL, also on failure (then nothing is left). */
int tb_export_file_close(tb_export_file_t **f_p, uint64_t *xxh3, tb_err_t *err);
/* Removes the temporary and frees f (after a failure elsewhere). */
void tb_export_file_abort(tb_export_file_t **f_p);

#endif
