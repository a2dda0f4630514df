/* Node status and neighbour offsets of a solve box, classified once (fastscapelib raster_grid).
 *
 * A box is a window of w x h geology cells (common/grid.h). Its outer ring is always held at sea
 * level, except that a box covering the whole circumference (tb_frame_wraps) has no west or east
 * edge: column w-1 neighbours column 0 and only the top and bottom rows are the ring. Inside the
 * ring, the caller's solve mask says which cells are solved (1) and which are held at 0 m (ocean,
 * other regions' land). Typical boxes are 10^5..2x10^7 cells.
 *
 * Invariant: a SOLVED cell never sits on the ring, so all eight of its neighbours exist, and
 * tb_topo_nb(t, node[c], c, k) is its k-th neighbour (tb_nb_dx/dy order), wrap included, without a
 * branch: the node byte carries whether the cell is in the first or last column of a wrapping box,
 * and that picks one of three offset rows. Fixed cells on the ring must not use tb_topo_nb.
 */
#ifndef TB_GEOLOGY_TOPOLOGY_H
#define TB_GEOLOGY_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"

enum {
    TB_NODE_FIXED = 0,  /* held at 0 m: ocean, other regions' land, the box ring */
    TB_NODE_SOLVED = 1, /* uplifted and eroded */
    TB_NODE_WEST = 2,   /* column 0 of a wrapping box: its west neighbours are in column w-1 */
    TB_NODE_EAST = 4    /* column w-1 of a wrapping box */
};

/* The D8 direction code of a cell with no receiver (fixed cells, and pits before sink resolution).
 */
#define TB_DIR_NONE 8

typedef struct {
    int64_t w, h;          /* box size in cells */
    size_t n;              /* w * h */
    bool wraps;            /* the box covers the circumference; X wraps inside it */
    double cell_m;         /* cell edge, metres */
    double cell_area_m2;   /* cell_m^2 */
    ptrdiff_t noff[3][8];  /* neighbour offsets: [0] inner columns, [1] west column, [2] east */
    double len_m[8];       /* centre-to-centre distance to neighbour k, metres */
    const tb_frame_t *box; /* the frame, for lattice coordinates (hashes); owned by the caller */
    bool avx2;             /* the router's AVX2 copy runs (common/simd.h; read by tb_topo_init) */
} tb_topo_t;

/* Fills *t for a box. Refuses boxes under 3 x 3 cells, wrapping boxes narrower than 3 columns and
 * boxes of 2^31 cells or more (cell indices are int32 in the workspaces). Returns 0 or -1. */
int tb_topo_init(tb_topo_t *t, const tb_frame_t *box, tb_err_t *err);

/* Classifies every cell of the box into node[] (TB_NODE_* bits) from the solve mask (1 = solved,
 * anything else = held at 0 m); the ring is fixed whatever the mask says. Returns the number of
 * solved cells. */
size_t tb_topo_classify(const tb_topo_t *t, const uint8_t *solve_mask, uint8_t *node);

/* A band of rows [r0, r1) of the box's inner rows (1 <= r0 < r1 <= h - 1): the unit the row-split
 * kernels hand to one thread. A partition never changes a result, only who computes it (every
 * kernel gives the same bits for any partition), so it may depend on anything, the box included. */
typedef struct {
    int64_t r0, r1;
    size_t solved; /* solved cells in the band */
} tb_band_t;

/* The fewest rows a band may have (the kernels' boundary handling needs two rows each side). */
#define TB_BAND_MIN_ROWS 4
/* The most bands any banded kernel takes (the solve uses one a thread, capped here). */
#define TB_TOPO_MAX_BANDS 64

/* Cuts the inner rows into at most `want` bands of at least TB_BAND_MIN_ROWS rows each, balanced on
 * solved cells (by_rows false: for work done per land cell) or on rows (by_rows true: for work done
 * per box cell); a band ends where the running weight passes its share. Returns the number of
 * bands written to out[] (at least 1). */
int tb_topo_bands(const tb_topo_t *t, const uint8_t *node, int want, bool by_rows, tb_band_t *out);

/* Which offset row a node uses. */
static inline int tb_topo_edge(uint8_t node)
{
    return (node >> 1) & 3;
}

/* The k-th neighbour of a SOLVED cell c whose node byte is node_c. */
static inline size_t tb_topo_nb(const tb_topo_t *t, uint8_t node_c, size_t c, int k)
{
    return (size_t)((ptrdiff_t)c + t->noff[tb_topo_edge(node_c)][k]);
}

/* The k-th neighbour of any cell (i, j) of the box, or -1 when it lies outside (the ring's outer
 * side). Slow path: for fixed cells, which may sit on the ring. */
int64_t tb_topo_nb_checked(const tb_topo_t *t, int64_t i, int64_t j, int k);

/* The smallest float above x (x finite): nextafterf(x, +inf) without the call. The flood's
 * epsilon, and the floor the stream-power update keeps above a receiver. */
static inline float tb_next_up(float x)
{
    union {
        float f;
        uint32_t u;
    } v = {x};
    if (v.u == 0x80000000u) /* -0 */
        v.u = 0;
    if ((v.u & 0x80000000u) == 0)
        v.u++;
    else
        v.u--;
    return v.f;
}

/* The world key of a cell: a number that orders cells the same way in every box (lattice row, then
 * lattice column). Priority queues break height ties with it, never with the window index. */
static inline uint64_t tb_topo_world_key(const tb_topo_t *t, size_t c)
{
    int64_t j = (int64_t)(c / (size_t)t->w), i = (int64_t)c - j * t->w;
    int64_t lx = t->box->x0 + i; /* x0 < lattice_w and i < w <= lattice_w: one subtraction wraps */
    lx = lx >= t->box->lattice_w ? lx - t->box->lattice_w : lx;
    return (uint64_t)(t->box->y0 + j) * (uint64_t)t->box->lattice_w + (uint64_t)lx;
}

#if defined(__SSE__)
#include <xmmintrin.h>
/* The eight neighbours of inner cell c (edge 0) of a row of stride W, in tb_nb order: lanes 0..3
 * (the row below and west) in *a, 4..7 (east and the row above) in *b. Reads p[c - W - 1 ..
 * c + W + 1] only. The west and east neighbours are loaded alone and put in with two shufps and a
 * movss: SSE2 has no two-source byte shuffle, and a general shuffle costs about ten instructions
 * there. */
static inline void tb_topo_nb8_ps(const float *p, size_t c, ptrdiff_t W, __m128 *a, __m128 *b)
{
    __m128 lo = _mm_loadu_ps(p + c - W - 1), hi = _mm_loadu_ps(p + c + W - 2);
    __m128 west = _mm_load_ss(p + c - 1), east = _mm_load_ss(p + c + 1);
    __m128 t = _mm_shuffle_ps(lo, west, _MM_SHUFFLE(0, 0, 2, 2)); /* lo2 lo2 west west */
    *a = _mm_shuffle_ps(lo, t, _MM_SHUFFLE(2, 0, 1, 0));          /* lo0 lo1 lo2 west */
    *b = _mm_move_ss(hi, east);                                   /* east hi1 hi2 hi3 */
}
#endif

#endif
