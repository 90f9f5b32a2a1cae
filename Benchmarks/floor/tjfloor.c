/* The decode floor of `make bench`: libjpeg-turbo's TurboJPEG API decodes each JPEG named on the
 * command line at the DCT scale the bake would use (shrink.h), into memory, and discards it.
 * Nothing else: no colour management, no resampling, no output.
 *
 *     tjfloor WxH FILE...      (prints "decoded N" on success)
 */
#include <stdio.h>
#include <stdlib.h>
#include <turbojpeg.h>
#include "shrink.h"

int main(int argc, char **argv) {
    int bw, bh, decoded = 0;
    if (argc < 2 || sscanf(argv[1], "%dx%d", &bw, &bh) != 2) {
        fprintf(stderr, "usage: tjfloor WxH FILE...\n");
        return 64;
    }
    tjhandle tj = tjInitDecompress();
    for (int i = 2; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) { perror(argv[i]); return 1; }
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *jpeg = malloc(size);
        if (fread(jpeg, 1, size, f) != (size_t)size) { perror(argv[i]); return 1; }
        fclose(f);
        int w, h, subsampling, colorspace;
        if (tjDecompressHeader3(tj, jpeg, size, &w, &h, &subsampling, &colorspace)) {
            fprintf(stderr, "%s: %s\n", argv[i], tjGetErrorStr2(tj));
            return 1;
        }
        int shrink = bake_jpeg_shrink(w, h, bw, bh);
        int sw = (w + shrink - 1) / shrink, sh = (h + shrink - 1) / shrink;
        unsigned char *pixels = malloc((size_t)sw * sh * 3);
        if (tjDecompress2(tj, jpeg, size, pixels, sw, 0, sh, TJPF_RGB, 0)) {
            fprintf(stderr, "%s: %s\n", argv[i], tjGetErrorStr2(tj));
            return 1;
        }
        decoded++;
        free(pixels);
        free(jpeg);
    }
    tjDestroy(tj);
    printf("decoded %d\n", decoded);
    return 0;
}
