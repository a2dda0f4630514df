/* The box kernel of the coastal pass, over exact integers (docs/coast.md, "Two kernels, one
 * arithmetic"). The predecessor learned that the sediment needs a symmetric kernel and the carried
 * values an edge-renormalised one; both are this window sum: the carry divides a sum of values by a
 * sum of weights taken with the same window (so rows beyond the Y edge drop out of both; it now
 * sums only its waterline cells, per column, in pass.c), the drift redistributes mass with it
 * symmetrically (sediment.c). Typical sizes: a planet of up to
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

typedef struct {
    void (*fn)(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread);
    void *ctx;
    int64_t h;
} s_rows_ctx_t;

static void s_rows_task(void *ctx, size_t task, int thread)
{
    const s_rows_ctx_t *c = ctx;
    int64_t y0 = (int64_t)task * TB_COAST_CHUNK_ROWS;
    int64_t y1 = y0 + TB_COAST_CHUNK_ROWS < c->h ? y0 + TB_COAST_CHUNK_ROWS : c->h;
    c->fn(c->ctx, y0, y1, task, thread);
}

size_t tb_coast_chunks(int64_t h)
{
    return (size_t)((h + TB_COAST_CHUNK_ROWS - 1) / TB_COAST_CHUNK_ROWS);
}

void tb_coast_par_rows(tb_pool_t *pool, int64_t h,
                       void (*fn)(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread),
                       void *ctx)
{
    s_rows_ctx_t c = {fn, ctx, h};
    tb_pool_run(pool, tb_coast_chunks(h), s_rows_task, &c);
}

typedef struct {
    uint8_t *p;
    size_t row_bytes;
} s_zero_t;

static void s_zero_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_zero_t *z = ctx;
    memset(z->p + (size_t)y0 * z->row_bytes, 0, (size_t)(y1 - y0) * z->row_bytes);
}

void tb_coast_par_zero(tb_pool_t *pool, void *p, size_t row_bytes, int64_t h)
{
    s_zero_t z = {p, row_bytes};
    tb_coast_par_rows(pool, h, s_zero_rows, &z);
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
    /* four at a time: the sum's chain is the same additions in the same order */
    for (; x + 4 <= b; x += 4) {
        const int64_t *in = src + x + r + 1, *out = src + x - r;
        uint64_t s1 = s + ((uint64_t)in[0] - (uint64_t)out[0]);
        uint64_t s2 = s1 + ((uint64_t)in[1] - (uint64_t)out[1]);
        uint64_t s3 = s2 + ((uint64_t)in[2] - (uint64_t)out[2]);
        dst[x] = (int64_t)s;
        dst[x + 1] = (int64_t)s1;
        dst[x + 2] = (int64_t)s2;
        dst[x + 3] = (int64_t)s3;
        s = s3 + ((uint64_t)in[3] - (uint64_t)out[3]);
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

/* The row tent of row `src` (the box of radius b twice, X wrapping) at every column x in [x0, x1)
 * into dst: T(x) = sum of k(d) src(x + d), k(d) = max(0, 2b + 1 - |d|) counted over every way d
 * wraps. By the row's second prefix sum: with P1(y) the sum of src up to column y and P2(y) the sum
 * of P1 up to y (both from any start: the difference below cancels a constant and a linear term),
 * a box of radius b is P1(x + b) - P1(x - b - 1), and the box of those boxes is
 * T(x) = P2(x + 2b) - 2 P2(x - 1) + P2(x - 2b - 2). P2 is one serial chain of two additions a
 * column over x0 - 2b - 2 .. x1 + 2b - 1 (wrapped, in contiguous pieces) into the scratch p2; the
 * second difference is independent column by column, so it vectorises. Unsigned arithmetic, exact
 * modulo 2^64 like the box (the same integers as two row boxes). */
static inline int64_t s_wrap2(int64_t k, int64_t w)
{
    k = k < 0 ? k + w : k >= w ? k - w : k;
    return k < 0 ? k + w : k >= w ? k - w : k;
}

/* The window steps and the tent's second difference are integer arithmetic on whole rows: a second
 * copy compiled for AVX2 (four 64-bit lanes where the build's baseline SSE2 has two), chosen when
 * the program loads by what the processor has, gives the same integers (common/edt.c does the same
 * for its column step). */
#if defined(__x86_64__) && ((defined(__GNUC__) && !defined(__clang__)) || __clang_major__ >= 14)
#define S_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define S_AVX2_CLONE
#endif

/* dst[k] = p[k + 4b + 2] - 2 p[k + 2b + 1] + p[k], k in [0, n). */
S_AVX2_CLONE static void s_tent_diff(const uint64_t *restrict p, int64_t n, int64_t b,
                                     int64_t *restrict dst)
{
    const uint64_t *mid = p + 2 * b + 1, *ahead = p + 4 * b + 2;
#pragma GCC unroll 4
    for (int64_t k = 0; k < n; k++)
        dst[k] = (int64_t)(ahead[k] - 2 * mid[k] + p[k]);
}

static void s_tent_sums(const int64_t *src, int64_t w, int64_t b, int64_t x0, int64_t x1,
                        uint64_t *p2, int64_t *dst)
{
    /* columns lo .. hi - 1: at most 2b + 2 <= w + 1 outside [0, w) either side */
    int64_t lo = x0 - 2 * b - 2, hi = x1 + 2 * b;
    uint64_t p1 = 0, q = 0;
    uint64_t *o = p2;
    for (int64_t c = lo; c < hi;) {
        int64_t cw = s_wrap2(c, w), n = hi - c < w - cw ? hi - c : w - cw;
        const int64_t *in = src + cw;
        int64_t k = 0;
        for (; k + 4 <= n; k += 4) {
            p1 += (uint64_t)in[k];
            q += p1;
            o[k] = q;
            p1 += (uint64_t)in[k + 1];
            q += p1;
            o[k + 1] = q;
            p1 += (uint64_t)in[k + 2];
            q += p1;
            o[k + 2] = q;
            p1 += (uint64_t)in[k + 3];
            q += p1;
            o[k + 3] = q;
        }
        for (; k < n; k++) {
            p1 += (uint64_t)in[k];
            q += p1;
            o[k] = q;
        }
        o += n;
        c += n;
    }
    s_tent_diff(p2, x1 - x0, b, dst + x0);
}

typedef struct {
    int64_t w, r, nb, reach_b; /* blocks; blocks either side a row sum's window can touch */
    int64_t tent_b;            /* 0: the row box of radius r; else the row tent of two boxes of
                                * this radius (r = 2 tent_b) */
    uint64_t *p2;              /* the tent's scratch: w + 4 tent_b + 2 */
} s_rows_t;

static void s_row_pass_nz(const s_rows_t *c, const int64_t *src, int64_t *dst, const uint8_t *in_nz,
                          uint8_t *rs_nz);

/* Reads input row `src`: flags in_nz[b] when its block b holds a non-zero value, and computes the
 * row sums of the blocks within reach of one into dst, flagging them in rs_nz (the other blocks'
 * row sums are exactly zero and are not written). */
/* in_nz[b] = whether block b of row src holds a non-zero value; whether any does. One OR a column,
 * which vectorises (AVX2 clone). */
S_AVX2_CLONE static bool s_nonzero_blocks(const int64_t *restrict src, int64_t w, int64_t nb,
                                          uint8_t *restrict in_nz)
{
    uint64_t any = 0;
    for (int64_t b = 0; b < nb; b++) {
        int64_t x1 = (b + 1) * S_BLOCK < w ? (b + 1) * S_BLOCK : w;
        uint64_t o = 0;
#pragma GCC unroll 4
        for (int64_t x = b * S_BLOCK; x < x1; x++)
            o |= (uint64_t)src[x];
        in_nz[b] = o != 0;
        any |= o;
    }
    return any != 0;
}

static void s_row_pass(const s_rows_t *c, const int64_t *src, int64_t *dst, uint8_t *in_nz,
                       uint8_t *rs_nz)
{
    if (s_nonzero_blocks(src, c->w, c->nb, in_nz))
        s_row_pass_nz(c, src, dst, in_nz, rs_nz);
    else
        memset(rs_nz, 0, (size_t)c->nb);
}

/* The rest of s_row_pass, from the row's non-zero blocks in_nz. */
static void s_row_pass_nz(const s_rows_t *c, const int64_t *src, int64_t *dst, const uint8_t *in_nz,
                          uint8_t *rs_nz)
{
    int64_t w = c->w, nb = c->nb;
    memset(rs_nz, 0, (size_t)nb);
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
        if (c->tent_b)
            s_tent_sums(src, w, c->tent_b, b * S_BLOCK, e * S_BLOCK < w ? e * S_BLOCK : w, c->p2,
                        dst);
        else
            s_row_sums(src, w, c->r, b * S_BLOCK, e * S_BLOCK < w ? e * S_BLOCK : w, dst);
        b = e;
    }
}

