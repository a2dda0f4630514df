/* Sediment: the surf's cut and the rivers' supply, drifted along the shore and laid in sheltered
 * shallows as beaches and deltas (docs/coast.md, "Sediment"). Typical sizes: sources on a few per
 * cent of a planet's cells, four box sums of the whole planet. The invariant is the budget:
 * laid + unplaced = cut + river supply, every unit accounted for, whatever the planet. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/methods.h"

/* The second drift, of what the first could not lay, reaches this many times further. */
#define S_SECOND_REACH 3

typedef struct {
    const tb_coast_params_t *p;
    double cell_m;
    const uint8_t *kind;
    const uint32_t *d2;
    const uint16_t *exposure;
    const float *height_m;
    const float *moved_m;
    /* the delta stretch of the deposit reach; NULL: 1. Read only in the blocks whose largest
     * stretch (band->stretch_max) is over 1: elsewhere it is 1 and may not be written */
    const float *stretch;
    uint32_t reach_d2; /* no cell past this squared distance is within the stretched reach */
    const tb_coast_band_t *band;
    uint32_t *block_d2; /* per block of the band, the same for its largest stretch; 0: none */
} s_site_t;

/* The deposition weight of cell i in thousandths (0: no room for sediment there) and its room,
 * metres. A shallow within deposit_reach_m of the waterline may fill from its floor towards the
 * beach profile berm_m - beach_slope * dist by its shelter weight, max(shelter_floor,
 * 1 - exposure): a sheltered one up to the profile, an exposed one a shelter_floor share of the
 * way, since the waves winnow an open beach (real exposed coasts have beaches, with less sand than
 * the bay next door). Near a river mouth the reach and the profile stretch seaward with the river's
 * supply (tb_coast_delta_stretch): the delta's fan. The weight is the same shelter times a nearness
 * that falls from 1 at the waterline to 0.1 at deposit_reach_m, so sediment goes to bays first and
 * lies against the shore, thinning seaward like a shoreface. */
static int64_t s_weight_near(const s_site_t *s, const float *stretch_at, size_t i, double *room_m);

/* stretch_at: the stretch, or NULL where it is 1 (a block whose largest stretch is 1) */
static inline int64_t s_weight(const s_site_t *s, const float *stretch_at, size_t i,
                               uint32_t reach_d2, double *room_m)
{
    /* land and the sea beyond the block's widest reach, most of a planet, without a call */
    *room_m = 0;
    if (s->kind[i] == TB_COAST_LAND || s->d2[i] > reach_d2)
        return 0;
    return s_weight_near(s, stretch_at, i, room_m);
}

static int64_t s_weight_near(const s_site_t *s, const float *stretch_at, size_t i, double *room_m)
{
    double dist = tb_coast_waterline_m(s->d2[i], s->cell_m);
    double stretch = stretch_at ? (double)stretch_at[i] : 1.0;
    double reach = s->p->deposit_reach_m * stretch;
    if (dist > reach)
        return 0;
    double e =
        s->exposure[i] == TB_COAST_NO_EXPOSURE ? 0 : s->exposure[i] / (double)TB_COAST_EXPOSURE_ONE;
    double shelter = 1 - e;
    if (shelter < s->p->shelter_floor)
        shelter = s->p->shelter_floor;
    /* a river-dominated delta: where the rivers' supply within the bell reaches delta_ref_m3 the
     * waves winnow none of it, below that in proportion (stretch - 1 is that supply over
     * delta_ref_m3) */
    if (stretch - 1 > shelter)
        shelter = stretch - 1 < 1 ? stretch - 1 : 1;
    double profile = s->p->berm_m - s->p->beach_slope * (dist > 0 ? dist : 0) / stretch;
    double floor0 = (double)s->height_m[i] - (double)s->moved_m[i]; /* before any deposit */
    double room = floor0 + (profile - floor0) * shelter - (double)s->height_m[i];
    if (!(room > 0))
        return 0;
    *room_m = room;
    /* nearer the waterline first: the weight falls linearly to a tenth at the deposit reach */
    double nearness = 1 - 0.9 * (dist > 0 ? dist : 0) / reach;
    int64_t wq = (int64_t)floor(shelter * nearness * 1000 + 0.5);
    return wq > 0 ? wq : 1;
}

