#ifndef CTABLESUPPORT_H
#define CTABLESUPPORT_H

#include <stdint.h>

// Atomic operations on memory that Swift does not own: the live header fields and record
// generations of a memory-mapped table, shared between processes. C11 atomics on a MAP_SHARED
// mapping are coherent across processes on every platform we build for. They are static inline
// so that a table hit costs no cross-module call.

/// Loads a 64-bit value with acquire ordering.
static inline uint64_t itc_load_acquire_u64(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_ACQUIRE);
}

/// Stores a 64-bit value with release ordering.
static inline void itc_store_release_u64(void *address, uint64_t value) {
    __atomic_store_n((uint64_t *)address, value, __ATOMIC_RELEASE);
}

/// Stores a 32-bit value with release ordering.
static inline void itc_store_release_u32(void *address, uint32_t value) {
    __atomic_store_n((uint32_t *)address, value, __ATOMIC_RELEASE);
}

/// Stores a 64-bit value with relaxed ordering (for hints such as LRU recency).
static inline void itc_store_relaxed_u64(void *address, uint64_t value) {
    __atomic_store_n((uint64_t *)address, value, __ATOMIC_RELAXED);
}

/// Adds to a 64-bit value and returns the new value (sequentially consistent).
static inline uint64_t itc_add_fetch_u64(void *address, uint64_t delta) {
    return __atomic_add_fetch((uint64_t *)address, delta, __ATOMIC_SEQ_CST);
}

/// An acquire fence, for the second read of a seqlock.
static inline void itc_fence_acquire(void) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/// A release fence, ordering pixel and field stores before a publication.
static inline void itc_fence_release(void) {
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

/// Runs `fallocate`-style reservation; returns 0 or an errno value (never -1).
int itc_reserve(int fd, int64_t offset, int64_t length);

/// Keeps freed heap memory in the process up to `bytes` (glibc's `M_TRIM_THRESHOLD`, with
/// allocations below `bytes` served from the heap: `M_MMAP_THRESHOLD`), for a worker whose every
/// job allocates and frees the same few buffers: otherwise the heap shrinks after each job and
/// the next one faults in and zeroes the same pages again. Elsewhere a no-op.
void itc_keep_heap(int bytes);

/// Asks the kernel to kill this process when its parent dies (Linux; elsewhere a no-op), so a
/// worker whose bake was killed cannot go on writing into slots a later bake may reuse.
/// Returns 0, or -1 when the parent is already gone.
int itc_die_with_parent(void);

/// Swaps what two paths name, in one step (Linux `renameat2` with `RENAME_EXCHANGE`, macOS
/// `renamex_np` with `RENAME_SWAP`): for replacing a whole directory so that every other process
/// sees the old one or the new one, never neither. Returns 0, or -1 with `errno` set (`EINVAL`
/// or `ENOSYS` where the file system or the kernel cannot).
int itc_exchange_paths(const char *a, const char *b);

#endif
