// libjpeg(-turbo) for the direct JPEG path of `ImagePipeline` (`docs/PIPELINE.md`, "The direct
// JPEG path"): the same library libvips decodes JPEGs with, called without libvips' object
// machinery, which costs more than the decode itself for small images.
//
// libjpeg reports errors by calling `error_exit`, which must not return; here it `longjmp`s back
// into the shim function that called libjpeg, so no Swift frame is ever jumped over. Warnings
// ("Corrupt JPEG data…", "Premature end of JPEG file") are counted, the first one's text kept,
// and decoding goes on, as libjpeg intends; Swift decides what they mean (`failOn`).
#ifndef CJPEG_SHIM_H
#define CJPEG_SHIM_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

/// The most scans a JPEG may have: a progressive JPEG has about ten, and libjpeg goes over every
/// block of the image for each, so 20,000 empty scans in a 321 KB file cost a minute of CPU
/// (libjpeg-turbo's own tools offer the same limit, `-maxscans`).
#define CJPEG_MAX_SCANS 1000

/// One decode: libjpeg's state, the jump target of its errors and what it reported.
typedef struct cjpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr err;
    struct jpeg_progress_mgr progress;
    /// Set when the file has more than `CJPEG_MAX_SCANS` scans, with `error` saying so.
    int too_many_scans;
    jmp_buf jump;
    int created;
    /// Warnings so far; `premature_end` when one said the data ended before the image did:
    /// "Premature end of JPEG file" (the bytes ran out) or "Corrupt JPEG data: premature end of
    /// data segment" (a marker, such as the end of the file, came before the scan's last block).
    int warnings;
    int premature_end;
    /// The error's text, the first warning's, and that of the warning that set `premature_end`
    /// (a later one than the first, where libjpeg first skipped bytes before a marker).
    char error[JMSG_LENGTH_MAX];
    char first_warning[JMSG_LENGTH_MAX];
    char premature_warning[JMSG_LENGTH_MAX];
} cjpeg_decoder;

static void cjpeg_error_exit(j_common_ptr cinfo) {
    cjpeg_decoder *d = (cjpeg_decoder *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, d->error);
    longjmp(d->jump, 1);
}

static void cjpeg_emit_message(j_common_ptr cinfo, int level) {
    cjpeg_decoder *d = (cjpeg_decoder *)cinfo->client_data;
    if (level >= 0) return;  // trace messages
    d->warnings++;
    if (!d->premature_end && (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER)) {
        d->premature_end = 1;
        (*cinfo->err->format_message)(cinfo, d->premature_warning);
    }
    if (d->warnings == 1) (*cinfo->err->format_message)(cinfo, d->first_warning);
}

static void cjpeg_progress(j_common_ptr cinfo) {
    cjpeg_decoder *d = (cjpeg_decoder *)cinfo->client_data;
    if (((j_decompress_ptr)cinfo)->input_scan_number <= CJPEG_MAX_SCANS) return;
    d->too_many_scans = 1;
    snprintf(d->error, sizeof d->error, "more than %d scans", CJPEG_MAX_SCANS);
    longjmp(d->jump, 1);
}

/// A new decoder, or NULL when out of memory. Free it with `cjpeg_free`.
static inline cjpeg_decoder *cjpeg_new(void) {
    cjpeg_decoder *d = (cjpeg_decoder *)calloc(1, sizeof(cjpeg_decoder));
    if (!d) return NULL;
    d->cinfo.err = jpeg_std_error(&d->err);
    d->err.error_exit = cjpeg_error_exit;
    d->err.emit_message = cjpeg_emit_message;
    d->progress.progress_monitor = cjpeg_progress;
    d->cinfo.client_data = d;
    return d;
}

static inline void cjpeg_free(cjpeg_decoder *d) {
    if (!d) return;
    if (d->created) jpeg_destroy_decompress(&d->cinfo);
    free(d);
}

/// Reads the header of the JPEG in `data` (which must outlive the decoder), keeping the APP1
/// (EXIF) and APP2 (ICC profile) markers. 0 on success, -1 with `error` set.
static inline int cjpeg_read_header(cjpeg_decoder *d, const unsigned char *data, unsigned long size) {
    if (setjmp(d->jump)) return -1;
    jpeg_create_decompress(&d->cinfo);
    d->created = 1;
    d->cinfo.progress = &d->progress;
    jpeg_mem_src(&d->cinfo, data, size);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 2, 0xFFFF);
    jpeg_read_header(&d->cinfo, TRUE);
    return 0;
}

/// The 8×8 blocks the header's components cover, padding to whole MCUs left out (libjpeg sets
/// each component's `width_in_blocks` and `height_in_blocks` when it reaches the first scan).
static inline unsigned long long cjpeg_blocks(const cjpeg_decoder *d) {
    unsigned long long blocks = 0;
    for (int c = 0; c < d->cinfo.num_components; c++) {
        blocks += (unsigned long long)d->cinfo.comp_info[c].width_in_blocks * d->cinfo.comp_info[c].height_in_blocks;
    }
    return blocks;
}

/// Whether the JPEG is arithmetic-coded (SOF9–SOF15), not Huffman-coded.
static inline int cjpeg_arithmetic(const cjpeg_decoder *d) { return d->cinfo.arith_code ? 1 : 0; }

