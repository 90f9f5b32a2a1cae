// libvips, loaded when the first image needs it.
//
// The worker decodes plain JPEGs without libvips, and libvips brings about a hundred shared
// libraries whose loading and symbol binding cost some 30 ms of CPU at every process start
// (docs/PIPELINE.md, "Loading libvips"). So nothing here links libvips: `cv_load` opens it with
// `dlopen` and resolves every function this package calls, once, before the first use. The
// types are opaque and the enumerations carry libvips' own values (held to its headers by
// Tests/ImagePipelineTests/VipsLoaderTests.swift), so building needs no libvips headers either.
//
// Every function is a thin pass-through: no state, no policy. Locking, error capture and the
// choice of options live in Swift (Sources/ImagePipeline/Vips.swift), the one choke point through
// which the package calls libvips. Functions return libvips' own convention: 0 on success and -1
// on failure for `int`, NULL on failure for pointers; the reason is in libvips' process-wide
// error buffer. None may be called before `cv_load` has succeeded.
#ifndef CVIPS_H
#define CVIPS_H

#include <stddef.h>

/// A `VipsImage` (a GObject).
typedef struct CVImage CVImage;
/// A `VipsSource` (a GObject).
typedef struct CVSource CVSource;

/// `VipsBandFormat`: the values this package uses.
typedef enum CVBandFormat { CV_FORMAT_UCHAR = 0, CV_FORMAT_FLOAT = 6 } CVBandFormat;
/// `VipsInterpretation`: the values this package uses.
typedef enum CVInterpretation { CV_INTERPRETATION_B_W = 1, CV_INTERPRETATION_CMYK = 15, CV_INTERPRETATION_sRGB = 22 } CVInterpretation;
/// `VipsFailOn`.
typedef enum CVFailOn { CV_FAIL_ON_NONE = 0, CV_FAIL_ON_TRUNCATED = 1, CV_FAIL_ON_ERROR = 2, CV_FAIL_ON_WARNING = 3 } CVFailOn;
/// `VipsInteresting`: the smart-crop strategies this package uses.
typedef enum CVInteresting { CV_INTERESTING_ENTROPY = 2, CV_INTERESTING_ATTENTION = 3 } CVInteresting;
/// `VipsAccess`, `VipsSize` and `VipsExtend`: the options the operations below pass.
enum { CV_ACCESS_SEQUENTIAL = 1, CV_SIZE_DOWN = 2, CV_EXTEND_COPY = 1 };
/// `GLogLevelFlags`: the levels this package routes.
enum { CV_LOG_LEVEL_WARNING = 1 << 4, CV_LOG_LEVEL_MESSAGE = 1 << 5 };

/// A `GLogFunc`.
typedef void (*cv_log_func)(const char *domain, int level, const char *message, void *user);

// ---- Loading ----

/// Opens libvips and resolves every function below: the copy already in the process when there
/// is one, else `$IMAGETABLES_LIBVIPS` when set, else the library by its soname. Not
/// thread-safe: call it once, before any other function here. Returns 0, or -1 with the reason
/// (`dlerror`'s text) in `error`.
int cv_load(char *error, size_t size);

/// `VIPS_INIT`: checks that the library's ABI is the one these declarations describe (8.x,
/// soname 42), then starts libvips. Returns 0, -1 when `vips_init` failed (the reason is in
/// libvips' error buffer), or -2 for another ABI.
int cv_init(const char *argv0);

/// The file the loaded libvips came from (`dladdr` of its `vips_init`), or NULL.
const char *cv_library_path(void);

// ---- Settings and the process ----

void cv_cache_set_max(int max);
int cv_concurrency_get(void);
void cv_concurrency_set(int concurrency);
void cv_block_untrusted_set(int state);
void cv_operation_block_set(const char *name, int state);
const char *cv_version_string(void);
/// `g_log_set_handler`.
unsigned cv_log_set_handler(const char *domain, int levels, cv_log_func handler, void *user);
/// `vips_type_find`: non-zero when the class exists.
unsigned long cv_type_find(const char *basename, const char *nickname);
void cv_thread_shutdown(void);
/// `vips_error_buffer_copy`: free the result with `cv_free`.
char *cv_error_buffer_copy(void);
/// Appends `text` (and a line break) to libvips' error buffer, as `vips_error` with no domain:
/// puts back text taken from it that belongs to another thread's render.
void cv_error_append(const char *text);
/// `g_object_unref`.
void cv_object_unref(void *object);
/// `g_free`.
void cv_free(void *memory);

