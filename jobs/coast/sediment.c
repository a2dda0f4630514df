/* Sediment: the surf's cut and the rivers' supply, drifted along the shore and laid in sheltered
 * shallows as beaches and deltas (docs/coast.md, "Sediment"). Typical sizes: sources on a few per
 * cent of a planet's cells, four tent sums of the coastal band, about 1500 river mouths on a 76 M
 * cell planet. The invariant is the budget: laid + unplaced = cut + river supply, every unit
 * accounted for, whatever the planet. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/divide.h"
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
    /* max(shelter_floor, 1 - e / TB_COAST_EXPOSURE_ONE) for every exposure e up to one, and at
     * TB_COAST_EXPOSURE_ONE + 1 for no exposure (e = 0) */
    const double *shelter_of;
    /* beach_slope x max(0, the waterline distance) for every d2 < slope_n (the profile's distance
     * term, the same double s_slope_term gives) */
    const double *slope_of;
    /* berm_m - slope_of[d2]: the profile where the stretch is 1 */
    const double *profile_of;
    uint32_t slope_n;
} s_site_t;

/* The beach profile's distance term at squared distance d2: beach_slope x max(0, dist). */
static double s_slope_term(const tb_coast_params_t *p, double cell_m, uint32_t d2)
{
    double dist = tb_coast_waterline_m(d2, cell_m);
    return p->beach_slope * (dist > 0 ? dist : 0);
}

/* The beach profile of cell i, metres: berm_m - beach_slope x its distance over its stretch (st:
 * the stretch, or NULL where it is 1). Not kept per cell (8 bytes a cell of the pass's peak): the
 * distance term comes from a table by d2, and a division by a stretch of 1 is skipped, which is
 * exact. */
static inline double s_profile(const s_site_t *s, const float *stretch_at, size_t i)
{
    uint32_t d2 = s->d2[i];
    if (!stretch_at && d2 < s->slope_n)
        return s->profile_of[d2];
    double term = d2 < s->slope_n ? s->slope_of[d2] : s_slope_term(s->p, s->cell_m, d2);
    return stretch_at ? s->p->berm_m - term / (double)stretch_at[i] : s->p->berm_m - term;
}

/* The deposition weight of cell i in thousandths (0: no room for sediment there) and its room,
 * metres. A shallow within deposit_reach_m of the waterline may fill from its floor towards the
 * beach profile berm_m - beach_slope * dist by its shelter weight, max(shelter_floor,
 * 1 - exposure): a sheltered one up to the profile, an exposed one a shelter_floor share of the
 * way, since the waves winnow an open beach (real exposed coasts have beaches, with less sand than
 * the bay next door). Near a river mouth the reach and the profile stretch seaward with the river's
 * supply (tb_coast_delta_stretch): the delta's fan. The weight is the same shelter times a nearness
 * that falls from 1 at the waterline to 0.1 at deposit_reach_m, so sediment goes to bays first and
 * lies against the shore, thinning seaward like a shoreface.
 *
 * In two parts: the place (s_place_near, for a sea cell within the block's widest reach: land and
 * the sea beyond are 0), what does not depend on the heights (the weight where there is room),
 * computed once for both drifts, and s_room_of, the room over the cell's heights as they are when a
 * drift weighs it, from the profile (s_profile) and the shelter (s_shelter, the same the place
 * used): the weight is the place where the room is > 0, else 0. Returns the shelter in *shelter
 * when the place is not 0. */
static inline uint16_t s_place_near(const s_site_t *s, const float *stretch_at, size_t i,
                                    double *shelter);

/* The shelter of cell i (stretch_at: the stretch, or NULL where it is 1): max(shelter_floor,
 * 1 - exposure), and near a mouth at least stretch - 1 (at most 1). */
static inline double s_shelter(const s_site_t *s, const float *stretch_at, size_t i)
{
    uint16_t x = s->exposure[i];
    double shelter;
    if (x <= TB_COAST_EXPOSURE_ONE) {
        shelter = s->shelter_of[x];
    } else if (x == TB_COAST_NO_EXPOSURE) {
        shelter = s->shelter_of[TB_COAST_EXPOSURE_ONE + 1];
    } else {
        shelter = 1 - x / (double)TB_COAST_EXPOSURE_ONE;
        if (shelter < s->p->shelter_floor)
            shelter = s->p->shelter_floor;
    }
    /* a river-dominated delta: where the rivers' supply within the bell reaches delta_ref_m3 the
     * waves winnow none of it, below that in proportion (stretch - 1 is that supply over
     * delta_ref_m3); where the stretch is 1, stretch - 1 = 0 is no more than any shelter */
    if (stretch_at) {
        double stretch = (double)stretch_at[i];
        if (stretch - 1 > shelter)
            shelter = stretch - 1 < 1 ? stretch - 1 : 1;
    }
    return shelter;
}

/* stretch_at: the stretch, or NULL where it is 1 (a block whose largest stretch is 1) */
static inline uint16_t s_place_near(const s_site_t *s, const float *stretch_at, size_t i,
                                    double *shelter_out)
{
    double dist = tb_coast_waterline_m(s->d2[i], s->cell_m);
    double stretch = stretch_at ? (double)stretch_at[i] : 1.0;
    double reach = s->p->deposit_reach_m * stretch;
    if (dist > reach)
        return 0;
    double shelter = s_shelter(s, stretch_at, i);
    *shelter_out = shelter;
    /* nearer the waterline first: the weight falls linearly to a tenth at the deposit reach; the
     * rounded value is positive, so the conversion is the floor */
    double nearness = 1 - 0.9 * (dist > 0 ? dist : 0) / reach;
    int64_t wq = (int64_t)(shelter * nearness * 1000 + 0.5);
    return (uint16_t)(wq > 0 ? wq : 1);
}

