#ifndef CCHECKSUMS_H
#define CCHECKSUMS_H

#include <stddef.h>
#include <stdint.h>

// The checksums of the table format on the CPU's own instructions, each beside a portable
// version: SHA-1's block function on the SHA extensions (x86 SHA-NI), for source fingerprints,
// SHA-256's on the same extensions, for the digests of exported tables,
// and CRC-32 by carry-less multiplication (PCLMULQDQ, and its 512-bit form where AVX-512 has
// VPCLMULQDQ, chosen inside `ccrc32_hardware_fold`), for pixel and record checksums. The Swift
// code (`ImageTableCore/SHA1.swift`, `CRC32.swift`) chooses at run time and keeps the reference.

/// Whether this CPU has the SHA extensions (and SSSE3/SSE4.1 they are used with). Always 0
/// where the code is not built for x86-64.
int csha1_hardware_available(void);

/// Runs the block function over `blocks` 64-byte blocks at `data`, updating `state` (h0…h4).
/// Call only when `csha1_hardware_available()` returned 1.
void csha1_hardware_blocks(uint32_t state[5], const uint8_t *data, size_t blocks);

/// Whether this CPU has the SHA extensions for SHA-256 (the same CPUID bit as SHA-1's). Always 0
/// where the code is not built for x86-64.
int csha256_hardware_available(void);

/// Runs SHA-256's block function over `blocks` 64-byte blocks at `data`, updating `state`
/// (h0…h7). Call only when `csha256_hardware_available()` returned 1.
void csha256_hardware_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

/// Whether this CPU has PCLMULQDQ (and the SSE4.1 it is used with). Always 0 where the code is
/// not built for x86-64.
int ccrc32_hardware_available(void);

/// Advances a CRC-32 register (reflected 0xEDB88320, *not* inverted: pass `~crc` of a finished
/// CRC, and invert the result) over `length` bytes at `data`, which must be at least 64 and a
/// multiple of 16. Call only when `ccrc32_hardware_available()` returned 1.
uint32_t ccrc32_hardware_fold(uint32_t state, const uint8_t *data, size_t length);

#endif
