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

/* s_check_size, and every squared distance of the grid (the short way round when X wraps) fits the
 * 32-bit output. */
static int s_check_d2_size(int64_t w, int64_t h, bool wrap_x, tb_err_t *err)
{
    if (s_check_size(w, h, err) != 0)
        return -1;
    int64_t dx = wrap_x ? w / 2 : w - 1, dy = h - 1;
    if (dx * dx + dy * dy >= (int64_t)UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID,
                          "edt: a %lld x %lld grid has squared distances beyond 32 bits",
                          (long long)w, (long long)h);
    return 0;
}

int tb_edt_squared(const uint8_t *mask, int64_t w, int64_t h, bool wrap_x, int threads,
                   uint32_t *d2_out, tb_err_t *err)
{
    if (s_check_d2_size(w, h, wrap_x, err) != 0)
        return -1;
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

/* ---- both sides at once: tb_edt_squared_both ----
 *
 * The column pass leaves g = the vertical distance to the nearest cell of the other kind in the
 * same column (S_G_FAR: none), one array for both kinds. The row pass cuts every row into runs of
 * one kind. For a cell x of a run, a cell q outside the run is never nearer than the run's end cell
 * on the way from q to x (a cell of the other kind, at distance 0 in its column): |x - end| < |x -
 * q| while g[q] >= 0. So each run is its own one-dimensional problem: the lower envelope of the
 * parabolas (x - q)^2 + g[q]^2 of its cells and of its two end cells (g = 0), read at its cells.
 * Every cell enters one envelope, where two full transforms entered every cell into two.
 *
 * The envelope is over integers: a parabola q after p (q > p) is at most p's from
 * x >= ceil(n / d), n = (q - p)(q + p) + f_q - f_p, d = 2 (q - p). The stack keeps each parabola's
 * first integer column; a new one pops the top while n <= start * d (no division), and is divided
 * once when it stays. A cell whose g exceeds its kind's sqrt(cap) is no site: its parabola is above
 * the cap everywhere, so every value within the cap is still exact. */

typedef struct {
    int32_t v, t; /* site column (relative to the run), first column where it is lowest */
    int64_t vf;   /* v^2 + g^2 */
} s_site_t;

typedef struct {
    const uint8_t *mask;
    uint32_t *d2;
    int64_t w, h;
    bool wrap;
    uint32_t gmax[2], cap[2]; /* per kind (mask zero, non-zero): largest site g, output cap */
    int64_t strip;            /* columns per column task */
    s_site_t *sites;          /* per thread, 2 w + 8 */
    tb_edt_row_fn row_fn;
    void *row_ctx;
} s_both_t;

/* The column step is integer arithmetic on whole rows: with a second copy compiled for AVX2 (eight
 * lanes and an unsigned min, where the build's baseline SSE2 has four and none), chosen when the
 * program loads by what the processor has, it takes half the instructions and gives the same
 * integers. */
#if defined(__x86_64__) && ((defined(__GNUC__) && !defined(__clang__)) || __clang_major__ >= 14)
#define S_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define S_AVX2_CLONE
#endif

/* g of one row from the row before it (down) or after it (up): 1 where the kinds differ, else one
 * more than there (capped at S_G_FAR); up keeps the smaller. Branch-free, so it vectorises. */
S_AVX2_CLONE static void s_both_column_step(const uint8_t *restrict m, const uint8_t *restrict nb,
                                            const uint32_t *restrict gn, uint32_t *restrict g,
                                            int64_t n, bool keep_min)
{
    if (!keep_min) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t next = gn[i] + 1,
                     differ = (uint32_t)0 - (uint32_t)((m[i] == 0) ^ (nb[i] == 0));
            next = next < S_G_FAR ? next : S_G_FAR;
            g[i] = (next & ~differ) | (1 & differ);
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            uint32_t next = gn[i] + 1,
                     differ = (uint32_t)0 - (uint32_t)((m[i] == 0) ^ (nb[i] == 0));
            next = next < g[i] ? next : g[i];
            g[i] = (next & ~differ) | (1 & differ);
        }
    }
}

static void s_both_columns(void *arg, size_t task, int thread)
{
    (void)thread;
    const s_both_t *e = arg;
    const int64_t w = e->w, c0 = (int64_t)task * e->strip,
                  c1 = c0 + e->strip < e->w ? c0 + e->strip : e->w;
    for (int64_t i = c0; i < c1; i++)
        e->d2[i] = S_G_FAR;
    for (int64_t j = 1; j < e->h; j++) {
        size_t at = (size_t)j * (size_t)w + (size_t)c0;
        s_both_column_step(e->mask + at, e->mask + at - w, e->d2 + at - w, e->d2 + at, c1 - c0,
                           false);
    }
    for (int64_t j = e->h - 2; j >= 0; j--) {
        size_t at = (size_t)j * (size_t)w + (size_t)c0;
        s_both_column_step(e->mask + at, e->mask + at + w, e->d2 + at + w, e->d2 + at, c1 - c0,
                           true);
    }
}