/* The room of a place with this profile and shelter over its heights now, metres; no room
 * unless > 0. The profile and the shelter do not depend on the heights: a lay that has them keeps
 * them for the room after it. */
static inline double s_room_of(double profile, double shelter, float height_m, float moved_m)
{
    double floor0 = (double)height_m - (double)moved_m; /* before any deposit */
    return floor0 + (profile - floor0) * shelter - (double)height_m;
}

/* A place (s_place_near, at most 1000) in the low bits of wq; S_ROOM: the room was > 0 over the
 * cell's heights when it was last weighed or laid, so it is while they have not changed since. */
#define S_ROOM 0x8000u
#define S_PLACE 0x7FFFu

/* A chunk's tallies of the counted cells (tb_coast_region_t): integers (tb_coast_fx_t), so they
 * add up the same in any order and any blocking of the planet (docs/coast.md, "Blocks"); next: the
 * whole units its lay left for the next drift there. */
typedef struct {
    tb_coast_fx_t laid, full, remainder; /* units */
    int64_t no_room;                     /* units */
    int64_t next;
} s_tally_t;

/* The shared state of one drift's parallel loops. Per chunk of rows: the tallies (doubles, summed
 * in chunk order afterwards, so any number of threads gives the same bits) and the source totals.
 * A chunk of rows is a row of blocks of the band, so the per-block flags of a chunk are its own.
 */
typedef struct {
    const s_site_t *site;
    int64_t w;
    int64_t *src, *work;
    float *height_m, *moved_m;
    int bits;
    double scale; /* 2^-bits: a multiplication by it is the division, exactly */
    /* the most units a source can hold for src << bits to stay below 2^61: every source does when
     * bits is the planet's; in a block's window, a source near its edge (where the window cannot
     * see all it would need) may not, and is clamped to it (its value is not one the block gives)
     */
    int64_t src_max;
    bool last;
    const tb_coast_region_t *count; /* the cells the tallies count */
    s_tally_t *chunk;
    /* every cell's place (s_place_near) and S_ROOM bit, in the blocks marked done: computed the
     * first time a drift needs the block; the room is taken again (s_room_of) where a drift weighs
     * a block for the first time or lays a cell */
    uint16_t *wq;
    uint8_t *done;
    /* per block: a source of this drift lies in it; within the drift's support of such a block
     * (s_near_sources); a source of the next drift lies in it (the lay's leftovers); the lay
     * changed a height in it */
    const uint8_t *src_blk;
    uint8_t *near, *next_blk, *laid;
    uint64_t *next_total; /* per chunk: the next drift's units, all cells (wrapping: see s_lay) */
} s_drift_t;

/* The blocks within `reach` blocks (Chebyshev, X wrapping) of a block flagged in `from`, into
 * `near`: a row dilation then a column one, each a count of the flagged blocks in a window slid
 * one block at a time (a few operations a block whatever the reach). */
static int s_near_sources(const uint8_t *from, uint8_t *near, int64_t bw, int64_t bh, int64_t reach,
                          tb_err_t *err)
{
    uint8_t *tmp = tb_malloc((size_t)bw * (size_t)bh, "coast drift blocks", err);
    int64_t *count = tmp ? tb_calloc((size_t)bw, sizeof *count, "coast drift blocks", err) : NULL;
    if (!count) {
        free(tmp);
        return -1;
    }
    for (int64_t by = 0; by < bh; by++) {
        const uint8_t *f = from + (size_t)by * (size_t)bw;
        uint8_t *t = tmp + (size_t)by * (size_t)bw;
        if (2 * reach + 1 >= bw) {
            uint8_t a = 0;
            for (int64_t k = 0; k < bw; k++)
                a |= f[k] != 0;
            memset(t, a, (size_t)bw);
            continue;
        }
        /* the window bx - reach .. bx + reach (wrapped; narrower than the row, so each block
         * once) */
        int64_t n = 0;
        for (int64_t k = -reach; k <= reach; k++)
            n += f[tb_wrap(k, bw)] != 0;
        for (int64_t bx = 0, in = reach + 1, out = bw - reach; bx < bw; bx++) {
            t[bx] = n > 0;
            in -= in >= bw ? bw : 0; /* bx + reach + 1 and bx - reach, wrapped */
            out -= out >= bw ? bw : 0;
            n += (f[in++] != 0) - (f[out++] != 0);
        }
    }
    /* the window by - reach .. by + reach within the rows, per column */
    for (int64_t k = 0; k <= reach && k < bh; k++)
        for (int64_t bx = 0; bx < bw; bx++)
            count[bx] += tmp[(size_t)k * (size_t)bw + (size_t)bx];
    for (int64_t by = 0; by < bh; by++) {
        for (int64_t bx = 0; bx < bw; bx++)
            near[(size_t)by * (size_t)bw + (size_t)bx] = count[bx] > 0;
        if (by + reach + 1 < bh)
            for (int64_t bx = 0; bx < bw; bx++)
                count[bx] += tmp[(size_t)(by + reach + 1) * (size_t)bw + (size_t)bx];
        if (by - reach >= 0)
            for (int64_t bx = 0; bx < bw; bx++)
                count[bx] -= tmp[(size_t)(by - reach) * (size_t)bw + (size_t)bx];
    }
    free(tmp);
    free(count);
    return 0;
}

/* The stretch a block's cells read: NULL where its largest stretch is 1. */
static inline const float *s_block_stretch(const s_site_t *site, size_t b)
{
    return site->stretch && site->band->stretch_max[b] > 1 ? site->stretch : NULL;
}

