/* int8 × int4 -> int32 GEMM row kernel (MR = 1, FEAT_DotProd): 1x8 tile, sdot by element, 4 k steps per block, on
 * gemm_s4_8x8x4_dotprod's int4 B panels: gemm_s8_1x8x4_dotprod's row (isf_s8_x8x4.h) with gemm_s4_1x12x4_dotprod's
 * unpacking (shl #4 for block 2t's low nibbles, and 0xF0 for block 2t + 1's high ones: 16× the true sums until one
 * sshr #4 after the loop).
 *
 * Per 4 pairs (8 blocks): one ldp of A (16 bytes = 4 blocks per register), 8 packed B vectors in two ld1 of 4,
 * 8 shl + 8 and, 16 sdot. Block s (mod 4) goes to set c<s><0..1>: 8 independent chains, added after the loop.
 */
#include <arm_neon.h>

#include "isf_s8_x8x4.h"

/* Pair t's 2 packed vectors against A's groups `lane` (block 2t) and lane + 1 (block 2t + 1): low nibbles into
 * set s, high nibbles into set t. */
#define PAIR(s, t, x0, x1, av, lane)                            \
    ACC_DOT(s, vshlq_n_s8(x0, 4), vshlq_n_s8(x1, 4), av, lane); \
    ACC_DOT(t, vandq_s8(x0, hi_mask), vandq_s8(x1, hi_mask), av, (lane) + 1)

/* Two pairs (4 packed vectors) against A's 4 groups in `av`: blocks 0-3 into sets 0-3. */
#define TWO_PAIRS(av)                          \
    do {                                       \
        const int8x16x4_t g = vld1q_s8_x4(pb); \
        pb += 64;                              \
        PAIR(0, 1, g.val[0], g.val[1], av, 0); \
        PAIR(2, 3, g.val[2], g.val[3], av, 2); \
    } while (0)

ISF_UKERNEL(gemm_s4_1x8x4_dotprod) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    (void)ldc; /* one row */
    const int8x16_t hi_mask = vdupq_n_s8((int8_t)0xF0);
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        const int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        pa += 32;
        TWO_PAIRS(a0);
        TWO_PAIRS(a1);
    }
    /* k_blocks is even, so 0, 2, 4 or 6 blocks are left: two pairs as in the loop, then one whose 8 A bytes are
     * read alone (the caller's row ends there when k is a multiple of 8). */
    if (k_blocks & 4) {
        const int8x16_t a0 = vld1q_s8(pa);
        pa += 16;
        TWO_PAIRS(a0);
    }
    if (k_blocks & 2) {
        const int8x16_t a0 = vcombine_s8(vld1_s8(pa), vdup_n_s8(0));
        PAIR(0, 1, vld1q_s8(pb), vld1q_s8(pb + 16), a0, 0);
    }

    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);
    c00 = vshrq_n_s32(c00, 4), c01 = vshrq_n_s32(c01, 4);
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {
        const int32x4_t r[2] = {c00, c01};
        isf_x8_quantized(ep, c, 0, 1, r);
        return;
    }
    isf_x8_store_s32(ep, c, accumulate, c00, c01);
}
