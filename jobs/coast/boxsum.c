/* The box kernel of the coastal pass, over exact integers (docs/coast.md, "Two kernels, one
 * arithmetic"). The predecessor learned that the sediment needs a symmetric kernel and the carried
 * values an edge-renormalised one; both are this one window sum: the carry divides a sum of values
 * by a sum of weights taken with the same window (so rows beyond the Y edge drop out of both), the
 * drift redistributes mass with it symmetrically (sediment.c). Typical sizes: a planet of up to
 * 76 M cells, radii of 10 to 100 cells; memory (2r + 2) rows of workspace. */
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/methods.h"

int64_t tb_coast_radius_cells(double metres, double cell_m)
{
    int64_t r = (int64_t)(metres / cell_m + 0.5);
    return r < 1 ? 1 : r;
}

/* Sum of row `src` over the window [x - r, x + r] of every column x, X wrapping, into dst. The
 * arithmetic is unsigned (wrapping, so well defined): a caller whose true sums fit in int64 reads
 * them exactly, whatever the intermediate values did. */
static void s_row_sums(const int64_t *src, int64_t w, int64_t r, int64_t *dst)
{
    uint64_t s = 0;
    for (int64_t k = -r; k <= r; k++)
        s += (uint64_t)src[k < 0 ? k + w : k % w];
    for (int64_t x = 0; x < w; x++) {
        dst[x] = (int64_t)s;
        int64_t in = x + r + 1, out = x - r;
        s += (uint64_t)src[in >= w ? in - w : in] - (uint64_t)src[out < 0 ? out + w : out];
    }
}

/* Box sum by separable running sums (summed-area tables by rows then columns), in place: row j of
 * the result is written only after the row pass of row j + r has read its input, and a ring of
 * 2r + 2 row sums holds the rows the column window still needs. Exact in int64, so the result does
 * not depend on where the running sums start: a rolled input gives the rolled output to the bit.
 * Deterministic; single-threaded. */
int tb_coast_boxsum_i64(int64_t *v, int64_t w, int64_t h, int64_t r, tb_err_t *err)
{
    if (2 * r + 1 > w)
        return tb_err_set(err, TB_E_INVALID,
                          "coast: a box of radius %lld cells is wider than the "
                          "planet's %lld columns",
                          (long long)r, (long long)w);
    int64_t ring_n = 2 * r + 2;
    int64_t *ring = tb_malloc((size_t)ring_n * (size_t)w * sizeof *ring, "coast box ring", err);
    int64_t *col = tb_calloc((size_t)w, sizeof *col, "coast box columns", err);
    if (!ring || !col) {
        free(ring);
        free(col);
        return -1;
    }
    /* the column window of row 0 holds rows 0 .. r */
    for (int64_t k = 0; k <= r && k < h; k++) {
        int64_t *rs = ring + (size_t)(k % ring_n) * (size_t)w;
        s_row_sums(v + (size_t)k * (size_t)w, w, r, rs);
        for (int64_t x = 0; x < w; x++)
            col[x] = (int64_t)((uint64_t)col[x] + (uint64_t)rs[x]);
    }
    for (int64_t j = 0; j < h; j++) {
        int64_t *out = v + (size_t)j * (size_t)w;
        memcpy(out, col, (size_t)w * sizeof *col);
        int64_t in = j + r + 1, gone = j - r;
        if (in < h) {
            int64_t *rs = ring + (size_t)(in % ring_n) * (size_t)w;
            s_row_sums(v + (size_t)in * (size_t)w, w, r, rs);
            for (int64_t x = 0; x < w; x++)
                col[x] = (int64_t)((uint64_t)col[x] + (uint64_t)rs[x]);
        }
        if (gone >= 0) {
            const int64_t *rs = ring + (size_t)(gone % ring_n) * (size_t)w;
            for (int64_t x = 0; x < w; x++)
                col[x] = (int64_t)((uint64_t)col[x] - (uint64_t)rs[x]);
        }
    }
    free(ring);
    free(col);
    return 0;
}

/* The tent of radius r: the box of radius ceil(r / 2) applied twice, a symmetric kernel whose
 * weights fall linearly from the centre, so a strong source does not print the square outline of a
 * box into what it spreads. Exact, in place, like the box. */
int tb_coast_tentsum_i64(int64_t *v, int64_t w, int64_t h, int64_t r, tb_err_t *err)
{
    int64_t half = (r + 1) / 2;
    if (tb_coast_boxsum_i64(v, w, h, half, err) != 0)
        return -1;
    return tb_coast_boxsum_i64(v, w, h, half, err);
}
