// The horizontal pass over a whole image (see CPixels.h), sixteen rows at a time where AVX2 is
// there. Filtering along a row needs, per output pixel, its own window of samples and its own
// weights, and with three channels a vector of them is a quarter empty and needs a shuffle per
// load (`horizontal_avx2` in resample.c). Sixteen rows share every weight, though: turned on
// their side, so that one vector holds one sample of sixteen rows, the pass becomes the
// vertical pass's loop (a broadcast pair of weights times two whole vectors of samples), and
// turning the bytes back costs less than the shuffles it saves. The sums are the same integers
// in another order, so the result equals the plain C reference byte for byte.
#include "resample_common.h"
#include <stdlib.h>
#include <string.h>

void cresample_horizontal_rows_portable(const int16_t *mid, ptrdiff_t midStride, int rows, int channels,
                                        const int32_t *start, const int32_t *count, const int16_t *weights, int tapWidth,
                                        int base, int first, int n, uint8_t *out, ptrdiff_t outStride) {
    for (int y = 0; y < rows; y++)
        cresample_horizontal_portable(mid + y * midStride, channels, start, count, weights, tapWidth, base, first, n,
                                      out + y * outStride);
}

static void by_row(const int16_t *mid, ptrdiff_t midStride, int rows, int channels, const int32_t *start,
                   const int32_t *count, const int16_t *weights, int tapWidth, int base, int first, int n,
                   uint8_t *out, ptrdiff_t outStride) {
    for (int y = 0; y < rows; y++)
        cresample_horizontal(mid + y * midStride, channels, start, count, weights, tapWidth, base, first, n,
                             out + y * outStride);
}

#if defined(__x86_64__)
#include <immintrin.h>


// Sixteen rows of sixteen int16 samples each become sixteen vectors of one sample's sixteen
// rows: pairs, then quads, then eights interleave within each 128-bit half, and the halves
// (samples 0–7 and 8–15) are swapped across last.
// `to[e × pitch]` receives sample `e`: pitch 1 for AVX2's stripes, 2 for AVX-512's, which keep
// two stripes' vectors of one sample side by side.
__attribute__((target("avx2")))
static inline void turn_samples(const int16_t *from, ptrdiff_t stride, __m256i *to, int pitch) {
    __m256i r[16], a[16], b[16];
    for (int i = 0; i < 16; i++) r[i] = _mm256_loadu_si256((const __m256i *)(from + i * stride));
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm256_unpacklo_epi16(r[2 * i], r[2 * i + 1]);     // rows 2i, 2i+1; samples 0–3 | 8–11
        a[2 * i + 1] = _mm256_unpackhi_epi16(r[2 * i], r[2 * i + 1]); // samples 4–7 | 12–15
    }
    for (int g = 0; g < 4; g++) {                                      // rows 4g … 4g+3
        b[4 * g + 0] = _mm256_unpacklo_epi32(a[4 * g], a[4 * g + 2]);     // samples 0, 1
        b[4 * g + 1] = _mm256_unpackhi_epi32(a[4 * g], a[4 * g + 2]);     // samples 2, 3
        b[4 * g + 2] = _mm256_unpacklo_epi32(a[4 * g + 1], a[4 * g + 3]); // samples 4, 5
        b[4 * g + 3] = _mm256_unpackhi_epi32(a[4 * g + 1], a[4 * g + 3]); // samples 6, 7
    }
    for (int h = 0; h < 2; h++) {                                      // rows 0–7, then 8–15
        for (int q = 0; q < 4; q++) {
            __m256i lo = _mm256_unpacklo_epi64(b[8 * h + q], b[8 * h + 4 + q]); // sample 2q, rows 8h … 8h+7
            __m256i hi = _mm256_unpackhi_epi64(b[8 * h + q], b[8 * h + 4 + q]); // sample 2q+1
            a[8 * h + 2 * q] = lo;
            a[8 * h + 2 * q + 1] = hi;
        }
    }
    for (int e = 0; e < 8; e++) {
        to[e * pitch] = _mm256_permute2x128_si256(a[e], a[8 + e], 0x20);
        to[(8 + e) * pitch] = _mm256_permute2x128_si256(a[e], a[8 + e], 0x31);
    }
}

