#define _GNU_SOURCE
#include "CTableSupport.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <errno.h>
#include <fcntl.h>

#include <unistd.h>
#include <stdio.h>
#if defined(__APPLE__)
#include <sys/stat.h>
#else
#include <sys/syscall.h>
#include <signal.h>
#include <sys/prctl.h>
#endif

// posix_fallocate returns an errno value rather than setting errno; macOS lacks it, so there we
// ask for contiguous-or-not preallocation and then extend the file with ftruncate.
int itc_reserve(int fd, int64_t offset, int64_t length) {
#if defined(__APPLE__)
    fstore_t store = {F_ALLOCATEALL, F_PEOFPOSMODE, 0, length, 0};
    if (fcntl(fd, F_PREALLOCATE, &store) == -1) return errno;
    struct stat st;
    if (fstat(fd, &st) == -1) return errno;
    if (st.st_size < offset + length && ftruncate(fd, offset + length) == -1) return errno;
    return 0;
#else
    int result;
    do { result = posix_fallocate(fd, offset, length); } while (result == EINTR);
    return result;
#endif
}

int itc_die_with_parent(void) {
#if defined(__linux__)
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    // The parent may have died before the request took effect.
    return getppid() == parent ? 0 : -1;
#else
    return 0;
#endif
}

void itc_keep_heap(int bytes) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, bytes);
    mallopt(M_TRIM_THRESHOLD, bytes);
#else
    (void)bytes;
#endif
}

// The system call rather than glibc's renameat2 wrapper, which only glibc 2.28 and later have.
int itc_exchange_paths(const char *a, const char *b) {
#if defined(__APPLE__)
    return renamex_np(a, b, RENAME_SWAP);
#elif defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */);
#else
    (void)a; (void)b;
    errno = ENOSYS;
    return -1;
#endif
}
