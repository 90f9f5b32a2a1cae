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

// Whether the 512-bit form (VPCLMULQDQ on AVX-512) may run: checked once, in the first call.
static int wide_available(void) {
    static int available = -1;
    if (available < 0) {
        __builtin_cpu_init();
        available = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
    }
    return available;
}

__attribute__((target("pclmul,sse4.1")))
static inline __m128i fold(__m128i x, __m128i k, __m128i next) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

// x^(128+32) and x^(128-32) mod P: one lane forward by 16 bytes.
#define K128 _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL)

// Folds the rest (a multiple of 16 bytes) into `x1` 16 bytes at a time, then reduces the
// 128-bit remainder to the 32-bit register.
__attribute__((target("pclmul,sse4.1")))
static uint32_t finish(__m128i x1, const uint8_t *data, size_t length) {
    const __m128i k3k4 = K128;
    // x^64 mod P, for the last 64 → 32 fold; then P and floor(x^64 / P) for Barrett.
    const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i poly_mu = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
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

__attribute__((target("avx512f,vpclmulqdq")))
static inline __m512i fold512(__m512i x, __m512i k, __m512i next) {
    // 0x96: a ^ b ^ c.
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

// The same folding four lanes of 512 bits wide: sixteen 128-bit remainders, 256 bytes a step
// (x^(2048±32) mod P), then into one 512-bit lane by 64 bytes (x^(512±32)), whose four 128-bit
// parts go forward by 48, 32 and 16 bytes into the last (x^(384±32), x^(256±32), x^(128±32)).
// Where the CPU has it (AVX-512 with VPCLMULQDQ: Intel since Ice Lake, AMD since Zen 4), a
// 90 KB slot takes about half the time of the 128-bit loop, which is bound by the multiplier's
// latency.
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))
static uint32_t fold_wide(uint32_t state, const uint8_t *data, size_t length) {
    const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(0x01322d1430LL, 0x011542778aLL));
    const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL));
    __m512i x0 = _mm512_loadu_si512((const void *)(data + 0));
    __m512i x1 = _mm512_loadu_si512((const void *)(data + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(data + 128));
    __m512i x3 = _mm512_loadu_si512((const void *)(data + 192));
    x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)state)));
    data += 256;
    length -= 256;
    while (length >= 256) {
        x0 = fold512(x0, k2048, _mm512_loadu_si512((const void *)(data + 0)));
        x1 = fold512(x1, k2048, _mm512_loadu_si512((const void *)(data + 64)));
        x2 = fold512(x2, k2048, _mm512_loadu_si512((const void *)(data + 128)));
        x3 = fold512(x3, k2048, _mm512_loadu_si512((const void *)(data + 192)));
        data += 256;
        length -= 256;
    }
    x0 = fold512(x0, k512, x1);
    x0 = fold512(x0, k512, x2);
    x0 = fold512(x0, k512, x3);
    while (length >= 64) {
        x0 = fold512(x0, k512, _mm512_loadu_si512((const void *)data));
        data += 64;
        length -= 64;
    }
    // Parts 0, 1 and 2 forward by 48, 32 and 16 bytes; part 3 as it is (its constants zero).
    const __m512i parts = _mm512_set_epi64(0, 0, 0x00ccaa009eLL, 0x01751997d0LL, 0x015a546366LL, 0x00f1da05aaLL,
                                           0x0174359406LL, 0x003db1ecdcLL);
    __m512i t = _mm512_xor_si512(_mm512_clmulepi64_epi128(x0, parts, 0x00), _mm512_clmulepi64_epi128(x0, parts, 0x11));
    __m128i x = _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(t, 0), _mm512_extracti32x4_epi32(t, 1)),
                              _mm_xor_si128(_mm512_extracti32x4_epi32(t, 2), _mm512_extracti32x4_epi32(x0, 3)));
    return finish(x, data, length);
}

__attribute__((target("pclmul,sse4.1")))
uint32_t ccrc32_hardware_fold(uint32_t state, const uint8_t *data, size_t length) {
    if (length >= 1024 && wide_available()) return fold_wide(state, data, length);
    // x^(4*128+32) and x^(4*128-32) mod P: four lanes forward by 64 bytes.
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    const __m128i k3k4 = K128;

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
    return finish(x1, data, length);
}

#else

int ccrc32_hardware_available(void) { return 0; }
uint32_t ccrc32_hardware_fold(uint32_t state, const uint8_t *data, size_t length) {
    (void)data; (void)length;
    return state;
}

#endif
