/*
 * The quantized epilogue (isf_internal.h, "The epilogue": PARTIAL, BIAS, ROW_OFFSET, then TO_F32 or TO_S8) on
 * NEON registers, for the C-intrinsic gemm_s8 kernels of both arches. A kernel hands over its tile's raw int32
 * sums (nothing added yet: accumulate is always 0 with a quantized output, and every step, BIAS included, is
 * applied here), a row or a tile of rows at a time, and the helpers store fp32 or int8 C. The int32 store stays in
 * the kernel, untouched: a kernel branches here only when ep->steps has ISF_EPILOGUE_QUANTIZED.
 *
 * Straight-line rows: the steps not asked for become identities (bias 0, col_sum 0, row_scale 1, out_bias −0,
 * clamp ±Inf), exact for every value (x + −0 = x, −0 included; x · 1 = x), so the arithmetic of a row is the same
 * few instructions whatever the steps; only the parameter loads (and PARTIAL's) depend on them.
 *
 * Exactness, as isf_epilogue_store_s32 defines it:
 *  - int32 steps wrap modulo 2^32, as vector adds and multiply-accumulates do;
 *  - fp32 steps are separate roundings: vmulq/vaddq, never a fused multiply-add (GCC: -std=c11 means
 *    -ffp-contract=off; clang contracts only within one source expression, and each intrinsic is its own; clang
 *    may still pair them into AArch32's VMLA.F32, which rounds the product first, so the bits are the same);
 *  - CLAMP is vmaxq_f32 then vminq_f32: FMAX / FMIN on AArch64, VMAX / VMIN on AArch32 (−0 < +0 for both);
 *  - TO_S8 on AArch64: fcvtns (nearest, ties to even, saturating to int32), sqxtn to int16, sqadd of the zero
 *    point in int16, sqxtn to int8, then smax qmin, smin qmax: every saturation lies beyond the int8 clamp on the
 *    side of the true value (rne(f) beyond int16 becomes 2^15 − 1 or −2^15, and that plus any zp in −128…127 is
 *    still beyond int8 on the same side), so the byte is clamp(rne(f) + zp, qmin, qmax) in unbounded integers.
 *    gemm_qs8's tiles (TO_S8 after BIAS alone: isf_qn_s8_only) skip the identity steps and their loads.
 *    AArch32 has no vcvtn before ARMv8 (this header serves the armv7 baseline and the 32-bit dotprod / i8mm
 *    kernels alike): f is clamped to ±2^22 (past it the int8 clamp decides anyway), then f + 1.5·2^23 rounds to
 *    nearest even, and since that sum lies in [2^23, 2^24] its bits minus those of 1.5·2^23 are rne(f) exactly
 *    (2^24's bits give 2^22 too); subtracting (bits(1.5·2^23) − zp) adds the zero point in the same
 *    instruction, then vqmovn and the clamp as above.
 *  - AArch32 NEON flushes subnormal inputs and results to zero and gives the default NaN. The plans refuse
 *    subnormal or infinite scales, subnormal fp32 bias and clamp bounds, and quantize a row whose scale would be
 *    subnormal as a zero row, so no input is flushed: TO_F32 differs from the scalar definition only where
 *    f · row scale · scale, or its sum with out_bias, is subnormal (|x| < 2^−126). TO_S8 is exact everywhere: a
 *    subnormal f rounds to 0 either way.
 */
#ifndef ISAFORGE_QUANT_NEON_H
#define ISAFORGE_QUANT_NEON_H

#include <arm_neon.h>
#include <string.h>

#include "isf_internal.h"

#define ISF_QN_INLINE static inline __attribute__((always_inline))

/* Four columns' parameters, identities where a step is off. */
typedef struct {
    int32x4_t bias, col_sum;
    float32x4_t scale, out_bias;
} isf_qn_cols;

/* One row's parameters, identities where a step is off. */
typedef struct {
    int32_t offset;
    float scale;
} isf_qn_row;

