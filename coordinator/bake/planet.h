/* The planet-sized arrays the bake's phases read and write (docs/architecture.md, the pipeline).
 *
 * A tb_planet_t is planet_w x planet_h cells in the planet frame (row-major, x eastward around the
 * cylinder, y southward; docs/determinism.md, coordinates) and holds one array per entry of
 * TB_PLANET_ARRAYS below, each made on first use (tb_planet_provide) and filled with its declared
 * fill value. A phase names the arrays it reads and writes as TB_PLANET_BIT masks; the driver
 * (coordinator/bake/driver.c) provides every array a phase writes before running it and refuses to
 * run a phase that reads an array no earlier phase wrote.
 *
 * Where they live (docs/architecture.md, "Memory at planet scale"): a bake's planet keeps each
 * array in a file of its output directory, OUT/.planet/NAME.EXT (raw cells, row-major,
 * little-endian, no header), memory-mapped shared, so that the coordinator's heap never holds a
 * planet-sized array: a pass over an array says which rows it is done with (tb_planet_release), and
 * only the rows it is working on stay resident; what it wrote reaches the file. A planet made
 * without a directory (tests) keeps its arrays on the heap, where releasing does nothing.
 *
 * A new array is one line in TB_PLANET_ARRAYS: X(ID, name, C type, file suffix, fill byte, what it
 * holds).
 */
#ifndef TB_BAKE_PLANET_H
#define TB_BAKE_PLANET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/raster.h"

#define TB_PLANET_ARRAYS(X)                                                                        \
    X(CLASSES, classes, uint8_t, u8, 0x00, "the painted class of each cell (the plan's)")          \
    X(LABELS, labels, int32_t, i32, 0x00, "the landmass id of each cell (the plan's), 0 for sea")  \
    X(LAND_M, land_m, float, f32, 0x00, "solved land height in m, 0 where not solved")             \
    X(AREA_M2, area_m2, float, f32, 0x00, "drainage area in m2 of solved land, 0 elsewhere")       \
    X(BASIN, basin, int32_t, i32, 0xff, "drainage basin id of solved land, -1 elsewhere")          \
    X(UPLIFT_M_YR, uplift_m_yr, float, f32, 0x00,                                                  \
      "rock uplift rate, m/yr, of solved land; 0 else")                                            \
    X(SOLVED, solved, uint8_t, u8, 0x00, "1 where a region's result was composited")               \
    X(COMPOSITE_M, composite_m, float, f32, 0x00,                                                  \
      "the composite, m: sea at its depth, land solved")                                           \
    X(HEIGHT_M, height_m, float, f32, 0x00,                                                        \
      "the final heightmap, m: the coast's, or the composite")                                     \
    X(MOVED_M, moved_m, float, f32, 0x00, "what the coastal pass moved, m: cut < 0, laid > 0")     \
    X(EXPOSURE, exposure, uint16_t, u16, 0xff, "shore exposure, thousandths; 0xffff past carry_m")

typedef enum {
#define TB_PLANET_X_ENUM(id, name, type, ext, fill, what) TB_PLANET_##id,
    TB_PLANET_ARRAYS(TB_PLANET_X_ENUM)
#undef TB_PLANET_X_ENUM
        TB_PLANET_N_ARRAYS
} tb_planet_array_t;

#define TB_PLANET_BIT(id) (1u << TB_PLANET_##id)

typedef struct tb_planet_t tb_planet_t;

/* A planet of w x h cells with no array made yet, its arrays to be files in `dir` (created when
 * missing; it must be a directory, not a symbolic link), or on the heap when dir is NULL. NULL with
 * *err set on failure. */
tb_planet_t *tb_planet_new(int64_t w, int64_t h, const char *dir, tb_err_t *err);
void tb_planet_destroy(tb_planet_t **self);
/* Destroys the planet and removes the files of the arrays it made, then its directory when that is
 * left empty: what a bake that failed before anything was worth keeping leaves behind. Accepts
 * NULL. */
void tb_planet_discard(tb_planet_t **self);

int64_t tb_planet_w(const tb_planet_t *self);
int64_t tb_planet_h(const tb_planet_t *self);
size_t tb_planet_cells(const tb_planet_t *self);

/* Makes every array of `mask` not made yet, filled with its fill byte: a new file (an old one of
 * the same name is truncated first), or a heap block. 0, or -1 with *err naming the file. */
int tb_planet_provide(tb_planet_t *self, uint32_t mask, tb_err_t *err);

/* Rows [y0, y1) of array id may leave memory: their pages are dropped from this process (what was
 * written stays in the file, and reading the rows again brings them back). Nothing for an array on
 * the heap or not made. */
void tb_planet_release(tb_planet_t *self, tb_planet_array_t id, int64_t y0, int64_t y1);
/* Every row of every array of `mask`. */
void tb_planet_release_all(tb_planet_t *self, uint32_t mask);

/* A hook (common/raster.h) that lets rows [y0, y1) of every array go: for a pass that reads
 * several of them in increasing rows. */
tb_rows_hook_t tb_planet_rows_hook(tb_planet_t *self);

/* Array id as a tb_raster_t (common/raster.h) whose release hook is tb_planet_release; `user` is
 * the hook's state, which must outlive the raster. */
typedef struct {
    tb_planet_t *planet;
    tb_planet_array_t id;
} tb_planet_raster_user_t;
tb_raster_t tb_planet_raster(tb_planet_t *self, tb_planet_array_t id,
                             tb_planet_raster_user_t *user);

/* Makes array `id` the same cells as array `of` (already made), without a copy: its file a second
 * name of the other's (a hard link), or the same heap block; what `id` held before is dropped. What
 * the planet's heightmap is when the coastal pass does not run: the composite itself. 0, or -1 with
 * *err. */
int tb_planet_alias(tb_planet_t *self, tb_planet_array_t id, tb_planet_array_t of, tb_err_t *err);

/* The XXH3-64 of array id's bytes (of no bytes when it is not made; 0 when out of memory), read a
 * band at a time. */
uint64_t tb_planet_hash(tb_planet_t *self, tb_planet_array_t id);

/* The file of array id (dir/NAME.EXT) into out; -1 with *err for a planet on the heap. */
int tb_planet_path(const tb_planet_t *self, tb_planet_array_t id, char *out, size_t n,
                   tb_err_t *err);
/* The arrays of `mask` that are allocated, as a mask. */
uint32_t tb_planet_present(const tb_planet_t *self, uint32_t mask);

/* The name of an array ("land_m"), for meta.json and messages. */
const char *tb_planet_array_name(tb_planet_array_t id);

/* Typed access to an allocated array; NULL when it is not allocated. */
#define TB_PLANET_X_GET(id, name, type, ext, fill, what)                                           \
    type *tb_planet_##name(tb_planet_t *self);                                                     \
    const type *tb_planet_c##name(const tb_planet_t *self);
TB_PLANET_ARRAYS(TB_PLANET_X_GET)
#undef TB_PLANET_X_GET

#endif
