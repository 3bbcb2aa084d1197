/* int8 -> int32 GEMM row kernel (MR = 1, FEAT_DotProd): 1x8 tile, sdot by element, 4 k steps per block.
 *
 * The rows gemm_s8_8x8x4_dotprod would pad (m < 8, the last m % 8 rows) on its B panels (per block 32 bytes: column
 * j's 4 k values in 32-bit lane j % 4 of vector j / 4), so each B byte is loaded once and used once. A is the row
 * itself, 4 bytes per block (the caller's row when k is a multiple of 4: never read past it).
 *
 * Hot loop: 8 blocks per iteration: one ldp of A (16 bytes = 4 blocks per register; `sdot vD.4s, vB.16b, vA.4b[i]`
 * broadcasts block i's 4 values), 4 ld1 of 4 B vectors, 16 sdot, subs + b.ne. With one row every sdot needs its own
 * B vector, so B loads set the bound; ld1 {4 registers} keeps them at a quarter of the sdot. Block s (mod 4) goes to
 * set c<s><0..1>: 8 independent chains, each hit twice per iteration, added after the loop (exact in int32).
 */
#include <arm_neon.h>
#include <string.h>

#include "isf_s8_x8x4.h"

/* Four blocks (8 B vectors in two groups of 4) against the four 4-byte groups of `av`: block s into set s. */
#define FOUR_BLOCKS(av)                              \
    do {                                             \
        const int8x16x4_t g0 = vld1q_s8_x4(pb);      \
        const int8x16x4_t g1 = vld1q_s8_x4(pb + 64); \
        pb += 128;                                   \
        ACC_DOT(0, g0.val[0], g0.val[1], av, 0);     \
        ACC_DOT(1, g0.val[2], g0.val[3], av, 1);     \
        ACC_DOT(2, g1.val[0], g1.val[1], av, 2);     \
        ACC_DOT(3, g1.val[2], g1.val[3], av, 3);     \
    } while (0)

ISF_UKERNEL(gemm_s8_1x8x4_dotprod) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    (void)ldc; /* one row */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        const int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        pa += 32;
        FOUR_BLOCKS(a0);
        FOUR_BLOCKS(a1);
    }
    if (k_blocks & 4) {
        const int8x16_t a0 = vld1q_s8(pa);
        pa += 16;
        FOUR_BLOCKS(a0);
    }
    for (size_t kb = k_blocks % 4; kb > 0; kb--) { /* the last 0-3 blocks: their 4 A values broadcast */
        int32_t group;
        memcpy(&group, pa, sizeof group);
        const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(group));
        pa += 4;
        c00 = vdotq_s32(c00, vld1q_s8(pb), av);
        c01 = vdotq_s32(c01, vld1q_s8(pb + 16), av);
        pb += 32;
    }

    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {
        const int32x4_t r[2] = {c00, c01};
        isf_x8_quantized(ep, c, 0, 1, r);
        return;
    }
    isf_x8_store_s32(ep, c, accumulate, c00, c01);
}
