/* The pass parameters of the detail tiles: the keys of the manifest's `tiles` section below its
 * lattice keys (docs/tiles.md, "The `tiles` section"; docs/manifest.md).
 *
 * They live in common/ so that the manifest can hold them (tb_manifest_t.tiles) and jobs/detail/
 * can read them, in that dependency order (like common/coast_params.h). The keys are one X-macro
 * list, TB_DETAIL_PASS_KEYS, from which the manifest's key table, jobs/detail/params.c's table
 * (defaults, parsing, canonical JSON) and the manifest's fields are all made, so the two can never
 * disagree on a default or a range. Also here: the provable margin and the rule that decides which
 * margin a set of passes requires, which both the manifest check and jobs/detail/ use.
 */
#ifndef TB_DETAIL_KEYS_H
#define TB_DETAIL_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* X(group, key, kind, field, lo, hi, default, margin, doc): kind INT or DOUBLE; field the member of
 * tb_detail_params_t and tb_tile_params_t; margin 1 when the key shapes what crosses a window's
 * edge (a change voids the measured margin, below), 0 for the per-cell splat rules. */
#define TB_DETAIL_PASS_KEYS(X)                                                                     \
    X(relief, amplitude_m, DOUBLE, relief_amplitude_m, 0, 100, 1.0, 1,                             \
      "Detail relief amplitude on steep ground.")                                                  \
    X(relief, wavelength_m, DOUBLE, relief_wavelength_m, 1, 100000, 48, 1,                         \
      "Wavelength of the first relief octave (snapped to divide the circumference).")              \
    X(relief, octaves, INT, relief_octaves, 1, 8, 4, 1, "Relief octaves.")                         \
    X(relief, gain, DOUBLE, relief_gain, 0, 1, 0.6, 1, "Amplitude ratio between octaves.")         \
    X(relief, flat_fraction, DOUBLE, relief_flat_fraction, 0, 1, 0.25, 1,                          \
      "Share of the amplitude left on flat ground.")                                               \
    X(relief, slope_full_deg, DOUBLE, relief_slope_full_deg, 0.1, 89, 25, 1,                       \
      "Slope from which the full amplitude applies.")                                              \
    X(relief, ocean_mult, DOUBLE, relief_ocean_mult, 0, 10, 0.3, 1,                                \
      "Amplitude multiplier on ocean classes.")                                                    \
    X(relief, rock_exponent, DOUBLE, relief_rock_exponent, 0, 4, 0.5, 1,                           \
      "Amplitude times k_mult^-exponent: harder rock is rougher.")                                 \
    X(relief, channel_area_m2, DOUBLE, relief_channel_area_m2, 1, 1e12, 1e5, 1,                    \
      "Drainage area from which the relief is zero (a channel); it tapers in over a decade "       \
      "below.")                                                                                    \
    X(droplets, rounds, INT, droplet_rounds, 0, 64, 3, 1,                                          \
      "Rounds of droplets; each round reads the heights the previous one left.")                   \
    X(droplets, lifetime, INT, droplet_lifetime, 1, 1000, 20, 1,                                   \
      "Steps a droplet lives; each step is one detail cell.")                                      \
    X(droplets, spawn_block, INT, droplet_spawn_block, 1, 64, 5, 1,                                \
      "One droplet per spawn_block x spawn_block cells per round; must divide the tile's cells.")  \
    X(droplets, brush_radius, INT, droplet_brush_radius, 0, 8, 3, 1,                               \
      "Radius of the erosion brush, cells.")                                                       \
    X(droplets, inertia, DOUBLE, droplet_inertia, 0, 0.99, 0.05, 1,                                \
      "Share of the old direction kept at each step.")                                             \
    X(droplets, capacity, DOUBLE, droplet_capacity, 0, 1000, 0.2, 1, "Sediment capacity factor.")  \
    X(droplets, min_slope, DOUBLE, droplet_min_slope, 0, 10, 0.01, 1,                              \
      "Smallest height drop (m a step) used for the capacity.")                                    \
    X(droplets, erode, DOUBLE, droplet_erode, 0, 1, 0.3, 1,                                        \
      "Share of the free capacity eroded a step.")                                                 \
    X(droplets, deposit, DOUBLE, droplet_deposit, 0, 1, 0.3, 1,                                    \
      "Share of the excess sediment deposited a step.")                                            \
    X(droplets, evaporate, DOUBLE, droplet_evaporate, 0, 1, 0.02, 1,                               \
      "Share of the water lost a step.")                                                           \
    X(droplets, gravity, DOUBLE, droplet_gravity, 0, 1000, 4, 1,                                   \
      "Acceleration of a droplet per metre of drop.")                                              \
    X(droplets, carry_steps, INT, droplet_carry_steps, 0, 1000, 12, 1,                             \
      "Steps a droplet whose lifetime ended goes on down the steepest descent, laying its load "   \
      "where its capacity falls or where it joins a channel (0: it lays it where it dies).")       \
    X(droplets, settle_cells, INT, droplet_settle_cells, 0, 32, 6, 1,                              \
      "The deposit settles over a tent of this radius twice (exact in integers): a sheet over "    \
      "the low ground, not a speckle of one-cell heaps (0: none).")                                \
    X(droplets, converge, DOUBLE, droplet_converge, 0, 10, 0.25, 1,                                \
      "Erosion times 1 + converge x log2(1 + the water of the rounds before): converging paths "   \
      "deepen into gullies.")                                                                      \
    X(thermal, iterations, INT, thermal_iterations, 0, 1000, 6, 1,                                 \
      "Jacobi iterations of thermal weathering.")                                                  \
    X(thermal, talus_deg, DOUBLE, thermal_talus_deg, 1, 89, 38, 1,                                 \
      "Angle of repose at the detail cell.")                                                       \
    X(thermal, rate, DOUBLE, thermal_rate, 0.01, 0.5, 0.5, 1,                                      \
      "Share of a cell's largest excess over the talus moved per iteration.")                      \
    X(shore, surf_reach_m, DOUBLE, shore_surf_reach_m, 1, 150, 110, 1,                             \
      "The coastal pass's surf reach (coast.surf_reach_m): the cliff stands at exposure x reach "  \
      "from the waterline.")                                                                       \
    X(shore, platform_m, DOUBLE, shore_platform_m, -5, 5, 0.5, 1,                                  \
      "Height of the wave-cut platform at the waterline (coast.platform_m).")                      \
    X(shore, platform_slope, DOUBLE, shore_platform_slope, 0, 0.2, 0.01, 1,                        \
      "Rise of the platform inland, metres per metre (coast.platform_slope).")                     \
    X(shore, grain_mm, DOUBLE, shore_grain_mm, 0.06, 10, 0.3, 1,                                   \
      "Beach sand grain size: the Dean profile's A = 0.21 D^0.48 (Dean 1991).")                    \
    X(shore, closure_m, DOUBLE, shore_closure_m, 0.1, 20, 3, 1,                                    \
      "Depth at which the beach's equilibrium profile meets the shelf (within 140 m of shore).")   \
    X(shore, berm_m, DOUBLE, shore_berm_m, 0, 10, 1.5, 1, "Height of the beach berm's crest.")     \
    X(shore, foreshore_slope, DOUBLE, shore_foreshore_slope, 0.01, 0.5, 0.08, 1,                   \
      "Slope of the beach face from the waterline up to the berm.")                                \
    X(shore, berm_width_m, DOUBLE, shore_berm_width_m, 0, 60, 12, 1,                               \
      "Width of the berm's flat top.")                                                             \
    X(shore, cliff_deg, DOUBLE, shore_cliff_deg, 45, 89, 72, 1, "Angle of a sea cliff's face.")    \
    X(shore, notch_m, DOUBLE, shore_notch_m, 0, 5, 1.2, 1,                                         \
      "Depth of the wave-cut notch at the foot of an exposed cliff.")                              \
    X(shore, scree_deg, DOUBLE, shore_scree_deg, 10, 45, 33, 1,                                    \
      "Angle of the scree apron at the foot of a sheltered cliff.")                                \
    X(shore, apron_share, DOUBLE, shore_apron_share, 0, 1, 0.3, 1,                                 \
      "Share of the cliff's height the scree apron climbs.")                                       \
    X(shore, outline_m, DOUBLE, shore_outline_m, 0, 10, 3, 1,                                      \
      "Amplitude of the shoreline's own wander (noise in world metres), so no 8 m cell shows.")    \
    X(splat, rock_deg, DOUBLE, splat_rock_deg, 1, 89, 40, 0,                                       \
      "Slope at which bare rock takes over (5 degrees either side blend).")                        \
    X(splat, scree_deg, DOUBLE, splat_scree_deg, 1, 89, 28, 0,                                     \
      "Slope at which loose scree starts (or snow above the snowline).")                           \
    X(splat, snowline_m, DOUBLE, splat_snowline_m, -11000, 20000, 1200, 0,                         \
      "Altitude above which the fourth channel is snow rather than scree (100 m blend).")          \
    X(splat, sediment_m, DOUBLE, splat_sediment_m, 1e-6, 100, 0.05, 0,                             \
      "Deposit depth that reads as full sediment.")                                                \
    X(splat, flow_full, DOUBLE, splat_flow_full, 1e-3, 1e9, 20, 0,                                 \
      "Droplet water through a cell that reads as a wet channel floor (sediment).")