typedef struct {
    double laid, full, remainder; /* units */
    int64_t no_room;              /* units */
} s_tally_t;

/* The shared state of one drift's parallel loops. Per chunk of rows: the tallies (doubles, summed
 * in chunk order afterwards, so any number of threads gives the same bits) and the source totals.
 */
typedef struct {
    const s_site_t *site;
    int64_t w;
    int64_t *src, *work;
    float *height_m, *moved_m;
    int bits;
    bool last;
    s_tally_t *chunk;
    int64_t *total;
    /* every cell's weight and room as s_weight gave them before the shares: the deposition reads
     * them back (nothing between changes a height), rather than computing them again */
    uint16_t *wq;
    double *room;
    /* per block of the band: 1 where a source lies, then where one lies within the drift's reach
     * (s_near_sources) */
    uint8_t *near;
} s_drift_t;

/* The sources' total per chunk, and which blocks hold one (a chunk of rows is a row of blocks). */
static void s_total_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_drift_t *d = ctx;
    int64_t t = 0, bw = d->site->band->bw;
    uint8_t *near = d->near + chunk * (size_t)bw;
    memset(near, 0, (size_t)bw);
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < bw; bx++) {
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < d->w ? x0 + TB_COAST_BAND_BLOCK : d->w;
            const int64_t *src = d->src + (size_t)y * (size_t)d->w;
            uint64_t any = 0;
            for (int64_t x = x0; x < x1; x++) {
                t += src[x];
                any |= (uint64_t)src[x];
            }
            near[bx] |= any != 0;
        }
    d->total[chunk] = t;
}

/* The blocks within `reach` blocks (Chebyshev, X wrapping) of a block holding a source, in place:
 * a row dilation then a column one. */
static int s_near_sources(uint8_t *near, int64_t bw, int64_t bh, int64_t reach, tb_err_t *err)
{
    uint8_t *tmp = tb_malloc((size_t)bw * (size_t)bh, "coast drift blocks", err);
    if (!tmp)
        return -1;
    for (int64_t by = 0; by < bh; by++)
        for (int64_t bx = 0; bx < bw; bx++) {
            uint8_t a = 0;
            if (2 * reach + 1 >= bw) {
                for (int64_t k = 0; k < bw && !a; k++)
                    a = near[(size_t)by * (size_t)bw + (size_t)k];
            } else {
                for (int64_t k = bx - reach; k <= bx + reach && !a; k++)
                    a = near[(size_t)by * (size_t)bw + (size_t)tb_wrap(k, bw)];
            }
            tmp[(size_t)by * (size_t)bw + (size_t)bx] = a;
        }
    for (int64_t by = 0; by < bh; by++)
        for (int64_t bx = 0; bx < bw; bx++) {
            uint8_t a = 0;
            for (int64_t k = by - reach > 0 ? by - reach : 0; k <= by + reach && k < bh && !a; k++)
                a = tmp[(size_t)k * (size_t)bw + (size_t)bx];
            near[(size_t)by * (size_t)bw + (size_t)bx] = a;
        }
    free(tmp);
    return 0;
}

/* Every cell's weight. A block whose cells are all past its largest stretched reach has none
 * (s_weight gives 0 past it), and its room is never read (s_lay reads it only under a weight). */
static void s_weight_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_drift_t *d = ctx;
    const s_site_t *site = d->site;
    const tb_coast_band_t *band = site->band;
    for (int64_t y = y0; y < y1; y++) {
        size_t row = (size_t)y * (size_t)d->w;
        const uint32_t *block_d2 =
            site->block_d2 + (size_t)(y / TB_COAST_BAND_BLOCK) * (size_t)band->bw;
        for (int64_t bx = 0; bx < band->bw; bx++) {
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < d->w ? x0 + TB_COAST_BAND_BLOCK : d->w;
            uint32_t reach_d2 = block_d2[bx];
            if (!reach_d2 ||
                !d->near[(size_t)(y / TB_COAST_BAND_BLOCK) * (size_t)band->bw + (size_t)bx]) {
                memset(d->work + row + x0, 0, (size_t)(x1 - x0) * sizeof *d->work);
                memset(d->wq + row + x0, 0, (size_t)(x1 - x0) * sizeof *d->wq);
                continue;
            }
            size_t b = (size_t)(y / TB_COAST_BAND_BLOCK) * (size_t)band->bw + (size_t)bx;
            const float *st = site->stretch && band->stretch_max[b] > 1 ? site->stretch : NULL;
            for (size_t i = row + (size_t)x0; i < row + (size_t)x1; i++) {
                int64_t wq = s_weight(site, st, i, reach_d2, &d->room[i]);
                d->work[i] = wq;
                d->wq[i] = (uint16_t)wq;
            }
        }
    }
}

