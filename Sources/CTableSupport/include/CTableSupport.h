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

/// Asks the CPU to start loading the cache line at `address` (no fault, no effect on
/// correctness): a lookup knows its slot's address from the bucket, before it reads the record,
/// so the two cache misses overlap instead of following each other.
static inline void itc_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 0);
}

/// An acquire fence, for the second read of a seqlock.
static inline void itc_fence_acquire(void) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/// Tells the CPU that this thread is spinning on a value another one will change (x86 `pause`,
/// ARM `yield`): cheaper for the other hyperthread, and no memory-order effect.
static inline void itc_cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// A release fence, ordering pixel and field stores before a publication.
static inline void itc_fence_release(void) {
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

/// Allocates and initialises a mutex that spins briefly before it sleeps (glibc's adaptive
/// mutex; a plain one elsewhere); `NULL` when memory or the initialisation fails.
void *itc_mutex_create(void);

/// Locks a mutex from `itc_mutex_create`.
void itc_mutex_lock(void *mutex);

/// Unlocks a mutex from `itc_mutex_create`.
void itc_mutex_unlock(void *mutex);

/// Destroys and frees a mutex from `itc_mutex_create`.
void itc_mutex_destroy(void *mutex);

/// Whether reading a hole of the file through a shared mapping allocates memory for it, and so
/// is SIGBUS when the file system is full: 1 on tmpfs (Linux), 0 elsewhere (a hole reads as zeros).
int itc_holes_fault(int fd);

/// The bytes of `[from, to)` that are holes (no blocks), found with `SEEK_HOLE`; 0 where the
/// system cannot say.
int64_t itc_hole_bytes(int fd, int64_t from, int64_t to);

/// The bytes an unprivileged process may still write on the file's file system; -1 on error.
int64_t itc_free_bytes(int fd);

/// Extends the file, which ends at `offset`, by `length` bytes of allocated blocks; returns 0 or
/// an errno value (never -1). On failure the file is cut back to `offset`, so a reservation that
/// ran out of space part-way keeps none of what it got.
int itc_reserve(int fd, int64_t offset, int64_t length);

/// Allocates disk blocks for a range inside the file (a hole left by `ftruncate`), keeping any
/// data already there, so that a store through the mapping can never fault on a full disk.
/// Returns 0 or an errno value. On macOS, where a hole inside a file cannot be filled this way,
/// tables are created with their index allocated and this only extends the file.
int itc_allocate(int fd, int64_t offset, int64_t length);

/// On tmpfs, writes zeros over the holes of a range (`SEEK_HOLE`'s, which include pages
/// `posix_fallocate` reserved and nothing has written: they read as holes to the check readers
/// make on a full tmpfs, though their memory is taken); elsewhere does nothing. Returns 0 or an
/// errno value. Only for a range no other thread or process may be writing: a table's writer,
/// holding its lock, on what it has just allocated before storing into it (a worker that opens
/// the table to write slots holds no lock, and another may be writing the same pages).
int itc_fill_reserved(int fd, int64_t offset, int64_t length);

/// Gives a range's blocks back to the file system, leaving a hole that reads as zeros (Linux's
/// `FALLOC_FL_PUNCH_HOLE`); where that is not supported, writes zeros over it. Returns 0 or an
/// errno value.
int itc_punch(int fd, int64_t offset, int64_t length);

/// Swaps two paths in one atomic step (Linux `renameat2(RENAME_EXCHANGE)`, macOS
/// `renamex_np(RENAME_SWAP)`): both must exist. Returns 0 or an errno value.
int itc_exchange(const char *from, const char *to);

/// Copies `length` bytes between two files in the kernel where it can (`copy_file_range`),
/// else through a buffer. Returns 0 or an errno value (`EIO` for a short source).
int itc_copy_range(int from, int64_t fromOffset, int to, int64_t toOffset, int64_t length);

/// Loads a 64-bit value with relaxed ordering (an index bucket: atomic, ordered by the record's
/// own seqlock afterwards).
static inline uint64_t itc_load_relaxed_u64(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_RELAXED);
}

/// Sets bits of a 64-bit word with relaxed ordering (one bit per slot that this process has
/// checked: what else the word's bits say is ordered by each record's seqlock).
static inline void itc_or_relaxed_u64(void *address, uint64_t bits) {
    __atomic_fetch_or((uint64_t *)address, bits, __ATOMIC_RELAXED);
}

/// Keeps freed heap memory in the process up to `bytes` (glibc's `M_TRIM_THRESHOLD`, with
/// allocations below `bytes` served from the heap: `M_MMAP_THRESHOLD`), for a worker whose every
/// job allocates and frees the same few buffers: otherwise the heap shrinks after each job and
/// the next one faults in and zeroes the same pages again. Elsewhere a no-op.
void itc_keep_heap(int bytes);

/// Whether this build runs under AddressSanitizer or ThreadSanitizer (`swift build
/// --sanitize=address`, `make sanitize`): 1 or 0. Their shadow memory is a private mapping of
/// terabytes, which a limit on the process's data (`RLIMIT_DATA`) refuses, so such a worker
/// cannot start with one.
int itc_sanitized(void);

/// Asks the kernel to kill this process when its parent dies (Linux; elsewhere a no-op), so a
/// worker whose bake was killed cannot go on writing into slots a later bake may reuse.
/// Returns 0, or -1 when the parent is already gone.
int itc_die_with_parent(void);

/// Flushes the C library's standard output (where Swift's `print` writes) and says whether
/// everything written to it arrived: 0, else the error number of the failure, or -1 when an
/// earlier write failed and its number is gone (`EPIPE` where standard output is a pipe whose
/// reader has gone: output larger than the buffer is written past it, and its `EPIPE` lost).
int itc_flush_stdout(void);

/// Whether a write to the C library's standard output has failed (its error flag).
int itc_stdout_failed(void);

/// Catches SIGINT and SIGTERM from now on (but one ignored on entry): the first is recorded
/// (``itc_interrupt_signal``) for the caller to stop at its next safe point, and a second ends
/// the process at once by its default action, as a user who presses Ctrl-C twice means. The
/// same signal again within 200 ms is the first one sent twice (GNU timeout signals the child,
/// then its process group), not a second one. Forgets a signal caught before.
void itc_catch_interrupts(void);

/// Puts back SIGINT's and SIGTERM's default action; a signal already recorded stays recorded.
void itc_release_interrupts(void);

/// The signal ``itc_catch_interrupts`` recorded, or 0.
int itc_interrupt_signal(void);

/// Ends the process by `sig`'s default action, so that a shell sees it killed by the signal (and
/// stops the script it runs, where an exit status of 128 + sig lets the script go on). Returns
/// only if the signal does not end the process.
void itc_end_by_signal(int sig);

#endif
