/* Fixed-bin histograms that add; see hist.h.
 *
 * The invariant: every field merges exactly in any order. Counts are int64 (merge checks overflow),
 * the sum is uint64 arithmetic modulo 2^64 of clamped quantised values (associative and
 * commutative), and min/max never see -0.0 (canonicalised to +0.0, or min(-0, +0) would depend on
 * order).
 */
#include "common/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_MAGIC 0x49484254u /* "TBHI" little-endian */
#define S_VERSION 1

struct tb_hist_t {
    tb_hist_spec_t spec;
    double width, inv_width;          /* LINEAR */
    double t[TB_HIST_MAX_PER_OCTAVE]; /* LOG2: t_j = (float)2^(j / per_octave) */
    int64_t *counts;                  /* nbins + 2: under, bins, over */
    uint64_t sum_q;                   /* modulo 2^64 */
    int64_t sum_clamped;
    double min, max;
};

static int s_check_spec(tb_hist_spec_t *s, tb_err_t *err)
{
    if (s->nbins < 1 || s->nbins > TB_HIST_MAX_BINS)
        return tb_err_set(err, TB_E_INVALID, "histogram: %d bins, expected 1..%d", (int)s->nbins,
                          TB_HIST_MAX_BINS);
    if (!(s->sum_quantum >= 0) || !isfinite(s->sum_quantum))
        return tb_err_set(err, TB_E_INVALID,
                          "histogram: sum quantum %g, expected 0 (no sum) or a positive number",
                          s->sum_quantum);
    if (s->scale == TB_HIST_LINEAR) {
        if (!isfinite(s->lo) || !isfinite(s->hi) || !(s->lo < s->hi) || !isfinite(s->hi - s->lo))
            return tb_err_set(err, TB_E_INVALID,
                              "histogram: range [%g, %g), expected finite lo < hi", s->lo, s->hi);
        s->lo_exp2 = 0;
        s->per_octave = 0;
        return 0;
    }
    if (s->scale != TB_HIST_LOG2)
        return tb_err_set(err, TB_E_INVALID, "histogram: scale %d, expected linear (1) or log2 (2)",
                          (int)s->scale);
    if (s->per_octave < 1 || s->per_octave > TB_HIST_MAX_PER_OCTAVE)
        return tb_err_set(err, TB_E_INVALID, "histogram: %d bins per octave, expected 1..%d",
                          (int)s->per_octave, TB_HIST_MAX_PER_OCTAVE);
    if (s->lo_exp2 < -126 || s->lo_exp2 > 127)
        return tb_err_set(err, TB_E_INVALID, "histogram: first edge 2^%d, expected 2^-126..2^127",
                          (int)s->lo_exp2);
    int64_t top = (int64_t)s->lo_exp2 + ((int64_t)s->nbins + s->per_octave - 1) / s->per_octave;
    if (top > 128)
        return tb_err_set(
            err, TB_E_INVALID,
            "histogram: %d bins at %d per octave from 2^%d reach 2^%lld, beyond 2^128",
            (int)s->nbins, (int)s->per_octave, (int)s->lo_exp2, (long long)top);
    return 0;
}

static double s_log2_edge(const tb_hist_t *h, int32_t k)
{
    int32_t p = h->spec.per_octave;
    return ldexp(h->t[k % p], h->spec.lo_exp2 + k / p);
}

