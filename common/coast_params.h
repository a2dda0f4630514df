/* The parameters of the coastal pass: the `coast` section of a manifest (docs/coast.md,
 * "Parameters"; docs/manifest.md).
 *
 * They live in common/ so that the manifest can hold them (tb_manifest_t.coast) and jobs/coast/ can
 * read them, in that dependency order. The keys are one X-macro list, TB_COAST_KEYS, from which the
 * struct's documentation, the defaults, the strict JSON parser and the canonical JSON writer are
 * all made, so a key is added in one line. Every value is a double except the wave sector, a
 * [from, to] range of compass bearings.
 */
#ifndef TB_COAST_PARAMS_H
#define TB_COAST_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/error.h"

/* X(name, lo, hi, default, doc): the number keys of the section, in the order they are written. */
#define TB_COAST_KEYS(X)                                                                           \
    X(shelf_km, 0.01, 1000, 3.0,                                                                   \
      "Width of the continental shelf, from the waterline to the shelf break.")                    \
    X(slope_km, 0.01, 1000, 1.6,                                                                   \
      "Width of the continental slope, from the break down to each ocean class's painted depth.")  \
    X(break_depth_m, 1, 11000, 130, "Depth of the shelf break.")                                   \
    X(surf_reach_m, 1, 10000, 110,                                                                 \
      "How far inland the surf planes a platform on a fully exposed coast (exposure scales it).")  \
    X(cut_fraction, 0, 1, 0.9,                                                                     \
      "Share of the land above the platform the surf removes inside its "                          \
      "reach.")                                                                                    \
    X(platform_m, -50, 50, 0.5, "Height of the planed shore platform at the waterline.")           \
    X(platform_slope, 0, 1, 0.01, "Rise of the platform inland, metres per metre.")                \
    X(ref_fetch_km, 0.01, 100000, 5,                                                               \
      "Fetch of open water that reads as fully exposed (exposure = fetch / this, at most 1).")     \
    X(shoal_depth_m, 0, 11000, 5,                                                                  \
      "Offshore water shallower than this blocks the fetch, like "                                 \
      "land.")                                                                                     \
    X(carry_m, 1, 1000, 300,                                                                       \
      "Radius over which the waterline's exposure is carried to the cells near it; covers "        \
      "surf_reach_m and deposit_reach_m. The exposure map ends there.")                            \
    X(drift_km, 0.01, 1000, 0.5,                                                                   \
      "Radius of the alongshore drift kernel that spreads cut and river sediment.")                \
    X(deposit_reach_m, 1, 10000, 300, "How far out from the waterline sediment may be laid.")      \
    X(berm_m, 0, 50, 1.5, "Height of the beach profile at the waterline.")                         \
    X(beach_slope, 0, 1, 0.02,                                                                     \
      "Fall of the beach profile seaward, metres per metre; sediment fills up to the profile.")    \
    X(shelter_floor, 0, 1, 0.15,                                                                   \
      "Least deposition weight of an exposed shallow (a sheltered one weighs 1 - exposure).")      \
    X(river_share, 0, 1, 0.002,                                                                    \
      "Share of the volume a basin's solve eroded that its river mouth delivers to the coast.")    \
    X(delta_ref_m3, 1, 1e12, 2e4,                                                                  \
      "River sediment within the delta bell (three drift radii) that doubles how far out a "       \
      "shallow takes sediment (its beach profile stretched with it) and fills it whatever the "    \
      "waves: a delta's fan; at most four times.")

/* The wave sector key: [from, to] compass bearings in degrees (0 north, 90 east), -360..720. */
#define TB_COAST_SECTOR_KEY "wave_from_deg"
#define TB_COAST_SECTOR_LO (-360.0)
#define TB_COAST_SECTOR_HI 720.0
#define TB_COAST_SECTOR_DEF_FROM 0.0
#define TB_COAST_SECTOR_DEF_TO 360.0
#define TB_COAST_SECTOR_DOC                                                                        \
    "[from, to] compass bearings the waves come from (0 north, 90 east; from < to, so [-45, 45] "  \
    "is N and both its neighbours); the fetch is cast along the eight compass points inside it."

typedef struct {
#define TB_COAST_X_FIELD(name, lo, hi, def, doc) double name;
    TB_COAST_KEYS(TB_COAST_X_FIELD)
#undef TB_COAST_X_FIELD
    double wave_from_deg, wave_to_deg; /* the wave sector, degrees */
} tb_coast_params_t;

/* The compass points, N NE E SE S SW W NW, bearings 0, 45, ... 315. */
#define TB_COAST_DIRECTIONS 8
extern const char *const tb_coast_direction_names[TB_COAST_DIRECTIONS];

/* The defaults of docs/coast.md. */
void tb_coast_params_defaults(tb_coast_params_t *p);

/* Bit k set for every compass point k whose bearing 45k (or 45k plus or minus 360) lies in the wave
 * sector. */
unsigned tb_coast_wave_mask(const tb_coast_params_t *p);

/* Fills *p from the `coast` object of a manifest (NULL: all defaults), refusing an unknown key, a
 * wrong type or a value out of range with its dotted path ("coast.shelf_km") and what was expected,
 * then checks the keys against each other (tb_coast_params_check with no planet). `name` (the file)
 * starts every message. Returns 0, or -1 with *err set (TB_E_INVALID, TB_E_UNKNOWN_KEY). */
int tb_coast_params_from_json(const cJSON *obj, const char *name, tb_coast_params_t *p,
                              tb_err_t *err);

/* The checks of every key's range and across keys: the carry radius covers the surf and deposit
 * reaches, the wave sector holds a compass point; with cell_m > 0 also against the planet's cell
 * and its w columns: the second drift (three times drift_km) at most 2000 cells, every kernel
 * narrower than the circumference. Returns 0 or -1 with *err naming the keys and numbers. */
int tb_coast_params_check(const tb_coast_params_t *p, double cell_m, int64_t w, tb_err_t *err);

/* The section as a JSON object in key order (the caller owns it); parses back to *p. */
cJSON *tb_coast_params_to_json(const tb_coast_params_t *p);

#endif
