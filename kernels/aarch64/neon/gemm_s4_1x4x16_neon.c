/* int8 × int4 -> int32 GEMM row kernel (MR = 1) without dotprod: 1x4 tile, 16 k steps per block, smull/smlal +
 * sadalp.
 *
 * gemm_s8_1x4x16_neon on int4 B panels (isf_internal.h, "int4 B panels"), for decoding (m = 1): per pair of
 * blocks one packed 16-byte vector per column, half the int8 kernel's B bytes, unpacked on registers to the exact
 * int4 values: shl #4 then sshr #4 for block 2t (low nibbles), sshr #4 for block 2t + 1. Exact values keep each
 * int16 product within |−128 · −8| = 1024, so unlike the int8 kernel (one product of up to 16384 per int16 lane,
 * then sadalp) four products share a lane (smull, smlal2, smlal, smlal2: ≤ 4096) before one sadalp folds them into
 * int32; the sums are the true ones, no shift.
 *
 * Hot loop: one pair (32 k steps) per iteration: 2 A vectors, one ld1 of the 4 packed B vectors, 12 unpacking ops,
 * 16 multiplies, 4 sadalp, subs + b.ne: 38 instructions for 128 MACs (the int8 kernel: the same for 128, reading
 * twice the B bytes). Accumulators: one per column (4 sadalp chains), the multiplies of each column a fresh chain.
 */
#include <arm_neon.h>

#include "isf_s8_1x4x16.h"

/* Column j: lo and hi (the pair's two blocks, exact int4) against A's av0 (block 2t), av1 (block 2t + 1). */
#define MAC(j, av0, av1, lo, hi)                                   \
    do {                                                           \
        int16x8_t t = vmull_s8(vget_low_s8(av0), vget_low_s8(lo)); \
        t = vmlal_high_s8(t, av0, lo);                             \
        t = vmlal_s8(t, vget_low_s8(av1), vget_low_s8(hi));        \
        t = vmlal_high_s8(t, av1, hi);                             \
        c##j = vpadalq_s16(c##j, t);                               \
    } while (0)

#define COLUMN(j, av0, av1, p) MAC(j, av0, av1, vshrq_n_s8(vshlq_n_s8(p, 4), 4), vshrq_n_s8(p, 4))

ISF_NO_PRE_RA_SCHED ISF_UKERNEL(gemm_s4_1x4x16_neon) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    (void)ldc; /* one row */
    int32x4_t c0 = vdupq_n_s32(0), c1 = c0, c2 = c0, c3 = c0;

    for (size_t n = k_blocks / 2; n > 0; n--) {
        int8x16_t av0 = vld1q_s8(pa), av1 = vld1q_s8(pa + 16);
        int8x16x4_t g = vld1q_s8_x4(pb);
        NEXT(pa, 32);
        NEXT(pb, 64);
        COLUMN(0, av0, av1, g.val[0]);
        COLUMN(1, av0, av1, g.val[1]);
        COLUMN(2, av0, av1, g.val[2]);
        COLUMN(3, av0, av1, g.val[3]);
    }
    isf_1x4_store(ep, c, accumulate, c0, c1, c2, c3);
}
