/* Nonlinear hillslope diffusion (Roering, Kirchner & Dietrich 1999, "Evidence for nonlinear,
 * diffusive sediment transport on hillslopes and implications for landscape morphology", Water
 * Resources Research 35) on the isotropic nine-point stencil, with a sub-step rate per CELL.
 *
 * Flux law: q = D S / (1 - (S/Sc)^2). Each of a cell's eight faces carries
 *     coeff * w_k * M_k * (h_k - h_c),  coeff = D dt / dx^2,  w_k = 4/6 cardinal, 1/6 diagonal,
 *     M_k = 1 / (1 - r_k^2),  r_k = |h_k - h_c| / (Sc * dx * dist_k),
 * so a diagonal face has its own critical height Sc dx sqrt(2) (docs/solve.md); r is capped at
 * 0.99. The rates are chosen from M at the start of the step; at each firing a face takes M of its
 * drop at that moment but never more than its start value, so a face that relaxes stops pulling
 * (with M frozen at the start, steep faces overshoot and hand their steepness to the next face,
 * building two-cell terraces) and every firing stays within the bound the rates were chosen for.
 *
 * Sub-steps (docs/solve.md): a step is not cut by the steepest slope of the box. Each
 * cell needs the smallest power-of-two rate n with sum_k coeff w_k M_k <= n (the positivity bound:
 * every firing is then a convex combination, so no checkerboard can grow), capped at the largest
 * power of two not above max_substeps (beyond it the face coefficients are scaled down and the
 * repose clamp does the shaping). A cell runs at the highest need in its 3 x 3: without that
 * dilation, needs that alternate cell by cell turn the O(U dt) splitting error into an alternating
 * pattern on steep ground. A face fires at the faster of its two cells' rates, n_f, each
 * time with 1/n_f of its coefficient, and applies the same flux to both cells (conservative).
 * Firing times j/n_f are nested because rates are powers of two; all faces that fire at one time
 * are evaluated on the same heights (Jacobi). Fixed neighbours count as rate 1 and are never
 * updated. A cell's result therefore depends only on the cells within a few faces of it - never on
 * the box, the landmass next door or the steepest cell elsewhere - and the loop length (the box's
 * highest rate) only adds empty times. Cost is proportional to the sum of the cells' rates, so a
 * plain pays one sub-step beside a mountain that pays sixteen.
 *
 * The other bounds exist for measurement and negative controls only: BOX is the predecessor's
 * region-wide bound (every cell at the box's highest rate), ONE is a single explicit sub-step with
 * no limiter (unstable on steep ground).
 */
#ifndef TB_GEOLOGY_HILLSLOPE_H
#define TB_GEOLOGY_HILLSLOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/pool.h"
#include "jobs/geology/topology.h"

/* The most bands one call may be split into. */
#define TB_HILLSLOPE_MAX_BANDS TB_TOPO_MAX_BANDS

typedef enum {
    TB_HILLSLOPE_BOUND_CELL = 0, /* per-cell power-of-two rates (the solve's choice) */
    TB_HILLSLOPE_BOUND_BOX = 1,  /* every cell at the highest rate in the box (negative control) */
    TB_HILLSLOPE_BOUND_ONE = 2   /* one sub-step, no limiter (negative control: checkerboards) */
} tb_hillslope_bound_t;

typedef struct {
    double diffusion_m2_yr; /* D */
    double dt_yr;
    double critical_slope; /* Sc = tan(talus) */
    int max_substeps;      /* the highest rate is the largest power of two not above this */
    tb_hillslope_bound_t bound;
    /* A reference for tests: every dense firing computes every column, instead of only those
     * between the first and last cell whose touch level reaches it (the faces outside fire at
     * no time, so the heights must come out bit for bit the same). */
    bool full_spans;
} tb_hillslope_params_t;

typedef struct {
    int64_t cell_updates; /* sum over events of cells updated (a plain step costs one per cell) */
    int max_rate;         /* highest face rate used in the last call */
} tb_hillslope_stats_t;

typedef struct tb_hillslope_t tb_hillslope_t;

/* A workspace for boxes of up to `cells` cells, rows of up to w (23 bytes a cell: the start-of-step
 * heights, levels, limiters, a list for the sparse firings). NULL with *err on failure. */
tb_hillslope_t *tb_hillslope_new(size_t cells, int64_t w, tb_err_t *err);

/* Frees the workspace and sets *self_p to NULL; accepts NULL. */
void tb_hillslope_destroy(tb_hillslope_t **self_p);

/* One step of diffusion over the solved cells of h (metres, in place); fixed cells are read, never
 * written. Returns 0 (err is kept for future failure modes). Adds to *stats when not NULL. */
int tb_hillslope_diffuse_nonlinear(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
                                   const tb_hillslope_params_t *p, float *h,
                                   tb_hillslope_stats_t *stats, tb_err_t *err);

/* The same on `pool`, split by the bands of rows bands[0..nbands) (at most TB_HILLSLOPE_MAX_BANDS;
 * they cover the inner rows). Every phase is a Jacobi update or a per-cell computation; a band's
 * first and last flux rows are computed before any band moves, so the bits are those of one band.
 * Returns 0, or -1 with *err when a flux buffer cannot be allocated. */
int tb_hillslope_diffuse_bands(tb_hillslope_t *self, const tb_topo_t *t, const uint8_t *node,
                               const tb_hillslope_params_t *p, float *h,
                               tb_hillslope_stats_t *stats, tb_pool_t *pool, const tb_band_t *bands,
                               int nbands, tb_err_t *err);

#endif
