/* Exposure: fetch over open water along a fixed set of wave directions (docs/coast.md,
 * "Exposure"). Typical sizes: the whole planet, 3 M to 76 M cells, of which a few per cent are
 * waterline cells; eight directions.
 *
 * Two traps of the predecessor are designed out (docs/coast.md): the fetch is cast only along the
 * wave directions that reach the shore point from the sea (a direction whose first cell is land is
 * not one the waves come from, so the land behind a straight coast never counts as shelter), and
 * the normalisation is a fixed physical length (ref_fetch_km), never a percentile of the coast.
 *
 * The invariant: every fetch is the exact value of the per-cell recurrence (s_step's rule) along
 * the cell's upwind line, but it is evaluated only where the line's kind changes and at waterline
 * cells: along a run of one kind the recurrence has a closed form (docs/coast.md, "Exposure"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/methods.h"

/* Where the waves come from, as the step from a cell towards them (dy +1 is north, common/grid.h).
 */
static const int s_dx[TB_COAST_DIRECTIONS] = {0, 1, 1, 1, 0, -1, -1, -1};
static const int s_dy[TB_COAST_DIRECTIONS] = {1, 1, 0, -1, -1, -1, 0, 1};

void tb_coast_waterline_free(tb_coast_waterline_t *wl)
{
    free(wl->row);
    free(wl->x);
    free(wl->exposure);
    wl->row = NULL;
    wl->x = NULL;
    wl->exposure = NULL;
    wl->n = 0;
}

/* ---- the waterline cells ---- */

typedef struct {
    const uint8_t *kind;
    int64_t w, h;
    uint8_t *mask; /* w x h: 1 on waterline cells */
    uint8_t *near; /* w a thread */
    int64_t *row;  /* h + 1: first the count of each row (at y + 1), then the offsets */
    int32_t *x;    /* the columns, filled by the second pass */
} s_wl_t;

/* Waterline cells: sea with land among the 3 x 3 round it; a column OR, then a row OR, in loops the
 * compiler vectorises (the seam columns apart). */
static void s_mask_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_wl_t *c = ctx;
    int64_t w = c->w, h = c->h;
    uint8_t *near = c->near + (size_t)thread * (size_t)w;
    for (int64_t y = y0; y < y1; y++) {
        const uint8_t *k = c->kind + (size_t)y * (size_t)w;
        const uint8_t *ku = y > 0 ? k - w : k, *kd = y + 1 < h ? k + w : k;
        for (int64_t x = 0; x < w; x++)
            near[x] = (uint8_t)((k[x] == TB_COAST_LAND) | (ku[x] == TB_COAST_LAND) |
                                (kd[x] == TB_COAST_LAND));
        uint8_t *out = c->mask + (size_t)y * (size_t)w;
        out[0] = (uint8_t)((k[0] != TB_COAST_LAND) & (near[w - 1] | near[0] | near[1]));
        out[w - 1] = (uint8_t)((k[w - 1] != TB_COAST_LAND) & (near[w - 2] | near[w - 1] | near[0]));
        for (int64_t x = 1; x < w - 1; x++)
            out[x] = (uint8_t)((k[x] != TB_COAST_LAND) & (near[x - 1] | near[x] | near[x + 1]));
        uint32_t n = 0;
        for (int64_t x = 0; x < w; x++)
            n += out[x];
        c->row[y + 1] = n;
    }
}

/* The columns of the waterline cells of each row, ascending: eight mask bytes at a time. */
static void s_list_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_wl_t *c = ctx;
    int64_t w = c->w;
    for (int64_t y = y0; y < y1; y++) {
        const uint8_t *m = c->mask + (size_t)y * (size_t)w;
        int32_t *out = c->x + c->row[y];
        if (c->row[y + 1] == c->row[y])
            continue;
        int64_t x = 0;
        for (; x + 16 <= w; x += 16) {
            uint64_t a, b;
            memcpy(&a, m + x, 8);
            memcpy(&b, m + x + 8, 8);
            if (!(a | b))
                continue;
            for (int64_t i = x; i < x + 16; i++)
                if (m[i])
                    *out++ = (int32_t)i;
        }
        for (; x < w; x++)
            if (m[x])
                *out++ = (int32_t)x;
    }
}

/* ---- the fetch ---- */

