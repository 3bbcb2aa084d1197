/* What the bfloat16 kernels of 10 columns written in C share (gemm_bf16_1x10x4_bf16, gemm_bf16_4x10x4_bf16): a
 * row's store with its epilogue, the row's 10 fp32 sums in x0 (columns 0-3), x1 (4-7) and x2 (8-9). */
#ifndef ISAFORGE_BF16_X10_H
#define ISAFORGE_BF16_X10_H

#include <arm_neon.h>

#include "isf_internal.h"

/* Bias then clamp (FMAX then FMIN: NaN stays NaN, ±Inf go to the bounds) on the finished row: columns 0-3, 4-7
 * in x0, x1, columns 8-9 in x2. */
static inline void epilogue(const isf_epilogue *ep, float32x4_t *x0, float32x4_t *x1, float32x2_t *x2) {
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const float *bias = ep->bias;
        *x0 = vaddq_f32(*x0, vld1q_f32(bias));
        *x1 = vaddq_f32(*x1, vld1q_f32(bias + 4));
        *x2 = vadd_f32(*x2, vld1_f32(bias + 8));
    }
    if (ep->steps & ISF_EPILOGUE_CLAMP) {
        float32x4_t lo = vdupq_n_f32(ep->min), hi = vdupq_n_f32(ep->max);
        *x0 = vminq_f32(vmaxq_f32(*x0, lo), hi);
        *x1 = vminq_f32(vmaxq_f32(*x1, lo), hi);
        *x2 = vmin_f32(vmax_f32(*x2, vget_low_f32(lo)), vget_low_f32(hi));
    }
}

/* The row into C at out: the old C when accumulate, then the epilogue's steps. */
static inline __attribute__((always_inline)) void isf_x10_store_row(const isf_epilogue *ep, float *out, int accumulate,
                                                                    float32x4_t x0, float32x4_t x1, float32x2_t x2) {
    if (accumulate) {
        x0 = vaddq_f32(x0, vld1q_f32(out));
        x1 = vaddq_f32(x1, vld1q_f32(out + 4));
        x2 = vadd_f32(x2, vld1_f32(out + 8));
    }
    if (ep->steps != ISF_EPILOGUE_NONE) {
        epilogue(ep, &x0, &x1, &x2);
    }
    vst1q_f32(out, x0);
    vst1q_f32(out + 4, x1);
    vst1_f32(out + 8, x2);
}

#endif
