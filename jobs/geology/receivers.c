/* D8 receivers with a world-keyed, per-step tie-break jitter; see receivers.h. */
#include "jobs/geology/receivers.h"

#include <string.h>

#include "common/hash.h"
#include "common/simd.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if TB_SIMD_HAVE_AVX2
#include <immintrin.h>
#endif

/* 1 / distance in cells: slopes compare in cell units, the metres cancel. */
static const float s_inv_dist[8] = {0.70710678f, 1.0f,        0.70710678f, 1.0f,
                                    1.0f,        0.70710678f, 1.0f,        0.70710678f};

/* A hash byte b as a jitter in [-1, 1]: b / 127.5 - 1.0, folded by the compiler (correctly
 * rounded, as the same two operations are at run time) instead of eight divisions a call. */
#define S_U(b) ((double)(b) / 127.5 - 1.0)
#define S_U4(b) S_U(b), S_U((b) + 1), S_U((b) + 2), S_U((b) + 3)
#define S_U16(b) S_U4(b), S_U4((b) + 4), S_U4((b) + 8), S_U4((b) + 12)
#define S_U64(b) S_U16(b), S_U16((b) + 16), S_U16((b) + 32), S_U16((b) + 48)
static const double s_unit[256] = {S_U64(0), S_U64(64), S_U64(128), S_U64(192)};
#undef S_U
#undef S_U4
#undef S_U16
#undef S_U64

/* The jittered argmax over the strictly lower neighbours; only called on a near tie. Each lower
 * neighbour's score is (double)(drop x 1 / distance) x (1 + J u), u the neighbour's hash byte
 * mapped to [-1, 1]; the first highest score above 0 wins. */
static uint8_t s_jittered(const float *h, size_t c, const ptrdiff_t *off,
                          const tb_router_jitter_t *jit, int64_t lx, int64_t ly)
{
    uint64_t bits = tb_hash_cell(jit->key, lx, ly);
    float hc = h[c];
#if defined(__SSE2__)
    /* The same float and double operations as the loop below, two neighbours a vector: a maximum
     * rounds nothing, so the first lane holding the highest score is the loop's choice. */
    float nb[8];
    for (int k = 0; k < 8; k++)
        nb[k] = h[(ptrdiff_t)c + off[k]];
    __m128 hcv = _mm_set1_ps(hc), zero = _mm_setzero_ps();
    __m128 da = _mm_sub_ps(hcv, _mm_loadu_ps(nb)), db = _mm_sub_ps(hcv, _mm_loadu_ps(nb + 4));
    __m128 la = _mm_cmpgt_ps(da, zero), lb = _mm_cmpgt_ps(db, zero); /* strictly lower */
    if ((_mm_movemask_ps(la) | _mm_movemask_ps(lb)) == 0)
        return TB_DIR_NONE;
    __m128 pa = _mm_mul_ps(da, _mm_loadu_ps(s_inv_dist));
    __m128 pb = _mm_mul_ps(db, _mm_loadu_ps(s_inv_dist + 4));
    __m128d amp = _mm_set1_pd(jit->amplitude), one = _mm_set1_pd(1.0), s[4];
    for (int q = 0; q < 4; q++) {
        __m128 p = q < 2 ? pa : pb, l = q < 2 ? la : lb;
        if (q & 1) {
            p = _mm_movehl_ps(p, p);
            l = _mm_unpackhi_ps(l, l);
        } else {
            l = _mm_unpacklo_ps(l, l);
        }
        __m128d u =
            _mm_set_pd(s_unit[(bits >> (16 * q + 8)) & 0xff], s_unit[(bits >> (16 * q)) & 0xff]);
        __m128d v = _mm_mul_pd(_mm_cvtps_pd(p), _mm_add_pd(one, _mm_mul_pd(amp, u)));
        s[q] = _mm_and_pd(v, _mm_castps_pd(l)); /* 0 where not lower */
    }
    __m128d m = _mm_max_pd(_mm_max_pd(s[0], s[1]), _mm_max_pd(s[2], s[3]));
    m = _mm_max_pd(m, _mm_unpackhi_pd(m, m));
    double best = _mm_cvtsd_f64(m);
    if (!(best > 0))
        return TB_DIR_NONE;
    __m128d bv = _mm_set1_pd(best);
    unsigned eq = 0;
    for (int q = 0; q < 4; q++)
        eq |= (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(s[q], bv)) << (2 * q);
    return (uint8_t)__builtin_ctz(eq);
#else
    double best = 0;
    uint8_t bk = TB_DIR_NONE;
    for (int k = 0; k < 8; k++) {
        float d = hc - h[(ptrdiff_t)c + off[k]];
        if (d > 0) {
            double v = s_unit[(bits >> (8 * k)) & 0xff];
            double s = (double)(d * s_inv_dist[k]) * (1.0 + jit->amplitude * v);
            if (s > best) {
                best = s;
                bk = (uint8_t)k;
            }
        }
    }
    return bk;
#endif
}

