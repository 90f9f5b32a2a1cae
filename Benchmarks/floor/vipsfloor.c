/* libvips' own decode, for `make bench`: `jpegload` with the bake's shrink-on-load factor
 * (shrink.h), evaluated into memory and discarded, on one libvips thread.
 *
 *     vipsfloor WxH FILE...
 */
#include <stdio.h>
#include <vips/vips.h>
#include "shrink.h"

int main(int argc, char **argv) {
    int bw, bh, decoded = 0;
    if (VIPS_INIT(argv[0]) || argc < 2 || sscanf(argv[1], "%dx%d", &bw, &bh) != 2) {
        fprintf(stderr, "usage: vipsfloor WxH FILE...\n");
        return 64;
    }
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    for (int i = 2; i < argc; i++) {
        VipsImage *header = vips_image_new_from_file(argv[i], NULL), *image, *memory;
        if (!header) { fprintf(stderr, "%s\n", vips_error_buffer()); return 1; }
        int shrink = bake_jpeg_shrink(header->Xsize, header->Ysize, bw, bh);
        g_object_unref(header);
        if (vips_jpegload(argv[i], &image, "shrink", shrink, "access", VIPS_ACCESS_SEQUENTIAL, NULL)
            || !(memory = vips_image_copy_memory(image))) {
            fprintf(stderr, "%s\n", vips_error_buffer());
            return 1;
        }
        decoded++;
        g_object_unref(image);
        g_object_unref(memory);
    }
    printf("decoded %d\n", decoded);
    return 0;
}
