/* The rock-uplift-rate field U and the erodibility field K of one region box (docs/uplift.md).
 *
 * U and K are pure functions of (manifest, legend, painting, seed) evaluated in world coordinates:
 * a cell gets the same bits in any box (docs/determinism.md), provided the box holds every
 * land cell's blend neighbourhood (TB_UPLIFT_BLEND_M, at most the ocean margin minus one cell),
 * which a region box - its land grown by regions.ocean_margin_km - does. Four ingredients:
 *   - class rates and the massif fabric: one planet-wide fBm, ranked through the planet probe's
 *     quantiles and cut per class at rank 1 - massif_fraction with a smoothstep band, so a painted
 *     lowland is a plain at massif_floor_mm_yr with hill masses rising towards uplift_mm_yr;
 *   - a blend of the class numbers across painted edges over land cells only (iterated integer box
 *     sums, exact in any decomposition), so U never steps where the painting does;
 *   - lithology: a second fBm, ranked the same way, split into TB_UPLIFT_ROCK_TYPES rock bands
 * whose boundaries are softened pointwise in rank space (never by blurring);
 *   - faults: walked traces seeded on a world lattice, strike from a grain vector field, added to U
 *     on land with a C1 across-fault envelope and a smooth taper over the last sixth at each tip.
 * Typical size: a region box of 1-15 M cells; docs/uplift.md has the measured cost per cell.
 * Nothing here touches a file or a socket.
 */
#ifndef TB_UPLIFT_H
#define TB_UPLIFT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"

/* Quantile levels in a probe table: entry k is the value at planet rank k / (LEVELS - 1). */
#define TB_UPLIFT_PROBE_LEVELS 513
/* Probe lattice: PROBE_NX x PROBE_NY jittered points over x in [0, C), y in [0, C / 2). */
#define TB_UPLIFT_PROBE_NX 512
#define TB_UPLIFT_PROBE_NY 256

/* Noise fields (fBm of common/noise.h, gain 0.5). */
#define TB_UPLIFT_MASSIF_OCTAVES 3
#define TB_UPLIFT_ROCK_OCTAVES 3
#define TB_UPLIFT_GRAIN_OCTAVES 2
#define TB_UPLIFT_FBM_GAIN 0.5

/* Width in planet rank of the smoothstep that raises a massif from its floor to the class rate,
 * centred on the class's cut; narrowed to 2 min(f, 1 - f) so the mean weight stays f exactly. */
#define TB_UPLIFT_MASSIF_BAND 0.5

/* Rock types of the lithology field; rank band i holds type perm(i), a seed-hashed permutation. */
#define TB_UPLIFT_ROCK_TYPES 4

/* Target radius of the class blend, metres. The blend is three box sums of 2r+1 cells in x and in
 * y, r = max(1, round(BLEND_M / (3 cell_m))), so it reads a square of half-width R = 3r cells. */
#define TB_UPLIFT_BLEND_M 288.0

/* Planet-level quantities from fixed probes; depend only on (manifest, seed), never on the painting
 * or a region. A few kilobytes; copied by value. */
typedef struct {
    uint64_t seed;              /* the manifest seed the probes were taken for */
    double massif_wavelength_m; /* snapped wavelengths the probes sampled; build checks them */
    double rock_wavelength_m;
    double massif_q[TB_UPLIFT_PROBE_LEVELS]; /* massif fabric value at rank k / (LEVELS - 1) */
    double rock_q[TB_UPLIFT_PROBE_LEVELS];   /* rock field value at rank k / (LEVELS - 1) */
} tb_uplift_probes_t;

/* A fault trace as a polyline in lattice cell coordinates: x = world_x_m / cell_m, so lattice cell
 * (i, j) spans [i, i+1) x [j, j+1). x is unwrapped along the trace and shifted by whole
 * circumferences so the trace overlaps the box it was asked for (it may leave [0, lattice_w)). */
typedef struct {
    size_t n;   /* points */
    double *xy; /* 2n values: x0, y0, x1, y1, ... */
} tb_polyline_t;

/* Samples the massif and rock fields on the planet probe (a fixed jittered lattice over the whole
 * circumference) and fills *out with their quantile tables. Returns 0, or -1 with *err set when the
 * manifest was not finished, or its margin cannot hold the blend radius. About 0.2 s. */