#if defined(__SSE2__)
/* The loop of s_receiver for an inner cell, its eight slopes in two vectors. The loop keeps the
 * first steepest slope above 0 (bk, best) and the second largest of {0, 0, the eight slopes}
 * (second); that is best again when the largest value occurs twice, else the largest of the
 * others and 0. Maxima of floats round nothing, so these are its values. */
static inline int s_steepest_v(const float *h, size_t c, ptrdiff_t W, float *best_out,
                               float *second_out)
{
    __m128 na, nb;
    tb_topo_nb8_ps(h, c, W, &na, &nb);
    __m128 hcv = _mm_set1_ps(h[c]);
    __m128 sa = _mm_mul_ps(_mm_sub_ps(hcv, na), _mm_loadu_ps(s_inv_dist));
    __m128 sb = _mm_mul_ps(_mm_sub_ps(hcv, nb), _mm_loadu_ps(s_inv_dist + 4));
    __m128 m = _mm_max_ps(sa, sb);
    m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    float best = _mm_cvtss_f32(m);
    if (!(best > 0)) {
        *best_out = *second_out = 0;
        return TB_DIR_NONE;
    }
    __m128 bv = _mm_set1_ps(best), ea = _mm_cmpeq_ps(sa, bv), eb = _mm_cmpeq_ps(sb, bv);
    unsigned eq = (unsigned)(_mm_movemask_ps(ea) | _mm_movemask_ps(eb) << 4);
    float second = best;
    if ((eq & (eq - 1)) == 0) { /* one steepest: the largest of the others and 0 */
        __m128 r = _mm_max_ps(_mm_andnot_ps(ea, sa), _mm_andnot_ps(eb, sb));
        r = _mm_max_ps(r, _mm_shuffle_ps(r, r, _MM_SHUFFLE(1, 0, 3, 2)));
        r = _mm_max_ps(r, _mm_shuffle_ps(r, r, _MM_SHUFFLE(2, 3, 0, 1)));
        second = _mm_cvtss_f32(r);
        second = second > 0 ? second : 0;
    }
    *best_out = best;
    *second_out = second;
    return __builtin_ctz(eq);
}
#endif

/* The receiver of solved cell c (neighbour offsets off; `inner`: an inner column's, off the
 * wrap) at local column i, lattice row ly; i < 0 means "work the position out from c" (only done
 * when the jitter is needed). */
static inline uint8_t s_receiver(const float *h, size_t c, const ptrdiff_t *off, int inner,
                                 const tb_router_jitter_t *jit, const tb_frame_t *box, int64_t i,
                                 int64_t ly)
{
    float best = 0, second = 0;
    int bk = TB_DIR_NONE;
#if defined(__SSE2__)
    if (inner) {
        bk = s_steepest_v(h, c, (ptrdiff_t)box->w, &best, &second);
    } else
#else
    (void)inner;
#endif
    {
        /* Branch-free (the same selects as tb_receivers_d8_row): on the flats the sink
         * resolution re-routes, which of eight drops is steepest is a coin toss for a branch
         * predictor. */
        float hc = h[c];
        for (int k = 0; k < 8; k++) {
            float sk = (hc - h[(ptrdiff_t)c + off[k]]) * s_inv_dist[k];
            int gt = sk > best;
            float lo = gt ? best : sk;
            second = lo > second ? lo : second;
            best = gt ? sk : best;
            bk = gt ? k : bk;
        }
    }
    /* The jitter can only matter when some other lower neighbour, scaled up by 1 + J, reaches the
     * steepest scaled down by 1 - J (the margin covers rounding in the jittered products). */
    double a = jit->amplitude;
    if (bk == TB_DIR_NONE || a <= 0 || second <= 0 ||
        (double)second * (1 + a) < (double)best * (1 - a) * (1 - 1e-9))
        return (uint8_t)bk;
    if (i < 0) { /* the position; boxes are under 2^31 cells, so 32-bit division is exact */
        int64_t j = (int64_t)((uint32_t)c / (uint32_t)box->w);
        i = (int64_t)c - j * box->w;
        ly = tb_frame_lattice_y(box, j);
    }
    int64_t lx = box->x0 + i;
    lx = lx >= box->lattice_w ? lx - box->lattice_w : lx;
    return s_jittered(h, c, off, jit, lx, ly);
}