// ---- Images ----

CVSource *cv_source_new_from_memory(const void *data, size_t size);
CVImage *cv_image_new_from_memory_copy(const void *data, size_t size, int width, int height, int bands, CVBandFormat format);
/// Evaluates `image` into a new buffer (free it with `cv_free`).
void *cv_image_write_to_memory(CVImage *image, size_t *size);
CVImage *cv_image_copy_memory(CVImage *image);
int cv_image_get_width(const CVImage *image);
int cv_image_get_height(const CVImage *image);
int cv_image_get_bands(const CVImage *image);
CVBandFormat cv_image_get_format(const CVImage *image);
CVInterpretation cv_image_get_interpretation(const CVImage *image);
/// `vips_image_get_typeof`: non-zero when the header field exists.
unsigned long cv_image_get_typeof(const CVImage *image, const char *name);
int cv_image_get_int(const CVImage *image, const char *name, int *out);
int cv_image_get_string(const CVImage *image, const char *name, const char **out);
/// `vips_image_get_blob`: the field's bytes, owned by the image. 0 on success.
int cv_image_get_blob(const CVImage *image, const char *name, const void **data, size_t *length);

// ---- Operations: fixed-arity wrappers around libvips' variadic calls, which Swift cannot call ----

/// Opens an image from a source for its header only (sequential access): nothing is decoded yet.
CVImage *cv_header_from_source(CVSource *source, CVFailOn fail_on);
/// Opens a JPEG with shrink-on-load (`shrink` 1, 2, 4 or 8); other loaders reject the option.
CVImage *cv_jpeg_from_source_shrunk(CVSource *source, CVFailOn fail_on, int shrink);
/// `vips_thumbnail_source` fitting inside `width` × `height`, never enlarging, auto-rotating by
/// EXIF orientation. `option_string` goes to the loader (8.14 ignores `fail_on` given to
/// thumbnail_source directly). `export_profile` may be NULL: no colour management.
int cv_thumbnail_source(CVSource *source, CVImage **out, int width, int height, const char *option_string,
                        const char *export_profile);
/// To sRGB with the embedded profile, else libvips' built-in CMYK profile; 8 bits out.
int cv_icc_transform_cmyk_to_srgb(CVImage *in, CVImage **out);
/// From the embedded profile to sRGB (relative intent, 8 bits out), as `vips_thumbnail` with
/// `export_profile=srgb` does after resizing.
int cv_icc_transform_embedded_to_srgb(CVImage *in, CVImage **out);
int cv_autorot(CVImage *in, CVImage **out);
int cv_colourspace(CVImage *in, CVImage **out, CVInterpretation space);
int cv_cast(CVImage *in, CVImage **out, CVBandFormat format);
int cv_premultiply(CVImage *in, CVImage **out);
int cv_unpremultiply(CVImage *in, CVImage **out);
/// `vips_shrink` by a whole factor on both axes: each output pixel the mean of a factor × factor
/// block (the size rounded), computed as the image streams.
int cv_shrink(CVImage *in, CVImage **out, int factor);

/// `vips_resize` with independent horizontal and vertical scales (default kernel, lanczos3).
int cv_resize(CVImage *in, CVImage **out, double hscale, double vscale);
int cv_extract_area(CVImage *in, CVImage **out, int left, int top, int width, int height);
int cv_smartcrop(CVImage *in, CVImage **out, int width, int height, CVInteresting interesting);
/// Embeds `in` at (`x`, `y`) in a `width` × `height` canvas, repeating edge pixels outwards.
int cv_embed_copy(CVImage *in, CVImage **out, int x, int y, int width, int height);
/// PNG into a new buffer (free it with `cv_free`) at zlib `compression` 0…9.
int cv_pngsave_buffer(CVImage *in, void **buffer, size_t *length, int compression);
/// Pango markup in `font` at `dpi` as a one-band coverage mask the size of its ink.
int cv_text(CVImage **out, const char *markup, const char *font, int dpi);

#endif