typedef struct {
    const uint8_t *kind;
    const tb_coast_waterline_t *wl;
    int64_t w, h;
    int dir;
    uint32_t cap;  /* steps that make the reference fetch */
    double step_m; /* metres of one step */
    double ref_m;
    int32_t *acc; /* per waterline cell: the sum of (q << 8) | 1 over its directions */
    int64_t warm; /* steps a band starts before its first: cap + 2 */
} s_sweep_t;

/* Adds a direction's exposure, in thousandths, for waterline cell j, from its fetch g in steps. */
static inline void s_record(const s_sweep_t *s, int64_t j, uint64_t g)
{
    double e = (double)g * s->step_m / s->ref_m;
    int32_t q = e >= 1 ? TB_COAST_EXPOSURE_ONE : (int32_t)(e * TB_COAST_EXPOSURE_ONE);
    s->acc[j] += (q << 8) | 1;
}

/* The recurrence of one cell along a direction, saturating at cap: `fo` is the run of open water
 * ending at the cell, `g` the fetch a shore point sees from it. The shallow strip in front of a
 * shore is crossed (g chains through shallow cells, g = g_up + 1), then the open water beyond it
 * counts (an open cell: fo = g = fo_up + 1) until land (fo = g = 0) or an offshore shallow (fo = 0)
 * blocks it. Along a run of one kind that starts at step t0 it has a closed form, which is what a
 * line keeps (s_line_t): on an open run fo = g = min(cap, base + t - t0 + 1) with base the fo
 * before the run (0 after land or a shallow; cap beyond the Y edge, which is open sea), on a
 * shallow run g = min(cap, base + t - t0 + 1) with base the g before the run, on land 0. */
typedef struct {
    uint8_t *kind;  /* the kind of the run the line is in */
    int64_t *start; /* the step it started at */
    uint64_t *base; /* its base */
    int32_t *pos;   /* w: scratch, where a row differs from the one before */
} s_line_t;

/* The line's g at step t, on the run it is in (which must not be land). */
static inline uint64_t s_line_g(const s_line_t *ln, size_t l, int64_t t, uint32_t cap)
{
    uint64_t g = ln->base[l] + (uint64_t)(t - ln->start[l]) + 1;
    return g < cap ? g : cap;
}

/* Line l meets a cell of kind k at step t, a different kind from its run's: a new run. */
static inline void s_line_turn(const s_line_t *ln, size_t l, uint8_t k, int64_t t, uint32_t cap)
{
    uint64_t before = ln->kind[l] == TB_COAST_LAND ? 0 : s_line_g(ln, l, t - 1, cap);
    ln->base[l] = k == TB_COAST_SHALLOW ? before : 0;
    ln->kind[l] = k;
    ln->start[l] = t;
}

/* The line of column x in a row whose offset is off (both in [0, w)). */
static inline size_t s_line_of(int64_t x, int64_t off, int64_t w)
{
    int64_t l = x + off;
    return (size_t)(l >= w ? l - w : l);
}

/* The i in [0, n) where a[i] != b[i], ascending, into pos; returns how many. Thirty-two bytes at
 * a time, and only the differing ones one by one: most rows of a planet are much like the next. */
static int64_t s_differences(const uint8_t *a, const uint8_t *b, int64_t n, int32_t *pos)
{
    int64_t m = 0, i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t d[4], any = 0;
        for (int q = 0; q < 4; q++) {
            d[q] = tb_coast_word8(a + i + 8 * q) ^ tb_coast_word8(b + i + 8 * q);
            any |= d[q];
        }
        if (!any)
            continue;
        for (int q = 0; q < 4; q++)
            for (uint64_t bits = tb_coast_nonzero8(d[q]); bits; bits &= bits - 1)
                pos[m++] = (int32_t)(i + 8 * q + __builtin_ctzll(bits) / 8);
    }
    for (; i < n; i++)
        if (a[i] != b[i])
            pos[m++] = (int32_t)i;
    return m;
}

/* North, south and the diagonals: row by row from the Y edge the waves come from (beyond which is
 * open sea), each cell continuing its upwind neighbour's line in the previous row, X wrapping. Line
 * l holds the cells (x, t) with x + dx t = l (mod w). A row costs a comparison with the previous
 * one, eight cells at a time, plus its turns and its waterline cells. The sweep of steps [t0, t1)
 * (step t is row h - 1 - t for waves from the north, row t otherwise) starts `warm` steps earlier
 * from the saturated state (every line an open run at cap): after cap steps every value is exact
 * whatever the state it started from (a value not reset to an exact one by land, a shallow or an
 * open cell grew by a step a cell and is saturated), so bands of steps give the whole sweep's
 * values. */
