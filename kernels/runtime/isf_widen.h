/* binary16 / bfloat16 → fp32 while packing, shared by the portable packer (pack.c) and the vectorised packer
 * families (kernels/pack/): one conversion, so every packer of a layout writes the same bits. */
#ifndef ISAFORGE_WIDEN_H
#define ISAFORGE_WIDEN_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include "isf_half.h"
#include "isf_internal.h"

/* The packers' helpers inline into each caller, where their sizes are constants. */
#define ISF_INLINE static inline __attribute__((always_inline))

static inline uint16_t load_u16(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return h;
}

/* n binary16 or bfloat16 values at s → n fp32 values at d. */
ISF_INLINE void widen(isf_pack_kind kind, unsigned char *d, const unsigned char *s, size_t n) {
    size_t i = 0;
#if defined(__aarch64__)
    for (; i + 8 <= n; i += 8, d += 32, s += 16) {
        uint16x8_t x = vld1q_u16((const uint16_t *)(const void *)s);
        uint32x4x2_t y;
        if (kind == ISF_PACK_F16_TO_F32) { /* fcvtl obeys FPCR exactly as the scalar fcvt of isf_f16_to_f32 */
            float16x8_t h = vreinterpretq_f16_u16(x);
            y.val[0] = vreinterpretq_u32_f32(vcvt_f32_f16(vget_low_f16(h)));
            y.val[1] = vreinterpretq_u32_f32(vcvt_high_f32_f16(h));
        } else {
            y.val[0] = vshll_n_u16(vget_low_u16(x), 16);
            y.val[1] = vshll_high_n_u16(x, 16);
        }
        vst1q_u32_x2((uint32_t *)(void *)d, y);
    }
    if (i + 4 <= n) {
        uint16x4_t x = vld1_u16((const uint16_t *)(const void *)s);
        uint32x4_t y = kind == ISF_PACK_F16_TO_F32 ? vreinterpretq_u32_f32(vcvt_f32_f16(vreinterpret_f16_u16(x)))
                                                   : vshll_n_u16(x, 16);
        vst1q_u32((uint32_t *)(void *)d, y);
        i += 4, d += 16, s += 8;
    }
#elif defined(__ARM_NEON)
    /* AArch32 NEON conversions use the "standard FPSCR value" (flush to zero): binary16 stays scalar (VFP) here. */
    for (; kind == ISF_PACK_BF16_TO_F32 && i + 4 <= n; i += 4, d += 16, s += 8) {
        vst1q_u32((uint32_t *)(void *)d, vshll_n_u16(vld1_u16((const uint16_t *)(const void *)s), 16));
    }
#endif
    for (; i < n; i++, d += 4, s += 2) {
        uint16_t h = load_u16(s);
        uint32_t bits = kind == ISF_PACK_F16_TO_F32 ? isf_f32_to_bits(isf_f16_to_f32(h)) : (uint32_t)h << 16;
        memcpy(d, &bits, sizeof bits);
    }
}

#endif
