/* int8 → int32 4×8 tile, KR = 4: VSDOT by scalar. Each 32-bit lane of a B vector is one column's 4 k values;
 * the scalar lane is one row's 4 k values, so one VSDOT updates 4 C elements of a row. */
#include <arm_neon.h>

#include "isf_internal.h"

static inline void store_row(int32_t *c, int32x4_t lo, int32x4_t hi, int accumulate)
{
    if (accumulate) {
        lo = vaddq_s32(lo, vld1q_s32(c));
        hi = vaddq_s32(hi, vld1q_s32(c + 4));
    }
    vst1q_s32(c, lo);
    vst1q_s32(c + 4, hi);
}

ISF_UKERNEL(gemm_s8_4x8x4_dotprod)
{
    const int8_t *pa = __builtin_assume_aligned(a, 64);
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    int32_t *pc = c;
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c10 = c00, c11 = c00;
    int32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    for (; k_blocks != 0; k_blocks--) {
        // isf-hot-loop-begin
        const int8x16_t b0 = vld1q_s8(pb); /* columns 0..3 */
        const int8x16_t b1 = vld1q_s8(pb + 16); /* columns 4..7 */
        /* The A32 by-element form indexes a D register; taking the high half of a Q load instead makes clang
         * emit a VDUP plus the vector form. */
        const int8x8_t a01 = vld1_s8(pa), a23 = vld1_s8(pa + 8);
        c00 = vdotq_lane_s32(c00, b0, a01, 0);
        c01 = vdotq_lane_s32(c01, b1, a01, 0);
        c10 = vdotq_lane_s32(c10, b0, a01, 1);
        c11 = vdotq_lane_s32(c11, b1, a01, 1);
        c20 = vdotq_lane_s32(c20, b0, a23, 0);
        c21 = vdotq_lane_s32(c21, b1, a23, 0);
        c30 = vdotq_lane_s32(c30, b0, a23, 1);
        c31 = vdotq_lane_s32(c31, b1, a23, 1);
        pa += 16;
        pb += 32;
        // isf-hot-loop-end
    }

    store_row(pc, c00, c01, accumulate);
    store_row(pc + ldc, c10, c11, accumulate);
    store_row(pc + 2 * ldc, c20, c21, accumulate);
    store_row(pc + 3 * ldc, c30, c31, accumulate);
}
