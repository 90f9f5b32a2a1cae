// libvips linked directly, for tests and benchmarks only: references made by libvips itself
// (`vips_thumbnail` as `vipsthumbnail` makes it, `jpegload`) and fixtures. The package's own code
// never links libvips; it opens it at run time through CVips (Sources/CVips/include/CVips.h).
//
// Fixed-arity wrappers around libvips' variadic calls, which Swift cannot call.
#ifndef CLIBVIPS_SHIM_H
#define CLIBVIPS_SHIM_H

#include <vips/vips.h>

static inline int cvips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

/// `vips_thumbnail` of a file, as `vipsthumbnail` would make it.
static inline int cvips_reference_thumbnail(const char *filename, VipsImage **out, int width, int height,
                                            VipsSize size, VipsInteresting crop) {
    return vips_thumbnail(filename, out, width,
        "height", height,
        "size", size,
        "crop", crop,
        NULL);
}

/// `jpegload` of a file with shrink-on-load, as libvips decodes JPEGs (tests of the direct path).
static inline int cvips_reference_jpegload(const char *filename, VipsImage **out, int shrink) {
    return vips_jpegload(filename, out, "shrink", shrink, NULL);
}

/// Opens a file by name with default options (test fixtures and references).
static inline VipsImage *cvips_load_file(const char *filename) {
    return vips_image_new_from_file(filename, NULL);
}

/// Saves an image in the format its file name's suffix names (test fixtures).
static inline int cvips_write_to_file(VipsImage *in, const char *filename) {
    return vips_image_write_to_file(in, filename, NULL);
}

/// Saves an image as PNG (test fixtures).
static inline int cvips_pngsave(VipsImage *in, const char *filename) {
    return vips_pngsave(in, filename, NULL);
}

/// Saves an image as JPEG at quality `q` (test fixtures).
static inline int cvips_jpegsave(VipsImage *in, const char *filename, int q) {
    return vips_jpegsave(in, filename, "Q", q, NULL);
}

/// Saves an image as a progressive JPEG at quality `q`, chroma not subsampled (test fixtures).
static inline int cvips_jpegsave_progressive(VipsImage *in, const char *filename, int q) {
    return vips_jpegsave(in, filename, "Q", q, "interlace", TRUE, "subsample_mode", VIPS_FOREIGN_SUBSAMPLE_OFF, NULL);
}

/// Adds a constant band (an opaque alpha, test fixtures).
static inline int cvips_bandjoin_const1(VipsImage *in, VipsImage **out, double c) {
    return vips_bandjoin_const1(in, out, c, NULL);
}

/// Transforms to the named or built-in profile (`"cmyk"`, `"p3"`…) with the embedded or sRGB
/// input profile (test fixtures).
static inline int cvips_icc_transform_to(VipsImage *in, VipsImage **out, const char *profile) {
    return vips_icc_transform(in, out, profile, "embedded", TRUE, "input_profile", "srgb", NULL);
}

#endif
