/* The plan of a planet: what `terrain plan` prints and what every region job is built from.
 *
 * tb_plan_new reads a finished manifest and the rows of its RGB8 painting (nothing else: no files,
 * no clock) and runs the plan (docs/plan.md): classify the painting (classify.h), expand it to the
 * geology lattice (each painted pixel a square of whole cells), find the landmasses on the
 * cylinder and drop the small ones (landmasses.h), group them into regions by dilation
 * (regions.h), and measure what an author needs before committing to a bake: the seam
 * disagreement of the painting, the class table with divide and typical angles and clamp
 * warnings, and a floor on the bake time.
 *
 * It streams: the painting is read once, row by row, and the plan's two planet-sized rasters (the
 * classes, 1 byte a cell, and the landmass ids, 4 bytes a cell) are written into memory the
 * caller provides (common/raster.h: a mapped file in a bake's output directory, a malloc'd block
 * in a test), revisited a row at a time and released band by band, so that only a band of either
 * is ever needed in memory. The plan itself holds O(planet_w x band) plus O(provisional labels):
 * docs/plan.md, "The streamed plan", gives its passes and its memory in bytes.
 *
 * Typical sizes: the demo planet is 3125 x 1000 cells and plans in well under a second; the
 * predecessor's 100 km planet is 12500 x 6076 (76 M cells); the 300 km demo 37500 x 12000.
 * The plan is a pure function of (manifest, painting): threads and the band only change how fast
 * it is made and how much memory it takes.
 */
#ifndef TB_PLAN_PLAN_H
#define TB_PLAN_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"
#include "common/image.h"
#include "common/png_rows.h"
#include "common/raster.h"
#include "jobs/plan/classify.h"
#include "jobs/plan/landmasses.h"
#include "jobs/plan/regions.h"
#include "jobs/uplift/uplift.h"

/* Solve cost per box cell and step used by the bake-time estimate, on one thread: `scripts/bench
 * solve` measured 63-65 ns per cell-step for the default physics on the 2048 x 2048 grid after its
 * warm-up (every cell land) and 70 ns per box cell-step on the demo planet's largest region (96 per
 * land cell, a young landscape). The estimate divides by the cores as if the solve scaled perfectly
 * (two threads measured 1.6-1.9x), and steep classes pay more hillslope sub-steps, so it is a
 * floor. */
#define TB_PLAN_NS_PER_CELL_STEP 65.0

typedef struct tb_plan_t tb_plan_t;

/* One land class of the class table. For slope exponent n the steady-state slope at a divide (one
 * cell of drainage area A = cell_m^2) is (U / (K k_mult A^m))^(1/n); the median over a class reads
 * at a third of that in tangent (docs/plan.md); above U_max = tan(talus)^n K k_mult A^m the
 * repose clamp, not erosion, shapes the ground (docs/plan.md: 0.280 mm/yr at 35 deg, K 5e-5, 8
 * m). */
typedef struct {
    int class_index;     /* into the legend */
    double massif_mm_yr; /* the class's uplift_mm_yr: the rate on its massifs */
    double floor_mm_yr;  /* the rate between massifs (equal to massif_mm_yr when uniform) */
    double k_mult;
    double divide_deg, floor_divide_deg;   /* divide angle at the massif and at the floor rate */
    double typical_deg, floor_typical_deg; /* atan(tan(divide) / 3) */
    double u_max_mm_yr;                    /* the clamp ceiling of this class */
    bool clamped;                          /* massif_mm_yr > u_max_mm_yr */
    bool floor_clamped;                    /* floor_mm_yr > u_max_mm_yr */
    int64_t cells;                         /* land cells of the class after the drop */
} tb_plan_class_row_t;