// Sixteen vectors of one output sample's sixteen rows (bytes), `pitch` bytes apart, become
// sixteen rows of sixteen samples: the same interleaving in the other direction.
__attribute__((target("avx2")))
static inline void turn_bytes_back(const uint8_t *from, int pitch, uint8_t *to, ptrdiff_t stride) {
    __m128i c[16], a[16], b[16];
    for (int i = 0; i < 16; i++) c[i] = _mm_loadu_si128((const __m128i *)(from + pitch * i));
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm_unpacklo_epi8(c[2 * i], c[2 * i + 1]);     // samples 2i, 2i+1 of rows 0–7
        a[2 * i + 1] = _mm_unpackhi_epi8(c[2 * i], c[2 * i + 1]); // rows 8–15
    }
    for (int g = 0; g < 4; g++) {                                  // samples 4g … 4g+3
        b[4 * g + 0] = _mm_unpacklo_epi16(a[4 * g], a[4 * g + 2]);     // rows 0–3
        b[4 * g + 1] = _mm_unpackhi_epi16(a[4 * g], a[4 * g + 2]);     // rows 4–7
        b[4 * g + 2] = _mm_unpacklo_epi16(a[4 * g + 1], a[4 * g + 3]); // rows 8–11
        b[4 * g + 3] = _mm_unpackhi_epi16(a[4 * g + 1], a[4 * g + 3]); // rows 12–15
    }
    for (int q = 0; q < 4; q++) {                                  // rows 4q … 4q+3
        __m128i l0 = _mm_unpacklo_epi32(b[q], b[4 + q]);           // rows 4q, 4q+1; samples 0–7
        __m128i l1 = _mm_unpackhi_epi32(b[q], b[4 + q]);           // rows 4q+2, 4q+3
        __m128i h0 = _mm_unpacklo_epi32(b[8 + q], b[12 + q]);      // samples 8–15
        __m128i h1 = _mm_unpackhi_epi32(b[8 + q], b[12 + q]);
        _mm_storeu_si128((__m128i *)(to + (4 * q + 0) * stride), _mm_unpacklo_epi64(l0, h0));
        _mm_storeu_si128((__m128i *)(to + (4 * q + 1) * stride), _mm_unpackhi_epi64(l0, h0));
        _mm_storeu_si128((__m128i *)(to + (4 * q + 2) * stride), _mm_unpacklo_epi64(l1, h1));
        _mm_storeu_si128((__m128i *)(to + (4 * q + 3) * stride), _mm_unpackhi_epi64(l1, h1));
    }
}


// The buffers of a pass over stripes, vectors of `vector` bytes (one per turned sample, and one
// of bytes per output sample and row): `turned` reaches as far as any pixel's taps read, which is
// past the row's `samples` (every tap pair reads two samples; an odd count's last one reaches one
// pixel past it), with zeros there, and 16 more; `columns` holds every output sample. Returns 0,
// with neither, when memory is short.
static int stripe_buffers(size_t vector, int samples, int channels, const int32_t *start, const int32_t *count, int base,
                          int first, int n, void **turned, uint8_t **columns) {
    int reach = samples;
    for (int i = first; i < first + n; i++) {
        const int end = (start[i] - base + ((count[i] + 1) & ~1)) * channels;
        if (end > reach) reach = end;
    }
    *turned = aligned_alloc(vector, (size_t)(reach + 16) * vector);
    *columns = aligned_alloc(vector, ((size_t)n * channels * (vector / 2) + vector - 1) & ~(vector - 1));
    if (!*turned || !*columns) {
        free(*turned);
        free(*columns);
        return 0;
    }
    memset((uint8_t *)*turned + (size_t)samples * vector, 0, (size_t)(reach + 16 - samples) * vector);
    return 1;
}

