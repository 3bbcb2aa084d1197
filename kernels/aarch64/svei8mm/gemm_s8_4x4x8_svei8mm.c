/*
 * int8 -> int32 GEMM 4-row kernel, SVE SMMLA (vector-length agnostic): 4 rows x 2 vectors, 8 k steps per block.
 * NR = 4 at a 128-bit vector length, VL/32 in general: the B panels of gemm_s8_8x4x8_svei8mm, for the last 2 to 4
 * rows of a GEMM in one pass over B where the row kernel would stream B once per row. The body (the accumulators'
 * unzip to rows, the bias seeds, the quantized epilogue): isf_s8_8x4x8.h, the 8-row kernel's.
 *
 * Per 4 blocks: 8 ld1rq of A + 8 B loads + 16 smmla + 2 pointer steps + subs + b.ne = 36 instructions for 16
 * smmla, 512 MACs at 128 bits (0.070 per MAC; the 8-row kernel's loop: 32, 0.0625). With 4 rows a B vector serves
 * 2 smmla, not 4: one load per smmla, so the load pipes bound it where SMMLA issues 4 a cycle. llvm-mca (clang
 * 19): 99.8 % of SMMLA's peak on Neoverse N2 and V1, 74.8 % on V2 (3 loads a cycle: 16 loads per 16 smmla).
 */
#include "isf_s8_8x4x8.h"

#define BLOCK(s, pa, pb)                                      \
    ISF_LOAD_A2(pa);                                          \
    b0 = svld1_s8(pg, (pb)), b1 = svld1_vnum_s8(pg, (pb), 1); \
    ISF_MMLA2(s)
#define ACC_MERGE(i)                                                                                 \
    c##i##0 = svadd_s32_x(pg, svadd_s32_x(pg, c##i##0, d##i##0), svadd_s32_x(pg, e##i##0, f##i##0)); \
    c##i##1 = svadd_s32_x(pg, svadd_s32_x(pg, c##i##1, d##i##1), svadd_s32_x(pg, e##i##1, f##i##1))

ISF_UKERNEL(gemm_s8_4x4x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    svint8_t a0, a1, b0, b1;
    /* BIAS seeds set c instead of zero (int32 addition wraps): a load, two zips and a branch per tile. */
    ISF_BIAS_SEEDS;
    /*
     * A set is 4 accumulators (2 row pairs x 2 B vectors), a third of SMMLA's latency x issue rate (3 x 4 on
     * Neoverse V2), so 4 blocks go to 4 independent sets (c, d, e, f), added after the loop. 16 accumulators + 2 A
     * + 2 B per block in flight fit the 32 Z registers.
     */
    ISF_ACC_DECL2(c, seed0, seed1);
    ISF_ACC_DECL2(d, zero, zero);
    ISF_ACC_DECL2(e, zero, zero);
    ISF_ACC_DECL2(f, zero, zero);

    for (size_t kq = k_blocks / 4; kq > 0; kq--) {
        BLOCK(c, pa, pb);
        BLOCK(d, pa + 32, pb + nb);
        BLOCK(e, pa + 64, pb + 2 * nb);
        BLOCK(f, pa + 96, pb + 3 * nb);
        pa += 128;
        pb += 4 * nb;
    }
    for (size_t kr = k_blocks % 4; kr > 0; kr--) {
        BLOCK(c, pa, pb);
        pa += 32;
        pb += nb;
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ISF_TILE_FINISH_ROWS(4);
}