/* Code of a cell whose two steepest descents are close enough for the jitter to matter. */
#define S_NEAR_TIE 9

#if TB_SIMD_HAVE_AVX2
/* tb_receivers_d8_row's vector loop eight cells at a time (common/simd.h), from column i while a
 * whole vector fits before column w - 1; returns the first column it left. Lane for lane the
 * four-cell loop's operations: vminps, vmaxps and the compares are minps, maxps, cmpgtps and
 * cmpnltps on eight lanes, the blend is its and/andnot select. */
TB_SIMD_AVX2 static int64_t s_row_avx2(const float *hc, uint8_t *out, const ptrdiff_t o[8],
                                       int64_t i, int64_t w, float up, float down, int jitter)
{
    const __m256 vup = _mm256_set1_ps(up), vdown = _mm256_set1_ps(down), zero = _mm256_setzero_ps();
    const __m256i none = _mm256_set1_epi32(TB_DIR_NONE), tie = _mm256_set1_epi32(S_NEAR_TIE);
    const __m256i jmask = _mm256_set1_epi32(jitter ? -1 : 0);
    for (; i + 8 <= w - 1; i += 8) {
        __m256 hv = _mm256_loadu_ps(hc + i), best = zero, second = zero;
        __m256i bk = none;
        for (int k = 0; k < 8; k++) {
            __m256 sk = _mm256_mul_ps(_mm256_sub_ps(hv, _mm256_loadu_ps(hc + i + o[k])),
                                      _mm256_set1_ps(s_inv_dist[k]));
            __m256i gt = _mm256_castps_si256(_mm256_cmp_ps(sk, best, _CMP_GT_OQ));
            second = _mm256_max_ps(_mm256_min_ps(best, sk), second);
            best = _mm256_max_ps(sk, best);
            bk = _mm256_blendv_epi8(bk, _mm256_set1_epi32(k), gt);
        }
        __m256i near =
            _mm256_and_si256(jmask, _mm256_castps_si256(_mm256_and_ps(
                                        _mm256_cmp_ps(second, zero, _CMP_GT_OQ),
                                        _mm256_cmp_ps(_mm256_mul_ps(second, vup),
                                                      _mm256_mul_ps(best, vdown), _CMP_NLT_UQ))));
        __m256i res = _mm256_blendv_epi8(bk, tie, near);
        __m128i p16 =
            _mm_packs_epi32(_mm256_castsi256_si128(res), _mm256_extracti128_si256(res, 1));
        _mm_storel_epi64((__m128i *)(out + i), _mm_packus_epi16(p16, p16));
    }
    return i;
}
#endif

/* Columns [i0, i1) of row j once the inner columns hold their marks: see tb_receivers_d8_row. */
static void s_settle(const tb_topo_t *t, const uint8_t *node, const float *h,
                     const tb_router_jitter_t *jit, int64_t j, int64_t ly, int64_t i0, int64_t i1,
                     uint8_t *dir, int32_t *pits, size_t *npits)
{
    size_t row = (size_t)j * (size_t)t->w;
    int64_t w = t->w;
    for (int64_t i = i0; i < i1; i++) {
        size_t c = row + (size_t)i;
        uint8_t nd = node[c];
        if (!(nd & TB_NODE_SOLVED)) {
            dir[c] = TB_DIR_NONE;
            continue;
        }
        uint8_t d = dir[c];
        if (i == 0 || i == w - 1)
            d = s_receiver(h, c, t->noff[tb_topo_edge(nd)], 0, jit, t->box, i, ly);
        else if (d == S_NEAR_TIE) {
            int64_t lx = t->box->x0 + i;
            lx = lx >= t->box->lattice_w ? lx - t->box->lattice_w : lx;
            d = s_jittered(h, c, t->noff[0], jit, lx, ly);
        }
        dir[c] = d;
        if (d == TB_DIR_NONE)
            pits[(*npits)++] = (int32_t)c;
    }
}