typedef struct {
    int64_t planet_w, planet_h;     /* geology lattice, cells */
    int64_t painting_w, painting_h; /* pixels */
    int64_t cells_per_pixel;        /* a painted pixel covers a square this many cells on a side */
    tb_classify_report_t classify;  /* unmatched pixels (dropped and filled), speckle */
    int64_t seam_rows;              /* planet rows where column 0 and W-1 disagree about land */
    double seam_percent;
    int64_t landmasses_found; /* before the drop */
    int64_t landmasses_kept;
    int64_t dropped, dropped_cells; /* landmasses under regions.min_landmass_km2 */
    double dropped_area_km2;
    int64_t land_cells;   /* after the drop */
    int64_t region_cells; /* sum of region box cells: what the solve pays for */
    int64_t largest_region_cells;
    int64_t margin_cells;     /* regions.ocean_margin_km in cells, rounded up */
    int64_t dilation_radius2; /* squared radius the land mask is dilated by */
    /* what the plan's memory grew with (docs/plan.md, "Memory, in bytes"); not in plan.json */
    int64_t provisional_labels; /* labels the landmasses' first pass opened */
    int64_t unmatched_recorded; /* unmatched pixels the fill held */
} tb_plan_summary_t;

/* Rows the plan works on at a time (its memory's unit, docs/plan.md). */
#define TB_PLAN_BAND_ROWS 256

/* Plans the planet of a finished manifest (tb_manifest_finish done) from the rows of its RGB8
 * painting, whose width must divide manifest->planet_w; the planet is planet_w x (painting h x
 * planet_w / painting w) cells. The painting is read once, every row in order.
 *
 * classes (u8, elem_bytes 1) and labels (i32, elem_bytes 4) are the rasters the plan writes, each
 * planet_w x planet_h: the class of every cell after the drop, and the landmass id of every cell
 * (0 for ocean and dropped land). The classes' contents on entry do not matter; the labels must
 * be zero (a new file, a calloc'd block): the plan writes only the cells of landmasses, so the
 * ocean, most of a planet, is never touched (nor paged in, nor written back). The plan reads back
 * rows it wrote and calls each raster's release hook for rows it is done with. The rasters must
 * outlive the plan (tb_plan_region_grids reads them). Either may be NULL: the plan then keeps that
 * raster on its own heap (small planets: tests and tools).
 *
 * threads >= 1 speeds the region dilation up and changes nothing else. Returns a new plan the
 * caller destroys, or NULL with *err set: TB_E_INVALID for a painting the legend cannot read (the
 * message names the painting, the share of unmatched pixels and the most common unmatched colours)
 * or a painting width that does not divide the planet, the painting's own error for a row it could
 * not read (TB_E_FORMAT for a broken PNG), TB_E_INTERNAL for a raster of the wrong size. */
tb_plan_t *tb_plan_new(const tb_manifest_t *manifest, const tb_row_source_t *painting,
                       const tb_raster_t *classes, const tb_raster_t *labels, int threads,
                       tb_err_t *err);

/* tb_plan_new working on bands of band_rows rows (>= 1) instead of TB_PLAN_BAND_ROWS: the same
 * plan, in less memory and more bands. Tests make many bands of a small planet with it. */
tb_plan_t *tb_plan_new_banded(const tb_manifest_t *manifest, const tb_row_source_t *painting,
                              const tb_raster_t *classes, const tb_raster_t *labels, int threads,
                              int64_t band_rows, tb_err_t *err);

/* tb_plan_new of a painting already in memory (RGB8), with both rasters on the plan's heap: for
 * small planets (tests, benchmarks, tools). */
tb_plan_t *tb_plan_new_image(const tb_manifest_t *manifest, const tb_image_t *painting, int threads,
                             tb_err_t *err);

/* Frees the plan and sets *self_p to NULL; accepts NULL. */
void tb_plan_destroy(tb_plan_t **self_p);

/* The manifest the plan was made from (a copy owned by the plan). */
const tb_manifest_t *tb_plan_manifest(const tb_plan_t *self);
const tb_plan_summary_t *tb_plan_summary(const tb_plan_t *self);