/* One band of output rows [j0, j1) of the box sum, in place in v. Input rows outside the band come
 * from copies taken before any band wrote (lo: rows [lo0, j0), hi: rows [j1, j1 + r), both clipped
 * to the planet), so bands run at once without reading each other's outputs. The workspace (ring,
 * col, flags, count) is the band's own. */
typedef struct {
    int64_t *v;
    int64_t w, h, r, j0, j1, lo0;
    const int64_t *lo, *hi;
    int64_t *ring, *col, *count;
    uint8_t *flags;
} s_band_t;

static const int64_t *s_in_row(const s_band_t *b, int64_t k)
{
    if (k < b->j0)
        return b->lo + (size_t)(k - b->lo0) * (size_t)b->w;
    if (k >= b->j1)
        return b->hi + (size_t)(k - b->j1) * (size_t)b->w;
    return b->v + (size_t)k * (size_t)b->w;
}

/* Box sum by separable running sums (summed-area tables by rows then columns), in place: row j of
 * the result is written only after the row pass of row j + r has read its input, and a ring of
 * 2r + 2 row sums holds the rows the column window still needs. Exact in int64, so the result does
 * not depend on where the running sums start: a rolled input gives the rolled output to the bit,
 * and a band started at any row gives the same rows as the whole planet. Blocks of S_BLOCK columns
 * whose row sums are zero are skipped in the row and the column passes (adding a zero changes no
 * bit), and an output block whose column window is all zero is written only when its input was not
 * already zero: the same bits as summing everything (tests/test_coast.c holds it to a direct sum).
 */
