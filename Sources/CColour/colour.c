// Opening lcms2 at run time (see include/CColour.h for why).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // RTLD_DEFAULT
#endif
#include "CColour.h"
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

// lcms2's declarations that these calls need (lcms2.h, stable since 2.0): handles are pointers,
// numbers 32-bit.
typedef void *profile_t;
typedef void *transform_t;
enum {
    TYPE_RGB_8 = (4 << 16) | (3 << 3) | 1,  // COLORSPACE_SH(PT_RGB) | CHANNELS_SH(3) | BYTES_SH(1)
    INTENT_RELATIVE_COLORIMETRIC = 1,
    FLAGS_NOCACHE = 0x0040,                 // no one-pixel cache: transforms usable from any thread
    SIG_RGB_DATA = 0x52474220,              // 'RGB '
};

static struct {
    profile_t (*open_profile_from_mem)(const void *, uint32_t);
    profile_t (*create_srgb_profile)(void);
    uint32_t (*get_color_space)(profile_t);
    transform_t (*create_transform)(profile_t, uint32_t, profile_t, uint32_t, uint32_t, uint32_t);
    void (*do_transform)(transform_t, const void *, void *, uint32_t);
    int (*close_profile)(profile_t);
    void (*delete_transform)(transform_t);
} lcms;

static const char *const candidates[] = {
#if defined(__APPLE__)
    "liblcms2.2.dylib", "/opt/homebrew/lib/liblcms2.2.dylib", "/usr/local/lib/liblcms2.2.dylib",
#else
    "liblcms2.so.2",
#endif
};

int cc_load(char *error, size_t size) {
    void *library = NULL;
    // Already in the process (with libvips, or linked): use that copy, never a second one.
    if (dlsym(RTLD_DEFAULT, "cmsCreateTransform")) library = dlopen(NULL, RTLD_LAZY);
    error[0] = 0;
    for (size_t i = 0; !library && i < sizeof candidates / sizeof candidates[0]; i++) {
        library = dlopen(candidates[i], RTLD_LAZY | RTLD_LOCAL);
        if (!library && !error[0]) snprintf(error, size, "%s", dlerror());
    }
    if (!library) return -1;
#define RESOLVE(field, symbol)                                                  \
    if (!(*(void **)&lcms.field = dlsym(library, symbol))) {                    \
        snprintf(error, size, "this lcms2 has no %s", symbol);                  \
        return -1;                                                              \
    }
    RESOLVE(open_profile_from_mem, "cmsOpenProfileFromMem")
    RESOLVE(create_srgb_profile, "cmsCreate_sRGBProfile")
    RESOLVE(get_color_space, "cmsGetColorSpace")
    RESOLVE(create_transform, "cmsCreateTransform")
    RESOLVE(do_transform, "cmsDoTransform")
    RESOLVE(close_profile, "cmsCloseProfile")
    RESOLVE(delete_transform, "cmsDeleteTransform")
#undef RESOLVE
    return 0;
}

void *cc_transform_to_srgb(const void *data, unsigned int length) {
    profile_t input = lcms.open_profile_from_mem(data, length);
    if (!input) return NULL;
    transform_t transform = NULL;
    if (lcms.get_color_space(input) == SIG_RGB_DATA) {
        profile_t srgb = lcms.create_srgb_profile();
        if (srgb) {
            transform = lcms.create_transform(input, TYPE_RGB_8, srgb, TYPE_RGB_8, INTENT_RELATIVE_COLORIMETRIC, FLAGS_NOCACHE);
            lcms.close_profile(srgb);
        }
    }
    lcms.close_profile(input);
    return transform;
}

void cc_transform_apply(void *transform, const void *in, void *out, unsigned int pixels) {
    lcms.do_transform(transform, in, out, pixels);
}

void cc_transform_free(void *transform) {
    if (transform) lcms.delete_transform(transform);
}
