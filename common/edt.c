/* Squared Euclidean distance transforms and dilation; see edt.h.
 *
 * Both transforms are separable. The column pass (down then up every column, Y never wraps) leaves
 * g = vertical distance in cells to the nearest feature in the same column. The row pass of
 * tb_edt_squared builds the lower envelope of the parabolas f(x) = g[q]^2 + (x - q)^2 and reads it
 * at every column; with X wrap the same envelope is also read at x + W and x - W, which is the
 * distance to every feature copied one circumference left or right, and only where that can win.
 * The row pass of tb_edt_dilate replaces the envelope by "tents" of half-width
 * floor(sqrt(r2 - g^2)) and a running max/min of their reach, which is exact for a threshold.
 */
#include "common/edt.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The column distance of a column with no feature: more than any real distance. */
#define S_G_FAR 0x40000000u
#define S_MAX_THREADS 16

typedef void (*s_range_fn)(void *ctx, int64_t begin, int64_t end);

typedef struct {
    s_range_fn fn;
    void *ctx;
    int64_t begin, end;
} s_chunk_t;

static void *s_chunk_main(void *arg)
{
    s_chunk_t *c = arg;
    c->fn(c->ctx, c->begin, c->end);
    return NULL;
}

/* Runs fn over [0, n) split into `threads` contiguous chunks, the first on the calling thread. A
 * thread that cannot be started has its chunk run on the calling thread: the result is the same. */
static void s_parallel(int threads, int64_t n, s_range_fn fn, void *ctx)
{
    if (threads < 1)
        threads = 1;
    if (threads > S_MAX_THREADS)
        threads = S_MAX_THREADS;
    if ((int64_t)threads > n)
        threads = n > 0 ? (int)n : 1;
    s_chunk_t chunks[S_MAX_THREADS];
    pthread_t tids[S_MAX_THREADS];
    bool started[S_MAX_THREADS] = {false};
    for (int t = 0; t < threads; t++)
        chunks[t] = (s_chunk_t){fn, ctx, n * t / threads, n * (t + 1) / threads};
    for (int t = 1; t < threads; t++)
        started[t] = pthread_create(&tids[t], NULL, s_chunk_main, &chunks[t]) == 0;
    fn(ctx, chunks[0].begin, chunks[0].end);
    for (int t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        else
            fn(ctx, chunks[t].begin, chunks[t].end);
    }
}

/* ---- exact transform (Felzenszwalb & Huttenlocher 2012) ---- */

typedef struct {
    const uint8_t *mask;
    uint32_t *d2;
    int64_t w, h;
    bool wrap;
    volatile int failed; /* a worker could not allocate its row workspace */
} s_exact_t;

/* Column pass over columns [c0, c1): d2 holds g, the vertical distance to the nearest feature in
 * the column, or S_G_FAR. Walks rows so every thread streams memory in order. */
static void s_exact_columns(void *arg, int64_t c0, int64_t c1)
{
    s_exact_t *e = arg;
    int64_t w = e->w;
    for (int64_t i = c0; i < c1; i++)
        e->d2[i] = e->mask[i] ? 0 : S_G_FAR;
    for (int64_t j = 1; j < e->h; j++) {
        const uint8_t *m = e->mask + (size_t)j * w;
        uint32_t *g = e->d2 + (size_t)j * w, *up = g - w;
        for (int64_t i = c0; i < c1; i++) {
            uint32_t next = up[i] + 1;
            if (next > S_G_FAR)
                next = S_G_FAR;
            g[i] = m[i] ? 0 : next;
        }
    }
    for (int64_t j = e->h - 2; j >= 0; j--) {
        uint32_t *g = e->d2 + (size_t)j * w, *down = g + w;
        for (int64_t i = c0; i < c1; i++) {
            uint32_t next = down[i] + 1;
            if (next < g[i])
                g[i] = next;
        }
    }
}

