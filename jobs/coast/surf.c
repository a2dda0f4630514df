/* Surf: a shore platform and the cliff behind it (docs/coast.md, "Surf"). Typical sizes: the land
 * within surf_reach_m (110 m, 14 cells at 8 m) of the waterline, a few per cent of a planet. The
 * invariant: the cut of a cell depends on its own height, distance and carried exposure only, and
 * is a whole number of sediment units, so the budget counts exactly what the heights lost. */
#include <math.h>

#include "jobs/coast/methods.h"

uint64_t tb_coast_d2_from(double metres, double cell_m, bool or_equal)
{
    uint64_t lo = 0, hi = (uint64_t)1 << 32; /* the answer is in [lo, hi] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        double m = tb_coast_waterline_m((uint32_t)mid, cell_m);
        if (or_equal ? m >= metres : m > metres)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Wave-cut platform by an exposure-scaled reach (after the predecessor's surf pass,
 * docs/coast.md). A land cell at dist metres from the waterline with carried exposure e
 * (0..1) lies in the surf zone when dist < e * surf_reach_m; there the land above the platform
 * (platform_m + platform_slope * dist) is cut by cut_fraction, tapered to nothing over the last
 * cell of the zone. Behind the zone the land is untouched, so where it is high the zone ends in a
 * cliff and where it is low little is cut: an open coast gets a wide platform, a sheltered one a
 * narrow one. Units: metres, and whole units of TB_COAST_UNIT_M written to src. Deterministic,
 * pointwise. */
typedef struct {
    const tb_coast_params_t *p;
    double cell_m;
    int64_t w;
    uint32_t reach_d2; /* no cell past this is in reach: the band's reach */
    uint32_t lim_d2;   /* a cell is in reach only below this (dist < surf_reach_m and reach_d2) */
    const uint32_t *reach_of; /* per exposure: a cell is in its reach only below this d2 */
    const uint8_t *kind;
    const uint32_t *d2;
    const uint16_t *exposure;
    float *height_m, *moved_m;
    int64_t *src;
    const tb_coast_region_t *count; /* the cells the tallies count */
    int64_t *planed, *units;        /* per thread: integers, summed in any order */
    const tb_coast_band_t *band;
    int64_t blocks; /* the band's reach: no cell of a farther block is within reach_d2 */
} s_surf_t;

static void s_surf_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    const s_surf_t *c = ctx;
    const tb_coast_params_t *p = c->p;
    double cell_m = c->cell_m, reach_max = p->surf_reach_m;
    int64_t planed = 0, units_cut = 0;
    /* the chunk's rows of both outputs zeroed here, while the rows are the thread's (no separate
     * pass over the planet) */
    size_t row0 = (size_t)y0 * (size_t)c->w, n = (size_t)(y1 - y0) * (size_t)c->w;
    memset(c->moved_m + row0, 0, n * sizeof *c->moved_m);
    memset(c->src + row0, 0, n * sizeof *c->src);
    for (int64_t y = y0; y < y1; y++)
        for (int64_t bx = 0; bx < c->band->bw; bx++) {
            int64_t x0, x1;
            if (!tb_coast_band_in(c->band, y, bx, c->blocks, &x0, &x1))
                continue; /* every cell there is past the surf's reach (docs/coast.md) */
            /* the land cells only, found eight at a time */
            size_t row = (size_t)y * (size_t)c->w;
            for (int64_t x = x0; x < x1; x += 8)
                for (uint64_t land = tb_coast_land8(c->kind + row + x, x1 - x < 8 ? x1 - x : 8);
                     land; land &= land - 1) {
                    size_t i = row + (size_t)x + (size_t)(__builtin_ctzll(land) / 8);
                    uint32_t d2 = c->d2[i];
                    if (d2 >= c->lim_d2 || c->exposure[i] == TB_COAST_NO_EXPOSURE ||
                        d2 >= c->reach_of[c->exposure[i]])
                        continue;
                    double dist = tb_coast_waterline_m(c->d2[i], cell_m);
                    double reach = reach_max * c->exposure[i] / (double)TB_COAST_EXPOSURE_ONE;
                    double taper = (reach - dist) / cell_m;
                    if (taper <= 0)
                        continue;
                    if (taper > 1)
                        taper = 1;
                    double platform = p->platform_m + p->platform_slope * dist;
                    double excess = (double)c->height_m[i] - platform;
                    if (excess <= 0)
                        continue;
                    int64_t units =
                        (int64_t)floor(p->cut_fraction * excess * taper / TB_COAST_UNIT_M);
                    if (units <= 0)
                        continue;
                    double cut_m = (double)units * TB_COAST_UNIT_M;
                    c->height_m[i] = (float)((double)c->height_m[i] - cut_m);
                    c->moved_m[i] = (float)-cut_m;
                    c->src[i] = units;
                    if (tb_coast_region_has(c->count, (int64_t)(i - row), y)) {
                        units_cut += units;
                        planed++;
                    }
                }
        }
    c->planed[thread] += planed;
    c->units[thread] += units_cut;
}

void tb_coast_surf_platform_cut(tb_pool_t *pool, const tb_coast_params_t *p, double cell_m,
                                int64_t w, int64_t h, const uint8_t *kind, const uint32_t *d2,
                                const uint16_t *exposure, float *height_m, float *moved_m,
                                int64_t *src, const tb_coast_band_t *band,
                                const tb_coast_region_t *count, tb_coast_tally_t *t)
{
    double reach_cells = p->surf_reach_m / cell_m + 1.5;
    int64_t planed[TB_COAST_MAX_THREADS] = {0}, units[TB_COAST_MAX_THREADS] = {0};
    s_surf_t c = {.p = p,
                  .cell_m = cell_m,
                  .w = w,
                  .reach_d2 = (uint32_t)fmin(4e9, ceil(reach_cells * reach_cells)),
                  .kind = kind,
                  .d2 = d2,
                  .exposure = exposure,
                  .height_m = height_m,
                  .moved_m = moved_m,
                  .src = src,
                  .count = count,
                  .planed = planed,
                  .units = units,
                  .band = band};
    c.blocks = tb_coast_band_blocks(c.reach_d2);
    /* d2 >= this is dist >= surf_reach_m, past the reach (tb_coast_d2_from) */
    uint64_t from = tb_coast_d2_from(p->surf_reach_m, cell_m, true);
    c.lim_d2 = from <= c.reach_d2 ? (uint32_t)from : c.reach_d2 + 1;
    /* per exposure e, the first d2 at or past its reach (taper <= 0 there), within lim_d2: the
     * reach as s_surf_rows computes it */
    uint32_t reach_of[TB_COAST_EXPOSURE_ONE + 1];
    for (int e = 0; e <= TB_COAST_EXPOSURE_ONE; e++) {
        uint64_t at =
            tb_coast_d2_from(p->surf_reach_m * e / (double)TB_COAST_EXPOSURE_ONE, cell_m, true);
        reach_of[e] = at < c.lim_d2 ? (uint32_t)at : c.lim_d2;
    }
    c.reach_of = reach_of;
    tb_coast_par_rows(pool, h, s_surf_rows, &c);
    int64_t n_planed = 0, units_cut = 0;
    for (int th = 0; th < TB_COAST_MAX_THREADS; th++) {
        n_planed += planed[th];
        units_cut += units[th];
    }
    t->planed_cells += n_planed;
    t->cut_units += units_cut;
}
