/* The massif fabric and the planet rank (docs/uplift.md; docs/traps.md).
 *
 * One fBm for the whole planet (salt TB_SALT_MASSIF, massif.wavelength_snapped_km) is ranked
 * through the probe's quantile table, so a cell's rank is the share of the planet whose fabric is
 * lower. Each class cuts the same ranked fabric at rank 1 - massif_fraction: a highland belt and
 * the hills of the lowland beside it are the high and low parts of one structure, never two noises
 * meeting at a painted edge. The weight rises through a smoothstep band in rank centred on the cut,
 * so its mean over a large area is the class's fraction exactly, and nothing steps.
 */
#include <math.h>

#include "common/hash.h"
#include "common/noise.h"
#include "jobs/uplift/uplift.h"
#include "jobs/uplift/uplift_internal.h"

double tb_uplift_massif_value(const tb_manifest_t *m, double x_m, double y_m)
{
    tb_noise_t n;
    if (tb_uplift_noise(m, TB_SALT_MASSIF, m->massif.wavelength_snapped_km, &n, NULL) != 0)
        return 0;
    return tb_noise_fbm(&n, x_m, y_m, TB_UPLIFT_MASSIF_OCTAVES, TB_UPLIFT_FBM_GAIN);
}

/* The rank of a value strictly inside the table, given lo, the last index with q[lo] <= value. */
static double s_rank_at(const double *q, int lo, double value)
{
    double span = q[lo + 1] - q[lo];
    double frac = span > 0 ? (value - q[lo]) / span : 0;
    return ((double)lo + frac) / (TB_UPLIFT_PROBE_LEVELS - 1);
}

double tb_uplift_rank(const double q[TB_UPLIFT_PROBE_LEVELS], double value)
{
    const int last = TB_UPLIFT_PROBE_LEVELS - 1;
    if (!(value > q[0]))
        return 0;
    if (value >= q[last])
        return 1;
    int lo = 0, hi = last; /* q[lo] < value < q[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (q[mid] <= value)
            lo = mid;
        else
            hi = mid;
    }
    return s_rank_at(q, lo, value);
}

void tb_uplift_ranker_init(tb_uplift_ranker_t *r, const double *q)
{
    const int last = TB_UPLIFT_PROBE_LEVELS - 1;
    r->q = q;
    r->lo = q[0];
    r->inv_step = q[last] > q[0] ? TB_UPLIFT_RANK_BUCKETS / (q[last] - q[0]) : 0;
    int s = 0;
    for (int b = 0; b < TB_UPLIFT_RANK_BUCKETS; b++) {
        double edge = q[0] + (double)b / r->inv_step;
        while (s + 1 < last && q[s + 1] <= edge)
            s++;
        r->start[b] = s;
    }
}

double tb_uplift_ranker_rank(const tb_uplift_ranker_t *r, double value)
{
    const double *q = r->q;
    const int last = TB_UPLIFT_PROBE_LEVELS - 1;
    if (!(value > q[0]))
        return 0;
    if (value >= q[last])
        return 1;
    /* Start from the bucket's index and settle on the last q <= value: the same index the binary
     * search finds, so the same bits, whatever the bucket arithmetic rounded to. */
    double fb = (value - r->lo) * r->inv_step;
    int b = fb < 0 ? 0 : (fb >= TB_UPLIFT_RANK_BUCKETS ? TB_UPLIFT_RANK_BUCKETS - 1 : (int)fb);
    int lo = r->start[b];
    while (lo > 0 && q[lo] > value)
        lo--;
    while (q[lo + 1] <= value)
        lo++;
    return s_rank_at(q, lo, value);
}

double tb_uplift_massif_weight(double rank, double fraction)
{
    if (fraction >= 1)
        return 1;
    if (fraction <= 0)
        return 0;
    double cut = 1 - fraction;
    double band = TB_UPLIFT_MASSIF_BAND;
    band = fmin(band, 2 * fraction);
    band = fmin(band, 2 * cut);
    return tb_uplift_smoothstep((rank - (cut - 0.5 * band)) / band);
}

int64_t tb_uplift_blend_radius_cells(double cell_m)
{
    double r = round(TB_UPLIFT_BLEND_M / (3.0 * cell_m));
    return 3 * (r < 1 ? 1 : (int64_t)r);
}
