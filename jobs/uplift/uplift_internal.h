/* Shared helpers of the uplift module's files (not for use outside jobs/uplift). */
#ifndef TB_UPLIFT_INTERNAL_H
#define TB_UPLIFT_INTERNAL_H

#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "common/noise.h"
#include "jobs/uplift/uplift.h"

/* The noise of a field: salt, wavelength in km (already snapped), circumference from m. */
int tb_uplift_noise(const tb_manifest_t *m, uint32_t salt, double wavelength_km, tb_noise_t *out,
                    tb_err_t *err);

/* Refuses an unfinished manifest, and an ocean margin that cannot hold the class blend's
 * neighbourhood (R cells plus one), naming both numbers. */
int tb_uplift_check_manifest(const tb_manifest_t *m, tb_err_t *err);

/* Refuses a frame that is not valid or not on the planet's lattice. */
int tb_uplift_check_frame(const tb_manifest_t *m, const tb_frame_t *box, tb_err_t *err);

/* The K multiplier of each rock rank band (a seed-hashed permutation of the type ladder). */
void tb_uplift_rock_bands(const tb_manifest_t *m, double mult[TB_UPLIFT_ROCK_TYPES]);
/* tb_uplift_rock_mult with the bands precomputed. */
double tb_uplift_rock_mult_of(const double mult[TB_UPLIFT_ROCK_TYPES], double softness,
                              double rank);

/* tb_uplift_rank with a bucket index over the table: the same bits in a few comparisons. */
#define TB_UPLIFT_RANK_BUCKETS 2048
typedef struct {
    const double *q;
    double lo, inv_step;
    int32_t start[TB_UPLIFT_RANK_BUCKETS];
} tb_uplift_ranker_t;
void tb_uplift_ranker_init(tb_uplift_ranker_t *r, const double *q);
double tb_uplift_ranker_rank(const tb_uplift_ranker_t *r, double value);

/* smoothstep(0, 1, t) with t clamped: 3t^2 - 2t^3, C1 at both ends. */
static inline double tb_uplift_smoothstep(double t)
{
    if (t <= 0)
        return 0;
    if (t >= 1)
        return 1;
    return t * t * (3 - 2 * t);
}

#endif
