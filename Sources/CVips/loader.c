// Opening libvips at run time (see include/CVips.h for why).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // RTLD_DEFAULT, dladdr
#endif
#include "table.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

struct cv_table cv_vips;

// The ABI these declarations describe: VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE of libvips 8.x,
// the number in its soname.
enum { ABI = 42 };

static const char *const candidates[] = {
#if defined(__APPLE__)
    "libvips.42.dylib", "/opt/homebrew/lib/libvips.42.dylib", "/usr/local/lib/libvips.42.dylib",
#else
    "libvips.so.42",
#endif
};

static void *open_library(char *error, size_t size) {
    // Already in the process (linked by a test or an app, or opened before): use that copy,
    // never a second one. (RTLD_DEFAULT is NULL in glibc, so the handle is the program's own.)
    if (dlsym(RTLD_DEFAULT, "vips_init")) return dlopen(NULL, RTLD_LAZY);
    const char *chosen = getenv("IMAGETABLES_LIBVIPS");
    if (chosen && *chosen) {
        void *handle = dlopen(chosen, RTLD_LAZY | RTLD_GLOBAL);
        if (!handle) snprintf(error, size, "IMAGETABLES_LIBVIPS=%s: %s", chosen, dlerror());
        return handle;
    }
    // The first candidate's failure is the one worth reporting: the others are guesses.
    error[0] = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        void *handle = dlopen(candidates[i], RTLD_LAZY | RTLD_GLOBAL);
        if (handle) return handle;
        if (!error[0]) snprintf(error, size, "%s", dlerror());
    }
    return NULL;
}

int cv_load(char *error, size_t size) {
    void *library = open_library(error, size);
    if (!library) return -1;
    // dlsym returns an object pointer; POSIX guarantees it converts to a function pointer.
#define RESOLVE(field, symbol)                                                          \
    if (!(*(void **)&cv_vips.field = dlsym(library, symbol))) {                         \
        snprintf(error, size, "this libvips has no %s: %s", symbol, dlerror());         \
        return -1;                                                                      \
    }
    RESOLVE(init, "vips_init")
    RESOLVE(version, "vips_version")
    RESOLVE(cache_set_max, "vips_cache_set_max")
    RESOLVE(concurrency_get, "vips_concurrency_get")
    RESOLVE(concurrency_set, "vips_concurrency_set")
    RESOLVE(block_untrusted_set, "vips_block_untrusted_set")
    RESOLVE(operation_block_set, "vips_operation_block_set")
    RESOLVE(version_string, "vips_version_string")
    RESOLVE(log_set_handler, "g_log_set_handler")
    RESOLVE(type_find, "vips_type_find")
    RESOLVE(thread_shutdown, "vips_thread_shutdown")
    RESOLVE(error_buffer_copy, "vips_error_buffer_copy")
    RESOLVE(error, "vips_error")
    RESOLVE(object_unref, "g_object_unref")
    RESOLVE(free, "g_free")
    RESOLVE(source_new_from_memory, "vips_source_new_from_memory")
    RESOLVE(image_new_from_memory_copy, "vips_image_new_from_memory_copy")
    RESOLVE(image_write_to_memory, "vips_image_write_to_memory")
    RESOLVE(image_copy_memory, "vips_image_copy_memory")
    RESOLVE(image_get_width, "vips_image_get_width")
    RESOLVE(image_get_height, "vips_image_get_height")
    RESOLVE(image_get_bands, "vips_image_get_bands")
    RESOLVE(image_get_format, "vips_image_get_format")
    RESOLVE(image_get_interpretation, "vips_image_get_interpretation")
    RESOLVE(image_get_typeof, "vips_image_get_typeof")
    RESOLVE(image_get_int, "vips_image_get_int")
    RESOLVE(image_get_string, "vips_image_get_string")
    RESOLVE(image_get_blob, "vips_image_get_blob")
    RESOLVE(image_new_from_source, "vips_image_new_from_source")
    RESOLVE(thumbnail_source, "vips_thumbnail_source")
    RESOLVE(icc_transform, "vips_icc_transform")
    RESOLVE(autorot, "vips_autorot")
    RESOLVE(colourspace, "vips_colourspace")
    RESOLVE(cast, "vips_cast")
    RESOLVE(premultiply, "vips_premultiply")
    RESOLVE(unpremultiply, "vips_unpremultiply")
    RESOLVE(resize, "vips_resize")
    RESOLVE(shrink, "vips_shrink")
    RESOLVE(extract_area, "vips_extract_area")
    RESOLVE(smartcrop, "vips_smartcrop")
    RESOLVE(embed, "vips_embed")
    RESOLVE(pngsave_buffer, "vips_pngsave_buffer")
    RESOLVE(text, "vips_text")
#undef RESOLVE
    return 0;
}

const char *cv_library_path(void) {
    Dl_info info;
    if (!cv_vips.init || !dladdr(*(void **)&cv_vips.init, &info)) return NULL;
    return info.dli_fname;
}

int cv_init(const char *argv0) {
    // VIPS_INIT's check: a library with another ABI would not match the signatures in table.h.
    int abi = cv_vips.version(3) - cv_vips.version(5);
    if (abi != ABI) return -2;
    return cv_vips.init(argv0);
}