static void s_box_band(const s_band_t *band)
{
    int64_t w = band->w, h = band->h, r = band->r, j0 = band->j0, j1 = band->j1;
    int64_t ring_n = 2 * r + 2, nb = (w + S_BLOCK - 1) / S_BLOCK;
    /* the last block may be narrow: one block more either side covers the radius */
    s_rows_t c = {w, r, nb, (r + S_BLOCK - 1) / S_BLOCK + 1, 0, NULL};
    int64_t *ring = band->ring, *col = band->col, *count = band->count;
    memset(col, 0, (size_t)w * sizeof *col);
    memset(count, 0, (size_t)nb * sizeof *count);
    /* per ring slot, which row sums were computed; and the scratch of a row's non-zero blocks */
    uint8_t *rs_nz = band->flags, *in_nz = band->flags + (size_t)ring_n * (size_t)nb;
#define S_SLOT(a, k) ((a) + (size_t)((k) % ring_n) * (size_t)nb)
#define S_RING(k) (ring + (size_t)((k) % ring_n) * (size_t)w)
    /* the column window of row j0 holds rows j0 - r .. j0 + r; count[b]: row sums of the window
     * computed */
    for (int64_t k = j0 - r > 0 ? j0 - r : 0; k <= j0 + r && k < h; k++) {
        int64_t *rs = S_RING(k);
        uint8_t *rf = S_SLOT(rs_nz, k);
        s_row_pass(&c, s_in_row(band, k), rs, in_nz, rf);
        for (int64_t b = 0; b < nb; b++) {
            if (!rf[b])
                continue;
            count[b]++;
            int64_t x1 = (b + 1) * S_BLOCK < w ? (b + 1) * S_BLOCK : w;
            for (int64_t x = b * S_BLOCK; x < x1; x++)
                col[x] = (int64_t)((uint64_t)col[x] + (uint64_t)rs[x]);
        }
    }
    for (int64_t j = j0; j < j1; j++) {
        int64_t *out = band->v + (size_t)j * (size_t)w;
        int64_t in = j + r + 1, gone = j - r;
        const int64_t *rs_in = in < h ? S_RING(in) : NULL;
        const int64_t *rs_gone = gone >= 0 ? S_RING(gone) : NULL;
        const uint8_t *in_f = NULL, *gone_f = NULL;
        if (rs_in) {
            /* row j's input slot is not row in's: ring_n > 2r + 1 rows apart */
            s_row_pass(&c, s_in_row(band, in), S_RING(in), in_nz, S_SLOT(rs_nz, in));
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
}

typedef struct {
    s_band_t *bands;
    size_t n;
} s_bands_t;

/* First section: every band copies the input rows it reads outside itself (before any band
 * writes). */
static void s_band_copy(void *ctx, size_t task, int thread)
{
    (void)thread;
    s_band_t *b = &((s_bands_t *)ctx)->bands[task];
    size_t row = (size_t)b->w * sizeof(int64_t);
    if (b->j0 > b->lo0)
        memcpy((int64_t *)b->lo, b->v + (size_t)b->lo0 * (size_t)b->w,
               (size_t)(b->j0 - b->lo0) * row);
    int64_t hi1 = b->j1 + b->r < b->h ? b->j1 + b->r : b->h;
    if (hi1 > b->j1)
        memcpy((int64_t *)b->hi, b->v + (size_t)b->j1 * (size_t)b->w, (size_t)(hi1 - b->j1) * row);
}

static void s_band_run(void *ctx, size_t task, int thread)
{
    (void)thread;
    s_box_band(&((s_bands_t *)ctx)->bands[task]);
}

int tb_coast_box_check(int64_t r, int64_t w, tb_err_t *err)
{
    if (2 * r + 1 > w)
        return tb_err_set(err, TB_E_INVALID,
                          "coast: a box of radius %lld cells is wider than the "
                          "planet's %lld columns",
                          (long long)r, (long long)w);
    return 0;
}

int64_t tb_coast_band_count(tb_pool_t *pool, int64_t h, int64_t min_rows)
{
    int64_t n =
        tb_pool_threads(pool) < TB_COAST_MAX_THREADS ? tb_pool_threads(pool) : TB_COAST_MAX_THREADS;
    if (n > h / min_rows)
        n = h / min_rows;
    return n < 1 ? 1 : n;
}

/* The box sum over the pool's threads: the rows split into one band per thread (at least 4 r rows
 * each, so the r rows of row sums a band computes twice stay a small part), each band exact, so any
 * split gives the same bits. Deterministic. */
int tb_coast_boxsum_i64(tb_pool_t *pool, int64_t *v, int64_t w, int64_t h, int64_t r, tb_err_t *err)
{
    if (tb_coast_box_check(r, w, err) != 0)
        return -1;
    int64_t n = tb_coast_band_count(pool, h, 4 * r > 64 ? 4 * r : 64);
    int64_t ring_n = 2 * r + 2, nb = (w + S_BLOCK - 1) / S_BLOCK;
    size_t per_ring = (size_t)ring_n * (size_t)w, per_halo = n > 1 ? 2 * (size_t)r * (size_t)w : 0;
    size_t per_flags = (size_t)(ring_n + 1) * (size_t)nb;
    s_band_t bands[TB_COAST_MAX_THREADS];
    int64_t *mem =
        tb_malloc((size_t)n * (per_ring + (size_t)w + (size_t)nb + per_halo) * sizeof(int64_t),
                  "coast box workspace", err);
    uint8_t *flags = mem ? tb_calloc((size_t)n * per_flags, 1, "coast box flags", err) : NULL;
    if (!flags) {
        free(mem);
        return -1;
    }
    int64_t *m = mem;
    for (int64_t t = 0; t < n; t++) {
        s_band_t *b = &bands[t];
        b->v = v;
        b->w = w;
        b->h = h;
        b->r = r;
        b->j0 = h * t / n;
        b->j1 = h * (t + 1) / n;
        b->lo0 = b->j0 - r > 0 ? b->j0 - r : 0;
        b->ring = m;
        m += per_ring;
        b->col = m;
        m += w;
        b->count = m;
        m += nb;
        b->lo = m;
        b->hi = m + (size_t)r * (size_t)w;
        m += per_halo;
        b->flags = flags + (size_t)t * per_flags;
    }
    s_bands_t all = {bands, (size_t)n};
    if (n > 1)
        tb_pool_run(pool, (size_t)n, s_band_copy, &all);
    tb_pool_run(pool, (size_t)n, s_band_run, &all);
    free(mem);
    free(flags);
    return 0;
}

/* One band of output rows [j0, j1) of the tent, in place in v: T(j) = sum of S(i) over the rows i
 * of the planet within b of j, S(i) = sum of X(k) over the rows k within b of i, X(k) the row tent
 * of input row k - the box of radius b twice, rows beyond the Y edges counting zero at both boxes,
 * as two box sums give. Rings of 2b + 2 rows hold the X and S rows their windows still need; the
 * accumulators sacc and tacc make the band's first S row and first output row, and each later one
 * is moved on from the one before (s_moved_sum). Input rows outside the band come from copies (lo:
 * rows [lo0, j0), hi: rows [j1, j1 + 2b)). Blocks whose rows in a window are all zero are skipped
 * (a count per block of the window's computed rows), as in s_box_band. */
typedef struct {
    int64_t *v;
    int64_t w, h, b, j0, j1, lo0;
    const int64_t *lo, *hi;
    int64_t *xring, *sring, *sacc, *tacc, *xcount, *scount;
    uint64_t *p2; /* the row tent's scratch, w + 4b + 2 */
    uint8_t *flags;
} s_tent_t;

static const int64_t *s_tent_in(const s_tent_t *t, int64_t k)
{
    if (k < t->j0)
        return t->lo + (size_t)(k - t->lo0) * (size_t)t->w;
    if (k >= t->j1)
        return t->hi + (size_t)(k - t->j1) * (size_t)t->w;
    return t->v + (size_t)k * (size_t)t->w;
}

/* acc += add - sub over the blocks flagged in either (NULL: none), and the window's count. */
S_AVX2_CLONE static void s_window_step(int64_t *restrict acc, const int64_t *restrict add,
                                       const uint8_t *add_f, const int64_t *restrict sub,
                                       const uint8_t *sub_f, int64_t *count, int64_t w, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++) {
        bool a = add_f && add_f[b], s = sub_f && sub_f[b];
        int64_t x0 = b * S_BLOCK, x1 = (b + 1) * S_BLOCK < w ? (b + 1) * S_BLOCK : w;
        if (a && s) {
            for (int64_t x = x0; x < x1; x++)
                acc[x] = (int64_t)((uint64_t)acc[x] + (uint64_t)add[x] - (uint64_t)sub[x]);
        } else if (a) {
            for (int64_t x = x0; x < x1; x++)
                acc[x] = (int64_t)((uint64_t)acc[x] + (uint64_t)add[x]);
        } else if (s) {
            for (int64_t x = x0; x < x1; x++)
                acc[x] = (int64_t)((uint64_t)acc[x] - (uint64_t)sub[x]);
        }
        count[b] += (int64_t)a - (int64_t)s;
    }
}

/* A window sum moved on one row, out of place: dst = prev + add - sub over the blocks whose window
 * keeps a computed row (count, updated, is positive; flagged in dst_f when not NULL); the others
 * are exactly zero and are not written. A block of prev whose window had no computed row (count
 * was zero) is zero and is not read. The tent's S rows go from ring slot to ring slot, and its
 * output rows from the row before in place: no accumulator and no copy of it. */
S_AVX2_CLONE static void s_moved_sum(int64_t *restrict dst, uint8_t *restrict dst_f,
                                     const int64_t *restrict prev, const int64_t *restrict add,
                                     const uint8_t *add_f, const int64_t *restrict sub,
                                     const uint8_t *sub_f, int64_t *count, int64_t w, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++) {
        bool a = add_f && add_f[b], s = sub_f && sub_f[b], p = count[b] > 0;
        count[b] += (int64_t)a - (int64_t)s;
        bool f = count[b] > 0;
        if (dst_f)
            dst_f[b] = f;
        if (!f)
            continue;
        int64_t x0 = b * S_BLOCK, x1 = (b + 1) * S_BLOCK < w ? (b + 1) * S_BLOCK : w;
        if (p && a && s) {
#pragma GCC unroll 4
            for (int64_t x = x0; x < x1; x++)
                dst[x] = (int64_t)((uint64_t)prev[x] + (uint64_t)add[x] - (uint64_t)sub[x]);
        } else if (p && a) {
#pragma GCC unroll 4
            for (int64_t x = x0; x < x1; x++)
                dst[x] = (int64_t)((uint64_t)prev[x] + (uint64_t)add[x]);
        } else if (p && s) {
#pragma GCC unroll 4
            for (int64_t x = x0; x < x1; x++)
                dst[x] = (int64_t)((uint64_t)prev[x] - (uint64_t)sub[x]);
        } else if (p) {
            memcpy(dst + x0, prev + x0, (size_t)(x1 - x0) * sizeof *dst);
        } else if (s) { /* an empty window gains a row as one leaves (a: count stays positive) */
#pragma GCC unroll 4
            for (int64_t x = x0; x < x1; x++)
                dst[x] = (int64_t)((uint64_t)add[x] - (uint64_t)sub[x]);
        } else { /* an empty window gains its first row */
            memcpy(dst + x0, add + x0, (size_t)(x1 - x0) * sizeof *dst);
        }
    }
}