// One stripe of sixteen rows, `turned` holding its samples on their side: every output sample
// of the stripe, sixteen bytes each (one per row), into `columns`.
__attribute__((target("avx2"), always_inline))
static inline void filter_stripe(const __m256i *turned, int channels, const int32_t *start, const int32_t *count,
                                 const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *columns) {
    const __m256i round = _mm256_set1_epi32(1 << (OUT_SHIFT - 1));
    for (int i = first; i < first + n; i++) {
        const __m256i *p = turned + (ptrdiff_t)(start[i] - base) * channels;
        const int16_t *w = weights + (ptrdiff_t)i * tapWidth;
        const int taps = count[i];
        __m256i lo[4], hi[4];
        for (int c = 0; c < channels; c++) lo[c] = hi[c] = round;
        // Taps two at a time; an odd count's last pair has a zero weight past it (CPixels.h).
        for (int k = 0; k < taps; k += 2, p += 2 * channels) {
            const __m256i wk = _mm256_set1_epi32(cresample_pair(w, k));
            for (int c = 0; c < channels; c++) {
                lo[c] = _mm256_add_epi32(lo[c], _mm256_madd_epi16(_mm256_unpacklo_epi16(p[c], p[channels + c]), wk));
                hi[c] = _mm256_add_epi32(hi[c], _mm256_madd_epi16(_mm256_unpackhi_epi16(p[c], p[channels + c]), wk));
            }
        }
        for (int c = 0; c < channels; c++) {
            // unpack and packs both stay within 128-bit halves, so packing undoes the interleave:
            // rows 0–7 in the low half, 8–15 in the high one.
            __m256i v = _mm256_packs_epi32(_mm256_srai_epi32(lo[c], OUT_SHIFT), _mm256_srai_epi32(hi[c], OUT_SHIFT));
            __m256i bytes = _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0x08);
            _mm_storeu_si128((__m128i *)(columns + 16 * ((ptrdiff_t)(i - first) * channels + c)), _mm256_castsi256_si128(bytes));
        }
    }
}

__attribute__((target("avx2")))
static void stripes_avx2(const int16_t *mid, ptrdiff_t midStride, int rows, int channels, const int32_t *start,
                         const int32_t *count, const int16_t *weights, int tapWidth, int base, int first, int n,
                         uint8_t *out, ptrdiff_t outStride) {
    const int samples = (int)midStride, outSamples = n * channels;
    void *buffer;
    uint8_t *columns;
    if (!stripe_buffers(sizeof(__m256i), samples, channels, start, count, base, first, n, &buffer, &columns)) {
        by_row(mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n, out, outStride);
        return;
    }
    __m256i *turned = buffer;
    // The last stripe, block and column group overlap the ones before when the sizes are not
    // multiples of sixteen: each output depends only on its own row and column, so the
    // overlapped ones come out the same.
    for (int y0 = 0;; y0 += 16) {
        if (y0 + 16 > rows) y0 = rows - 16;
        for (int s = 0;; s += 16) {
            if (s + 16 > samples) s = samples - 16;
            turn_samples(mid + y0 * midStride + s, midStride, turned + s, 1);
            if (s + 16 == samples) break;
        }
        // Constant channel counts, so the accumulators stay in registers.
        if (channels == 3) filter_stripe(turned, 3, start, count, weights, tapWidth, base, first, n, columns);
        else filter_stripe(turned, 4, start, count, weights, tapWidth, base, first, n, columns);
        for (int s = 0;; s += 16) {
            if (s + 16 > outSamples) s = outSamples - 16;
            turn_bytes_back(columns + 16 * s, 16, out + y0 * outStride + s, outStride);
            if (s + 16 == outSamples) break;
        }
        if (y0 + 16 == rows) break;
    }
    free(turned);
    free(columns);
}

// `filter_stripe` on thirty-two rows: each 512-bit vector of `turned` is one sample of two
// stripes of sixteen rows, side by side, so every multiply-add covers twice the rows (VNNI's
// `vpdpwssd` adds the pair's products to the sum in one instruction). An output sample's 32
// bytes go to `columns`, rows 0–15 then 16–31.
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline))
static inline void filter_stripe_512(const __m512i *turned, int channels, const int32_t *start, const int32_t *count,
                                     const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *columns) {
    const __m512i round = _mm512_set1_epi32(1 << (OUT_SHIFT - 1));
    // The low eight bytes of each 128-bit lane, in order: packing leaves each lane's rows there.
    const __m512i gather = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    for (int i = first; i < first + n; i++) {
        const __m512i *p = turned + (ptrdiff_t)(start[i] - base) * channels;
        const int16_t *w = weights + (ptrdiff_t)i * tapWidth;
        const int taps = count[i];
        __m512i lo[4], hi[4];
        for (int c = 0; c < channels; c++) lo[c] = hi[c] = round;
        for (int k = 0; k < taps; k += 2, p += 2 * channels) {
            const __m512i wk = _mm512_set1_epi32(cresample_pair(w, k));
            for (int c = 0; c < channels; c++) {
                lo[c] = _mm512_dpwssd_epi32(lo[c], _mm512_unpacklo_epi16(p[c], p[channels + c]), wk);
                hi[c] = _mm512_dpwssd_epi32(hi[c], _mm512_unpackhi_epi16(p[c], p[channels + c]), wk);
            }
        }
        for (int c = 0; c < channels; c++) {
            __m512i v = _mm512_packs_epi32(_mm512_srai_epi32(lo[c], OUT_SHIFT), _mm512_srai_epi32(hi[c], OUT_SHIFT));
            __m512i bytes = _mm512_permutexvar_epi64(gather, _mm512_packus_epi16(v, v));
            _mm256_storeu_si256((__m256i *)(columns + 32 * ((ptrdiff_t)(i - first) * channels + c)), _mm512_castsi512_si256(bytes));
        }
    }
}

