/* The tile job: one detail tile's passes, as a pure function from spec bytes to result bytes
 * (jobs/job.h; docs/tiles.md).
 *
 * The spec carries everything the job reads: the tile id, the planet's geology lattice, the seed,
 * the `tiles` parameters (params.h), the elevation encoding, the class table (kind and relief
 * multiplier per class) and the window of the composited planet round the tile - heights, drainage
 * area, rock erodibility multiplier and classes on the geology lattice over exactly
 * tb_tile_geo_window(tb_tile_window(id, margin)) - so a worker needs no shared file system. The
 * distribution layer compresses it as a blob (common/blob.h) like every spec: about 13 bytes a
 * geology cell raw, 6 MB for a default tile, a fraction of that packed.
 *
 * The passes, in order, over the tile plus its margin: Catmull-Rom resampling to the detail cell,
 * detail relief, droplet erosion (rounds), thermal weathering, the shore (shore.h: when the spec
 * carries the coastal pass's exposure and moved_m); then over the interior only: the
 * heights (float metres and 16-bit in the planet's elevation encoding), the flow, wear and deposit
 * maps (8-bit), the splat weights (RGBA) and the detail histograms. The result is canonical: the
 * same spec gives the same bytes on any worker, at any thread count.
 */
#ifndef TB_DETAIL_TILE_H
#define TB_DETAIL_TILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/pool.h"
#include "jobs/detail/erosion_droplets_beyer.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/params.h"
#include "jobs/job.h"
#include "jobs/uplift/uplift.h"

#define TB_TILE_MAX_CLASSES 64
#define TB_TILE_SLOPE_BINS 90 /* 1-degree bins over [0, 90) */

typedef struct {
    uint8_t ocean;      /* 1 for an ocean class, 0 for land */
    double relief_mult; /* multiplier of the detail relief amplitude on this class */
} tb_tile_class_t;

/* What the tile job needs to make the rock erodibility multiplier under its window itself: the
 * uplift module's lithology field (tb_tile_rock_k, jobs/detail/planet_inputs.h), a pure function of
 * world position given the seed, the circumference, the manifest's rock section, the massif
 * wavelength (the probes are checked against both noises) and the planet probes. Carrying these
 * instead of the window's multipliers keeps the spec 9 bytes a cell and its cut a copy: the
 * multiplier costs about 1 us a cell, 0.5 s a tile, which the worker pays. */
typedef struct {
    uint64_t seed;
    double circumference_km;
    double massif_wavelength_km; /* as asked: snapped by the job as the manifest snaps it */
    tb_rock_params_t params;     /* wavelength_km as asked, k_min_mult, k_max_mult, softness */
    tb_uplift_probes_t probes;
} tb_tile_rock_t;

/* The rock inputs of a finished manifest and its probes. */
void tb_tile_rock_of(const tb_manifest_t *m, const tb_uplift_probes_t *probes, tb_tile_rock_t *out);

/* A tile job's inputs. The window arrays are geo.w x geo.h, row-major, borrowed. */
typedef struct {
    tb_tile_id_t id;
    uint64_t seed;
    tb_detail_params_t params;
    int64_t geo_w, geo_h; /* the planet's geology lattice */
    double geo_cell_m;
    double elevation_min_m, elevation_max_m; /* heights of 16-bit samples 0 and 65535 */
    int n_classes;
    tb_tile_class_t classes[TB_TILE_MAX_CLASSES];
    tb_frame_t geo;             /* the window the arrays cover, on the geology lattice */
    const float *height_m;      /* composited heights */
    const float *area_m2;       /* drainage area */
    const float *rock_k;        /* erodibility multiplier of the rock (1 where unknown), unless: */
    const tb_tile_rock_t *rock; /* not NULL: the job makes the multiplier itself; rock_k unused */
    const uint8_t *class_idx;   /* index into classes */
    /* The coastal pass's outputs over the same window, both or neither (NULL: no coastal pass, e.g.
     * --no-coast; the shore pass is then skipped): the carried exposure in thousandths
     * (TB_COAST_NO_EXPOSURE 0xffff beyond its carry) and what the pass moved, metres (cut < 0,
     * laid > 0). */
    const uint16_t *exposure;
    const float *moved_m;
} tb_tile_spec_t;

/* A decoded or cut spec, owning its arrays (rock_k NULL when the spec carries the rock's inputs).
 */
typedef struct {
    tb_tile_spec_t spec;
    float *height_m, *area_m2, *rock_k;
    uint8_t *class_idx;
    tb_tile_rock_t rock;
    uint16_t *exposure; /* NULL without the coastal pass */
    float *moved_m;
} tb_tile_spec_owned_t;

/* The planet a coordinator cuts windows from: geology-lattice arrays, geo_w x geo_h, borrowed. */
typedef struct {
    int64_t geo_w, geo_h;
    double geo_cell_m;
    const float *height_m, *area_m2, *rock_k; /* rock_k may be NULL: 1 everywhere */
    const uint8_t *class_idx;
    const tb_tile_rock_t *rock; /* not NULL: the specs carry it, and the jobs make the rock */
    /* the coastal pass's exposure (thousandths, 0xffff beyond carry_m) and moved_m (cut < 0, laid
     * > 0): both or neither; NULL without the coastal pass (--no-coast) */
    const uint16_t *exposure;
    const float *moved_m;
} tb_tile_planet_t;

