/* bfloat16 → fp32 4×8 tile, KR = 4: VMMLA.BF16. An A register is 2 rows × 4 k, a B register 2 columns × 4 k, and
 * each fp32 accumulator the 2×2 block [c(r,c) c(r,c+1) c(r+1,c) c(r+1,c+1)]; rows are put back together at the
 * store, as in gemm_s8_4x8x8_i8mm. */
#include <arm_neon.h>

#include "isf_internal.h"

/* Row pair (r, r+1), columns 4j..4j+3: the low halves of blocks (j, j+1) are row r, the high halves row r+1. */
static inline void store_rows(float *c, size_t ldc, float32x4_t m0, float32x4_t m1, float32x4_t m2,
                              float32x4_t m3, int accumulate)
{
    float32x4_t r0lo = vcombine_f32(vget_low_f32(m0), vget_low_f32(m1));
    float32x4_t r0hi = vcombine_f32(vget_low_f32(m2), vget_low_f32(m3));
    float32x4_t r1lo = vcombine_f32(vget_high_f32(m0), vget_high_f32(m1));
    float32x4_t r1hi = vcombine_f32(vget_high_f32(m2), vget_high_f32(m3));
    if (accumulate) {
        r0lo = vaddq_f32(r0lo, vld1q_f32(c));
        r0hi = vaddq_f32(r0hi, vld1q_f32(c + 4));
        r1lo = vaddq_f32(r1lo, vld1q_f32(c + ldc));
        r1hi = vaddq_f32(r1hi, vld1q_f32(c + ldc + 4));
    }
    vst1q_f32(c, r0lo);
    vst1q_f32(c + 4, r0hi);
    vst1q_f32(c + ldc, r1lo);
    vst1q_f32(c + ldc + 4, r1hi);
}

/* The panels are bfloat16 bits (uint16_t); load them as such and reinterpret, which costs nothing. */
static inline bfloat16x8_t load_bf16(const uint16_t *p) { return vreinterpretq_bf16_u16(vld1q_u16(p)); }

ISF_UKERNEL(gemm_bf16_4x8x4_bf16)
{
    const uint16_t *pa = __builtin_assume_aligned(a, 64);
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    float *pc = c;
    /* 8 accumulators + 2 A + 4 B = 14 of the 16 q registers; 6×8 would need 12 + 3 + 4. */
    float32x4_t m00 = vdupq_n_f32(0.0f), m01 = m00, m02 = m00, m03 = m00;
    float32x4_t m10 = m00, m11 = m00, m12 = m00, m13 = m00;

    for (; k_blocks != 0; k_blocks--) {
        // isf-hot-loop-begin
        const bfloat16x8_t a01 = load_bf16(pa);
        const bfloat16x8_t a23 = load_bf16(pa + 8);
        const bfloat16x8_t b01 = load_bf16(pb);
        const bfloat16x8_t b23 = load_bf16(pb + 8);
        const bfloat16x8_t b45 = load_bf16(pb + 16);
        const bfloat16x8_t b67 = load_bf16(pb + 24);
        m00 = vbfmmlaq_f32(m00, a01, b01);
        m01 = vbfmmlaq_f32(m01, a01, b23);
        m02 = vbfmmlaq_f32(m02, a01, b45);
        m03 = vbfmmlaq_f32(m03, a01, b67);
        m10 = vbfmmlaq_f32(m10, a23, b01);
        m11 = vbfmmlaq_f32(m11, a23, b23);
        m12 = vbfmmlaq_f32(m12, a23, b45);
        m13 = vbfmmlaq_f32(m13, a23, b67);
        pa += 16;
        pb += 32;
        // isf-hot-loop-end
    }

    store_rows(pc, ldc, m00, m01, m02, m03, accumulate);
    store_rows(pc + 2 * ldc, ldc, m10, m11, m12, m13, accumulate);
}
