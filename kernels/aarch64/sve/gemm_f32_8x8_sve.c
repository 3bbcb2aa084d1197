/*
 * fp32 GEMM micro-kernel, SVE (vector-length agnostic): 8 rows x 2 vectors, fmla by lane, one k step per block
 * (KR = 1). NR = 8 at a 128-bit vector length, 2 x VL/32 in general.
 */
#include "isf_f32_sve.h"

/*
 * Named registers rather than an array. Row r, columns [0, VL/32) in c<r>0 and [VL/32, 2 VL/32) in c<r>1.
 * ld1rq replicates rows 0..3 (a0) or 4..7 (a1) of one k step into every 128-bit segment, so fmla by lane
 * multiplies a whole B vector by one row's A value whatever the vector length.
 */
#define ACC_DECL(r) svfloat32_t c##r##0 = start0, c##r##1 = start1
#define ACC_FMA(r, av, lane)                         \
    c##r##0 = svmla_lane_f32(c##r##0, b0, av, lane); \
    c##r##1 = svmla_lane_f32(c##r##1, b1, av, lane)
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE(1, steps, acc);     \
    ACC_STORE(2, steps, acc);     \
    ACC_STORE(3, steps, acc);     \
    ACC_STORE(4, steps, acc);     \
    ACC_STORE(5, steps, acc);     \
    ACC_STORE(6, steps, acc);     \
    ACC_STORE(7, steps, acc)

ISF_UKERNEL(gemm_f32_8x8_sve) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b32(); /* the tile is always full */
    ACC_STARTS();
    const size_t nr = 2 * svcntw(); /* B floats per block */
    /*
     * 16 accumulators + 2 A + 2 B = 20 of 32 Z registers; 4 loads per 16 fmla; 16 independent chains cover FMLA's
     * latency x issue rate (4 x 4 on Neoverse V2). An 8 x 3-vector tile would fit too (24 + 2 + 3 = 29) and
     * load less per fmla, but this one already keeps the FMA pipes full and it is the name's 8x8.
     */
    ISF_REPEAT_8(ACC_DECL);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        svfloat32_t a0 = svld1rq_f32(pg, pa), a1 = svld1rq_f32(pg, pa + 4);
        svfloat32_t b0 = svld1_f32(pg, pb), b1 = svld1_vnum_f32(pg, pb, 1);
        pa += 8;
        pb += nr;
        ACC_FMA(0, a0, 0);
        ACC_FMA(1, a0, 1);
        ACC_FMA(2, a0, 2);
        ACC_FMA(3, a0, 3);
        ACC_FMA(4, a1, 0);
        ACC_FMA(5, a1, 1);
        ACC_FMA(6, a1, 2);
        ACC_FMA(7, a1, 3);
    }

    TILE_FINISH();
}