tb_hist_t *tb_hist_new_spec(const tb_hist_spec_t *spec, tb_err_t *err)
{
    tb_hist_spec_t s = *spec;
    if (s_check_spec(&s, err) != 0)
        return NULL;
    tb_hist_t *h = tb_calloc(1, sizeof *h, "histogram", err);
    if (!h)
        return NULL;
    h->counts = tb_calloc((size_t)s.nbins + 2, sizeof *h->counts, "histogram bins", err);
    if (!h->counts) {
        free(h);
        return NULL;
    }
    h->spec = s;
    if (s.scale == TB_HIST_LINEAR) {
        h->width = (s.hi - s.lo) / s.nbins;
        h->inv_width = s.nbins / (s.hi - s.lo);
    } else {
        for (int32_t j = 0; j < s.per_octave; j++)
            h->t[j] = (double)(float)exp2((double)j / s.per_octave);
        h->spec.lo = s_log2_edge(h, 0);
        h->spec.hi = s_log2_edge(h, s.nbins);
    }
    h->min = INFINITY;
    h->max = -INFINITY;
    return h;
}

tb_hist_t *tb_hist_new_linear(double lo, double hi, int32_t nbins, double sum_quantum,
                              tb_err_t *err)
{
    tb_hist_spec_t s = {
        .scale = TB_HIST_LINEAR, .nbins = nbins, .lo = lo, .hi = hi, .sum_quantum = sum_quantum};
    return tb_hist_new_spec(&s, err);
}

tb_hist_t *tb_hist_new_log2(int32_t lo_exp2, int32_t per_octave, int32_t nbins, double sum_quantum,
                            tb_err_t *err)
{
    tb_hist_spec_t s = {.scale = TB_HIST_LOG2,
                        .nbins = nbins,
                        .lo_exp2 = lo_exp2,
                        .per_octave = per_octave,
                        .sum_quantum = sum_quantum};
    return tb_hist_new_spec(&s, err);
}

tb_hist_t *tb_hist_dup(const tb_hist_t *self)
{
    tb_hist_t *h = tb_hist_new_spec(&self->spec, NULL);
    if (!h)
        return NULL;
    memcpy(h->counts, self->counts, ((size_t)self->spec.nbins + 2) * sizeof *h->counts);
    h->sum_q = self->sum_q;
    h->sum_clamped = self->sum_clamped;
    h->min = self->min;
    h->max = self->max;
    return h;
}

void tb_hist_destroy(tb_hist_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free((*self_p)->counts);
    free(*self_p);
    *self_p = NULL;
}

const tb_hist_spec_t *tb_hist_spec(const tb_hist_t *self)
{
    return &self->spec;
}

bool tb_hist_spec_equal(const tb_hist_spec_t *a, const tb_hist_spec_t *b)
{
    if (a->scale != b->scale || a->nbins != b->nbins || a->sum_quantum != b->sum_quantum)
        return false;
    if (a->scale == TB_HIST_LINEAR)
        return a->lo == b->lo && a->hi == b->hi;
    return a->lo_exp2 == b->lo_exp2 && a->per_octave == b->per_octave;
}

double tb_hist_edge(const tb_hist_t *self, int32_t k)
{
    if (k <= 0)
        return self->spec.lo;
    if (k >= self->spec.nbins)
        return self->spec.hi;
    if (self->spec.scale == TB_HIST_LINEAR)
        return self->spec.lo + k * self->width;
    return s_log2_edge(self, k);
}

int32_t tb_hist_bin_of(const tb_hist_t *self, double v)
{
    const tb_hist_spec_t *s = &self->spec;
    if (isnan(v))
        return s->nbins;
    if (!(v >= s->lo))
        return -1;
    if (!(v < s->hi))
        return s->nbins;
    if (s->scale == TB_HIST_LINEAR) {
        /* The quotient can round across an edge; settle it against the edges themselves, so a
         * value equal to an edge always lands in the bin that edge opens. */
        int32_t k = (int32_t)((v - s->lo) * self->inv_width);
        if (k >= s->nbins)
            k = s->nbins - 1;
        while (k > 0 && v < tb_hist_edge(self, k))
            k--;
        while (k + 1 < s->nbins && v >= tb_hist_edge(self, k + 1))
            k++;
        return k;
    }
    int e;
    double mant = 2 * frexp(v, &e); /* v = mant 2^(e-1), 1 <= mant < 2 */
    int32_t j = 0;
    while (j + 1 < s->per_octave && mant >= self->t[j + 1])
        j++;
    int64_t k = (int64_t)(e - 1 - s->lo_exp2) * s->per_octave + j;
    return k >= s->nbins ? s->nbins : (int32_t)k;
}

