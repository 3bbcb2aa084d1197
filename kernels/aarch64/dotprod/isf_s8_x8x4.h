/* What the AArch64 8-column dotprod tails share (gemm_s8_4x8x4_dotprod, gemm_s8_1x8x4_dotprod on
 * gemm_s8_8x8x4_dotprod's B panels, per block 32 bytes, column j's 4 k values in 32-bit lane j % 4 of vector j / 4;
 * gemm_s4_4x8x4_dotprod, gemm_s4_1x8x4_dotprod on gemm_s4_8x8x4_dotprod's int4 ones): the accumulator sets and the
 * store of a row's 8 int32 sums, int32 C a row at a time, the quantized outputs through isf_quant_neon.h's
 * isf_qn_store_rows, out of line. */
#ifndef ISAFORGE_S8_X8X4_H
#define ISAFORGE_S8_X8X4_H

#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Named registers rather than an array (an array indexed in a loop may be kept on the stack): set s holds columns
 * 0-3, 4-7 in c<s>0, c<s>1. */
#define ACC_DECL(s) int32x4_t c##s##0 = vdupq_n_s32(0), c##s##1 = c##s##0
#define ACC_DOT(s, x0, x1, av, lane)                  \
    c##s##0 = vdotq_laneq_s32(c##s##0, x0, av, lane); \
    c##s##1 = vdotq_laneq_s32(c##s##1, x1, av, lane)
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_s32(c##s##0, c##t##0); \
    c##s##1 = vaddq_s32(c##s##1, c##t##1)

/* One row's 8 int32 sums (columns 0-3, 4-7) into int32 C (not a quantized output), with the old C when
 * accumulate, then BIAS (wrapping, as vector adds do; the driver never asks int32 C for CLAMP). */
static inline __attribute__((always_inline)) void isf_x8_store_s32(const isf_epilogue *ep, int32_t *out, int accumulate,
                                                                   int32x4_t r0, int32x4_t r1) {
    if (accumulate) {
        r0 = vaddq_s32(r0, vld1q_s32(out));
        r1 = vaddq_s32(r1, vld1q_s32(out + 4));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const int32_t *bias = ep->bias;
        r0 = vaddq_s32(r0, vld1q_s32(bias));
        r1 = vaddq_s32(r1, vld1q_s32(bias + 4));
    }
    vst1q_s32(out, r0);
    vst1q_s32(out + 4, r1);
}

/* `rows` rows of 8 sums (r: row i's in r[2i], r[2i + 1]) through the quantized epilogue into C. */
static __attribute__((noinline, unused)) void isf_x8_quantized(const isf_epilogue *ep, void *c, size_t ldc, size_t rows,
                                                               const int32x4_t *r) {
    isf_qn_store_rows(ep, c, ldc, rows, 2, r);
}

/* The 4x8 tile of gemm_s8_4x8x4_dotprod and gemm_s4_4x8x4_dotprod (row r's true sums in c<r>0, c<r>1) through the
 * epilogue into C; returns from the kernel. */
#define ISF_4X8_STORE()                                                       \
    do {                                                                      \
        if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { \
            const int32x4_t r_[8] = {c00, c01, c10, c11, c20, c21, c30, c31}; \
            isf_x8_quantized(ep, c, ldc, 4, r_);                              \
            return;                                                           \
        }                                                                     \
        int32_t *out_ = c;                                                    \
        isf_x8_store_s32(ep, out_, accumulate, c00, c01);                     \
        isf_x8_store_s32(ep, out_ + ldc, accumulate, c10, c11);               \
        isf_x8_store_s32(ep, out_ + 2 * ldc, accumulate, c20, c21);           \
        isf_x8_store_s32(ep, out_ + 3 * ldc, accumulate, c30, c31);           \
    } while (0)

#endif
