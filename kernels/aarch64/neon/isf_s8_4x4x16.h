/* What the 4x4x16 NEON kernels share (gemm_s8_4x4x16_neon, gemm_s4_4x4x16_neon): the 16 accumulators c<r><j>
 * (four partial int32 sums of C[r][j] each), their fold and the tile's store. Each kernel keeps its k loop, where
 * int8 and int4 B differ. */
#ifndef ISAFORGE_S8_4X4X16_H
#define ISAFORGE_S8_4X4X16_H

#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Folds the four partial sums of each (row, column) accumulator into one int32x4 row of C. */
static inline int32x4_t fold_row(int32x4_t s0, int32x4_t s1, int32x4_t s2, int32x4_t s3) {
    return vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));
}

/* The folded row plus the old C, then the bias (the only step of int32 output; it wraps, as int32 addition does
 * here). */
static inline __attribute__((always_inline)) void store_row(int32_t *c, int32x4_t s0, int32x4_t s1, int32x4_t s2,
                                                            int32x4_t s3, int accumulate, int has_bias,
                                                            int32x4_t bias) {
    int32x4_t row = fold_row(s0, s1, s2, s3);
    if (accumulate)
        row = vaddq_s32(row, vld1q_s32(c));
    if (has_bias)
        row = vaddq_s32(row, bias);
    vst1q_s32(c, row);
}

#define ACC_DECL(r) int32x4_t c##r##0 = vdupq_n_s32(0), c##r##1 = c##r##0, c##r##2 = c##r##0, c##r##3 = c##r##0
#define ACC_ROW(r) fold_row(c##r##0, c##r##1, c##r##2, c##r##3)
#define ACC_STORE(r, has_bias) \
    store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##2, c##r##3, accumulate, has_bias, bias)
/* `has_bias` a constant, so the store without it is the same code as before the epilogue existed. */
#define TILE_STORE(has_bias)                                                      \
    do {                                                                          \
        const int32x4_t bias = (has_bias) ? vld1q_s32(ep->bias) : vdupq_n_s32(0); \
        ACC_STORE(0, has_bias);                                                   \
        ACC_STORE(1, has_bias);                                                   \
        ACC_STORE(2, has_bias);                                                   \
        ACC_STORE(3, has_bias);                                                   \
    } while (0)

/* Quantized C (fp32 or int8) from the folded rows, on registers. Not inlined: with it in the kernel, GCC 12
 * allocates the accumulators differently and adds 2 mov to the hot loop. */
static __attribute__((noinline)) void quant_tile(const isf_epilogue *ep, void *c, size_t ldc, int32x4_t r0,
                                                 int32x4_t r1, int32x4_t r2, int32x4_t r3) {
    isf_qn_store_4cols(ep, c, ldc, 4, r0, r1, r2, r3);
}

/* GCC's pre-allocation scheduler hoists all 32 smull above the sadalps and then spills accumulators in the
 * k loop (seen with GCC 12 -O2); clang needs no help. */
#if defined(__GNUC__) && !defined(__clang__)
#define ISF_NO_PRE_RA_SCHED __attribute__((optimize("no-schedule-insns")))
#else
#define ISF_NO_PRE_RA_SCHED
#endif

/* The tile from the 16 accumulators through the epilogue into C (in the kernel: its variables by name). */
#define ISF_4X4_FINISH()                                                                             \
    do {                                                                                             \
        if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {                        \
            quant_tile(ep, c, ldc, ACC_ROW(0), ACC_ROW(1), ACC_ROW(2), ACC_ROW(3));                  \
            return;                                                                                  \
        }                                                                                            \
        /* CLAMP is never asked of int32 output: only BIAS is looked at, for a load and a branch. */ \
        if (ep->steps & ISF_EPILOGUE_BIAS) {                                                         \
            TILE_STORE(1);                                                                           \
        } else {                                                                                     \
            TILE_STORE(0);                                                                           \
        }                                                                                            \
    } while (0)

#endif