/* shares: src becomes q = floor(src 2^bits / Wt) */
static void s_share_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_drift_t *d = ctx;
    s_tally_t *t = &d->chunk[chunk];
    int64_t *src = d->src, *work = d->work;
    for (size_t i = (size_t)y0 * (size_t)d->w; i < (size_t)y1 * (size_t)d->w; i++) {
        if (!src[i])
            continue;
        if (work[i] <= 0) {
            t->no_room += src[i];
            src[i] = 0;
            continue;
        }
        int64_t num = src[i] << d->bits;
        int64_t q = num / work[i];
        t->remainder += (double)(num - q * work[i]) / (double)((int64_t)1 << d->bits);
        src[i] = q;
    }
}

/* Lays cell i's share, what fits its room; returns whether it laid a unit or more. */
static inline bool s_lay(const s_drift_t *d, size_t i, s_tally_t *t, bool *leak)
{
    int64_t *src = d->src;
    int64_t wq = src[i] ? d->wq[i] : 0;
    double dep = (double)wq * (double)src[i] / (double)((int64_t)1 << d->bits);
    src[i] = 0;
    if (!wq || !(dep > 0))
        return false;
    double room = d->room[i];
    double fit = room / TB_COAST_UNIT_M;
    double lay = dep < fit ? dep : fit;
    if (leak && *leak && lay >= 1) {
        *leak = false; /* the negative control: this cell's deposit (a unit or more) vanishes */
        return true;
    }
    t->laid += lay;
    double dh = lay * TB_COAST_UNIT_M;
    d->height_m[i] = (float)((double)d->height_m[i] + dh);
    d->moved_m[i] = (float)((double)d->moved_m[i] + dh);
    double over = dep - lay;
    if (d->last) {
        t->full += over;
        return lay >= 1;
    }
    int64_t whole = (int64_t)floor(over);
    src[i] = whole;
    t->remainder += over - (double)whole;
    return lay >= 1;
}

static void s_lay_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_drift_t *d = ctx;
    s_tally_t *t = &d->chunk[chunk];
    const s_site_t *site = d->site;
    const tb_coast_band_t *band = site->band;
    for (int64_t y = y0; y < y1; y++) {
        size_t row = (size_t)y * (size_t)d->w;
        const uint32_t *block_d2 =
            site->block_d2 + (size_t)(y / TB_COAST_BAND_BLOCK) * (size_t)band->bw;
        for (int64_t bx = 0; bx < band->bw; bx++) {
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < d->w ? x0 + TB_COAST_BAND_BLOCK : d->w;
            if (!block_d2[bx]) {
                /* no weight in the block: s_lay would only clear the shares */
                memset(d->src + row + x0, 0, (size_t)(x1 - x0) * sizeof *d->src);
                continue;
            }
            for (size_t i = row + (size_t)x0; i < row + (size_t)x1; i++)
                if (d->src[i])
                    s_lay(d, i, t, NULL);
        }
    }
}

/* One drift of the units in src over a box of radius r, laying what fits. On return src holds the
 * whole units that did not fit (to drift again), their fractions counted in t->remainder. The
 * loops run over chunks of rows on the pool; the tallies are summed in chunk order. */
