/* The portable packer: A and B into the micro-kernel panel layout (isf_internal.h), widening binary16/bfloat16 to
 * fp32 on the way for kernels that run on fp32 panels. Compiled at the architecture baseline. It packs every panel of
 * a layout whose registry packer is "generic" (the reference kernels, the host build) and, for the others, what the
 * layout's vectorised packer (kernels/pack/, instantiated per layout by codegen, reached through the spec) leaves:
 * edge rows, the last partial k block and the zero padding. It knows no tile size: every shape is the spec's. Only
 * the padding is zeroed. */
#include <stdint.h>
#include <string.h>

#include "isf_half.h"
#include "isf_internal.h"
#include "isf_size_arith.h"
#include "isf_widen.h"

size_t isf_kernel_blocks(const isf_pack_spec *s, size_t depth) {
    size_t blocks = blocks_of(depth, s->kr);
    return s->nibbles ? round_up(blocks, 2) : blocks;
}

size_t isf_panel_stride(const isf_pack_spec *s, size_t depth, size_t width) {
    return round_up(isf_kernel_blocks(s, depth) * width * s->kr * s->in, PANEL_ALIGN);
}

size_t isf_b_panel_stride(const isf_pack_spec *s, size_t depth) {
    return s->nibbles ? round_up(isf_kernel_blocks(s, depth) / 2 * s->nr * s->kr, PANEL_ALIGN)
                      : isf_panel_stride(s, depth, s->nr);
}

/* ---- bytes ------------------------------------------------------------------------------------------------- */

static inline void copy2(unsigned char *d, const unsigned char *s) { memcpy(d, s, 2); }
static inline void copy4(unsigned char *d, const unsigned char *s) { memcpy(d, s, 4); }

/* n consecutive source elements → n consecutive panel elements. */
static void convert(const isf_pack_spec *s, unsigned char *d, const unsigned char *src, size_t n) {
    if (s->kind == ISF_PACK_COPY) {
        isf_copy_group(d, src, n * s->in);
    } else {
        widen(s->kind, d, src, n);
    }
}

/* One element, any kind. */
static inline void put(const isf_pack_spec *s, unsigned char *d, const unsigned char *src) {
    if (s->kind != ISF_PACK_COPY) {
        widen(s->kind, d, src, 1);
    } else if (s->in == 1) {
        *d = *src;
    } else if (s->in == 2) {
        copy2(d, src);
    } else {
        copy4(d, src);
    }
}

/* ---- the portable way: any spec, edges, the last partial k block ------------------------------------------- */

/* Rows [0, h) of an MR-row panel for k [k0, depth), zero elsewhere: KR-element groups, one row after the other.
 * out is where k block k0 / KR of the panel starts. With padding (rows past h, or a last partial k block) the blocks
 * are zeroed first in one store, then the rows' values written over it: a tile of one row in MR = 16 (the SME
 * kernels' at SVL 512) was 15 memsets of one element a k step. */
static void a_generic(const isf_pack_spec *s, const unsigned char *a, size_t lda_b, size_t h, size_t k0, size_t depth,
                      unsigned char *out) {
    size_t kr = s->kr, gb = kr * s->in;
    if (k0 >= depth) {
        return;
    }
    if (h < s->mr || rem_size(depth - k0, kr) != 0) {
        memset(out, 0, blocks_of(depth - k0, kr) * s->mr * gb);
    }
    for (; k0 < depth; k0 += kr, out += s->mr * gb) {
        size_t kn = min_size(kr, depth - k0);
        for (size_t r = 0; r < h; r++) {
            convert(s, out + r * gb, a + r * lda_b + k0 * s->src_bytes, kn);
        }
    }
}

/* Columns [0, w) of an NR-column panel for k [k0, depth), zero elsewhere, one element at a time. */
static void b_generic(const isf_pack_spec *s, const unsigned char *b, size_t ldb_b, size_t w, size_t k0, size_t depth,
                      unsigned char *out) {
    size_t kr = s->kr, in = s->in, gb = kr * in;
    for (; k0 < depth; k0 += kr, out += s->nr * gb) {
        size_t kn = min_size(kr, depth - k0);
        memset(out, 0, s->nr * gb);
        for (size_t t = 0; t < kn; t++) {
            const unsigned char *row = b + (k0 + t) * ldb_b;
            for (size_t j = 0; j < w; j++) {
                put(s, out + (j * kr + t) * in, row + j * s->src_bytes);
            }
        }
    }
}