/* The planet-sized class raster (u8, legend class per cell, after the drop) and landmass raster
 * (i32, landmass id per cell, 0 for ocean), both over the whole planet frame: the caller's, or the
 * plan's own when tb_plan_new was given NULL. Rows read from them may be released again
 * (tb_raster_release) by whoever reads them. */
const tb_raster_t *tb_plan_class_raster(const tb_plan_t *self);
const tb_raster_t *tb_plan_label_raster(const tb_plan_t *self);

/* XXH3-64 of the whole class raster (row 0 first), taken as the plan wrote its last pass: what
 * meta.json records as class_raster_xxh3, without reading the raster again. */
uint64_t tb_plan_class_raster_xxh3(const tb_plan_t *self);

/* Regions in id order: index i holds region id i + 1. Owned by the plan. */
int tb_plan_region_count(const tb_plan_t *self);
const tb_plan_region_t *tb_plan_region(const tb_plan_t *self, int index);

/* Landmasses in id order (index i holds landmass id i + 1) and the region id each belongs to. */
int tb_plan_landmass_count(const tb_plan_t *self);
const tb_landmass_t *tb_plan_landmass(const tb_plan_t *self, int index);
int tb_plan_landmass_region(const tb_plan_t *self, int landmass_id);

/* The class table: one row per land class of the legend, in legend order. */
int tb_plan_class_count(const tb_plan_t *self);
const tb_plan_class_row_t *tb_plan_class_row(const tb_plan_t *self, int index);

/* The class-table row of legend class class_index under the manifest's solve constants (cells 0).
 */
void tb_plan_class_angles(const tb_manifest_t *manifest, int class_index, tb_plan_class_row_t *row);

/* Refuses (TB_E_INVALID) a plan whose painting has no ocean or no land: a bake needs both (its
 * regions are land with an ocean margin). The planner itself accepts either, for tests. */
int tb_plan_check_land_and_sea(const tb_plan_t *self, tb_err_t *err);

/* Refuses, before anything is dispatched, what a worker would refuse of every job of this plan: a
 * region spec made with the plan's manifest and `probes` (tb_uplift_probes_compute of it), decoded
 * as a worker decodes it and checked as the solve checks it first (tb_region_spec_selfcheck). The
 * bake's plan phase and `terrain plan` both call it. 0, or -1 with *err (TB_E_INVALID). */
int tb_plan_check_jobs(const tb_plan_t *self, const tb_uplift_probes_t *probes, tb_err_t *err);

/* The bake-time floor in seconds on `cores` cores: region box cells x solve.steps x
 * TB_PLAN_NS_PER_CELL_STEP / cores. A floor because steep classes pay more hillslope sub-steps. */
double tb_plan_estimate_floor_s(const tb_plan_t *self, int cores);

/* The two grids a region job is built from, over the region's box (region index = id - 1): classes
 * (TB_U8, legend class per cell) and solve_mask (TB_U8, 1 on this region's land, 0 on everything
 * held at sea level - ocean, and other regions' land that falls inside the box). Either output may
 * be NULL when not wanted; the caller owns and destroys the grids. The rows of the box are read
 * from the plan's rasters and released after. Returns 0, or -1 with *err set.
 */
/* Row j (0 .. box h - 1) of those grids, into classes and solve_mask (box w each; either may be
 * NULL), read from the plan's rasters, whose row is then released. region_index must be valid. */
void tb_plan_region_row(const tb_plan_t *self, int region_index, int64_t j, uint8_t *classes,
                        uint8_t *solve_mask);
int tb_plan_region_grids(const tb_plan_t *self, int region_index, tb_grid_t **classes,
                         tb_grid_t **solve_mask, tb_err_t *err);

/* The plan as JSON (plan.json, and later part of meta.json): the resolved manifest, the summary,
 * the class table, landmasses, regions and the estimate inputs. The caller frees the string; NULL
 * only when memory runs out. */
char *tb_plan_to_json(const tb_plan_t *self);

#endif
