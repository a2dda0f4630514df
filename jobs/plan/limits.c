/* The plan's regions against what a bake can run; see limits.h. */
#include "jobs/plan/limits.h"

#include <stdio.h>

/* Measured: the peak resident memory of a region job over its box cells (docs/solve.md,
 * "Memory"): the solve's workspaces, the spec and the result and their compressed copies. */
#define S_BYTES_A_BOX_CELL 110.0
#define S_PROCESS_BYTES 64e6

double tb_plan_region_peak_bytes(int64_t box_cells)
{
    return S_PROCESS_BYTES + S_BYTES_A_BOX_CELL * (double)box_cells;
}

/* "1,2,3" (the first few) into out. */
static void s_landmasses(const tb_plan_region_t *r, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < r->n_landmasses && i < 8 && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%d", i ? "," : "", r->landmass_ids[i]);
    if (r->n_landmasses > 8 && k < n)
        snprintf(out + k, n - k, " and %d more", r->n_landmasses - 8);
}

int tb_plan_check_limits(const tb_plan_t *plan, double job_memory_bytes, tb_err_t *err)
{
    for (int ri = 0; ri < tb_plan_region_count(plan); ri++) {
        const tb_plan_region_t *r = tb_plan_region(plan, ri);
        char lm[128];
        s_landmasses(r, lm, sizeof lm);
        if (r->box_cells >= TB_PLAN_MAX_BOX_CELLS)
            return tb_err_set(
                err, TB_E_INVALID,
                "region %d (landmass%s %s): its box of %lld x %lld = %lld cells "
                "reaches the solve's limit of 2^31 - 1 cells (its indices are 32-bit): "
                "paint its land as separate landmasses with more ocean between them "
                "than regions.ocean_margin_km",
                r->id, r->n_landmasses > 1 ? "es" : "", lm, (long long)r->box.w,
                (long long)r->box.h, (long long)r->box_cells);
        double need = tb_plan_region_peak_bytes(r->box_cells);
        if (job_memory_bytes > 0 && need > job_memory_bytes)
            return tb_err_set(err, TB_E_INVALID,
                              "region %d (landmass%s %s, a box of %lld x %lld = %lld cells) needs "
                              "about %.2f GB on its worker (%.0f bytes a box cell and the process) "
                              "and a job may take %.2f GB: give the workers more memory and say so "
                              "with --job-memory-gb, or paint its land as separate landmasses with "
                              "more ocean between them",
                              r->id, r->n_landmasses > 1 ? "es" : "", lm, (long long)r->box.w,
                              (long long)r->box.h, (long long)r->box_cells, need / 1e9,
                              S_BYTES_A_BOX_CELL, job_memory_bytes / 1e9);
    }
    return 0;
}
