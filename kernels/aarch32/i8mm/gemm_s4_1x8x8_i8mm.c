/* int8 × int4 -> int32 1×8 row kernel, KR = 8, VSMMLA (AArch32 FEAT_I8MM): gemm_s8_1x8x8_i8mm on int4 B panels,
 * for m = 1 (LLM decoding: the weight bytes are the cost) and the rows a 4-row tile would pad.
 *
 * A nibble panel's 64 bytes of block pair t hold blocks 2t (low nibbles) and 2t+1 (high nibbles) of the int8
 * panel, byte for byte. gemm_s8_1x8x8_i8mm already feeds block 2t to VSMMLA's row 0 (accumulators e<j>) and block
 * 2t+1 to row 1 (o<j>) from one 16-byte A load, so one 64-byte B load serves both: VSHL #4 gives block 2t's
 * weights × 16, VAND #0xF0 block 2t+1's × 16, each VSMMLA's operand as it stands. The sums are then 16 times the
 * true ones (|16·w| ≤ 128: the int8 kernel's overflow bound holds), shifted back after the folding (2 VSHR, exact).
 *
 * Per pair (128 MACs): 1 A load, 4 B loads (64 bytes, half the int8 kernel's), 4 VSHL + 4 VAND, 8 VSMMLA: hot loop
 * 23 instructions with clang 19, 27 with GCC 12 (it addresses B through 3 extra pointers), as the int8 kernel's 19
 * and 27. Registers: 8 accumulators + A + mask + B and its unpacked vectors within the 16 q. (The pairs of B
 * vectors as vld1q_s8_x2 tuples: GCC 12 has no such intrinsic here, and clang's gain is 2 loads.)
 */
#include "isf_i8mm_1x8x8.h"

/* Column pair j of a block pair (B vector g): block 2t's weights into e<j>, block 2t+1's into o<j>. */
#define COLS(j, g)                                       \
    do {                                                 \
        const int8x16_t g_ = (g);                        \
        e##j = vmmlaq_s32(e##j, av, vshlq_n_s8(g_, 4));  \
        o##j = vmmlaq_s32(o##j, av, vandq_s8(g_, mask)); \
    } while (0)

ISF_UKERNEL(gemm_s4_1x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    const int8x16_t mask = vdupq_n_s8((int8_t)0xF0);
    const int32x4_t zero = vdupq_n_s32(0);
    /* e<j>/o<j>: columns 2j, 2j+1 of the even / odd blocks. */
    int32x4_t e0 = zero, e1 = zero, e2 = zero, e3 = zero, o0 = zero, o1 = zero, o2 = zero, o3 = zero;
    (void)ldc; /* one row */

    for (size_t n = k_blocks / 2; n != 0; n--) { /* k_blocks is even */
        const int8x16_t av = vld1q_s8(pa);       /* block 2t in row 0, block 2t+1 in row 1 */
        COLS(0, vld1q_s8(pb));
        COLS(1, vld1q_s8(pb + 16));
        COLS(2, vld1q_s8(pb + 32));
        COLS(3, vld1q_s8(pb + 48));
        pa += 16;
        pb += 64;
    }

    row_store(ep, c, accumulate, vshrq_n_s32(fold(e0, o0, e1, o1), 4), vshrq_n_s32(fold(e2, o2, e3, o3), 4));
}
