/* The box kernel of the coastal pass, over exact integers (docs/coast.md, "Two kernels, one
 * arithmetic"). The predecessor learned that the sediment needs a symmetric kernel and the carried
 * values an edge-renormalised one; both are this one window sum: the carry divides a sum of values
 * by a sum of weights taken with the same window (so rows beyond the Y edge drop out of both), the
 * drift redistributes mass with it symmetrically (sediment.c). Typical sizes: a planet of up to
 * 76 M cells, radii of 10 to 100 cells; memory (2r + 2) rows of workspace. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/methods.h"

int64_t tb_coast_radius_cells(double metres, double cell_m)
{
    int64_t r = (int64_t)(metres / cell_m + 0.5);
    return r < 1 ? 1 : r;
}

/* Columns per block of the zero skipping: a block of a row whose inputs within the radius are all
 * zero has a zero row sum, and a block whose column window holds only zero row sums has a zero
 * output, so the far sea, where a coastal field is zero, costs one read of its input. */
#define S_BLOCK 64

/* Sum of row `src` over the window [x - r, x + r] of every column x in [x0, x1), X wrapping, into
 * dst (2r + 1 <= w). The arithmetic is unsigned (wrapping, so well defined): a caller whose true
 * sums fit in int64 reads them exactly, whatever the intermediate values did. */
static void s_row_sums(const int64_t *src, int64_t w, int64_t r, int64_t x0, int64_t x1,
                       int64_t *dst)
{
    uint64_t s = 0;
    for (int64_t k = x0 - r; k <= x0 + r; k++)
        s += (uint64_t)src[k < 0 ? k + w : k >= w ? k - w : k];
    /* the interior, where neither end of the window wraps, without the wrap tests */
    int64_t a = x0 > r ? x0 : r, b = x1 < w - r - 1 ? x1 : w - r - 1;
    int64_t x = x0;
    for (; x < x1 && x < a; x++) {
        dst[x] = (int64_t)s;
        int64_t in = x + r + 1, out = x - r;
        s += (uint64_t)src[in >= w ? in - w : in] - (uint64_t)src[out < 0 ? out + w : out];
    }
    for (; x < b; x++) {
        dst[x] = (int64_t)s;
        s += (uint64_t)src[x + r + 1] - (uint64_t)src[x - r];
    }
    for (; x < x1; x++) {
        dst[x] = (int64_t)s;
        int64_t in = x + r + 1, out = x - r;
        s += (uint64_t)src[in >= w ? in - w : in] - (uint64_t)src[out < 0 ? out + w : out];
    }
}

typedef struct {
    int64_t w, r, nb, reach_b; /* blocks; blocks either side a row sum's window can touch */
} s_rows_t;

/* Reads input row `src`: flags in_nz[b] when its block b holds a non-zero value, and computes the
 * row sums of the blocks within reach of one into dst, flagging them in rs_nz (the other blocks'
 * row sums are exactly zero and are not written). */
static void s_row_pass(const s_rows_t *c, const int64_t *src, int64_t *dst, uint8_t *in_nz,
                       uint8_t *rs_nz)
{
    int64_t w = c->w, nb = c->nb;
    bool any = false;
    for (int64_t b = 0; b < nb; b++) {
        int64_t x1 = (b + 1) * S_BLOCK < w ? (b + 1) * S_BLOCK : w;
        uint64_t o = 0;
        for (int64_t x = b * S_BLOCK; x < x1; x++)
            o |= (uint64_t)src[x];
        in_nz[b] = o != 0;
        any |= o != 0;
        rs_nz[b] = 0;
    }
    if (!any)
        return;
    if (2 * c->reach_b + 1 >= nb) {
        memset(rs_nz, 1, (size_t)nb);
    } else {
        for (int64_t b = 0; b < nb; b++) {
            if (!in_nz[b])
                continue;
            for (int64_t k = b - c->reach_b; k <= b + c->reach_b; k++)
                rs_nz[k < 0 ? k + nb : k >= nb ? k - nb : k] = 1;
        }
    }
    for (int64_t b = 0; b < nb;) {
        if (!rs_nz[b]) {
            b++;
            continue;
        }
        int64_t e = b;
        while (e < nb && rs_nz[e])
            e++;
        s_row_sums(src, w, c->r, b * S_BLOCK, e * S_BLOCK < w ? e * S_BLOCK : w, dst);
        b = e;
    }
}

/* Box sum by separable running sums (summed-area tables by rows then columns), in place: row j of
 * the result is written only after the row pass of row j + r has read its input, and a ring of
 * 2r + 2 row sums holds the rows the column window still needs. Exact in int64, so the result does
 * not depend on where the running sums start: a rolled input gives the rolled output to the bit.
 * Blocks of S_BLOCK columns whose row sums are zero are skipped in the row and the column passes
 * (adding a zero changes no bit), and an output block whose column window is all zero is written
 * only when its input was not already zero: the same bits as summing everything (tests/test_coast.c
 * holds it to a direct sum). Deterministic; single-threaded. */
