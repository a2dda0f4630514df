/* Planet inputs of the tile specs; see planet_inputs.h. */
#include "jobs/detail/planet_inputs.h"

int tb_tile_classes_from_legend(const tb_legend_t *legend, tb_tile_class_t out[TB_TILE_MAX_CLASSES])
{
    int n = legend->n_classes < TB_TILE_MAX_CLASSES ? legend->n_classes : TB_TILE_MAX_CLASSES;
    for (int c = 0; c < n; c++) {
        out[c].ocean = legend->classes[c].kind == TB_CLASS_OCEAN;
        out[c].relief_mult = 1.0;
    }
    return n;
}

int tb_tile_rock_k(const tb_manifest_t *m, const tb_uplift_probes_t *p, const tb_frame_t *geo,
                   float *out, tb_err_t *err)
{
    if (tb_uplift_probes_check(m, p, err) != 0)
        return tb_err_prefix(err, "tile rock");
    for (int64_t j = 0; j < geo->h; j++)
        for (int64_t i = 0; i < geo->w; i++) {
            double v =
                tb_uplift_rock_value(m, tb_frame_world_x_m(geo, i), tb_frame_world_y_m(geo, j));
            out[tb_idx(geo->w, i, j)] = (float)tb_uplift_rock_mult(m, tb_uplift_rank(p->rock_q, v));
        }
    return 0;
}
