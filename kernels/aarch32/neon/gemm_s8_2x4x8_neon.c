/* int8 → int32 2×4 tile, KR = 8, without dot-product instructions: VMULL.S8 gives 8 exact int16 products
 * (|p| ≤ 16384), VPADAL.S16 adds them pairwise straight into int32 lanes. Two int8 products are never summed
 * in int16, since (−128)·(−128) twice overflows it. */
#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Each accumulator holds 4 partial sums of one C element: fold the halves, then pairwise-add neighbours. */
static inline int32x4_t reduce_row(int32x4_t x0, int32x4_t x1, int32x4_t x2, int32x4_t x3) {
    const int32x2_t s0 = vadd_s32(vget_low_s32(x0), vget_high_s32(x0));
    const int32x2_t s1 = vadd_s32(vget_low_s32(x1), vget_high_s32(x1));
    const int32x2_t s2 = vadd_s32(vget_low_s32(x2), vget_high_s32(x2));
    const int32x2_t s3 = vadd_s32(vget_low_s32(x3), vget_high_s32(x3));
    return vcombine_s32(vpadd_s32(s0, s1), vpadd_s32(s2, s3));
}

/* The old C, then the bias (the only step of int32 output; it wraps, as int32 addition does here). */
static inline __attribute__((always_inline)) void store_row(int32_t *c, int32x4_t v, int accumulate, int has_bias,
                                                            int32x4_t bias) {
    if (accumulate)
        v = vaddq_s32(v, vld1q_s32(c));
    if (has_bias)
        v = vaddq_s32(v, bias);
    vst1q_s32(c, v);
}

/* `has_bias` a constant, so the store without it is the same code as before the epilogue existed. */
#define TILE_STORE(has_bias, acc)                                                 \
    do {                                                                          \
        const int32x4_t bias = (has_bias) ? vld1q_s32(ep->bias) : vdupq_n_s32(0); \
        store_row(pc, reduce_row(c00, c01, c02, c03), acc, has_bias, bias);       \
        store_row(pc + ldc, reduce_row(c10, c11, c12, c13), acc, has_bias, bias); \
    } while (0)

ISF_UKERNEL(gemm_s8_2x4x8_neon) {
    const int8_t *pa = __builtin_assume_aligned(a, 64);
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    int32_t *pc = c;
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00;
    int32x4_t c10 = c00, c11 = c00, c12 = c00, c13 = c00;

    for (; k_blocks != 0; k_blocks--) {
        // isf-hot-loop-begin
        /* 8 accumulators + 8 products already fill the 16 q registers, so A and B are loaded as D registers
         * that the products can overwrite. The statement order is one with which neither GCC 12 nor clang 19
         * spills (q loads, or plain row/column order, make one of them spill inside the loop). */
        const int8x8_t a0 = vld1_s8(pa), a1 = vld1_s8(pa + 8);
        const int8x8_t b0 = vld1_s8(pb), b1 = vld1_s8(pb + 8);
        const int8x8_t b2 = vld1_s8(pb + 16), b3 = vld1_s8(pb + 24);
        c00 = vpadalq_s16(c00, vmull_s8(a0, b0));
        c11 = vpadalq_s16(c11, vmull_s8(a1, b1));
        c02 = vpadalq_s16(c02, vmull_s8(a0, b2));
        c13 = vpadalq_s16(c13, vmull_s8(a1, b3));
        c10 = vpadalq_s16(c10, vmull_s8(a1, b0));
        c01 = vpadalq_s16(c01, vmull_s8(a0, b1));
        c12 = vpadalq_s16(c12, vmull_s8(a1, b2));
        c03 = vpadalq_s16(c03, vmull_s8(a0, b3));
        pa += 16;
        pb += 32;
        // isf-hot-loop-end
    }

    /* CLAMP is never asked of int32 output: only BIAS is looked at, for a load and a branch per tile; without it,
     * the fall-through path, where the compilers unswitch `accumulate` themselves as they did before. With it, both
     * are constants, so that each combination is straight-line code (clang tests `accumulate` per row otherwise). */
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        const int32x4_t r0 = reduce_row(c00, c01, c02, c03), r1 = reduce_row(c10, c11, c12, c13);
        isf_qn_store_4cols(ep, c, ldc, 2, r0, r1, r0, r0);
        return;
    }
    if (__builtin_expect(!(ep->steps & ISF_EPILOGUE_BIAS), 1)) {
        TILE_STORE(0, accumulate);
    } else if (accumulate) {
        TILE_STORE(1, 1);
    } else {
        TILE_STORE(1, 0);
    }
}