static int s_drift(tb_pool_t *pool, const s_site_t *site, int64_t w, int64_t h, int64_t r,
                   int64_t *src, int64_t *work, float *height_m, float *moved_m, bool *leak,
                   bool last, s_tally_t *t, tb_err_t *err)
{
    size_t n_chunks = tb_coast_chunks(h);
    s_tally_t *chunk = tb_calloc(n_chunks, sizeof *chunk, "coast drift tallies", err);
    int64_t *totals = chunk ? tb_calloc(n_chunks, sizeof *totals, "coast drift totals", err) : NULL;
    size_t cells = (size_t)w * (size_t)h;
    uint16_t *wq = totals ? tb_malloc(cells * sizeof *wq, "coast drift weights", err) : NULL;
    double *room = wq ? tb_malloc(cells * sizeof *room, "coast drift room", err) : NULL;
    uint8_t *near = room ? tb_malloc((size_t)site->band->bw * (size_t)site->band->bh,
                                     "coast drift "
                                     "sources",
                                     err)
                         : NULL;
    if (!near) {
        free(chunk);
        free(totals);
        free(wq);
        free(room);
        return -1;
    }
    s_drift_t d = {site, w, src, work, height_m, moved_m, 0, last, chunk, totals, wq, room, near};
    tb_coast_par_rows(pool, h, s_total_rows, &d);
    int64_t total = 0;
    for (size_t c = 0; c < n_chunks; c++)
        total += totals[c];
    free(totals);
    d.total = NULL;
    int rc = -1;
    if (total == 0) {
        rc = 0;
        goto done;
    }
    /* Shares in fixed point with as many bits as total << bits < 2^61 allows. On a cell that can
     * take sediment (w >= 1) the summed shares are at most total << bits, because
     * Wt(s) >= K(c - s) w(c) >= K(c - s) for every source s; elsewhere the sums may wrap, which the
     * unsigned box arithmetic allows and nothing reads. The remainder of a share is at most
     * Wt / 2^bits units, a small part of the budget, and counted. */
    int len = 64 - __builtin_clzll((unsigned long long)total);
    d.bits = 61 - len;
    if (d.bits < 0) {
        tb_err_set(err, TB_E_INVALID, "coast: %lld units of sediment are over 2^61",
                   (long long)total);
        goto done;
    }
    /* A weight is read only within the tent's support (2 ceil(r / 2) cells) of a source: in the
     * sum Wt at the source and where the shares land. Past it no weight is needed (docs/coast.md,
     * "The coastal band"); in blocks, that support is at most support / block + 2 blocks. */
    if (s_near_sources(near, site->band->bw, site->band->bh,
                       2 * ((r + 1) / 2) / TB_COAST_BAND_BLOCK + 2, err) != 0)
        goto done;
    tb_coast_par_rows(pool, h, s_weight_rows, &d);
    if (tb_coast_tentsum_i64(pool, work, w, h, r, err) != 0)
        goto done;
    tb_coast_par_rows(pool, h, s_share_rows, &d);
    if (tb_coast_tentsum_i64(pool, src, w, h, r, err) != 0)
        goto done;
    if (*leak) {
        /* the negative control runs in row-major order on the calling thread: the first cell that
         * lays a unit loses it, the same cell whatever the threads */
        for (size_t i = 0; i < cells; i++)
            if (src[i])
                s_lay(&d, i, &chunk[(size_t)(i / (size_t)w) / TB_COAST_CHUNK_ROWS], leak);
    } else {
        tb_coast_par_rows(pool, h, s_lay_rows, &d);
    }
    for (size_t c = 0; c < n_chunks; c++) {
        t->laid += chunk[c].laid;
        t->full += chunk[c].full;
        t->remainder += chunk[c].remainder;
        t->no_room += chunk[c].no_room;
    }
    rc = 0;
done:
    free(chunk);
    free(wq);
    free(room);
    free(near);
    return rc;
}

/* The weight at the centre of `passes` 1-D boxes of half-width `half` convolved: the number of ways
 * `passes` offsets in [-half, half] add up to 0. */
static int64_t s_centre_weight_1d(int64_t half, int passes)
{
    int64_t n = 2 * half * passes + 1, *a = calloc((size_t)n, sizeof *a),
            *b = calloc((size_t)n, sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return 1;
    }
    a[half * passes] = 1;
    for (int k = 0; k < passes; k++) {
        for (int64_t i = 0; i < n; i++) {
            b[i] = 0;
            for (int64_t d = -half; d <= half; d++)
                if (i + d >= 0 && i + d < n)
                    b[i] += a[i + d];
        }
        int64_t *t = a;
        a = b;
        b = t;
    }
    int64_t c = a[half * passes];
    free(a);
    free(b);
    return c;
}