int tb_coast_boxsum_i64(int64_t *v, int64_t w, int64_t h, int64_t r, tb_err_t *err)
{
    if (2 * r + 1 > w)
        return tb_err_set(err, TB_E_INVALID,
                          "coast: a box of radius %lld cells is wider than the "
                          "planet's %lld columns",
                          (long long)r, (long long)w);
    int64_t ring_n = 2 * r + 2, nb = (w + S_BLOCK - 1) / S_BLOCK;
    /* the last block may be narrow: one block more either side covers the radius */
    s_rows_t c = {w, r, nb, (r + S_BLOCK - 1) / S_BLOCK + 1};
    int64_t *ring = tb_malloc((size_t)ring_n * (size_t)w * sizeof *ring, "coast box ring", err);
    int64_t *col = tb_calloc((size_t)w, sizeof *col, "coast box columns", err);
    uint8_t *flags = tb_calloc((size_t)(ring_n + 1) * (size_t)nb, 1, "coast box flags", err);
    int64_t *count = tb_calloc((size_t)nb, sizeof *count, "coast box counts", err);
    if (!ring || !col || !flags || !count) {
        free(ring);
        free(col);
        free(flags);
        free(count);
        return -1;
    }
    /* per ring slot, which row sums were computed; and the scratch of a row's non-zero blocks */
    uint8_t *rs_nz = flags, *in_nz = flags + (size_t)ring_n * (size_t)nb;
#define S_SLOT(a, k) ((a) + (size_t)((k) % ring_n) * (size_t)nb)
#define S_RING(k) (ring + (size_t)((k) % ring_n) * (size_t)w)
    /* the column window of row 0 holds rows 0 .. r; count[b]: row sums of the window computed */
    for (int64_t k = 0; k <= r && k < h; k++) {
        int64_t *rs = S_RING(k);
        uint8_t *rf = S_SLOT(rs_nz, k);
        s_row_pass(&c, v + (size_t)k * (size_t)w, rs, in_nz, rf);
        for (int64_t b = 0; b < nb; b++) {
            if (!rf[b])
                continue;
            count[b]++;
            int64_t x1 = (b + 1) * S_BLOCK < w ? (b + 1) * S_BLOCK : w;
            for (int64_t x = b * S_BLOCK; x < x1; x++)
                col[x] = (int64_t)((uint64_t)col[x] + (uint64_t)rs[x]);
        }
    }
    for (int64_t j = 0; j < h; j++) {
        int64_t *out = v + (size_t)j * (size_t)w;
        int64_t in = j + r + 1, gone = j - r;
        const int64_t *rs_in = in < h ? S_RING(in) : NULL;
        const int64_t *rs_gone = gone >= 0 ? S_RING(gone) : NULL;
        const uint8_t *in_f = NULL, *gone_f = NULL;
        if (rs_in) {
            /* row j's input slot is not row in's: ring_n > 2r + 1 rows apart */
            s_row_pass(&c, v + (size_t)in * (size_t)w, S_RING(in), in_nz, S_SLOT(rs_nz, in));
            in_f = S_SLOT(rs_nz, in);
        }
        if (rs_gone)
            gone_f = S_SLOT(rs_nz, gone);
        for (int64_t b = 0; b < nb; b++) {
            int64_t x0 = b * S_BLOCK, x1 = (b + 1) * S_BLOCK < w ? (b + 1) * S_BLOCK : w;
            bool add = in_f && in_f[b], sub = gone_f && gone_f[b];
            /* with no row sum in the window the column sums are exactly zero, and so was this
             * block's input (its own row sum is in the window): the zero output is in place */
            if (count[b] > 0)
                memcpy(out + x0, col + x0, (size_t)(x1 - x0) * sizeof *col);
            if (add && sub) {
                for (int64_t x = x0; x < x1; x++)
                    col[x] =
                        (int64_t)((uint64_t)col[x] + (uint64_t)rs_in[x] - (uint64_t)rs_gone[x]);
            } else if (add) {
                for (int64_t x = x0; x < x1; x++)
                    col[x] = (int64_t)((uint64_t)col[x] + (uint64_t)rs_in[x]);
            } else if (sub) {
                for (int64_t x = x0; x < x1; x++)
                    col[x] = (int64_t)((uint64_t)col[x] - (uint64_t)rs_gone[x]);
            }
            count[b] += (int64_t)add - (int64_t)sub;
        }
    }
#undef S_SLOT
#undef S_RING
    free(ring);
    free(col);
    free(flags);
    free(count);
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
