/* Packing A and B into the micro-kernel panel layout (isf_internal.h), widening binary16/bfloat16 to fp32 on the
 * way for kernels that run on fp32 panels. Compiled at the architecture baseline. */
#include <string.h>

#include "isf_half.h"
#include "isf_internal.h"

enum { PANEL_ALIGN = 64 };

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }
static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

size_t isf_panel_stride(const isf_pack_spec *s, size_t depth, size_t width) {
    return round_up((depth + s->kr - 1) / s->kr * width * s->kr * s->in, PANEL_ALIGN);
}

/* n elements, read every `sstride` source elements and written every `dstride` panel elements. */
static void move(const isf_pack_spec *s, unsigned char *dst, size_t dstride, const unsigned char *src,
                 size_t sstride, size_t n) {
    if (s->kind == ISF_PACK_COPY && dstride == 1 && sstride == 1) {
        memcpy(dst, src, n * s->in);
        return;
    }
    switch (s->kind) {
    case ISF_PACK_F16_TO_F32: {
        float *d = (float *)(void *)dst;
        const uint16_t *x = (const uint16_t *)(const void *)src;
        for (size_t i = 0; i < n; i++) {
            d[i * dstride] = isf_f16_to_f32(x[i * sstride]);
        }
        return;
    }
    case ISF_PACK_BF16_TO_F32: {
        uint32_t *d = (uint32_t *)(void *)dst;
        const uint16_t *x = (const uint16_t *)(const void *)src;
        for (size_t i = 0; i < n; i++) {
            d[i * dstride] = (uint32_t)x[i * sstride] << 16;
        }
        return;
    }
    case ISF_PACK_COPY:
        break;
    }
    if (s->in == 1) {
        for (size_t i = 0; i < n; i++) {
            dst[i * dstride] = src[i * sstride];
        }
    } else if (s->in == 2) {
        uint16_t *d = (uint16_t *)(void *)dst;
        const uint16_t *x = (const uint16_t *)(const void *)src;
        for (size_t i = 0; i < n; i++) {
            d[i * dstride] = x[i * sstride];
        }
    } else {
        uint32_t *d = (uint32_t *)(void *)dst;
        const uint32_t *x = (const uint32_t *)(const void *)src;
        for (size_t i = 0; i < n; i++) {
            d[i * dstride] = x[i * sstride];
        }
    }
}

/* A rows [0, rows) × k [0, depth) → [depth/KR][MR][KR] per MR-row panel, zero-padded. Element t of a KR group of
 * row r recurs every MR·KR panel elements: one strided move per (row, t). */
void isf_pack_a_panels(const isf_pack_spec *s, const void *a, size_t lda, size_t rows, size_t depth, void *dst) {
    size_t panel_bytes = isf_panel_stride(s, depth, s->mr);
    unsigned char *out = dst;
    for (size_t r0 = 0; r0 < rows; r0 += s->mr, out += panel_bytes) {
        memset(out, 0, panel_bytes);
        for (size_t r = 0; r < s->mr && r0 + r < rows; r++) {
            const unsigned char *row = (const unsigned char *)a + (r0 + r) * lda * s->src_bytes;
            for (size_t t = 0; t < s->kr && t < depth; t++) {
                size_t count = (depth - t + s->kr - 1) / s->kr;
                move(s, out + (r * s->kr + t) * s->in, s->mr * s->kr, row + t * s->src_bytes, s->kr, count);
            }
        }
    }
}

/* B k [0, depth) × columns [0, cols) → [depth/KR][NR][KR] per NR-column panel, zero-padded: each row of B lands
 * in one KR group of every column. */
void isf_pack_b_panels(const isf_pack_spec *s, const void *b, size_t ldb, size_t depth, size_t cols, void *dst) {
    size_t panel_bytes = isf_panel_stride(s, depth, s->nr);
    unsigned char *out = dst;
    for (size_t c0 = 0; c0 < cols; c0 += s->nr, out += panel_bytes) {
        memset(out, 0, panel_bytes);
        size_t width = min_size(s->nr, cols - c0);
        for (size_t kk = 0; kk < depth; kk++) {
            const unsigned char *src = (const unsigned char *)b + (kk * ldb + c0) * s->src_bytes;
            unsigned char *group = out + ((kk / s->kr) * s->nr * s->kr + kk % s->kr) * s->in;
            move(s, group, s->kr, src, 1, width);
        }
    }
}