void tb_receivers_d8_row(const tb_topo_t *t, const uint8_t *node, const float *h,
                         const tb_router_jitter_t *jit, int64_t j, uint8_t *dir, int32_t *pits,
                         size_t *npits)
{
    size_t row = (size_t)j * (size_t)t->w;
    int64_t w = t->w, ly = tb_frame_lattice_y(t->box, j);
    /* Inner columns, branch-free so it vectorises: the steepest and second steepest descent. A
     * cell whose second steepest, scaled up by 1 + J, comes within a hair of the steepest scaled
     * down by 1 - J is marked; only those take the hash below. The mark is conservative (a margin
     * of 1e-5 over float rounding), and the jittered answer equals the plain one whenever the
     * jitter cannot matter, so the mark changes no result, only the work. */
    const float *restrict hc = h + row;
    uint8_t *restrict out = dir + row;
    ptrdiff_t o[8]; /* local copies: the byte stores below may alias anything */
    for (int k = 0; k < 8; k++)
        o[k] = t->noff[0][k];
    float up = (float)(1 + jit->amplitude), down = (float)((1 - jit->amplitude) * (1 - 1e-5));
    int jitter = jit->amplitude > 0;
    int64_t i = 1;
#if TB_SIMD_HAVE_AVX2
    if (t->avx2)
        i = s_row_avx2(hc, out, o, i, w, up, down, jitter);
#endif
#if defined(__SSE2__)
    /* Four cells at a time, lane for lane the scalar loop below: min and max are its selects
     * (minps(best, sk) is `sk > best ? best : sk`, maxps(a, b) is `a > b ? a : b`), and the
     * arithmetic is the same float operations. */
    {
        const __m128 vup = _mm_set1_ps(up), vdown = _mm_set1_ps(down), zero = _mm_setzero_ps();
        const __m128i none = _mm_set1_epi32(TB_DIR_NONE), tie = _mm_set1_epi32(S_NEAR_TIE);
        const __m128i jmask = _mm_set1_epi32(jitter ? -1 : 0);
        for (; i + 4 <= w - 1; i += 4) {
            __m128 hv = _mm_loadu_ps(hc + i), best = zero, second = zero;
            __m128i bk = none;
            for (int k = 0; k < 8; k++) {
                __m128 sk = _mm_mul_ps(_mm_sub_ps(hv, _mm_loadu_ps(hc + i + o[k])),
                                       _mm_set1_ps(s_inv_dist[k]));
                __m128i gt = _mm_castps_si128(_mm_cmpgt_ps(sk, best));
                second = _mm_max_ps(_mm_min_ps(best, sk), second);
                best = _mm_max_ps(sk, best);
                bk = _mm_or_si128(_mm_and_si128(gt, _mm_set1_epi32(k)), _mm_andnot_si128(gt, bk));
            }
            __m128i near = _mm_and_si128(
                jmask, _mm_castps_si128(_mm_and_ps(
                           _mm_cmpgt_ps(second, zero),
                           _mm_cmpnlt_ps(_mm_mul_ps(second, vup), _mm_mul_ps(best, vdown)))));
            __m128i res = _mm_or_si128(_mm_and_si128(near, tie), _mm_andnot_si128(near, bk));
            res = _mm_packs_epi32(res, res);
            uint32_t four = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(res, res));
            memcpy(out + i, &four, 4);
        }
    }
