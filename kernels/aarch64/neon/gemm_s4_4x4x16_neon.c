/* int8 × int4 -> int32 GEMM micro-kernel without dotprod: 4x4 tile, 16 k steps per block, smull/smlal + sadalp.
 *
 * gemm_s8_4x4x16_neon on int4 B panels (isf_internal.h, "int4 B panels"): per pair of blocks the 4 packed
 * vectors (64 bytes, half the int8 kernel's) are unpacked once per pair to the exact int4 values, shl #4 then
 * sshr #4 for block 2t (low nibbles), sshr #4 for block 2t + 1, and used by all 4 rows. Exact values keep each
 * int16 product within |−128 · −8| = 1024, so unlike the int8 kernel (one product of up to 16384 per int16 lane,
 * then sadalp) four products share a lane (smull, smlal2, smlal, smlal2: ≤ 4096) before one sadalp: per pair and
 * (row, column) 5 instructions where the int8 kernel spends 8. The sums are the true ones, no shift.
 * Registers: 16 accumulators + 8 unpacked B + 2 A + the int16 temporaries.
 */
#include <arm_neon.h>

#include "isf_s8_4x4x16.h"

/* c<r><j> += the pair's 32 products of row r (a0: block 2t, a1: block 2t + 1) and column j (l<j>, h<j>). */
#define MAC4(r, j)                                                  \
    do {                                                            \
        int16x8_t t = vmull_s8(vget_low_s8(a0), vget_low_s8(l##j)); \
        t = vmlal_high_s8(t, a0, l##j);                             \
        t = vmlal_s8(t, vget_low_s8(a1), vget_low_s8(h##j));        \
        t = vmlal_high_s8(t, a1, h##j);                             \
        c##r##j = vpadalq_s16(c##r##j, t);                          \
    } while (0)
/* Row r: its 16 A values of each block (A's blocks are 64 bytes: 4 rows of 16). */
#define ROW(r)                                                                           \
    do {                                                                                 \
        const int8x16_t a0 = vld1q_s8(pa + 16 * (r)), a1 = vld1q_s8(pa + 64 + 16 * (r)); \
        MAC4(r, 0);                                                                      \
        MAC4(r, 1);                                                                      \
        MAC4(r, 2);                                                                      \
        MAC4(r, 3);                                                                      \
    } while (0)
#define UNPACK(j) const int8x16_t l##j = vshrq_n_s8(vshlq_n_s8(p##j, 4), 4), h##j = vshrq_n_s8(p##j, 4)

ISF_NO_PRE_RA_SCHED ISF_UKERNEL(gemm_s4_4x4x16_neon) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);

    for (size_t n = k_blocks / 2; n > 0; n--) {
        const int8x16_t p0 = vld1q_s8(pb), p1 = vld1q_s8(pb + 16), p2 = vld1q_s8(pb + 32), p3 = vld1q_s8(pb + 48);
        pb += 64;
        UNPACK(0);
        UNPACK(1);
        UNPACK(2);
        UNPACK(3);
        ROW(0);
        ROW(1);
        ROW(2);
        ROW(3);
        pa += 128;
    }
    ISF_4X4_FINISH();
}
