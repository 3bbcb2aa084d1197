/* What the 1x12x4 dotprod row kernels share (gemm_s8_1x12x4_dotprod, gemm_s4_1x12x4_dotprod): the accumulator
 * sets, the pointer step and the store of the 12 int32 sums. Each kernel keeps its own k loop, since that is where
 * int8 and int4 B differ. */
#ifndef ISAFORGE_S8_1X12X4_H
#define ISAFORGE_S8_1X12X4_H

#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Steps p past `n` bytes. The empty asm hides the pointer's history, so the compilers keep one pointer and
 * post-increment it (ld1 {4 registers}, [x], #64) rather than address each group from a base, which ld1's
 * addressing modes cannot do without an add per group. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. Set s holds
 * columns 0-3, 4-7, 8-11 in c<s>0, c<s>1, c<s>2. */
#define ACC_DECL(s) int32x4_t c##s##0 = vdupq_n_s32(0), c##s##1 = c##s##0, c##s##2 = c##s##0
#define ACC_DOT(s, x0, x1, x2, av, lane)              \
    c##s##0 = vdotq_laneq_s32(c##s##0, x0, av, lane); \
    c##s##1 = vdotq_laneq_s32(c##s##1, x1, av, lane); \
    c##s##2 = vdotq_laneq_s32(c##s##2, x2, av, lane)
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_s32(c##s##0, c##t##0); \
    c##s##1 = vaddq_s32(c##s##1, c##t##1); \
    c##s##2 = vaddq_s32(c##s##2, c##t##2)

/* The row's 12 int32 sums r0-r2 (columns 0-3, 4-7, 8-11) through the epilogue into C. */
static inline __attribute__((always_inline)) void isf_1x12_store(const isf_epilogue *ep, void *c, int accumulate,
                                                                 int32x4_t r0, int32x4_t r1, int32x4_t r2) {
    int32_t *out = c;
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_row(ep, c, 3, r0, r1, r2, r2);
        return;
    }
    if (accumulate) {
        r0 = vaddq_s32(r0, vld1q_s32(out));
        r1 = vaddq_s32(r1, vld1q_s32(out + 4));
        r2 = vaddq_s32(r2, vld1q_s32(out + 8));
    }
    /* int32 output: BIAS only (wrapping, as vector adds do); the driver never asks for CLAMP. */
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const int32_t *bias = ep->bias;
        r0 = vaddq_s32(r0, vld1q_s32(bias));
        r1 = vaddq_s32(r1, vld1q_s32(bias + 4));
        r2 = vaddq_s32(r2, vld1q_s32(bias + 8));
    }
    vst1q_s32(out, r0);
    vst1q_s32(out + 4, r1);
    vst1q_s32(out + 8, r2);
}

#endif
