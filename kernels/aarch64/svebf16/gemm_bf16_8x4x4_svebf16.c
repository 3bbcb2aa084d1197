/*
 * bfloat16 -> fp32 GEMM micro-kernel, SVE BFMMLA (vector-length agnostic): 8 rows x 2 vectors, 4 k steps per
 * block, fp32 accumulation. NR = 4 at a 128-bit vector length, VL/32 in general. Panels are bfloat16 bits
 * (uint16_t), loaded as u16 and reinterpreted, which costs nothing.
 */
#include "isf_bf16_svebf16.h"

/*
 * ld1rq replicates rows 2i, 2i+1 x 4 k (8 bfloat16, a<i>) into every segment; a B vector is VL/16 segments of
 * 2 columns x 4 k, exactly the packed [NR][4] layout. The tile has only 8 accumulators, far fewer than BFMMLA's
 * latency x issue rate (5 x 2 = 10 on Neoverse V1/N2, 6 x 4 = 24 on V2 without accumulator forwarding), so the
 * loop does three k blocks into three independent sets (c, d, e: 24 accumulators), added together after the loop.
 */
#define LOAD_BLOCK(pa, pb)                                                              \
    a0 = LD1RQ(pa), a1 = LD1RQ((pa) + 8), a2 = LD1RQ((pa) + 16), a3 = LD1RQ((pa) + 24); \
    b0 = svreinterpret_bf16_u16(svld1_u16(pg, (pb)));                                   \
    b1 = svreinterpret_bf16_u16(svld1_vnum_u16(pg, (pb), 1))
#define BLOCK(s, pa, pb) \
    LOAD_BLOCK(pa, pb);  \
    ACC_MMLA(s, 0);      \
    ACC_MMLA(s, 1);      \
    ACC_MMLA(s, 2);      \
    ACC_MMLA(s, 3)
#define ACC_MERGE(i)                                                       \
    c##i##0 = svadd_f32_x(pg, c##i##0, svadd_f32_x(pg, d##i##0, e##i##0)); \
    c##i##1 = svadd_f32_x(pg, c##i##1, svadd_f32_x(pg, d##i##1, e##i##1))
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE(1, steps, acc);     \
    ACC_STORE(2, steps, acc);     \
    ACC_STORE(3, steps, acc)

ISF_UKERNEL(gemm_bf16_8x4x4_svebf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    const size_t nh = 2 * svcnth();    /* B bfloat16 per block */
    svbfloat16_t a0, a1, a2, a3, b0, b1;
    /* 3 sets x 8 accumulators + 4 A + 2 B = 30 of 32 Z registers; 6 loads per 8 bfmmla. */
    ACC_STARTS();
    ACC_START(c, 0);
    ACC_START(c, 1);
    ACC_START(c, 2);
    ACC_START(c, 3);
    ACC_DECL(d, 0);
    ACC_DECL(d, 1);
    ACC_DECL(d, 2);
    ACC_DECL(d, 3);
    ACC_DECL(e, 0);
    ACC_DECL(e, 1);
    ACC_DECL(e, 2);
    ACC_DECL(e, 3);

    size_t kt = k_blocks / 3;
    for (; kt > 0; kt--) {
        BLOCK(c, pa, pb);
        BLOCK(d, pa + 32, pb + nh);
        BLOCK(e, pa + 64, pb + 2 * nh);
        pa += 96;
        pb += 3 * nh;
    }
    for (size_t kr = k_blocks % 3; kr > 0; kr--) {
        BLOCK(c, pa, pb);
        pa += 32;
        pb += nh;
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    TILE_FINISH();
}
