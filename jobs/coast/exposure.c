/* Exposure: fetch over open water along a fixed set of wave directions (docs/coast.md,
 * "Exposure"). Typical sizes: the whole planet, 3 M to 76 M cells, eight sweeps of it.
 *
 * Two traps of the predecessor are designed out (docs/coast.md): the fetch is cast only along the
 * wave directions that reach the shore point from the sea (a direction whose first cell is land is
 * not one the waves come from, so the land behind a straight coast never counts as shelter), and
 * the normalisation is a fixed physical length (ref_fetch_km), never a percentile of the coast. */
#include <math.h>
#include <stdlib.h>

#include "jobs/coast/methods.h"

/* Where the waves come from, as the step from a cell towards them (dy +1 is north, common/grid.h).
 */
static const int s_dx[TB_COAST_DIRECTIONS] = {0, 1, 1, 1, 0, -1, -1, -1};
static const int s_dy[TB_COAST_DIRECTIONS] = {1, 1, 0, -1, -1, -1, 0, 1};

bool tb_coast_is_waterline(const uint8_t *kind, int64_t w, int64_t h, int64_t x, int64_t y)
{
    if (kind[(size_t)y * (size_t)w + (size_t)x] == TB_COAST_LAND)
        return false;
    for (int dy = -1; dy <= 1; dy++) {
        int64_t yy = y + dy;
        if (yy < 0 || yy >= h)
            continue;
        for (int dx = -1; dx <= 1; dx++) {
            int64_t xx = tb_wrap(x + dx, w);
            if (kind[(size_t)yy * (size_t)w + (size_t)xx] == TB_COAST_LAND)
                return true;
        }
    }
    return false;
}

/* The fetch recurrence of one cell, in steps along the direction, saturating at cap. `fo` is the
 * run of open water ending at the cell, `g` the fetch a shore point sees from it: the shallow strip
 * in front of a shore is crossed (g chains through shallow cells), then the open water beyond it
 * counts until land or an offshore shallow (fo resets on a shallow cell) blocks it. */
static inline void s_step(uint8_t kind, uint32_t fo_up, uint32_t g_up, uint32_t cap, uint32_t *fo,
                          uint32_t *g)
{
    uint32_t fo_next = fo_up < cap ? fo_up + 1 : cap, g_next = g_up < cap ? g_up + 1 : cap;
    uint32_t f = kind == TB_COAST_OPEN ? fo_next : 0;
    *fo = f;
    *g = kind == TB_COAST_OPEN ? f : kind == TB_COAST_SHALLOW ? g_next : 0;
}

typedef struct {
    const uint8_t *kind;
    const uint8_t *waterline; /* 1 on waterline cells */
    int64_t w, h;
    int dir;
    uint32_t cap;  /* steps that make the reference fetch */
    double step_m; /* metres of one step */
    double ref_m;
    int64_t *acc;
    int64_t warm; /* steps a band starts before its first: cap + 2 */
} s_sweep_t;

/* Adds the direction's exposure, in thousandths, to a waterline cell the waves can reach from the
 * sea along it (its upwind neighbour is not land; beyond the Y edge counts as sea). */
static inline void s_record(const s_sweep_t *s, int64_t x, int64_t y, uint32_t g)
{
    size_t i = (size_t)y * (size_t)s->w + (size_t)x;
    int64_t ux = tb_wrap(x + s_dx[s->dir], s->w), uy = y + s_dy[s->dir];
    if (uy >= 0 && uy < s->h && s->kind[(size_t)uy * (size_t)s->w + (size_t)ux] == TB_COAST_LAND)
        return;
    double e = (double)g * s->step_m / s->ref_m;
    int64_t q = e >= 1 ? TB_COAST_EXPOSURE_ONE : (int64_t)(e * TB_COAST_EXPOSURE_ONE);
    s->acc[i] += (q << 8) | 1;
}

/* East or west: each row is a ring. A lap from a land cell (whose state is known: nothing) is
 * exact; a row without land takes two laps from a saturated start, after which every value is exact
 * whatever the start (every cell behind a shallow cell is exact after the first lap, and a row with
 * none is saturated everywhere). So the seam is nowhere special. Rows without a waterline cell are
 * skipped: their fetches along the row are never read. */
