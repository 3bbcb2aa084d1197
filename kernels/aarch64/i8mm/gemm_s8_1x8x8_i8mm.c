/* int8 -> int32 GEMM row kernel (MR = 1, FEAT_I8MM): 1x8 tile, smmla, 8 k steps per block.
 *
 * The small-M path: the rows gemm_s8_8x8x8_i8mm would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (per block 64 bytes, vector j: columns 2j, 2j+1 × 8 k), so each B byte
 * is loaded once and used once. A is the row itself, 8 bytes per block (the caller's row when k is a multiple of
 * 8: never read past it).
 *
 * smmla multiplies a 2x8 by an 8x2: with one row, half of its 2x2 result is wasted (the variant has no sdot). The
 * wasted half costs nothing extra here: one 16-byte A load holds blocks kb and kb+1 as smmla's two rows, so with
 * B of block kb its row 0 is useful ([c2j c2j+1] in lanes 0-1 of e<j>), and with B of block kb+1 its row 1 (lanes
 * 2-3 of o<j>); the other lanes collect cross terms that are dropped. No zeroing, no broadcast: per 2 blocks one
 * A load, 2 ld1 of 4 B vectors, 8 smmla.
 *
 * Hot loop: 4 blocks per iteration, ldp of A, 4 ld1 of B, 16 smmla, subs + b.ne: 23 instructions with clang (GCC
 * 12 adds an add for A: 24) for 256 useful MACs: 0.090 per useful MAC, 0.045 per MAC as smmla counts them (the
 * 8x8x8 kernel's loop: 0.04). Accumulators: e<j> and o<j>, 8 independent chains, each hit twice per iteration
 * (smmla latency 3-4 × 2 pipes); the useful halves are gathered (uzp1 / uzp2 on 64-bit lanes) after the loop.
 * Registers: 8 accumulators + 2 A + 4 groups of 4 B = 26 of 32 (16 accumulators made clang spill).
 */
#include "isf_i8mm_1x8x8.h"

/* Two blocks, A's 16 bytes (block kb, block kb+1) against each block's B: row 0 useful in x, row 1 in y. */
#define TWO_BLOCKS(x, y, av)              \
    do {                                  \
        int8x16x4_t g0 = vld1q_s8_x4(pb); \
        NEXT(pb, 64);                     \
        ACC_MMLA(x, av, g0);              \
        int8x16x4_t g1 = vld1q_s8_x4(pb); \
        NEXT(pb, 64);                     \
        ACC_MMLA(y, av, g1);              \
    } while (0)

ISF_UKERNEL(gemm_s8_1x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    (void)ldc; /* one row */
    ACC_DECL(e);
    ACC_DECL(o);

    for (size_t n = k_blocks / 4; n > 0; n--) {
        int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        NEXT(pa, 32);
        TWO_BLOCKS(e, o, a0);
        TWO_BLOCKS(e, o, a1);
    }
    if (k_blocks & 2) {
        int8x16_t av = vld1q_s8(pa);
        pa += 16;
        TWO_BLOCKS(e, o, av);
    }
    if (k_blocks & 1) { /* A's last 8 bytes as row 0, row 1 zero (ldr d): only e is touched */
        int8x16_t av = vcombine_s8(vld1_s8(pa), vdup_n_s8(0));
        int8x16x4_t g = vld1q_s8_x4(pb);
        ACC_MMLA(e, av, g);
    }

    row_store(ep, c, accumulate, gather(e0, e1, o0, o1), gather(e2, e3, o2, o3));
}
