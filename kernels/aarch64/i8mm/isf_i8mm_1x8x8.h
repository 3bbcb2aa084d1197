/* What gemm_s8_1x8x8_i8mm and gemm_s4_1x8x8_i8mm share: the accumulators (e<j> for even blocks, o<j> for odd
 * ones, see gemm_s8_1x8x8_i8mm.c), their gathering into the row's 8 sums and the store with its epilogue; and the
 * 4x8x8 kernels' store (the same int32 row store, four times). Only the
 * hot loop differs (how B's bytes become smmla operands), so each kernel file keeps its own. */
#ifndef ISAFORGE_I8MM_1X8X8_H
#define ISAFORGE_I8MM_1X8X8_H

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

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(x) int32x4_t x##0 = vdupq_n_s32(0), x##1 = x##0, x##2 = x##0, x##3 = x##0
#define ACC_MMLA(x, av, g)                   \
    x##0 = vmmlaq_s32(x##0, av, (g).val[0]); \
    x##1 = vmmlaq_s32(x##1, av, (g).val[1]); \
    x##2 = vmmlaq_s32(x##2, av, (g).val[2]); \
    x##3 = vmmlaq_s32(x##3, av, (g).val[3])

/* Columns 4h..4h+3: the row-0 halves of e<2h>, e<2h+1> plus the row-1 halves of o<2h>, o<2h+1>. */
static inline int32x4_t gather(int32x4_t e0, int32x4_t e1, int32x4_t o0, int32x4_t o1) {
    int64x2_t rows0 = vuzp1q_s64(vreinterpretq_s64_s32(e0), vreinterpretq_s64_s32(e1));
    int64x2_t rows1 = vuzp2q_s64(vreinterpretq_s64_s32(o0), vreinterpretq_s64_s32(o1));
    return vaddq_s32(vreinterpretq_s32_s64(rows0), vreinterpretq_s32_s64(rows1));
}

/* One row's 8 int32 sums (columns 0-3 in lo, 4-7 in hi) into int32 C (not a quantized output), with the old C when
 * accumulate, then BIAS. */
static inline __attribute__((always_inline)) void isf_x8_store_s32(const isf_epilogue *ep, int32_t *out, int accumulate,
                                                                   int32x4_t lo, int32x4_t hi) {
    if (accumulate) {
        lo = vaddq_s32(lo, vld1q_s32(out));
        hi = vaddq_s32(hi, vld1q_s32(out + 4));
    }
    /* int32 output: BIAS only (wrapping, as vector adds do); the driver never asks for CLAMP. */
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const int32_t *bias = ep->bias;
        lo = vaddq_s32(lo, vld1q_s32(bias));
        hi = vaddq_s32(hi, vld1q_s32(bias + 4));
    }
    vst1q_s32(out, lo);
    vst1q_s32(out + 4, hi);
}

/* The row's true sums (columns 0-3 in lo, 4-7 in hi) through the epilogue into C. */
static inline __attribute__((always_inline)) void row_store(const isf_epilogue *ep, void *c, int accumulate,
                                                            int32x4_t lo, int32x4_t hi) {
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_row(ep, c, 2, lo, hi, lo, lo);
        return;
    }
    isf_x8_store_s32(ep, c, accumulate, lo, hi);
}

/* The 4x8x8 kernels' loads: 4 vectors from p as v.val[0..3], then p += 64: one ld1 {4 registers} with clang; GCC 12
 * spills such tuples in these loops, so it gets 4 vector loads (2 ldp). */
#if defined(__clang__)
#define LOAD4(p, v)                       \
    const int8x16x4_t v = vld1q_s8_x4(p); \
    NEXT(p, 64)
#else
#define LOAD4(p, v)                                                                                    \
    const int8x16x4_t v = {{vld1q_s8(p), vld1q_s8((p) + 16), vld1q_s8((p) + 32), vld1q_s8((p) + 48)}}; \
    NEXT(p, 64)
#endif

/* Sum of two accumulator sets (even and odd blocks of the 4x8x8 kernels). */
#define ACC_ADD(x, y)             \
    x##0 = vaddq_s32(x##0, y##0); \
    x##1 = vaddq_s32(x##1, y##1); \
    x##2 = vaddq_s32(x##2, y##2); \
    x##3 = vaddq_s32(x##3, y##3)

/*
 * The 4x8x8 kernels (gemm_s8_4x8x8_i8mm, gemm_s4_4x8x8_i8mm): smmla's 2x2 blocks c<p><j> (rows 2p, 2p+1 ×
 * columns 2j, 2j+1, laid out [r0c0 r0c1 r1c0 r1c1]) unzipped into rows (uzp1 / uzp2 of 64-bit lanes, as the 8x8x8
 * kernels' store does), then through the epilogue: the quantized outputs out of line, int32 C a row at a time.
 */
static inline int32x4_t isf_uzp1_s32x2(int32x4_t x, int32x4_t y) {
    return vreinterpretq_s32_s64(vuzp1q_s64(vreinterpretq_s64_s32(x), vreinterpretq_s64_s32(y)));
}
static inline int32x4_t isf_uzp2_s32x2(int32x4_t x, int32x4_t y) {
    return vreinterpretq_s32_s64(vuzp2q_s64(vreinterpretq_s64_s32(x), vreinterpretq_s64_s32(y)));
}
static __attribute__((noinline, unused)) void isf_4x8_quantized(const isf_epilogue *ep, void *c, size_t ldc,
                                                                const int32x4_t r[8]) {
    isf_qn_store_rows(ep, c, ldc, 4, 2, r);
}
/* The tile from the blocks c<p><j> in the kernel, each row's sums passed through `fix` (the int4 kernel's shift
 * back; an identity for int8). */
#define ISF_4X8_STORE(fix)                                                                      \
    do {                                                                                        \
        const int32x4_t r_[8] = {fix(isf_uzp1_s32x2(c00, c01)), fix(isf_uzp1_s32x2(c02, c03)),  \
                                 fix(isf_uzp2_s32x2(c00, c01)), fix(isf_uzp2_s32x2(c02, c03)),  \
                                 fix(isf_uzp1_s32x2(c10, c11)), fix(isf_uzp1_s32x2(c12, c13)),  \
                                 fix(isf_uzp2_s32x2(c10, c11)), fix(isf_uzp2_s32x2(c12, c13))}; \
        if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {                   \
            isf_4x8_quantized(ep, c, ldc, r_);                                                  \
            return;                                                                             \
        }                                                                                       \
        int32_t *out_ = c;                                                                      \
        isf_x8_store_s32(ep, out_, accumulate, r_[0], r_[1]);                                   \
        isf_x8_store_s32(ep, out_ + ldc, accumulate, r_[2], r_[3]);                             \
        isf_x8_store_s32(ep, out_ + 2 * ldc, accumulate, r_[4], r_[5]);                         \
        isf_x8_store_s32(ep, out_ + 3 * ldc, accumulate, r_[6], r_[7]);                         \
    } while (0)

#endif
