/* int8 -> int32 GEMM row kernel (MR = 1, FEAT_DotProd): 1x12 tile, sdot by element, 4 k steps per block.
 *
 * The small-M path: the rows gemm_s8_8x12x4_dotprod would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (per block 48 bytes: column j's 4 k values in 32-bit lane j % 4 of
 * vector j / 4), so each B byte is loaded once and used once. A is the row itself, 4 bytes per block (the
 * caller's row when k is a multiple of 4: never read past it).
 *
 * Hot loop: 8 blocks per iteration: one ldp of A (16 bytes = 4 blocks per register; `sdot vD.4s, vB.16b,
 * vA.4b[i]` broadcasts block i's 4 values), 6 ld1 of 4 B vectors, 24 sdot, subs + b.ne: 33 instructions for 384
 * MACs with clang (0.086 per MAC; GCC 12 adds an add for A: 34; the 8x12x4 kernel's loop is 0.07). With one row every sdot needs its own B vector, so B
 * loads set the bound; ld1 {4 registers} keeps them at a quarter of the sdot. Accumulators: block s (mod 4) goes
 * to set c<s><0..2>, 12 independent chains, each hit twice per iteration (sdot latency 2-3 × 2-4 pipes); the four
 * partial sums of each column are added after the loop (exact: int32 wraps alike in any order). Registers: 12
 * accumulators + 2 A + 3 groups of 4 B = 26 of 32.
 */
#include <arm_neon.h>
#include <string.h>

#include "isf_s8_1x12x4.h"

/* Four blocks (12 B vectors in three groups of 4) against the four 4-byte groups of `av`: block s into set s. */
#define FOUR_BLOCKS(av)                                     \
    do {                                                    \
        int8x16x4_t g0 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        ACC_DOT(0, g0.val[0], g0.val[1], g0.val[2], av, 0); \
        int8x16x4_t g1 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        ACC_DOT(1, g0.val[3], g1.val[0], g1.val[1], av, 1); \
        int8x16x4_t g2 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        ACC_DOT(2, g1.val[2], g1.val[3], g2.val[0], av, 2); \
        ACC_DOT(3, g2.val[1], g2.val[2], g2.val[3], av, 3); \
    } while (0)

ISF_UKERNEL(gemm_s8_1x12x4_dotprod) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    (void)ldc; /* one row */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        NEXT(pa, 32);
        FOUR_BLOCKS(a0);
        FOUR_BLOCKS(a1);
    }
    /* Up to 7 blocks left (a Kc block of 816 leaves 4): 4 as in the loop, the rest one at a time, their 4 A values
     * broadcast (ld1r). */
    if (k_blocks & 4) {
        int8x16_t a0 = vld1q_s8(pa);
        pa += 16;
        FOUR_BLOCKS(a0);
    }
    for (size_t kb = k_blocks % 4; kb > 0; kb--) {
        int32_t group;
        memcpy(&group, pa, sizeof group);
        int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(group));
        pa += 4;
        c00 = vdotq_s32(c00, vld1q_s8(pb), av);
        c01 = vdotq_s32(c01, vld1q_s8(pb + 16), av);
        c02 = vdotq_s32(c02, vld1q_s8(pb + 32), av);
        pb += 48;
    }

    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);
    isf_1x12_store(ep, c, accumulate, c00, c01, c02);
}
