/* The repose clamp: no solved cell stands more than the angle of repose above any neighbour
 * (docs/solve.md).
 *
 * Each solved cell c may stand at most A_ck = a_c * tan(talus) * dist_k above neighbour k, where
 * the allowance factor a_c = 1 - J u_c is jittered per cell and per step from the world-keyed hash
 * (TB_SALT_CLAMP_ALLOWANCE; u in [0, 1), J = 0.05 by default), so a clamped slope is not one ruled
 * plane. The clamp lowers cells, never raises them, and fixed cells (0 m) bound their neighbours.
 *
 * What it computes is the greatest surface below h that meets every constraint: the fixed point of
 *     h_c <- min(h_c, min_k fl(h_k + A_ck)),
 * which is unique because the update is monotone, so it does not depend on the order cells are
 * visited in - the predecessor jittered its pop order to hide an order dependence; here there
 * is none to hide, and tests compare it with a plain sweep-to-convergence reference. Cost: one scan
 * that touches the hash only for cells within 5 % of repose, then a worklist over the cells that
 * moved and their neighbours.
 */
#ifndef TB_GEOLOGY_CLAMP_H
#define TB_GEOLOGY_CLAMP_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/pool.h"
#include "jobs/geology/topology.h"

typedef struct {
    double tan_talus; /* tan of the angle of repose */
    double jitter;    /* J: the allowance factor lies in (1 - J, 1] */
    uint64_t key;     /* tb_hash_key(seed, TB_SALT_CLAMP_ALLOWANCE, step) */
} tb_clamp_params_t;

typedef struct tb_clamp_t tb_clamp_t;

/* A workspace for boxes of up to `cells` cells, rows of up to w (5 bytes a cell). NULL with *err
 * on failure. */
tb_clamp_t *tb_clamp_new(size_t cells, int64_t w, tb_err_t *err);

/* Frees the workspace and sets *self_p to NULL; accepts NULL. */
void tb_clamp_destroy(tb_clamp_t **self_p);

/* Clamps h in place; returns the number of times a cell was lowered. */
int64_t tb_clamp_repose(tb_clamp_t *self, const tb_topo_t *t, const uint8_t *node,
                        const tb_clamp_params_t *p, float *h);

/* The same on `pool`: the scan is split by bands of rows and reads only (each band lists the cells
 * that violate on the surface as it was), then one thread lowers the listed cells and runs the
 * worklist. The fixed point is unique, so the bits are those of tb_clamp_repose. */
int64_t tb_clamp_repose_bands(tb_clamp_t *self, const tb_topo_t *t, const uint8_t *node,
                              const tb_clamp_params_t *p, float *h, tb_pool_t *pool,
                              const tb_band_t *bands, int nbands);

/* The reference: Jacobi sweeps over the whole box until nothing moves. For tests only. */
int64_t tb_clamp_repose_sweep(const tb_topo_t *t, const uint8_t *node, const tb_clamp_params_t *p,
                              float *h);

#endif
