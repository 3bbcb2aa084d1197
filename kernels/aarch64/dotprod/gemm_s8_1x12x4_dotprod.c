/* int8 -> int32 GEMM row kernel (MR = 1, FEAT_DotProd): 1x12 tile, sdot by element, 4 k steps per block.
 *
 * The small-M path: the rows gemm_s8_8x12x4_dotprod would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (per block 48 bytes: column j's 4 k values in 32-bit lane j % 4 of
 * vector j / 4), so each B byte is loaded once and used once. A is the row itself, 4 bytes per block (the
 * caller's row when k is a multiple of 4: never read past it).
 *
 * Hot loop: 8 blocks per iteration: one ldp of A (16 bytes = 4 blocks per register; `sdot vD.4s, vB.16b,
 * vA.4b[i]` broadcasts block i's 4 values), 6 ld1 of 4 B vectors, 24 sdot, subs + b.ne: 33 instructions for 384
 * MACs with clang (0.086 per MAC; GCC 12 adds an add for A: 34; the 8x12x4 kernel's loop is 0.07). With one row every sdot needs its own B vector, so B
 * loads set the bound; ld1 {4 registers} keeps them at a quarter of the sdot. Accumulators: block s (mod 4) goes
 * to set c<s><0..2>, 12 independent chains, each hit twice per iteration (sdot latency 2-3 × 2-4 pipes); the four
 * partial sums of each column are added after the loop (exact: int32 wraps alike in any order). Registers: 12
 * accumulators + 2 A + 3 groups of 4 B = 26 of 32.
 */
#include <arm_neon.h>
#include <string.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Steps p past `n` bytes. The empty asm hides the pointer's history, so the compilers keep one pointer and
 * post-increment it (ld1 {4 registers}, [x], #64) rather than address each group from a base, which ld1's
 * addressing modes cannot do without an add per group. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(s) int32x4_t c##s##0 = vdupq_n_s32(0), c##s##1 = c##s##0, c##s##2 = c##s##0
#define ACC_DOT(s, x0, x1, x2, av, lane)              \
    c##s##0 = vdotq_laneq_s32(c##s##0, x0, av, lane); \
    c##s##1 = vdotq_laneq_s32(c##s##1, x1, av, lane); \
    c##s##2 = vdotq_laneq_s32(c##s##2, x2, av, lane)
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_s32(c##s##0, c##t##0); \
    c##s##1 = vaddq_s32(c##s##1, c##t##1); \
    c##s##2 = vaddq_s32(c##s##2, c##t##2)

/* Four blocks (12 B vectors in three groups of 4) against the four 4-byte groups of `av`: block s into set s. */
#define FOUR_BLOCKS(av)                                     \
    do {                                                    \
        int8x16x4_t g0 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        ACC_DOT(0, g0.val[0], g0.val[1], g0.val[2], av, 0); \
        int8x16x4_t g1 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        ACC_DOT(1, g0.val[3], g1.val[0], g1.val[1], av, 1); \
        int8x16x4_t g2 = vld1q_s8_x4(pb);                   \
        NEXT(pb, 64);                                       \
        ACC_DOT(2, g1.val[2], g1.val[3], g2.val[0], av, 2); \
        ACC_DOT(3, g2.val[1], g2.val[2], g2.val[3], av, 3); \
    } while (0)

ISF_UKERNEL(gemm_s8_1x12x4_dotprod) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    (void)ldc; /* one row */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        // isf-hot-loop-begin
        int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        NEXT(pa, 32);
        FOUR_BLOCKS(a0);
        FOUR_BLOCKS(a1);
        // isf-hot-loop-end
    }
    /* Up to 7 blocks left (a Kc block of 816 leaves 4): 4 as in the loop, the rest one at a time, their 4 A values
     * broadcast (ld1r). */
    if (k_blocks & 4) {
        int8x16_t a0 = vld1q_s8(pa);
        pa += 16;
        FOUR_BLOCKS(a0);
    }
    for (size_t kb = k_blocks % 4; kb > 0; kb--) {
        int32_t group;
        memcpy(&group, pa, sizeof group);
        int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(group));
        pa += 4;
        c00 = vdotq_s32(c00, vld1q_s8(pb), av);
        c01 = vdotq_s32(c01, vld1q_s8(pb + 16), av);
        c02 = vdotq_s32(c02, vld1q_s8(pb + 32), av);
        pb += 48;
    }

    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_row(ep, c, 3, c00, c01, c02, c02);
        return;
    }
    if (accumulate) {
        c00 = vaddq_s32(c00, vld1q_s32(out));
        c01 = vaddq_s32(c01, vld1q_s32(out + 4));
        c02 = vaddq_s32(c02, vld1q_s32(out + 8));
    }
    /* int32 output: BIAS only (wrapping, as vector adds do); the driver never asks for CLAMP. */
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const int32_t *bias = ep->bias;
        c00 = vaddq_s32(c00, vld1q_s32(bias));
        c01 = vaddq_s32(c01, vld1q_s32(bias + 4));
        c02 = vaddq_s32(c02, vld1q_s32(bias + 8));
    }
    vst1q_s32(out, c00);
    vst1q_s32(out + 4, c01);
    vst1q_s32(out + 8, c02);
}
