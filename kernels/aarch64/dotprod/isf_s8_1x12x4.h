/* What the 1x12x4 dotprod row kernels share (gemm_s8_1x12x4_dotprod, gemm_s4_1x12x4_dotprod): the accumulator
 * sets, the pointer step and the store of the 12 int32 sums (isf_x12_store_s32 also gemm_s8_4x12x4_dotprod's and
 * gemm_s4_4x12x4_dotprod's, a row at a time). Each kernel keeps its own k loop, since that is where
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

/* The 4x12x4 kernels' block: B's vectors x0-x2 against the 4 rows (lanes of `av`), into sets s0-s3. */
#define ACC_DOT_ROWS(s0, s1, s2, s3, x0, x1, x2, av) \
    do {                                             \
        ACC_DOT(s0, x0, x1, x2, av, 0);              \
        ACC_DOT(s1, x0, x1, x2, av, 1);              \
        ACC_DOT(s2, x0, x1, x2, av, 2);              \
        ACC_DOT(s3, x0, x1, x2, av, 3);              \
    } while (0)

/* One row's 12 int32 sums (columns 0-3, 4-7, 8-11) into int32 C (not a quantized output), with the old C when
 * accumulate, then BIAS. */
static inline __attribute__((always_inline)) void
isf_x12_store_s32(const isf_epilogue *ep, int32_t *out, int accumulate, int32x4_t r0, int32x4_t r1, int32x4_t r2) {
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

/* The row's 12 int32 sums r0-r2 (columns 0-3, 4-7, 8-11) through the epilogue into C. */
static inline __attribute__((always_inline)) void isf_1x12_store(const isf_epilogue *ep, void *c, int accumulate,
                                                                 int32x4_t r0, int32x4_t r1, int32x4_t r2) {
    int32_t *out = c;
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_row(ep, c, 3, r0, r1, r2, r2);
        return;
    }
    isf_x12_store_s32(ep, out, accumulate, r0, r1, r2);
}

/* The 4x12 tile of gemm_s8_4x12x4_dotprod and gemm_s4_4x12x4_dotprod (row r's true sums in c<r>0..c<r>2) through
 * the epilogue into C: the quantized outputs out of line (isf_4x12_quantized), int32 C a row at a time. */
static __attribute__((noinline, unused)) void isf_4x12_quantized(const isf_epilogue *ep, void *c, size_t ldc,
                                                                 const int32x4_t r[12]) {
    isf_qn_store_rows(ep, c, ldc, 4, 3, r);
}
#define ISF_4X12_STORE()                                                                           \
    do {                                                                                           \
        if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {                      \
            const int32x4_t r_[12] = {c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32}; \
            isf_4x12_quantized(ep, c, ldc, r_);                                                    \
            return;                                                                                \
        }                                                                                          \
        int32_t *out_ = c;                                                                         \
        isf_x12_store_s32(ep, out_, accumulate, c00, c01, c02);                                    \
        isf_x12_store_s32(ep, out_ + ldc, accumulate, c10, c11, c12);                              \
        isf_x12_store_s32(ep, out_ + 2 * ldc, accumulate, c20, c21, c22);                          \
        isf_x12_store_s32(ep, out_ + 3 * ldc, accumulate, c30, c31, c32);                          \
    } while (0)

#endif
