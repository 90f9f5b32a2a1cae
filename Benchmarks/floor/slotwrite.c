/* How fast can N processes fill disjoint slots of one table-like file? The measurement behind
 * docs/PIPELINE.md, "Many cores": a bake's workers write their slots into the same few files.
 *
 *     cc -O2 -o slotwrite Benchmarks/floor/slotwrite.c
 *     slotwrite MODE FILE PROCS SLOTS SLOTBYTES      e.g. slotwrite pwrite /tmp/t 16 6000 90000
 *
 * MODE: pwrite    each process pwrites its slots (every PROCS-th) into FILE, as workers do
 *       own       the same, but each process into a file of its own (FILE.N)
 *       mmap      stores into a shared mapping of the slot instead of pwrite
 *       populate  the same after MADV_POPULATE_WRITE (faults in one call)
 * Prints wall time, MB/s and the CPU of all processes. FILE is created sparse and deleted. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: slotwrite MODE FILE PROCS SLOTS SLOTBYTES\n"); return 64; }
    const char *mode = argv[1], *path = argv[2];
    int procs = atoi(argv[3]); long slots = atol(argv[4]); long bytes = atol(argv[5]);
    long stride = (bytes + 4095) / 4096 * 4096;
    unlink(path);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ftruncate(fd, stride * slots) != 0) { perror(path); return 1; }
    double t0 = now();
    for (int p = 0; p < procs; p++) {
        if (fork() == 0) {
            unsigned char *buf = malloc(bytes);
            if (!strcmp(mode, "own")) {
                char own[4096];
                snprintf(own, sizeof own, "%s.%d", path, p);
                fd = open(own, O_RDWR | O_CREAT | O_TRUNC, 0644);
                if (fd < 0 || ftruncate(fd, stride * slots) != 0) { perror(own); _exit(1); }
            }
            for (long i = 0; i < bytes; i++) buf[i] = (unsigned char)(i * 7 + p);
            for (long s = p; s < slots; s += procs) {
                off_t off = s * stride;
                if (!strcmp(mode, "pwrite") || !strcmp(mode, "own")) {
                    if (pwrite(fd, buf, bytes, off) != bytes) { perror("pwrite"); _exit(1); }
                } else {
                    unsigned char *m = mmap(NULL, stride, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
                    if (m == MAP_FAILED) { perror("mmap"); _exit(1); }
                    if (!strcmp(mode, "populate") && madvise(m, stride, MADV_POPULATE_WRITE) != 0) { perror("madvise"); _exit(1); }
                    memcpy(m, buf, bytes);
                    munmap(m, stride);
                }
            }
            if (!strcmp(mode, "own")) { char own[4096]; snprintf(own, sizeof own, "%s.%d", path, p); unlink(own); }
            _exit(0);
        }
    }
    int status, failed = 0;
    while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status);
    double wall = now() - t0;
    struct rusage r; getrusage(RUSAGE_CHILDREN, &r);
    double cpu = r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
    printf("%-8s procs %2d  %5.0f MB  wall %6.3f s  %6.0f MB/s  cpu %6.3f s  %5.1f us/slot\n", mode, procs,
           slots * bytes / 1e6, wall, slots * bytes / 1e6 / wall, cpu, cpu / slots * 1e6);
    close(fd); unlink(path);
    return failed;
}
