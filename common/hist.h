/* Fixed-bin histograms that add (docs/statistics.md).
 *
 * A histogram has fixed bins decided by its spec, never by its data, so two histograms of the same
 * spec merge by adding, and a planet's distribution is pooled from its regions without ever holding
 * a planet-sized sort. Everything a histogram keeps merges EXACTLY and in ANY order: counts are
 * int64, the optional sum is an integer of quantised values (round(v / sum_quantum), each clamped
 * to
 * +-2^31, added modulo 2^64 so the result is exact while fewer than 2^32 values are summed), and
 * the extremes are a min and a max. Merging in region-id order (docs/determinism.md, rule 4) is
 * then a convention, not a requirement: "pooled equals whole to the last bit" holds by
 * construction.
 *
 * Two bin scales:
 *   TB_HIST_LINEAR  nbins equal bins over [lo, hi); bin k is [lo + k w, lo + (k+1) w), w =
 * (hi-lo)/nbins TB_HIST_LOG2    nbins geometric bins from 2^lo_exp2, per_octave to a doubling: bin
 * k is [e(k), e(k+1)) with e(o * per_octave + j) = 2^(lo_exp2 + o) * t_j, where t_j is 2^(j /
 * per_octave) rounded to float (so a float value bins identically through tb_hist_log2_bin_f32, the
 * fast path for kernels) plus an underflow and an overflow counter. NaN is refused by tb_hist_add.
 * Typical sizes: 100 to 20000 bins; a histogram is a few kilobytes to a few hundred.
 *
 * Kernels that fill millions of cells bin values themselves (a power-of-two LINEAR width is exact
 * as (int)(v * inv_width); LOG2 through tb_hist_log2_bin_f32) and write the raw counters; they then
 * report their sum and extremes with tb_hist_add_raw_extras.
 */
#ifndef TB_HIST_H
#define TB_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/bytes.h"
#include "common/error.h"

#define TB_HIST_MAX_BINS (1 << 24)
#define TB_HIST_MAX_PER_OCTAVE 64
#define TB_HIST_SUM_CLAMP ((int64_t)1 << 31) /* a quantised value is clamped to +-this */

typedef enum { TB_HIST_LINEAR = 1, TB_HIST_LOG2 = 2 } tb_hist_scale_t;

typedef struct {
    tb_hist_scale_t scale;
    int32_t nbins;      /* 1 .. TB_HIST_MAX_BINS */
    double lo, hi;      /* LINEAR: the binned range; LOG2: derived, the first and last edges */
    int32_t lo_exp2;    /* LOG2: the first edge is 2^lo_exp2 (-126 .. 127) */
    int32_t per_octave; /* LOG2: bins per doubling, 1 .. TB_HIST_MAX_PER_OCTAVE */
    double sum_quantum; /* > 0: keep the sum of round(v / sum_quantum); 0: keep no sum */
} tb_hist_spec_t;

typedef struct tb_hist_t tb_hist_t;

/* A histogram of nbins equal bins over [lo, hi). Returns NULL with *err naming the bad argument
 * (lo >= hi, a non-finite bound, nbins out of range, a negative or non-finite quantum). Caller
 * owns. */
tb_hist_t *tb_hist_new_linear(double lo, double hi, int32_t nbins, double sum_quantum,
                              tb_err_t *err);
/* A histogram of nbins geometric bins from 2^lo_exp2, per_octave to a doubling; the last edge must
 * stay below 2^128 (float range). Returns NULL with *err set. Caller owns. */
tb_hist_t *tb_hist_new_log2(int32_t lo_exp2, int32_t per_octave, int32_t nbins, double sum_quantum,
                            tb_err_t *err);
/* A histogram of the spec's shape (scale, bins, quantum; a LOG2 spec's lo/hi are recomputed). */
tb_hist_t *tb_hist_new_spec(const tb_hist_spec_t *spec, tb_err_t *err);
/* A deep copy, or NULL when memory runs out. */
tb_hist_t *tb_hist_dup(const tb_hist_t *self);
/* Frees the histogram and sets *self_p to NULL; accepts NULL. */
void tb_hist_destroy(tb_hist_t **self_p);

/* The spec, owned by the histogram. */
const tb_hist_spec_t *tb_hist_spec(const tb_hist_t *self);
/* Whether two specs describe the same bins and quantum (merge refuses anything else). */
bool tb_hist_spec_equal(const tb_hist_spec_t *a, const tb_hist_spec_t *b);

/* The bin of v: -1 below the first edge (and every v <= 0 on LOG2), nbins at or above the last edge
 * (and NaN), else k with edge(k) <= v < edge(k+1). */
int32_t tb_hist_bin_of(const tb_hist_t *self, double v);
/* Edge k, 0 <= k <= nbins: the lower edge of bin k (edge(nbins) is the upper edge of the last). */
double tb_hist_edge(const tb_hist_t *self, int32_t k);

/* Adds one value (count times); returns false and adds nothing when v is NaN or count < 1. The
 * caller keeps the total count within int64 (merge and decode check it; one-at-a-time adds cannot
 * reach it). */
bool tb_hist_add(tb_hist_t *self, double v);
bool tb_hist_add_n(tb_hist_t *self, double v, int64_t count);
/* Empties the histogram (keeps the spec). */
void tb_hist_clear(tb_hist_t *self);

