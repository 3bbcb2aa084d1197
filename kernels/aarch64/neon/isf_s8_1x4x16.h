/* What the 1x4x16 NEON row kernels share (gemm_s8_1x4x16_neon, gemm_s4_1x4x16_neon): the pointer step and the
 * store of the 4 columns' partial sums. Each kernel keeps its k loop, where int8 and int4 B differ. */
#ifndef ISAFORGE_S8_1X4X16_H
#define ISAFORGE_S8_1X4X16_H

#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Steps p past `n` bytes. The empty asm hides the pointer's history, so the compilers post-increment it (ld1
 * {4 registers}, [x], #64) rather than address each block from a base, which costs an add per block. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* GCC's pre-allocation scheduler makes its allocator shuffle an accumulator out of a 4-register ld1 tuple and
 * back (2 mov per iteration, GCC 12 -O3); clang needs no help. */
#if defined(__GNUC__) && !defined(__clang__)
#define ISF_NO_PRE_RA_SCHED __attribute__((optimize("no-schedule-insns")))
#else
#define ISF_NO_PRE_RA_SCHED
#endif

/* s<j>: four partial int32 sums of column j (lane l a quarter each), through the epilogue into C. */
static inline __attribute__((always_inline)) void
isf_1x4_store(const isf_epilogue *ep, void *c, int accumulate, int32x4_t s0, int32x4_t s1, int32x4_t s2, int32x4_t s3) {
    int32_t *out = c;
    /* lane l of s<j> holds a quarter of column j's sum: two pairwise additions give [c0 c1 c2 c3]. */
    int32x4_t row = vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_row(ep, c, 1, row, row, row, row);
        return;
    }
    if (accumulate) {
        row = vaddq_s32(row, vld1q_s32(out));
    }
    /* int32 output: BIAS only (wrapping, as vector adds do); the driver never asks for CLAMP. */
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        row = vaddq_s32(row, vld1q_s32(ep->bias));
    }
    vst1q_s32(out, row);
}

#endif
