// Pass-throughs to the functions `cv_load` resolved (include/CVips.h documents them).
#include "table.h"

// gboolean's TRUE, passed as an option value below.
enum { TRUE_ = 1 };

void cv_cache_set_max(int max) { cv_vips.cache_set_max(max); }
int cv_concurrency_get(void) { return cv_vips.concurrency_get(); }
void cv_concurrency_set(int concurrency) { cv_vips.concurrency_set(concurrency); }
void cv_block_untrusted_set(int state) { cv_vips.block_untrusted_set(state); }
void cv_operation_block_set(const char *name, int state) { cv_vips.operation_block_set(name, state); }
const char *cv_version_string(void) { return cv_vips.version_string(); }
unsigned cv_log_set_handler(const char *domain, int levels, cv_log_func handler, void *user) {
    return cv_vips.log_set_handler(domain, levels, handler, user);
}
unsigned long cv_type_find(const char *basename, const char *nickname) { return cv_vips.type_find(basename, nickname); }
void cv_thread_shutdown(void) { cv_vips.thread_shutdown(); }
char *cv_error_buffer_copy(void) { return cv_vips.error_buffer_copy(); }
void cv_error_append(const char *text) { cv_vips.error(NULL, "%s", text); }
void cv_object_unref(void *object) { cv_vips.object_unref(object); }
void cv_free(void *memory) { cv_vips.free(memory); }

CVSource *cv_source_new_from_memory(const void *data, size_t size) { return cv_vips.source_new_from_memory(data, size); }
CVImage *cv_image_new_from_memory_copy(const void *data, size_t size, int width, int height, int bands, CVBandFormat format) {
    return cv_vips.image_new_from_memory_copy(data, size, width, height, bands, format);
}
void *cv_image_write_to_memory(CVImage *image, size_t *size) { return cv_vips.image_write_to_memory(image, size); }
CVImage *cv_image_copy_memory(CVImage *image) { return cv_vips.image_copy_memory(image); }
int cv_image_get_width(const CVImage *image) { return cv_vips.image_get_width(image); }
int cv_image_get_height(const CVImage *image) { return cv_vips.image_get_height(image); }
int cv_image_get_bands(const CVImage *image) { return cv_vips.image_get_bands(image); }
CVBandFormat cv_image_get_format(const CVImage *image) { return (CVBandFormat)cv_vips.image_get_format(image); }
CVInterpretation cv_image_get_interpretation(const CVImage *image) {
    return (CVInterpretation)cv_vips.image_get_interpretation(image);
}
unsigned long cv_image_get_typeof(const CVImage *image, const char *name) { return cv_vips.image_get_typeof(image, name); }
int cv_image_get_int(const CVImage *image, const char *name, int *out) { return cv_vips.image_get_int(image, name, out); }
int cv_image_get_blob(const CVImage *image, const char *name, const void **data, size_t *length) {
    return cv_vips.image_get_blob(image, name, data, length);
}
int cv_image_get_string(const CVImage *image, const char *name, const char **out) {
    return cv_vips.image_get_string(image, name, out);
}

CVImage *cv_header_from_source(CVSource *source, CVFailOn fail_on) {
    return cv_vips.image_new_from_source(source, "", "access", CV_ACCESS_SEQUENTIAL, "fail_on", (int)fail_on, NULL);
}

CVImage *cv_jpeg_from_source_shrunk(CVSource *source, CVFailOn fail_on, int shrink) {
    return cv_vips.image_new_from_source(source, "", "access", CV_ACCESS_SEQUENTIAL, "fail_on", (int)fail_on,
                                         "shrink", shrink, NULL);
}

int cv_thumbnail_source(CVSource *source, CVImage **out, int width, int height, const char *option_string,
                        const char *export_profile) {
    if (export_profile)
        return cv_vips.thumbnail_source(source, out, width, "height", height, "size", CV_SIZE_DOWN,
                                        "option_string", option_string, "export_profile", export_profile, NULL);
    return cv_vips.thumbnail_source(source, out, width, "height", height, "size", CV_SIZE_DOWN,
                                    "option_string", option_string, NULL);
}

int cv_icc_transform_cmyk_to_srgb(CVImage *in, CVImage **out) {
    return cv_vips.icc_transform(in, out, "srgb", "embedded", TRUE_, "input_profile", "cmyk", "depth", 8, NULL);
}

int cv_icc_transform_embedded_to_srgb(CVImage *in, CVImage **out) {
    return cv_vips.icc_transform(in, out, "srgb", "embedded", TRUE_, NULL);
}

int cv_autorot(CVImage *in, CVImage **out) { return cv_vips.autorot(in, out, NULL); }
int cv_colourspace(CVImage *in, CVImage **out, CVInterpretation space) { return cv_vips.colourspace(in, out, space, NULL); }
int cv_cast(CVImage *in, CVImage **out, CVBandFormat format) { return cv_vips.cast(in, out, format, NULL); }
int cv_premultiply(CVImage *in, CVImage **out) { return cv_vips.premultiply(in, out, NULL); }
int cv_unpremultiply(CVImage *in, CVImage **out) { return cv_vips.unpremultiply(in, out, NULL); }
int cv_shrink(CVImage *in, CVImage **out, int factor) {
    return cv_vips.shrink(in, out, (double)factor, (double)factor, NULL);
}

int cv_resize(CVImage *in, CVImage **out, double hscale, double vscale) {
    return cv_vips.resize(in, out, hscale, "vscale", vscale, NULL);
}
int cv_extract_area(CVImage *in, CVImage **out, int left, int top, int width, int height) {
    return cv_vips.extract_area(in, out, left, top, width, height, NULL);
}
int cv_smartcrop(CVImage *in, CVImage **out, int width, int height, CVInteresting interesting) {
    return cv_vips.smartcrop(in, out, width, height, "interesting", (int)interesting, NULL);
}
int cv_embed_copy(CVImage *in, CVImage **out, int x, int y, int width, int height) {
    return cv_vips.embed(in, out, x, y, width, height, "extend", CV_EXTEND_COPY, NULL);
}
int cv_pngsave_buffer(CVImage *in, void **buffer, size_t *length, int compression) {
    return cv_vips.pngsave_buffer(in, buffer, length, "compression", compression, NULL);
}
int cv_text(CVImage **out, const char *markup, const char *font, int dpi) {
    return cv_vips.text(out, markup, "font", font, "dpi", dpi, NULL);
}
