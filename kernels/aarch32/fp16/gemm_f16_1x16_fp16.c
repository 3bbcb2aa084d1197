/* binary16 1×16 row kernel, KR = 1, FEAT_FP16 (VFMA.F16, accumulating in binary16): one row of C from
 * gemm_f16_4x16_fp16's B panels, for rows a 4-row tile would pad (small m, the last m % 4 rows). The fp16 image of
 * gemm_f32_1x8_neon.
 *
 * A is the caller's row (2-byte aligned), k_blocks values, never read past. A32 has no VFMA by scalar, so each
 * k step broadcasts its A value while loading (VLD1.16 {d[],d[]}); its 16 B values come in one VLD2.16 of 4 D
 * registers (GCC 12 has no vld1q_u16_x2 on A32), which deinterleaves them into even and odd columns: the
 * accumulators, C and the bias (VLD2/VST2) all use that order. Per k step: 2 loads + 2 VFMA for 16 MACs.
 * 4 k steps per iteration, each with its own accumulator pair, make 8 independent chains for a 4-cycle FMA on
 * 2 pipes; the pairs are summed after the loop (in binary16, like every partial sum of this op).
 * Hot loop at -O3: GCC 12 26 instructions, clang 19 20 per 64 MACs (gemm_f16_4x16_fp16: 22, 18).
 * Registers: 8 accumulators + 2 B + 1 broadcast A per k step in flight = 11 to 14 of the 16 q. */
#include <arm_neon.h>

#include "isf_internal.h"

/* The row's even and odd columns (VLD2's order). */
typedef struct {
    float16x8_t e, o;
} row16;

static inline row16 add_row(row16 x, const void *p) {
    const uint16x8x2_t y = vld2q_u16(p);
    return (row16){vaddq_f16(x.e, vreinterpretq_f16_u16(y.val[0])), vaddq_f16(x.o, vreinterpretq_f16_u16(y.val[1]))};
}

static inline float16x8_t dup_f16(uint16_t bits) { return vreinterpretq_f16_u16(vdupq_n_u16(bits)); }

/* Bias then clamp, in the contract's order; VMAX/VMIN.F16 are FMAX/FMIN (a NaN stays a NaN, the default one; −0 < +0). */
static inline row16 epilogue(row16 r, const isf_epilogue *ep) {
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        r = add_row(r, ep->bias);
    }
    if (ep->steps & ISF_EPILOGUE_CLAMP) {
        const float16x8_t lo = dup_f16(ep->min_f16), hi = dup_f16(ep->max_f16);
        r.e = vminq_f16(vmaxq_f16(r.e, lo), hi);
        r.o = vminq_f16(vmaxq_f16(r.o, lo), hi);
    }
    return r;
}

/* The panels are binary16 bits (uint16_t); load them as such and reinterpret, which costs nothing. */
static inline float16x8_t load_dup(const uint16_t *p) { return vreinterpretq_f16_u16(vld1q_dup_u16(p)); }

static inline float16x8_t half(uint16x8x2_t b, int odd) { return vreinterpretq_f16_u16(b.val[odd]); }

ISF_UKERNEL(gemm_f16_1x16_fp16) {
    const uint16_t *pa = a;
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    const float16x8_t zero = dup_f16(0);
    /* c<step><e|o>: even and odd columns of k step 4i + step. */
    float16x8_t c0e = zero, c0o = zero, c1e = zero, c1o = zero, c2e = zero, c2o = zero, c3e = zero, c3o = zero;

    for (size_t n = k_blocks / 4; n != 0; n--) {
        const float16x8_t a0 = load_dup(pa);
        const uint16x8x2_t b0 = vld2q_u16(pb);
        c0e = vfmaq_f16(c0e, a0, half(b0, 0));
        c0o = vfmaq_f16(c0o, a0, half(b0, 1));
        const float16x8_t a1 = load_dup(pa + 1);
        const uint16x8x2_t b1 = vld2q_u16(pb + 16);
        c1e = vfmaq_f16(c1e, a1, half(b1, 0));
        c1o = vfmaq_f16(c1o, a1, half(b1, 1));
        const float16x8_t a2 = load_dup(pa + 2);
        const uint16x8x2_t b2 = vld2q_u16(pb + 32);
        c2e = vfmaq_f16(c2e, a2, half(b2, 0));
        c2o = vfmaq_f16(c2o, a2, half(b2, 1));
        const float16x8_t a3 = load_dup(pa + 3);
        const uint16x8x2_t b3 = vld2q_u16(pb + 48);
        c3e = vfmaq_f16(c3e, a3, half(b3, 0));
        c3o = vfmaq_f16(c3o, a3, half(b3, 1));
        pa += 4;
        pb += 64;
    }
    for (size_t n = k_blocks % 4; n != 0; n--) { /* the last 0–3 k steps */
        const float16x8_t a0 = load_dup(pa++);
        const uint16x8x2_t b0 = vld2q_u16(pb);
        c0e = vfmaq_f16(c0e, a0, half(b0, 0));
        c0o = vfmaq_f16(c0o, a0, half(b0, 1));
        pb += 16;
    }

    row16 r = {vaddq_f16(vaddq_f16(c0e, c1e), vaddq_f16(c2e, c3e)),
               vaddq_f16(vaddq_f16(c0o, c1o), vaddq_f16(c2o, c3o))};
    uint16_t *pc = c;
    (void)ldc; /* one row */
    if (accumulate) {
        r = add_row(r, pc);
    }
    if (ep->steps != ISF_EPILOGUE_NONE) {
        r = epilogue(r, ep);
    }
    const uint16x8x2_t out = {{vreinterpretq_u16_f16(r.e), vreinterpretq_u16_f16(r.o)}};
    vst2q_u16(pc, out);
}