/* The detail statistics of one tile's interior: integer counts and sums that pool over tiles by
 * adding, in any order. */
typedef struct {
    int n_classes;
    int64_t slope_hist[TB_TILE_MAX_CLASSES][TB_TILE_SLOPE_BINS]; /* cells per class per degree */
    int64_t cells, land_cells;
    int64_t channel_cells;         /* land cells whose droplet water reached splat.flow_full */
    int64_t eroded_q, deposited_q; /* sums over interior cells, TB_DROPLET_QUANTUM_M units */
} tb_tile_stats_t;

/* Everything a tile job returns; arrays are interior-sized (w x h) and owned. */
typedef struct {
    tb_tile_id_t id;
    tb_frame_t interior; /* on the detail lattice */
    uint64_t spec_xxh3;  /* XXH3-64 of the spec bytes this result answers (set by the job kind) */
    double elevation_min_m, elevation_max_m;
    float *height_m;
    uint16_t *height_u16; /* the planet's encoding: lo + v (hi - lo) / 65535; clipped */
    uint8_t *flow;        /* min(255, round(32 log2(1 + water))), water in droplet units */
    uint8_t *wear;        /* round(255 sqrt(min(1, eroded / 1 m))) */
    uint8_t *deposit;     /* round(255 sqrt(min(1, deposited / 1 m))) */
    uint8_t *splat;       /* RGBA per cell (splat.h) */
    tb_tile_stats_t stats;
    tb_droplet_budget_t budget; /* over the whole window (diagnostic; not pooled) */
    double pass_s[6];     /* wall seconds in resample, relief, droplets, thermal, shore, outputs */
    double pass_cpu_s[6]; /* CPU seconds of the calling thread in each (not encoded: diagnostics) */
    int64_t shore_beach_cells, shore_cliff_cells; /* the shore pass's (window; not encoded) */
} tb_tile_result_t;

/* Cuts the window of `planet` a tile needs at params.margin_cells into *out (owned), with the given
 * class table, seed and encoding; with planet->rock the spec carries the rock's inputs and the job
 * makes the multiplier, else the window's multipliers are copied from planet->rock_k (1 where it is
 * NULL). Returns 0 or -1 with *err. */
int tb_tile_spec_cut(const tb_tile_planet_t *planet, tb_tile_id_t id, uint64_t seed,
                     const tb_detail_params_t *params, double elevation_min_m,
                     double elevation_max_m, const tb_tile_class_t *classes, int n_classes,
                     tb_tile_spec_owned_t *out, tb_err_t *err);
void tb_tile_spec_free(tb_tile_spec_owned_t *s);

/* Canonical spec bytes (a new buffer the caller frees). */
int tb_tile_spec_encode(const tb_tile_spec_t *spec, void **out, size_t *bytes, tb_err_t *err);
/* Decodes untrusted spec bytes; a bad spec is TB_E_FORMAT or TB_E_INVALID, never a crash. */
int tb_tile_spec_decode(const void *data, size_t bytes, tb_tile_spec_owned_t *out, tb_err_t *err);

/* Runs the passes. pool may be NULL (one thread); any pool gives the same bits. Checks the spec
 * (window, classes) first. Fills *out; free with tb_tile_result_free. */
int tb_tile_compute(const tb_tile_spec_t *spec, tb_pool_t *pool, tb_tile_result_t *out,
                    tb_err_t *err);
void tb_tile_result_free(tb_tile_result_t *r);

/* Canonical result bytes, and their decoder (untrusted bytes). */
int tb_tile_result_encode(const tb_tile_result_t *r, void **out, size_t *bytes, tb_err_t *err);
int tb_tile_result_decode(const void *data, size_t bytes, tb_tile_result_t *out, tb_err_t *err);

/* The most bytes the result of these spec bytes can take (0 when they are not a tile spec): the
 * kind's result_bound (docs/distribution.md, "Verifying results"). Reads the spec's header only. */
size_t tb_tile_result_bound(const void *spec, size_t spec_bytes);

/* The stated bound on a tile job's peak resident memory on its worker, bytes, for a window of
 * window_cells (docs/distribution.md, "Peak memory"): TB_TILE_PEAK_BYTES_A_CELL a window cell -
 * the spec and its decoded copy, the passes' fields and workspaces, the result and its compressed
 * copy - and TB_TILE_PEAK_FIXED_BYTES of the process and its threads. Measured on the 25 km demo,
 * one thread a worker: 623-652 MB for a 2772 x 2772 window (0.76-0.80 of this bound), 410-448 MB
 * for the clipped 2772 x 1636 windows of its last row; two threads added 10 MiB to a 10 km tile. */
#define TB_TILE_PEAK_BYTES_A_CELL 80.0
#define TB_TILE_PEAK_FIXED_BYTES ((double)(192 << 20))
double tb_tile_peak_bytes(int64_t window_cells);

/* The job kind "tile" (jobs/job.h): its result echoes the XXH3-64 of its spec (spec_xxh3), and its
 * check_result compares that and the tile, interior, elevation range and sizes with the spec. */
extern const tb_job_kind_t tb_job_kind_tile;

#endif
