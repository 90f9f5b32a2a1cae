// CRC-32 (ISO-HDLC, reflected) by folding with carry-less multiplication, after Intel's "Fast
// CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009). The register is a
// 128-bit remainder that four lanes fold forward 64 bytes at a time (multiplying by x^(512±64)
// mod P), then into one lane, then 128 → 64 → 32 bits, the last step a Barrett reduction. Each
// constant is x^k mod P, bit-reflected, for the k the paper gives; `CRC32Tests` checks this code
// against the table-driven reference at every length and alignment that matters.
#include "CChecksums.h"

#if defined(__x86_64__)
#include <immintrin.h>

int ccrc32_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

__attribute__((target("pclmul,sse4.1")))
static inline __m128i fold(__m128i x, __m128i k, __m128i next) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

__attribute__((target("pclmul,sse4.1")))
uint32_t ccrc32_hardware_fold(uint32_t state, const uint8_t *data, size_t length) {
    // x^(4*128+32) and x^(4*128-32) mod P: four lanes forward by 64 bytes.
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    // x^(128+32) and x^(128-32) mod P: one lane forward by 16 bytes.
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    // x^64 mod P, for the last 64 → 32 fold; then P and floor(x^64 / P) for Barrett.
    const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i poly_mu = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);

    __m128i x1 = _mm_loadu_si128((const __m128i *)(data + 0));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(data + 16));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(data + 32));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(data + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)state));
    data += 64;
    length -= 64;
    while (length >= 64) {
        x1 = fold(x1, k1k2, _mm_loadu_si128((const __m128i *)(data + 0)));
        x2 = fold(x2, k1k2, _mm_loadu_si128((const __m128i *)(data + 16)));
        x3 = fold(x3, k1k2, _mm_loadu_si128((const __m128i *)(data + 32)));
        x4 = fold(x4, k1k2, _mm_loadu_si128((const __m128i *)(data + 48)));
        data += 64;
        length -= 64;
    }
    x1 = fold(x1, k3k4, x2);
    x1 = fold(x1, k3k4, x3);
    x1 = fold(x1, k3k4, x4);
    while (length >= 16) {
        x1 = fold(x1, k3k4, _mm_loadu_si128((const __m128i *)data));
        data += 16;
        length -= 16;
    }
    // 128 → 64 bits (appending 32 zero bits), then 64 → 32 with x^64 mod P.
    __m128i t = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), t);
    t = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00), t);
    // Barrett: the quotient's low 32 bits times P cancel the high half.
    t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly_mu, 0x10), mask32);
    x1 = _mm_xor_si128(x1, _mm_clmulepi64_si128(t, poly_mu, 0x00));
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

#else

int ccrc32_hardware_available(void) { return 0; }
uint32_t ccrc32_hardware_fold(uint32_t state, const uint8_t *data, size_t length) {
    (void)data; (void)length;
    return state;
}

#endif