#endif
    for (; i < w - 1; i++) {
        float best = 0, second = 0;
        int bk = TB_DIR_NONE;
        for (int k = 0; k < 8; k++) {
            float sk = (hc[i] - hc[i + o[k]]) * s_inv_dist[k];
            int gt = sk > best;
            float lo = gt ? best : sk;
            second = lo > second ? lo : second;
            best = gt ? sk : best;
            bk = gt ? k : bk;
        }
        int near = jitter && second > 0 && !(second * up < best * down);
        out[i] = (uint8_t)(near ? S_NEAR_TIE : bk);
    }
    /* Fixed cells get no receiver; a marked cell takes the hash, a pit is listed (in raster
     * order); the edge columns take the general neighbour offsets. */
    s_settle(t, node, h, jit, j, ly, 0, 1, dir, pits, npits);
    i = 1;
#if defined(__SSE2__)
    /* Sixteen inner cells a test: most are solved with a plain receiver, and need nothing. */
    {
        const __m128i one = _mm_set1_epi8(TB_NODE_SOLVED), none = _mm_set1_epi8(TB_DIR_NONE);
        const __m128i tie = _mm_set1_epi8(S_NEAR_TIE);
        for (; i + 16 <= w - 1; i += 16) {
            size_t c = row + (size_t)i;
            __m128i solved = _mm_cmpeq_epi8(
                _mm_and_si128(_mm_loadu_si128((const __m128i *)(node + c)), one), one);
            __m128i d = _mm_loadu_si128((const __m128i *)(dir + c));
            unsigned todo = (unsigned)_mm_movemask_epi8(_mm_and_si128(
                solved, _mm_or_si128(_mm_cmpeq_epi8(d, tie), _mm_cmpeq_epi8(d, none))));
            if (_mm_movemask_epi8(solved) != 0xffff) /* fixed cells: TB_DIR_NONE */
                _mm_storeu_si128(
                    (__m128i *)(dir + c),
                    _mm_or_si128(_mm_and_si128(solved, d), _mm_andnot_si128(solved, none)));
            while (todo) {
                int64_t at = i + __builtin_ctz(todo);
                todo &= todo - 1;
                s_settle(t, node, h, jit, j, ly, at, at + 1, dir, pits, npits);
            }
        }
    }
#endif
    s_settle(t, node, h, jit, j, ly, i, w, dir, pits, npits);
}

size_t tb_receivers_d8(const tb_topo_t *t, const uint8_t *node, const float *h,
                       const tb_router_jitter_t *jit, uint8_t *dir, int32_t *pits)
{
    size_t npits = 0, last = (size_t)(t->h - 1) * (size_t)t->w;
    for (int64_t i = 0; i < t->w; i++) {
        dir[i] = TB_DIR_NONE;
        dir[last + (size_t)i] = TB_DIR_NONE;
    }
    for (int64_t j = 1; j < t->h - 1; j++)
        tb_receivers_d8_row(t, node, h, jit, j, dir, pits, &npits);
    return npits;
}

size_t tb_receivers_d8_cells(const tb_topo_t *t, const uint8_t *node, const float *h,
                             const tb_router_jitter_t *jit, const int32_t *cells, size_t count,
                             uint8_t *dir)
{
    size_t pits = 0;
    for (size_t s = 0; s < count; s++) {
        size_t c = (size_t)cells[s];
        int e = tb_topo_edge(node[c]);
        uint8_t d = s_receiver(h, c, t->noff[e], e == 0, jit, t->box, -1, 0);
        dir[c] = d;
        pits += d == TB_DIR_NONE;
    }
    return pits;
}

size_t tb_receivers_d8_after_rise(const tb_topo_t *t, const uint8_t *node, const float *h,
                                  const tb_router_jitter_t *jit, size_t p, uint8_t *dir,
                                  int32_t *pits)
{
    int e = tb_topo_edge(node[p]);
    const ptrdiff_t *off = t->noff[e];
    dir[p] = s_receiver(h, p, off, e == 0, jit, t->box, -1, 0);
    size_t npits = 0;
    for (int k = 0; k < 8; k++) {
        size_t n = (size_t)((ptrdiff_t)p + off[k]);
        uint8_t nd = node[n];
        if (!(nd & TB_NODE_SOLVED) || dir[n] != 7 - k)
            continue;
        int en = tb_topo_edge(nd);
        uint8_t d = s_receiver(h, n, t->noff[en], en == 0, jit, t->box, -1, 0);
        dir[n] = d;
        if (d == TB_DIR_NONE)
            pits[npits++] = (int32_t)n;
    }
    return npits;
}