int64_t tb_hist_quantise(double v, double quantum, bool *clamped)
{
    if (clamped)
        *clamped = false;
    if (!(quantum > 0) || isnan(v))
        return 0;
    double q = nearbyint(v / quantum);
    if (q > (double)TB_HIST_SUM_CLAMP || q < -(double)TB_HIST_SUM_CLAMP) {
        if (clamped)
            *clamped = true;
        return q > 0 ? TB_HIST_SUM_CLAMP : -TB_HIST_SUM_CLAMP;
    }
    return (int64_t)q;
}

bool tb_hist_add_n(tb_hist_t *self, double v, int64_t count)
{
    if (isnan(v) || count < 1)
        return false;
    self->counts[1 + tb_hist_bin_of(self, v)] += count;
    if (self->spec.sum_quantum > 0) {
        bool clamped;
        int64_t q = tb_hist_quantise(v, self->spec.sum_quantum, &clamped);
        self->sum_q += (uint64_t)q * (uint64_t)count;
        self->sum_clamped += clamped ? count : 0;
    }
    v += 0.0; /* -0.0 becomes +0.0 */
    if (v < self->min)
        self->min = v;
    if (v > self->max)
        self->max = v;
    return true;
}

bool tb_hist_add(tb_hist_t *self, double v)
{
    return tb_hist_add_n(self, v, 1);
}

void tb_hist_clear(tb_hist_t *self)
{
    memset(self->counts, 0, ((size_t)self->spec.nbins + 2) * sizeof *self->counts);
    self->sum_q = 0;
    self->sum_clamped = 0;
    self->min = INFINITY;
    self->max = -INFINITY;
}

int64_t *tb_hist_counts_raw(tb_hist_t *self)
{
    return self->counts;
}

void tb_hist_add_raw_extras(tb_hist_t *self, uint64_t sum_q, int64_t sum_clamped, double min,
                            double max)
{
    self->sum_q += sum_q;
    self->sum_clamped += sum_clamped;
    if (min > max)
        return;
    min += 0.0;
    max += 0.0;
    if (min < self->min)
        self->min = min;
    if (max > self->max)
        self->max = max;
}

int64_t tb_hist_count(const tb_hist_t *self)
{
    /* Every way in (add, merge, decode) keeps the total within int64. */
    int64_t n = 0;
    for (int32_t k = 0; k < self->spec.nbins + 2; k++)
        n += self->counts[k];
    return n;
}

int64_t tb_hist_bin_count(const tb_hist_t *self, int32_t k)
{
    if (k < -1 || k > self->spec.nbins)
        return 0;
    return self->counts[1 + k];
}

int64_t tb_hist_sum_q(const tb_hist_t *self)
{
    return (int64_t)self->sum_q;
}

double tb_hist_sum(const tb_hist_t *self)
{
    if (!(self->spec.sum_quantum > 0))
        return NAN;
    return (double)(int64_t)self->sum_q * self->spec.sum_quantum;
}

int64_t tb_hist_sum_clamped(const tb_hist_t *self)
{
    return self->sum_clamped;
}

double tb_hist_mean(const tb_hist_t *self)
{
    int64_t n = tb_hist_count(self);
    if (n == 0 || !(self->spec.sum_quantum > 0))
        return NAN;
    return tb_hist_sum(self) / (double)n;
}

double tb_hist_min(const tb_hist_t *self)
{
    return self->min;
}
double tb_hist_max(const tb_hist_t *self)
{
    return self->max;
}

