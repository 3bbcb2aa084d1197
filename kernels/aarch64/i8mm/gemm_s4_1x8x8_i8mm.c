/* int8 × int4 -> int32 GEMM row kernel (MR = 1, FEAT_I8MM): gemm_s8_1x8x8_i8mm on int4 B panels, for m = 1 (LLM
 * decoding, where the weight bytes are the cost) and the rows the 8x8 tile would pad.
 *
 * A nibble panel's 64 bytes of block pair t hold blocks 2t (low nibbles) and 2t+1 (high nibbles) of the int8
 * panel, byte for byte. gemm_s8_1x8x8_i8mm already feeds block 2t to smmla's row 0 (accumulators e<j>) and block
 * 2t+1 to row 1 (o<j>) with one 16-byte A load, so one 64-byte B load serves both: shl #4 gives block 2t's
 * weights × 16, and #0xF0 block 2t+1's × 16, each smmla's B operand as it stands (a shift and an and rather than
 * two shifts: the and issues on every vector pipe). Every sum is then 16 times the true one (|16·w| ≤ 128: the
 * int8 kernel's overflow bound holds), shifted back after the gathering: 2 sshr for the row, exact.
 *
 * Hot loop: one pair (2 blocks, 128 useful MACs) per iteration: ldr q of A, ld1 of 4 B vectors (64 bytes, half of
 * the int8 kernel's), 4 shl + 4 and, 8 smmla, subs + b.ne: 20 instructions with both compilers. Unrolled by two
 * pairs, clang gives 37 per 2 pairs but GCC 12 needs 42 (its scheduler unpacks both pairs at once, then copies 2
 * accumulators back and forth), and the 8 unpacked vectors of the second pair push both into d8-d10. Registers:
 * 8 accumulators + A + 4 B + 8 unpacked + the mask = 22 of 32.
 */
#include "isf_i8mm_1x8x8.h"

/* Column pair j of a block pair: block 2t's weights (low nibbles) into e<j>, block 2t+1's (high) into o<j>. */
#define COLS(j, av, g)                                      \
    e##j = vmmlaq_s32(e##j, av, vshlq_n_s8((g).val[j], 4)); \
    o##j = vmmlaq_s32(o##j, av, vandq_s8((g).val[j], mask))

ISF_UKERNEL(gemm_s4_1x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    const int8x16_t mask = vdupq_n_s8((int8_t)0xF0);
    (void)ldc; /* one row */
    ACC_DECL(e);
    ACC_DECL(o);

    for (size_t n = k_blocks / 2; n > 0; n--) { /* k_blocks is even */
        const int8x16_t av = vld1q_s8(pa);      /* block 2t in row 0, block 2t+1 in row 1 */
        NEXT(pa, 16);
        const int8x16x4_t g = vld1q_s8_x4(pb);
        NEXT(pb, 64);
        COLS(0, av, g);
        COLS(1, av, g);
        COLS(2, av, g);
        COLS(3, av, g);
    }

    row_store(ep, c, accumulate, vshrq_n_s32(gather(e0, e1, o0, o1), 4), vshrq_n_s32(gather(e2, e3, o2, o3), 4));
}
