/* int8 -> int32 GEMM row kernel (MR = 1) without dotprod: 1x4 tile, 16 k steps per block, smull/smull2 + sadalp.
 *
 * The small-M path: the rows gemm_s8_4x4x16_neon would pad (m < 4, the last m % 4 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (per block, column j's 16 k values in one vector), so each B byte is
 * loaded once and used once. A is the row itself, 16 bytes per block (the caller's row when k is a multiple of 16:
 * never read past it).
 *
 * Hot loop: 2 blocks per iteration: per block one A vector, one ld1 of the 4 B vectors, 8 smull/smull2 and 8
 * sadalp; with subs + b.ne 38 instructions for 128 MACs (0.30 per MAC; the 4x4x16 kernel's loop is 0.27: with
 * one row, A's load is shared by 4 columns instead of 16). Each int16 product is at most 16384 in magnitude, so
 * smull is exact and sadalp widens pairs straight into int32 (smlal would overflow int16 for -128 * -128 twice).
 * Accumulators: the low and the high 8 products of each column go to their own (lo<j>, hi<j>), 8 independent
 * sadalp chains (sadalp: latency 4, one pipe on Cortex-A76 / Neoverse N1, so 8 cover it); they are folded and
 * pairwise reduced only after the loop. Registers: 8 accumulators + 2 A + 8 B + 4 products = 22 of 32.
 */
#include <arm_neon.h>

#include "isf_s8_1x4x16.h"

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define MAC(j, av, bv)                                                      \
    lo##j = vpadalq_s16(lo##j, vmull_s8(vget_low_s8(av), vget_low_s8(bv))); \
    hi##j = vpadalq_s16(hi##j, vmull_high_s8(av, bv))

/* One block: A's 16 values against the 4 columns' 16. */
#define BLOCK()                          \
    do {                                 \
        int8x16_t av = vld1q_s8(pa);     \
        int8x16x4_t g = vld1q_s8_x4(pb); \
        NEXT(pa, 16);                    \
        NEXT(pb, 64);                    \
        MAC(0, av, g.val[0]);            \
        MAC(1, av, g.val[1]);            \
        MAC(2, av, g.val[2]);            \
        MAC(3, av, g.val[3]);            \
    } while (0)

ISF_NO_PRE_RA_SCHED ISF_UKERNEL(gemm_s8_1x4x16_neon) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    (void)ldc; /* one row */
    int32x4_t lo0 = vdupq_n_s32(0), lo1 = lo0, lo2 = lo0, lo3 = lo0;
    int32x4_t hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;

    for (size_t n = k_blocks / 2; n > 0; n--) {
        BLOCK();
        BLOCK();
    }
    if (k_blocks % 2) {
        BLOCK();
    }

    isf_1x4_store(ep, c, accumulate, vaddq_s32(lo0, hi0), vaddq_s32(lo1, hi1), vaddq_s32(lo2, hi2),
                  vaddq_s32(lo3, hi3));
}
