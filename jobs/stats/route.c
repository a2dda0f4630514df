/* Drainage area of a finished heightmap; see route.h. One pass of the solve's routing, no steps. */
#include "jobs/stats/route.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/geology/accumulation.h"
#include "jobs/geology/receivers.h"
#include "jobs/geology/sinks.h"
#include "jobs/geology/spl.h"
#include "jobs/geology/topology.h"

/* Every workspace of one routing, freed together. */
typedef struct {
    uint8_t *land, *node, *dir;
    float *h;
    int32_t *pits, *coast;
    tb_stack_t stack;
    tb_sinks_t *sinks;
    tb_accum_t *accum;
} s_ws_t;

static void s_ws_free(s_ws_t *w)
{
    free(w->land);
    free(w->node);
    free(w->dir);
    free(w->h);
    free(w->pits);
    free(w->coast);
    free(w->stack.order);
    free(w->stack.tree_start);
    free(w->stack.scratch);
    tb_sinks_destroy(&w->sinks);
    tb_accum_destroy(&w->accum);
}

int tb_stats_route_area_border(const tb_frame_t *box, const float *height_m, double mfd_exponent,
                               tb_route_border_t border, float *area_m2, tb_route_info_t *info,
                               tb_err_t *err)
{
    if (border != TB_ROUTE_BORDER_OPEN)
        return tb_stats_route_area(box, height_m, mfd_exponent, area_m2, info, err);
    if (!tb_frame_valid(box) || !height_m || !area_m2)
        return tb_err_set(err, TB_E_INVALID, "route: needs a valid box, heights and an area grid");
    /* The open border: the map is routed inside a box one cell larger on every side that has a
     * ring (all four for a map that does not wrap, the two Y sides for one that does), so the
     * map's own edge cells are routed land standing at their own heights, and only the added ring
     * is held at 0 m. The geology's kernels need their fixed cells at 0 m (the MFD release count
     * treats a fixed neighbour as lower), which is why the edge is not simply held at its height.
     */
    bool wraps = tb_frame_wraps(box);
    int64_t pw = wraps ? box->w : box->w + 2, ph = box->h + 2, dx = wraps ? 0 : 1;
    tb_frame_t pad;
    if (tb_frame_make(&pad, wraps ? pw : pw + 1, ph, box->cell_m, 0, 0, pw, ph, err) != 0)
        return tb_err_prefix(err, "route (open border)");
    size_t pn = (size_t)pw * (size_t)ph;
    float *ph_m = tb_calloc(pn, sizeof(float), "route padded heights", err);
    float *pa = ph_m ? tb_malloc(pn * sizeof(float), "route padded area", err) : NULL;
    if (!pa) {
        free(ph_m);
        return -1;
    }
    for (int64_t j = 0; j < box->h; j++)
        memcpy(ph_m + (size_t)(j + 1) * (size_t)pw + (size_t)dx,
               height_m + (size_t)j * (size_t)box->w, (size_t)box->w * sizeof(float));
    int rc = tb_stats_route_area(&pad, ph_m, mfd_exponent, pa, info, err);
    if (rc == 0)
        for (int64_t j = 0; j < box->h; j++)
            memcpy(area_m2 + (size_t)j * (size_t)box->w,
                   pa + (size_t)(j + 1) * (size_t)pw + (size_t)dx, (size_t)box->w * sizeof(float));
    free(ph_m);
    free(pa);
    return rc;
}

