/* int8 × int4 → int32 1×8 row kernel, KR = 4, VSDOT by scalar: one row of C from gemm_s4_4x8x4_dotprod's nibble
 * B panels (isf_internal.h, "int4 B panels"), the m = 1 kernel of LLM decoding, where B's bytes are the cost.
 *
 * As gemm_s8_1x8x4_dotprod (isf_s8_1x8x4.h), but one VLD2.32 brings a PAIR of blocks: 8 columns × 4 bytes, each
 * byte block 2t's value in its low nibble and block 2t+1's in its high one. VSHL #4 and VAND 0xF0 make them the
 * two blocks' int8 values times 16 (exact: −128…112), which VSDOT takes as it takes int8 B; the sums are then 16
 * times the true ones, and an arithmetic shift right by 4 after the loop gives them back exactly (the same int32
 * range as int8 weights: 16·|w| ≤ 128). Per 4 blocks (128 MACs): 1 A load + 2 B loads (half gemm_s8's bytes) +
 * 8 unpacking instructions + 8 VSDOT. The low nibbles go to the even-block accumulators, the high ones to the odd,
 * so the 4 VSDOT chains are gemm_s8's.
 * A is the caller's row (any byte alignment), k_blocks × 4 bytes, never read past. k_blocks is even (pairs).
 * A's 16 bytes of 4 blocks come in by VLD2.32 too, as two D registers (blocks 0 and 2, 1 and 3): clang turns a
 * lane of the high half of a Q load into a VDUP before a plain VSDOT (it does so in gemm_s8_1x8x4_dotprod).
 * Hot loop at -O3: 21 instructions per 128 MACs with GCC 12, 22 with clang 19 (gemm_s8_1x8x4_dotprod: 19, 21).
 * Registers: 4 accumulators + the 0xF0 mask + A 1 + 4 per pair (2 loaded, 2 shifted), 2 pairs in flight = 14. */
#include <arm_neon.h>

#include "isf_s8_1x8x4.h"

/* The two blocks of a nibble pair, times 16: the low nibbles shifted up, the high ones masked in place. */
#define LO(v) vshlq_n_s8(s8(v), 4)
#define HI(v) vandq_s8(s8(v), mask)

ISF_UKERNEL(gemm_s4_1x8x4_dotprod) {
    const int8_t *pa = a;
    const int32_t *pb = __builtin_assume_aligned(b, 64);
    const int8x16_t mask = vdupq_n_s8((int8_t)0xF0);
    const int32x4_t zero = vdupq_n_s32(0);
    /* c<block parity><e|o>: even and odd columns of the even (low nibble) and the odd (high nibble) blocks. */
    int32x4_t c0e = zero, c0o = zero, c1e = zero, c1o = zero;

    for (size_t n = k_blocks / 4; n != 0; n--) {
        /* VLD2.32: d02 = blocks 0 and 2 of A, d13 = blocks 1 and 3, so the lanes come from D registers */
        const int32x2x2_t av = vld2_s32((const int32_t *)pa);
        const int8x8_t a02 = vreinterpret_s8_s32(av.val[0]), a13 = vreinterpret_s8_s32(av.val[1]);
        const int32x4x2_t b01 = vld2q_s32(pb);
        const int32x4x2_t b23 = vld2q_s32(pb + 8);
        ISF_DOT_ROW8(c0e, c0o, LO(b01.val[0]), LO(b01.val[1]), a02, 0);
        ISF_DOT_ROW8(c1e, c1o, HI(b01.val[0]), HI(b01.val[1]), a13, 0);
        ISF_DOT_ROW8(c0e, c0o, LO(b23.val[0]), LO(b23.val[1]), a02, 1);
        ISF_DOT_ROW8(c1e, c1o, HI(b23.val[0]), HI(b23.val[1]), a13, 1);
        pa += 16;
        pb += 16;
    }
    if (k_blocks % 4) { /* the last pair: A's 8 bytes */
        const int8x8_t a01 = vld1_s8(pa);
        const int32x4x2_t b01 = vld2q_s32(pb);
        ISF_DOT_ROW8(c0e, c0o, LO(b01.val[0]), LO(b01.val[1]), a01, 0);
        ISF_DOT_ROW8(c1e, c1o, HI(b01.val[0]), HI(b01.val[1]), a01, 1);
    }

    (void)ldc; /* one row */
    const row8 r = {vshrq_n_s32(vaddq_s32(c0e, c1e), 4), vshrq_n_s32(vaddq_s32(c0o, c1o), 4)};
    isf_row8_store(r, c, accumulate, ep);
}
