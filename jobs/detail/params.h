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

#include "common/error.h"

typedef struct cJSON cJSON;

typedef struct {
    double size_km;   /* tile edge */
    double cell_m;    /* detail cell edge */
    int margin_cells; /* cells of window computed round a tile's interior and thrown away */
    /* detail relief (relief_fbm.h) */
    double relief_amplitude_m;  /* fBm amplitude on steep ground */
    double relief_wavelength_m; /* wavelength of the first octave, snapped to the circumference */
    int relief_octaves;
    double relief_gain;            /* amplitude ratio from one octave to the next */
    double relief_flat_fraction;   /* share of the amplitude left on flat ground */
    double relief_slope_full_deg;  /* slope at and above which the full amplitude applies */
    double relief_ocean_mult;      /* amplitude multiplier on ocean classes */
    double relief_rock_exponent;   /* amplitude *= k_mult^-exponent: hard rock is rougher */
    double relief_channel_area_m2; /* drainage area from which relief is zero (a channel) */
    /* hydraulic erosion by droplets (erosion_droplets_beyer.h) */
    int droplet_rounds;
    int droplet_lifetime;     /* steps of one cell each */
    int droplet_spawn_block;  /* one droplet per block x block cells per round */
    int droplet_brush_radius; /* cells */
    double droplet_inertia;
    double droplet_capacity;
    double droplet_min_slope;
    double droplet_erode;
    double droplet_deposit;
    double droplet_evaporate;
    double droplet_gravity;
    /* thermal weathering (thermal_talus_jacobi.h) */
    int thermal_iterations;
    double thermal_talus_deg;
    double thermal_rate; /* share of the largest excess moved per iteration, (0, 0.5] */
    /* splat weights (splat.h) */
    double splat_rock_deg;   /* slope where rock takes over */
    double splat_scree_deg;  /* slope where loose scree starts */
    double splat_snowline_m; /* altitude above which the scree channel is snow */
    double splat_sediment_m; /* deposit depth that reads as full sediment */
    double splat_flow_full;  /* droplet water through a cell that reads as a wet channel */
} tb_detail_params_t;

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