static inline int cjpeg_width(const cjpeg_decoder *d) { return (int)d->cinfo.image_width; }
static inline int cjpeg_height(const cjpeg_decoder *d) { return (int)d->cinfo.image_height; }
static inline int cjpeg_components(const cjpeg_decoder *d) { return d->cinfo.num_components; }
/// 1 for greyscale, 3 for YCbCr or RGB, 0 for anything else (CMYK, YCCK…).
static inline int cjpeg_plain_colour(const cjpeg_decoder *d) {
    J_COLOR_SPACE space = d->cinfo.jpeg_color_space;
    if (space == JCS_GRAYSCALE && d->cinfo.num_components == 1) return 1;
    if ((space == JCS_YCbCr || space == JCS_RGB) && d->cinfo.num_components == 3) return 3;
    return 0;
}

/// The first APP1 marker's payload that starts "Exif\0\0", as libvips takes it; NULL if none.
static inline const unsigned char *cjpeg_exif(const cjpeg_decoder *d, unsigned int *length) {
    for (jpeg_saved_marker_ptr m = d->cinfo.marker_list; m; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && memcmp(m->data, "Exif\0\0", 6) == 0) {
            *length = m->data_length;
            return m->data;
        }
    }
    return NULL;
}

/// Whether an APP2 marker carries (part of) an ICC profile.
static inline int cjpeg_has_icc(const cjpeg_decoder *d) {
    for (jpeg_saved_marker_ptr m = d->cinfo.marker_list; m; m = m->next) {
        if (m->marker == JPEG_APP0 + 2 && m->data_length >= 12 && memcmp(m->data, "ICC_PROFILE\0", 12) == 0) return 1;
    }
    return 0;
}

/// The embedded ICC profile, its APP2 chunks joined (libjpeg-turbo's `jpeg_read_icc_profile`);
/// NULL when there is none or its chunks do not add up. Free it with `cjpeg_free_icc`.
static inline unsigned char *cjpeg_icc_profile(cjpeg_decoder *d, unsigned int *length) {
    JOCTET *data = NULL;
    *length = 0;
    if (setjmp(d->jump)) return NULL;
    if (!jpeg_read_icc_profile(&d->cinfo, &data, length)) return NULL;
    return data;
}

static inline void cjpeg_free_icc(unsigned char *profile) { free(profile); }

/// Starts decompressing at 1/`denom` (1, 2, 4 or 8) into 8-bit RGB (greyscale replicated).
/// 0 on success, with `cjpeg_output_width`/`height` set; -1 with `error` set.
static inline int cjpeg_start(cjpeg_decoder *d, int denom) {
    if (setjmp(d->jump)) return -1;
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = (unsigned int)denom;
    d->cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&d->cinfo);
    return 0;
}

static inline int cjpeg_output_width(const cjpeg_decoder *d) { return (int)d->cinfo.output_width; }
static inline int cjpeg_output_height(const cjpeg_decoder *d) { return (int)d->cinfo.output_height; }

/// Reads every row into `pixels` (`stride` bytes apart, at least output_width × 3 each).
/// 0 on success, -1 with `error` set.
static inline int cjpeg_read_rows(cjpeg_decoder *d, unsigned char *pixels, size_t stride) {
    if (setjmp(d->jump)) return -1;
    JSAMPROW rows[16];
    while (d->cinfo.output_scanline < d->cinfo.output_height) {
        unsigned int n = d->cinfo.output_height - d->cinfo.output_scanline;
        if (n > 16) n = 16;
        for (unsigned int i = 0; i < n; i++) rows[i] = pixels + (size_t)(d->cinfo.output_scanline + i) * stride;
        if (jpeg_read_scanlines(&d->cinfo, rows, n) == 0) {
            strcpy(d->error, "libjpeg returned no rows");
            return -1;
        }
    }
    return 0;
}

/// Reads the rest of the file up to its end marker (`jpeg_finish_decompress`), where libjpeg says
/// what it skipped ("Corrupt JPEG data: 15 extraneous bytes before marker 0xd9"): damage in the
/// last scan that no row showed. 0 on success, -1 with `error` set.
static inline int cjpeg_finish(cjpeg_decoder *d) {
    if (setjmp(d->jump)) return -1;
    jpeg_finish_decompress(&d->cinfo);
    return 0;
}

/// Reads the whole file as libvips' decode did not: every scan at 1/8 (the entropy decoding in
/// full, the IDCT at its cheapest) in the JPEG's own colour space (CMYK stays CMYK), one row at a
/// time, then on to the end marker. For the warnings it gives (`warnings`, `first_warning`);
/// the pixels are discarded. 0 on success, -1 with `error` set when libjpeg fails, -2 when it
/// could not be run to the end (no memory for a row), which says nothing of the file.
static inline int cjpeg_read_to_end(cjpeg_decoder *d) {
    // volatile: set after setjmp, and freed after a longjmp back to it.
    unsigned char *volatile row = NULL;
    if (setjmp(d->jump)) {
        free((void *)row);
        return -1;
    }
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = 8;
    jpeg_start_decompress(&d->cinfo);
    row = (unsigned char *)malloc((size_t)d->cinfo.output_width * (size_t)d->cinfo.output_components);
    if (!row) return -2;
    JSAMPROW rows[1] = {(JSAMPROW)row};
    while (d->cinfo.output_scanline < d->cinfo.output_height) {
        if (jpeg_read_scanlines(&d->cinfo, rows, 1) == 0) {
            free((void *)row);
            return -2;
        }
    }
    jpeg_finish_decompress(&d->cinfo);
    free((void *)row);
    return 0;
}

#endif
