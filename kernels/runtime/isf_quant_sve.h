/*
 * The quantized epilogue of isf_internal.h for the SVE int32-summing kernels (gemm_s8's, which gemm_qs8,
 * gemm_qs8_f32 and gemm_qd8_f32 run), on the accumulators as the k loop leaves them. Include only from files
 * compiled with SVE flags.
 *
 * A kernel tests isf_sve_quantized(ep->steps) once per tile after its loop; when true, it hands its sums (BIAS
 * already in them) to isf_sve_quant_slice, one slice at a time: vector v of up to 8 rows. Each step is one branch
 * per slice, then one instruction or two per row: a branch per row and step would cost as much as the step.
 * SVE vectors are sizeless (no arrays, no struct members), so the rows travel as arguments and the code over them
 * is spelled by ISF_SVE_EACH_ROW; everything is always_inline, so they stay in the accumulators' registers.
 */
#ifndef ISAFORGE_QUANT_SVE_H
#define ISAFORGE_QUANT_SVE_H

#include <arm_sve.h>

#include "isf_internal.h"

#define ISF_SVE_INLINE static inline __attribute__((always_inline))

/*
 * Any step but BIAS and CLAMP (which the int32 path does) sends the tile here: a compare and a branch. PARTIAL and
 * ROW_OFFSET count too, though the driver sends them only with TO_F32 or TO_S8: isf_sve_quant_slice applies them
 * to int32 output as well, as the scalar definition does.
 */
ISF_SVE_INLINE int isf_sve_quantized(uint32_t steps) {
    return (steps & ~(uint32_t)(ISF_EPILOGUE_BIAS | ISF_EPILOGUE_CLAMP)) != 0;
}

#define ISF_SVE_MAGIC 0x4B400000 /* the bits of 1.5·2^23 */

/*
 * TO_S8 on one vector, as int32 lanes in [qmin, qmax]: f = (float)r · col_scale, then the clamp, the rounding and
 * the zero point in three instructions (SVE has neither FCVTNS nor, before SVE2, SQXTN). With lo = qmin − zp and
 * hi = qmax − zp, clamp(rne(f) + zp, qmin, qmax) = clamp(rne(f), lo, hi) + zp = rne(clamp(f, lo, hi)) + zp, since
 * rne keeps the order and leaves the whole numbers lo, hi as they are: FMAX lo, FMIN hi (f is never NaN: the
 * scales are finite). The clamped c lies in −255…255, so c + 1.5·2^23 lies in [2^23, 2^24), where the fp32 spacing
 * is 1: FADD rounds it to 1.5·2^23 + rne(c) (ties to even, as 1.5·2^23 is even), whose bits are bits(1.5·2^23) +
 * rne(c); subtracting bits(1.5·2^23) − zp leaves rne(c) + zp. st1b stores its low byte, the int8 value.
 */
ISF_SVE_INLINE svint32_t isf_sve_to_s8(svbool_t pg, svint32_t r, svfloat32_t col_scale, svfloat32_t lo, svfloat32_t hi,
                                       svint32_t magic) {
    svfloat32_t f = svmul_f32_x(pg, svcvt_f32_s32_x(pg, r), col_scale);
    f = svadd_n_f32_x(pg, svmin_f32_x(pg, svmax_f32_x(pg, f, lo), hi), 0x1.8p23f);
    return svsub_s32_x(pg, svreinterpret_s32_f32(f), magic);
}

/* X(r, i) for the slice's rows r0 .. r7, i their index; each X tests i < n, a constant after inlining. */
#define ISF_SVE_EACH_ROW(X) X(r0, 0) X(r1, 1) X(r2, 2) X(r3, 3) X(r4, 4) X(r5, 5) X(r6, 6) X(r7, 7)
#define ISF_SVE_ROWS_DECL \
    svint32_t r0, svint32_t r1, svint32_t r2, svint32_t r3, svint32_t r4, svint32_t r5, svint32_t r6, svint32_t r7