/* Delta stretch: a mouth's supply pushes its shoreface out. The river units, in quanta of
 * delta_ref_m3 / 2^24, are averaged over two tents of half the bell's radius (four boxes: a bell
 * whose level sets are nearly round, so a lobe does not come out square), each tent an exact
 * integer sum floor-divided by its weight (a rolled planet gives a rolled field; the division keeps
 * the sums inside int64 whatever the bell's radius, and one quantum is a sixteen-millionth of
 * delta_ref_m3, so the floors lose nothing the stretch can show), and read in m3 as that bell
 * weighs them (a mouth at the cell counts whole, one past the bell's radius not at all); the
 * stretch is 1 + that volume / delta_ref_m3, at most TB_COAST_MAX_STRETCH. The bell's radius is the
 * second drift's (S_SECOND_REACH drift radii), so a large mouth's lobe reaches as far as its
 * sediment drifts. A cell is clamped to 2^34 quanta (1024 delta_ref_m3, far past the most the
 * stretch takes) or less for a bell so wide that its tent could overflow. Pointwise after the sums;
 * deterministic.
 *
 * The mouths are a few per million cells, so the first tent is not summed over the planet but
 * splatted: the tent is separable, k(dx) k(y, y_m) with k the box of radius b twice along one axis
 * (X wrapping: the count of columns within b of both; Y: of the rows of the planet within b of
 * both, the zero padding of the two boxes), so each mouth adds q k k over its (4b + 1)^2 cells,
 * exactly the integers the two box sums gave. The second tent is the box sums' (its input fills the
 * mouths' squares), and the stretch is computed only in the blocks within its reach of a mouth
 * (elsewhere it is 1: those blocks' largest stretch is 1 and the deposition reads 1 there without
 * the array). */
typedef struct {
    int64_t *river;
    float *stretch;
    int64_t w, h;
    int64_t weight; /* a tent's total weight */
    double to_ref;  /* quanta of the bell's mean to multiples of delta_ref_m3 */
    tb_coast_band_t *band;
    /* the splat: mouths sorted by row, their columns, quanta; the X kernel over n_x offsets from
     * x0_off; the box radius */
    const int64_t *my, *mx, *mq;
    size_t n;
    const uint64_t *kx;
    int64_t x0_off, n_x, b;
    const uint8_t *near; /* per block: within the second tent's reach of a mouth */
} s_stretch_t;

/* Rows [y0, y1) of the first tent: every mouth within 2b rows adds q k(dx) k(y, y_m). */
static void s_splat_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_stretch_t *c = ctx;
    int64_t w = c->w, b = c->b;
    /* the first mouth within reach of row y0 (sorted by row) */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->my[mid] < y0 - 2 * b)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int64_t y = y0; y < y1; y++) {
        uint64_t *row = (uint64_t *)c->river + (size_t)y * (size_t)w;
        for (size_t m = lo; m < c->n && c->my[m] <= y + 2 * b; m++) {
            int64_t ym = c->my[m];
            /* the rows of the planet within b of both y and ym */
            int64_t a0 = (y > ym ? y : ym) - b, a1 = (y < ym ? y : ym) + b;
            a0 = a0 > 0 ? a0 : 0;
            a1 = a1 < c->h - 1 ? a1 : c->h - 1;
            if (a1 < a0)
                continue;
            uint64_t q = (uint64_t)c->mq[m] * (uint64_t)(a1 - a0 + 1);
            int64_t x = tb_wrap(c->mx[m] + c->x0_off, w);
            const uint64_t *k = c->kx;
            int64_t n = c->n_x;
            /* up to the seam, then from column 0 */
            while (n > 0) {
                int64_t run = w - x < n ? w - x : n;
                for (int64_t o = 0; o < run; o++)
                    row[x + o] += q * k[o];
                k += run;
                n -= run;
                x = 0;
            }
        }
    }
}

/* The first tent's mean, in the blocks near a mouth (the tent is zero elsewhere). */
static void s_mean_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_stretch_t *c = ctx;
    int64_t bw = (c->w + TB_COAST_BAND_BLOCK - 1) / TB_COAST_BAND_BLOCK;
    const uint8_t *near = c->near + chunk * (size_t)bw;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < bw; bx++) {
            if (!near[bx])
                continue;
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < c->w ? x0 + TB_COAST_BAND_BLOCK : c->w;
            int64_t *v = c->river + (size_t)y * (size_t)c->w;
            for (int64_t x = x0; x < x1; x++)
                if (v[x])
                    v[x] /= c->weight;
        }
}

