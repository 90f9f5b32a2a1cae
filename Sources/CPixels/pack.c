// Packing opaque 8-bit RGB into the table styles (see CPixels.h). The loops are written once,
// plainly, so that the compiler vectorises them (interleaved loads of three channels, constant
// divisions as multiplications); they are compiled twice, for AVX2 and for the baseline, and the
// first call picks the one this CPU runs.
#include "CPixels.h"
#include <string.h>

#define PACK_BODY                                                                              \
    switch (style) {                                                                           \
    case 1: case 2:                                                                            \
        for (int i = 0; i < n; i++) {                                                          \
            out[4 * i] = rgb[3 * i + 2];                                                       \
            out[4 * i + 1] = rgb[3 * i + 1];                                                   \
            out[4 * i + 2] = rgb[3 * i];                                                       \
            out[4 * i + 3] = 255;                                                              \
        }                                                                                      \
        break;                                                                                 \
    case 3:                                                                                    \
        for (int i = 0; i < n; i++) {                                                          \
            uint32_t r = ((uint32_t)rgb[3 * i] * 31 + 127) / 255;                              \
            uint32_t g = ((uint32_t)rgb[3 * i + 1] * 31 + 127) / 255;                          \
            uint32_t b = ((uint32_t)rgb[3 * i + 2] * 31 + 127) / 255;                          \
            uint16_t v = (uint16_t)(r << 10 | g << 5 | b);                                     \
            out[2 * i] = (uint8_t)v;                                                           \
            out[2 * i + 1] = (uint8_t)(v >> 8);                                                \
        }                                                                                      \
        break;                                                                                 \
    default:                                                                                   \
        for (int i = 0; i < n; i++) {                                                          \
            out[i] = (uint8_t)((77 * (uint32_t)rgb[3 * i] + 150 * (uint32_t)rgb[3 * i + 1]     \
                                + 29 * (uint32_t)rgb[3 * i + 2] + 128) >> 8);                  \
        }                                                                                      \
        break;                                                                                 \
    }

void cpixels_pack_rgb_portable(const uint8_t *restrict rgb, int n, int style, uint8_t *restrict out) {
    PACK_BODY
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
static void pack_avx2(const uint8_t *restrict rgb, int n, int style, uint8_t *restrict out) {
    PACK_BODY
}

typedef void (*pack_fn)(const uint8_t *restrict, int, int, uint8_t *restrict);

void cpixels_pack_rgb(const uint8_t *restrict rgb, int n, int style, uint8_t *restrict out) {
    static pack_fn chosen;
    pack_fn f = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (!f) {
        f = cpixels_cpu_level() >= CPIXELS_AVX2 ? pack_avx2 : cpixels_pack_rgb_portable;
        __atomic_store_n(&chosen, f, __ATOMIC_RELAXED);
    }
    f(rgb, n, style, out);
}
#else
void cpixels_pack_rgb(const uint8_t *restrict rgb, int n, int style, uint8_t *restrict out) {
    cpixels_pack_rgb_portable(rgb, n, style, out);
}
#endif
