/* int8 × int4 -> int32 GEMM micro-kernel for a few rows (FEAT_DotProd): 4x12 tile, sdot by element, 4 k steps per
 * block, on int4 B panels (gemm_s8_8x12x4_dotprod's panels with their blocks in nibble pairs, as gemm_s4_8x12x4_dotprod
 * reads).
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call, so the packed weights are streamed once for those rows
 * instead of once per row by gemm_s4_1x12x4_dotprod. A is a 4-row panel: per block 16 bytes, row i's 4 k values in lane
 * i. One 16-byte B vector holds 4 columns' 4 k values of blocks 2t (low nibbles) and 2t + 1 (high nibbles); shl #4 and
 * and 0xF0 give each block's values times 16 for sdot, so the sums are 16× the true ones until one sshr #4 (exact)
 * after the loop.
 *
 * Hot loop: 1 pair (2 blocks) per iteration: one ldp of A (both blocks' 4 rows), 48 packed B bytes (3 vectors), 3 shl
 * + 3 and, 24 sdot, subs + b.ne and the pointer adds: 36 instructions for 384 MACs with clang (0.094 per MAC), 38 with
 * GCC 12 (0.099). The unpacking shares the vector pipes with sdot and serves 4 rows here against the 8x12x4 int4
 * kernel's 8, so the loop is bound at 24 / 30 of the sdot peak (llvm-mca: 79.9% on N1, N2, V1, V2; the 8x12x4: 88.9%),
 * against the 1-row int4 kernel's 50% for each of the rows it would otherwise take one by one. Block 2t goes to c0-c3;
 * block 2t + 1 to the same sets with clang, to c4-c7 with GCC (ODD_SETS below), folded once after the loop.
 * Registers: 24 accumulators (12 with clang) + 2 A + 3 packed B + the mask + an unpacked vector, within 32.
 */
#include <arm_neon.h>

#include "isf_s8_1x12x4.h"

/* Where block 2t + 1 goes. The loop is bound by the vector pipes (6 unpacking ops per 24 sdot), not by sdot
 * latency, so clang takes one set of 12 accumulators: with 24 it runs out of registers and rematerialises the 0xF0
 * mask every iteration (a seventh vector op). GCC 12 copies an accumulator back and forth with one set (2 mov a
 * loop), so it keeps two. */
#if defined(__clang__)
#define ODD_SETS 0, 1, 2, 3
#else
#define ODD_SETS 4, 5, 6, 7
#endif
#define DOT_ROWS(...) ACC_DOT_ROWS(__VA_ARGS__)

ISF_UKERNEL(gemm_s4_4x12x4_dotprod) {
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
        const int8x16_t g0 = vld1q_s8(pb), g1 = vld1q_s8(pb + 16), g2 = vld1q_s8(pb + 32);
        NEXT(pa, 32);
        NEXT(pb, 48);
        ACC_DOT_ROWS(0, 1, 2, 3, vshlq_n_s8(g0, 4), vshlq_n_s8(g1, 4), vshlq_n_s8(g2, 4), a0);
        DOT_ROWS(ODD_SETS, vandq_s8(g0, hi_mask), vandq_s8(g1, hi_mask), vandq_s8(g2, hi_mask), a1);
    }
    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);
    c00 = vshrq_n_s32(c00, 4), c01 = vshrq_n_s32(c01, 4), c02 = vshrq_n_s32(c02, 4);
    c10 = vshrq_n_s32(c10, 4), c11 = vshrq_n_s32(c11, 4), c12 = vshrq_n_s32(c12, 4);
    c20 = vshrq_n_s32(c20, 4), c21 = vshrq_n_s32(c21, 4), c22 = vshrq_n_s32(c22, 4);
    c30 = vshrq_n_s32(c30, 4), c31 = vshrq_n_s32(c31, 4), c32 = vshrq_n_s32(c32, 4);
    ISF_4X12_STORE();
}