/* The second tent's mean and the stretch, and each block's largest stretch (a chunk of rows is a
 * row of blocks), in the blocks near a mouth; elsewhere the largest is 1 and nothing is written. */
static void s_stretch_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_stretch_t *c = ctx;
    int64_t bw = (c->w + TB_COAST_BAND_BLOCK - 1) / TB_COAST_BAND_BLOCK;
    float *max = c->band ? c->band->stretch_max + chunk * (size_t)bw : NULL;
    const uint8_t *near = c->near + chunk * (size_t)bw;
    for (int64_t bx = 0; max && bx < bw; bx++)
        max[bx] = 1;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < bw; bx++) {
            if (!near[bx])
                continue;
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < c->w ? x0 + TB_COAST_BAND_BLOCK : c->w;
            float m = 1;
            for (size_t i = (size_t)y * (size_t)c->w + (size_t)x0;
                 i < (size_t)y * (size_t)c->w + (size_t)x1; i++) {
                int64_t v = c->river[i] ? c->river[i] / c->weight : 0;
                double s = 1 + (double)v * c->to_ref;
                float f = (float)(s < TB_COAST_MAX_STRETCH ? s : TB_COAST_MAX_STRETCH);
                c->stretch[i] = f;
                m = f > m ? f : m;
            }
            if (max && m > max[bx])
                max[bx] = m;
        }
}

static int s_by_cell(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x > y) - (x < y);
}

