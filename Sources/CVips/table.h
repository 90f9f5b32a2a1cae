// The libvips and GLib functions this package calls, as `cv_load` resolved them. Internal to
// CVips: Swift sees only the pass-throughs of include/CVips.h.
#ifndef CVIPS_TABLE_H
#define CVIPS_TABLE_H

#include "CVips.h"

// The signatures of libvips 8.x's headers, with its object types made opaque and its
// enumerations and gboolean as int, which is how the C ABI passes them.
struct cv_table {
    int (*init)(const char *argv0);
    int (*version)(int flag);
    void (*cache_set_max)(int max);
    int (*concurrency_get)(void);
    void (*concurrency_set)(int concurrency);
    void (*block_untrusted_set)(int state);
    void (*operation_block_set)(const char *name, int state);
    const char *(*version_string)(void);
    unsigned (*log_set_handler)(const char *domain, int levels, cv_log_func handler, void *user);
    unsigned long (*type_find)(const char *basename, const char *nickname);
    void (*thread_shutdown)(void);
    char *(*error_buffer_copy)(void);
    void (*error)(const char *domain, const char *format, ...);
    void (*object_unref)(void *object);
    void (*free)(void *memory);

    CVSource *(*source_new_from_memory)(const void *data, size_t size);
    CVImage *(*image_new_from_memory_copy)(const void *data, size_t size, int width, int height, int bands, int format);
    void *(*image_write_to_memory)(CVImage *image, size_t *size);
    CVImage *(*image_copy_memory)(CVImage *image);
    int (*image_get_width)(const CVImage *image);
    int (*image_get_height)(const CVImage *image);
    int (*image_get_bands)(const CVImage *image);
    int (*image_get_format)(const CVImage *image);
    int (*image_get_interpretation)(const CVImage *image);
    unsigned long (*image_get_typeof)(const CVImage *image, const char *name);
    int (*image_get_int)(const CVImage *image, const char *name, int *out);
    int (*image_get_string)(const CVImage *image, const char *name, const char **out);
    int (*image_get_blob)(const CVImage *image, const char *name, const void **data, size_t *length);

    CVImage *(*image_new_from_source)(CVSource *source, const char *options, ...);
    int (*thumbnail_source)(CVSource *source, CVImage **out, int width, ...);
    int (*icc_transform)(CVImage *in, CVImage **out, const char *output_profile, ...);
    int (*autorot)(CVImage *in, CVImage **out, ...);
    int (*colourspace)(CVImage *in, CVImage **out, int space, ...);
    int (*cast)(CVImage *in, CVImage **out, int format, ...);
    int (*premultiply)(CVImage *in, CVImage **out, ...);
    int (*unpremultiply)(CVImage *in, CVImage **out, ...);
    int (*resize)(CVImage *in, CVImage **out, double scale, ...);
    int (*shrink)(CVImage *in, CVImage **out, double hshrink, double vshrink, ...);
    int (*extract_area)(CVImage *in, CVImage **out, int left, int top, int width, int height, ...);
    int (*smartcrop)(CVImage *in, CVImage **out, int width, int height, ...);
    int (*embed)(CVImage *in, CVImage **out, int x, int y, int width, int height, ...);
    int (*pngsave_buffer)(CVImage *in, void **buffer, size_t *length, ...);
    int (*text)(CVImage **out, const char *text, ...);
};

/// Filled by `cv_load`; read-only afterwards.
extern struct cv_table cv_vips;

#endif
