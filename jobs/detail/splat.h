/* The splat weightmap: four terrain layers per detail cell as RGBA bytes that sum to 255
 * (docs/tiles.md, "Splat rules").
 *
 *   R rock      bare rock: slope past splat.rock_deg (a 10 degree blend centred on it)
 *   G grass     whatever the other three leave
 *   B sediment  deposits (full at splat.sediment_m) and wet channel floors (droplet water through
 *               the cell, full at splat.flow_full); the whole sea floor that is not rock
 *   A scree/snow  loose scree on slopes past splat.scree_deg (a 6 degree blend) below the snowline,
 *               snow on every non-rock cell above it (splat.snowline_m, a 100 m blend); one
 * channel, told apart by the altitude, so an engine reads it with the height it already has
 *
 * Each layer takes its share of what the layers before it (rock, then scree/snow, then sediment)
 * left, so the weights sum to 1 before quantising; the bytes are rounded by largest remainder (ties
 * to the lower channel), so they sum to exactly 255. Pure per cell: no neighbourhood, no statistic.
 */
#ifndef TB_DETAIL_SPLAT_H
#define TB_DETAIL_SPLAT_H

#include <stdbool.h>
#include <stdint.h>

#include "jobs/detail/params.h"

/* The RGBA bytes of one cell from its slope (degrees), droplet water through it (droplet water
 * units), deposit depth (m), altitude (m) and whether its class is ocean. */
void tb_splat_weights(const tb_detail_params_t *p, double slope_deg, double water, double deposit_m,
                      double altitude_m, bool ocean, uint8_t out[4]);

#endif