/* A row of a block's weights (st: the stretch, or NULL; reuse: the block was weighed by an earlier
 * drift, so its places are done and its S_ROOM bits hold, the lay having kept them where it changed
 * a height; otherwise its places and bits are computed here). Inlined with st a constant NULL where
 * the block's stretch is 1. */
static inline __attribute__((always_inline)) void s_weight_run(const s_drift_t *d, const float *st,
                                                               size_t i0, size_t i1,
                                                               uint32_t reach_d2, bool reuse)
{
    const s_site_t *site = d->site;
    uint16_t *restrict wqs = d->wq;
    int64_t *restrict work = d->work;
    if (reuse) {
        for (size_t i = i0; i < i1; i++) {
            uint16_t wq = wqs[i];
            work[i] = wq & S_ROOM ? wq & S_PLACE : 0;
        }
        return;
    }
    /* the places, and the room with the same shelter */
    for (size_t i = i0; i < i1; i++) {
        uint16_t wq = 0;
        bool room = false;
        if (site->kind[i] != TB_COAST_LAND && site->d2[i] <= reach_d2) {
            double shelter;
            wq = s_place_near(site, st, i, &shelter);
            room = wq && s_room_of(s_profile(site, st, i), shelter, site->height_m[i],
                                   site->moved_m[i]) > 0;
        }
        wqs[i] = (uint16_t)(room ? wq | S_ROOM : wq);
        work[i] = room ? wq : 0;
    }
}

/* Every cell's weight into work, in the blocks within reach of a source (elsewhere 0: no weight
 * there is read). A block whose cells are all past its largest stretched reach has none (every
 * place is 0 past it). A block's places are computed the first time a drift weighs it, with their
 * S_ROOM bits; a later drift takes the bits (the lay kept them). */
static void s_weight_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_drift_t *d = ctx;
    const s_site_t *site = d->site;
    const tb_coast_band_t *band = site->band;
    uint8_t *done = d->done + chunk * (size_t)band->bw;
    const uint8_t *near = d->near + chunk * (size_t)band->bw;
    const uint32_t *block_d2 = site->block_d2 + chunk * (size_t)band->bw;
    /* row by row (the arrays are read as rows), each block as its state says: no weight, its
     * places to compute, or its places done */
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < band->bw; bx++) {
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < d->w ? x0 + TB_COAST_BAND_BLOCK : d->w;
            size_t row = (size_t)y * (size_t)d->w;
            if (!block_d2[bx] || !near[bx]) {
                memset(d->work + row + x0, 0, (size_t)(x1 - x0) * sizeof *d->work);
                continue;
            }
            const float *st = s_block_stretch(site, chunk * (size_t)band->bw + (size_t)bx);
            size_t i0 = row + (size_t)x0, i1 = row + (size_t)x1;
            bool reuse = done[bx]; /* by the first drift */
            if (st)
                s_weight_run(d, st, i0, i1, block_d2[bx], reuse);
            else
                s_weight_run(d, NULL, i0, i1, block_d2[bx], reuse);
        }
    for (int64_t bx = 0; bx < band->bw; bx++)
        done[bx] |= block_d2[bx] && near[bx];
}

/* shares: src becomes q = floor(src 2^bits / Wt), in the blocks holding a source */
static void s_share_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_drift_t *d = ctx;
    s_tally_t *t = &d->chunk[chunk];
    int64_t *src = d->src, *work = d->work, bw = d->site->band->bw;
    const uint8_t *blk = d->src_blk + chunk * (size_t)bw;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < bw; bx++) {
            if (!blk[bx])
                continue;
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < d->w ? x0 + TB_COAST_BAND_BLOCK : d->w;
            size_t row = (size_t)y * (size_t)d->w;
            for (size_t i = row + (size_t)x0; i < row + (size_t)x1; i++) {
                if (!src[i])
                    continue;
                bool counted = tb_coast_region_has(d->count, (int64_t)(i - row), y);
                if (work[i] <= 0) {
                    if (counted)
                        t->no_room += src[i];
                    src[i] = 0;
                    continue;
                }
                int64_t v = src[i] < d->src_max ? src[i] : d->src_max;
                int64_t num = v << d->bits;
                int64_t q = num / work[i];
                if (counted)
                    tb_coast_fx_add(&t->remainder, (double)(num - q * work[i]) * d->scale);
                src[i] = q;
            }
        }
}

/* A chunk's tallies while its lay runs, in registers (the same additions in the same order as
 * into the chunk's s_tally_t), and the flags of the block being laid. */
typedef struct {
    tb_coast_fx_t laid, full, remainder;
    /* the next drift's units; unsigned, so that the cells a block's window cannot see exactly
     * (which nothing counts) wrap instead of overflowing */
    uint64_t next;
    bool laid_b, next_b; /* the block: a height changed; a unit is left for the next drift */
} s_lay_acc_t;

/* Lays cell i's share (st: the stretch, or NULL where it is 1), what fits its room, into a's
 * tallies and flags; returns whether it laid a unit or more. Where it changes the heights (not on
 * the last drift) it sets the cell's S_ROOM bit from the room after, with the same profile and
 * shelter: the next drift weighs the cell by that bit. */