/* The value a share f (0..1) of the way through bin k (-1 underflow, nbins overflow). */
static double s_inside(const tb_hist_t *self, int32_t k, double f)
{
    const tb_hist_spec_t *s = &self->spec;
    double a, b;
    if (k < 0) {
        a = self->min;
        b = s->lo;
    } else if (k >= s->nbins) {
        a = s->hi;
        b = self->max;
    } else {
        a = tb_hist_edge(self, k);
        b = tb_hist_edge(self, k + 1);
        if (s->scale == TB_HIST_LOG2)
            return a * pow(b / a, f);
    }
    if (!isfinite(a) || !isfinite(b))
        return f < 0.5 ? a : b;
    return a + f * (b - a);
}

static double s_clamp(const tb_hist_t *self, double v)
{
    if (v < self->min)
        return self->min;
    if (v > self->max)
        return self->max;
    return v;
}

double tb_hist_quantile(const tb_hist_t *self, double q)
{
    int64_t n = tb_hist_count(self);
    if (n == 0 || isnan(q))
        return NAN;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    double rank = q * (double)n;
    int64_t below = 0;
    for (int32_t k = -1; k <= self->spec.nbins; k++) {
        int64_t c = self->counts[1 + k];
        if (c > 0 && rank <= (double)(below + c))
            return s_clamp(self, s_inside(self, k, (rank - (double)below) / (double)c));
        below += c;
    }
    return self->max;
}

double tb_hist_fraction_below(const tb_hist_t *self, double x)
{
    int64_t n = tb_hist_count(self);
    if (n == 0 || isnan(x))
        return NAN;
    int32_t k = tb_hist_bin_of(self, x);
    int64_t below = 0;
    for (int32_t i = -1; i < k; i++)
        below += self->counts[1 + i];
    double part = 0;
    int64_t c = self->counts[1 + k];
    if (c > 0) {
        double a, b;
        if (k < 0) {
            a = self->min;
            b = self->spec.lo;
        } else if (k >= self->spec.nbins) {
            a = self->spec.hi;
            b = self->max;
        } else {
            a = tb_hist_edge(self, k);
            b = tb_hist_edge(self, k + 1);
        }
        double f;
        if (!(x > a))
            f = 0;
        else if (!(x < b))
            f = 1;
        else if (self->spec.scale == TB_HIST_LOG2 && k >= 0 && k < self->spec.nbins)
            f = log(x / a) / log(b / a);
        else
            f = (x - a) / (b - a);
        part = f * (double)c;
    }
    return ((double)below + part) / (double)n;
}

int tb_hist_merge(tb_hist_t *dst, const tb_hist_t *src, tb_err_t *err)
{
    if (!tb_hist_spec_equal(&dst->spec, &src->spec))
        return tb_err_set(err, TB_E_INVALID,
                          "histogram merge: bins differ (%d bins over [%g, %g) against %d over "
                          "[%g, %g))",
                          (int)dst->spec.nbins, dst->spec.lo, dst->spec.hi, (int)src->spec.nbins,
                          src->spec.lo, src->spec.hi);
    int32_t nb = dst->spec.nbins + 2;
    int64_t total;
    if (__builtin_add_overflow(tb_hist_count(dst), tb_hist_count(src), &total))
        return tb_err_set(err, TB_E_INVALID, "histogram merge: the total count overflows int64");
    for (int32_t k = 0; k < nb; k++)
        dst->counts[k] += src->counts[k];
    tb_hist_add_raw_extras(dst, src->sum_q, src->sum_clamped, src->min, src->max);
    return 0;
}

bool tb_hist_equal(const tb_hist_t *a, const tb_hist_t *b)
{
    if (!tb_hist_spec_equal(&a->spec, &b->spec))
        return false;
    if (memcmp(a->counts, b->counts, ((size_t)a->spec.nbins + 2) * sizeof *a->counts) != 0)
        return false;
    return a->sum_q == b->sum_q && a->sum_clamped == b->sum_clamped &&
           memcmp(&a->min, &b->min, sizeof a->min) == 0 &&
           memcmp(&a->max, &b->max, sizeof a->max) == 0;
}

