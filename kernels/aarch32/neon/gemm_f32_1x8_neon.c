/* fp32 1×8 row kernel, KR = 1 (VFMA, VFPv4): one row of C from gemm_f32_4x8_neon's B panels, for rows a 4-row
 * tile would pad (small m, the last m % 4 rows); also runs gemm_f16/gemm_bf16 widened to fp32.
 *
 * A is the caller's row (only 4-byte aligned), k_blocks floats, never read past. A32 VFMA has no by-scalar form,
 * so each k step broadcasts its A value while loading (VLD1.32 {d[],d[]}). Its 8 B values come in one VLD2.32 of
 * 4 D registers (GCC 12 has no vld1q_f32_x2 on A32, and two VLD1 cost one more instruction per k step): VLD2
 * deinterleaves them into even and odd columns, so the accumulators hold columns 0 2 4 6 and 1 3 5 7 and the
 * store (VST2), C and the bias (VLD2) use the same order. Per k step: 2 loads + 2 VFMA for 8 MACs.
 * One row gives only 2 accumulators per k step; 4 k steps per iteration, each with its own pair, make 8
 * independent chains, enough for a 4-cycle FMA on 2 pipes. The pairs are summed after the loop (an addition
 * order other than the 4×8 kernel's single chain, within its error bound).
 * Hot loop at -O3: GCC 12 26 instructions, clang 19 22 per 32 MACs (gemm_f32_4x8_neon: 22, 18); A32 NEON
 * loads have no immediate offset, so the compilers spend an ADD or MOV on most A addresses.
 * Registers: 8 accumulators + 2 B + 1 broadcast A per k step in flight = 11 to 14 of the 16 q. */
#include <arm_neon.h>

#include "isf_internal.h"

/* The row's even and odd columns (VLD2's order). */
typedef struct {
    float32x4_t e, o;
} row8;

static inline row8 add_row(row8 x, const float *p) {
    const float32x4x2_t y = vld2q_f32(p);
    return (row8){vaddq_f32(x.e, y.val[0]), vaddq_f32(x.o, y.val[1])};
}

/* Bias then clamp, in the contract's order; VMAX/VMIN are FMAX/FMIN (a NaN stays a NaN, the default one; −0 < +0). */
static inline row8 epilogue(row8 r, const isf_epilogue *ep) {
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        r = add_row(r, ep->bias);
    }
    if (ep->steps & ISF_EPILOGUE_CLAMP) {
        const float32x4_t lo = vdupq_n_f32(ep->min), hi = vdupq_n_f32(ep->max);
        r.e = vminq_f32(vmaxq_f32(r.e, lo), hi);
        r.o = vminq_f32(vmaxq_f32(r.o, lo), hi);
    }
    return r;
}

ISF_UKERNEL(gemm_f32_1x8_neon) {
    const float *pa = a;
    const float *pb = __builtin_assume_aligned(b, 64);
    const float32x4_t zero = vdupq_n_f32(0.0f);
    /* c<step><e|o>: even and odd columns of k step 4i + step. */
    float32x4_t c0e = zero, c0o = zero, c1e = zero, c1o = zero, c2e = zero, c2o = zero, c3e = zero, c3o = zero;

    for (size_t n = k_blocks / 4; n != 0; n--) {
        const float32x4_t a0 = vld1q_dup_f32(pa);
        const float32x4x2_t b0 = vld2q_f32(pb);
        c0e = vfmaq_f32(c0e, a0, b0.val[0]);
        c0o = vfmaq_f32(c0o, a0, b0.val[1]);
        const float32x4_t a1 = vld1q_dup_f32(pa + 1);
        const float32x4x2_t b1 = vld2q_f32(pb + 8);
        c1e = vfmaq_f32(c1e, a1, b1.val[0]);
        c1o = vfmaq_f32(c1o, a1, b1.val[1]);
        const float32x4_t a2 = vld1q_dup_f32(pa + 2);
        const float32x4x2_t b2 = vld2q_f32(pb + 16);
        c2e = vfmaq_f32(c2e, a2, b2.val[0]);
        c2o = vfmaq_f32(c2o, a2, b2.val[1]);
        const float32x4_t a3 = vld1q_dup_f32(pa + 3);
        const float32x4x2_t b3 = vld2q_f32(pb + 24);
        c3e = vfmaq_f32(c3e, a3, b3.val[0]);
        c3o = vfmaq_f32(c3o, a3, b3.val[1]);
        pa += 4;
        pb += 32;
    }
    for (size_t n = k_blocks % 4; n != 0; n--) { /* the last 0–3 k steps */
        const float32x4_t a0 = vld1q_dup_f32(pa++);
        const float32x4x2_t b0 = vld2q_f32(pb);
        c0e = vfmaq_f32(c0e, a0, b0.val[0]);
        c0o = vfmaq_f32(c0o, a0, b0.val[1]);
        pb += 8;
    }

    row8 r = {vaddq_f32(vaddq_f32(c0e, c1e), vaddq_f32(c2e, c3e)), vaddq_f32(vaddq_f32(c0o, c1o), vaddq_f32(c2o, c3o))};
    float *pc = c;
    (void)ldc; /* one row */
    if (accumulate) {
        r = add_row(r, pc);
    }
    if (ep->steps != ISF_EPILOGUE_NONE) {
        r = epilogue(r, ep);
    }
    const float32x4x2_t out = {{r.e, r.o}};
    vst2q_f32(pc, out);
}
