/*
 * bfloat16 -> fp32 GEMM 4-row kernel, SVE BFMMLA (vector-length agnostic): 4 rows x 4 vectors, 4 k steps per
 * block, fp32 accumulation. NR = 8 at a 128-bit vector length, VL/16 in general: the B panels of
 * gemm_bf16_8x8x4_svebf16, for the last 2 to 4 rows of a GEMM in one pass over B where the row kernel would stream
 * B once per row. The store and epilogue: isf_bf16_svebf16.h, the 8-row kernel's.
 *
 * Per 2 blocks: 4 ld1rq of A + 8 B loads + 16 bfmmla + 2 pointer steps + subs + b.ne = 32 instructions for 256 MACs
 * at 128 bits (0.125 per MAC; the 4x4x4's: 0.14). With 4 rows a B vector serves 2 bfmmla: 3 loads per 4 bfmmla.
 */
#include "isf_bf16_svebf16.h"

/*
 * A set is 8 accumulators (2 row pairs x 4 B vectors), fewer than BFMMLA's latency x issue rate (5 x 2 on Neoverse
 * V1/N2), so 2 blocks go to 2 independent sets (c, d: 16 accumulators), added after the loop; 16 + 2 A + 4 B = 22
 * Z registers.
 */
#define BLOCK(s, pa, pb, v)                                                                   \
    b0 = LD_B(pb, v), b1 = LD_B(pb, (v) + 1), b2 = LD_B(pb, (v) + 2), b3 = LD_B(pb, (v) + 3); \
    a0 = LD1RQ(pa), a1 = LD1RQ((pa) + 8);                                                     \
    ACC_MMLA(s, 0);                                                                           \
    ACC_MMLA_HI(s, 0);                                                                        \
    ACC_MMLA(s, 1);                                                                           \
    ACC_MMLA_HI(s, 1)
#define SET_START(s)    \
    ACC_START(s, 0);    \
    ACC_START_HI(s, 0); \
    ACC_START(s, 1);    \
    ACC_START_HI(s, 1)
#define SET_DECL(s)    \
    ACC_DECL(s, 0);    \
    ACC_DECL_HI(s, 0); \
    ACC_DECL(s, 1);    \
    ACC_DECL_HI(s, 1)
#define ACC_MERGE(i)                             \
    c##i##0 = svadd_f32_x(pg, c##i##0, d##i##0); \
    c##i##1 = svadd_f32_x(pg, c##i##1, d##i##1); \
    c##i##2 = svadd_f32_x(pg, c##i##2, d##i##2); \
    c##i##3 = svadd_f32_x(pg, c##i##3, d##i##3)
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE_HI(0, steps, acc);  \
    ACC_STORE(1, steps, acc);     \
    ACC_STORE_HI(1, steps, acc)

ISF_UKERNEL(gemm_bf16_4x8x4_svebf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    svbfloat16_t a0, a1, b0, b1, b2, b3;
    ACC_STARTS();
    ACC_STARTS_HI();
    SET_START(c);
    SET_DECL(d);

    for (size_t kt = k_blocks / 2; kt > 0; kt--) {
        BLOCK(c, pa, pb, 0);
        BLOCK(d, pa + 16, pb, 4);
        pa += 32;
        pb += 8 * svcnth();
    }
    if (k_blocks & 1) {
        BLOCK(c, pa, pb, 0);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    TILE_FINISH();
}
