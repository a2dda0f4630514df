/* The tile margin, measured (docs/tiles.md, "The margin").
 *
 * A tile's interior is exact when its window holds every droplet, thermal exchange and stencil that
 * can reach it. tb_detail_margin_bound (params.h) is the provable bound; the measured margin is the
 * smallest at which the interior, encoded to 16 bits, is identical to the interior of the same tile
 * computed on a far larger window. tb_tile_margin_measure computes one sample tile at a list of
 * margins against such a reference and reports, per margin, the largest height difference and the
 * share of interior cells whose 16-bit sample differs. The interior's size does not change what a
 * margin does at its edge, so a measurement may use smaller tiles than the bake (the bench does).
 */
#ifndef TB_DETAIL_MARGIN_H
#define TB_DETAIL_MARGIN_H

#include <stdint.h>

#include "common/error.h"
#include "common/pool.h"
#include "jobs/detail/tile.h"

typedef struct {
    int64_t margin;
    double max_abs_diff_m; /* largest |h - h_ref| over the interior, metres (float heights) */
    int64_t cells_differ;  /* interior cells whose 16-bit sample differs from the reference */
    double share_differ;   /* cells_differ / interior cells */
    double seconds;        /* wall time of this margin's tile (not part of any result) */
} tb_margin_row_t;

/* Computes tile `id` of `planet` with params->margin_cells replaced by each of margins[0..n) and by
 * ref_margin, and fills rows[0..n). Returns 0 or -1 with *err. */
int tb_tile_margin_measure(const tb_tile_planet_t *planet, tb_tile_id_t id, uint64_t seed,
                           const tb_detail_params_t *params, double elevation_min_m,
                           double elevation_max_m, const tb_tile_class_t *classes, int n_classes,
                           const int64_t *margins, int n, int64_t ref_margin, tb_margin_row_t *rows,
                           tb_pool_t *pool, tb_err_t *err);

/* The land or coast tile whose own geology cells hold the steepest 4-neighbour slope of the planet
 * (ties to the lower row, then column). land is the planet's land mask. Returns 0 with *out, or -1
 * when the planet has no land. */
int tb_tile_steepest(const tb_tile_lattice_t *L, const float *height_m, const uint8_t *land,
                     tb_tile_id_t *out, double *slope_deg);

#endif