/* Adds the parabola of site q (f = g^2) to the envelope s[0..*k] over the columns [lo, hi]. */
static inline void s_push(s_site_t *s, int *k, int64_t q, uint32_t f, int64_t lo, int64_t hi)
{
    const int64_t qf = q * q + f;
    while (*k >= 0) {
        const s_site_t *p = &s[*k];
        int64_t d2x = 2 * (q - p->v), n = qf - p->vf;
        if (n <= p->t * d2x) {
            (*k)--; /* q is at most p wherever p was lowest */
            continue;
        }
        /* n > t * 2d >= 0: the first column where q is at most p (neighbours: a shift) */
        int64_t start = d2x == 2 ? (n + 1) >> 1 : (n + d2x - 1) / d2x;
        if (start > hi)
            return; /* never lowest within the run */
        s[++*k] = (s_site_t){(int32_t)q, (int32_t)start, qf};
        return;
    }
    s[++*k] = (s_site_t){(int32_t)q, (int32_t)lo, qf};
}

/* Reads the envelope s[0..k] at columns [lo, hi], writing column x to out[x - lo] (TB_EDT_FAR past
 * cap), one site's columns at a time. The value is below 2^32 (a real squared distance; the size
 * check holds it there), so 32-bit arithmetic, which wraps, gives it exactly. */
static inline void s_read(const s_site_t *s, int k, int64_t lo, int64_t hi, uint32_t cap,
                          uint32_t *out)
{
    if (k < 0) {
        for (int64_t x = lo; x <= hi; x++)
            out[x - lo] = TB_EDT_FAR;
        return;
    }
    int c = 0;
    while (c < k && s[c + 1].t <= lo)
        c++;
    for (int64_t x = lo; x <= hi; c++) {
        int64_t x1 = c < k && s[c + 1].t <= hi ? s[c + 1].t : hi + 1; /* this site's: [x, x1) */
        uint32_t *o = out - lo, v = (uint32_t)s[c].v, f = (uint32_t)s[c].vf - v * v;
        for (; x < x1; x++) {
            uint32_t d = (uint32_t)x - v, val = d * d + f;
            o[x] = val <= cap ? val : TB_EDT_FAR;
        }
    }
}

/* One run: cells [u0, u1) of the row (u may pass w with wrap: cell u - w), all of kind `kind`, with
 * an end cell of the other kind at u0 - 1 (when left) and at u1 (when right). Positions relative to
 * u0 - 1, so the run's cells are 1 .. L. */
static void s_both_run(const s_both_t *e, uint32_t *row, int64_t u0, int64_t u1, bool left,
                       bool right, int kind, s_site_t *s)
{
    const int64_t w = e->w, len = u1 - u0, o = u0 - 1;
    const uint32_t gmax = e->gmax[kind];
    int k = -1;
    if (left)
        s[++k] = (s_site_t){0, 1, 0};
    /* Between two end cells (at 0 and len + 1) a cell q can be lowest at some x only if
     * g^2 <= q (len + 1 - q): it must beat the left end, so 2x >= q + g^2 / q, and the right end,
     * so 2x <= q + len + 1 - g^2 / (len + 1 - q). Taller cells are no site. */
    const int64_t span = len + 1, mid = u1 < w ? u1 : w; /* cells [u0, mid), then [w, u1) */
    if (left && right) {
        for (int64_t u = u0; u < mid; u++) {
            int64_t q = u - o, f = (int64_t)row[u] * row[u];
            if (row[u] <= gmax && f <= q * (span - q))
                s_push(s, &k, q, (uint32_t)f, 1, len);
        }
        for (int64_t u = mid > u0 ? mid : u0; u < u1; u++) {
            int64_t q = u - o, f = (int64_t)row[u - w] * row[u - w];
            if (row[u - w] <= gmax && f <= q * (span - q))
                s_push(s, &k, q, (uint32_t)f, 1, len);
        }
    } else {
        for (int64_t u = u0; u < mid; u++)
            if (row[u] <= gmax)
                s_push(s, &k, u - o, row[u] * row[u], 1, len);
        for (int64_t u = mid > u0 ? mid : u0; u < u1; u++)
            if (row[u - w] <= gmax)
                s_push(s, &k, u - o, row[u - w] * row[u - w], 1, len);
    }
    if (right)
        s_push(s, &k, len + 1, 0, 1, len);
    if (u1 <= w) {
        s_read(s, k, 1, len, e->cap[kind], row + u0);
    } else { /* the run crosses the seam: read the two parts */
        s_read(s, k, 1, w - u0, e->cap[kind], row + u0);
        s_read(s, k, w - u0 + 1, len, e->cap[kind], row);
    }
}

/* A row of one kind only, with X wrap: every cell's copies one circumference either side are
 * sites too, those within half a circumference (and a cell) of the row. */