static void s_sweep_rows(const s_sweep_t *s, int64_t t0, int64_t t1, const s_line_t *ln)
{
    int64_t w = s->w, dx = s_dx[s->dir], dy = s_dy[s->dir];
    int64_t ts = t0 - s->warm > 0 ? t0 - s->warm : 0;
    memset(ln->kind, TB_COAST_OPEN, (size_t)w);
    for (int64_t l = 0; l < w; l++) {
        ln->start[l] = ts;
        ln->base[l] = s->cap;
    }
    for (int64_t t = ts; t < t1; t++) {
        int64_t y = dy > 0 ? s->h - 1 - t : t;
        const uint8_t *k = s->kind + (size_t)y * (size_t)w;
        const uint8_t *up = t > ts ? s->kind + (size_t)(y + dy) * (size_t)w : NULL;
        /* the line of column x is x + off (mod w) */
        int64_t off = (dx * t) % w;
        off = off < 0 ? off + w : off;
        /* the interior columns, whose upwind neighbour x + dx does not wrap, eight at a time */
        int64_t lo = dx < 0 ? 1 : 0, hi = dx > 0 ? w - 1 : w;
        if (!up) {
            for (int64_t x = lo; x < hi; x++)
                if (k[x] != TB_COAST_OPEN)
                    s_line_turn(ln, s_line_of(x, off, w), k[x], t, s->cap);
        } else {
            int64_t m = s_differences(k + lo, up + lo + dx, hi - lo, ln->pos);
            for (int64_t i = 0; i < m; i++) {
                int64_t x = lo + ln->pos[i];
                s_line_turn(ln, s_line_of(x, off, w), k[x], t, s->cap);
            }
        }
        if (dx != 0) {
            int64_t xs = dx > 0 ? w - 1 : 0, ux = dx > 0 ? 0 : w - 1;
            if (k[xs] != (up ? up[ux] : TB_COAST_OPEN))
                s_line_turn(ln, s_line_of(xs, off, w), k[xs], t, s->cap);
        }
        if (t < t0)
            continue;
        /* the waterline cells of the row the waves reach from the sea: the upwind neighbour is not
         * land (beyond the Y edge counts as sea) */
        int64_t uy = y + dy;
        const uint8_t *urow = uy >= 0 && uy < s->h ? s->kind + (size_t)uy * (size_t)w : NULL;
        for (int64_t j = s->wl->row[y]; j < s->wl->row[y + 1]; j++) {
            int64_t wx = s->wl->x[j], ux = wx + dx;
            ux = ux < 0 ? w - 1 : ux >= w ? 0 : ux;
            if (urow && urow[ux] == TB_COAST_LAND)
                continue;
            s_record(s, j, s_line_g(ln, s_line_of(wx, off, w), t, s->cap));
        }
    }
}

typedef struct {
    const s_sweep_t *sweep;
    int64_t bands;
    s_line_t *lines; /* one a band */
} s_bands_t;

static void s_band_task(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_bands_t *b = ctx;
    int64_t h = b->sweep->h, t = (int64_t)task;
    s_sweep_rows(b->sweep, h * t / b->bands, h * (t + 1) / b->bands, &b->lines[task]);
}

/* East and west: each row is a ring, cut into maximal runs of one kind. A waterline cell's fetch
 * is its run's cells from it upwind, plus, on a shallow run, the whole open run upwind of that (0
 * when land is): the closed form of the recurrence, exact (a run is bounded by a cell of another
 * kind, so nothing depends on where a lap would start). A ring of sea of one kind saturates. */
typedef struct {
    const uint8_t *kind;
    const tb_coast_waterline_t *wl;
    int64_t w;
    const s_sweep_t *east, *west; /* NULL: not a wave direction */
    int32_t *starts;              /* w + 1 a thread */
} s_ring_t;