/* One row: g in, squared distance out, in place. f, v and z are workspaces of w, w and w + 1. */
static void s_exact_row(uint32_t *row, int64_t w, bool wrap, int64_t *f, int32_t *v, double *z)
{
    int k = -1;
    for (int64_t q = 0; q < w; q++) {
        if (row[q] >= S_G_FAR)
            continue;
        f[q] = (int64_t)row[q] * row[q];
        double s = -INFINITY;
        while (k >= 0) {
            int64_t p = v[k];
            s = (double)((f[q] + q * q) - (f[p] + p * p)) / (double)(2 * (q - p));
            if (s > z[k])
                break;
            k--;
        }
        k++;
        v[k] = (int32_t)q;
        z[k] = k == 0 ? -INFINITY : s;
        z[k + 1] = INFINITY;
    }
    if (k < 0) {
        for (int64_t x = 0; x < w; x++)
            row[x] = TB_EDT_FAR;
        return;
    }
    int top = k, c = 0;
    int64_t most = 0;
    for (int64_t x = 0; x < w; x++) {
        while (c < top && z[c + 1] < (double)x)
            c++;
        int64_t d = x - v[c];
        int64_t val = d * d + f[v[c]];
        row[x] = (uint32_t)val;
        if (val > most)
            most = val;
    }
    if (!wrap)
        return;
    /* A feature copied one circumference to the left of x is at least x + 1 away, to the right at
     * least w - x: only the ends of the row can gain, and only while that bound is under the row's
     * largest distance. Read the envelope at x + w (copies to the left) ... */
    for (int64_t x = 0; x < w && (x + 1) * (x + 1) < most; x++) {
        int64_t qx = x + w;
        while (c < top && z[c + 1] < (double)qx)
            c++;
        int64_t d = qx - v[c], val = d * d + f[v[c]];
        if (val < (int64_t)row[x])
            row[x] = (uint32_t)val;
    }
    /* ... and at x - w (copies to the right), ascending so the envelope is walked once. */
    int64_t x0 = w;
    while (x0 > 0 && (w - (x0 - 1)) * (w - (x0 - 1)) < most)
        x0--;
    c = 0;
    for (int64_t x = x0; x < w; x++) {
        int64_t qx = x - w;
        while (c < top && z[c + 1] < (double)qx)
            c++;
        int64_t d = qx - v[c], val = d * d + f[v[c]];
        if (val < (int64_t)row[x])
            row[x] = (uint32_t)val;
    }
}

static void s_exact_rows(void *arg, int64_t r0, int64_t r1)
{
    s_exact_t *e = arg;
    int64_t *f = malloc(sizeof *f * (size_t)e->w);
    int32_t *v = malloc(sizeof *v * (size_t)e->w);
    double *z = malloc(sizeof *z * (size_t)(e->w + 1));
    if (!f || !v || !z) {
        e->failed = 1;
    } else {
        for (int64_t j = r0; j < r1; j++)
            s_exact_row(e->d2 + (size_t)j * e->w, e->w, e->wrap, f, v, z);
    }
    free(f);
    free(v);
    free(z);
}

static int s_check_size(int64_t w, int64_t h, tb_err_t *err)
{
    if (w <= 0 || h <= 0 || w > INT32_MAX || h > INT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "edt: grid of %lld x %lld cells", (long long)w,
                          (long long)h);
    return 0;
}

int tb_edt_squared(const uint8_t *mask, int64_t w, int64_t h, bool wrap_x, int threads,
                   uint32_t *d2_out, tb_err_t *err)
{
    if (s_check_size(w, h, err) != 0)
        return -1;
    int64_t dx = wrap_x ? w / 2 : w - 1, dy = h - 1;
    if (dx * dx + dy * dy >= (int64_t)UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID,
                          "edt: a %lld x %lld grid has squared distances beyond 32 bits",
                          (long long)w, (long long)h);
    s_exact_t e = {mask, d2_out, w, h, wrap_x, 0};
    s_parallel(threads, w, s_exact_columns, &e);
    s_parallel(threads, h, s_exact_rows, &e);
    if (e.failed)
        return tb_err_set(err, TB_E_NOMEM, "edt: out of memory for the row workspace of %lld cells",
                          (long long)w);
    return 0;
}

