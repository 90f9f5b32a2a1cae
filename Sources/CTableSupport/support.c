#define _GNU_SOURCE
#include "CTableSupport.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#if !defined(__APPLE__)
#include <linux/falloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#endif

int itc_holes_fault(int fd) {
#if defined(__linux__)
    struct statfs fs;
    return fstatfs(fd, &fs) == 0 && fs.f_type == 0x01021994 /* TMPFS_MAGIC */;
#else
    (void)fd;
    return 0;
#endif
}

int64_t itc_hole_bytes(int fd, int64_t from, int64_t to) {
#if defined(__linux__) && defined(SEEK_HOLE)
    int64_t holes = 0, at = from;
    while (at < to) {
        off_t hole = lseek(fd, at, SEEK_HOLE);
        if (hole < 0 || hole >= to) break;
        off_t data = lseek(fd, hole, SEEK_DATA);
        int64_t end = (data < 0 || data > to) ? to : data;  // ENXIO: a hole to the end
        holes += end - hole;
        at = end;
    }
    return holes;
#else
    (void)fd; (void)from; (void)to;
    return 0;
#endif
}

int64_t itc_free_bytes(int fd) {
    struct statvfs fs;
    if (fstatvfs(fd, &fs) != 0) return -1;
    return (int64_t)fs.f_bavail * (int64_t)fs.f_frsize;
}

void *itc_mutex_create(void) {
    pthread_mutex_t *mutex = malloc(sizeof(pthread_mutex_t));
    if (!mutex) return NULL;
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
#if defined(__GLIBC__)
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    int failed = pthread_mutex_init(mutex, &attributes);
    pthread_mutexattr_destroy(&attributes);
    if (failed) {
        free(mutex);
        return NULL;
    }
    return mutex;
}

void itc_mutex_lock(void *mutex) { pthread_mutex_lock(mutex); }

void itc_mutex_unlock(void *mutex) { pthread_mutex_unlock(mutex); }

void itc_mutex_destroy(void *mutex) {
    pthread_mutex_destroy(mutex);
    free(mutex);
}

// posix_fallocate returns an errno value rather than setting errno; macOS lacks it, so there we
// ask for contiguous-or-not preallocation and then extend the file with ftruncate.
static int fill_tmpfs_holes(int fd, int64_t offset, int64_t length);

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
    if (result != 0) {
        // ext4 keeps the blocks, and the size, it got before running out: a failed reservation
        // of a large range left the disk full for every other file, with nothing written. The
        // file ended at `offset`; cutting it back there gives them back.
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size > offset) (void)ftruncate(fd, offset);
        return result;
    }
    return fill_tmpfs_holes(fd, offset, length);
#endif
}

int itc_sanitized(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return 1;
#else
    return 0;
#endif
#else
    return 0;
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

int itc_allocate(int fd, int64_t offset, int64_t length) {
#if defined(__APPLE__)
    struct stat st;
    if (fstat(fd, &st) == -1) return errno;
    if (offset + length <= st.st_size) return 0;
    return itc_reserve(fd, st.st_size, offset + length - st.st_size);
#else
    int result;
    do { result = posix_fallocate(fd, offset, length); } while (result == EINTR);
    return result;
#endif
}

int itc_fill_reserved(int fd, int64_t offset, int64_t length) { return fill_tmpfs_holes(fd, offset, length); }

static int write_zeros(int fd, int64_t offset, int64_t length);

/* On tmpfs, a page that posix_fallocate reserved reads as a hole (SEEK_HOLE) until something
   writes it, though its memory is taken: readers, which refuse a table on a full tmpfs whose
   read ranges have holes (a read of a real one there is SIGBUS), took such pages for holes.
   Zeros written over the range's holes (reserved pages, all zeros already; no data is touched)
   leave none. Elsewhere nothing is done. */
static int fill_tmpfs_holes(int fd, int64_t offset, int64_t length) {
#if defined(__linux__) && defined(SEEK_HOLE)
    if (!itc_holes_fault(fd)) return 0;
    int64_t at = offset, to = offset + length;
    while (at < to) {
        off_t hole = lseek(fd, at, SEEK_HOLE);
        if (hole < 0 || hole >= to) break;
        off_t data = lseek(fd, hole, SEEK_DATA);
        int64_t end = (data < 0 || data > to) ? to : data;
        int result = write_zeros(fd, hole, end - hole);
        if (result != 0) return result;
        at = end;
    }
#else
    (void)fd; (void)offset; (void)length;
#endif
    return 0;
}

static int write_zeros(int fd, int64_t offset, int64_t length) {
    static const char zeros[65536];
    while (length > 0) {
        size_t n = length < (int64_t)sizeof zeros ? (size_t)length : sizeof zeros;
        ssize_t w = pwrite(fd, zeros, n, offset);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        offset += w;
        length -= w;
    }
    return 0;
}

int itc_punch(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) == 0) return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS) return errno;
#endif
    return write_zeros(fd, offset, length);
}