static void s_ring_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_ring_t *c = ctx;
    int64_t w = c->w;
    int32_t *st = c->starts + (size_t)thread * (size_t)(w + 1);
    for (int64_t y = y0; y < y1; y++) {
        int64_t j0 = c->wl->row[y], j1 = c->wl->row[y + 1];
        if (j0 == j1)
            continue;
        const uint8_t *k = c->kind + (size_t)y * (size_t)w;
        /* the runs' starts: x where k[x] != k[x - 1], the seam's pair included */
        int64_t m = 0;
        if (k[0] != k[w - 1])
            st[m++] = 0;
        int64_t seam = m; /* the others, found as x - 1 */
        m += s_differences(k + 1, k, w - 1, st + m);
        for (int64_t i = seam; i < m; i++)
            st[i]++;
        if (m == 0) {
            /* a ring of sea of one kind: every fetch saturates, and no upwind cell is land */
            for (int64_t j = j0; j < j1; j++) {
                if (c->east)
                    s_record(c->east, j, c->east->cap);
                if (c->west)
                    s_record(c->west, j, c->west->cap);
            }
            continue;
        }
        /* m >= 2 (a ring changes kind an even number of times); run r is [st[r], st[r + 1]) with
         * st[m] = st[0] + w, and a cell left of st[0] belongs to the last run, at x + w */
        st[m] = st[0] + (int32_t)w;
        for (int64_t j = j0; j < j1; j++) {
            int64_t wx = c->wl->x[j], px = wx < st[0] ? wx + w : wx;
            int64_t r = 0, hi = m; /* the run: the last r with st[r] <= px */
            while (hi - r > 1) {
                int64_t mid = (r + hi) / 2;
                if (st[mid] <= px)
                    r = mid;
                else
                    hi = mid;
            }
            bool shallow = k[wx] == TB_COAST_SHALLOW;
            if (c->east && k[wx + 1 < w ? wx + 1 : 0] != TB_COAST_LAND) {
                /* waves from the east: the run from the cell east, then the run east of it */
                uint64_t g = (uint64_t)(st[r + 1] - px);
                int64_t nr = r + 1 < m ? r + 1 : 0;
                if (shallow && k[st[nr]] == TB_COAST_OPEN)
                    g += (uint64_t)(st[nr + 1] - st[nr]);
                s_record(c->east, j, g < c->east->cap ? g : c->east->cap);
            }
            if (c->west && k[wx > 0 ? wx - 1 : w - 1] != TB_COAST_LAND) {
                uint64_t g = (uint64_t)(px - st[r] + 1);
                int64_t pr = r > 0 ? r - 1 : m - 1;
                if (shallow && k[st[pr]] == TB_COAST_OPEN)
                    g += (uint64_t)(st[pr + 1] - st[pr]);
                s_record(c->west, j, g < c->west->cap ? g : c->west->cap);
            }
        }
    }
}

/* Fetch exposure by directional sweeps (after the predecessor's wrap-aware fetch, docs/coast.md):
 * for each wave direction in the wave sector, the fetch of a waterline cell is the open water
 * upwind of it (steps of 1 or sqrt 2 cells) until land or an offshore shallow, capped at
 * ref_fetch_km; its exposure along the direction is fetch / ref_fetch_km, and its exposure is the
 * mean over the directions the waves reach it from (0 when none does). Every value is an exact
 * integer of the cell's upwind line, so the X seam is crossed like any column and a rolled planet
 * gives rolled exposures. */
