#ifndef CPIXELS_H
#define CPIXELS_H

#include <stddef.h>
#include <stdint.h>

// The direct path's pixel loops. First the inner loops of its separable Lanczos-3 resampler (`ImagePipeline/Lanczos3.swift`,
// which computes the taps), in fixed point: weights are int16 with 14 fractional bits summing to
// exactly 1 << 14, the vertical pass turns 8-bit samples into int16 with 6 fractional bits, and the
// horizontal pass rounds those to 8 bits once. AVX2 and SSSE3/SSE4.1 versions are chosen at run
// time (and AVX-512 for both passes over rows); the plain C versions are the fallback and the reference the tests hold them to.

/// Fractional bits of a weight.
#define CRESAMPLE_WEIGHT_BITS 14
/// Fractional bits of a vertical pass output.
#define CRESAMPLE_MID_BITS 6

/// Instruction-set levels of the vector loops, lowest first. `CPIXELS_AVX512` is AVX-512 F, BW and
/// VNNI (Intel since Ice Lake, AMD since Zen 4), whose fused multiply-add of pairs both passes
/// over rows use on 512-bit vectors.
#define CPIXELS_PORTABLE 0
#define CPIXELS_SSE41 1
#define CPIXELS_AVX2 2
#define CPIXELS_AVX512 3

/// The highest level this CPU runs.
int cpixels_cpu_level(void);

/// One output row of the vertical pass: `out[x] = Σ_k weights[k] × rows[k][x]`, for `n` samples,
/// where `rows[k]` starts at `src + k × stride`, rounded to `CRESAMPLE_MID_BITS` fractional bits.
void cresample_vertical(const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n);

/// `cresample_vertical` with the loop of `level` or the highest below it this CPU runs, for the
/// tests, which hold every level to the plain C version.
void cresample_vertical_at(int level, const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out,
                           int n);

/// `n` output pixels of the horizontal pass, `first` … `first + n − 1`: pixel `i` is
/// `Σ_k weights[i × tapWidth + k] × row[(start[i] − base + k) × channels + ch]` for
/// `k < count[i]`, rounded to 8 bits and clamped, written at `out + (i − first) × channels`.
/// `channels` is 3 or 4. Vector versions read whole vectors and run every pixel to the longest
/// count of the call, so `row` must be readable up to `(start[i] − base + tapWidth + 3) ×
/// channels` for every pixel, and every weight row has `tapWidth` (even) entries, zero past its
/// count.
void cresample_horizontal(const int16_t *row, int channels, const int32_t *start, const int32_t *count,
                          const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *out);

/// The horizontal pass over `rows` rows of `midStride` samples each, one after another from
/// `mid`: for each row, `cresample_horizontal` with the same taps, written `outStride` bytes
/// apart from `out`. With AVX2 it filters sixteen rows at a time (AVX-512: thirty-two), turned on their side so that
/// every vector is one sample of sixteen rows; the result is the same, byte for byte, provided
/// every pixel's taps lie within its row (`start[i] − base + count[i]` at most `midStride /
/// channels`): the turned rows end with zeros where a row's own pass would read on into the
/// next row. Rows must be readable as `cresample_horizontal` reads them (the last needs the
/// slack past it).
void cresample_horizontal_rows(const int16_t *mid, ptrdiff_t midStride, int rows, int channels, const int32_t *start,
                               const int32_t *count, const int16_t *weights, int tapWidth, int base, int first, int n,
                               uint8_t *out, ptrdiff_t outStride);

/// `cresample_horizontal_rows` with the stripes of `level` or the highest below it this CPU runs
/// (AVX-512 filters thirty-two rows at a time, AVX2 sixteen), for the tests; below AVX2 it filters
/// row by row with the CPU's own `cresample_horizontal`.
void cresample_horizontal_rows_at(int level, const int16_t *mid, ptrdiff_t midStride, int rows, int channels,
                                  const int32_t *start, const int32_t *count, const int16_t *weights, int tapWidth, int base,
                                  int first, int n, uint8_t *out, ptrdiff_t outStride);

/// Packs `n` opaque 8-bit RGB pixels (3 bytes each) into table style `style` (FORMAT.md's codes:
/// 1 `32BitBGRA`, which opaque pixels store as `B, G, R, 255`; 2 `32BitBGR`; 3 `16BitBGR`, each
/// channel `(c × 31 + 127) / 255`, little-endian `0RRRRRGGGGGBBBBB`; 4 `8BitGrayscale`,
/// `(77 R + 150 G + 29 B + 128) >> 8`) at `out`.
void cpixels_pack_rgb(const uint8_t *rgb, int n, int style, uint8_t *out);

/// The portable versions, for the tests.
void cpixels_pack_rgb_portable(const uint8_t *rgb, int n, int style, uint8_t *out);
void cresample_vertical_portable(const uint8_t *src, ptrdiff_t stride, const int16_t *weights, int count, int16_t *out, int n);
void cresample_horizontal_portable(const int16_t *row, int channels, const int32_t *start, const int32_t *count,
                                   const int16_t *weights, int tapWidth, int base, int first, int n, uint8_t *out);
void cresample_horizontal_rows_portable(const int16_t *mid, ptrdiff_t midStride, int rows, int channels,
                                        const int32_t *start, const int32_t *count, const int16_t *weights, int tapWidth,
                                        int base, int first, int n, uint8_t *out, ptrdiff_t outStride);

#endif