/* TO_F32's clamp, ±Inf when off. */
typedef struct {
    float32x4_t lo, hi;
} isf_qn_clamp;

/* TO_S8's per-tile constants. */
typedef struct {
#if defined(__aarch64__)
    int16x8_t zp; /* out_zp, added after the first narrowing */
#else
    int32x4_t zp; /* bits(1.5·2^23) − out_zp */
#endif
    int8x16_t qmin, qmax;
} isf_qn_s8;

#define ISF_QN_MAGIC 0x4B400000 /* the bits of 1.5·2^23 */

ISF_QN_INLINE isf_qn_cols isf_qn_cols_load(const isf_epilogue *ep, size_t j) {
    const uint32_t s = ep->steps;
    const uint32_t f32_bias = ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_OUT_BIAS;
    isf_qn_cols cc;
    cc.bias = s & ISF_EPILOGUE_BIAS ? vld1q_s32((const int32_t *)ep->bias + j) : vdupq_n_s32(0);
    cc.col_sum = s & ISF_EPILOGUE_ROW_OFFSET ? vld1q_s32(ep->col_sum + j) : vdupq_n_s32(0);
    cc.scale = vld1q_f32(ep->col_scale + j);
    cc.out_bias = (s & f32_bias) == f32_bias ? vld1q_f32(ep->out_bias + j) : vdupq_n_f32(-0.0f);
    return cc;
}

ISF_QN_INLINE isf_qn_row isf_qn_row_load(const isf_epilogue *ep, size_t i) {
    isf_qn_row rw = {0, 1.0f};
    if (ep->steps & ISF_EPILOGUE_ROW_OFFSET) {
        rw.offset = ep->row_offset[i];
    }
    if (ep->steps & ISF_EPILOGUE_ROW_SCALE) {
        rw.scale = ep->row_scale[i];
    }
    return rw;
}

ISF_QN_INLINE isf_qn_clamp isf_qn_clamp_load(const isf_epilogue *ep) {
    const int on = (ep->steps & ISF_EPILOGUE_CLAMP) != 0;
    return (isf_qn_clamp){vdupq_n_f32(on ? ep->min : -__builtin_inff()), vdupq_n_f32(on ? ep->max : __builtin_inff())};
}

ISF_QN_INLINE isf_qn_s8 isf_qn_s8_load(const isf_epilogue *ep) {
#if defined(__aarch64__)
    const int16x8_t zp = vdupq_n_s16((int16_t)ep->out_zp);
#else
    const int32x4_t zp = vdupq_n_s32(ISF_QN_MAGIC - ep->out_zp);
#endif
    return (isf_qn_s8){zp, vdupq_n_s8((int8_t)ep->qmin), vdupq_n_s8((int8_t)ep->qmax)};
}

/* PARTIAL, BIAS and ROW_OFFSET on the sums of row i, columns j..j+3 (int32, wrapping). */
ISF_QN_INLINE int32x4_t isf_qn_sums(const isf_epilogue *ep, const isf_qn_cols *cc, isf_qn_row rw, size_t i, size_t j,
                                    int32x4_t r) {
    if (ep->steps & ISF_EPILOGUE_PARTIAL) {
        r = vaddq_s32(r, vld1q_s32(ep->partial + i * ep->partial_ld + j));
    }
    r = vaddq_s32(r, cc->bias);
    return vmlaq_n_s32(r, cc->col_sum, rw.offset);
}

/* TO_F32 with ROW_SCALE, OUT_BIAS and CLAMP, one rounding per step in the contract's order. */
ISF_QN_INLINE float32x4_t isf_qn_f32(const isf_qn_clamp *o, const isf_qn_cols *cc, isf_qn_row rw, int32x4_t r) {
    float32x4_t f = vcvtq_f32_s32(r);
    f = vmulq_n_f32(f, rw.scale);
    f = vmulq_f32(f, cc->scale);
    f = vaddq_f32(f, cc->out_bias);
    return vminq_f32(vmaxq_f32(f, o->lo), o->hi);
}