/* The raw counters: nbins + 2 of them, [0] the underflow, [1 + k] bin k, [nbins + 1] the overflow.
 * For kernels that bin values themselves; they must also call tb_hist_add_raw_extras. */
int64_t *tb_hist_counts_raw(tb_hist_t *self);
/* Folds a kernel's quantised sum (modulo 2^64), clamped-value count and extremes into the
 * histogram; min > max (an empty batch) leaves the extremes alone. */
void tb_hist_add_raw_extras(tb_hist_t *self, uint64_t sum_q, int64_t sum_clamped, double min,
                            double max);
/* round(v / quantum) clamped to +-TB_HIST_SUM_CLAMP, the quantity a sum adds (0 for NaN). */
int64_t tb_hist_quantise(double v, double quantum, bool *clamped);

/* Total count (bins, underflow and overflow). */
int64_t tb_hist_count(const tb_hist_t *self);
/* Count of bin k; k = -1 is the underflow and k = nbins the overflow; 0 outside. */
int64_t tb_hist_bin_count(const tb_hist_t *self, int32_t k);
/* The sum of the quantised values, as the integer and in value units (NaN when no sum is kept). */
int64_t tb_hist_sum_q(const tb_hist_t *self);
double tb_hist_sum(const tb_hist_t *self);
/* Values whose quantised magnitude was clamped (the sum is then not the true sum). */
int64_t tb_hist_sum_clamped(const tb_hist_t *self);
/* The mean, sum / count (NaN when empty or without a sum). */
double tb_hist_mean(const tb_hist_t *self);
/* The exact smallest and largest value added (+inf / -inf when empty). */
double tb_hist_min(const tb_hist_t *self);
double tb_hist_max(const tb_hist_t *self);

/* The q-quantile, 0 <= q <= 1: the value below which a share q of the count lies, found by walking
 * the bins and interpolating inside the one that holds it (linearly on LINEAR bins, geometrically
 * on LOG2), clamped to [min, max] so a histogram of one value returns it exactly. The underflow and
 * overflow interpolate between the exact extreme and the first/last edge. NaN when empty. */
double tb_hist_quantile(const tb_hist_t *self, double q);
/* The share of the count below x, interpolated inside the bin that holds x; exact when x is an
 * edge. NaN when empty. */
double tb_hist_fraction_below(const tb_hist_t *self, double x);

/* Adds src into dst (same spec). Exact, commutative and associative. Returns 0, or -1 with *err set
 * when the specs differ or a count would overflow int64 (dst is then unchanged). */
int tb_hist_merge(tb_hist_t *dst, const tb_hist_t *src, tb_err_t *err);
/* Whether two histograms hold the same spec, counts, sum and extremes, bit for bit. */
bool tb_hist_equal(const tb_hist_t *a, const tb_hist_t *b);

/* Appends the versioned little-endian encoding (counts sparse as varint gaps and values). */
void tb_hist_encode(const tb_hist_t *self, tb_bytes_t *out);
/* Reads one histogram from r, checking every field; returns NULL with *err naming what was
 * malformed (never crashes on truncated or random bytes). Caller owns. */
tb_hist_t *tb_hist_decode(tb_reader_t *r, tb_err_t *err);

/* The fast LOG2 binning of a float, for kernels: a table lookup on the top mantissa bits and at
 * most a few threshold comparisons. Same bins as tb_hist_bin_of on (double)v. */
#define TB_HIST_LUT_BITS 8
typedef struct {
    int32_t lo_exp2, per_octave, nbins;
    float lo_f;                           /* 2^lo_exp2 */
    uint32_t thr[TB_HIST_MAX_PER_OCTAVE]; /* mantissa bits of t_j; thr[0] = 0 */
    uint8_t guess[1 << TB_HIST_LUT_BITS]; /* sub-bin of the start of each mantissa slot */
} tb_hist_log2_lut_t;

/* Fills *lut for a LOG2 histogram; returns -1 with *err set when the histogram is not LOG2 or its
 * first edge is not a normal float. */
int tb_hist_log2_lut(const tb_hist_t *self, tb_hist_log2_lut_t *lut, tb_err_t *err);

static inline int32_t tb_hist_log2_bin_f32(const tb_hist_log2_lut_t *L, float v)
{
    if (v != v)
        return L->nbins;
    if (!(v >= L->lo_f))
        return -1;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    int32_t octave = (int32_t)(bits >> 23) - 127 - L->lo_exp2;
    uint32_t mant = bits & 0x7fffffu;
    int32_t j = L->guess[mant >> (23 - TB_HIST_LUT_BITS)];
    while (j + 1 < L->per_octave && mant >= L->thr[j + 1])
        j++;
    int64_t k = (int64_t)octave * L->per_octave + j;
    return k >= L->nbins ? L->nbins : (int32_t)k;
}

/* tb_hist_log2_bin_f32 of n floats into out, for a lut of exactly 4 bins an octave: three
 * comparisons instead of a table lookup, so the loop vectorises (a row of a grid at a time). */
void tb_hist_log2_bins4_f32(const tb_hist_log2_lut_t *lut, const float *v, size_t n, int32_t *out);

#endif