static inline __attribute__((always_inline)) bool
s_lay(const s_drift_t *d, size_t i, const float *st, bool last, s_lay_acc_t *a, bool *leak)
{
    int64_t *src = d->src;
    int64_t v = src[i];
    if (!last)
        src[i] = 0; /* after the last drift src is left as it is (the caller's scratch) */
    uint16_t wq = d->wq[i];
    /* no S_ROOM: the room was not > 0 when this drift weighed the cell, and its heights are the
     * same (weight 0) */
    if (!v || !(wq & S_ROOM))
        return false;
    const s_site_t *site = d->site;
    double profile = s_profile(site, st, i), shelter = s_shelter(site, st, i);
    float height0 = d->height_m[i], moved0 = d->moved_m[i];
    double room = s_room_of(profile, shelter, height0, moved0);
    if (!(room > 0))
        return false; /* weight 0 */
    double dep = (double)(wq & S_PLACE) * (double)v * d->scale;
    if (!(dep > 0))
        return false;
    double fit = room / TB_COAST_UNIT_M;
    double lay = dep < fit ? dep : fit;
    if (leak && *leak && lay >= 1) {
        *leak = false; /* the negative control: this cell's deposit (a unit or more) vanishes */
        return true;
    }
    tb_coast_fx_add(&a->laid, lay);
    double dh = lay * TB_COAST_UNIT_M;
    float height = (float)((double)height0 + dh), moved = (float)((double)moved0 + dh);
    d->height_m[i] = height;
    d->moved_m[i] = moved;
    a->laid_b = true;
    /* over is below the drift's total units (under 2^61) wherever the shares are the planet's; the
     * cap keeps a cell a window cannot see exactly (nothing it gives) from overflowing the floor */
    double over = dep - lay < 0x1p62 ? dep - lay : 0x1p62;
    if (last) {
        tb_coast_fx_add(&a->full, over);
        return lay >= 1;
    }
    d->wq[i] = (uint16_t)(s_room_of(profile, shelter, height, moved) > 0 ? wq : wq & S_PLACE);
    int64_t whole = (int64_t)over; /* over >= 0: the floor */
    src[i] = whole;
    a->next += (uint64_t)whole;
    a->next_b |= whole != 0;
    tb_coast_fx_add(&a->remainder, over - (double)whole);
    return lay >= 1;
}

/* The lay of a row of a block, inlined four times: with the stretch a constant NULL or not, on the
 * last drift or not. */
static inline __attribute__((always_inline)) void
s_lay_run(const s_drift_t *d, size_t i0, size_t i1, const float *st, bool last, s_lay_acc_t *a)
{
    for (size_t i = i0; i < i1; i++)
        if (d->src[i])
            s_lay(d, i, st, last, a, NULL);
}

/* s_lay_run as its four copies: the stretch or not, the last drift or not. */
static void s_lay_span(const s_drift_t *d, size_t i0, size_t i1, const float *st, s_lay_acc_t *a)
{
    if (i0 >= i1)
        return;
    if (d->last) {
        if (st)
            s_lay_run(d, i0, i1, st, true, a);
        else
            s_lay_run(d, i0, i1, NULL, true, a);
    } else {
        if (st)
            s_lay_run(d, i0, i1, st, false, a);
        else
            s_lay_run(d, i0, i1, NULL, false, a);
    }
}

/* The lay over the blocks within reach of a source; elsewhere the shares are exactly 0 (the
 * tent's support). A block past every reach has no weight: its shares are cleared. */
static void s_lay_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_drift_t *d = ctx;
    const s_site_t *site = d->site;
    const tb_coast_band_t *band = site->band;
    const uint32_t *block_d2 = site->block_d2 + chunk * (size_t)band->bw;
    const uint8_t *near = d->near + chunk * (size_t)band->bw;
    uint8_t *laid = d->laid + chunk * (size_t)band->bw,
            *next_blk = d->next_blk + chunk * (size_t)band->bw;
    s_tally_t *t = &d->chunk[chunk];
    /* a: the counted cells' tallies; o: the others' (a block's halo: their flags and their units
     * for the next drift count, their tallies do not) */
    s_lay_acc_t a = {t->laid, t->full, t->remainder, (uint64_t)t->next, false, false};
    s_lay_acc_t o = {{0, 0}, {0, 0}, {0, 0}, 0, false, false};
    for (int64_t y = y0; y < y1; y++) {
        size_t row = (size_t)y * (size_t)d->w;
        for (int64_t bx = 0; bx < band->bw; bx++) {
            if (!near[bx])
                continue;
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < d->w ? x0 + TB_COAST_BAND_BLOCK : d->w;
            if (!block_d2[bx]) {
                /* no weight in the block: s_lay would only clear the shares, which only a next
                 * drift reads */
                if (!d->last)
                    memset(d->src + row + x0, 0, (size_t)(x1 - x0) * sizeof *d->src);
                continue;
            }
            const float *st = s_block_stretch(site, chunk * (size_t)band->bw + (size_t)bx);
            a.laid_b = a.next_b = o.laid_b = o.next_b = false;
            int64_t c0, c1;
            tb_coast_region_span(d->count, y, x0, x1, &c0, &c1);
            s_lay_span(d, row + (size_t)x0, row + (size_t)c0, st, &o);
            s_lay_span(d, row + (size_t)c0, row + (size_t)c1, st, &a);
            s_lay_span(d, row + (size_t)c1, row + (size_t)x1, st, &o);
            laid[bx] |= a.laid_b | o.laid_b;
            next_blk[bx] |= a.next_b | o.next_b;
        }
    }
    t->laid = a.laid;
    t->full = a.full;
    t->remainder = a.remainder;
    t->next = (int64_t)a.next;              /* each chunk's lay runs once a drift, from 0 */
    d->next_total[chunk] = a.next + o.next; /* all the window's cells */
}

