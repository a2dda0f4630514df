/* Grids that know where they sit on the planet (docs/determinism.md).
 *
 * The planet is a cylinder: X wraps, Y does not. A lattice of cells of `cell_m` metres covers it,
 * `lattice_w` cells around and `lattice_h` cells from south edge to north edge; the geology lattice
 * has cell_m 8 by default and the detail lattice is finer, but both obey one convention: cell (i,
 * j) has its centre at world ((i + 0.5) cell_m, (j + 0.5) cell_m) metres.
 *
 * A tb_frame_t is a window onto a lattice: origin (x0, y0) in lattice cells, x0 taken modulo
 * lattice_w so a window may straddle the seam, and a size w x h. There is no default frame: a
 * zeroed frame has no lattice and every constructor refuses it, so a grid whose origin was
 * forgotten fails loudly instead of silently sitting at (0, 0) (docs/traps.md, "A default origin on
 * grids").
 *
 * Scratch arrays inside kernels are plain arrays indexed by tb_idx(); only data that means
 * something at a place on the planet is a tb_grid_t.
 */
#ifndef TB_GRID_H
#define TB_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct {
    int64_t lattice_w; /* cells around the circumference at this cell size; X wraps here */
    int64_t lattice_h; /* cells from the south edge to the north edge */
    double cell_m;     /* edge of one cell, metres */
    int64_t x0, y0;    /* origin of this window in lattice cells; 0 <= x0 < lattice_w */
    int64_t w, h;      /* window size in cells; w <= lattice_w */
} tb_frame_t;

/* Makes a frame; x0 is reduced modulo lattice_w. Returns 0, or -1 with *err naming the bad value
 * (non-positive size or cell, a window wider than the circumference or outside the Y range). */
int tb_frame_make(tb_frame_t *out, int64_t lattice_w, int64_t lattice_h, double cell_m, int64_t x0,
                  int64_t y0, int64_t w, int64_t h, tb_err_t *err);

/* Whether a frame was made by tb_frame_make (a zeroed or corrupted frame is not). */
bool tb_frame_valid(const tb_frame_t *frame);

/* Whether the window covers the whole circumference, so its own column w-1 neighbours column 0. */
static inline bool tb_frame_wraps(const tb_frame_t *f)
{
    return f->w == f->lattice_w;
}

static inline int64_t tb_wrap(int64_t x, int64_t n)
{
    int64_t r = x % n;
    return r < 0 ? r + n : r;
}

/* Row-major index of local cell (i, j) in a grid of width w. */
static inline size_t tb_idx(int64_t w, int64_t i, int64_t j)
{
    return (size_t)j * (size_t)w + (size_t)i;
}

/* The lattice column of local column i: (x0 + i) mod lattice_w. Hashes and noise take this value,
 * never i, so a cell gets the same number whichever window it is seen through. */
static inline int64_t tb_frame_lattice_x(const tb_frame_t *f, int64_t i)
{
    return tb_wrap(f->x0 + i, f->lattice_w);
}
static inline int64_t tb_frame_lattice_y(const tb_frame_t *f, int64_t j)
{
    return f->y0 + j;
}

/* World metres of the centre of local cell (i, j); x in [0, circumference). */
static inline double tb_frame_world_x_m(const tb_frame_t *f, int64_t i)
{
    return ((double)tb_frame_lattice_x(f, i) + 0.5) * f->cell_m;
}
static inline double tb_frame_world_y_m(const tb_frame_t *f, int64_t j)
{
    return ((double)(f->y0 + j) + 0.5) * f->cell_m;
}

/* Local column of lattice column lx in this window, or -1 when the window does not contain it. */
int64_t tb_frame_local_x(const tb_frame_t *f, int64_t lx);

/* Whether two frames lie on the same lattice (same size and cell). */
bool tb_frame_same_lattice(const tb_frame_t *a, const tb_frame_t *b);

typedef enum { TB_U8 = 0, TB_U16, TB_I32, TB_U32, TB_F32, TB_F64 } tb_dtype_t;

/* Bytes of one element of the type. */
size_t tb_dtype_size(tb_dtype_t type);

typedef struct tb_grid_t tb_grid_t;

/* A zero-filled grid of `type` over `frame`, which is copied. Returns NULL with *err set when the
 * frame is not valid (no default origin) or memory runs out. The caller owns the grid. */
tb_grid_t *tb_grid_new(const tb_frame_t *frame, tb_dtype_t type, tb_err_t *err);
/* Frees the grid and sets *self_p to NULL; accepts NULL. */
void tb_grid_destroy(tb_grid_t **self_p);

const tb_frame_t *tb_grid_frame(const tb_grid_t *self);
tb_dtype_t tb_grid_type(const tb_grid_t *self);
size_t tb_grid_cells(const tb_grid_t *self);
/* The cells, row-major; typed accessors abort if the grid holds another type (a bug, not input). */
void *tb_grid_data(tb_grid_t *self);
const void *tb_grid_cdata(const tb_grid_t *self);
float *tb_grid_f32(tb_grid_t *self);
const float *tb_grid_cf32(const tb_grid_t *self);
uint8_t *tb_grid_u8(tb_grid_t *self);
const uint8_t *tb_grid_cu8(const tb_grid_t *self);
int32_t *tb_grid_i32(tb_grid_t *self);
const int32_t *tb_grid_ci32(const tb_grid_t *self);
uint16_t *tb_grid_u16(tb_grid_t *self);
double *tb_grid_f64(tb_grid_t *self);

/* Copies the cells of `src` that also lie in `dst`'s window into `dst` (same lattice and type,
 * wrap-aware). Returns the number of cells copied. */
size_t tb_grid_blit(tb_grid_t *dst, const tb_grid_t *src);

/* The eight neighbours, defined once for the whole project:
 *
 *      5 6 7        dy +1 (north)
 *      3 . 4
 *      0 1 2        dy -1 (south)
 *
 * Index k and 7 - k are opposite. Cardinals are 1, 3, 4, 6; diagonals 0, 2, 5, 7. tb_nb_dist is the
 * distance in cells (1 or sqrt 2). */
extern const int tb_nb_dx[8];
extern const int tb_nb_dy[8];
extern const double tb_nb_dist[8];
static inline bool tb_nb_is_diagonal(int k)
{
    return k == 0 || k == 2 || k == 5 || k == 7;
}

#endif