/* TO_S8 up to the narrowing, as int32 (saturated far outside int8): rne((float)r · col_scale), to which
 * isf_qn_s8_s16 adds out_zp on AArch64; rne((float)r · col_scale) + out_zp on AArch32. */
ISF_QN_INLINE int32x4_t isf_qn_s8_wide(const isf_qn_s8 *o, const isf_qn_cols *cc, int32x4_t r) {
    float32x4_t f = vmulq_f32(vcvtq_f32_s32(r), cc->scale);
#if defined(__aarch64__)
    (void)o;
    return vcvtnq_s32_f32(f);
#else
    f = vminq_f32(vmaxq_f32(f, vdupq_n_f32(-0x1p22f)), vdupq_n_f32(0x1p22f));
    return vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(f, vdupq_n_f32(0x1.8p23f))), o->zp);
#endif
}

/* Eight int16 from isf_qn_s8_wide's values, saturated, with the zero point (AArch64: saturating, in int16). */
ISF_QN_INLINE int16x8_t isf_qn_s8_s16(const isf_qn_s8 *o, int32x4_t q0, int32x4_t q1) {
    const int16x8_t h = vcombine_s16(vqmovn_s32(q0), vqmovn_s32(q1));
#if defined(__aarch64__)
    return vqaddq_s16(h, o->zp);
#else
    (void)o;
    return h;
#endif
}

/* Sixteen (or eight) int8 from isf_qn_s8_wide's values, in argument order, saturated, then clamped. */
ISF_QN_INLINE int8x16_t isf_qn_s8_narrow16(const isf_qn_s8 *o, int32x4_t q0, int32x4_t q1, int32x4_t q2, int32x4_t q3) {
    const int8x16_t b = vcombine_s8(vqmovn_s16(isf_qn_s8_s16(o, q0, q1)), vqmovn_s16(isf_qn_s8_s16(o, q2, q3)));
    return vminq_s8(vmaxq_s8(b, o->qmin), o->qmax);
}

ISF_QN_INLINE int8x8_t isf_qn_s8_narrow8(const isf_qn_s8 *o, int32x4_t q0, int32x4_t q1) {
    const int8x8_t b = vqmovn_s16(isf_qn_s8_s16(o, q0, q1));
    return vmin_s8(vmax_s8(b, vget_low_s8(o->qmin)), vget_low_s8(o->qmax));
}

/* TO_S8 with no step before it but BIAS (gemm_qs8 with k in one Kc block): the tile's parameters are the bias and
 * the column scales, none per row, so the helpers below skip the identity steps and their loads. */
ISF_QN_INLINE int isf_qn_s8_only(uint32_t steps) {
    const uint32_t asked = ISF_EPILOGUE_PARTIAL | ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_TO_S8;
    return (steps & asked) == ISF_EPILOGUE_TO_S8;
}

/* Columns j..j+3 of such a tile: the bias (0 without BIAS) and the scales; col_sum and out_bias unused. */
ISF_QN_INLINE isf_qn_cols isf_qn_s8_only_cols(const isf_epilogue *ep, size_t j) {
    isf_qn_cols cc;
    cc.bias = ep->steps & ISF_EPILOGUE_BIAS ? vld1q_s32((const int32_t *)ep->bias + j) : vdupq_n_s32(0);
    cc.col_sum = vdupq_n_s32(0);
    cc.scale = vld1q_f32(ep->col_scale + j);
    cc.out_bias = vdupq_n_f32(-0.0f);
    return cc;
}

/* isf_qn_s8_wide of r + bias (wrapping), for such a tile. */
ISF_QN_INLINE int32x4_t isf_qn_s8_only_wide(const isf_qn_s8 *o, const isf_qn_cols *cc, int32x4_t r) {
    return isf_qn_s8_wide(o, cc, vaddq_s32(r, cc->bias));
}