static void s_tent_band(const s_tent_t *t)
{
    int64_t w = t->w, h = t->h, b = t->b, j0 = t->j0, j1 = t->j1;
    int64_t ring_n = 2 * b + 2, nb = (w + S_BLOCK - 1) / S_BLOCK;
    s_rows_t c = {w, 2 * b, nb, (2 * b + S_BLOCK - 1) / S_BLOCK + 1, b, t->p2};
    memset(t->sacc, 0, (size_t)w * sizeof *t->sacc);
    memset(t->tacc, 0, (size_t)w * sizeof *t->tacc);
    memset(t->xcount, 0, (size_t)nb * sizeof *t->xcount);
    memset(t->scount, 0, (size_t)nb * sizeof *t->scount);
    uint8_t *xf = t->flags, *sf = xf + (size_t)ring_n * (size_t)nb;
    uint8_t *in_nz = sf + (size_t)ring_n * (size_t)nb;
#define S_XF(k) (xf + (size_t)((k) % ring_n) * (size_t)nb)
#define S_SF(k) (sf + (size_t)((k) % ring_n) * (size_t)nb)
#define S_XR(k) (t->xring + (size_t)((k) % ring_n) * (size_t)w)
#define S_SR(k) (t->sring + (size_t)((k) % ring_n) * (size_t)w)
    /* X(k) into its ring slot */
#define S_X(k) s_row_pass(&c, s_tent_in(t, k), S_XR(k), in_nz, S_XF(k))
    /* S(i) from the accumulator into its ring slot: the blocks with a computed X in the window */
#define S_S(i)                                                                                     \
    do {                                                                                           \
        uint8_t *f_ = S_SF(i);                                                                     \
        int64_t *r_ = S_SR(i);                                                                     \
        for (int64_t q_ = 0; q_ < nb; q_++) {                                                      \
            f_[q_] = t->xcount[q_] > 0;                                                            \
            if (f_[q_]) {                                                                          \
                int64_t x0_ = q_ * S_BLOCK, x1_ = (q_ + 1) * S_BLOCK < w ? (q_ + 1) * S_BLOCK : w; \
                memcpy(r_ + x0_, t->sacc + x0_, (size_t)(x1_ - x0_) * sizeof *r_);                 \
            }                                                                                      \
        }                                                                                          \
    } while (0)
    /* the first S row the band needs, and its window of X rows */
    int64_t i0 = j0 - b > 0 ? j0 - b : 0;
    for (int64_t k = i0 - b > 0 ? i0 - b : 0; k <= i0 + b && k < h; k++) {
        S_X(k);
        s_window_step(t->sacc, S_XR(k), S_XF(k), NULL, NULL, t->xcount, w, nb);
    }
    S_S(i0);
    /* S(i) for the rest of row j0's window, each from the last */
    int64_t i_last = i0; /* the last S row computed */
    while (i_last + 1 <= j0 + b && i_last + 1 < h) {
        int64_t i = i_last + 1, in = i + b, out = i - b - 1;
        if (in < h)
            S_X(in);
        s_moved_sum(S_SR(i), S_SF(i), S_SR(i - 1), in < h ? S_XR(in) : NULL,
                    in < h ? S_XF(in) : NULL, out >= 0 ? S_XR(out) : NULL,
                    out >= 0 ? S_XF(out) : NULL, t->xcount, w, nb);
        i_last = i;
    }
    for (int64_t i = j0 - b > 0 ? j0 - b : 0; i <= i_last; i++)
        s_window_step(t->tacc, S_SR(i), S_SF(i), NULL, NULL, t->scount, w, nb);
    /* row j0 from the accumulator; with no S row in the window the sums are exactly zero, and so
     * was this block's input (every non-zero input block makes its X and S rows computed): the
     * zero is in place */
    int64_t *out0 = t->v + (size_t)j0 * (size_t)w;
    for (int64_t q = 0; q < nb; q++)
        if (t->scount[q] > 0) {
            int64_t x0 = q * S_BLOCK, x1 = (q + 1) * S_BLOCK < w ? (q + 1) * S_BLOCK : w;
            memcpy(out0 + x0, t->tacc + x0, (size_t)(x1 - x0) * sizeof *out0);
        }
    for (int64_t j = j0; j + 1 < j1; j++) {
        /* S(j + b + 1), then row j + 1 = row j + S(j + b + 1) - S(j - b): row j's blocks not
         * written are zero (as above), and row j + 1's input has made its X row already */
        int64_t i = j + b + 1;
        if (i < h) {
            int64_t in = i + b, gone = i - b - 1;
            if (in < h)
                S_X(in);
            s_moved_sum(S_SR(i), S_SF(i), S_SR(i - 1), in < h ? S_XR(in) : NULL,
                        in < h ? S_XF(in) : NULL, gone >= 0 ? S_XR(gone) : NULL,
                        gone >= 0 ? S_XF(gone) : NULL, t->xcount, w, nb);
        }
        int64_t gone = j - b;
        int64_t *out = t->v + (size_t)j * (size_t)w;
        s_moved_sum(out + w, NULL, out, i < h ? S_SR(i) : NULL, i < h ? S_SF(i) : NULL,
                    gone >= 0 ? S_SR(gone) : NULL, gone >= 0 ? S_SF(gone) : NULL, t->scount, w, nb);
    }
#undef S_XF
#undef S_SF
#undef S_XR
#undef S_SR
#undef S_X
#undef S_S
}

