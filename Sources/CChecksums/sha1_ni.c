// SHA-1 with the SHA extensions: four rounds per `sha1rnds4`, the message schedule in
// `sha1msg1`/`sha1msg2` four words at a time. The layout follows the instructions' definition:
// ABCD in one register (A in the top lane), E added to the schedule words by `sha1nexte`.
#include "CChecksums.h"

#if defined(__x86_64__)
#include <immintrin.h>

int csha1_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3");
}

#define ROUNDS4(f)                                                     \
    do {                                                               \
        if (i >= 4) {                                                  \
            w[i & 3] = _mm_sha1msg2_epu32(                             \
                _mm_xor_si128(_mm_sha1msg1_epu32(w[i & 3], w[(i + 1) & 3]), w[(i + 2) & 3]), \
                w[(i + 3) & 3]);                                       \
        }                                                              \
        e = i == 0 ? _mm_add_epi32(e0, w[0]) : _mm_sha1nexte_epu32(previous, w[i & 3]); \
        previous = abcd;                                               \
        abcd = _mm_sha1rnds4_epu32(abcd, e, f);                        \
        i++;                                                           \
    } while (0)

__attribute__((target("sha,sse4.1,ssse3")))
void csha1_hardware_blocks(uint32_t state[5], const uint8_t *data, size_t blocks) {
    const __m128i reverse_bytes = _mm_set_epi64x(0x0001020304050607ULL, 0x08090a0b0c0d0e0fULL);
    __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)state), 0x1B);
    __m128i e0 = _mm_set_epi32((int)state[4], 0, 0, 0);
    for (; blocks > 0; blocks--, data += 64) {
        const __m128i abcd_saved = abcd, e0_saved = e0;
        __m128i w[4], e, previous = abcd;
        for (int k = 0; k < 4; k++) w[k] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * k)), reverse_bytes);
        int i = 0;
        // w[i & 3] holds schedule words 4i…4i+3 once computed; before that, words 4(i-4)….
        ROUNDS4(0); ROUNDS4(0); ROUNDS4(0); ROUNDS4(0); ROUNDS4(0);
        ROUNDS4(1); ROUNDS4(1); ROUNDS4(1); ROUNDS4(1); ROUNDS4(1);
        ROUNDS4(2); ROUNDS4(2); ROUNDS4(2); ROUNDS4(2); ROUNDS4(2);
        ROUNDS4(3); ROUNDS4(3); ROUNDS4(3); ROUNDS4(3); ROUNDS4(3);
        e0 = _mm_sha1nexte_epu32(previous, e0_saved);
        abcd = _mm_add_epi32(abcd, abcd_saved);
    }
    _mm_storeu_si128((__m128i *)state, _mm_shuffle_epi32(abcd, 0x1B));
    state[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}

#else

int csha1_hardware_available(void) { return 0; }
void csha1_hardware_blocks(uint32_t state[5], const uint8_t *data, size_t blocks) {
    (void)state; (void)data; (void)blocks;
}

#endif