/* One drift of the units in src (in the blocks flagged in src_blk) over a tent of radius r, laying
 * what fits. The shares' fixed-point bits are `bits`, or, when it is -1, made from the sources'
 * total `total` (the pass is the planet). On return src holds the whole units that did not fit (to
 * drift again), their fractions counted in the remainder, their total over every cell in *next,
 * over the counted cells in t->next, and their blocks in next_blk; after the last drift (last) it
 * holds what its tent sum left (the caller's scratch, destroyed: nothing reads it). The loops run
 * over chunks of rows on the pool; the tallies are integers, added up in any order. */
typedef struct {
    uint16_t *wq;
    uint8_t *done, *src_blk, *near, *next_blk, *laid;
    uint64_t *next_total;
    s_tally_t *chunk;
} s_work_t;

static void s_fx_sum(tb_coast_fx_t *sum, const tb_coast_fx_t *part)
{
    sum->units += part->units;
    sum->frac += part->frac;
}

static int s_drift(tb_pool_t *pool, const s_site_t *site, int64_t w, int64_t h, int64_t r,
                   int64_t *src, int64_t *work, float *height_m, float *moved_m, bool *leak,
                   bool last, int64_t total, int bits, const tb_coast_region_t *count,
                   const s_work_t *k, uint64_t *next, s_tally_t *t, tb_err_t *err)
{
    size_t n_chunks = tb_coast_chunks(h);
    size_t n_blocks = (size_t)site->band->bw * (size_t)site->band->bh;
    memset(k->chunk, 0, n_chunks * sizeof *k->chunk);
    memset(k->next_total, 0, n_chunks * sizeof *k->next_total);
    memset(k->next_blk, 0, n_blocks);
    *next = 0;
    s_drift_t d = {site,       w,       src,         work,    height_m,     moved_m, 0,
                   0,          0,       last,        count,   k->chunk,     k->wq,   k->done,
                   k->src_blk, k->near, k->next_blk, k->laid, k->next_total};
    /* no source in any block: nothing to share (the same as drifting zeros) */
    bool any = false;
    for (size_t b = 0; b < n_blocks && !any; b++)
        any = k->src_blk[b] != 0;
    if (!any || (bits < 0 && total == 0))
        return 0;
    size_t cells = (size_t)w * (size_t)h;
    /* Shares in fixed point with as many bits as total << bits < 2^61 allows. On a cell that can
     * take sediment (w >= 1) the summed shares are at most total << bits, because
     * Wt(s) >= K(c - s) w(c) >= K(c - s) for every source s; elsewhere the sums may wrap, which the
     * unsigned box arithmetic allows and nothing reads. The remainder of a share is at most
     * Wt / 2^bits units, a small part of the budget, and counted. The bits are the planet's: a
     * block's window takes them from its spec (docs/coast.md, "Blocks"). */
    if (bits < 0) {
        int len = 64 - __builtin_clzll((unsigned long long)total);
        bits = 61 - len;
        if (bits < 0)
            return tb_err_set(err, TB_E_INVALID, "coast: %lld units of sediment are over 2^61",
                              (long long)total);
    }
    d.bits = bits;
    d.scale = ldexp(1.0, -d.bits);
    d.src_max = bits >= 61 ? 0 : ((int64_t)1 << (61 - bits)) - 1;
    /* A weight is read only within the tent's support (2 ceil(r / 2) cells) of a source: in the
     * sum Wt at the source and where the shares land. Past it no weight is needed (docs/coast.md,
     * "The coastal band"); in blocks, that support is at most support / block + 2 blocks. */
    if (s_near_sources(k->src_blk, k->near, site->band->bw, site->band->bh,
                       2 * ((r + 1) / 2) / TB_COAST_BAND_BLOCK + 2, err) != 0)
        return -1;
    tb_coast_par_rows(pool, h, s_weight_rows, &d);
    if (tb_coast_tentsum_i64(pool, work, w, h, r, err) != 0)
        return -1;
    tb_coast_par_rows(pool, h, s_share_rows, &d);
    if (tb_coast_tentsum_i64(pool, src, w, h, r, err) != 0)
        return -1;
    if (*leak) {
        /* the negative control runs in row-major order on the calling thread: the first cell that
         * lays a unit loses it, the same cell whatever the threads (outside the blocks near a
         * source the shares are 0, and a block no drift weighed has weight 0: wq is zeroed) */
        for (size_t i = 0; i < cells; i++)
            if (src[i]) {
                int64_t y = (int64_t)(i / (size_t)w), x = (int64_t)(i % (size_t)w);
                size_t chunk = (size_t)y / TB_COAST_CHUNK_ROWS;
                size_t b = chunk * (size_t)site->band->bw + (size_t)x / TB_COAST_BAND_BLOCK;
                s_tally_t *tc = &k->chunk[chunk];
                s_lay_acc_t a = {tc->laid, tc->full, tc->remainder, 0, false, false};
                s_lay(&d, i, s_block_stretch(site, b), last, &a, leak);
                if (tb_coast_region_has(count, x, y)) {
                    tc->laid = a.laid;
                    tc->full = a.full;
                    tc->remainder = a.remainder;
                    tc->next += (int64_t)a.next;
                }
                k->next_total[chunk] += a.next;
                k->laid[b] |= a.laid_b;
                k->next_blk[b] |= a.next_b;
            }
    } else {
        tb_coast_par_rows(pool, h, s_lay_rows, &d);
    }
    for (size_t c = 0; c < n_chunks; c++) {
        s_fx_sum(&t->laid, &k->chunk[c].laid);
        s_fx_sum(&t->full, &k->chunk[c].full);
        s_fx_sum(&t->remainder, &k->chunk[c].remainder);
        t->no_room += k->chunk[c].no_room;
        t->next += k->chunk[c].next;
        *next += k->next_total[c];
    }
    return 0;
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
    int64_t weight;           /* a tent's total weight */
    tb_coast_div_t by_weight; /* its reciprocal: the same quotients (jobs/coast/divide.h) */
    double to_ref;            /* quanta of the bell's mean to multiples of delta_ref_m3 */
    tb_coast_band_t *band;
    /* the splat: mouths sorted by row, their columns, quanta; the X kernel over n_x offsets from
     * x0_off; the box radius */
    const int64_t *my, *mx, *mq;
    size_t n;
    const uint64_t *kx;
    int64_t x0_off, n_x, b;
    uint64_t *scratch;   /* per thread, 2 n_x */
    const uint8_t *near; /* per block: within the second tent's reach of a mouth */
} s_stretch_t;

