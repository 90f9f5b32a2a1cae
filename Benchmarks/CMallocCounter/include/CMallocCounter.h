#ifndef CMALLOCCOUNTER_H
#define CMALLOCCOUNTER_H

#include <stdint.h>

/// Number of malloc-family calls (malloc, calloc, realloc, aligned allocations) so far in this
/// process. The benchmark executable defines malloc itself, so every allocation in the process
/// (Swift runtime included) goes through the counter. glibc only.
uint64_t malloc_counter_calls(void);

#endif