#define TB_DETAIL_KEY_TYPE_INT int
#define TB_DETAIL_KEY_TYPE_DOUBLE double

/* The `tiles` section as the detail passes read it (jobs/detail/params.h has its functions). */
typedef struct {
    double size_km;   /* tile edge */
    double cell_m;    /* detail cell edge */
    int margin_cells; /* cells of window computed round a tile's interior and thrown away */
#define TB_DETAIL_X_FIELD(group, key, kind, field, lo, hi, def, margin, doc)                       \
    TB_DETAIL_KEY_TYPE_##kind field;
    TB_DETAIL_PASS_KEYS(TB_DETAIL_X_FIELD)
#undef TB_DETAIL_X_FIELD
} tb_detail_params_t;

/* The detail cell at which the margin was measured, and the measured margin itself
 * (bench/bench_tile.c at every default; docs/tiles.md, "The margin"). */
#define TB_DETAIL_MEASURED_CELL_M 2.0
#define TB_DETAIL_MEASURED_MARGIN_CELLS 136

/* How far (detail cells, Chebyshev) the shore pass reads the waterline: its distance transform's
 * cap plus its smoothing (jobs/detail/shore.h). */
#define TB_DETAIL_SHORE_REACH_CELLS 84

/* The provable margin in detail cells: rounds x (lifetime x one-cell step + the gradient stencil +
 * carry steps + brush radius + 1 nearest node) + 4 settle cells (the deposit's two tents, once at
 * the end) + thermal iterations + 2 (the slope stencils of the relief and of the outputs), and
 * never less than the shore pass's reach. Beyond it no droplet, thermal exchange or stencil can
 * carry a window edge's error into the interior (docs/tiles.md, "The margin"). */
