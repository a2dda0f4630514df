/* What a bake can run, known before anything runs (issue 22): the plan's regions against the limits
 * of the solve and the memory one job may take on a worker. `terrain plan` and the bake's plan
 * phase both check them, so a region that no worker can hold, or whose box the solve cannot index,
 * is refused up front, naming the region, its landmasses, its box and the numbers - never after
 * hours of other regions' work.
 */
#ifndef TB_PLAN_LIMITS_H
#define TB_PLAN_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "jobs/plan/plan.h"

/* The solve indexes a box's cells with 32-bit integers (jobs/geology/topology.h): a region's box
 * must hold fewer than this many cells. */
#define TB_PLAN_MAX_BOX_CELLS ((int64_t)INT32_MAX)

/* The most memory a region job of box_cells box cells takes on its worker at its peak, bytes: the
 * measured bytes a box cell (docs/solve.md, "Memory") times the box, plus the process. */
double tb_plan_region_peak_bytes(int64_t box_cells);

/* Refuses (TB_E_INVALID) a plan with a region whose box reaches TB_PLAN_MAX_BOX_CELLS or whose job
 * needs more than job_memory_bytes (0: not checked), naming the region, its landmasses, its box and
 * both numbers, and what to do. 0 or -1. */
int tb_plan_check_limits(const tb_plan_t *plan, double job_memory_bytes, tb_err_t *err);

#endif
