/* The JPEG shrink-on-load factor imagetable bake uses (libvips' thumbnail rule): block-shrink by
 * 8, 4 or 2 only while at least twice the target size is left for the resampler. `w` x `h` is the
 * source, `bw` x `bh` the largest member's box, filled (cover). */
static int bake_jpeg_shrink(int w, int h, int bw, int bh) {
    double hs = (double)w / bw, vs = (double)h / bh;
    double shrink = hs < vs ? hs : vs;
    if (shrink >= 16) return 8;
    if (shrink >= 8) return 4;
    if (shrink >= 4) return 2;
    return 1;
}
