// Counts allocations by interposing the malloc family in the benchmark executable: on glibc the
// executable's definitions take precedence for every library in the process, and the __libc_*
// entry points still reach the real allocator. Other platforms report zero (no interposition).
#include "CMallocCounter.h"

#if defined(__GLIBC__)
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static uint64_t calls;

static inline void count(void) { __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

uint64_t malloc_counter_calls(void) { return __atomic_load_n(&calls, __ATOMIC_RELAXED); }
#else
uint64_t malloc_counter_calls(void) { return 0; }
#endif
