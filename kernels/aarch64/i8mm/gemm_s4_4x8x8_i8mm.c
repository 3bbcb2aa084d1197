/* int8 × int4 -> int32 GEMM micro-kernel for a few rows (FEAT_I8MM): 4x8 tile, smmla, 8 k steps per block, on int4 B
 * panels (gemm_s8_8x8x8_i8mm's panels with their blocks in nibble pairs, as gemm_s4_8x8x8_i8mm reads).
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call, so the packed weights are streamed once for those rows
 * instead of once per row by gemm_s4_1x8x8_i8mm. A is a 4-row panel: per block 32 bytes, vector p rows 2p, 2p+1 × 8 k.
 * A nibble panel's 64 bytes of pair t hold both blocks' B: shl #4 gives block 2t's weights × 16, and #0xF0 block
 * 2t+1's, each smmla's operand as it stands; the sums are 16 times the true ones (|16·w| ≤ 128: the int8 bound holds)
 * and shifted back exactly (sshr #4) before C, the bias or the quantized steps.
 *
 * Hot loop: 1 pair (2 blocks) per iteration: A's 64 bytes and the pair's 64 packed B bytes in 2 ld1 of 4 vectors with
 * clang, 4 shl + 4 and, 16 smmla, subs + b.ne: 28 instructions for 512 MACs (0.055 per MAC; GCC 12: 32, 0.063, its 4
 * ldp and 2 pointer adds for the loads). The unpacking shares the vector pipes with smmla and serves 2 row pairs here
 * against the 8x8x8 int4 kernel's 4, so the loop is bound at 16 / 24 of the smmla peak (llvm-mca: 66.5% on N2, V1,
 * V2; the 8x8x8 int4 kernel: 80% with clang), against the 1-row int4 kernel's 50% for each of the rows it would
 * otherwise take one by one. Block 2t goes to c<p><j>, block 2t+1 to d<p><j>: 16 independent chains, added once after
 * the loop. Registers: 16 accumulators + 4 A + 4 packed B + the mask + an unpacked vector or two = 27 of 32.
 */
#include "isf_i8mm_1x8x8.h"

/* Column pair j of pair t: block 2t's weights (low nibbles) against rows 0-3 of av.val[0..1], block 2t+1's (high
 * nibbles) against av.val[2..3]. */
#define COLUMN(j, x)                               \
    do {                                           \
        const int8x16_t lo_ = vshlq_n_s8(x, 4);    \
        c0##j = vmmlaq_s32(c0##j, av.val[0], lo_); \
        c1##j = vmmlaq_s32(c1##j, av.val[1], lo_); \
        const int8x16_t hi_ = vandq_s8(x, mask);   \
        d0##j = vmmlaq_s32(d0##j, av.val[2], hi_); \
        d1##j = vmmlaq_s32(d1##j, av.val[3], hi_); \
    } while (0)

/* The true sums of a row from its 16-fold ones (exact). */
#define SHIFT_BACK(x) vshrq_n_s32((x), 4)

ISF_UKERNEL(gemm_s4_4x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    const int8x16_t mask = vdupq_n_s8((int8_t)0xF0);
    ACC_DECL(c0);
    ACC_DECL(c1);
    ACC_DECL(d0);
    ACC_DECL(d1);

    for (size_t n = k_blocks / 2; n > 0; n--) { /* k_blocks is even */
        LOAD4(pa, av);
        LOAD4(pb, g);
        COLUMN(0, g.val[0]);
        COLUMN(1, g.val[1]);
        COLUMN(2, g.val[2]);
        COLUMN(3, g.val[3]);
    }
    ACC_ADD(c0, d0);
    ACC_ADD(c1, d1);
    ISF_4X8_STORE(SHIFT_BACK);
}
