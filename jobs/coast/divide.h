/* Division of a non-negative int64 by a constant, as a multiply and a shift (docs/coast.md, "River
 * supply"): the delta stretch divides every cell near a mouth by a tent's weight twice, and an
 * int64 division costs 20 to 40 cycles where a 64 x 64 -> 128-bit multiply costs 3 or 4.
 *
 * For a divisor d >= 1 let l = ceil(log2 d) (2^l >= d) and m = ceil(2^(63 + l) / d). For every
 * 0 <= n < 2^63, floor(m n / 2^(63 + l)) = floor(n / d): write m = (2^(63 + l) + e) / d with
 * 0 <= e < d <= 2^l; then m n / 2^(63 + l) = n / d + e n / (d 2^(63 + l)), the second term is
 * below 2^l 2^63 / (d 2^(63 + l)) = 1 / d, and n / d = q + r / d with r <= d - 1, so the sum is at
 * least q and below q + (d - 1) / d + 1 / d = q + 1. m fits 64 bits: for d = 2^l it is 2^63, and
 * for 2^(l - 1) < d < 2^l it is at most ceil(2^(63 + l) / (2^(l - 1) + 1)) < 2^64. It is computed
 * as the high 64 bits of m (2 n) (2 n < 2^64), which is floor(m n / 2^63), shifted right by l
 * (floor(floor(x) / 2^l) = floor(x / 2^l)): one multiply and two shifts. A negative n (which the
 * callers do not make) takes the plain division, so the quotient is C's for every int64. */
#ifndef TB_JOBS_COAST_DIVIDE_H
#define TB_JOBS_COAST_DIVIDE_H

#include <stdint.h>

typedef struct {
    int64_t d;
    uint64_t m;
    unsigned shift; /* l */
} tb_coast_div_t;

/* The reciprocal of d, 1 <= d < 2^63. */
static inline tb_coast_div_t tb_coast_div_make(int64_t d)
{
    unsigned l = 0;
    while (l < 63 && ((uint64_t)1 << l) < (uint64_t)d)
        l++;
    /* ceil(2^(63 + l) / d) = floor((2^(63 + l) - 1) / d) + 1 */
    unsigned __int128 top = ((unsigned __int128)1 << (63 + l)) - 1;
    tb_coast_div_t r = {d, (uint64_t)(top / (unsigned __int128)(uint64_t)d) + 1, l};
    return r;
}

/* n / d, as C's division gives it */
static inline int64_t tb_coast_div(const tb_coast_div_t *v, int64_t n)
{
    if (n < 0)
        return n / v->d;
    uint64_t hi = (uint64_t)(((unsigned __int128)v->m * ((uint64_t)n << 1)) >> 64);
    return (int64_t)(hi >> v->shift);
}

#endif