/* Four int8 at any byte address (a 32-bit lane store would assume 4-byte alignment). */
ISF_QN_INLINE void isf_qn_store4(int8_t *p, uint32_t bytes) { memcpy(p, &bytes, sizeof bytes); }

/*
 * One row of C (row i = 0 of the tile), ng groups of 4 columns (ng a constant, 1 to 4): r<g> holds columns
 * 4g..4g+3; the unused arguments are ignored. int8 C goes out in one store for 16 or 8 columns, 8 + 4 for 12.
 */
/* int8 C of one row from isf_qn_s8_wide's values q<g> of columns 4g..4g+3 (isf_qn_store_row's ng). */
ISF_QN_INLINE void isf_qn_s8_row_out(const isf_qn_s8 *o, int8_t *out, size_t ng, int32x4_t q0, int32x4_t q1,
                                     int32x4_t q2, int32x4_t q3) {
    if (ng <= 2) {
        const int8x8_t b = isf_qn_s8_narrow8(o, q0, q1);
        if (ng == 2) {
            vst1_s8(out, b);
        } else {
            isf_qn_store4(out, vget_lane_u32(vreinterpret_u32_s8(b), 0));
        }
        return;
    }
    const int8x16_t b = isf_qn_s8_narrow16(o, q0, q1, q2, q3);
    if (ng == 4) {
        vst1q_s8(out, b);
    } else {
        vst1_s8(out, vget_low_s8(b));
        isf_qn_store4(out + 8, vgetq_lane_u32(vreinterpretq_u32_s8(b), 2));
    }
}

ISF_QN_INLINE void isf_qn_store_row(const isf_epilogue *ep, void *c, size_t ng, int32x4_t r0, int32x4_t r1,
                                    int32x4_t r2, int32x4_t r3) {
    if (isf_qn_s8_only(ep->steps)) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        const isf_qn_cols c0 = isf_qn_s8_only_cols(ep, 0);
        const isf_qn_cols c1 = ng > 1 ? isf_qn_s8_only_cols(ep, 4) : c0;
        const isf_qn_cols c2 = ng > 2 ? isf_qn_s8_only_cols(ep, 8) : c0;
        const isf_qn_cols c3 = ng > 3 ? isf_qn_s8_only_cols(ep, 12) : c0;
        const int32x4_t q0 = isf_qn_s8_only_wide(&o, &c0, r0);
        const int32x4_t q1 = ng > 1 ? isf_qn_s8_only_wide(&o, &c1, r1) : q0;
        const int32x4_t q2 = ng > 2 ? isf_qn_s8_only_wide(&o, &c2, r2) : q0;
        const int32x4_t q3 = ng > 3 ? isf_qn_s8_only_wide(&o, &c3, r3) : q2;
        isf_qn_s8_row_out(&o, c, ng, q0, q1, q2, q3);
        return;
    }
    const isf_qn_row rw = isf_qn_row_load(ep, 0);
    const isf_qn_cols c0 = isf_qn_cols_load(ep, 0);
    const isf_qn_cols c1 = ng > 1 ? isf_qn_cols_load(ep, 4) : c0;
    const isf_qn_cols c2 = ng > 2 ? isf_qn_cols_load(ep, 8) : c0;
    const isf_qn_cols c3 = ng > 3 ? isf_qn_cols_load(ep, 12) : c0;
    r0 = isf_qn_sums(ep, &c0, rw, 0, 0, r0);
    r1 = ng > 1 ? isf_qn_sums(ep, &c1, rw, 0, 4, r1) : r0;
    r2 = ng > 2 ? isf_qn_sums(ep, &c2, rw, 0, 8, r2) : r0;
    r3 = ng > 3 ? isf_qn_sums(ep, &c3, rw, 0, 12, r3) : r0;
    if (ep->steps & ISF_EPILOGUE_TO_S8) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        const int32x4_t q0 = isf_qn_s8_wide(&o, &c0, r0), q1 = ng > 1 ? isf_qn_s8_wide(&o, &c1, r1) : q0;
        const int32x4_t q2 = ng > 2 ? isf_qn_s8_wide(&o, &c2, r2) : q0, q3 = ng > 3 ? isf_qn_s8_wide(&o, &c3, r3) : q2;
        isf_qn_s8_row_out(&o, c, ng, q0, q1, q2, q3);
        return;
    }
    const isf_qn_clamp o = isf_qn_clamp_load(ep);
    float *out = c;
    vst1q_f32(out, isf_qn_f32(&o, &c0, rw, r0));
    if (ng > 1) {
        vst1q_f32(out + 4, isf_qn_f32(&o, &c1, rw, r1));
    }
    if (ng > 2) {
        vst1q_f32(out + 8, isf_qn_f32(&o, &c2, rw, r2));
    }
    if (ng > 3) {
        vst1q_f32(out + 12, isf_qn_f32(&o, &c3, rw, r3));
    }
}