#define ISF_SVE_ROWS r0, r1, r2, r3, r4, r5, r6, r7
/* X(r, s, i) for rows r0 .. r7 of one slice and s0 .. s7 of the next. */
#define ISF_SVE_EACH_ROW2(X) \
    X(r0, s0, 0) X(r1, s1, 1) X(r2, s2, 2) X(r3, s3, 3) X(r4, s4, 4) X(r5, s5, 5) X(r6, s6, 6) X(r7, s7, 7)
#define ISF_SVE_ROWS_S_DECL \
    svint32_t s0, svint32_t s1, svint32_t s2, svint32_t s3, svint32_t s4, svint32_t s5, svint32_t s6, svint32_t s7
#define ISF_SVE_ROWS_S s0, s1, s2, s3, s4, s5, s6, s7
/* TO_S8's constants for ISF_SVE_STORE_S8_: qmin − out_zp, qmax − out_zp (whole numbers in −255…255, exact in fp32)
 * and bits(1.5·2^23) − out_zp. */
#define ISF_SVE_S8_CONSTANTS                                                                                    \
    svfloat32_t lo = svdup_n_f32((float)(e->qmin - e->out_zp)), hi = svdup_n_f32((float)(e->qmax - e->out_zp)); \
    svint32_t mz = svdup_n_s32(ISF_SVE_MAGIC - e->out_zp);

/* The stages of one slice, on the names isf_sve_store_f32 and isf_sve_quant_slice give them. */
#define ISF_SVE_PARTIAL_(r, i)                                                           \
    if ((i) < n) {                                                                       \
        r = svadd_s32_x(pg, r, svld1_vnum_s32(pg, e->partial + (i) * e->partial_ld, v)); \
    }
#define ISF_SVE_ROW_OFFSET_(r, i)                         \
    if ((i) < n) {                                        \
        r = svmla_n_s32_x(pg, r, cs, e->row_offset[(i)]); \
    }
#define ISF_SVE_STORE_S8_(r, i)                                                                \
    if ((i) < n) {                                                                             \
        svst1b_vnum_s32(pg, (int8_t *)c + (i) * ldc, v, isf_sve_to_s8(pg, r, sc, lo, hi, mz)); \
    }
/* Row i's two vectors (r of vector 0, s of vector 1; sc, sc1 their column scales) stored as int8. */
#define ISF_SVE_STORE2_S8_(r, s, i)                                         \
    if ((i) < n) {                                                          \
        svst1b_vnum_s32(pg, row, 0, isf_sve_to_s8(pg, r, sc, lo, hi, mz));  \
        svst1b_vnum_s32(pg, row, 1, isf_sve_to_s8(pg, s, sc1, lo, hi, mz)); \
        row += ldc;                                                         \
    }
#define ISF_SVE_STORE_S32_(r, i)                                                                     \
    if ((i) < n) {                                                                                   \
        int32_t *row = (int32_t *)c + (i) * ldc;                                                     \
        svst1_vnum_s32(pg, row, v, accumulate ? svadd_s32_x(pg, r, svld1_vnum_s32(pg, row, v)) : r); \
    }
/* Separate FMUL and FADD: FMLA would round once where the contract rounds twice. */
#define ISF_SVE_CVT_(r, i) f##i = svcvt_f32_s32_x(pg, r);
/* SMALL_SUMS (isf_internal.h): bits(1.5·2^23) + r is the fp32 1.5·2^23 + r, exact for r in [−2^22, 2^22). */
#define ISF_SVE_CVT_SMALL_(r, i) \
    f##i = svsub_n_f32_x(pg, svreinterpret_f32_s32(svadd_n_s32_x(pg, r, ISF_SVE_MAGIC)), 0x1.8p23f);
#define ISF_SVE_DECL_F_(r, i) svfloat32_t f##i;
#define ISF_SVE_ROW_SCALE_(r, i)                           \
    if ((i) < n) {                                         \
        f##i = svmul_n_f32_x(pg, f##i, e->row_scale[(i)]); \
    }