int tb_coast_delta_stretch(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m, int64_t w,
                           int64_t h, const int64_t *mouths, size_t n_mouths, int64_t *river,
                           float *stretch, tb_coast_band_t *band, tb_err_t *err)
{
    int64_t r = S_SECOND_REACH * tb_coast_radius_cells(p->drift_km * 1000.0, cell_m);
    int64_t half_r = (r + 1) / 2, box = (half_r + 1) / 2;
    if (2 * box + 1 > w)
        return tb_err_set(err, TB_E_INVALID,
                          "coast: a box of radius %lld cells is wider than the "
                          "planet's %lld columns",
                          (long long)box, (long long)w);
    double side = (double)(2 * box + 1), tent = side * side * side * side;
    double quanta_per_ref = 16777216.0;                       /* 2^24 */
    double clamp = fmin(17179869184.0, floor(4.6e18 / tent)); /* 2^34, or what fits 2^62 */
    int64_t c1 = s_centre_weight_1d(box, 4);
    double unit_q = TB_COAST_UNIT_M * cell_m * cell_m / p->delta_ref_m3 * quanta_per_ref;
    int64_t clamp_q = clamp >= 1 ? (int64_t)clamp : 1;
    int64_t bw = (w + TB_COAST_BAND_BLOCK - 1) / TB_COAST_BAND_BLOCK,
            bh = (h + TB_COAST_BAND_BLOCK - 1) / TB_COAST_BAND_BLOCK;
    /* the X kernel: offsets -2b .. 2b, or every column when that wraps onto itself; the count of
     * columns within b of both ends, over every way the offset wraps */
    int64_t n_x = 4 * box + 1 < w ? 4 * box + 1 : w, x0_off = 4 * box + 1 < w ? -2 * box : 0;
    size_t n_pairs = n_mouths;
    int64_t *pairs = tb_malloc((n_pairs ? n_pairs : 1) * 2 * sizeof *pairs, "coast mouths", err);
    int64_t *rows =
        pairs ? tb_malloc((n_pairs ? n_pairs : 1) * 3 * sizeof *rows, "coast mouth rows", err)
              : NULL;
    uint64_t *kx = rows ? tb_malloc((size_t)n_x * sizeof *kx, "coast bell kernel", err) : NULL;
    uint8_t *near = kx ? tb_calloc((size_t)bw * (size_t)bh, 1, "coast bell blocks", err) : NULL;
    if (!near) {
        free(pairs);
        free(rows);
        free(kx);
        return -1;
    }
    for (int64_t o = 0; o < n_x; o++) {
        int64_t k = 0;
        for (int64_t j = -2; j <= 2; j++) {
            int64_t d = llabs(x0_off + o + j * w);
            k += d <= 2 * box ? 2 * box + 1 - d : 0;
        }
        kx[o] = (uint64_t)k;
    }
    /* the units of each cell (mouths sharing a cell add up), in quanta, ordered by row */
    memcpy(pairs, mouths, n_pairs * 2 * sizeof *pairs);
    qsort(pairs, n_pairs, 2 * sizeof *pairs, s_by_cell);
    size_t n = 0;
    for (size_t k = 0; k < n_pairs;) {
        int64_t cell = pairs[2 * k], units = 0;
        for (; k < n_pairs && pairs[2 * k] == cell; k++)
            units += pairs[2 * k + 1];
        if (!units)
            continue;
        double q = floor((double)units * unit_q);
        int64_t qi = q >= (double)clamp_q ? clamp_q : (int64_t)q;
        if (!qi)
            continue;
        rows[n] = cell / w;
        rows[n_pairs + n] = cell % w;
        rows[2 * n_pairs + n] = qi;
        n++;
    }
    /* sorted by cell, so by row; the blocks within the second tent's reach (4b) of a mouth */
    for (size_t m = 0; m < n; m++) {
        int64_t by0 = rows[m] - 4 * box, by1 = rows[m] + 4 * box;
        by0 = (by0 > 0 ? by0 : 0) / TB_COAST_BAND_BLOCK;
        by1 = (by1 < h - 1 ? by1 : h - 1) / TB_COAST_BAND_BLOCK;
        /* the columns x_m - 4b .. x_m + 4b, wrapped: up to the seam, then from column 0 */
        int64_t span = 8 * box + 1 < w ? 8 * box + 1 : w;
        int64_t x = span == w ? 0 : tb_wrap(rows[n_pairs + m] - 4 * box, w);
        while (span > 0) {
            int64_t e = x + span - 1 < w - 1 ? x + span - 1 : w - 1;
            for (int64_t by = by0; by <= by1; by++)
                memset(near + (size_t)by * (size_t)bw + (size_t)(x / TB_COAST_BAND_BLOCK), 1,
                       (size_t)(e / TB_COAST_BAND_BLOCK - x / TB_COAST_BAND_BLOCK + 1));
            span -= e - x + 1;
            x = 0;
        }
    }
    s_stretch_t c = {river,
                     stretch,
                     w,
                     h,
                     (int64_t)tent,
                     tent * tent / ((double)c1 * (double)c1) / quanta_per_ref,
                     band,
                     rows,
                     rows + n_pairs,
                     rows + 2 * n_pairs,
                     n,
                     kx,
                     x0_off,
                     n_x,
                     box,
                     near};
    memset(river, 0, (size_t)w * (size_t)h * sizeof *river);
    tb_coast_par_rows(pool, h, s_splat_rows, &c);
    tb_coast_par_rows(pool, h, s_mean_rows, &c);
    int rc = tb_coast_tentsum_i64(pool, river, w, h, half_r, err);
    if (rc == 0)
        tb_coast_par_rows(pool, h, s_stretch_rows, &c);
    free(pairs);
    free(rows);
    free(kx);
    free(near);
    return rc;
}

/* Drift by symmetric redistribution, then deposition in the sheltered shallows (after the
 * predecessor's drift kernel, docs/coast.md). With K the tent of radius drift_km (X wraps, Y
 * zero-padded) and w the deposition weights, each source s shares its units over the cells c of its
 * box in proportion to w(c): c receives w(c) src(s) / Wt(s), Wt = K * w. Summed over sources that
 * is deposit = w . K * (src / Wt), and because K is symmetric the shares of every source add up to
 * its units exactly; a source with no weighted cell in its box is unplaced. The shares src / Wt are
 * fixed point with exact integer box sums (so a rolled planet gives rolled deposits to the bit),
 * and their remainder is counted as unplaced too. A cell lays what fits its room (s_weight); what
 * does not fit drifts once more over a box three times wider, to the shallows that still have room,
 * and what fits nowhere then is unplaced (the shallows were full). Units: TB_COAST_UNIT_M over one
 * cell; the statistics in m3, summed as doubles in row-major order. */
