/*
 * int8 -> int32 GEMM micro-kernel, SVE (vector-length agnostic): 8 rows x 2 vectors, SVE sdot by element,
 * 4 k steps per block. NR = 8 at a 128-bit vector length, 2 x VL/32 in general. Only SVE instructions (the SVE
 * SDOT is base SVE), so it runs on cores with SVE but without the Advanced SIMD dot product (A64FX). The quantized
 * epilogue (fp32 or int8 C) runs on the accumulators: isf_quant_sve.h. The body: isf_s8_8x8x4.h.
 */
#include "isf_s8_8x8x4.h"

ISF_UKERNEL(gemm_s8_8x8x4_sve) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    /*
     * BIAS seeds the accumulators instead of zero: int32 addition wraps, so bias + sums (+ old C) is bit for bit the
     * contract's sums (+ old C) + bias, and the step costs a load and a branch per tile, not 16 additions. CLAMP is
     * never asked of int32 output.
     */
    ISF_BIAS_SEEDS;
    /* 16 accumulators + 2 A + 2 B = 20 of 32 Z registers; 4 loads per 16 sdot. */
    ISF_ACC_DECL(seed0, seed1);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        svint8_t b0 = svld1_s8(pg, pb), b1 = svld1_vnum_s8(pg, pb, 1);
        pa += 32;
        pb += nb;
        ISF_DOT8;
    }

    ISF_TILE_FINISH;
}