/*
 * A tile of mr rows of ng groups of 4 columns (both constants; ng 1 to 4): r[i * ng + g] holds row i, columns
 * 4g..4g+3, ldc in C's elements. The column parameters are loaded once for the tile, the rows' once per row. For the
 * kernels of more than one row whose tile is wider than 4 columns (gemm_f32's kernels have theirs); a kernel calls
 * it from a function of its own kept out of line, so its hot loop's register allocation is left alone.
 */
ISF_QN_INLINE void isf_qn_store_rows(const isf_epilogue *ep, void *c, size_t ldc, size_t mr, size_t ng,
                                     const int32x4_t *r) {
    isf_qn_cols cc[4];
    int32x4_t q[4];
    if (isf_qn_s8_only(ep->steps)) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        for (size_t g = 0; g < ng; g++) {
            cc[g] = isf_qn_s8_only_cols(ep, 4 * g);
        }
        for (size_t i = 0; i < mr; i++) {
            for (size_t g = 0; g < 4; g++) {
                q[g] = g < ng ? isf_qn_s8_only_wide(&o, &cc[g], r[i * ng + g]) : q[0];
            }
            isf_qn_s8_row_out(&o, (int8_t *)c + i * ldc, ng, q[0], q[1], q[2], q[3]);
        }
        return;
    }
    for (size_t g = 0; g < ng; g++) {
        cc[g] = isf_qn_cols_load(ep, 4 * g);
    }
    if (ep->steps & ISF_EPILOGUE_TO_S8) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        for (size_t i = 0; i < mr; i++) {
            const isf_qn_row rw = isf_qn_row_load(ep, i);
            for (size_t g = 0; g < 4; g++) {
                q[g] = g < ng ? isf_qn_s8_wide(&o, &cc[g], isf_qn_sums(ep, &cc[g], rw, i, 4 * g, r[i * ng + g])) : q[0];
            }
            isf_qn_s8_row_out(&o, (int8_t *)c + i * ldc, ng, q[0], q[1], q[2], q[3]);
        }
        return;
    }
    const isf_qn_clamp o = isf_qn_clamp_load(ep);
    for (size_t i = 0; i < mr; i++) {
        const isf_qn_row rw = isf_qn_row_load(ep, i);
        for (size_t g = 0; g < ng; g++) {
            vst1q_f32((float *)c + i * ldc + 4 * g,
                      isf_qn_f32(&o, &cc[g], rw, isf_qn_sums(ep, &cc[g], rw, i, 4 * g, r[i * ng + g])));
        }
    }
}

/*
 * A tile of mr rows (a constant, 2 to 4) of 4 columns: r<i> holds row i, ldc in C's elements. The rows' int8 go
 * through one narrowing (two for 2 rows of 4 bytes would waste half of each) and out as one 4-byte store a row.
 */