int tb_uplift_probes_compute(const tb_manifest_t *m, tb_uplift_probes_t *out, tb_err_t *err);

/* Whether p are the probes of m's planet: the same seed, and the massif and rock wavelengths the
 * probes sampled equal, bit for bit, to the spacings of the noises m makes (both are
 * circumference / periods, computed by tb_noise_init; a spec carries its numbers exactly,
 * common/json.h). The one comparison every job that takes probes makes. 0, or -1 with *err
 * (TB_E_INVALID) printing both with all their digits. */
int tb_uplift_probes_check(const tb_manifest_t *m, const tb_uplift_probes_t *p, tb_err_t *err);

/* The probes as JSON (every double printed with %.17g, so the round trip is exact). The caller
 * frees the string; NULL when memory runs out. */
char *tb_uplift_probes_to_json(const tb_uplift_probes_t *p);

/* Parses JSON from tb_uplift_probes_to_json. Returns 0, or -1 with *err naming the bad key
 * (missing, wrong type, wrong length, not finite, quantiles not non-decreasing). */
int tb_uplift_probes_from_json(const char *json, tb_uplift_probes_t *p, tb_err_t *err);

/* Fills uplift_m_yr (U, m/yr) and k (K, the stream-power erodibility, per cell) over `box`, from
 * `classes` (box-sized, row-major, a legend class index per cell). Land cells get
 * U = max(0, blended class rate with massifs + fault throw) and K = solve.k x blended k_mult x rock
 * multiplier; ocean cells get U = 0 and K = solve.k. Both outputs are caller-owned, box-sized.
 * Exact across decompositions for every land cell whose R-neighbourhood lies in the box.
 * Returns 0, or -1 with *err set: a class index outside the legend (names the cell), probes of
 * another planet, a frame on another lattice, or memory. */
int tb_uplift_build(const tb_manifest_t *m, const tb_uplift_probes_t *p, const tb_frame_t *box,
                    const uint8_t *classes, float *uplift_m_yr, float *k, tb_err_t *err);

/* The fault traces (en-echelon segments each their own polyline) whose envelope touches the box,
 * in canonical order, for map_uplift.png. *out is a new array of *n_out polylines the caller frees
 * with tb_uplift_traces_destroy; *out is NULL when there are none. */
int tb_uplift_fault_traces(const tb_manifest_t *m, const tb_frame_t *box, tb_polyline_t **out,
                           size_t *n_out, tb_err_t *err);

/* Frees n polylines and the array, and sets *traces_p to NULL; accepts NULL. */
void tb_uplift_traces_destroy(tb_polyline_t **traces_p, size_t n);

/* ---- the pieces, for tests, maps and the plan ---- */

/* Blend half-width R in cells (3r) for a cell size; see TB_UPLIFT_BLEND_M. */
int64_t tb_uplift_blend_radius_cells(double cell_m);

/* The massif fabric (unranked fBm value) and rock field value at world metres (x, y). */
double tb_uplift_massif_value(const tb_manifest_t *m, double x_m, double y_m);
double tb_uplift_rock_value(const tb_manifest_t *m, double x_m, double y_m);

/* Planet rank in [0, 1] of a value through a probe quantile table (piecewise linear CDF). */
double tb_uplift_rank(const double q[TB_UPLIFT_PROBE_LEVELS], double value);

/* Massif weight in [0, 1] of a cell whose fabric rank is `rank`, for a class with this massif
 * fraction: 0 on the plain, 1 on the massif, a smoothstep across the band round rank 1 - fraction.
 */
double tb_uplift_massif_weight(double rank, double fraction);

/* Rock erodibility multiplier at a rock rank, between rock.k_range[0] and [1]; softened between
 * rock types over rock.softness of rank. */
double tb_uplift_rock_mult(const tb_manifest_t *m, double rank);

/* Fault strike (the grain) at world metres: 0.5 atan2(gy, gx) of two fBm, radians in (-pi/2, pi/2];
 * an axis, so strike and strike + pi are the same line. */
double tb_uplift_grain_strike(const tb_manifest_t *m, double x_m, double y_m);

/* The fault throw alone (m/yr) at every cell of the box, land or not; tb_uplift_build adds it to
 * land cells. out is caller-owned, box-sized. */
int tb_uplift_fault_rate(const tb_manifest_t *m, const tb_frame_t *box, float *out, tb_err_t *err);

#endif