/* The rows of the planet within b of both y and ym: the Y kernel of two boxes of radius b. */
static inline int64_t s_rows_within(int64_t y, int64_t ym, int64_t b, int64_t h)
{
    int64_t a0 = (y > ym ? y : ym) - b, a1 = (y < ym ? y : ym) + b;
    a0 = a0 > 0 ? a0 : 0;
    a1 = a1 < h - 1 ? a1 : h - 1;
    return a1 >= a0 ? a1 - a0 + 1 : 0;
}

/* Rows [y0, y1) of the first tent: every mouth within 2b rows adds q k(dx) k(y, y_m). Per mouth,
 * the row it adds is k(y, y_m) times its X profile, and k changes by at most one from a row to
 * the next: the row is kept in the thread's scratch and stepped by adding or taking the profile. */
static void s_splat_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_stretch_t *c = ctx;
    int64_t w = c->w, b = c->b, n_x = c->n_x;
    uint64_t *prof = c->scratch + (size_t)thread * 2 * (size_t)n_x, *cur = prof + n_x;
    /* the chunk's rows start at zero (zeroed here, by their thread, not in a pass of their own) */
    memset(c->river + (size_t)y0 * (size_t)w, 0, (size_t)(y1 - y0) * (size_t)w * sizeof *c->river);
    /* the first mouth within reach of row y0 (sorted by row) */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->my[mid] < y0 - 2 * b)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t m = lo; m < c->n && c->my[m] <= y1 - 1 + 2 * b; m++) {
        int64_t ym = c->my[m], k = s_rows_within(y0, ym, b, c->h);
        uint64_t q = (uint64_t)c->mq[m];
        for (int64_t o = 0; o < n_x; o++) {
            prof[o] = q * c->kx[o];
            cur[o] = prof[o] * (uint64_t)k;
        }
        int64_t x0 = tb_wrap(c->mx[m] + c->x0_off, w);
        for (int64_t y = y0; y < y1; y++) {
            if (k) {
                uint64_t *restrict row = (uint64_t *)c->river + (size_t)y * (size_t)w;
                /* up to the seam, then from column 0 */
                int64_t x = x0, n = n_x;
                const uint64_t *restrict v = cur;
                while (n > 0) {
                    int64_t run = w - x < n ? w - x : n;
                    for (int64_t o = 0; o < run; o++)
                        row[x + o] += v[o];
                    v += run;
                    n -= run;
                    x = 0;
                }
            }
            if (y + 1 == y1)
                break;
            int64_t next = s_rows_within(y + 1, ym, b, c->h);
            if (next == k + 1) {
                for (int64_t o = 0; o < n_x; o++)
                    cur[o] += prof[o];
            } else if (next == k - 1) {
                for (int64_t o = 0; o < n_x; o++)
                    cur[o] -= prof[o];
            } else if (next != k) {
                for (int64_t o = 0; o < n_x; o++)
                    cur[o] = prof[o] * (uint64_t)next;
            }
            k = next;
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
                    v[x] = tb_coast_div(&c->by_weight, v[x]);
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
                int64_t v = tb_coast_div(&c->by_weight, c->river[i]);
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
    if (tb_coast_box_check(box, w, err) != 0)
        return -1;
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
    uint64_t *scratch =
        near ? tb_malloc((size_t)tb_pool_threads(pool) * 2 * (size_t)n_x * sizeof *scratch,
                         "coast bell rows", err)
             : NULL;
    if (!scratch) {
        free(pairs);
        free(rows);
        free(kx);
        free(near);
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
                     tb_coast_div_make((int64_t)tent),
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
                     scratch,
                     near};
    /* the splat adds (4b + 1)^2 cells a mouth at about 8 instructions each, the tent about 26 a
     * cell of the planet: where the mouths' squares cover the planet three times over or more, the
     * tent of the mouths' quanta (the same integers) is the cheaper */
    int rc = 0;
    if ((double)n * (double)n_x * (double)(4 * box + 1) < 3.0 * (double)w * (double)h) {
        tb_coast_par_rows(pool, h, s_splat_rows, &c);
    } else {
        tb_coast_par_zero(pool, river, (size_t)w * sizeof *river, h);
        for (size_t m = 0; m < n; m++)
            river[(size_t)rows[m] * (size_t)w + (size_t)rows[n_pairs + m]] = rows[2 * n_pairs + m];
        rc = tb_coast_tentsum_i64(pool, river, w, h, half_r, err);
    }
    if (rc == 0)
        tb_coast_par_rows(pool, h, s_mean_rows, &c);
    if (rc == 0)
        rc = tb_coast_tentsum_i64(pool, river, w, h, half_r, err);
    if (rc == 0)
        tb_coast_par_rows(pool, h, s_stretch_rows, &c);
    free(pairs);
    free(rows);
    free(kx);
    free(near);
    free(scratch);
    return rc;
}

/* Drift by symmetric redistribution, then deposition in the sheltered shallows (after the
 * predecessor's drift kernel, docs/coast.md). With K the tent of radius drift_km (X wraps, Y
 * zero-padded) and w the deposition weights, each source s shares its units over the cells c of its
 * box in proportion to w(c): c receives w(c) src(s) / Wt(s), Wt = K * w. Summed over sources that
 * is deposit = w . K * (src / Wt), and because K is symmetric the shares of every source add up to
 * its units exactly; a source with no weighted cell in its box is unplaced. The shares src / Wt are
 * fixed point with exact integer box sums (so a rolled planet gives rolled deposits to the bit),
 * and their remainder is counted as unplaced too. A cell lays what fits its room (s_room_of); what
 * does not fit drifts once more over a box three times wider, to the shallows that still have room,
 * and what fits nowhere then is unplaced (the shallows were full). Units: TB_COAST_UNIT_M over one
 * cell; the budget's parts are integer tallies of the counted cells (tb_coast_tally_t). */
typedef struct {
    const uint8_t *kind;
    const float *height_m, *moved_m;
    int64_t w, bw;
    const uint8_t *laid;            /* per block */
    const tb_coast_region_t *count; /* the cells counted */
    int64_t *beach;                 /* per thread */
} s_beach_t;

static void s_beach_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    const s_beach_t *c = ctx;
    int64_t n = 0;
    const uint8_t *laid = c->laid + chunk * (size_t)c->bw;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < c->bw; bx++) {
            if (!laid[bx])
                continue;
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < c->w ? x0 + TB_COAST_BAND_BLOCK : c->w, c0, c1;
            tb_coast_region_span(c->count, y, x0, x1, &c0, &c1);
            for (size_t i = (size_t)y * (size_t)c->w + (size_t)c0;
                 i < (size_t)y * (size_t)c->w + (size_t)c1; i++)
                n += c->kind[i] != TB_COAST_LAND && c->moved_m[i] > 0 && c->height_m[i] > 0;
        }
    c->beach[thread] += n;
}

