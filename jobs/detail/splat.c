/* The splat rules; see splat.h. */
#include "jobs/detail/splat.h"

#include <math.h>

static double s_smooth(double a, double b, double x)
{
    double t = (x - a) / (b - a);
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    return t * t * (3 - 2 * t);
}

void tb_splat_weights(const tb_detail_params_t *p, double slope_deg, double water, double deposit_m,
                      double altitude_m, bool ocean, uint8_t out[4])
{
    double w[4];
    double rock = s_smooth(p->splat_rock_deg - 5, p->splat_rock_deg + 5, slope_deg);
    double free_ = 1 - rock;
    double a = 0, sed;
    if (ocean) {
        sed = free_;
    } else {
        double snow = s_smooth(p->splat_snowline_m - 50, p->splat_snowline_m + 50, altitude_m);
        double scree = s_smooth(p->splat_scree_deg - 3, p->splat_scree_deg + 3, slope_deg);
        a = free_ * (snow + (1 - snow) * scree);
        double wet = s_smooth(0.1 * p->splat_flow_full, p->splat_flow_full, water);
        double dep = s_smooth(0, p->splat_sediment_m, deposit_m);
        sed = (free_ - a) * (wet > dep ? wet : dep);
    }
    w[0] = rock;
    w[3] = a;
    w[2] = sed;
    w[1] = 1 - rock - a - sed;
    w[1] = w[1] < 0 ? 0 : w[1];
    /* largest remainder to exactly 255 */
    int q[4], sum = 0;
    double rem[4];
    for (int k = 0; k < 4; k++) {
        double v = w[k] * 255.0;
        q[k] = (int)floor(v);
        rem[k] = v - q[k];
        sum += q[k];
    }
    while (sum < 255) {
        int best = 0;
        for (int k = 1; k < 4; k++)
            if (rem[k] > rem[best])
                best = k;
        q[best]++;
        rem[best] = -1;
        sum++;
    }
    while (sum > 255) { /* rounding of w above 1: take from the largest */
        int best = 0;
        for (int k = 1; k < 4; k++)
            if (q[k] > q[best])
                best = k;
        q[best]--;
        sum--;
    }
    for (int k = 0; k < 4; k++)
        out[k] = (uint8_t)q[k];
}
