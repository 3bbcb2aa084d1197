/* int8 -> int32 GEMM micro-kernel for a few rows (FEAT_DotProd): 4x12 tile, sdot by element, 4 k steps per block.
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call on gemm_s8_8x12x4_dotprod's B panels (per block 48 bytes:
 * column j's 4 k values in 32-bit lane j % 4 of vector j / 4), so B is streamed once for those rows instead of once per
 * row by gemm_s8_1x12x4_dotprod. A is a 4-row panel: per block 16 bytes, row i's 4 k values in lane i (`sdot vD.4s,
 * vB.16b, vA.4b[i]`).
 *
 * Hot loop: 2 blocks per iteration: one ldp of A (both blocks' 4 rows), 3 ldp of B (6 vectors), 24 sdot, subs + b.ne
 * and the pointer adds: 31 instructions for 384 MACs with clang (0.081 per MAC), 34 with GCC 12 (0.089: it pairs fewer
 * loads); the 8x12x4 kernel's loop: 0.07. Four rows give 12 accumulators a block, no more than sdot latency × pipes on
 * the widest cores (3 × 4 on Neoverse V1), so even blocks go to c0-c3 and odd ones to c4-c7: 24 independent chains,
 * folded once after the loop (exact: int32 wraps alike in any order). Registers: 24 accumulators + 2 A + 3 B = 29 of
 * 32.
 *
 * The epilogue is isf_s8_1x12x4.h's: int32 C a row at a time (accumulate, BIAS), the quantized outputs through
 * isf_quant_neon.h's isf_qn_store_rows, out of line.
 */
#include <arm_neon.h>

#include "isf_s8_1x12x4.h"

/* One block: the 4 rows (lanes of `av`) against B's 3 vectors at p, into sets s0-s3 (row r's even blocks in
 * c<r><0..2>, its odd ones in c<r + 4><0..2>). */
#define BLOCK(s0, s1, s2, s3, av, p)                                                        \
    do {                                                                                    \
        const int8x16_t b0 = vld1q_s8(p), b1 = vld1q_s8((p) + 16), b2 = vld1q_s8((p) + 32); \
        ACC_DOT_ROWS(s0, s1, s2, s3, b0, b1, b2, av);                                       \
    } while (0)

ISF_UKERNEL(gemm_s8_4x12x4_dotprod) {
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
        BLOCK(0, 1, 2, 3, a0, pb);
        BLOCK(4, 5, 6, 7, a1, pb + 48);
        pa += 32;
        pb += 96;
    }
    if (k_blocks & 1) {
        const int8x16_t a0 = vld1q_s8(pa);
        BLOCK(0, 1, 2, 3, a0, pb);
    }
    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);
    ISF_4X12_STORE();
}
