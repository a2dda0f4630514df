/* Node classification and neighbour offsets; see topology.h. */
#include "jobs/geology/topology.h"

#include <stdint.h>
#include <string.h>

#include "common/simd.h"

int tb_topo_init(tb_topo_t *t, const tb_frame_t *box, tb_err_t *err)
{
    memset(t, 0, sizeof *t);
    if (!tb_frame_valid(box))
        return tb_err_set(err, TB_E_INTERNAL, "geology: the box has no place on the planet");
    if (box->w < 3 || box->h < 3)
        return tb_err_set(err, TB_E_INVALID,
                          "geology: box %lld x %lld cells is too small; a box needs 3 x 3 at least "
                          "(its ring is held at sea level)",
                          (long long)box->w, (long long)box->h);
    if ((uint64_t)box->w * (uint64_t)box->h >= (uint64_t)INT32_MAX)
        return tb_err_set(
            err, TB_E_INVALID,
            "geology: box %lld x %lld cells is over 2^31 cells; cut the region smaller",
            (long long)box->w, (long long)box->h);
    t->w = box->w;
    t->h = box->h;
    t->n = (size_t)box->w * (size_t)box->h;
    t->wraps = tb_frame_wraps(box);
    t->cell_m = box->cell_m;
    t->cell_area_m2 = box->cell_m * box->cell_m;
    t->box = box;
    for (int k = 0; k < 8; k++) {
        ptrdiff_t base = (ptrdiff_t)tb_nb_dy[k] * (ptrdiff_t)t->w;
        t->noff[0][k] = base + tb_nb_dx[k];
        t->noff[1][k] = base + (tb_nb_dx[k] < 0 ? (ptrdiff_t)t->w - 1 : tb_nb_dx[k]);
        t->noff[2][k] = base + (tb_nb_dx[k] > 0 ? 1 - (ptrdiff_t)t->w : tb_nb_dx[k]);
        t->len_m[k] = tb_nb_dist[k] * t->cell_m;
    }
    t->avx2 = tb_simd_avx2();
    return 0;
}

size_t tb_topo_classify(const tb_topo_t *t, const uint8_t *solve_mask, uint8_t *node)
{
    size_t solved = 0;
    for (int64_t j = 0; j < t->h; j++)
        for (int64_t i = 0; i < t->w; i++) {
            size_t c = tb_idx(t->w, i, j);
            uint8_t v = TB_NODE_FIXED;
            bool ring = j == 0 || j == t->h - 1 || (!t->wraps && (i == 0 || i == t->w - 1));
            if (!ring && solve_mask[c] == 1) {
                v = TB_NODE_SOLVED;
                solved++;
            }
            if (t->wraps && i == 0)
                v |= TB_NODE_WEST;
            if (t->wraps && i == t->w - 1)
                v |= TB_NODE_EAST;
            node[c] = v;
        }
    return solved;
}

int64_t tb_topo_nb_checked(const tb_topo_t *t, int64_t i, int64_t j, int k)
{
    int64_t ni = i + tb_nb_dx[k], nj = j + tb_nb_dy[k];
    if (nj < 0 || nj >= t->h)
        return -1;
    if (ni < 0 || ni >= t->w) {
        if (!t->wraps)
            return -1;
        ni = tb_wrap(ni, t->w);
    }
    return (int64_t)tb_idx(t->w, ni, nj);
}

/* The solved cells of row r. */
static size_t s_row_solved(const tb_topo_t *t, const uint8_t *node, int64_t r)
{
    size_t n = 0;
    for (int64_t i = 0; i < t->w; i++)
        n += node[(size_t)r * (size_t)t->w + (size_t)i] & TB_NODE_SOLVED;
    return n;
}

int tb_topo_bands(const tb_topo_t *t, const uint8_t *node, int want, bool by_rows, tb_band_t *out)
{
    int64_t rows = t->h - 2;
    int64_t most = rows / TB_BAND_MIN_ROWS;
    int nb = want < 1 ? 1 : want;
    if (nb > most)
        nb = most < 1 ? 1 : (int)most;
    double total = 0;
    for (int64_t r = 1; r < t->h - 1; r++)
        total += by_rows ? 1.0 : (double)s_row_solved(t, node, r);
    /* Band b ends at the first row where the running weight reaches (b + 1) / nb of the total,
     * but no sooner than TB_BAND_MIN_ROWS rows after its start and no later than leaves the
     * bands after it their minimum; the last band takes what is left. */
    int64_t r = 1;
    double run = 0;
    for (int b = 0; b < nb; b++) {
        int64_t r0 = r, last = t->h - 1 - (int64_t)(nb - 1 - b) * TB_BAND_MIN_ROWS;
        double goal = b == nb - 1 ? total + 1 : total * (double)(b + 1) / nb;
        size_t in = 0;
        while (r < (b == nb - 1 ? t->h - 1 : last) && (r - r0 < TB_BAND_MIN_ROWS || run < goal)) {
            size_t row = s_row_solved(t, node, r);
            run += by_rows ? 1.0 : (double)row;
            in += row;
            r++;
        }
        out[b] = (tb_band_t){r0, r, in};
    }
    return nb;
}
