/* int8 → int32 2×4 tile, KR = 8, without dot-product instructions: VMULL.S8 gives 8 exact int16 products
 * (|p| ≤ 16384), VPADAL.S16 adds them pairwise straight into int32 lanes. Two int8 products are never summed
 * in int16, since (−128)·(−128) twice overflows it. */
#include <arm_neon.h>

#include "isf_s8_x4x8.h"

ISF_UKERNEL(gemm_s8_2x4x8_neon) {
    const int8_t *pa = __builtin_assume_aligned(a, 64);
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00;
    int32x4_t c10 = c00, c11 = c00, c12 = c00, c13 = c00;

    for (; k_blocks != 0; k_blocks--) {
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
    }

    isf_x4x8_store_2rows(ep, c, ldc, accumulate, isf_x4x8_reduce_row(c00, c01, c02, c03),
                         isf_x4x8_reduce_row(c10, c11, c12, c13));
}