static void s_sweep_row_ring(const s_sweep_t *s, int64_t y0, int64_t y1)
{
    int64_t w = s->w, dx = s_dx[s->dir];
    for (int64_t y = y0; y < y1; y++) {
        const uint8_t *k = s->kind + (size_t)y * (size_t)w;
        const uint8_t *wl = s->waterline + (size_t)y * (size_t)w;
        int64_t any = 0, start = -1;
        for (int64_t x = 0; x < w; x++)
            any |= wl[x];
        if (!any)
            continue;
        for (int64_t x = 0; x < w && start < 0; x++)
            if (k[x] == TB_COAST_LAND)
                start = x;
        int64_t laps = start < 0 ? 2 : 1;
        if (start < 0)
            start = dx > 0 ? w - 1 : 0;
        uint32_t fo = s->cap, g = s->cap;
        int64_t x = start;
        for (int64_t t = 0; t < laps * w; t++) {
            /* a run of open cells with no waterline cell, up to the seam, in one step: over L
             * open cells the open run and the fetch both become min(cap, fo + L) (s_step), and
             * nothing is recorded there (docs/coast.md, "The coastal band") */
            if (k[x] == TB_COAST_OPEN && !wl[x]) {
                int64_t end = dx > 0 ? -1 : w, left = laps * w - t, n = 0;
                int64_t room = dx > 0 ? x + 1 : w - x; /* cells to the seam, this one included */
                int64_t lim = room < left ? room : left;
                while (n < lim && k[x] == TB_COAST_OPEN && !wl[x]) {
                    x -= dx;
                    n++;
                }
                uint64_t f = (uint64_t)fo + (uint64_t)n;
                fo = g = f < s->cap ? (uint32_t)f : s->cap;
                t += n - 1;
                x = x == end ? (dx > 0 ? w - 1 : 0) : x;
                continue;
            }
            /* waves from the east (dx +1): a cell needs its east neighbour first, so go west */
            uint32_t nfo, ng;
            s_step(k[x], fo, g, s->cap, &nfo, &ng);
            fo = nfo;
            g = ng;
            if (wl[x] && t >= (laps - 1) * w)
                s_record(s, x, y, g);
            x -= dx;
            x = x < 0 ? w - 1 : x >= w ? 0 : x;
        }
    }
}

/* s_step over n cells of a row whose upwind neighbours are up_fo[x], up_g[x]: written apart with
 * restrict so that the compiler can vectorise it. */
static void s_row_step(const uint8_t *restrict k, const uint32_t *restrict up_fo,
                       const uint32_t *restrict up_g, uint32_t *restrict fo, uint32_t *restrict g,
                       int64_t n, uint32_t cap)
{
    for (int64_t x = 0; x < n; x++) {
        uint32_t a = up_fo[x], b = up_g[x];
        uint32_t fo_next = a < cap ? a + 1 : cap, g_next = b < cap ? b + 1 : cap;
        uint32_t f = k[x] == TB_COAST_OPEN ? fo_next : 0;
        fo[x] = f;
        g[x] = k[x] == TB_COAST_OPEN ? f : k[x] == TB_COAST_SHALLOW ? g_next : 0;
    }
}

/* North, south and the diagonals: row by row from the Y edge the waves come from (beyond which is
 * taken as open sea), each cell reading its upwind neighbour in the previous row, X wrapping. The
 * sweep of steps [t0, t1) (step t is row h - 1 - t for waves from the north, row t otherwise)
 * starts `warm` steps earlier from the saturated state: after cap steps every value is exact
 * whatever the state it started from (a value not reset to an exact one by land, a shallow or an
 * open cell grew by a step a cell and is saturated), so bands of steps give the whole sweep's
 * values. buf: 4 w. */
static void s_sweep_rows(const s_sweep_t *s, int64_t t0, int64_t t1, uint32_t *buf)
{
    int64_t w = s->w, dx = s_dx[s->dir], dy = s_dy[s->dir];
    uint32_t *pfo = buf, *pg = buf + w, *cfo = buf + 2 * w, *cg = buf + 3 * w;
    for (int64_t x = 0; x < w; x++)
        pfo[x] = pg[x] = s->cap;
    int64_t ts = t0 - s->warm > 0 ? t0 - s->warm : 0;
    for (int64_t t = ts; t < t1; t++) {
        int64_t y = dy > 0 ? s->h - 1 - t : t;
        const uint8_t *k = s->kind + (size_t)y * (size_t)w;
        const uint8_t *wl = s->waterline + (size_t)y * (size_t)w;
        /* the interior columns without the wrap test, then the one that wraps */
        int64_t lo = dx < 0 ? 1 : 0, hi = dx > 0 ? w - 1 : w;
        s_row_step(k + lo, pfo + lo + dx, pg + lo + dx, cfo + lo, cg + lo, hi - lo, s->cap);
        if (dx != 0) {
            int64_t x = dx > 0 ? w - 1 : 0, ux = dx > 0 ? 0 : w - 1;
            s_step(k[x], pfo[ux], pg[ux], s->cap, &cfo[x], &cg[x]);
        }
        if (t >= t0)
            for (int64_t x = 0; x < w; x++)
                if (wl[x])
                    s_record(s, x, y, cg[x]);
        uint32_t *tf = pfo, *tg = pg;
        pfo = cfo;
        pg = cg;
        cfo = tf;
        cg = tg;
    }
}

typedef struct {
    const s_sweep_t *sweep;
    int64_t bands;
    uint32_t *buf; /* 4 w per band */
} s_bands_t;

static void s_band_task(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_bands_t *b = ctx;
    int64_t h = b->sweep->h, t = (int64_t)task;
    s_sweep_rows(b->sweep, h * t / b->bands, h * (t + 1) / b->bands,
                 b->buf + (size_t)task * 4 * (size_t)b->sweep->w);
}

static void s_ring_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    s_sweep_row_ring(ctx, y0, y1);
}

