/* Lithology: the rock field's multiplier on K (docs/uplift.md, "Lithology").
 *
 * A second planet-wide fBm (salt TB_SALT_ROCK, rock.wavelength_snapped_km) is ranked through the
 * probe's quantiles; the rank axis is cut into TB_UPLIFT_ROCK_TYPES equal bands and band i holds
 * rock type perm(i), a permutation hashed from the seed, so hard and soft rock may sit side by
 * side. Type t multiplies K by k_min (k_max / k_min)^(t / (TYPES - 1)). A boundary between bands is
 * softened POINTWISE in rank space: within rock.softness / 2 of it the multiplier runs through a
 * smoothstep from one type to the next. That needs only the cell's own value - never a blur, whose
 * neighbourhood would read cells another decomposition does not hold - and grades the boundary by
 * the field's own gradient. Softness is capped at one band so the ramps never overlap.
 */
#include <math.h>

#include "common/hash.h"
#include "common/noise.h"
#include "jobs/uplift/uplift.h"
#include "jobs/uplift/uplift_internal.h"

double tb_uplift_rock_value(const tb_manifest_t *m, double x_m, double y_m)
{
    tb_noise_t n;
    if (tb_uplift_noise(m, TB_SALT_ROCK, m->rock.wavelength_snapped_km, &n, NULL) != 0)
        return 0;
    return tb_noise_fbm(&n, x_m, y_m, TB_UPLIFT_ROCK_OCTAVES, TB_UPLIFT_FBM_GAIN);
}

/* The multiplier of each rank band: a Fisher-Yates shuffle of the geometric type ladder driven by
 * the world hash at fixed points, so it depends on the seed alone. */
void tb_uplift_rock_bands(const tb_manifest_t *m, double mult[TB_UPLIFT_ROCK_TYPES])
{
    const int n = TB_UPLIFT_ROCK_TYPES;
    int perm[TB_UPLIFT_ROCK_TYPES];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(tb_hash_unit(tb_hash(m->seed, TB_SALT_ROCK_TYPES, i, 0, 0)) * (i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    double ratio = m->rock.k_max_mult / m->rock.k_min_mult;
    for (int i = 0; i < n; i++)
        mult[i] = m->rock.k_min_mult * pow(ratio, (double)perm[i] / (n - 1));
}

double tb_uplift_rock_mult_of(const double mult[TB_UPLIFT_ROCK_TYPES], double softness, double rank)
{
    const int n = TB_UPLIFT_ROCK_TYPES;
    double soft = fmin(softness, 1.0 / n);
    int band = (int)(rank * n);
    band = band < 0 ? 0 : (band >= n ? n - 1 : band);
    int edge = (int)lround(rank * n); /* nearest interior boundary, at rank edge / n */
    if (soft > 0 && edge >= 1 && edge <= n - 1) {
        double from = (double)edge / n - 0.5 * soft;
        if (rank > from && rank < from + soft)
            return mult[edge - 1] +
                   (mult[edge] - mult[edge - 1]) * tb_uplift_smoothstep((rank - from) / soft);
    }
    return mult[band];
}

double tb_uplift_rock_mult(const tb_manifest_t *m, double rank)
{
    double mult[TB_UPLIFT_ROCK_TYPES];
    tb_uplift_rock_bands(m, mult);
    return tb_uplift_rock_mult_of(mult, m->rock.softness, rank);
}
