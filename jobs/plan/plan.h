/* The plan of a planet: what `terrain plan` prints and what every region job is built from.
 *
 * tb_plan_new reads a finished manifest and its RGB8 painting (nothing else: no files, no clock)
 * and runs the plan (docs/plan.md): classify the painting (classify.h), expand it to the geology
 * lattice (each painted pixel a square of whole cells), find the landmasses on the cylinder and
 * drop the small ones (landmasses.h), group them into regions by dilation (regions.h), and measure
 * what an author needs before committing to a bake: the seam disagreement of the painting, the
 * class table with divide and typical angles and clamp warnings, and a floor on the bake time.
 *
 * Typical sizes: the demo planet is 3125 x 1000 cells and plans in well under a second; the
 * predecessor's 100 km planet is 12500 x 6076 (76 M cells). The plan keeps two planet-sized rasters
 * (classes, 1 byte a cell; landmass ids, 4 bytes a cell) so region jobs can be cut from it.
 * The plan is a pure function of (manifest, painting): threads only change how fast it is made.
 */
#ifndef TB_PLAN_PLAN_H
#define TB_PLAN_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"
#include "common/image.h"
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
} tb_plan_summary_t;

/* Plans the planet of a finished manifest (tb_manifest_finish done) and its RGB8 painting, whose
 * width must divide manifest->planet_w. threads >= 1 speeds the distance transform up and changes
 * nothing else. Returns a new plan the caller destroys, or NULL with *err set: TB_E_INVALID for a
 * painting the legend cannot read (the message names the painting, the share of unmatched pixels
 * and the most common unmatched colours) or a painting width that does not divide the planet. */
tb_plan_t *tb_plan_new(const tb_manifest_t *manifest, const tb_image_t *painting, int threads,
                       tb_err_t *err);

/* Frees the plan and sets *self_p to NULL; accepts NULL. */
void tb_plan_destroy(tb_plan_t **self_p);

/* The manifest the plan was made from (a copy owned by the plan). */
const tb_manifest_t *tb_plan_manifest(const tb_plan_t *self);
const tb_plan_summary_t *tb_plan_summary(const tb_plan_t *self);

/* The planet-sized class raster (TB_U8, legend class per cell, after the drop) and landmass raster
 * (TB_I32, landmass id per cell, 0 for ocean), both over the whole planet frame. Owned by the plan.
 */
const tb_grid_t *tb_plan_classes(const tb_plan_t *self);
const tb_grid_t *tb_plan_landmass_labels(const tb_plan_t *self);

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
 * be NULL when not wanted; the caller owns and destroys the grids. Returns 0, or -1 with *err set.
 */
int tb_plan_region_grids(const tb_plan_t *self, int region_index, tb_grid_t **classes,
                         tb_grid_t **solve_mask, tb_err_t *err);

/* The plan as JSON (plan.json, and later part of meta.json): the resolved manifest, the summary,
 * the class table, landmasses, regions and the estimate inputs. The caller frees the string; NULL
 * only when memory runs out. */
char *tb_plan_to_json(const tb_plan_t *self);

#endif
