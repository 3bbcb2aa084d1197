/*
 * fp16 GEMM micro-kernel, SVE (vector-length agnostic): 8 rows x 2 vectors, fmla .h by lane, one k step per block
 * (KR = 1), accumulation in binary16. NR = 16 at a 128-bit vector length, 2 x VL/16 in general.
 * Panels and C are binary16 bits (uint16_t); they are loaded as u16 and reinterpreted, which costs nothing.
 */
#include "isf_f16_sve.h"

/*
 * Named registers rather than an array. Row r, columns [0, VL/16) in c<r>0 and [VL/16, 2 VL/16) in c<r>1.
 * One ld1rq replicates the 8 rows' A values of one k step into every 128-bit segment; lane r selects row r.
 */
#define ACC_DECL(r) svfloat16_t c##r##0 = start0, c##r##1 = start1
#define ACC_FMA(r)                                \
    c##r##0 = svmla_lane_f16(c##r##0, b0, a0, r); \
    c##r##1 = svmla_lane_f16(c##r##1, b1, a0, r)
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE(1, steps, acc);     \
    ACC_STORE(2, steps, acc);     \
    ACC_STORE(3, steps, acc);     \
    ACC_STORE(4, steps, acc);     \
    ACC_STORE(5, steps, acc);     \
    ACC_STORE(6, steps, acc);     \
    ACC_STORE(7, steps, acc)

ISF_UKERNEL(gemm_f16_8x16_sve) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    ACC_STARTS();
    const size_t nr = 2 * svcnth(); /* B halves per block */
    /* 16 accumulators + 1 A + 2 B = 19 of 32 Z registers; 3 loads per 16 fmla. */
    ISF_REPEAT_8(ACC_DECL);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        svfloat16_t a0 = svreinterpret_f16_u16(svld1rq_u16(pg, pa));
        svfloat16_t b0 = svreinterpret_f16_u16(svld1_u16(pg, pb));
        svfloat16_t b1 = svreinterpret_f16_u16(svld1_vnum_u16(pg, pb, 1));
        pa += 8;
        pb += nr;
        ACC_FMA(0);
        ACC_FMA(1);
        ACC_FMA(2);
        ACC_FMA(3);
        ACC_FMA(4);
        ACC_FMA(5);
        ACC_FMA(6);
        ACC_FMA(7);
    }

    TILE_FINISH();
}
