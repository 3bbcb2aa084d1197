/*
 * bfloat16 -> fp32 GEMM row kernel, SVE BFDOT (vector-length agnostic): 1 row x 4 vectors, 4 k steps per block,
 * fp32 accumulation. NR = 8 at a 128-bit vector length, VL/16 in general: the B panels of gemm_bf16_8x8x4_svebf16,
 * for rows that kernel would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks x 4 contiguous
 * bfloat16, not padded further, maybe unaligned. The BFDOT scheme, store and epilogue: isf_bf16_svebf16.h, with
 * gemm_bf16_1x4x4_svebf16.
 *
 * Per 4 blocks: 4 ld1rd + 16 B loads + 16 bfdot + pointer and loop steps: one B load per bfdot is inherent to one
 * row (each B value is used once), so the load pipes bound it as the 1x4x4's; one ld1rd serves 4 bfdot (1x4x4: 2).
 */
#include "isf_bf16_svebf16.h"

/*
 * 4 blocks into 4 independent accumulator sets of 4 (s<k><v> for B vector v): 16 chains cover BFDOT's latency x
 * issue rate (4 x 2 on Neoverse V1); summed after the loop. 16 + 4 B + the A block fit the 32 Z registers.
 */
#define ROW_DECL(k) svfloat32_t s##k##0 = svdup_n_f32(0.0f), s##k##1 = s##k##0, s##k##2 = s##k##0, s##k##3 = s##k##0
#define ACC_DOT(k)                                                 \
    do {                                                           \
        svbfloat16_t ak = row_block(pa + 4 * (k));                 \
        s##k##0 = svbfdot_f32(s##k##0, LD_B(pb, 4 * (k)), ak);     \
        s##k##1 = svbfdot_f32(s##k##1, LD_B(pb, 4 * (k) + 1), ak); \
        s##k##2 = svbfdot_f32(s##k##2, LD_B(pb, 4 * (k) + 2), ak); \
        s##k##3 = svbfdot_f32(s##k##3, LD_B(pb, 4 * (k) + 3), ak); \
    } while (0)
#define SUM4(p, v) svadd_f32_x(pg, svadd_f32_x(pg, p##0##v, p##1##v), svadd_f32_x(pg, p##2##v, p##3##v))

ISF_UKERNEL(gemm_bf16_1x8x4_svebf16) {
    (void)ldc; /* one row: C's stride is never needed */
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    const size_t nh = 4 * svcnth();    /* B bfloat16 per block */
    ROW_DECL(0);
    ROW_DECL(1);
    ROW_DECL(2);
    ROW_DECL(3);

    for (size_t kt = k_blocks / 4; kt > 0; kt--) {
        ACC_DOT(0);
        ACC_DOT(1);
        ACC_DOT(2);
        ACC_DOT(3);
        pa += 16;
        pb += 4 * nh;
    }
    for (size_t kr = k_blocks % 4; kr > 0; kr--) {
        ACC_DOT(0);
        pa += 4;
        pb += nh;
    }

    const svbool_t pw = svptrue_b32();
    store_row(c, 0, pw, SUM4(s, 0), SUM4(s, 1), accumulate, ep);
    store_row(c, svcntw(), pw, SUM4(s, 2), SUM4(s, 3), accumulate, ep);
}
