/*
 * int8 -> int32 GEMM micro-kernel, SVE SMMLA (vector-length agnostic): 8 rows x 2 vectors, 8 k steps per block.
 * NR = 4 at a 128-bit vector length, VL/32 in general. The quantized epilogue (fp32 or int8 C) runs on the rows
 * the accumulators' 2x2 blocks unzip to: isf_quant_sve.h. The body: isf_s8_8x4x8.h.
 */
#include "isf_s8_8x4x8.h"

#define BLOCK(s, pa, pb)                                      \
    ISF_LOAD_A(pa);                                           \
    b0 = svld1_s8(pg, (pb)), b1 = svld1_vnum_s8(pg, (pb), 1); \
    ISF_MMLA4(s)
#define ACC_MERGE(i)                             \
    c##i##0 = svadd_s32_x(pg, c##i##0, d##i##0); \
    c##i##1 = svadd_s32_x(pg, c##i##1, d##i##1)

ISF_UKERNEL(gemm_s8_8x4x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    svint8_t a0, a1, a2, a3, b0, b1;
    /*
     * BIAS seeds set c instead of zero: int32 addition wraps, so bias + sums (+ old C) is bit for bit the contract's
     * sums (+ old C) + bias, and the step costs a load, two zips and a branch per tile, not 8 additions.
     */
    ISF_BIAS_SEEDS;
    /* 2 sets x 8 accumulators + 4 A + 2 B = 22 of 32 Z registers; 6 loads per 8 smmla. */
    ISF_ACC_DECL(c, seed0, seed1);
    ISF_ACC_DECL(d, zero, zero);

    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        BLOCK(c, pa, pb);
        BLOCK(d, pa + 64, pb + nb);
        pa += 128;
        pb += 2 * nb;
    }
    if (k_blocks & 1) {
        BLOCK(c, pa, pb);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    ISF_TILE_FINISH;
}