typedef struct {
    s_tent_t *bands;
    size_t n;
} s_tents_t;

static void s_tent_copy(void *ctx, size_t task, int thread)
{
    (void)thread;
    s_tent_t *t = &((s_tents_t *)ctx)->bands[task];
    size_t row = (size_t)t->w * sizeof(int64_t);
    if (t->j0 > t->lo0)
        memcpy((int64_t *)t->lo, t->v + (size_t)t->lo0 * (size_t)t->w,
               (size_t)(t->j0 - t->lo0) * row);
    int64_t hi1 = t->j1 + 2 * t->b < t->h ? t->j1 + 2 * t->b : t->h;
    if (hi1 > t->j1)
        memcpy((int64_t *)t->hi, t->v + (size_t)t->j1 * (size_t)t->w, (size_t)(hi1 - t->j1) * row);
}

static void s_tent_run(void *ctx, size_t task, int thread)
{
    (void)thread;
    s_tent_band(&((s_tents_t *)ctx)->bands[task]);
}

/* The tent of radius r: the box of radius ceil(r / 2) applied twice, a symmetric kernel whose
 * weights fall linearly from the centre, so a strong source does not print the square outline of a
 * box into what it spreads. Exact, in place, the same bits as two box sums (tb_coast_boxsum_i64):
 * the same integer sums (X wrapping, rows beyond the Y edges zero at both boxes), in one pass with
 * the row tents and the two column windows together. Over the pool's threads in bands of rows, as
 * the box. */
