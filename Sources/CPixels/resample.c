// Fixed-point Lanczos-3 passes (see CPixels.h). The vector versions multiply pairs of taps at
// once with `pmaddwd` (two 16-bit products summed into 32 bits), the shape libvips' and
// Pillow-SIMD's 8-bit resamplers use: four times the lanes of 32-bit floats, and no conversion
// from bytes to floats per tap. Sums cannot overflow: a vertical sum is at most
// 255 × 1.3 × 2^14 and a horizontal one 21,000 × 1.3 × 2^14, both far below 2^31.
#include "resample_common.h"
#include <string.h>


static inline uint8_t clamp_byte(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

void cresample_vertical_portable(const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n) {
    for (int x = 0; x < n; x++) {
        int32_t sum = MID_ROUND;
        for (int k = 0; k < count; k++) sum += (int32_t)weights[k] * src[k * stride + x];
        out[x] = (int16_t)(sum >> (CRESAMPLE_WEIGHT_BITS - CRESAMPLE_MID_BITS));
    }
}

void cresample_horizontal_portable(const int16_t *row, int channels, const int32_t *start, const int32_t *count,
                                   const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *out) {
    for (int i = first; i < first + n; i++) {
        const int16_t *p = row + (ptrdiff_t)(start[i] - base) * channels;
        const int16_t *w = weights + (ptrdiff_t)i * tapWidth;
        for (int c = 0; c < channels; c++) {
            int32_t sum = 1 << (OUT_SHIFT - 1);
            for (int k = 0; k < count[i]; k++) sum += (int32_t)w[k] * p[k * channels + c];
            out[(i - first) * channels + c] = clamp_byte(sum >> OUT_SHIFT);
        }
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

// Constant sizes, so the copies compile to stores rather than calls.
static inline void store_pixel(uint8_t *to, uint32_t bytes, int channels) {
    if (channels == 3) memcpy(to, &bytes, 3); else memcpy(to, &bytes, 4);
}


// Rows `a` and `b` interleaved per sample, times the pair of weights `w`, added to the four
// accumulators of 32 samples.
#define VERTICAL_STEP(a, b, w)                                                                      \
    do {                                                                                            \
        __m256i a0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(a)));                   \
        __m256i b0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(b)));                   \
        __m256i a1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((a) + 16)));            \
        __m256i b1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((b) + 16)));            \
        lo0 = _mm256_add_epi32(lo0, _mm256_madd_epi16(_mm256_unpacklo_epi16(a0, b0), w));           \
        hi0 = _mm256_add_epi32(hi0, _mm256_madd_epi16(_mm256_unpackhi_epi16(a0, b0), w));           \
        lo1 = _mm256_add_epi32(lo1, _mm256_madd_epi16(_mm256_unpacklo_epi16(a1, b1), w));           \
        hi1 = _mm256_add_epi32(hi1, _mm256_madd_epi16(_mm256_unpackhi_epi16(a1, b1), w));           \
    } while (0)

__attribute__((target("avx2")))
static void vertical_avx2(const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n) {
    const __m256i round = _mm256_set1_epi32(MID_ROUND);
    // Taps two at a time, then the odd one out paired with a zero weight: no branch inside the
    // loop over taps.
    const int pairs = count & ~1;
    const __m256i last = _mm256_set1_epi32(count & 1 ? (int32_t)(uint16_t)weights[count - 1] : 0);
    int x = 0;
    for (;; x += 32) {
        if (x + 32 > n) {
            // The samples left over: one more full step, ending at n, over some samples already
            // done (each output depends on its own column alone, so they come out the same).
            // The plain C loop over a 30-sample remainder took as long as the vector steps over
            // the 700 samples before it.
            if (x >= n || n < 32) break;
            x = n - 32;
        }
        __m256i lo0 = round, hi0 = round, lo1 = round, hi1 = round;
        const uint8_t *a = src + x;
        for (int k = 0; k < pairs; k += 2, a += 2 * stride) {
            const __m256i w = _mm256_set1_epi32(cresample_pair(weights, k));
            VERTICAL_STEP(a, a + stride, w);
        }
        if (count & 1) VERTICAL_STEP(a, a, last);
        const int shift = CRESAMPLE_WEIGHT_BITS - CRESAMPLE_MID_BITS;
        // unpacklo/hi and packs both work within 128-bit lanes, so packing undoes the interleave.
        _mm256_storeu_si256((__m256i *)(out + x), _mm256_packs_epi32(_mm256_srai_epi32(lo0, shift), _mm256_srai_epi32(hi0, shift)));
        _mm256_storeu_si256((__m256i *)(out + x + 16), _mm256_packs_epi32(_mm256_srai_epi32(lo1, shift), _mm256_srai_epi32(hi1, shift)));
        if (x + 32 == n) return;
    }
    if (x < n) cresample_vertical_portable(src + x, stride, weights, count, out + x, n - x);
}