int tb_coast_exposure_fetch_sweeps(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                   int64_t w, int64_t h, const uint8_t *kind,
                                   tb_coast_waterline_t *out, const tb_coast_debug_t *debug,
                                   tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->w = w;
    out->h = h;
    size_t cells = (size_t)w * (size_t)h;
    int64_t threads =
        tb_pool_threads(pool) < TB_COAST_MAX_THREADS ? tb_pool_threads(pool) : TB_COAST_MAX_THREADS;
    uint8_t *mask = tb_malloc(cells, "coast waterline", err);
    uint8_t *near =
        mask ? tb_malloc((size_t)threads * (size_t)w, "coast waterline rows", err) : NULL;
    out->row =
        near ? tb_calloc((size_t)h + 1, sizeof *out->row, "coast waterline rows", err) : NULL;
    if (!out->row) {
        free(mask);
        free(near);
        return -1;
    }
    s_wl_t c = {kind, w, h, mask, near, out->row, NULL};
    tb_coast_par_rows(pool, h, s_mask_rows, &c);
    free(near);
    for (int64_t y = 0; y < h; y++)
        out->row[y + 1] += out->row[y];
    out->n = out->row[h];
    size_t n1 = (size_t)out->n + 1;
    out->x = tb_malloc(n1 * sizeof *out->x, "coast waterline cells", err);
    out->exposure =
        out->x ? tb_malloc(n1 * sizeof *out->exposure, "coast waterline exposure", err) : NULL;
    int32_t *acc = out->exposure ? tb_calloc(n1, sizeof *acc, "coast fetch sums", err) : NULL;
    /* the lines of the row sweeps, one set a band, and the ring's run starts, one a thread */
    /* a band's start and base arrays are 8-byte aligned: its bytes a multiple of 8 */
    size_t line_bytes =
        ((size_t)w * (sizeof(int64_t) + sizeof(uint64_t) + sizeof(int32_t) + 1) + 7) / 8 * 8;
    uint8_t *lines_mem =
        acc ? tb_malloc((size_t)threads * line_bytes, "coast fetch lines", err) : NULL;
    int32_t *starts = lines_mem ? tb_malloc((size_t)threads * (size_t)(w + 1) * sizeof *starts,
                                            "coast fetch runs", err)
                                : NULL;
    if (!starts) {
        free(mask);
        free(acc);
        free(lines_mem);
        tb_coast_waterline_free(out);
        return -1;
    }
    c.x = out->x;
    tb_coast_par_rows(pool, h, s_list_rows, &c);
    free(mask);
    s_line_t lines[TB_COAST_MAX_THREADS];
    for (int64_t t = 0; t < threads; t++) {
        uint8_t *m = lines_mem + (size_t)t * line_bytes;
        lines[t].start = (int64_t *)m;
        lines[t].base = (uint64_t *)(m + (size_t)w * sizeof(int64_t));
        lines[t].pos = (int32_t *)(m + (size_t)w * (sizeof(int64_t) + sizeof(uint64_t)));
        lines[t].kind = m + (size_t)w * (sizeof(int64_t) + sizeof(uint64_t) + sizeof(int32_t));
    }
    double ref_m = p->ref_fetch_km * 1000.0;
    unsigned wave_mask = tb_coast_wave_mask(p);
    s_sweep_t sweeps[TB_COAST_DIRECTIONS];
    for (int d = 0; d < TB_COAST_DIRECTIONS; d++) {
        double step_m = cell_m * ((s_dx[d] && s_dy[d]) ? sqrt(2.0) : 1.0);
        double cap = ceil(ref_m / step_m);
        uint32_t cap_steps = cap > 4e9 ? 4000000000u : (uint32_t)cap;
        sweeps[d] =
            (s_sweep_t){kind, out, w, h, d, cap_steps, step_m, ref_m, acc, (int64_t)cap_steps + 2};
        if (debug && debug->short_warmup)
            sweeps[d].warm /= 2; /* the negative control: too few steps to forget the start */
        if (!(wave_mask & (1u << d)) || s_dy[d] == 0)
            continue;
        /* bands of at least twice the warm-up, one a thread */
        int64_t bands = threads, least = 2 * ((int64_t)cap_steps + 2);
        if (bands > h / least)
            bands = h / least;
        if (bands < 1)
            bands = 1;
        s_bands_t b = {&sweeps[d], bands, lines};
        tb_pool_run(pool, (size_t)bands, s_band_task, &b);
    }
    if (wave_mask & (1u << TB_COAST_E | 1u << TB_COAST_W)) {
        s_ring_t ring = {kind,
                         out,
                         w,
                         wave_mask & (1u << TB_COAST_E) ? &sweeps[TB_COAST_E] : NULL,
                         wave_mask & (1u << TB_COAST_W) ? &sweeps[TB_COAST_W] : NULL,
                         starts};
        tb_coast_par_rows(pool, h, s_ring_rows, &ring);
    }
    free(lines_mem);
    free(starts);
    /* the mean over the directions, rounded half up, in thousandths */
    for (int64_t j = 0; j < out->n; j++) {
        int64_t n = acc[j] & 0xFF, sum = acc[j] >> 8;
        out->exposure[j] = (uint16_t)(n > 0 ? (2 * sum + n) / (2 * n) : 0);
    }
    free(acc);
    return 0;
}
