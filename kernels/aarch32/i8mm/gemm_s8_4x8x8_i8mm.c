/* int8 → int32 4×8 tile, KR = 8: VSMMLA. An A register is 2 rows × 8 k, a B register 2 columns × 8 k, and each
 * accumulator the 2×2 block [c(r,c) c(r,c+1) c(r+1,c) c(r+1,c+1)]; rows are put back together at the store. */
#include <arm_neon.h>

#include "isf_internal.h"

/* Row pair (r, r+1), columns 4j..4j+3: the low halves of blocks (j, j+1) are row r, the high halves row r+1. */
static inline void store_rows(int32_t *c, size_t ldc, int32x4_t m0, int32x4_t m1, int32x4_t m2, int32x4_t m3,
                              int accumulate)
{
    int32x4_t r0lo = vcombine_s32(vget_low_s32(m0), vget_low_s32(m1));
    int32x4_t r0hi = vcombine_s32(vget_low_s32(m2), vget_low_s32(m3));
    int32x4_t r1lo = vcombine_s32(vget_high_s32(m0), vget_high_s32(m1));
    int32x4_t r1hi = vcombine_s32(vget_high_s32(m2), vget_high_s32(m3));
    if (accumulate) {
        r0lo = vaddq_s32(r0lo, vld1q_s32(c));
        r0hi = vaddq_s32(r0hi, vld1q_s32(c + 4));
        r1lo = vaddq_s32(r1lo, vld1q_s32(c + ldc));
        r1hi = vaddq_s32(r1hi, vld1q_s32(c + ldc + 4));
    }
    vst1q_s32(c, r0lo);
    vst1q_s32(c + 4, r0hi);
    vst1q_s32(c + ldc, r1lo);
    vst1q_s32(c + ldc + 4, r1hi);
}

ISF_UKERNEL(gemm_s8_4x8x8_i8mm)
{
    const int8_t *pa = __builtin_assume_aligned(a, 64);
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    int32_t *pc = c;
    /* 8 accumulators + 2 A + 4 B = 14 of the 16 q registers. */
    int32x4_t m00 = vdupq_n_s32(0), m01 = m00, m02 = m00, m03 = m00;
    int32x4_t m10 = m00, m11 = m00, m12 = m00, m13 = m00;

    for (; k_blocks != 0; k_blocks--) {
        // isf-hot-loop-begin
        const int8x16_t a01 = vld1q_s8(pa);
        const int8x16_t a23 = vld1q_s8(pa + 16);
        const int8x16_t b01 = vld1q_s8(pb);
        const int8x16_t b23 = vld1q_s8(pb + 16);
        const int8x16_t b45 = vld1q_s8(pb + 32);
        const int8x16_t b67 = vld1q_s8(pb + 48);
        m00 = vmmlaq_s32(m00, a01, b01);
        m01 = vmmlaq_s32(m01, a01, b23);
        m02 = vmmlaq_s32(m02, a01, b45);
        m03 = vmmlaq_s32(m03, a01, b67);
        m10 = vmmlaq_s32(m10, a23, b01);
        m11 = vmmlaq_s32(m11, a23, b23);
        m12 = vmmlaq_s32(m12, a23, b45);
        m13 = vmmlaq_s32(m13, a23, b67);
        pa += 32;
        pb += 64;
        // isf-hot-loop-end
    }

    store_rows(pc, ldc, m00, m01, m02, m03, accumulate);
    store_rows(pc + 2 * ldc, ldc, m10, m11, m12, m13, accumulate);
}