// The same step on 512-bit vectors (AVX-512BW), 64 samples at a time, with VNNI's fused
// multiply-add (`vpdpwssd`: the pair's products summed into the accumulator in one instruction).
#define VERTICAL_STEP_512(a, b, w)                                                                  \
    do {                                                                                            \
        __m512i a0 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(a)));                \
        __m512i b0 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(b)));                \
        __m512i a1 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)((a) + 32)));         \
        __m512i b1 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)((b) + 32)));         \
        lo0 = _mm512_dpwssd_epi32(lo0, _mm512_unpacklo_epi16(a0, b0), w);                           \
        hi0 = _mm512_dpwssd_epi32(hi0, _mm512_unpackhi_epi16(a0, b0), w);                           \
        lo1 = _mm512_dpwssd_epi32(lo1, _mm512_unpacklo_epi16(a1, b1), w);                           \
        hi1 = _mm512_dpwssd_epi32(hi1, _mm512_unpackhi_epi16(a1, b1), w);                           \
    } while (0)

__attribute__((target("avx512f,avx512bw,avx512vnni")))
static void vertical_avx512(const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n) {
    if (n < 64) return vertical_avx2(src, stride, weights, count, out, n);
    const __m512i round = _mm512_set1_epi32(MID_ROUND);
    const int pairs = count & ~1;
    const __m512i last = _mm512_set1_epi32(count & 1 ? (int32_t)(uint16_t)weights[count - 1] : 0);
    for (int x = 0;; x += 64) {
        if (x + 64 > n) x = n - 64;  // as in vertical_avx2: one more full step, ending at n
        __m512i lo0 = round, hi0 = round, lo1 = round, hi1 = round;
        const uint8_t *a = src + x;
        for (int k = 0; k < pairs; k += 2, a += 2 * stride) {
            const __m512i w = _mm512_set1_epi32(cresample_pair(weights, k));
            VERTICAL_STEP_512(a, a + stride, w);
        }
        if (count & 1) VERTICAL_STEP_512(a, a, last);
        const int shift = CRESAMPLE_WEIGHT_BITS - CRESAMPLE_MID_BITS;
        _mm512_storeu_si512((void *)(out + x), _mm512_packs_epi32(_mm512_srai_epi32(lo0, shift), _mm512_srai_epi32(hi0, shift)));
        _mm512_storeu_si512((void *)(out + x + 32), _mm512_packs_epi32(_mm512_srai_epi32(lo1, shift), _mm512_srai_epi32(hi1, shift)));
        if (x + 64 == n) return;
    }
}

__attribute__((target("ssse3,sse4.1")))
static void horizontal_sse(const int16_t *row, int channels, const int32_t *start, const int32_t *count,
                           const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *out) {
    // Two neighbouring pixels' channels side by side: (c of pixel k, c of pixel k+1) per channel.
    const __m128i gather = channels == 3
        ? _mm_setr_epi8(0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11, -1, -1, -1, -1)
        : _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    const __m128i round = _mm_set1_epi32(1 << (OUT_SHIFT - 1));
    for (int i = first; i < first + n; i++) {
        const int16_t *p = row + (ptrdiff_t)(start[i] - base) * channels;
        const int16_t *w = weights + (ptrdiff_t)i * tapWidth;
        __m128i acc0 = round, acc1 = _mm_setzero_si128();
        int k = 0;
        // Weights past the count are zero and the row has slack, so an odd count runs one more.
        for (; k + 3 < count[i]; k += 4) {
            __m128i p0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + k * channels)), gather);
            __m128i p1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + (k + 2) * channels)), gather);
            acc0 = _mm_add_epi32(acc0, _mm_madd_epi16(p0, _mm_set1_epi32(cresample_pair(w, k))));
            acc1 = _mm_add_epi32(acc1, _mm_madd_epi16(p1, _mm_set1_epi32(cresample_pair(w, k + 2))));
        }
        for (; k < count[i]; k += 2) {
            __m128i p0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + k * channels)), gather);
            acc0 = _mm_add_epi32(acc0, _mm_madd_epi16(p0, _mm_set1_epi32(cresample_pair(w, k))));
        }
        __m128i v = _mm_srai_epi32(_mm_add_epi32(acc0, acc1), OUT_SHIFT);
        v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
        store_pixel(out + (ptrdiff_t)(i - first) * channels, (uint32_t)_mm_cvtsi128_si32(v), channels);
    }
}

