/* binary16 4×8 tile, KR = 1, for cores without FEAT_FP16: VFPv4/NEON can only convert half ↔ single (VCVT.F32.F16,
 * VCVT.F16.F32), so A and B are widened to fp32, accumulated with fused VFMA.F32 and rounded to binary16 (nearest
 * even) once, at the store. Same register budget as gemm_f32_4x8_neon: per k step 4 A values × 8 B columns. */
#include <arm_neon.h>

#include "isf_internal.h"

/* The conversions need IEEE half storage: GCC gets -mfp16-format=ieee with the arm baseline (see isa.toml). */
static inline float32x4_t widen_f16(uint16x4_t h) { return vcvt_f32_f16(vreinterpret_f16_u16(h)); }
static inline uint16x4_t narrow_f16(float32x4_t x) { return vreinterpret_u16_f16(vcvt_f16_f32(x)); }

/* C is binary16: widen it, add in fp32, round to binary16 once. */
static inline void store_row(uint16_t *c, float32x4_t lo, float32x4_t hi, int accumulate)
{
    if (accumulate) {
        const uint16x8_t old = vld1q_u16(c);
        lo = vaddq_f32(lo, widen_f16(vget_low_u16(old)));
        hi = vaddq_f32(hi, widen_f16(vget_high_u16(old)));
    }
    vst1q_u16(c, vcombine_u16(narrow_f16(lo), narrow_f16(hi)));
}

ISF_UKERNEL(gemm_f16_4x8_neon)
{
    const uint16_t *pa = __builtin_assume_aligned(a, 64);
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    uint16_t *pc = c;
    /* 8 accumulators + 2 widened B + widened A + 1-2 broadcast A = 12-13 of the 16 q registers; a 4×12 or 6×8
     * tile would need 12 accumulators + 5 more and spill. */
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00;
    float32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    for (; k_blocks != 0; k_blocks--) {
        // isf-hot-loop-begin
        const uint16x8_t bh = vld1q_u16(pb);
        const float32x4_t b0 = widen_f16(vget_low_u16(bh));
        const float32x4_t b1 = widen_f16(vget_high_u16(bh));
        /* A32 VFMA has no by-scalar form: widen the 4 A values once and VDUP each lane (cheaper than 4 VLD1 dup
         * + 4 VCVT). */
        const float32x4_t a = widen_f16(vld1_u16(pa));
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