/* Layout, version 1, little-endian:
 *   u32 magic "TBHI", u16 version, u8 scale, u8 zero,
 *   i32 nbins, f64 lo, f64 hi, i32 lo_exp2, i32 per_octave, f64 sum_quantum,
 *   u64 sum_q, i64 sum_clamped, f64 min, f64 max,
 *   varint nonzero counters, then per counter: varint gap since the previous one, varint count.
 * Counter indices run over the nbins + 2 raw counters (underflow first). */
void tb_hist_encode(const tb_hist_t *self, tb_bytes_t *out)
{
    const tb_hist_spec_t *s = &self->spec;
    tb_bytes_put_u32(out, S_MAGIC);
    tb_bytes_put_u16(out, S_VERSION);
    tb_bytes_put_u8(out, (uint8_t)s->scale);
    tb_bytes_put_u8(out, 0);
    tb_bytes_put_u32(out, (uint32_t)s->nbins);
    tb_bytes_put_f64(out, s->lo);
    tb_bytes_put_f64(out, s->hi);
    tb_bytes_put_u32(out, (uint32_t)s->lo_exp2);
    tb_bytes_put_u32(out, (uint32_t)s->per_octave);
    tb_bytes_put_f64(out, s->sum_quantum);
    tb_bytes_put_u64(out, self->sum_q);
    tb_bytes_put_i64(out, self->sum_clamped);
    tb_bytes_put_f64(out, self->min);
    tb_bytes_put_f64(out, self->max);
    int32_t nb = s->nbins + 2;
    uint64_t nonzero = 0;
    for (int32_t k = 0; k < nb; k++)
        nonzero += self->counts[k] != 0;
    tb_bytes_put_varint(out, nonzero);
    int64_t prev = -1;
    for (int32_t k = 0; k < nb; k++) {
        if (self->counts[k] == 0)
            continue;
        tb_bytes_put_varint(out, (uint64_t)(k - prev - 1));
        tb_bytes_put_varint(out, (uint64_t)self->counts[k]);
        prev = k;
    }
}