__attribute__((target("avx2")))
static void horizontal_avx2(const int16_t *row, int channels, const int32_t *start, const int32_t *count,
                            const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *out) {
    // Two output pixels at once, one per 128-bit lane, each lane as in the SSE version.
    const __m256i gather = _mm256_broadcastsi128_si256(channels == 3
        ? _mm_setr_epi8(0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11, -1, -1, -1, -1)
        : _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15));
    const __m256i round = _mm256_set1_epi32(1 << (OUT_SHIFT - 1));
    // Every pixel runs the longest count of the call, rounded up to even: weights past a pixel's
    // own count are zero and the row is readable that far, and a loop that always runs the same
    // number of times is one the branch predictor never misses.
    int taps = 0;
    for (int i = first; i < first + n; i++) taps = count[i] > taps ? count[i] : taps;
    taps = (taps + 1) & ~1;
    const ptrdiff_t step = 2 * channels;
    int i = first;
    for (; i + 1 < first + n; i += 2) {
        const int16_t *p0 = row + (ptrdiff_t)(start[i] - base) * channels;
        const int16_t *p1 = row + (ptrdiff_t)(start[i + 1] - base) * channels;
        const int16_t *w0 = weights + (ptrdiff_t)i * tapWidth, *w1 = w0 + tapWidth;
        __m256i acc0 = round, acc1 = _mm256_setzero_si256();
        int t = 0;
        // Pixel 0's pair of weights (t, t+1) in the low lane, pixel 1's in the high lane.
        for (; t + 4 <= taps; t += 4, p0 += 2 * step, p1 += 2 * step) {
            __m256i a = _mm256_loadu2_m128i((const __m128i *)p1, (const __m128i *)p0);
            __m256i b = _mm256_loadu2_m128i((const __m128i *)(p1 + step), (const __m128i *)(p0 + step));
            __m256i wa = _mm256_blend_epi32(_mm256_set1_epi32(cresample_pair(w0, t)), _mm256_set1_epi32(cresample_pair(w1, t)), 0xF0);
            __m256i wb = _mm256_blend_epi32(_mm256_set1_epi32(cresample_pair(w0, t + 2)), _mm256_set1_epi32(cresample_pair(w1, t + 2)), 0xF0);
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(_mm256_shuffle_epi8(a, gather), wa));
            acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(_mm256_shuffle_epi8(b, gather), wb));
        }
        if (t < taps) {
            __m256i a = _mm256_loadu2_m128i((const __m128i *)p1, (const __m128i *)p0);
            __m256i wa = _mm256_blend_epi32(_mm256_set1_epi32(cresample_pair(w0, t)), _mm256_set1_epi32(cresample_pair(w1, t)), 0xF0);
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(_mm256_shuffle_epi8(a, gather), wa));
        }
        __m256i v = _mm256_srai_epi32(_mm256_add_epi32(acc0, acc1), OUT_SHIFT);
        __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
        __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(lo, hi), lo);
        store_pixel(out + (ptrdiff_t)(i - first) * channels, (uint32_t)_mm_cvtsi128_si32(bytes), channels);
        store_pixel(out + (ptrdiff_t)(i + 1 - first) * channels, (uint32_t)_mm_extract_epi32(bytes, 1), channels);
    }
    if (i < first + n) horizontal_sse(row, channels, start, count, weights, tapWidth, base, i, first + n - i, out + (ptrdiff_t)(i - first) * channels);
}

typedef void (*horizontal_fn)(const int16_t *, int, const int32_t *, const int32_t *, const int16_t *, int, int, int, int, uint8_t *);

void cresample_vertical_at(int level, const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n) {
    const int cpu = cpixels_cpu_level();
    if (level > cpu) level = cpu;
    if (level >= CPIXELS_AVX512) vertical_avx512(src, stride, weights, count, out, n);
    else if (level >= CPIXELS_AVX2) vertical_avx2(src, stride, weights, count, out, n);
    else cresample_vertical_portable(src, stride, weights, count, out, n);
}

static horizontal_fn choose_horizontal(void) {
    const int level = cpixels_cpu_level();
    return level >= CPIXELS_AVX2 ? horizontal_avx2 : level >= CPIXELS_SSE41 ? horizontal_sse : cresample_horizontal_portable;
}

void cresample_vertical(const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n) {
    cresample_vertical_at(CPIXELS_AVX512, src, stride, weights, count, out, n);
}

void cresample_horizontal(const int16_t *row, int channels, const int32_t *start, const int32_t *count,
                          const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *out) {
    static horizontal_fn chosen;
    horizontal_fn f = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (!f) {
        f = choose_horizontal();
        __atomic_store_n(&chosen, f, __ATOMIC_RELAXED);
    }
    f(row, channels, start, count, weights, tapWidth, base, first, n, out);
}

#else

void cresample_vertical_at(int level, const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n) {
    (void)level;
    cresample_vertical_portable(src, stride, weights, count, out, n);
}

void cresample_vertical(const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n) {
    cresample_vertical_portable(src, stride, weights, count, out, n);
}

void cresample_horizontal(const int16_t *row, int channels, const int32_t *start, const int32_t *count,
                          const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *out) {
    cresample_horizontal_portable(row, channels, start, count, weights, tapWidth, base, first, n, out);
}

#endif