int tb_coast_tentsum_i64(tb_pool_t *pool, int64_t *v, int64_t w, int64_t h, int64_t r,
                         tb_err_t *err)
{
    int64_t b = (r + 1) / 2;
    if (tb_coast_box_check(b, w, err) != 0)
        return -1;
    int64_t n = tb_coast_band_count(pool, h, 8 * b > 64 ? 8 * b : 64);
    int64_t ring_n = 2 * b + 2, nb = (w + S_BLOCK - 1) / S_BLOCK;
    size_t per_rings = 2 * (size_t)ring_n * (size_t)w,
           per_halo = n > 1 ? 4 * (size_t)b * (size_t)w : 0;
    size_t per_p2 = (size_t)w + 4 * (size_t)b + 2;
    size_t per_band = per_rings + 2 * (size_t)w + 2 * (size_t)nb + per_halo + per_p2;
    size_t per_flags = (size_t)(2 * ring_n + 1) * (size_t)nb;
    s_tent_t bands[TB_COAST_MAX_THREADS];
    int64_t *mem = tb_malloc((size_t)n * per_band * sizeof(int64_t), "coast tent workspace", err);
    uint8_t *flags = mem ? tb_calloc((size_t)n * per_flags, 1, "coast tent flags", err) : NULL;
    if (!flags) {
        free(mem);
        return -1;
    }
    int64_t *m = mem;
    for (int64_t k = 0; k < n; k++) {
        s_tent_t *t = &bands[k];
        t->v = v;
        t->w = w;
        t->h = h;
        t->b = b;
        t->j0 = h * k / n;
        t->j1 = h * (k + 1) / n;
        t->lo0 = t->j0 - 2 * b > 0 ? t->j0 - 2 * b : 0;
        t->xring = m;
        m += (size_t)ring_n * (size_t)w;
        t->sring = m;
        m += (size_t)ring_n * (size_t)w;
        t->sacc = m;
        m += w;
        t->tacc = m;
        m += w;
        t->xcount = m;
        m += nb;
        t->scount = m;
        m += nb;
        t->lo = m;
        t->hi = m + 2 * (size_t)b * (size_t)w;
        m += per_halo;
        t->p2 = (uint64_t *)m;
        m += per_p2;
        t->flags = flags + (size_t)k * per_flags;
    }
    s_tents_t all = {bands, (size_t)n};
    if (n > 1)
        tb_pool_run(pool, (size_t)n, s_tent_copy, &all);
    tb_pool_run(pool, (size_t)n, s_tent_run, &all);
    free(mem);
    free(flags);
    return 0;
}
