/*
 * int8 -> int32 GEMM micro-kernel, SVE (vector-length agnostic): 8 rows x 2 vectors, SVE sdot by element,
 * 4 k steps per block. NR = 8 at a 128-bit vector length, 2 x VL/32 in general. Only SVE instructions (the SVE
 * SDOT is base SVE), so it runs on cores with SVE but without the Advanced SIMD dot product (A64FX). The quantized
 * epilogue (fp32 or int8 C) runs on the accumulators: isf_quant_sve.h.
 */
#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_quant_sve.h"

/* The old C is added only here, after the k loop, so the loop touches no memory but the panels. */
static inline void store_row(int32_t *c, svbool_t pg, svint32_t x0, svint32_t x1, int accumulate) {
    if (accumulate) {
        x0 = svadd_s32_x(pg, x0, svld1_s32(pg, c));
        x1 = svadd_s32_x(pg, x1, svld1_vnum_s32(pg, c, 1));
    }
    svst1_s32(pg, c, x0);
    svst1_vnum_s32(pg, c, 1, x1);
}

/*
 * Each 32-bit lane of a B vector is one column's 4 k values (the packed [NR][4] layout), of an A vector one row's:
 * ld1rq replicates rows 0..3 (a0) or 4..7 (a1) into every 128-bit segment and sdot by element broadcasts one row
 * against all the columns of a B vector. Row r, columns [0, VL/32) in c<r>0, [VL/32, 2 VL/32) in c<r>1.
 */
#define ACC_DECL(r) svint32_t c##r##0 = seed0, c##r##1 = seed1
#define ACC_DOT(r, av, lane)                         \
    c##r##0 = svdot_lane_s32(c##r##0, b0, av, lane); \
    c##r##1 = svdot_lane_s32(c##r##1, b1, av, lane)
#define ACC_STORE(r) store_row(out + (r) * ldc, pg, c##r##0, c##r##1, accumulate)

ISF_UKERNEL(gemm_s8_8x8x4_sve) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    /*
     * The epilogue's BIAS (the only step of int32 output) seeds the accumulators instead of zero: int32 addition
     * wraps, so bias + sums (+ old C) is bit for bit the contract's sums (+ old C) + bias, and the step costs a load
     * and a branch per tile, not 16 additions. CLAMP is never asked of int32 output.
     */
    svint32_t seed0 = svdup_n_s32(0), seed1 = seed0;
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        seed0 = svld1_s32(pg, ep->bias);
        seed1 = svld1_vnum_s32(pg, ep->bias, 1);
    }
    /* 16 accumulators + 2 A + 2 B = 20 of 32 Z registers; 4 loads per 16 sdot. */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        // isf-hot-loop-begin
        svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        svint8_t b0 = svld1_s8(pg, pb), b1 = svld1_vnum_s8(pg, pb, 1);
        pa += 32;
        pb += nb;
        ACC_DOT(0, a0, 0);
        ACC_DOT(1, a0, 1);
        ACC_DOT(2, a0, 2);
        ACC_DOT(3, a0, 3);
        ACC_DOT(4, a1, 0);
        ACC_DOT(5, a1, 1);
        ACC_DOT(6, a1, 2);
        ACC_DOT(7, a1, 3);
        // isf-hot-loop-end
    }

    if (isf_sve_quantized(ep->steps)) {
        const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */
        isf_sve_quant_slice(&e, 8, 0, c, ldc, accumulate, c00, c10, c20, c30, c40, c50, c60, c70);
        isf_sve_quant_slice(&e, 8, 1, c, ldc, accumulate, c01, c11, c21, c31, c41, c51, c61, c71);
        return;
    }
    ACC_STORE(0);
    ACC_STORE(1);
    ACC_STORE(2);
    ACC_STORE(3);
    ACC_STORE(4);
    ACC_STORE(5);
    ACC_STORE(6);
    ACC_STORE(7);
}
