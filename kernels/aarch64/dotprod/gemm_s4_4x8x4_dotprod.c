/* int8 × int4 -> int32 GEMM micro-kernel for a few rows (FEAT_DotProd): 4x8 tile, sdot by element, 4 k steps per
 * block, on gemm_s4_8x8x4_dotprod's int4 B panels: gemm_s8_4x8x4_dotprod's tile (isf_s8_x8x4.h) with
 * gemm_s4_4x12x4_dotprod's unpacking.
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call. A is a 4-row panel: per block 16 bytes, row i's 4 k
 * values in lane i. One 16-byte B vector holds 4 columns' 4 k values of blocks 2t (low nibbles) and 2t + 1 (high
 * nibbles); shl #4 and and 0xF0 give each block's values times 16 for sdot, so the sums are 16× the true ones until
 * one sshr #4 (exact) after the loop. Per pair: one ldp of A, 2 packed B vectors, 2 shl + 2 and, 16 sdot. Block 2t
 * goes to sets 0-3, block 2t + 1 to sets 4-7 (16 independent chains), folded after the loop.
 */
#include <arm_neon.h>

#include "isf_s8_x8x4.h"

/* One block: the 4 rows (lanes of `av`) against the unpacked vectors x0, x1, into sets s0-s3. */
#define BLOCK(s0, s1, s2, s3, x0, x1, av) \
    do {                                  \
        ACC_DOT(s0, x0, x1, av, 0);       \
        ACC_DOT(s1, x0, x1, av, 1);       \
        ACC_DOT(s2, x0, x1, av, 2);       \
        ACC_DOT(s3, x0, x1, av, 3);       \
    } while (0)
#define SHR4(s) c##s##0 = vshrq_n_s32(c##s##0, 4), c##s##1 = vshrq_n_s32(c##s##1, 4)

ISF_UKERNEL(gemm_s4_4x8x4_dotprod) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    const int8x16_t hi_mask = vdupq_n_s8((int8_t)0xF0);
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t n = k_blocks / 2; n > 0; n--) { /* k_blocks is even */
        const int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        const int8x16_t g0 = vld1q_s8(pb), g1 = vld1q_s8(pb + 16);
        pa += 32;
        pb += 32;
        BLOCK(0, 1, 2, 3, vshlq_n_s8(g0, 4), vshlq_n_s8(g1, 4), a0);
        BLOCK(4, 5, 6, 7, vandq_s8(g0, hi_mask), vandq_s8(g1, hi_mask), a1);
    }
    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);
    SHR4(0);
    SHR4(1);
    SHR4(2);
    SHR4(3);
    ISF_4X8_STORE();
}
