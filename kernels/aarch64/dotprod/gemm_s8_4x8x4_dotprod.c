/* int8 -> int32 GEMM micro-kernel for a few rows (FEAT_DotProd): 4x8 tile, sdot by element, 4 k steps per block.
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call on gemm_s8_8x8x4_dotprod's B panels (per block 32 bytes:
 * column j's 4 k values in 32-bit lane j % 4 of vector j / 4), so B is streamed once for those rows instead of once per
 * row by gemm_s8_1x8x4_dotprod. A is a 4-row panel: per block 16 bytes, row i's 4 k values in lane i (`sdot vD.4s,
 * vB.16b, vA.4b[i]`).
 *
 * Hot loop: 2 blocks per iteration: one ldp of A (both blocks' 4 rows), one ld1 of B's 4 vectors, 16 sdot, subs +
 * b.ne and the pointer adds. Four rows give 8 accumulators a block, fewer than sdot latency × pipes on the widest
 * cores (3 × 4 on Neoverse V1), so even blocks go to c0-c3 and odd ones to c4-c7: 16 independent chains, folded
 * once after the loop (exact: int32 wraps alike in any order). Registers: 16 accumulators + 2 A + 4 B = 22 of 32.
 */
#include <arm_neon.h>

#include "isf_s8_x8x4.h"

/* One block: the 4 rows (lanes of `av`) against B's 2 vectors x0, x1, into sets s0-s3. */
#define BLOCK(s0, s1, s2, s3, x0, x1, av) \
    do {                                  \
        ACC_DOT(s0, x0, x1, av, 0);       \
        ACC_DOT(s1, x0, x1, av, 1);       \
        ACC_DOT(s2, x0, x1, av, 2);       \
        ACC_DOT(s3, x0, x1, av, 3);       \
    } while (0)

ISF_UKERNEL(gemm_s8_4x8x4_dotprod) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t n = k_blocks / 2; n > 0; n--) {
        const int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        const int8x16x4_t g = vld1q_s8_x4(pb);
        BLOCK(0, 1, 2, 3, g.val[0], g.val[1], a0);
        BLOCK(4, 5, 6, 7, g.val[2], g.val[3], a1);
        pa += 32;
        pb += 64;
    }
    if (k_blocks & 1) {
        const int8x16_t a0 = vld1q_s8(pa);
        BLOCK(0, 1, 2, 3, vld1q_s8(pb), vld1q_s8(pb + 16), a0);
    }
    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);
    ISF_4X8_STORE();
}
