/* int8 × int4 -> int32 GEMM row kernel (MR = 1, FEAT_DotProd): 1x12 tile, sdot by element, 4 k steps per block.
 *
 * gemm_s8_1x12x4_dotprod on int4 B panels (isf_internal.h, "int4 B panels"): what LLM decoding runs (m = 1), where
 * the B bytes are the cost, so they are read packed, half the int8 kernel's per k step, and unpacked on registers:
 * one 16-byte vector holds 4 columns' 4 k values of blocks 2t (low nibbles) and 2t + 1 (high nibbles); shl #4 and
 * and 0xF0 give each block's values times 16 for sdot, so the sums are 16× the true ones until one sshr #4 (exact)
 * after the loop. No overflow on the way: |16 · Σ a·w| ≤ 16 · 128 · 8 · k, far below 2^31 for any Kc block.
 *
 * Hot loop: 8 blocks (4 pairs) per iteration: one ldp of A (16 bytes = 4 blocks per register; `sdot vD.4s,
 * vB.16b, vA.4b[i]` broadcasts block i's 4 values), 192 bytes of packed B (the int8 kernel reads 384), 12 shl +
 * 12 and, 24 sdot, subs + b.ne: 54 instructions for 384 MACs. The vector pipes bound it (llvm-mca: 24 cycles on
 * Neoverse N1, 12 on V1, against the int8 kernel's 13 and 8.7): per 16 B bytes 2 unpacking ops + 2 sdot, where
 * int8 needs 1 sdot, so the win is the halved B traffic, which is what decoding waits for. Accumulators as in the int8 kernel: block s (mod 4) goes to set
 * c<s><0..2>, 12 independent chains hit twice per iteration. Registers: 12 accumulators + 2 A + 12 packed B +
 * the 0xF0 mask + unpacked temporaries, within 32.
 */
#include <arm_neon.h>

#include "isf_s8_1x12x4.h"

/* Pair t's 3 packed vectors against A's groups `lane` (block 2t) and lane + 1 (block 2t + 1): low nibbles into
 * set s, high nibbles into set s + 1 (named by `t`). */
#define PAIR(s, t, x0, x1, x2, av, lane)                                           \
    ACC_DOT(s, vshlq_n_s8(x0, 4), vshlq_n_s8(x1, 4), vshlq_n_s8(x2, 4), av, lane); \
    ACC_DOT(t, vandq_s8(x0, hi_mask), vandq_s8(x1, hi_mask), vandq_s8(x2, hi_mask), av, (lane) + 1)

/* Two pairs (6 packed vectors) against A's 4 groups in `av`: blocks 0-3 into sets 0-3. */
#define TWO_PAIRS_LOAD6(av)                                 \
    do {                                                    \
        int8x16x4_t g0 = vld1q_s8_x4(pb);                   \
        int8x16x2_t g1 = vld1q_s8_x2(pb + 64);              \
        NEXT(pb, 96);                                       \
        PAIR(0, 1, g0.val[0], g0.val[1], g0.val[2], av, 0); \
        PAIR(2, 3, g0.val[3], g1.val[0], g1.val[1], av, 2); \
    } while (0)

/* Four pairs (12 packed vectors) against A's 8 groups in `a0`, `a1`. Clang hoists the unpacking of a whole
 * ld1 {4 registers} group and spills 15 vectors a loop when groups straddle pairs, so it loads pair by pair
 * (54 instructions, no spill); GCC loads pair by pair with 4 mov to shuffle the register tuples, so it takes the
 * 4-register groups (54 instructions too). */
#if defined(__clang__)
#define FOUR_PAIRS(a0, a1)                                  \
    do {                                                    \
        int8x16x3_t g0 = vld1q_s8_x3(pb);                   \
        NEXT(pb, 48);                                       \
        PAIR(0, 1, g0.val[0], g0.val[1], g0.val[2], a0, 0); \
        int8x16x3_t g1 = vld1q_s8_x3(pb);                   \
        NEXT(pb, 48);                                       \
        PAIR(2, 3, g1.val[0], g1.val[1], g1.val[2], a0, 2); \
        int8x16x3_t g2 = vld1q_s8_x3(pb);                   \
        NEXT(pb, 48);                                       \
        PAIR(0, 1, g2.val[0], g2.val[1], g2.val[2], a1, 0); \
        int8x16x3_t g3 = vld1q_s8_x3(pb);                   \
        NEXT(pb, 48);                                       \
        PAIR(2, 3, g3.val[0], g3.val[1], g3.val[2], a1, 2); \
    } while (0)
#else
#define FOUR_PAIRS(a0, a1)                                  \
    do {                                                    \
        int8x16x4_t g0 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        PAIR(0, 1, g0.val[0], g0.val[1], g0.val[2], a0, 0); \
        int8x16x4_t g1 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        PAIR(2, 3, g0.val[3], g1.val[0], g1.val[1], a0, 2); \
        int8x16x4_t g2 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        PAIR(0, 1, g1.val[2], g1.val[3], g2.val[0], a1, 0); \
        PAIR(2, 3, g2.val[1], g2.val[2], g2.val[3], a1, 2); \
    } while (0)
#endif

ISF_UKERNEL(gemm_s4_1x12x4_dotprod) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    (void)ldc; /* one row */
    const int8x16_t hi_mask = vdupq_n_s8((int8_t)0xF0);
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        NEXT(pa, 32);
        FOUR_PAIRS(a0, a1);
    }
    /* k_blocks is even, so 0, 2, 4 or 6 blocks are left: two pairs as in the loop, then one whose 8 A bytes are
     * read alone (the caller's row ends there when k is a multiple of 8). */
    if (k_blocks & 4) {
        int8x16_t a0 = vld1q_s8(pa);
        pa += 16;
        TWO_PAIRS_LOAD6(a0);
    }
    if (k_blocks & 2) {
        int8x16_t a0 = vcombine_s8(vld1_s8(pa), vdup_n_s8(0));
        int8x16x3_t g = vld1q_s8_x3(pb);
        PAIR(0, 1, g.val[0], g.val[1], g.val[2], a0, 0);
    }

    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);
    isf_1x12_store(ep, c, accumulate, vshrq_n_s32(c00, 4), vshrq_n_s32(c01, 4), vshrq_n_s32(c02, 4));
}
