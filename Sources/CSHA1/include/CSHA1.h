#ifndef CSHA1_H
#define CSHA1_H

#include <stddef.h>
#include <stdint.h>

// SHA-1's block function on the CPU's SHA extensions (x86 SHA-NI), for source fingerprints:
// about four times the speed of the portable Swift code, which stays the reference and the
// fallback (`ImageTableCore/SHA1.swift`).

/// Whether this CPU has the SHA extensions (and SSSE3/SSE4.1 they are used with). Always 0
/// where the code is not built for x86-64.
int csha1_hardware_available(void);

/// Runs the block function over `blocks` 64-byte blocks at `data`, updating `state` (h0…h4).
/// Call only when `csha1_hardware_available()` returned 1.
void csha1_hardware_blocks(uint32_t state[5], const uint8_t *data, size_t blocks);

#endif
