/* int8 -> int32 GEMM micro-kernel for a few rows (FEAT_I8MM): 4x8 tile, smmla, 8 k steps per block.
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call on gemm_s8_8x8x8_i8mm's B panels (per block 64 bytes,
 * vector j: columns 2j, 2j+1 × 8 k), so B is streamed once for those rows instead of once per row by
 * gemm_s8_1x8x8_i8mm, which also wastes half of each smmla. A is a 4-row panel: per block 32 bytes, vector p rows 2p,
 * 2p+1 × 8 k, smmla's operands as they stand (as in the 8x8x8 kernel, half its A).
 *
 * Hot loop: 2 blocks per iteration: A's 64 bytes and B's 128 in 3 ld1 of 4 vectors with clang, 16 smmla, subs + b.ne:
 * 21 instructions for 512 MACs (0.041 per MAC; the 8x8x8 kernel's loop: 0.04); GCC 12 (4-register tuples spill there,
 * see gemm_s4_8x8x8_i8mm.c) loads vector by vector: 6 ldp and 3 pointer adds, 27 instructions (0.053). Four rows give 8
 * accumulators a block, fewer than smmla latency × pipes on the widest cores, so even blocks go to c<p><j> and odd ones
 * to d<p><j>: 16 independent chains as in the 8x8x8 kernel, added once after the loop (exact in int32). Registers: 16
 * accumulators + 4 A + 8 B = 28 of 32.
 */
#include "isf_i8mm_1x8x8.h"

#define SUMS(x) (x)

ISF_UKERNEL(gemm_s8_4x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    ACC_DECL(c0);
    ACC_DECL(c1);
    ACC_DECL(d0);
    ACC_DECL(d1);

    for (size_t n = k_blocks / 2; n > 0; n--) {
        LOAD4(pa, av);
        LOAD4(pb, g0);
        ACC_MMLA(c0, av.val[0], g0);
        ACC_MMLA(c1, av.val[1], g0);
        LOAD4(pb, g1);
        ACC_MMLA(d0, av.val[2], g1);
        ACC_MMLA(d1, av.val[3], g1);
    }
    if (k_blocks & 1) {
        const int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        LOAD4(pb, g);
        ACC_MMLA(c0, a0, g);
        ACC_MMLA(c1, a1, g);
    }
    ACC_ADD(c0, d0);
    ACC_ADD(c1, d1);
    ISF_4X8_STORE(SUMS);
}