typedef struct {
    const uint8_t *kind;
    const float *height_m, *moved_m;
    int64_t w;
    int64_t *beach; /* per thread */
} s_beach_t;

static void s_beach_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_beach_t *c = ctx;
    int64_t n = 0;
    for (size_t i = (size_t)y0 * (size_t)c->w; i < (size_t)y1 * (size_t)c->w; i++)
        n += c->kind[i] != TB_COAST_LAND && c->moved_m[i] > 0 && c->height_m[i] > 0;
    c->beach[thread] += n;
}

int tb_coast_sediment_drift_deposit(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                    int64_t w, int64_t h, const uint8_t *kind, const uint32_t *d2,
                                    const uint16_t *exposure, const float *stretch, int64_t *src,
                                    int64_t *work, float *height_m, float *moved_m,
                                    const tb_coast_band_t *band, tb_coast_stats_t *s,
                                    const tb_coast_debug_t *debug, tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    double unit_m3 = TB_COAST_UNIT_M * cell_m * cell_m;
    int64_t total = 0;
    for (size_t i = 0; i < cells; i++) {
        if (src[i] < 0 || src[i] > ((int64_t)1 << 61) - total)
            return tb_err_set(err, TB_E_INVALID,
                              "coast: the sediment sources (%lld units at cell "
                              "%zu) exceed 2^61 units of %g m3",
                              (long long)src[i], i, unit_m3);
        total += src[i];
    }
    int64_t r = tb_coast_radius_cells(p->drift_km * 1000.0, cell_m);
    double reach_cells = p->deposit_reach_m * (stretch ? TB_COAST_MAX_STRETCH : 1) / cell_m + 1.5;
    s_site_t site = {p,       cell_m,   kind,
                     d2,      exposure, height_m,
                     moved_m, stretch,  (uint32_t)fmin(4e9, ceil(reach_cells * reach_cells)),
                     band,    NULL};
    /* per block of the band, the squared distance past which none of its cells is within its
     * stretched reach (its largest stretch, the same margin as reach_d2), or 0 when the block is
     * too far from the waterline for any (docs/coast.md, "The coastal band") */
    size_t n_blocks = (size_t)band->bw * (size_t)band->bh;
    uint32_t *block_d2 = tb_malloc(n_blocks * sizeof *block_d2, "coast band reach", err);
    if (!block_d2)
        return -1;
    for (size_t b = 0; b < n_blocks; b++) {
        double st = stretch ? (double)band->stretch_max[b] : 1.0;
        double cells_b = p->deposit_reach_m * st / cell_m + 1.5;
        uint32_t d2b = (uint32_t)fmin(4e9, ceil(cells_b * cells_b));
        if (d2b > site.reach_d2)
            d2b = site.reach_d2;
        block_d2[b] = band->dist[b] <= tb_coast_band_blocks(d2b) ? d2b : 0;
    }
    site.block_d2 = block_d2;
    s_tally_t t = {0, 0, 0, 0};
    bool leak = debug && debug->leak_one_deposit;
    int rc = s_drift(pool, &site, w, h, r, src, work, height_m, moved_m, &leak, false, &t, err);
    if (rc == 0)
        rc = s_drift(pool, &site, w, h, S_SECOND_REACH * r, src, work, height_m, moved_m, &leak,
                     true, &t, err);
    free(block_d2);
    if (rc != 0)
        return -1;
    int64_t beaches[TB_COAST_MAX_THREADS] = {0}, beach = 0;
    s_beach_t bc = {kind, height_m, moved_m, w, beaches};
    tb_coast_par_rows(pool, h, s_beach_rows, &bc);
    for (int k = 0; k < TB_COAST_MAX_THREADS; k++)
        beach += beaches[k];
    s->laid_m3 = t.laid * unit_m3;
    s->unplaced_no_shallows_m3 = (double)t.no_room * unit_m3;
    s->unplaced_full_m3 = t.full * unit_m3;
    s->unplaced_rounding_m3 = t.remainder * unit_m3;
    s->unplaced_m3 = s->unplaced_no_shallows_m3 + s->unplaced_full_m3 + s->unplaced_rounding_m3;
    s->beach_m2 = (double)beach * cell_m * cell_m;
    return 0;
}