/* The sources' total per chunk (big: a source of 2^59 or more, or a negative one, where the sum
 * is not checked here), and which blocks hold one (a chunk of rows is a row of blocks). */
typedef struct {
    const int64_t *src;
    int64_t w, bw;
    uint8_t *blk;
    int64_t *sum;
    uint8_t *big;
} s_total_t;

static void s_total_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)thread;
    const s_total_t *c = ctx;
    uint64_t t = 0, all = 0;
    uint8_t *blk = c->blk + chunk * (size_t)c->bw;
    memset(blk, 0, (size_t)c->bw);
    for (int64_t y = y0; y < y1; y++) {
        const int64_t *src = c->src + (size_t)y * (size_t)c->w;
        for (int64_t bx = 0; bx < c->bw; bx++) {
            int64_t x0 = bx * TB_COAST_BAND_BLOCK,
                    x1 = x0 + TB_COAST_BAND_BLOCK < c->w ? x0 + TB_COAST_BAND_BLOCK : c->w;
            uint64_t any = 0, s = 0;
            for (int64_t x = x0; x < x1; x++) {
                any |= (uint64_t)src[x];
                s += (uint64_t)src[x];
            }
            blk[bx] |= any != 0;
            all |= any;
            /* with every source under 2^59, s < 2^63; t is kept at most 2^62 */
            t += s;
            if (t > ((uint64_t)1 << 62))
                t = (uint64_t)1 << 62;
        }
    }
    c->big[chunk] = (all >> 59) != 0;
    c->sum[chunk] = (int64_t)t;
}

