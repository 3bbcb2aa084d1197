/* What gemm_s8_1x8x8_i8mm and gemm_s4_1x8x8_i8mm share (AArch32): the folding of the even / odd block
 * accumulators into the row's 8 sums and the store with its epilogue (see gemm_s8_1x8x8_i8mm.c). Only the hot
 * loop differs (how B's bytes become VSMMLA operands), so each kernel file keeps its own. */
#ifndef ISAFORGE_I8MM_1X8X8_A32_H
#define ISAFORGE_I8MM_1X8X8_A32_H

#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Row 0 of the even accumulator plus row 1 of the odd one: columns 2j, 2j+1 for j = 0, 1 of pairs (e0, o0), (e1, o1). */
static inline int32x4_t fold(int32x4_t e0, int32x4_t o0, int32x4_t e1, int32x4_t o1) {
    return vaddq_s32(vcombine_s32(vget_low_s32(e0), vget_low_s32(e1)),
                     vcombine_s32(vget_high_s32(o0), vget_high_s32(o1)));
}

/* Quantized C (fp32 or int8), every step on the row's two vectors, on registers. Not inlined: with it in the
 * kernel, GCC 12 schedules the hot loop's loads differently. */
static __attribute__((noinline)) void quant_row(const isf_epilogue *ep, void *c, int32x4_t lo, int32x4_t hi) {
    isf_qn_store_row(ep, c, 2, lo, hi, lo, lo);
}

/* The row's true sums (columns 0-3 in lo, 4-7 in hi) through the epilogue into C. */
static inline __attribute__((always_inline)) void row_store(const isf_epilogue *ep, void *c, int accumulate,
                                                            int32x4_t lo, int32x4_t hi) {
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {
        quant_row(ep, c, lo, hi);
        return;
    }
    int32_t *pc = c;
    if (accumulate) {
        lo = vaddq_s32(lo, vld1q_s32(pc));
        hi = vaddq_s32(hi, vld1q_s32(pc + 4));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) { /* int32 wrapping; int32 output is never clamped */
        const int32_t *bias = ep->bias;
        lo = vaddq_s32(lo, vld1q_s32(bias));
        hi = vaddq_s32(hi, vld1q_s32(bias + 4));
    }
    vst1q_s32(pc, lo);
    vst1q_s32(pc + 4, hi);
}

#endif
