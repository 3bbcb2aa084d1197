/* int8 → int32 1×8 row kernel, KR = 8, VSMMLA (FEAT_I8MM only: no VSDOT in this variant): one row of C from
 * gemm_s8_4x8x8_i8mm's B panels, for rows a 4-row tile would pad (small m, the last m % 4 rows).
 *
 * VSMMLA multiplies a 2×8 A by a 2×8 B (two columns × 8 k: one Q register of the panel) into a 2×2 block
 * [r0c0 r0c1 r1c0 r1c1]. With one row, half of each VSMMLA is spare; it is used for a second k block rather than
 * for zeros: one 16-byte load puts block 2i's A in row 0 and block 2i+1's in row 1, so block 2i's products with
 * its B land in lanes 0–1 (row 1's cross products in lanes 2–3 are never read) and block 2i+1's in lanes 2–3 of
 * another accumulator. Per 2 blocks (128 MACs): 1 A load + 8 B loads + 8 VSMMLA, no A shuffles; 8 accumulators
 * (column pair × block parity) are 8 independent chains. After the loop column pair j is the low half of its
 * even accumulator plus the high half of its odd one (exact in int32, the order does not matter).
 * Hot loop at -O3: GCC 12 27 instructions, clang 19 19 per 128 MACs (gemm_s8_4x8x8_i8mm: 6 per 128, as it
 * reuses each B register for 4 rows and wastes no half).
 * A is the caller's row (any byte alignment: VLD1.8), k_blocks × 8 bytes, never read past; an odd last block
 * goes in both rows. Registers: 8 accumulators + A 1 + B 4 per block in flight = 13 of the 16 q. */
#include "isf_i8mm_1x8x8.h"

ISF_UKERNEL(gemm_s8_1x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    const int32x4_t zero = vdupq_n_s32(0);
    /* e<j>/o<j>: columns 2j, 2j+1 of the even / odd blocks. */
    int32x4_t e0 = zero, e1 = zero, e2 = zero, e3 = zero, o0 = zero, o1 = zero, o2 = zero, o3 = zero;

    for (size_t n = k_blocks / 2; n != 0; n--) {
        const int8x16_t av = vld1q_s8(pa);
        e0 = vmmlaq_s32(e0, av, vld1q_s8(pb));
        e1 = vmmlaq_s32(e1, av, vld1q_s8(pb + 16));
        e2 = vmmlaq_s32(e2, av, vld1q_s8(pb + 32));
        e3 = vmmlaq_s32(e3, av, vld1q_s8(pb + 48));
        o0 = vmmlaq_s32(o0, av, vld1q_s8(pb + 64));
        o1 = vmmlaq_s32(o1, av, vld1q_s8(pb + 80));
        o2 = vmmlaq_s32(o2, av, vld1q_s8(pb + 96));
        o3 = vmmlaq_s32(o3, av, vld1q_s8(pb + 112));
        pa += 16;
        pb += 128;
    }
    if (k_blocks % 2) { /* the last block, in row 0 (and row 1: never read) */
        const int8x8_t a8 = vld1_s8(pa);
        const int8x16_t av = vcombine_s8(a8, a8);
        e0 = vmmlaq_s32(e0, av, vld1q_s8(pb));
        e1 = vmmlaq_s32(e1, av, vld1q_s8(pb + 16));
        e2 = vmmlaq_s32(e2, av, vld1q_s8(pb + 32));
        e3 = vmmlaq_s32(e3, av, vld1q_s8(pb + 48));
    }

    (void)ldc; /* one row */
    row_store(ep, c, accumulate, fold(e0, o0, e1, o1), fold(e2, o2, e3, o3));
}
