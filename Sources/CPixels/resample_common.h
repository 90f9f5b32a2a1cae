// What the resampling loops of resample.c and resample_rows.c share (not part of the module's
// interface: CPixels.h is).
#ifndef CPIXELS_RESAMPLE_COMMON_H
#define CPIXELS_RESAMPLE_COMMON_H

#include "CPixels.h"

/// Rounding added before the vertical pass drops its extra fractional bits.
#define MID_ROUND (1 << (CRESAMPLE_WEIGHT_BITS - CRESAMPLE_MID_BITS - 1))
/// The horizontal pass's shift from its sums to 8-bit samples.
#define OUT_SHIFT (CRESAMPLE_WEIGHT_BITS + CRESAMPLE_MID_BITS)

/// Weights `k` and `k + 1` as one 32-bit lane for `pmaddwd`, shifted as unsigned: shifting a
/// negative weight's bits into the sign of a signed int is undefined.
static inline int32_t cresample_pair(const int16_t *w, int k) {
    return (int32_t)((uint32_t)(uint16_t)w[k] | (uint32_t)(uint16_t)w[k + 1] << 16);
}

#endif
