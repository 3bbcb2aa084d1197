/* bfloat16 → fp32 4×8 tile, KR = 1, for cores without FEAT_BF16: a bfloat16 is the top half of an fp32, so a
 * 16-bit left shift into 32-bit lanes (VSHLL.U16 #16) widens it exactly (Inf and NaN included); then fused VFMA.F32
 * as in gemm_f32_4x8_neon: per k step 4 A values × 8 B columns. */
#include <arm_neon.h>

#include "isf_internal.h"

static inline float32x4_t widen_bf16(uint16x4_t h) { return vreinterpretq_f32_u32(vshll_n_u16(h, 16)); }

static inline void store_row(float *c, float32x4_t lo, float32x4_t hi, int accumulate)
{
    if (accumulate) {
        lo = vaddq_f32(lo, vld1q_f32(c));
        hi = vaddq_f32(hi, vld1q_f32(c + 4));
    }
    vst1q_f32(c, lo);
    vst1q_f32(c + 4, hi);
}

ISF_UKERNEL(gemm_bf16_4x8_neon)
{
    const uint16_t *pa = __builtin_assume_aligned(a, 64);
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    float *pc = c;
    /* 8 accumulators + 2 widened B + widened A + 1-2 broadcast A = 12-13 of the 16 q registers; a 4×12 or 6×8
     * tile would need 12 accumulators + 5 more and spill. */
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00;
    float32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    for (; k_blocks != 0; k_blocks--) {
        // isf-hot-loop-begin
        const uint16x8_t bh = vld1q_u16(pb);
        const float32x4_t b0 = widen_bf16(vget_low_u16(bh));
        const float32x4_t b1 = widen_bf16(vget_high_u16(bh));
        /* A32 VFMA has no by-scalar form: widen the 4 A values once and VDUP each lane (cheaper than 4 VLD1 dup
         * + 4 shifts). */
        const float32x4_t a = widen_bf16(vld1_u16(pa));
        const float32x4_t a0 = vdupq_lane_f32(vget_low_f32(a), 0);
        const float32x4_t a1 = vdupq_lane_f32(vget_low_f32(a), 1);
        const float32x4_t a2 = vdupq_lane_f32(vget_high_f32(a), 0);
        const float32x4_t a3 = vdupq_lane_f32(vget_high_f32(a), 1);
        c00 = vfmaq_f32(c00, a0, b0);
        c01 = vfmaq_f32(c01, a0, b1);
        c10 = vfmaq_f32(c10, a1, b0);
        c11 = vfmaq_f32(c11, a1, b1);
        c20 = vfmaq_f32(c20, a2, b0);
        c21 = vfmaq_f32(c21, a2, b1);
        c30 = vfmaq_f32(c30, a3, b0);
        c31 = vfmaq_f32(c31, a3, b1);
        pa += 4;
        pb += 8;
        // isf-hot-loop-end
    }

    store_row(pc, c00, c01, accumulate);
    store_row(pc + ldc, c10, c11, accumulate);
    store_row(pc + 2 * ldc, c20, c21, accumulate);
    store_row(pc + 3 * ldc, c30, c31, accumulate);
}
