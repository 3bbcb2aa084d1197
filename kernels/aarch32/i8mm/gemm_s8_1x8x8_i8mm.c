/* int8 → int32 1×8 row kernel, KR = 8, VSMMLA (FEAT_I8MM only: no VSDOT in this variant): one row of C from
 * gemm_s8_4x8x8_i8mm's B panels, for rows a 4-row tile would pad (small m, the last m % 4 rows).
 *
 * VSMMLA multiplies a 2×8 A by a 2×8 B (two columns × 8 k: one Q register of the panel) into a 2×2 block
 * [r0c0 r0c1 r1c0 r1c1]. With one row, half of each VSMMLA is spare; it is used for a second k block rather than
 * for zeros: one 16-byte load puts block 2i's A in row 0 and block 2i+1's in row 1, so block 2i's products with
 * its B land in lanes 0–1 (row 1's cross products in lanes 2–3 are never read) and block 2i+1's in lanes 2–3 of
 * another accumulator. Per 2 blocks (128 MACs): 1 A load + 8 B loads + 8 VSMMLA, no A shuffles; 8 accumulators
 * (column pair × block parity) are 8 independent chains. After the loop column pair j is the low half of its
 * even accumulator plus the high half of its odd one (exact in int32, the order does not matter).
 * Hot loop at -O3: GCC 12 27 instructions, clang 19 19 per 128 MACs (gemm_s8_4x8x8_i8mm: 6 per 128, as it
 * reuses each B register for 4 rows and wastes no half).
 * A is the caller's row (any byte alignment: VLD1.8), k_blocks × 8 bytes, never read past; an odd last block
 * goes in both rows. Registers: 8 accumulators + A 1 + B 4 per block in flight = 13 of the 16 q. */
#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Row 0 of the even accumulator plus row 1 of the odd one: columns 2j, 2j+1 for j = 0, 1 of pairs (e0, o0), (e1, o1). */
static inline int32x4_t fold(int32x4_t e0, int32x4_t o0, int32x4_t e1, int32x4_t o1) {
    return vaddq_s32(vcombine_s32(vget_low_s32(e0), vget_low_s32(e1)),
                     vcombine_s32(vget_high_s32(o0), vget_high_s32(o1)));
}

/* Quantized C (fp32 or int8), every step on the row's two vectors, on registers. Not inlined: with it in the
 * kernel, GCC 12 schedules the hot loop's loads differently. */
static __attribute__((noinline)) void quant_row(const isf_epilogue *ep, void *c, int32x4_t lo, int32x4_t hi) {
    isf_qn_store_row(ep, c, 2, lo, hi, lo, lo);
}

ISF_UKERNEL(gemm_s8_1x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    const int32x4_t zero = vdupq_n_s32(0);
    /* e<j>/o<j>: columns 2j, 2j+1 of the even / odd blocks. */
    int32x4_t e0 = zero, e1 = zero, e2 = zero, e3 = zero, o0 = zero, o1 = zero, o2 = zero, o3 = zero;

    for (size_t n = k_blocks / 2; n != 0; n--) {
        // isf-hot-loop-begin
        const int8x16_t av = vld1q_s8(pa);
        e0 = vmmlaq_s32(e0, av, vld1q_s8(pb));
        e1 = vmmlaq_s32(e1, av, vld1q_s8(pb + 16));
        e2 = vmmlaq_s32(e2, av, vld1q_s8(pb + 32));
        e3 = vmmlaq_s32(e3, av, vld1q_s8(pb + 48));
        o0 = vmmlaq_s32(o0, av, vld1q_s8(pb + 64));
        o1 = vmmlaq_s32(o1, av, vld1q_s8(pb + 80));
        o2 = vmmlaq_s32(o2, av, vld1q_s8(pb + 96));
        o3 = vmmlaq_s32(o3, av, vld1q_s8(pb + 112));
        pa += 16;
        pb += 128;
        // isf-hot-loop-end
    }
    if (k_blocks % 2) { /* the last block, in row 0 (and row 1: never read) */
        const int8x8_t a8 = vld1_s8(pa);
        const int8x16_t av = vcombine_s8(a8, a8);
        e0 = vmmlaq_s32(e0, av, vld1q_s8(pb));
        e1 = vmmlaq_s32(e1, av, vld1q_s8(pb + 16));
        e2 = vmmlaq_s32(e2, av, vld1q_s8(pb + 32));
        e3 = vmmlaq_s32(e3, av, vld1q_s8(pb + 48));
    }

    int32x4_t lo = fold(e0, o0, e1, o1), hi = fold(e2, o2, e3, o3);
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {
        quant_row(ep, c, lo, hi);
        return;
    }
    int32_t *pc = c;
    (void)ldc; /* one row */
    if (accumulate) {
        lo = vaddq_s32(lo, vld1q_s32(pc));
        hi = vaddq_s32(hi, vld1q_s32(pc + 4));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) { /* int32 wrapping; int32 output is never clamped */
        const int32_t *bias = ep->bias;
        lo = vaddq_s32(lo, vld1q_s32(bias));
        hi = vaddq_s32(hi, vld1q_s32(bias + 4));
    }
    vst1q_s32(pc, lo);
    vst1q_s32(pc + 4, hi);
}