int tb_stats_route_area(const tb_frame_t *box, const float *height_m, double mfd_exponent,
                        float *area_m2, tb_route_info_t *info, tb_err_t *err)
{
    if (info)
        memset(info, 0, sizeof *info);
    if (!tb_frame_valid(box) || !height_m || !area_m2)
        return tb_err_set(err, TB_E_INVALID, "route: needs a valid box, heights and an area grid");
    if (!(mfd_exponent >= 0 && mfd_exponent <= 100))
        return tb_err_set(err, TB_E_INVALID, "route: MFD exponent %g, expected 0 (D8) .. 100",
                          mfd_exponent);
    tb_topo_t t;
    if (tb_topo_init(&t, box, err) != 0)
        return tb_err_prefix(err, "route");
    const size_t n = t.n;
    for (size_t c = 0; c < n; c++)
        if (!isfinite(height_m[c]))
            return tb_err_set(err, TB_E_INVALID, "route: height at cell %zu is %g, expected finite",
                              c, (double)height_m[c]);
    s_ws_t w;
    memset(&w, 0, sizeof w);
    int rc = -1;
    w.land = tb_malloc(n, "route land mask", err);
    w.node = w.land ? tb_malloc(n, "route nodes", err) : NULL;
    w.dir = w.node ? tb_malloc(n, "route receivers", err) : NULL;
    w.h = w.dir ? tb_malloc(n * sizeof(float), "route filled heights", err) : NULL;
    w.pits = w.h ? tb_malloc(n * sizeof(int32_t), "route pits", err) : NULL;
    w.coast = w.pits ? tb_malloc(n * sizeof(int32_t), "route outlets", err) : NULL;
    w.sinks = w.coast ? tb_sinks_new(n, err) : NULL;
    w.accum = w.sinks ? tb_accum_new(n, t.w, err) : NULL;
    if (!w.accum)
        goto done;
    for (size_t c = 0; c < n; c++)
        w.land[c] = height_m[c] > 0.0f;
    size_t solved = tb_topo_classify(&t, w.land, w.node);
    /* The geology's convention: every fixed cell (sea, ring) stands at 0 m. */
    for (size_t c = 0; c < n; c++)
        w.h[c] = (w.node[c] & TB_NODE_SOLVED) ? height_m[c] : 0.0f;
    const tb_router_jitter_t jit = {0, 0.0};
    size_t npits = tb_receivers_d8(&t, w.node, w.h, &jit, w.dir, w.pits);
    int64_t flooded = 0;
    if (npits > 0) {
        flooded =
            tb_sinks_fill_priority_flood(w.sinks, &t, w.node, w.h, w.dir, w.pits, npits, &jit, err);
        if (flooded < 0) {
            tb_err_prefix(err, "route: sink resolution");
            goto done;
        }
    }
    size_t ncoast = tb_accum_coast(&t, w.node, w.coast);
    memset(area_m2, 0, n * sizeof(float));
    if (mfd_exponent > 0) {
        tb_accum_prepare(w.accum, &t, w.node);
        size_t stuck = tb_accum_mfd_kahn(w.accum, &t, w.node, w.h, mfd_exponent, w.coast, ncoast,
                                         area_m2, NULL);
        if (stuck == SIZE_MAX) {
            tb_err_set(err, TB_E_NOMEM, "route: out of memory for the drainage-area walk");
            goto done;
        }
        if (stuck > 0) {
            tb_err_set(err, TB_E_INTERNAL,
                       "route: %zu cells have no lower neighbour after the "
                       "sink resolution",
                       stuck);
            goto done;
        }
    } else {
        w.stack.order = tb_malloc(n * sizeof(int32_t), "route stack", err);
        w.stack.tree_start =
            w.stack.order ? tb_malloc((n + 1) * sizeof(int32_t), "route trees", err) : NULL;
        w.stack.scratch =
            w.stack.tree_start ? tb_malloc(n * sizeof(int32_t), "route walk", err) : NULL;
        if (!w.stack.scratch)
            goto done;
        size_t listed = tb_spl_build_stack(&t, w.node, w.dir, &w.stack);
        if (listed != solved) {
            tb_err_set(err, TB_E_INTERNAL, "route: %zu of %zu land cells do not drain to the sea",
                       solved - listed, solved);
            goto done;
        }
        tb_accum_d8_stack(&t, w.node, w.dir, &w.stack, w.coast, ncoast, area_m2);
    }
    /* Outlets received area; the statistics never read them, and a map of the land should not
     * show it. */
    for (size_t c = 0; c < n; c++)
        if (!(w.node[c] & TB_NODE_SOLVED))
            area_m2[c] = 0.0f;
    if (info) {
        info->land_cells = solved;
        info->pits = npits;
        info->flooded_cells = flooded;
    }
    rc = 0;
done:
    s_ws_free(&w);
    return rc;
}
