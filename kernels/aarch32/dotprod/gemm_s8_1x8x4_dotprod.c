/* int8 → int32 1×8 row kernel, KR = 4, VSDOT by scalar: one row of C from gemm_s8_4x8x4_dotprod's B panels, for
 * rows a 4-row tile would pad (small m, the last m % 4 rows).
 *
 * A block of B is 8 columns × 4 k bytes (one 32-bit lane per column). VLD2.32 loads it in one instruction (GCC 12
 * has no vld1q_s8_x2 on A32) and deinterleaves it into columns 0 2 4 6 and 1 3 5 7; one VSDOT by scalar, with
 * A's 4 bytes of the block as the scalar, adds 16 products to each half. The accumulators, C and the bias (VLD2,
 * VST2) keep that order. 4 blocks per iteration share one 16-byte A load: per 128 MACs 1 A load + 4 B loads +
 * 8 VSDOT. Even and odd blocks have their own accumulator pair, 4 chains of 2 VSDOT each per iteration: 8 chains
 * (8 accumulators + 8 B registers in flight) make clang 19 spill inside the loop, since the scalar operand must
 * sit in d0–d15. The pairs are summed after the loop.
 * Hot loop at -O3: 19 instructions per 128 MACs with GCC 12 and clang 19 (gemm_s8_4x8x4_dotprod, whose
 * registers hold 4 rows per B load: 11).
 * A is the caller's row (any byte alignment: VLD1.8 and a core load), k_blocks × 4 bytes, never read past.
 * Registers: 4 accumulators + A 1 + B 2 per block, up to 8 in flight = 13 of the 16 q. */
#include <arm_neon.h>
#include <string.h>

#include "isf_s8_1x8x4.h"

ISF_UKERNEL(gemm_s8_1x8x4_dotprod) {
    const int8_t *pa = a;
    const int32_t *pb = __builtin_assume_aligned(b, 64);
    const int32x4_t zero = vdupq_n_s32(0);
    /* c<block parity><e|o>: even and odd columns of the even and the odd blocks. */
    int32x4_t c0e = zero, c0o = zero, c1e = zero, c1o = zero;

    for (size_t n = k_blocks / 4; n != 0; n--) {
        const int8x16_t av = vld1q_s8(pa);
        const int8x8_t a01 = vget_low_s8(av), a23 = vget_high_s8(av);
        const int32x4x2_t b0 = vld2q_s32(pb);
        ISF_DOT_ROW8(c0e, c0o, s8(b0.val[0]), s8(b0.val[1]), a01, 0);
        const int32x4x2_t b1 = vld2q_s32(pb + 8);
        ISF_DOT_ROW8(c1e, c1o, s8(b1.val[0]), s8(b1.val[1]), a01, 1);
        const int32x4x2_t b2 = vld2q_s32(pb + 16);
        ISF_DOT_ROW8(c0e, c0o, s8(b2.val[0]), s8(b2.val[1]), a23, 0);
        const int32x4x2_t b3 = vld2q_s32(pb + 24);
        ISF_DOT_ROW8(c1e, c1o, s8(b3.val[0]), s8(b3.val[1]), a23, 1);
        pa += 16;
        pb += 32;
    }
    for (size_t n = k_blocks % 4; n != 0; n--) { /* the last 0–3 blocks: A's 4 bytes by a core load */
        uint32_t a4;
        memcpy(&a4, pa, sizeof a4);
        const int8x8_t av = vreinterpret_s8_u32(vdup_n_u32(a4));
        const int32x4x2_t b0 = vld2q_s32(pb);
        ISF_DOT_ROW8(c0e, c0o, s8(b0.val[0]), s8(b0.val[1]), av, 0);
        pa += 4;
        pb += 8;
    }

    (void)ldc; /* one row */
    isf_row8_store((row8){vaddq_s32(c0e, c1e), vaddq_s32(c0o, c1o)}, c, accumulate, ep);
}