static inline int64_t tb_detail_margin_bound_of(int rounds, int lifetime, int carry_steps,
                                                int brush_radius, int settle_cells,
                                                int thermal_iterations)
{
    int64_t b = (int64_t)rounds * ((int64_t)lifetime + carry_steps + 1 + brush_radius + 1) +
                4 * (int64_t)settle_cells + thermal_iterations + 2;
    /* the shore pass reads the waterline's distance within TB_DETAIL_SHORE_REACH_CELLS */
    return b > TB_DETAIL_SHORE_REACH_CELLS ? b : TB_DETAIL_SHORE_REACH_CELLS;
}

/* The margin a set of passes requires, in detail cells. The measured margin is a measurement of
 * the default passes at the 2 m cell: it holds while cell_m and every key that shapes what crosses
 * a window's edge (relief, droplets, thermal) are at their defaults, and then the requirement is
 * TB_DETAIL_MEASURED_MARGIN_CELLS. Any other passes require the provable bound of their own
 * parameters (tb_detail_margin_bound_of), whether it is above or below the measured one: no
 * measurement covers them, and the bound needs none. *changed (may be NULL) gets the dotted path
 * of the first key that voids the measurement ("tiles.droplets.lifetime"), or NULL at the
 * defaults; *value (may be NULL) its value and *measured_value (may be NULL) its default.
 * docs/tiles.md, "The margin". */
int64_t tb_detail_required_margin(const tb_detail_params_t *p, const char **changed, double *value,
                                  double *measured_value);

/* The checks across keys of the passes, with the numbers: a tile is a whole number of detail
 * cells, droplets.spawn_block divides it, splat.scree_deg < splat.rock_deg. `where` names the
 * source. Returns 0 or -1 with TB_E_INVALID. */
int tb_detail_keys_check(double size_km, double cell_m, int spawn_block, double scree_deg,
                         double rock_deg, const char *where, tb_err_t *err);

#endif
