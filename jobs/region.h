/* The region job: the geology of one region box, as a pure function from spec bytes to result
 * bytes.
 *
 * A region is one or more landmasses with their ocean margin (jobs/plan). Its job builds the uplift
 * and erodibility fields (jobs/uplift), runs the stream-power solve (jobs/geology) for the
 * manifest's steps, and fills the region's statistics (jobs/stats) while the grid is alive. Every
 * cell outside the region's own land is held at sea level, so the answer on a landmass does not
 * depend on how the planet was cut up (docs/determinism.md).
 *
 * The spec carries everything the job reads - the manifest's physics, the legend classes present in
 * the box, the planet probes, the class raster and the solve mask - so a worker reads no file. It
 * is canonical: the same region of the same planet encodes to the same bytes, and keys the result
 * store. Classes absent from the box are left out of the spec, so a legend change to one class
 * changes only the specs of regions that hold it. Typical sizes: a spec is 2 bytes a box cell plus
 * a few kB; a result 16 bytes a box cell plus the statistics.
 */
#ifndef TB_JOBS_REGION_H
#define TB_JOBS_REGION_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"
#include "common/pool.h"
#include "jobs/job.h"
#include "jobs/uplift/uplift.h"

/* A region job's inputs. The arrays are box-sized and borrowed. */
typedef struct {
    int region_id;
    tb_frame_t box;                /* on the geology lattice */
    int steps;                     /* steps to run (manifest solve.steps or --steps) */
    const tb_manifest_t *manifest; /* finished; its legend is the planet's */
    const tb_uplift_probes_t *probes;
    const uint8_t *classes;    /* legend class per box cell */
    const uint8_t *solve_mask; /* 1 = this region's land, 0 = held at sea level */
    bool no_incision;          /* test-only negative control: stream-power incision off */
} tb_region_spec_t;

/* A decoded spec, owning its arrays. Its manifest's legend holds only the classes present in the
 * box, and `classes` indexes that reduced legend. */
typedef struct {
    tb_region_spec_t spec;
    tb_manifest_t manifest;
    tb_uplift_probes_t probes;
    uint8_t *classes;
    uint8_t *solve_mask;
} tb_region_spec_owned_t;

/* A river mouth of the region: the lattice cell (held at sea level) a set of basins drains into,
 * and the volume the solve eroded from them: uplift volume minus the height gained, summed over the
 * basins' cells (docs/coast.md, "River supply"). */
typedef struct {
    int64_t x, y;     /* lattice cell */
    double eroded_m3; /* >= 0; exact sums of whole litres, so any decomposition gives the same */
} tb_region_mouth_t;

/* Everything a region job returns. Arrays are box-sized and owned. */
typedef struct {
    int region_id;
    tb_frame_t box;
    int steps;
    float *height_m;    /* solved heights; 0 on cells held at sea level */
    float *area_m2;     /* drainage area of the last step */
    int32_t *basin;     /* lattice index (y * lattice_w + x) of each cell's outlet, modulo
                           2^31 - 1; -1 if held */
    float *uplift_m_yr; /* the uplift field the solve used */
    void *stats;        /* encoded jobs/stats histograms of the region's own land */
    size_t stats_bytes;
    tb_region_mouth_t *mouths; /* sorted by lattice y then x; NULL when there are none */
    size_t n_mouths;
    double solve_s;     /* seconds in the solve, for meta.json (not part of any hash) */
    uint64_t spec_xxh3; /* XXH3-64 of the spec bytes this result answers (set by the job kind;
                           the coordinator compares it with its own, docs/distribution.md) */
} tb_region_result_t;

/* Encodes a spec canonically into a new buffer the caller frees. */
int tb_region_spec_encode(const tb_region_spec_t *spec, void **out, size_t *bytes, tb_err_t *err);

/* Fills row j (0 .. box.h - 1) of the box: its legend classes and its solve mask, box.w each. */
typedef void (*tb_region_rows_fn)(void *user, int64_t j, uint8_t *classes, uint8_t *solve_mask);
/* tb_region_spec_encode with the box's cells read through `rows` (spec->classes and solve_mask are
 * not read), the same bytes; the box is read twice (the classes present, then the cells), and
 * nothing box-sized is held but the spec itself. */
int tb_region_spec_encode_rows(const tb_region_spec_t *spec, tb_region_rows_fn rows, void *user,
                               void **out, size_t *bytes, tb_err_t *err);

/* Decodes spec bytes (untrusted) into *out; free with tb_region_spec_free. */
int tb_region_spec_decode(const void *data, size_t bytes, tb_region_spec_owned_t *out,
                          tb_err_t *err);
void tb_region_spec_free(tb_region_spec_owned_t *s);

/* What a worker would refuse before it solves anything, found on the coordinator: encodes a region
 * spec of two cells (a land and an ocean class) on a planet planet_h cells tall with this manifest
 * and these probes, decodes it as a worker does and builds its uplift, the solve's first step,
 * which checks the manifest, the frame and the probes against the manifest the worker decoded.
 * `terrain plan` and the bake's plan phase call it, so a planet every region of which a worker
 * would refuse is refused before anything is dispatched (the 100 km demo's rock wavelength once
 * lost its last bit in the spec's JSON: issue 22). 0, or -1 with *err. */
int tb_region_spec_selfcheck(const tb_manifest_t *m, const tb_uplift_probes_t *p, int64_t planet_h,
                             tb_err_t *err);

/* Runs a region in-process on `pool` (NULL: one thread). progress may be NULL; returning true from
 * it cancels (TB_E_INTERRUPTED). Fills *out; free with tb_region_result_free. */
int tb_region_solve(const tb_region_spec_t *spec, tb_pool_t *pool,
                    bool (*progress)(void *user, double fraction, const char *note), void *user,
                    tb_region_result_t *out, tb_err_t *err);

/* Encodes and decodes results (decode checks the sizes against the header; untrusted bytes). */
int tb_region_result_encode(const tb_region_result_t *r, void **out, size_t *bytes, tb_err_t *err);
int tb_region_result_decode(const void *data, size_t bytes, tb_region_result_t *out, tb_err_t *err);
void tb_region_result_free(tb_region_result_t *r);

/* A result read in place, nothing copied (a 2.7 GB result read through a mapping): the header, and
 * where the planes (cells x 4 bytes each, little-endian; not aligned for direct float reads: copy
 * from them), the statistics and the river mouths (24 bytes each) lie in the bytes. Checks what
 * tb_region_result_decode checks. */
typedef struct {
    tb_frame_t box;
    int steps;
    uint64_t spec_xxh3;
    size_t cells;
    const unsigned char *height_m, *area_m2, *basin, *uplift_m_yr;
    const unsigned char *stats;
    size_t stats_bytes;
    const unsigned char *mouths;
    size_t n_mouths;
} tb_region_result_view_t;

int tb_region_result_view(const void *data, size_t bytes, tb_region_result_view_t *v,
                          tb_err_t *err);
/* River mouth k of a view. */
void tb_region_view_mouth(const tb_region_result_view_t *v, size_t k, tb_region_mouth_t *out);

/* The most bytes the result of a spec of spec_bytes can take (read from the spec's layout, no
 * decoding); 0 for bytes that are not a region spec. */
size_t tb_region_result_bound(const void *spec, size_t spec_bytes);

/* The job kind "region" (jobs/job.h). */
extern const tb_job_kind_t tb_job_kind_region;

#endif