#define ISF_SVE_COL_SCALE_(r, i) f##i = svmul_f32_x(pg, f##i, sc);
#define ISF_SVE_OUT_BIAS_(r, i) f##i = svadd_f32_x(pg, f##i, ob);
#define ISF_SVE_CLAMP_(r, i) f##i = svmin_f32_x(pg, svmax_f32_x(pg, f##i, lo), hi);
#define ISF_SVE_STORE_F32_(r, i)                             \
    if ((i) < n) {                                           \
        svst1_vnum_f32(pg, (float *)c + (i) * ldc, v, f##i); \
    }

/*
 * TO_F32 on a slice: SCVTF rounds to nearest even (FPCR's default), then each step one FMUL or FADD, rounded on
 * its own; CLAMP is FMAX then FMIN, the contract's order and its NaN and signed-zero rules.
 */
ISF_SVE_INLINE void isf_sve_store_f32(const isf_epilogue *e, unsigned n, int64_t v, void *c, size_t ldc,
                                      ISF_SVE_ROWS_DECL) {
    const svbool_t pg = svptrue_b32();
    const uint32_t steps = e->steps;
    ISF_SVE_EACH_ROW(ISF_SVE_DECL_F_)
    if (steps & ISF_EPILOGUE_SMALL_SUMS) {
        ISF_SVE_EACH_ROW(ISF_SVE_CVT_SMALL_)
    } else {
        ISF_SVE_EACH_ROW(ISF_SVE_CVT_)
    }
    if (steps & ISF_EPILOGUE_ROW_SCALE) {
        ISF_SVE_EACH_ROW(ISF_SVE_ROW_SCALE_)
    }
    svfloat32_t sc = svld1_vnum_f32(pg, e->col_scale, v);
    ISF_SVE_EACH_ROW(ISF_SVE_COL_SCALE_)
    if (steps & ISF_EPILOGUE_OUT_BIAS) {
        svfloat32_t ob = svld1_vnum_f32(pg, e->out_bias, v);
        ISF_SVE_EACH_ROW(ISF_SVE_OUT_BIAS_)
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        svfloat32_t lo = svdup_n_f32(e->min), hi = svdup_n_f32(e->max);
        ISF_SVE_EACH_ROW(ISF_SVE_CLAMP_)
    }
    ISF_SVE_EACH_ROW(ISF_SVE_STORE_F32_)
}

/*
 * Every step but BIAS (which the kernels fold into their accumulators) on vector v (of svcntw() columns) of rows
 * 0 .. n-1 of the tile, r<i> row i's sums, stored into C (c: the tile's first element, ldc in output elements):
 * PARTIAL, ROW_OFFSET, then fp32, int8 or int32 output (accumulate: int32 only, C += the sums). `e` should be the
 * kernel's local copy of the epilogue: C's int8 stores may alias anything, so fields read through the caller's
 * pointer would be read again after them.
 */
ISF_SVE_INLINE void isf_sve_quant_slice(const isf_epilogue *e, unsigned n, int64_t v, void *c, size_t ldc,
                                        int accumulate, ISF_SVE_ROWS_DECL) {
    const svbool_t pg = svptrue_b32();
    const uint32_t steps = e->steps;
    if (steps & ISF_EPILOGUE_PARTIAL) {
        ISF_SVE_EACH_ROW(ISF_SVE_PARTIAL_)
    }
    if (steps & ISF_EPILOGUE_ROW_OFFSET) {
        svint32_t cs = svld1_vnum_s32(pg, e->col_sum, v);
        ISF_SVE_EACH_ROW(ISF_SVE_ROW_OFFSET_)
    }
    if (steps & ISF_EPILOGUE_TO_S8) {
        svfloat32_t sc = svld1_vnum_f32(pg, e->col_scale, v);
        ISF_SVE_S8_CONSTANTS
        ISF_SVE_EACH_ROW(ISF_SVE_STORE_S8_)
    } else if (steps & ISF_EPILOGUE_TO_F32) {
        isf_sve_store_f32(e, n, v, c, ldc, ISF_SVE_ROWS);
    } else {
        ISF_SVE_EACH_ROW(ISF_SVE_STORE_S32_)
    }
}

/* gemm_qs8's tiles: TO_S8 after BIAS alone (no PARTIAL, no ROW_OFFSET), for isf_sve_s8_slices2. */
ISF_SVE_INLINE int isf_sve_s8_only(uint32_t steps) {
    const uint32_t asked = ISF_EPILOGUE_PARTIAL | ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_TO_S8;
    return (steps & asked) == ISF_EPILOGUE_TO_S8;
}

/*
 * Such a tile's vectors 0 and 1 of rows 0 .. n-1 (r<i>, then s<i>) stored as int8, what two isf_sve_quant_slice
 * calls store, with TO_S8's constants made once and each row's two vectors stored together. Every field of `e` is
 * read before the first store, so `e` may be the caller's pointer (no copy against C aliasing it).
 */
ISF_SVE_INLINE void isf_sve_s8_slices2(const isf_epilogue *e, unsigned n, void *c, size_t ldc, ISF_SVE_ROWS_DECL,
                                       ISF_SVE_ROWS_S_DECL) {
    const svbool_t pg = svptrue_b32();
    ISF_SVE_S8_CONSTANTS
    svfloat32_t sc = svld1_vnum_f32(pg, e->col_scale, 0), sc1 = svld1_vnum_f32(pg, e->col_scale, 1);
    int8_t *row = c;
    ISF_SVE_EACH_ROW2(ISF_SVE_STORE2_S8_)
}

/*
 * The quantized epilogue of a tile of two vectors a row (rows 0 .. n-1: r<i> vector 0's sums, s<i> vector 1's), for
 * the kernels with two vectors a row once isf_sve_quantized says so: gemm_qs8's TO_S8-only tiles through
 * isf_sve_s8_slices2 (every field read before the first store), every other step set through one
 * isf_sve_quant_slice per vector on a local copy of the epilogue (C's int8 stores may alias it).
 */
ISF_SVE_INLINE void isf_sve_quant_tile2(const isf_epilogue *ep, unsigned n, void *c, size_t ldc, int accumulate,
                                        ISF_SVE_ROWS_DECL, ISF_SVE_ROWS_S_DECL) {
    if (isf_sve_s8_only(ep->steps)) {
        isf_sve_s8_slices2(ep, n, c, ldc, ISF_SVE_ROWS, ISF_SVE_ROWS_S);
        return;
    }
    const isf_epilogue e = *ep;
    isf_sve_quant_slice(&e, n, 0, c, ldc, accumulate, ISF_SVE_ROWS);
    isf_sve_quant_slice(&e, n, 1, c, ldc, accumulate, ISF_SVE_ROWS_S);
}

/* The slice of a one-row kernel: vector v of its row r. */
ISF_SVE_INLINE void isf_sve_quant_row(const isf_epilogue *e, int64_t v, void *c, int accumulate, svint32_t r) {
    isf_sve_quant_slice(e, 1, v, c, 0, accumulate, r, r, r, r, r, r, r, r);
}

/* The stages were spelled out above; the kernels see only the functions. */
#undef ISF_SVE_EACH_ROW
#undef ISF_SVE_ROWS_DECL
#undef ISF_SVE_ROWS
#undef ISF_SVE_EACH_ROW2
#undef ISF_SVE_STORE2_S8_
#undef ISF_SVE_ROWS_S_DECL
#undef ISF_SVE_ROWS_S
#undef ISF_SVE_S8_CONSTANTS
#undef ISF_SVE_PARTIAL_
#undef ISF_SVE_ROW_OFFSET_
#undef ISF_SVE_STORE_S8_
#undef ISF_SVE_STORE_S32_
#undef ISF_SVE_CVT_
#undef ISF_SVE_CVT_SMALL_
#undef ISF_SVE_DECL_F_
#undef ISF_SVE_ROW_SCALE_
#undef ISF_SVE_COL_SCALE_
#undef ISF_SVE_OUT_BIAS_
#undef ISF_SVE_CLAMP_
#undef ISF_SVE_STORE_F32_

#endif