tb_hist_t *tb_hist_decode(tb_reader_t *r, tb_err_t *err)
{
    size_t at = r->pos;
    if (tb_reader_u32(r) != S_MAGIC || r->failed) {
        tb_err_set(err, TB_E_FORMAT, "histogram at byte %zu: no TBHI magic", at);
        return NULL;
    }
    uint16_t version = tb_reader_u16(r);
    if (version != S_VERSION) {
        tb_err_set(err, TB_E_FORMAT, "histogram at byte %zu: version %u, this build reads %d", at,
                   version, S_VERSION);
        return NULL;
    }
    tb_hist_spec_t s = {0};
    s.scale = (tb_hist_scale_t)tb_reader_u8(r);
    (void)tb_reader_u8(r);
    s.nbins = (int32_t)tb_reader_u32(r);
    s.lo = tb_reader_f64(r);
    s.hi = tb_reader_f64(r);
    s.lo_exp2 = (int32_t)tb_reader_u32(r);
    s.per_octave = (int32_t)tb_reader_u32(r);
    s.sum_quantum = tb_reader_f64(r);
    uint64_t sum_q = tb_reader_u64(r);
    int64_t sum_clamped = tb_reader_i64(r);
    double min = tb_reader_f64(r), max = tb_reader_f64(r);
    uint64_t nonzero = tb_reader_varint(r);
    if (r->failed) {
        tb_err_set(err, TB_E_FORMAT, "histogram at byte %zu: truncated header", at);
        return NULL;
    }
    tb_err_t spec_err;
    tb_hist_t *h = tb_hist_new_spec(&s, &spec_err);
    if (!h) {
        tb_err_set(err, spec_err.code == TB_E_NOMEM ? TB_E_NOMEM : TB_E_FORMAT,
                   "histogram at byte %zu: %s", at, spec_err.msg);
        return NULL;
    }
    if (s.scale == TB_HIST_LOG2 && (h->spec.lo != s.lo || h->spec.hi != s.hi))
        goto malformed;
    int64_t nb = (int64_t)s.nbins + 2, prev = -1, total = 0;
    if (nonzero > (uint64_t)nb)
        goto malformed;
    for (uint64_t i = 0; i < nonzero; i++) {
        uint64_t gap = tb_reader_varint(r), count = tb_reader_varint(r);
        if (r->failed || gap >= (uint64_t)nb || count == 0 || count > (uint64_t)INT64_MAX)
            goto malformed;
        int64_t k = prev + 1 + (int64_t)gap;
        if (k >= nb || __builtin_add_overflow(total, (int64_t)count, &total))
            goto malformed;
        h->counts[k] = (int64_t)count;
        prev = k;
    }
    if (sum_clamped < 0 || sum_clamped > total)
        goto malformed;
    if (!(s.sum_quantum > 0) && (sum_q != 0 || sum_clamped != 0))
        goto malformed;
    if (total == 0) {
        if (!(min == INFINITY && max == -INFINITY) || sum_q != 0)
            goto malformed;
    } else if (isnan(min) || isnan(max) || !(min <= max) || (signbit(min) && min == 0) ||
               (signbit(max) && max == 0)) {
        goto malformed;
    }
    h->sum_q = sum_q;
    h->sum_clamped = sum_clamped;
    h->min = min;
    h->max = max;
    return h;
malformed:
    tb_hist_destroy(&h);
    tb_err_set(err, TB_E_FORMAT,
               "histogram at byte %zu: malformed counts or extremes (truncated or corrupt)", at);
    return NULL;
}

int tb_hist_log2_lut(const tb_hist_t *self, tb_hist_log2_lut_t *lut, tb_err_t *err)
{
    const tb_hist_spec_t *s = &self->spec;
    if (s->scale != TB_HIST_LOG2)
        return tb_err_set(err, TB_E_INVALID, "histogram: a fast log2 table needs log2 bins");
    memset(lut, 0, sizeof *lut);
    lut->lo_exp2 = s->lo_exp2;
    lut->per_octave = s->per_octave;
    lut->nbins = s->nbins;
    lut->lo_f = (float)s->lo;
    for (int32_t j = 0; j < s->per_octave; j++) {
        float t = (float)self->t[j];
        uint32_t bits;
        memcpy(&bits, &t, sizeof bits);
        lut->thr[j] = j == 0 ? 0 : (bits & 0x7fffffu);
    }
    for (uint32_t slot = 0; slot < (1u << TB_HIST_LUT_BITS); slot++) {
        uint32_t start = slot << (23 - TB_HIST_LUT_BITS);
        int32_t j = 0;
        while (j + 1 < s->per_octave && start >= lut->thr[j + 1])
            j++;
        lut->guess[slot] = (uint8_t)j;
    }
    return 0;
}

void tb_hist_log2_bins4_f32(const tb_hist_log2_lut_t *L, const float *restrict v, size_t n,
                            int32_t *restrict out)
{
    const int32_t t1 = (int32_t)L->thr[1], t2 = (int32_t)L->thr[2], t3 = (int32_t)L->thr[3];
    const int32_t base = 127 + L->lo_exp2, nb = L->nbins;
    const float lo = L->lo_f;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        int32_t mant = (int32_t)(bits & 0x7fffffu);
        int32_t k = ((int32_t)(bits >> 23) - base) * 4 + (mant >= t1) + (mant >= t2) + (mant >= t3);
        k = k < nb ? k : nb;
        k = v[i] >= lo ? k : -1;
        out[i] = v[i] != v[i] ? nb : k;
    }
}
