/* int8 -> int32 GEMM micro-kernel without dotprod: 4x4 tile, 16 k steps per block, smull/smull2 + sadalp. */
#include <arm_neon.h>

#include "isf_s8_4x4x16.h"

/*
 * Each int16 product is at most 16384 in magnitude, so smull/smull2 are exact; sadalp then widens pairs
 * straight into int32. Adding two products in int16 first (smlal) would overflow for -128 * -128 twice.
 */
#define MAC(r, j)                                                                   \
    c##r##j = vpadalq_s16(c##r##j, vmull_s8(vget_low_s8(a##r), vget_low_s8(b##j))); \
    c##r##j = vpadalq_s16(c##r##j, vmull_high_s8(a##r, b##j))
#define MAC_ROW(r) \
    MAC(r, 0);     \
    MAC(r, 1);     \
    MAC(r, 2);     \
    MAC(r, 3)
ISF_NO_PRE_RA_SCHED ISF_UKERNEL(gemm_s8_4x4x16_neon) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    /* c<r><j> holds four partial sums of C[r][j]: 16 accumulators + 4 A + 4 B + 2 products = 26 registers. */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16), a2 = vld1q_s8(pa + 32), a3 = vld1q_s8(pa + 48);
        int8x16_t b0 = vld1q_s8(pb), b1 = vld1q_s8(pb + 16), b2 = vld1q_s8(pb + 32), b3 = vld1q_s8(pb + 48);
        pa += 64;
        pb += 64;
        MAC_ROW(0);
        MAC_ROW(1);
        MAC_ROW(2);
        MAC_ROW(3);
    }

    ISF_4X4_FINISH();
}
