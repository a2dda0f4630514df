/* A planet-sized raster held where its owner put it, read and written by rows.
 *
 * At planet scale (the 300 km demo is 37500 x 12000 = 450 M cells) no process holds a planet-sized
 * array in its heap: the coordinator keeps each one in a file of its output directory,
 * memory-mapped (coordinator/bake/planet.h), and a pass over it says which rows it is done with, so
 * that only a band of it is ever resident. jobs/ and common/ never open a file; they take a
 * tb_raster_t: the cells in memory (a mapping, or a malloc'd block in a test) and a hook to call
 * when a band of rows may leave memory. Calling the hook never loses data (a mapping of a file
 * writes its dirty pages back; a heap block ignores it) and rows released may be read again (they
 * come back from the file).
 *
 * Row-major, `w` cells a row, `h` rows, `elem_bytes` a cell; row 0 is the planet's north edge.
 */
#ifndef TB_RASTER_H
#define TB_RASTER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    void *data;        /* w x h cells of elem_bytes each, row-major */
    int64_t w, h;      /* cells a row, rows */
    size_t elem_bytes; /* 1 (u8), 2 (u16), 4 (f32, i32) */
    /* Rows [y0, y1) may leave memory (the pass is done with them for now); NULL: nothing to do. */
    void (*release)(void *user, int64_t y0, int64_t y1);
    void *user;
} tb_raster_t;

/* Row y of r (no bounds check: 0 <= y < r->h). */
static inline void *tb_raster_row(const tb_raster_t *r, int64_t y)
{
    return (char *)r->data + (size_t)y * (size_t)r->w * r->elem_bytes;
}

/* Says rows [y0, y1) of r may leave memory (clipped to [0, h); nothing when y0 >= y1). */
static inline void tb_raster_release(const tb_raster_t *r, int64_t y0, int64_t y1)
{
    if (y0 < 0)
        y0 = 0;
    if (y1 > r->h)
        y1 = r->h;
    if (r->release && y0 < y1)
        r->release(r->user, y0, y1);
}

/* A pass over several planet rasters says, through one hook, which rows of all of them it is done
 * with: rows [y0, y1) of every raster it reads may leave memory. NULL or a NULL fn: nothing to do.
 */
typedef struct {
    void (*fn)(void *user, int64_t y0, int64_t y1);
    void *user;
} tb_rows_hook_t;

static inline void tb_rows_done(const tb_rows_hook_t *hook, int64_t y0, int64_t y1)
{
    if (y0 < 0)
        y0 = 0;
    if (hook && hook->fn && y0 < y1)
        hook->fn(hook->user, y0, y1);
}

#endif