typedef struct {
    const uint8_t *kind;
    uint8_t *wl;
    int64_t *acc;
    int64_t w, h;
    uint8_t *near; /* w a thread */
} s_wl_t;

/* Waterline cells: sea with land among the 3 x 3 round it; acc starts at 1 on them (the sweeps add
 * (q << 8) | 1 per direction, so the low byte counts) and 0 elsewhere. */
static void s_waterline_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_wl_t *c = ctx;
    int64_t w = c->w, h = c->h;
    uint8_t *near = c->near + (size_t)thread * (size_t)w;
    for (int64_t y = y0; y < y1; y++) {
        const uint8_t *k = c->kind + (size_t)y * (size_t)w;
        /* a column OR, then a row OR */
        for (int64_t x = 0; x < w; x++) {
            uint8_t a = k[x] == TB_COAST_LAND;
            if (y > 0)
                a |= k[x - w] == TB_COAST_LAND;
            if (y + 1 < h)
                a |= k[x + w] == TB_COAST_LAND;
            near[x] = a;
        }
        uint8_t *out = c->wl + (size_t)y * (size_t)w;
        int64_t *acc = c->acc + (size_t)y * (size_t)w;
        for (int64_t x = 0; x < w; x++) {
            int64_t l = x == 0 ? w - 1 : x - 1, r = x == w - 1 ? 0 : x + 1;
            out[x] = k[x] != TB_COAST_LAND && (near[l] | near[x] | near[r]);
            acc[x] = out[x];
        }
    }
}

/* The mean over the directions, in thousandths, packed (e << 24) | 1. */
static void s_pack_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_wl_t *c = ctx;
    for (size_t i = (size_t)y0 * (size_t)c->w; i < (size_t)y1 * (size_t)c->w; i++) {
        int64_t a = c->acc[i];
        if (!a)
            continue;
        int64_t n = (a & 0xFF) - 1, sum = a >> 8;
        int64_t e = n > 0 ? (2 * sum + n) / (2 * n) : 0;
        c->acc[i] = (e << 24) | 1;
    }
}

/* Fetch exposure by directional sweeps (after the predecessor's wrap-aware fetch, docs/coast.md):
 * for each wave direction in the wave sector, the fetch of a waterline cell is the open water
 * upwind of it (steps of 1 or sqrt 2 cells) until land or an offshore shallow, capped at
 * ref_fetch_km; its exposure along the direction is fetch / ref_fetch_km, and its exposure is the
 * mean over the directions the waves reach it from (0 when none does). Every value is an exact
 * integer of the cell's upwind line, so the X seam is crossed like any column and a rolled planet
 * gives rolled exposures. Output in thousandths, packed for the carry kernel as (exposure << 24)
 * | 1. */
int tb_coast_exposure_fetch_sweeps(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                   int64_t w, int64_t h, const uint8_t *kind, int64_t *acc,
                                   const tb_coast_debug_t *debug, tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    int64_t threads =
        tb_pool_threads(pool) < TB_COAST_MAX_THREADS ? tb_pool_threads(pool) : TB_COAST_MAX_THREADS;
    uint8_t *wl = tb_malloc(cells, "coast waterline", err);
    uint32_t *buf =
        wl ? tb_malloc((size_t)threads * 4 * (size_t)w * sizeof *buf, "coast fetch rows", err)
           : NULL;
    if (!buf) {
        free(wl);
        return -1;
    }
    /* the waterline's scratch rows are the fetch rows' first bytes: used before the sweeps */
    s_wl_t c = {kind, wl, acc, w, h, (uint8_t *)buf};
    tb_coast_par_rows(pool, h, s_waterline_rows, &c);
    double ref_m = p->ref_fetch_km * 1000.0;
    unsigned wave_mask = tb_coast_wave_mask(p);
    for (int d = 0; d < TB_COAST_DIRECTIONS; d++) {
        if (!(wave_mask & (1u << d)))
            continue;
        double step_m = cell_m * ((s_dx[d] && s_dy[d]) ? sqrt(2.0) : 1.0);
        double cap = ceil(ref_m / step_m);
        uint32_t cap_steps = cap > 4e9 ? 4000000000u : (uint32_t)cap;
        s_sweep_t s = {kind, wl, w, h, d, cap_steps, step_m, ref_m, acc, (int64_t)cap_steps + 2};
        if (debug && debug->short_warmup)
            s.warm = s.warm / 2; /* the negative control: too few steps to forget the start */
        if (s_dy[d] == 0) {
            tb_coast_par_rows(pool, h, s_ring_rows, &s);
            continue;
        }
        /* bands of at least twice the warm-up, one a thread */
        int64_t bands = threads, least = 2 * ((int64_t)cap_steps + 2);
        if (bands > h / least)
            bands = h / least;
        if (bands < 1)
            bands = 1;
        s_bands_t b = {&s, bands, buf};
        tb_pool_run(pool, (size_t)bands, s_band_task, &b);
    }
    free(buf);
    free(wl);
    tb_coast_par_rows(pool, h, s_pack_rows, &c);
    return 0;
}
