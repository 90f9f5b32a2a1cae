// Little CMS 2 (lcms2), opened at run time, for the direct JPEG path's colour management: a JPEG
// with an embedded RGB profile (a phone's Display P3) is transformed to sRGB without libvips,
// which builds a new lcms transform for every image it converts (half the CPU of baking such
// photos). lcms2 is the library libvips itself manages colour with, so it is present wherever
// libvips is; nothing links it, and no header of it is needed to build.
#ifndef CCOLOUR_H
#define CCOLOUR_H

#include <stddef.h>

/// Opens lcms2 (the copy already in the process, if any) and resolves the calls below.
/// 0 on success; -1 with a message in `error`. Call once; not thread-safe.
int cc_load(char *error, size_t size);

/// A transform from the RGB profile in `data` to sRGB (lcms2's own sRGB profile), 8-bit RGB
/// in and out, relative colorimetric intent, as libvips transforms with `vips_icc_transform`.
/// NULL when lcms2 cannot read the profile, or it is not an RGB profile. Applying it is
/// thread-safe (made without lcms2's one-pixel cache). Free it with `cc_transform_free`.
void *cc_transform_to_srgb(const void *data, unsigned int length);

/// Transforms `pixels` RGB pixels from `in` into `out` (which may be `in`).
void cc_transform_apply(void *transform, const void *in, void *out, unsigned int pixels);

void cc_transform_free(void *transform);

#endif