int tb_coast_sediment_drift_deposit(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                    int64_t w, int64_t h, const uint8_t *kind, const uint32_t *d2,
                                    const uint16_t *exposure, const float *stretch, int64_t *src,
                                    int64_t *work, float *height_m, float *moved_m,
                                    const tb_coast_band_t *band, const tb_coast_region_t *count,
                                    const tb_coast_share_t *share, bool totals_only,
                                    tb_coast_tally_t *tally, const tb_coast_debug_t *debug,
                                    tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    double unit_m3 = TB_COAST_UNIT_M * cell_m * cell_m;
    bool own_bits = share->bits[0] < 0;
    size_t n_chunks = tb_coast_chunks(h), n_blocks = (size_t)band->bw * (size_t)band->bh;
    s_work_t k = {0};
    s_total_t tot = {src, w, band->bw, NULL, NULL, NULL};
    int rc = -1;
    uint32_t *block_d2 = NULL;
    double *slope_of = NULL;
    if (!(k.wq = tb_malloc(cells * sizeof *k.wq, "coast drift weights", err)) ||
        !(k.done = tb_calloc(5 * n_blocks, 1, "coast drift blocks", err)) ||
        !(k.next_total = tb_malloc(n_chunks * sizeof *k.next_total, "coast drift totals", err)) ||
        !(k.chunk = tb_malloc(n_chunks * sizeof *k.chunk, "coast drift tallies", err)) ||
        !(tot.sum = tb_malloc(n_chunks * sizeof *tot.sum, "coast drift totals", err)) ||
        !(tot.big = tb_malloc(n_chunks, "coast drift totals", err)))
        goto done;
    tb_coast_par_zero(pool, k.wq, (size_t)w * sizeof *k.wq, h);
    k.src_blk = k.done + n_blocks;
    k.near = k.done + 2 * n_blocks;
    k.next_blk = k.done + 3 * n_blocks;
    k.laid = k.done + 4 * n_blocks;
    tot.blk = k.src_blk;
    /* the sources' total (with a sum that may reach past 2^61, or a negative source, the exact
     * check in row-major order names the first cell); with the planet's bits given (a block) the
     * planet's total is checked where the blocks' sources are added up (tb_coast_share_next) */
    tb_coast_par_rows(pool, h, s_total_rows, &tot);
    int64_t total = 0;
    bool check = false;
    for (size_t c = 0; own_bits && c < n_chunks && !check; c++) {
        check = tot.big[c] || tot.sum[c] > ((int64_t)1 << 61) - total;
        total += check ? 0 : tot.sum[c];
    }
    if (check) {
        total = 0;
        for (size_t i = 0; i < cells; i++) {
            if (src[i] < 0 || src[i] > ((int64_t)1 << 61) - total) {
                tb_err_set(err, TB_E_INVALID,
                           "coast: the sediment sources (%lld units at cell "
                           "%zu) exceed 2^61 units of %g m3",
                           (long long)src[i], i, unit_m3);
                goto done;
            }
            total += src[i];
        }
    }
    int64_t r = tb_coast_radius_cells(p->drift_km * 1000.0, cell_m);
    double reach_cells = p->deposit_reach_m * (stretch ? TB_COAST_MAX_STRETCH : 1) / cell_m + 1.5;
    s_site_t site = {p,       cell_m,   kind,
                     d2,      exposure, height_m,
                     moved_m, stretch,  (uint32_t)fmin(4e9, ceil(reach_cells * reach_cells)),
                     band,    NULL,     NULL};
    double shelter_of[TB_COAST_EXPOSURE_ONE + 2];
    for (int e = 0; e <= TB_COAST_EXPOSURE_ONE + 1; e++) {
        double x = e <= TB_COAST_EXPOSURE_ONE ? e / (double)TB_COAST_EXPOSURE_ONE : 0;
        shelter_of[e] = 1 - x < p->shelter_floor ? p->shelter_floor : 1 - x;
    }
    site.shelter_of = shelter_of;
    /* the profile's distance term by d2, up to the stretched reach (a place lies within it), and
     * the profile where the stretch is 1, at most 2 MB of table each: past it s_profile computes
     * the same double */
    site.slope_n = site.reach_d2 < (1u << 18) ? site.reach_d2 + 1 : (1u << 18);
    if (!(slope_of =
              tb_malloc(2 * (size_t)site.slope_n * sizeof *slope_of, "coast beach profile", err)))
        goto done;
    for (uint32_t q = 0; q < site.slope_n; q++) {
        slope_of[q] = s_slope_term(p, cell_m, q);
        slope_of[site.slope_n + q] = p->berm_m - slope_of[q];
    }
    site.slope_of = slope_of;
    site.profile_of = slope_of + site.slope_n;
    /* per block of the band, the squared distance past which none of its cells is within its
     * stretched reach (its largest stretch, the same margin as reach_d2), or 0 when the block is
     * too far from the waterline for any (docs/coast.md, "The coastal band") */
    block_d2 = tb_malloc(n_blocks * sizeof *block_d2, "coast band reach", err);
    if (!block_d2)
        goto done;
    for (size_t b = 0; b < n_blocks; b++) {
        double st = stretch ? (double)band->stretch_max[b] : 1.0;
        double cells_b = p->deposit_reach_m * st / cell_m + 1.5;
        uint32_t d2b = (uint32_t)fmin(4e9, ceil(cells_b * cells_b));
        if (d2b > site.reach_d2)
            d2b = site.reach_d2;
        block_d2[b] = band->dist[b] <= tb_coast_band_blocks(d2b) ? d2b : 0;
    }
    site.block_d2 = block_d2;
    s_tally_t t1 = {{0, 0}, {0, 0}, {0, 0}, 0, 0}, t2 = t1;
    bool leak = debug && debug->leak_one_deposit;
    uint64_t next = 0;
    if (s_drift(pool, &site, w, h, r, src, work, height_m, moved_m, &leak, false, total,
                share->bits[0], count, &k, &next, &t1, err) != 0)
        goto done;
    tally->sources[1] = t1.next;
    if (!totals_only) {
        memcpy(k.src_blk, k.next_blk, n_blocks);
        /* with its own bits the pass is the planet: next is its second drift's total (< 2^61) */
        if (s_drift(pool, &site, w, h, S_SECOND_REACH * r, src, work, height_m, moved_m, &leak,
                    true, (int64_t)next, own_bits ? -1 : share->bits[1], count, &k, &next, &t2,
                    err) != 0)
            goto done;
        /* a beach cell is one the lay raised (nothing else moves a cell up) */
        int64_t beaches[TB_COAST_MAX_THREADS] = {0};
        s_beach_t bc = {kind, height_m, moved_m, w, band->bw, k.laid, count, beaches};
        tb_coast_par_rows(pool, h, s_beach_rows, &bc);
        for (int j = 0; j < TB_COAST_MAX_THREADS; j++)
            tally->beach_cells += beaches[j];
    }
    s_tally_t *ts[2] = {&t1, &t2};
    for (int j = 0; j < 2; j++) {
        s_fx_sum(&tally->laid, &ts[j]->laid);
        s_fx_sum(&tally->full, &ts[j]->full);
        s_fx_sum(&tally->remainder, &ts[j]->remainder);
        tally->no_room_units += ts[j]->no_room;
    }
    rc = 0;
done:
    free(k.wq);
    free(slope_of);
    free(k.done);
    free(k.next_total);
    free(k.chunk);
    free(tot.sum);
    free(tot.big);
    free(block_d2);
    return rc;
}