int itc_exchange(const char *from, const char *to) {
#if defined(__APPLE__)
    return renamex_np(from, to, RENAME_SWAP) == 0 ? 0 : errno;
#elif defined(SYS_renameat2)
    return syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 2 /* RENAME_EXCHANGE */) == 0 ? 0 : errno;
#else
    (void)from; (void)to;
    return ENOSYS;
#endif
}

int itc_copy_range(int from, int64_t fromOffset, int to, int64_t toOffset, int64_t length) {
#if defined(__linux__)
    off_t in = fromOffset, out = toOffset;
    while (length > 0) {
        ssize_t n = copy_file_range(from, &in, to, &out, (size_t)length, 0);
        if (n > 0) { length -= n; continue; }
        if (n == 0) return EIO;
        if (errno == EINTR) continue;
        if (errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP && errno != EINVAL) return errno;
        fromOffset = in;
        toOffset = out;
        break;
    }
    if (length == 0) return 0;
#endif
    char *buffer = malloc(1 << 20);
    if (!buffer) return ENOMEM;
    int result = 0;
    while (length > 0 && result == 0) {
        size_t want = length < (1 << 20) ? (size_t)length : (1 << 20);
        ssize_t r = pread(from, buffer, want, fromOffset);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { result = r == 0 ? EIO : errno; break; }
        ssize_t done = 0;
        while (done < r) {
            ssize_t w = pwrite(to, buffer + done, (size_t)(r - done), toOffset + done);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) { result = errno; break; }
            done += w;
        }
        fromOffset += r;
        toOffset += r;
        length -= r;
    }
    free(buffer);
    return result;
}

int itc_stdout_failed(void) { return ferror(stdout) != 0; }

int itc_flush_stdout(void) {
    errno = 0;
    int failed = fflush(stdout) != 0;
    int code = errno;
    if (!failed && !ferror(stdout)) return 0;
    if (code) return code;
    /* An earlier write failed and its errno is gone: the C library writes a block larger than
       its buffer straight to the file, and on EPIPE drops it and only sets the error flag. A pipe
       whose reader is gone says so to poll (POLLERR), which a full disk does not. */
    struct pollfd out = { .fd = STDOUT_FILENO, .events = POLLOUT, .revents = 0 };
    if (poll(&out, 1, 0) == 1 && (out.revents & POLLERR)) {
        struct stat st;
        if (fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode)) return EPIPE;
    }
    return -1;
}

/* The signal caught, and which of the two signals have our handler: lock-free atomics, which a
   handler may touch and other threads read. */
static atomic_int itc_interrupted = 0;
static atomic_int itc_installed[2] = {0, 0};
/* When the first signal came (CLOCK_MONOTONIC, nanoseconds): a copy of it within a moment is one
   signal sent twice, not a second one (GNU timeout signals the child and then its group). */
static atomic_llong itc_first_at = 0;

static long long itc_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);  /* async-signal-safe */
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void itc_on_interrupt(int sig) {
    int first = 0;
    if (atomic_compare_exchange_strong(&itc_interrupted, &first, sig)) {
        atomic_store(&itc_first_at, itc_now_ns());
        return;
    }
    if (first == sig && itc_now_ns() - atomic_load(&itc_first_at) < 200000000LL) return;
    /* A second signal: the default action, now. The signal is blocked while its handler runs,
       so the raise takes effect when the handler returns. Only a signal we caught gets its
       default back: one ignored on entry stays ignored. */
    signal(sig, SIG_DFL);
    raise(sig);
}

void itc_catch_interrupts(void) {
    atomic_store(&itc_interrupted, 0);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = itc_on_interrupt;
    sigemptyset(&action.sa_mask);
    /* Restarted: a read or write the signal lands in goes on rather than failing with EINTR. */
    action.sa_flags = SA_RESTART;
    /* A signal ignored on entry stays ignored (a `cmd &` of a shell script ignores SIGINT):
       what the caller asked for, as `nohup` and the shells' own rules expect. */
    int signals[2] = {SIGINT, SIGTERM};
    sigset_t unblock;
    sigemptyset(&unblock);
    for (int i = 0; i < 2; i++) {
        struct sigaction current;
        if (sigaction(signals[i], NULL, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        atomic_store(&itc_installed[i], 1);
        sigaction(signals[i], &action, NULL);
        sigaddset(&unblock, signals[i]);
    }
    /* A blocked mask is inherited by accident, not asked for: a process that Foundation's
       Process started from a dispatch thread has SIGINT blocked, and a SIGINT then waited,
       pending, for ever. This thread, and those it starts, take them. */
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
}

void itc_release_interrupts(void) {
    int signals[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        if (atomic_exchange(&itc_installed[i], 0)) signal(signals[i], SIG_DFL);
    }
}

int itc_interrupt_signal(void) { return atomic_load(&itc_interrupted); }

void itc_end_by_signal(int sig) {
    signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    pthread_sigmask(SIG_UNBLOCK, &only, NULL);
    raise(sig);
}
