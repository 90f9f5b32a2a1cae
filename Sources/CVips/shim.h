// Fixed-arity wrappers around libvips' variadic calls, which Swift cannot call.
//
// Every function here is a thin `static inline` pass-through: no state, no policy. Locking, error
// capture and the choice of options live in Swift (Sources/ImagePipeline/Vips.swift), the one choke
// point through which the package calls libvips. Functions return libvips' own convention: 0 on
// success and -1 on failure for `int`, NULL on failure for pointers; the reason is in libvips'
// process-wide error buffer.
#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

#include <vips/vips.h>

/// `VIPS_INIT(argv0)`: starts libvips and checks that headers and library agree.
static inline int cvips_init(const char *argv0) { return VIPS_INIT(argv0); }

/// Opens an image from a source for its header only: no pixels are decoded.
static inline VipsImage *cvips_header_from_source(VipsSource *source, VipsFailOn fail_on) {
    return vips_image_new_from_source(source, "",
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", fail_on,
        NULL);
}

/// Opens an image from a source with JPEG shrink-on-load (`shrink` 1, 2, 4 or 8). Only for the
/// JPEG loader: other loaders reject the `shrink` option.
static inline VipsImage *cvips_jpeg_from_source_shrunk(VipsSource *source, VipsFailOn fail_on, int shrink) {
    return vips_image_new_from_source(source, "",
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", fail_on,
        "shrink", shrink,
        NULL);
}

/// `vips_thumbnail_source` fitting inside `width` × `height`, never enlarging, auto-rotating by
/// EXIF orientation. `option_string` goes to the loader (8.14 ignores `fail_on` given to
/// thumbnail_source directly). `export_profile` may be NULL: no colour management.
static inline int cvips_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height,
                                         const char *option_string, const char *export_profile) {
    if (export_profile)
        return vips_thumbnail_source(source, out, width,
            "height", height,
            "size", VIPS_SIZE_DOWN,
            "option_string", option_string,
            "export_profile", export_profile,
            NULL);
    return vips_thumbnail_source(source, out, width,
        "height", height,
        "size", VIPS_SIZE_DOWN,
        "option_string", option_string,
        NULL);
}

/// Transforms to sRGB with the embedded profile, falling back to libvips' built-in CMYK profile
/// when there is none; 8 bits out.
static inline int cvips_icc_transform_cmyk_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb",
        "embedded", TRUE,
        "input_profile", "cmyk",
        "depth", 8,
        NULL);
}

static inline int cvips_autorot(VipsImage *in, VipsImage **out) { return vips_autorot(in, out, NULL); }

static inline int cvips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

static inline int cvips_cast(VipsImage *in, VipsImage **out, VipsBandFormat format) {
    return vips_cast(in, out, format, NULL);
}

static inline int cvips_premultiply(VipsImage *in, VipsImage **out) { return vips_premultiply(in, out, NULL); }

static inline int cvips_unpremultiply(VipsImage *in, VipsImage **out) { return vips_unpremultiply(in, out, NULL); }

/// `vips_resize` with independent horizontal and vertical scales (default kernel, lanczos3).
static inline int cvips_resize(VipsImage *in, VipsImage **out, double hscale, double vscale) {
    return vips_resize(in, out, hscale, "vscale", vscale, NULL);
}

static inline int cvips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

static inline int cvips_smartcrop(VipsImage *in, VipsImage **out, int width, int height, VipsInteresting interesting) {
    return vips_smartcrop(in, out, width, height, "interesting", interesting, NULL);
}

/// Embeds `in` at (`x`, `y`) in a `width` × `height` canvas, repeating edge pixels outwards.
static inline int cvips_embed_copy(VipsImage *in, VipsImage **out, int x, int y, int width, int height) {
    return vips_embed(in, out, x, y, width, height, "extend", VIPS_EXTEND_COPY, NULL);
}

/// Encodes an image as PNG into a new buffer (freed with `g_free`) at zlib `compression` 0…9;
/// images made from memory carry no metadata to write (`imagetable extract` and `preview`).
static inline int cvips_pngsave_buffer(VipsImage *in, void **buf, size_t *len, int compression) {
    return vips_pngsave_buffer(in, buf, len, "compression", compression, NULL);
}

/// Renders Pango markup in `font` at `dpi` into a one-band coverage mask the size of its ink.
static inline int cvips_text(VipsImage **out, const char *markup, const char *font, int dpi) {
    return vips_text(out, markup, "font", font, "dpi", dpi, NULL);
}

// ---- Test support: references made by libvips directly (used by Tests/ImagePipelineTests) ----

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

/// Transforms to the named or built-in profile (`"cmyk"`, `"p3"`…) with the embedded or sRGB
/// input profile (test fixtures).
static inline int cvips_icc_transform_to(VipsImage *in, VipsImage **out, const char *profile) {
    return vips_icc_transform(in, out, profile, "embedded", TRUE, "input_profile", "srgb", NULL);
}

/// A `width` × `height` black image of `bands` bands (test fixtures).
static inline int cvips_black(VipsImage **out, int width, int height, int bands) {
    return vips_black(out, width, height, "bands", bands, NULL);
}

#endif