/* int8 C of mr rows of 4 columns from isf_qn_s8_wide's values q<i> of row i (isf_qn_store_4cols's mr). */
ISF_QN_INLINE void isf_qn_s8_4cols_out(const isf_qn_s8 *o, int8_t *out, size_t ldc, size_t mr, int32x4_t q0,
                                       int32x4_t q1, int32x4_t q2, int32x4_t q3) {
    if (mr == 2) {
        const uint32x2_t b = vreinterpret_u32_s8(isf_qn_s8_narrow8(o, q0, q1));
        isf_qn_store4(out, vget_lane_u32(b, 0));
        isf_qn_store4(out + ldc, vget_lane_u32(b, 1));
        return;
    }
    const uint32x4_t b = vreinterpretq_u32_s8(isf_qn_s8_narrow16(o, q0, q1, q2, q3));
    isf_qn_store4(out, vgetq_lane_u32(b, 0));
    isf_qn_store4(out + ldc, vgetq_lane_u32(b, 1));
    isf_qn_store4(out + 2 * ldc, vgetq_lane_u32(b, 2));
    if (mr > 3) {
        isf_qn_store4(out + 3 * ldc, vgetq_lane_u32(b, 3));
    }
}

ISF_QN_INLINE void isf_qn_store_4cols(const isf_epilogue *ep, void *c, size_t ldc, size_t mr, int32x4_t r0,
                                      int32x4_t r1, int32x4_t r2, int32x4_t r3) {
    if (isf_qn_s8_only(ep->steps)) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        const isf_qn_cols cc = isf_qn_s8_only_cols(ep, 0);
        const int32x4_t q0 = isf_qn_s8_only_wide(&o, &cc, r0), q1 = isf_qn_s8_only_wide(&o, &cc, r1);
        const int32x4_t q2 = mr > 2 ? isf_qn_s8_only_wide(&o, &cc, r2) : q0;
        const int32x4_t q3 = mr > 3 ? isf_qn_s8_only_wide(&o, &cc, r3) : q2;
        isf_qn_s8_4cols_out(&o, c, ldc, mr, q0, q1, q2, q3);
        return;
    }
    const isf_qn_cols cc = isf_qn_cols_load(ep, 0);
    const isf_qn_row w0 = isf_qn_row_load(ep, 0), w1 = isf_qn_row_load(ep, 1);
    const isf_qn_row w2 = mr > 2 ? isf_qn_row_load(ep, 2) : w0, w3 = mr > 3 ? isf_qn_row_load(ep, 3) : w0;
    r0 = isf_qn_sums(ep, &cc, w0, 0, 0, r0);
    r1 = isf_qn_sums(ep, &cc, w1, 1, 0, r1);
    r2 = mr > 2 ? isf_qn_sums(ep, &cc, w2, 2, 0, r2) : r0;
    r3 = mr > 3 ? isf_qn_sums(ep, &cc, w3, 3, 0, r3) : r0;
    if (ep->steps & ISF_EPILOGUE_TO_S8) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        const int32x4_t q0 = isf_qn_s8_wide(&o, &cc, r0), q1 = isf_qn_s8_wide(&o, &cc, r1);
        const int32x4_t q2 = mr > 2 ? isf_qn_s8_wide(&o, &cc, r2) : q0, q3 = mr > 3 ? isf_qn_s8_wide(&o, &cc, r3) : q2;
        isf_qn_s8_4cols_out(&o, c, ldc, mr, q0, q1, q2, q3);
        return;
    }
    const isf_qn_clamp o = isf_qn_clamp_load(ep);
    float *out = c;
    vst1q_f32(out, isf_qn_f32(&o, &cc, w0, r0));
    vst1q_f32(out + ldc, isf_qn_f32(&o, &cc, w1, r1));
    if (mr > 2) {
        vst1q_f32(out + 2 * ldc, isf_qn_f32(&o, &cc, w2, r2));
    }
    if (mr > 3) {
        vst1q_f32(out + 3 * ldc, isf_qn_f32(&o, &cc, w3, r3));
    }
}

#endif
