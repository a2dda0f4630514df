/* The manifest's `tiles` section: the lattice and every parameter of the detail passes
 * (docs/tiles.md has the table and what each key does).
 *
 * Self-contained on purpose: tb_detail_params_parse takes the section's cJSON object, fills
 * defaults, checks every key's type and range and refuses a key that nothing reads, so the manifest
 * module plugs it in as one call. The same function decodes the parameters a tile job's spec
 * carries (tb_detail_params_to_json prints them canonically), so a worker and the coordinator read
 * one set of rules.
 */
#ifndef TB_DETAIL_PARAMS_H
#define TB_DETAIL_PARAMS_H

#include <stdint.h>

#include "common/detail_keys.h"
#include "common/error.h"

typedef struct cJSON cJSON;

/* tb_detail_params_t, the struct of the section, is common/detail_keys.h's (the manifest holds the
 * same keys): size_km, cell_m, margin_cells and one field per pass key of TB_DETAIL_PASS_KEYS. */

/* Every default (5 km tiles at 2 m, the margin measured by bench/bench_tile.c). */
void tb_detail_params_defaults(tb_detail_params_t *p);

/* Reads a `tiles` section (a cJSON object, or NULL for all defaults) into *p. `where` names the
 * source in messages ("planet.json"). Returns 0, or -1 with *err naming the dotted key and what was
 * expected (TB_E_UNKNOWN_KEY for a key nothing reads, TB_E_INVALID for a bad value). */
int tb_detail_params_parse(const cJSON *section, const char *where, tb_detail_params_t *p,
                           tb_err_t *err);

/* Checks the values together (ranges are checked by parse; this is what parse calls last). */
int tb_detail_params_check(const tb_detail_params_t *p, const char *where, tb_err_t *err);

/* The section as a new cJSON object, every key in table order (canonical: the same parameters print
 * the same bytes). NULL when out of memory. */
cJSON *tb_detail_params_to_json(const tb_detail_params_t *p);

/* The provable margin in detail cells: droplet_rounds x (lifetime x one-cell step + the gradient
 * stencil + brush radius + 1) + thermal_iterations + 2 (the slope stencil of the relief and the
 * splat). Beyond it no droplet, thermal exchange or stencil can carry a window edge's error into
 * the interior (docs/tiles.md, "The margin"). */
int64_t tb_detail_margin_bound(const tb_detail_params_t *p);

/* Estimated CPU seconds of one full tile (interior plus margin) on one core, from a per-pass cost
 * calibrated by bench/bench_tile.c at the defaults (docs/tiles.md, Performance: 490 ns a window
 * cell) and scaled by each pass's work: octaves, droplet steps per cell, thermal iterations. A
 * plan's estimate, not a measurement. */
double tb_detail_tile_seconds(const tb_detail_params_t *p);

/* Number of keys, and the i-th key's group (NULL for a key of the section itself, else "relief",
 * "droplets", "thermal" or "splat"), name, default and one-line meaning, for schema listings. */
int tb_detail_params_key_count(void);
void tb_detail_params_key(int i, const char **group, const char **key, double *def,
                          const char **meaning);

#endif