static void s_both_ring(const s_both_t *e, uint32_t *row, int kind, s_site_t *s)
{
    const int64_t w = e->w, half = w / 2 + 1, o = -half - 1; /* positions u - o >= 1 */
    const uint32_t gmax = e->gmax[kind];
    int k = -1;
    for (int64_t u = -half; u < w + half; u++) {
        int64_t q = u < 0 ? u + w : u >= w ? u - w : u;
        if (row[q] <= gmax)
            s_push(s, &k, u - o, row[q] * row[q], -o, w - 1 - o);
    }
    s_read(s, k, -o, w - 1 - o, e->cap[kind], row);
}

/* The first column in [from, to) whose kind is not `kind` (0: mask zero), or `to`; eight bytes at a
 * time through the long runs. */
static int64_t s_run_end(const uint8_t *m, int64_t from, int64_t to, int kind)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    int64_t x = from;
    for (; x + 8 <= to; x += 8) {
        uint64_t v;
        memcpy(&v, m + x, 8);
        /* kind 0 ends at a non-zero byte, kind 1 at a zero byte (the exact zero-byte test) */
        if (kind ? ((v - ones) & ~v & highs) != 0 : v != 0)
            break;
    }
    while (x < to && (m[x] != 0) == kind)
        x++;
    return x;
}

static void s_both_row(const s_both_t *e, int64_t y, s_site_t *s)
{
    const int64_t w = e->w;
    const uint8_t *m = e->mask + (size_t)y * (size_t)w;
    uint32_t *row = e->d2 + (size_t)y * (size_t)w;
    /* the first column whose kind differs from the one before it */
    int64_t first = s_run_end(m, 1, w, m[0] != 0);
    if (first == w) { /* one kind only */
        if (e->wrap)
            s_both_ring(e, row, m[0] != 0, s);
        else
            s_both_run(e, row, 0, w, false, false, m[0] != 0, s);
        return;
    }
    /* runs over [start, start + w) with wrap (start begins a run), [0, w) without */
    int64_t start = e->wrap && !m[0] == !m[w - 1] ? first : 0, end = start + w;
    for (int64_t u0 = start; u0 < end;) {
        int kind = m[u0 < w ? u0 : u0 - w] != 0;
        int64_t u1 = u0 < w ? s_run_end(m, u0 + 1, end < w ? end : w, kind) : u0 + 1;
        if (u1 >= w && end > w) /* on across the seam */
            u1 = w + s_run_end(m, u1 - w, end - w, kind);
        s_both_run(e, row, u0, u1, e->wrap || u0 > 0, e->wrap || u1 < w, kind, s);
        u0 = u1;
    }
}

static void s_both_rows(void *arg, size_t task, int thread)
{
    const s_both_t *e = arg;
    int64_t y0 = (int64_t)task * TB_EDT_CHUNK_ROWS;
    int64_t y1 = y0 + TB_EDT_CHUNK_ROWS < e->h ? y0 + TB_EDT_CHUNK_ROWS : e->h;
    s_site_t *s = e->sites + (size_t)thread * (size_t)(2 * e->w + 8);
    for (int64_t y = y0; y < y1; y++) {
        s_both_row(e, y, s);
        if (e->row_fn)
            e->row_fn(e->row_ctx, y, e->d2 + (size_t)y * (size_t)e->w, thread);
    }
}

int tb_edt_squared_both(const uint8_t *mask, int64_t w, int64_t h, bool wrap_x,
                        const uint32_t cap2[2], tb_pool_t *pool, uint32_t *d2_out,
                        tb_edt_row_fn row_fn, void *row_ctx, tb_err_t *err)
{
    if (s_check_d2_size(w, h, wrap_x, err) != 0)
        return -1;
    int threads = tb_pool_threads(pool);
    s_both_t e = {.mask = mask,
                  .d2 = d2_out,
                  .w = w,
                  .h = h,
                  .wrap = wrap_x,
                  .row_fn = row_fn,
                  .row_ctx = row_ctx};
    for (int kind = 0; kind < 2; kind++) {
        e.cap[kind] = cap2 ? cap2[kind] : UINT32_MAX;
        int64_t g = s_isqrt(e.cap[kind]); /* a larger g is above the cap everywhere */
        e.gmax[kind] = g < (int64_t)S_G_FAR ? (uint32_t)g : S_G_FAR - 1;
    }
    e.sites = malloc(sizeof *e.sites * (size_t)threads * (size_t)(2 * w + 8));
    if (!e.sites)
        return tb_err_set(err, TB_E_NOMEM, "edt: out of memory for the row workspace of %lld cells",
                          (long long)w);
    /* column strips of at least 256 columns, about four per thread */
    e.strip = (w + 4 * threads - 1) / (4 * threads);
    e.strip = e.strip < 256 ? 256 : e.strip;
    tb_pool_run(pool, (size_t)((w + e.strip - 1) / e.strip), s_both_columns, &e);
    tb_pool_run(pool, (size_t)((h + TB_EDT_CHUNK_ROWS - 1) / TB_EDT_CHUNK_ROWS), s_both_rows, &e);
    free(e.sites);
    return 0;
}