// `stripes_avx2` thirty-two rows at a time; fewer rows than that are left to it.
__attribute__((target("avx512f,avx512bw,avx512vnni")))
static void stripes_avx512(const int16_t *mid, ptrdiff_t midStride, int rows, int channels, const int32_t *start,
                           const int32_t *count, const int16_t *weights, int tapWidth, int base, int first, int n,
                           uint8_t *out, ptrdiff_t outStride) {
    const int samples = (int)midStride, outSamples = n * channels;
    void *buffer;
    uint8_t *columns;
    if (!stripe_buffers(sizeof(__m512i), samples, channels, start, count, base, first, n, &buffer, &columns)) {
        by_row(mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n, out, outStride);
        return;
    }
    __m512i *turned = buffer;
    __m256i *halves = (__m256i *)turned;  // sample s: halves[2s] rows 0–15, halves[2s + 1] rows 16–31
    for (int y0 = 0;; y0 += 32) {
        if (y0 + 32 > rows) y0 = rows - 32;
        for (int s = 0;; s += 16) {
            if (s + 16 > samples) s = samples - 16;
            turn_samples(mid + y0 * midStride + s, midStride, halves + 2 * s, 2);
            turn_samples(mid + (y0 + 16) * midStride + s, midStride, halves + 2 * s + 1, 2);
            if (s + 16 == samples) break;
        }
        if (channels == 3) filter_stripe_512(turned, 3, start, count, weights, tapWidth, base, first, n, columns);
        else filter_stripe_512(turned, 4, start, count, weights, tapWidth, base, first, n, columns);
        for (int s = 0;; s += 16) {
            if (s + 16 > outSamples) s = outSamples - 16;
            turn_bytes_back(columns + 32 * s, 32, out + y0 * outStride + s, outStride);
            turn_bytes_back(columns + 32 * s + 16, 32, out + (y0 + 16) * outStride + s, outStride);
            if (s + 16 == outSamples) break;
        }
        if (y0 + 32 == rows) break;
    }
    free(turned);
    free(columns);
}

void cresample_horizontal_rows_at(int level, const int16_t *mid, ptrdiff_t midStride, int rows, int channels,
                                  const int32_t *start, const int32_t *count, const int16_t *weights, int tapWidth, int base,
                                  int first, int n, uint8_t *out, ptrdiff_t outStride) {
    const int cpu = cpixels_cpu_level();
    if (level > cpu) level = cpu;
    const int wide = midStride >= 16 && n * channels >= 16;
    if (level >= CPIXELS_AVX512 && wide && rows >= 32)
        stripes_avx512(mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n, out, outStride);
    else if (level >= CPIXELS_AVX2 && wide && rows >= 16)
        stripes_avx2(mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n, out, outStride);
    else
        by_row(mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n, out, outStride);
}

void cresample_horizontal_rows(const int16_t *mid, ptrdiff_t midStride, int rows, int channels, const int32_t *start,
                               const int32_t *count, const int16_t *weights, int tapWidth, int base, int first, int n,
                               uint8_t *out, ptrdiff_t outStride) {
    cresample_horizontal_rows_at(CPIXELS_AVX512, mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n,
                                 out, outStride);
}

#else

void cresample_horizontal_rows_at(int level, const int16_t *mid, ptrdiff_t midStride, int rows, int channels,
                                  const int32_t *start, const int32_t *count, const int16_t *weights, int tapWidth, int base,
                                  int first, int n, uint8_t *out, ptrdiff_t outStride) {
    (void)level;
    by_row(mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n, out, outStride);
}

void cresample_horizontal_rows(const int16_t *mid, ptrdiff_t midStride, int rows, int channels, const int32_t *start,
                               const int32_t *count, const int16_t *weights, int tapWidth, int base, int first, int n,
                               uint8_t *out, ptrdiff_t outStride) {
    by_row(mid, midStride, rows, channels, start, count, weights, tapWidth, base, first, n, out, outStride);
}

#endif
