/* Which vector variant of the solve's kernels runs (jobs/geology): the plain build targets x86-64's
 * baseline (SSE2), and the solve's vector loops have a second copy compiled for AVX2, chosen at
 * run time. Both copies are the same C: the same float operations in the same order on each
 * element, without contraction (-ffp-contract=off), so the bits do not depend on the variant
 * (test_geology compares them over a whole solve); only the time does.
 *
 * TB_SIMD in the environment: "sse2" keeps the baseline copies (to compare, or on a CPU whose AVX2
 * is slow); unset, empty or "auto" takes AVX2 where the CPU has it. Any other value is reported on
 * stderr and taken as "auto".
 */
#ifndef TB_SIMD_H
#define TB_SIMD_H

#include <stdbool.h>
#include <stddef.h>

/* The attribute of an AVX2 copy, and whether this compiler and target can build one. */
#if defined(__x86_64__) && defined(__GNUC__)
#define TB_SIMD_HAVE_AVX2 1
#define TB_SIMD_AVX2 __attribute__((target("avx2")))
#else
#define TB_SIMD_HAVE_AVX2 0
#define TB_SIMD_AVX2
#endif

/* Two copies of the pool task NAME_k(void *ctx_, size_t i_, int thread_), which must be
 * `static inline __attribute__((always_inline))` so that each copy compiles the whole of it, and
 * the task NAME that runs the AVX2 copy when USE_AVX2 (an expression of ctx_) is true. */
#if TB_SIMD_HAVE_AVX2
#define TB_SIMD_TASK(name, use_avx2)                                                               \
    static void name##_sse2(void *ctx_, size_t i_, int thread_)                                    \
    {                                                                                              \
        name##_k(ctx_, i_, thread_);                                                               \
    }                                                                                              \
    TB_SIMD_AVX2 static void name##_avx2(void *ctx_, size_t i_, int thread_)                       \
    {                                                                                              \
        name##_k(ctx_, i_, thread_);                                                               \
    }                                                                                              \
    static void name(void *ctx_, size_t i_, int thread_)                                           \
    {                                                                                              \
        if (use_avx2)                                                                              \
            name##_avx2(ctx_, i_, thread_);                                                        \
        else                                                                                       \
            name##_sse2(ctx_, i_, thread_);                                                        \
    }
#else
#define TB_SIMD_TASK(name, use_avx2)                                                               \
    static void name(void *ctx_, size_t i_, int thread_)                                           \
    {                                                                                              \
        name##_k(ctx_, i_, thread_);                                                               \
    }
#endif

/* True when the AVX2 copies should run: built, the CPU has AVX2, and TB_SIMD does not say "sse2".
 * Reads the environment: tb_topo_init calls it once a box, and the kernels read the topology's
 * avx2. */
bool tb_simd_avx2(void);

#endif