/* ---- thresholded transform: dilation ---- */

typedef struct {
    const uint8_t *mask;
    void *g; /* vertical distance (uint8_t or uint16_t), capped at cap */
    uint8_t *out;
    int64_t w, h;
    bool wrap;
    int64_t cap;         /* r + 1: "further than r, or no feature in the column" */
    int64_t r;           /* floor(sqrt(radius2)), limited to the grid */
    const int64_t *half; /* half[g] = floor(sqrt(radius2 - g^2)) for g <= r, very negative at cap */
} s_dilate_t;

/* The column pass and the row pass for one width of g: uint8_t when r < 255 (the usual case, half
 * the memory traffic), uint16_t otherwise.
 *
 * Row pass: cell x is inside when some column q with g[q] <= r has |x - q| <= half[g[q]]. A running
 * maximum of q + half sweeps right, a running minimum of q - half sweeps left; half[cap] is so
 * negative that columns with nothing near never move either, so the sweeps have no branches. With
 * X wrap each sweep starts from the tents that overflow the far end of the row. With 8-bit g,
 * eight cells of open water (all cap) or of features (all 0) are stepped over at once. */
#define S_DILATE_IMPL(T, SUFFIX)                                                                   \
    static void s_dilate_columns_##SUFFIX(void *arg, int64_t c0, int64_t c1)                       \
    {                                                                                              \
        s_dilate_t *e = arg;                                                                       \
        const int64_t w = e->w;                                                                    \
        const T cap = (T)e->cap;                                                                   \
        T *g0 = e->g;                                                                              \
        for (int64_t i = c0; i < c1; i++)                                                          \
            g0[i] = e->mask[i] ? 0 : cap;                                                          \
        for (int64_t j = 1; j < e->h; j++) {                                                       \
            const uint8_t *m = e->mask + (size_t)j * w;                                            \
            T *g = g0 + (size_t)j * w, *up = g - w;                                                \
            for (int64_t i = c0; i < c1; i++) {                                                    \
                T next = up[i] < cap ? (T)(up[i] + 1) : cap;                                       \
                g[i] = m[i] ? 0 : next;                                                            \
            }                                                                                      \
        }                                                                                          \
        for (int64_t j = e->h - 2; j >= 0; j--) {                                                  \
            T *g = g0 + (size_t)j * w, *down = g + w;                                              \
            for (int64_t i = c0; i < c1; i++) {                                                    \
                T next = down[i] < cap ? (T)(down[i] + 1) : cap;                                   \
                g[i] = next < g[i] ? next : g[i];                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void s_dilate_rows_##SUFFIX(void *arg, int64_t r0, int64_t r1)                          \
    {                                                                                              \
        const s_dilate_t *e = arg;                                                                 \
        const int64_t w = e->w, r = e->r, *half = e->half;                                         \
        const uint64_t far8 = (uint64_t)(uint8_t)e->cap * 0x0101010101010101ull; /* 8 x cap */     \
        for (int64_t j = r0; j < r1; j++) {                                                        \
            const T *g = (const T *)e->g + (size_t)j * w;                                          \
            uint8_t *out = e->out + (size_t)j * w;                                                 \
            int64_t reach = -1, lreach = w;                                                        \
            if (e->wrap) {                                                                         \
                for (int64_t q = w - 1 - r > 0 ? w - 1 - r : 0; q < w; q++)                        \
                    reach = q + half[g[q]] - w > reach ? q + half[g[q]] - w : reach;               \
                for (int64_t q = 0; q < w && q <= r; q++)                                          \
                    lreach = q - half[g[q]] + w < lreach ? q - half[g[q]] + w : lreach;            \
            }                                                                                      \
            for (int64_t x = 0; x < w;) {                                                          \
                if (sizeof(T) == 1 && x + 8 <= w) {                                                \
                    uint64_t v;                                                                    \
                    memcpy(&v, g + x, 8);                                                          \
                    if (v == far8 && reach < x) { /* open water, nothing reaching in */            \
                        memset(out + x, 0, 8);                                                     \
                        x += 8;                                                                    \
                        continue;                                                                  \
                    }                                                                              \
                    if (v == 0) { /* eight features: each reaches further than all before */       \
                        reach = x + 7 + half[0];                                                   \
                        memset(out + x, 1, 8);                                                     \
                        x += 8;                                                                    \
                        continue;                                                                  \
                    }                                                                              \
                }                                                                                  \
                int64_t e1 = x + half[g[x]];                                                       \
                reach = e1 > reach ? e1 : reach;                                                   \
                out[x] = reach >= x;                                                               \
                x++;                                                                               \
            }                                                                                      \
            for (int64_t x = w - 1; x >= 0;) {                                                     \
                if (sizeof(T) == 1 && x >= 7) {                                                    \
                    uint64_t v;                                                                    \
                    memcpy(&v, g + x - 7, 8);                                                      \
                    if ((v == far8 && lreach > x) || v == 0) { /* nothing to add */                \
                        if (v == 0)                                                                \
                            lreach = x - 7 - half[0];                                              \
                        x -= 8;                                                                    \
                        continue;                                                                  \
                    }                                                                              \
                }                                                                                  \
                int64_t e0 = x - half[g[x]];                                                       \
                lreach = e0 < lreach ? e0 : lreach;                                                \
                out[x] |= lreach <= x;                                                             \
                x--;                                                                               \
            }                                                                                      \
        }                                                                                          \
    }

S_DILATE_IMPL(uint8_t, u8)
S_DILATE_IMPL(uint16_t, u16)

/* floor(sqrt(v)) for v >= 0, exact for every int64 (the double estimate is corrected). */
static int64_t s_isqrt(int64_t v)
{
    int64_t s = (int64_t)sqrt((double)v);
    while (s > 0 && s * s > v)
        s--;
    while ((s + 1) * (s + 1) <= v)
        s++;
    return s;
}

int tb_edt_dilate(const uint8_t *mask, int64_t w, int64_t h, bool wrap_x, int64_t radius2,
                  int threads, uint8_t *out, tb_err_t *err)
{
    if (s_check_size(w, h, err) != 0)
        return -1;
    if (radius2 < 0)
        return tb_err_set(err, TB_E_INVALID, "edt: dilation radius squared %lld is negative",
                          (long long)radius2);
    if (h > 65000)
        return tb_err_set(err, TB_E_INVALID, "edt: dilation supports up to 65000 rows, got %lld",
                          (long long)h);
    /* Column distances past h - 1 never occur, and tents wider than the row cover it anyway. */
    int64_t r = s_isqrt(radius2 < (int64_t)1 << 60 ? radius2 : (int64_t)1 << 60);
    if (r > h)
        r = h;
    const bool narrow = r + 1 <= UINT8_MAX;
    int64_t *half = malloc(sizeof *half * (size_t)(r + 2));
    void *g = malloc((narrow ? 1 : 2) * (size_t)w * (size_t)h);
    if (!half || !g) {
        free(half);
        free(g);
        return tb_err_set(err, TB_E_NOMEM, "edt: out of memory for a %lld x %lld dilation",
                          (long long)w, (long long)h);
    }
    for (int64_t k = 0; k <= r; k++)
        half[k] = s_isqrt(radius2 - k * k);
    half[r + 1] = -4 * (w + h) - 8; /* nothing within r: reaches nowhere */
    s_dilate_t e = {mask, g, out, w, h, wrap_x, r + 1, r, half};
    s_parallel(threads, w, narrow ? s_dilate_columns_u8 : s_dilate_columns_u16, &e);
    s_parallel(threads, h, narrow ? s_dilate_rows_u8 : s_dilate_rows_u16, &e);
    free(half);
    free(g);
    return 0;
}
