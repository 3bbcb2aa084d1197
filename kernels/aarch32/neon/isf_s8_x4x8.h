/* What the 4-column, KR = 8 NEON kernels of int8 and int4 weights share (gemm_s8_2x4x8_neon, gemm_s8_1x4x8_neon,
 * gemm_s4_2x4x8_neon, gemm_s4_1x4x8_neon): everything after the k loop, from the accumulators to C (isf_internal.h,
 * "The epilogue"). The loops differ in how B gets into VMULL; the accumulators mean the same in both. */
#ifndef ISAFORGE_S8_X4X8_H
#define ISAFORGE_S8_X4X8_H

#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

#define ISF_X4X8_INLINE static inline __attribute__((always_inline))

/* 2×4 tile: each accumulator holds 4 partial sums of one C element: fold the halves, then pairwise-add neighbours. */
ISF_X4X8_INLINE int32x4_t isf_x4x8_reduce_row(int32x4_t x0, int32x4_t x1, int32x4_t x2, int32x4_t x3) {
    const int32x2_t s0 = vadd_s32(vget_low_s32(x0), vget_high_s32(x0));
    const int32x2_t s1 = vadd_s32(vget_low_s32(x1), vget_high_s32(x1));
    const int32x2_t s2 = vadd_s32(vget_low_s32(x2), vget_high_s32(x2));
    const int32x2_t s3 = vadd_s32(vget_low_s32(x3), vget_high_s32(x3));
    return vcombine_s32(vpadd_s32(s0, s1), vpadd_s32(s2, s3));
}

/* The old C, then the bias (the only step of int32 output; it wraps, as int32 addition does here). */
ISF_X4X8_INLINE void isf_x4x8_store_row(int32_t *c, int32x4_t v, int accumulate, int has_bias, int32x4_t bias) {
    if (accumulate)
        v = vaddq_s32(v, vld1q_s32(c));
    if (has_bias)
        v = vaddq_s32(v, bias);
    vst1q_s32(c, v);
}

/* `has_bias` a constant, so the store without it is the same code as before the epilogue existed. */
#define ISF_X4X8_TILE_STORE(has_bias, acc)                                        \
    do {                                                                          \
        const int32x4_t bias = (has_bias) ? vld1q_s32(ep->bias) : vdupq_n_s32(0); \
        isf_x4x8_store_row(pc, r0, acc, has_bias, bias);                          \
        isf_x4x8_store_row(pc + ldc, r1, acc, has_bias, bias);                    \
    } while (0)

/* The 2×4 tile's rows r0, r1 (the true int32 sums) to C with every step of the epilogue. */
ISF_X4X8_INLINE void isf_x4x8_store_2rows(const isf_epilogue *ep, void *c, size_t ldc, int accumulate, int32x4_t r0,
                                          int32x4_t r1) {
    int32_t *pc = c;
    /* CLAMP is never asked of int32 output: only BIAS is looked at, for a load and a branch per tile; without it,
     * the fall-through path, where the compilers unswitch `accumulate` themselves as they did before. With it, both
     * are constants, so that each combination is straight-line code (clang tests `accumulate` per row otherwise). */
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_4cols(ep, c, ldc, 2, r0, r1, r0, r0);
        return;
    }
    if (__builtin_expect(!(ep->steps & ISF_EPILOGUE_BIAS), 1)) {
        ISF_X4X8_TILE_STORE(0, accumulate);
    } else if (accumulate) {
        ISF_X4X8_TILE_STORE(1, 1);
    } else {
        ISF_X4X8_TILE_STORE(1, 0);
    }
}

/* The 1×4 row r (the true int32 sums) to C with every step of the epilogue. */
ISF_X4X8_INLINE void isf_x4x8_store_1row(const isf_epilogue *ep, void *c, int accumulate, int32x4_t r) {
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_row(ep, c, 1, r, r, r, r);
        return;
    }
    int32_t *pc = c;
    if (accumulate) {
        r = vaddq_s32(r, vld1q_s32(pc));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) { /* int32 wrapping; int32 output is never clamped */
        r = vaddq_s32(r, vld1q_s32(ep->bias));
    }
    vst1q_s32(pc, r);
}

#endif
