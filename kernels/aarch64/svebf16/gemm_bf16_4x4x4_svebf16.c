/*
 * bfloat16 -> fp32 GEMM 4-row kernel, SVE BFMMLA (vector-length agnostic): 4 rows x 2 vectors, 4 k steps per
 * block, fp32 accumulation. NR = 4 at a 128-bit vector length, VL/32 in general: the B panels of
 * gemm_bf16_8x4x4_svebf16, for the last 2 to 4 rows of a GEMM in one pass over B where the row kernel would stream
 * B once per row. The store and epilogue: isf_bf16_svebf16.h, the 8-row kernel's.
 *
 * Per 4 blocks: 8 ld1rq of A + 8 B loads + 16 bfmmla + 2 pointer steps + subs + b.ne = 36 instructions for 16
 * bfmmla, 256 MACs at 128 bits (0.14 per MAC; the 8-row kernel's loop: 46 for 24 bfmmla, 0.12). With 4 rows a B
 * vector serves 2 bfmmla, not 4: one load per bfmmla, so the load pipes bound it where BFMMLA issues 4 a cycle.
 * llvm-mca (clang 19): 99.8 % of BFMMLA's peak on Neoverse N2, 99.7 % on V1, 74.8 % on V2 (3 loads a cycle).
 */
#include "isf_bf16_svebf16.h"

/*
 * ld1rq replicates rows 0, 1 (a0) or 2, 3 (a1) x 4 k into every segment. A set is 4 accumulators, fewer than
 * BFMMLA's latency x issue rate (5 x 2 = 10 on Neoverse V1/N2), so 4 blocks go to 4 independent sets (c, d, e, f:
 * 16 accumulators), added after the loop; 16 + 2 A + 2 B per block in flight fit the 32 Z registers.
 */
#define BLOCK(s, pa, pb)                                      \
    a0 = LD1RQ(pa), a1 = LD1RQ((pa) + 8);                     \
    b0 = svreinterpret_bf16_u16(svld1_u16(pg, (pb)));         \
    b1 = svreinterpret_bf16_u16(svld1_vnum_u16(pg, (pb), 1)); \
    ACC_MMLA(s, 0);                                           \
    ACC_MMLA(s, 1)
#define ACC_MERGE(i)                                                                                 \
    c##i##0 = svadd_f32_x(pg, svadd_f32_x(pg, c##i##0, d##i##0), svadd_f32_x(pg, e##i##0, f##i##0)); \
    c##i##1 = svadd_f32_x(pg, svadd_f32_x(pg, c##i##1, d##i##1), svadd_f32_x(pg, e##i##1, f##i##1))
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE(1, steps, acc)

ISF_UKERNEL(gemm_bf16_4x4x4_svebf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    const size_t nh = 2 * svcnth();    /* B bfloat16 per block */
    svbfloat16_t a0, a1, b0, b1;
    ACC_STARTS();
    ACC_START(c, 0);
    ACC_START(c, 1);
    ACC_DECL(d, 0);
    ACC_DECL(d, 1);
    ACC_DECL(e, 0);
    ACC_DECL(e, 1);
    ACC_DECL(f, 0);
    ACC_DECL(f, 1);

    for (size_t kq = k_blocks / 4; kq > 0; kq--) {
        BLOCK(c, pa, pb);
        BLOCK(d, pa + 16, pb + nh);
        BLOCK(e, pa + 32, pb + 2 * nh);
        BLOCK(f, pa + 48, pb + 3 * nh);
        pa += 64;
        pb += 4 * nh;
    }
    for (size_t kr = k_blocks % 4; kr > 0; kr--) {
        BLOCK(c, pa, pb);
        pa += 16;
        pb += nh;
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    TILE_FINISH();
}