/* Nibble panels: columns [0, w) of an NR-column panel for k [0, depth) from int8 values in −8…7, each pair of k
 * blocks in the bytes of one (isf_internal.h: block 2t in the low nibbles, 2t + 1 in the high), zero elsewhere. */
static void b_nibbles(const isf_pack_spec *s, const unsigned char *b, size_t ldb_b, size_t w, size_t depth,
                      unsigned char *out) {
    size_t kr = s->kr, pair = s->nr * kr;
    for (size_t k0 = 0; k0 < depth; k0 += 2 * kr, out += pair) {
        memset(out, 0, pair);
        for (size_t t = 0; t < 2 * kr && k0 + t < depth; t++) {
            const unsigned char *row = b + (k0 + t) * ldb_b;
            unsigned shift = t < kr ? 0u : 4u;
            for (size_t j = 0; j < w; j++) {
                out[j * kr + t % kr] |= (unsigned char)((row[j] & 0xFu) << shift);
            }
        }
    }
}

/* ---- panels ------------------------------------------------------------------------------------------------ */

/* A rows [0, rows) × k [0, depth) → [depth/KR][MR][KR] per MR-row panel, zero-padded. */
void isf_pack_a_panels(const isf_pack_spec *s, const void *a, size_t lda, size_t rows, size_t depth, void *dst) {
    size_t lda_b = lda * s->src_bytes, gb = s->kr * s->in;
    size_t panel_bytes = isf_panel_stride(s, depth, s->mr);
    size_t blocks = div_size(depth, s->kr), used = blocks_of(depth, s->kr) * s->mr * gb;
    unsigned char *out = dst;
    for (size_t r0 = 0; r0 < rows; r0 += s->mr, out += panel_bytes) {
        const unsigned char *src = (const unsigned char *)a + r0 * lda_b;
        size_t h = min_size(s->mr, rows - r0);
        size_t done = 0;
        if (h == s->mr && s->fast_a != NULL) {
            s->fast_a(src, lda_b, blocks, s->mr, out);
            done = blocks;
        }
        a_generic(s, src, lda_b, h, done * s->kr, depth, out + done * s->mr * gb);
        memset(out + used, 0, panel_bytes - used);
    }
}

/* B k [0, depth) × columns [0, cols) → [depth/KR][NR][KR] per NR-column panel, zero-padded. */
void isf_pack_b_panels(const isf_pack_spec *s, const void *b, size_t ldb, size_t depth, size_t cols, void *dst) {
    size_t ldb_b = ldb * s->src_bytes, gb = s->kr * s->in;
    size_t panel_bytes = isf_b_panel_stride(s, depth);
    if (s->nibbles) {
        size_t used = isf_kernel_blocks(s, depth) / 2 * s->nr * s->kr;
        for (size_t c0 = 0; c0 < cols; c0 += s->nr, dst = (unsigned char *)dst + panel_bytes) {
            b_nibbles(s, (const unsigned char *)b + c0, ldb_b, min_size(s->nr, cols - c0), depth, dst);
            memset((unsigned char *)dst + used, 0, panel_bytes - used);
        }
        return;
    }
    size_t blocks = div_size(depth, s->kr), used = blocks_of(depth, s->kr) * s->nr * gb;
    const unsigned char *src = b;
    unsigned char *out = dst;
    for (size_t c0 = 0; c0 < cols; c0 += s->nr, src += s->nr * s->src_bytes, out += panel_bytes) {
        size_t w = min_size(s->nr, cols - c0);
        if (w < s->nr) { /* the padding columns: the whole panel in long stores, then the data over it */
            memset(out, 0, blocks * s->nr * gb);
        }
        size_t done = 0;
        if (s->fast_b != NULL) {
            s->fast_b(src, ldb_b, blocks, w, s->nr, out);
            done = blocks;
        }
        b_generic(s, src, ldb_b, w, done * s->kr, depth, out + done * s->nr * gb);
        memset(out + used, 0, panel_bytes - used);
    }
}
