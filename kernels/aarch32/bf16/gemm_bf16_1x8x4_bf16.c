/* bfloat16 → fp32 1×8 row kernel, KR = 4, VMMLA.BF16: one row of C from gemm_bf16_4x8x4_bf16's B panels, for rows
 * a 4-row tile would pad (small m, the last m % 4 rows). The full kernel's instruction, so each block's sum is
 * computed as there (subnormals flushed, intermediate sums rounded to odd).
 *
 * VMMLA.BF16 multiplies a 2×4 A by a 2×4 B (two columns × 4 k: one Q register of the panel) into a 2×2 fp32 block
 * [r0c0 r0c1 r1c0 r1c1]. With one row, half of each VMMLA is spare; it is used for a second k block rather than
 * for zeros: one 16-byte load puts block 2i's A in row 0 and block 2i+1's in row 1, so block 2i's products with
 * its B land in lanes 0–1 (row 1's cross products in lanes 2–3 are never read) and block 2i+1's in lanes 2–3 of
 * another accumulator. Per 2 blocks (64 MACs): 1 A load + 8 B loads + 8 VMMLA, no A shuffles; 8 accumulators
 * (column pair × block parity) are 8 independent chains. After the loop column pair j is the low half of its
 * even accumulator plus the high half of its odd one (one fp32 addition more than the full kernel's chain).
 * Hot loop at -O3: GCC 12 27 instructions, clang 19 19 per 64 MACs (gemm_bf16_4x8x4_bf16: 6 per 64, as it
 * reuses each B register for 4 rows and wastes no half).
 * A is the caller's row (2-byte aligned), k_blocks × 4 values, never read past; an odd last block goes in both
 * rows. Registers: 8 accumulators + A 1 + B 4 per block in flight = 13 of the 16 q. */
#include <arm_neon.h>

#include "isf_internal.h"

/* Row 0 of the even accumulator plus row 1 of the odd one: columns 2j, 2j+1 for j = 0, 1 of pairs (e0, o0), (e1, o1). */
static inline float32x4_t fold(float32x4_t e0, float32x4_t o0, float32x4_t e1, float32x4_t o1) {
    return vaddq_f32(vcombine_f32(vget_low_f32(e0), vget_low_f32(e1)),
                     vcombine_f32(vget_high_f32(o0), vget_high_f32(o1)));
}

/* The panels are bfloat16 bits (uint16_t); load them as such and reinterpret, which costs nothing. */
static inline bfloat16x8_t load(const uint16_t *p) { return vreinterpretq_bf16_u16(vld1q_u16(p)); }

/* Bias then clamp, in the contract's order; VMAX/VMIN are FMAX/FMIN (a NaN stays a NaN, the default one; −0 < +0). */
static inline void epilogue(float32x4_t *lo, float32x4_t *hi, const isf_epilogue *ep) {
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const float *bias = ep->bias;
        *lo = vaddq_f32(*lo, vld1q_f32(bias));
        *hi = vaddq_f32(*hi, vld1q_f32(bias + 4));
    }
    if (ep->steps & ISF_EPILOGUE_CLAMP) {
        const float32x4_t min = vdupq_n_f32(ep->min), max = vdupq_n_f32(ep->max);
        *lo = vminq_f32(vmaxq_f32(*lo, min), max);
        *hi = vminq_f32(vmaxq_f32(*hi, min), max);
    }
}

ISF_UKERNEL(gemm_bf16_1x8x4_bf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    const float32x4_t zero = vdupq_n_f32(0.0f);
    /* e<j>/o<j>: columns 2j, 2j+1 of the even / odd blocks. */
    float32x4_t e0 = zero, e1 = zero, e2 = zero, e3 = zero, o0 = zero, o1 = zero, o2 = zero, o3 = zero;

    for (size_t n = k_blocks / 2; n != 0; n--) {
        const bfloat16x8_t av = load(pa);
        e0 = vbfmmlaq_f32(e0, av, load(pb));
        e1 = vbfmmlaq_f32(e1, av, load(pb + 8));
        e2 = vbfmmlaq_f32(e2, av, load(pb + 16));
        e3 = vbfmmlaq_f32(e3, av, load(pb + 24));
        o0 = vbfmmlaq_f32(o0, av, load(pb + 32));
        o1 = vbfmmlaq_f32(o1, av, load(pb + 40));
        o2 = vbfmmlaq_f32(o2, av, load(pb + 48));
        o3 = vbfmmlaq_f32(o3, av, load(pb + 56));
        pa += 8;
        pb += 64;
    }
    if (k_blocks % 2) { /* the last block, in row 0 (and row 1: never read) */
        const uint16x4_t a4 = vld1_u16(pa);
        const bfloat16x8_t av = vreinterpretq_bf16_u16(vcombine_u16(a4, a4));
        e0 = vbfmmlaq_f32(e0, av, load(pb));
        e1 = vbfmmlaq_f32(e1, av, load(pb + 8));
        e2 = vbfmmlaq_f32(e2, av, load(pb + 16));
        e3 = vbfmmlaq_f32(e3, av, load(pb + 24));
    }

    float32x4_t lo = fold(e0, o0, e1, o1), hi = fold(e2, o2, e3, o3);
    float *pc = c;
    (void)ldc; /* one row */
    if (accumulate) {
        lo = vaddq_f32(lo, vld1q_f32(pc));
        hi = vaddq_f32(hi, vld1q_f32(pc + 4));
    }
    if (ep->steps != ISF_EPILOGUE_NONE) {
        epilogue(&lo, &hi, ep);
    }
    vst1q_f32(pc, lo);
    vst1q_f32(pc + 4, hi);
}
