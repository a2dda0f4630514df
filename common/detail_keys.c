/* The detail passes' keys, the margin they require and their checks across keys; see
 * detail_keys.h. */
#include "common/detail_keys.h"

#include <math.h>
#include <stddef.h>

int64_t tb_detail_required_margin(const tb_detail_params_t *p, const char **changed, double *value,
                                  double *measured_value)
{
    const char *first = NULL;
    double def_value = 0, got = 0;
    if (p->cell_m != TB_DETAIL_MEASURED_CELL_M) {
        first = "tiles.cell_m";
        got = p->cell_m;
        def_value = TB_DETAIL_MEASURED_CELL_M;
    }
#define S_CMP(group, key, kind, field, lo, hi, def, margin, doc)                                   \
    if (!first && (margin) && (double)p->field != (double)(def)) {                                 \
        first = "tiles." #group "." #key;                                                          \
        got = (double)p->field;                                                                    \
        def_value = (def);                                                                         \
    }
    TB_DETAIL_PASS_KEYS(S_CMP)
#undef S_CMP
    if (changed)
        *changed = first;
    if (value)
        *value = got;
    if (measured_value)
        *measured_value = def_value;
    if (!first)
        return TB_DETAIL_MEASURED_MARGIN_CELLS;
    return tb_detail_margin_bound_of(p->droplet_rounds, p->droplet_lifetime, p->droplet_carry_steps,
                                     p->droplet_brush_radius, p->droplet_settle_cells,
                                     p->thermal_iterations);
}

int tb_detail_keys_check(double size_km, double cell_m, int spawn_block, double scree_deg,
                         double rock_deg, const char *where, tb_err_t *err)
{
    where = where ? where : "manifest";
    double cells = size_km * 1000.0 / cell_m;
    double whole = nearbyint(cells);
    if (fabs(cells - whole) > 1e-6 * whole || whole < 1)
        return tb_err_set(
            err, TB_E_INVALID,
            "%s: tiles.size_km %g is %.6f cells of tiles.cell_m %g, not a whole number", where,
            size_km, cells, cell_m);
    if (spawn_block < 1 || (int64_t)whole % spawn_block != 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.droplets.spawn_block %d does not divide the tile's %.0f cells",
                          where, spawn_block, whole);
    if (scree_deg >= rock_deg)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.splat.scree_deg %g must be below tiles.splat.rock_deg %g",
                          where, scree_deg, rock_deg);
    return 0;
}
