// Which vector loops this CPU runs (see CPixels.h), found once.
#include "CPixels.h"

int cpixels_cpu_level(void) {
    static int level = -1;
    int found = __atomic_load_n(&level, __ATOMIC_RELAXED);
    if (found >= 0) return found;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni"))
        found = CPIXELS_AVX512;
    else if (__builtin_cpu_supports("avx2"))
        found = CPIXELS_AVX2;
    else if (__builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1"))
        found = CPIXELS_SSE41;
    else
        found = CPIXELS_PORTABLE;
#else
    found = CPIXELS_PORTABLE;
#endif
    __atomic_store_n(&level, found, __ATOMIC_RELAXED);
    return found;
}
