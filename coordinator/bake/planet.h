/* The planet-sized arrays the bake's phases read and write (docs/architecture.md, the pipeline).
 *
 * A tb_planet_t is planet_w x planet_h cells in the planet frame (row-major, x eastward around the
 * cylinder, y southward; docs/determinism.md, coordinates) and owns one array per entry of
 * TB_PLANET_ARRAYS below, each allocated on first use (tb_planet_provide) and filled with its
 * declared fill value. A phase names the arrays it reads and writes as TB_PLANET_BIT masks; the
 * driver (coordinator/bake/driver.c) provides every array a phase writes before running it and
 * refuses to run a phase that reads an array no earlier phase wrote.
 *
 * A new array is one line in TB_PLANET_ARRAYS: X(ID, name, C type, fill byte, what it holds).
 */
#ifndef TB_BAKE_PLANET_H
#define TB_BAKE_PLANET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define TB_PLANET_ARRAYS(X)                                                                        \
    X(CLASSES, classes, uint8_t, 0x00, "the painted class of each cell (the plan's)")              \
    X(LAND_M, land_m, float, 0x00, "solved land height in m, 0 where not solved")                  \
    X(AREA_M2, area_m2, float, 0x00, "drainage area in m2 of solved land, 0 elsewhere")            \
    X(BASIN, basin, int32_t, 0xff, "drainage basin id of solved land, -1 elsewhere")               \
    X(UPLIFT_M_YR, uplift_m_yr, float, 0x00, "rock uplift rate in m/yr of solved land, 0 else")    \
    X(SOLVED, solved, uint8_t, 0x00, "1 where a region's result was composited")                   \
    X(HEIGHT_M, height_m, float, 0x00, "the planet heightmap in m: ocean at depth, land solved")   \
    X(MOVED_M, moved_m, float, 0x00, "what the coastal pass moved, m: cut < 0, laid > 0")          \
    X(EXPOSURE, exposure, uint16_t, 0xff, "shore exposure in thousandths, 0xffff beyond carry_m")

typedef enum {
#define TB_PLANET_X_ENUM(id, name, type, fill, what) TB_PLANET_##id,
    TB_PLANET_ARRAYS(TB_PLANET_X_ENUM)
#undef TB_PLANET_X_ENUM
        TB_PLANET_N_ARRAYS
} tb_planet_array_t;

#define TB_PLANET_BIT(id) (1u << TB_PLANET_##id)

typedef struct tb_planet_t tb_planet_t;

/* A planet of w x h cells with no array allocated yet. NULL with *err set on failure. */
tb_planet_t *tb_planet_new(int64_t w, int64_t h, tb_err_t *err);
void tb_planet_destroy(tb_planet_t **self);

int64_t tb_planet_w(const tb_planet_t *self);
int64_t tb_planet_h(const tb_planet_t *self);
size_t tb_planet_cells(const tb_planet_t *self);

/* Allocates every array of `mask` not allocated yet, filled with its fill byte. 0 or -1. */
int tb_planet_provide(tb_planet_t *self, uint32_t mask, tb_err_t *err);
/* The arrays of `mask` that are allocated, as a mask. */
uint32_t tb_planet_present(const tb_planet_t *self, uint32_t mask);

/* The name of an array ("land_m"), for meta.json and messages. */
const char *tb_planet_array_name(tb_planet_array_t id);

/* Typed access to an allocated array; NULL when it is not allocated. */
#define TB_PLANET_X_GET(id, name, type, fill, what)                                                \
    type *tb_planet_##name(tb_planet_t *self);                                                     \
    const type *tb_planet_c##name(const tb_planet_t *self);
TB_PLANET_ARRAYS(TB_PLANET_X_GET)
#undef TB_PLANET_X_GET

#endif
