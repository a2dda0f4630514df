/* The vector variant in use; see simd.h. */
#include "common/simd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tb_simd_avx2(void)
{
    const char *v = getenv("TB_SIMD");
    if (v && strcmp(v, "sse2") == 0)
        return false;
    if (v && v[0] && strcmp(v, "auto") != 0)
        fprintf(stderr, "terrain: TB_SIMD=%s is not one of sse2, auto: taken as auto\n", v);
#if TB_SIMD_HAVE_AVX2
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}
