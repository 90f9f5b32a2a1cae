/* The output floor of `make bench` (floor-bench.py): what writing a bake's slots durably costs
 * with nothing else around it: no decode, no resampling, no checksum, no index, no protocol.
 * Process PART of PARTS writes the slots of sources PART, PART + PARTS, ... (as a bake's workers
 * share its tables) into one file per format, created and preallocated as a bake's tables are,
 * IMAGEBYTES from a buffer of its own at each STRIDE, one pwrite per slot as a worker writes it,
 * and flushes each file (fdatasync) after every 32 of its slots, as a bake publishes a batch.
 *
 *     cc -O2 -o outfloor Benchmarks/floor/outfloor.c
 *     outfloor DIR SOURCES PART PARTS IMAGEBYTES:STRIDE...    e.g. outfloor /tmp/o 2000 0 2 96000:98304
 *
 * The files are DIR/f0, DIR/f1, ... (DIR must exist); a fresh DIR for each run measures fresh
 * files, as a bake into an empty output directory writes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BATCH = 32, MAX_FORMATS = 16 };

int main(int argc, char **argv) {
    if (argc < 6 || argc - 5 > MAX_FORMATS) {
        fprintf(stderr, "usage: outfloor DIR SOURCES PART PARTS IMAGEBYTES:STRIDE...\n");
        return 64;
    }
    long sources = atol(argv[2]), part = atol(argv[3]), parts = atol(argv[4]);
    int formats = argc - 5, fd[MAX_FORMATS];
    long bytes[MAX_FORMATS], stride[MAX_FORMATS], largest = 0;
    for (int f = 0; f < formats; f++) {
        if (sscanf(argv[5 + f], "%ld:%ld", &bytes[f], &stride[f]) != 2 || bytes[f] <= 0 || stride[f] < bytes[f]) {
            fprintf(stderr, "outfloor: bad IMAGEBYTES:STRIDE %s\n", argv[5 + f]);
            return 64;
        }
        if (bytes[f] > largest) largest = bytes[f];
        char path[4096];
        snprintf(path, sizeof path, "%s/f%d", argv[1], f);
        fd[f] = open(path, O_RDWR | O_CREAT, 0644);
        // Every process asks for the whole file: the first allocates it, the others find it done.
        if (fd[f] < 0 || posix_fallocate(fd[f], 0, stride[f] * sources) != 0) { perror(path); return 1; }
    }
    // Not zeros: a file system or a virtual disk may treat zero pages specially.
    unsigned char *pixels = malloc(largest);
    for (long i = 0; i < largest; i++) pixels[i] = (unsigned char)(i * 7 + part);
    long written = 0;
    for (long s = part; s < sources; s += parts) {
        for (int f = 0; f < formats; f++) {
            if (pwrite(fd[f], pixels, bytes[f], s * stride[f]) != bytes[f]) { perror("pwrite"); return 1; }
        }
        if (++written % BATCH == 0) {
            for (int f = 0; f < formats; f++) if (fdatasync(fd[f]) != 0) { perror("fdatasync"); return 1; }
        }
    }
    for (int f = 0; f < formats; f++) if (fdatasync(fd[f]) != 0) { perror("fdatasync"); return 1; }
    return 0;
}
