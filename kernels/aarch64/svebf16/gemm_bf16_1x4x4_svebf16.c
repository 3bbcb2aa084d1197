/*
 * bfloat16 -> fp32 GEMM row kernel, SVE BFDOT (vector-length agnostic): 1 row x 2 vectors, 4 k steps per block,
 * fp32 accumulation. NR = 4 at a 128-bit vector length, VL/32 in general: the B panels of gemm_bf16_8x4x4_svebf16,
 * for rows that kernel would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks x 4 contiguous
 * bfloat16, not padded further, maybe unaligned. Panels are bfloat16 bits (uint16_t), loaded as u16 and
 * reinterpreted, which costs nothing. The BFDOT scheme, store and epilogue: isf_bf16_svebf16.h.
 */
#include "isf_bf16_svebf16.h"

/*
 * The loop does 8 blocks into 8 independent accumulator pairs (s<k>0 for B vector 0, s<k>1 for vector 1), summed
 * after the loop.
 */
#define ROW_DECL(k) svfloat32_t s##k##0 = svdup_n_f32(0.0f), s##k##1 = s##k##0
#define ACC_DOT(k)                                                 \
    do {                                                           \
        svbfloat16_t ak = row_block(pa + 4 * (k));                 \
        s##k##0 = svbfdot_f32(s##k##0, LD_B(pb, 2 * (k)), ak);     \
        s##k##1 = svbfdot_f32(s##k##1, LD_B(pb, 2 * (k) + 1), ak); \
    } while (0)
#define SUM8(p, i)                                                                                         \
    svadd_f32_x(pg, svadd_f32_x(pg, svadd_f32_x(pg, p##0##i, p##1##i), svadd_f32_x(pg, p##2##i, p##3##i)), \
                svadd_f32_x(pg, svadd_f32_x(pg, p##4##i, p##5##i), svadd_f32_x(pg, p##6##i, p##7##i)))

ISF_UKERNEL(gemm_bf16_1x4x4_svebf16) {
    (void)ldc; /* one row: C's stride is never needed */
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    const size_t nh = 2 * svcnth();    /* B bfloat16 per block */
    /*
     * Per 8 blocks: 8 ld1rd + 16 B loads + 16 bfdot + pointer and loop steps: 2 useful MACs per 32-bit lane of a
     * bfdot, as many as one bfmmla with a zero row has. One B load per bfdot is inherent to one row (each B value is
     * used once); 16 independent chains cover BFDOT's latency x issue rate (4 x 2 on Neoverse V1, 5 x 4 on V2
     * without accumulator forwarding, where the B loads bound it first). 16 accumulators + the A and B vectors in
     * flight fit the 32 Z registers.
     */
    ROW_DECL(0);
    ROW_DECL(1);
    ROW_DECL(2);
    ROW_DECL(3);
    ROW_DECL(4);
    ROW_DECL(5);
    ROW_DECL(6);
    ROW_DECL(7);

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        ACC_DOT(0);
        ACC_DOT(1);
        ACC_DOT(2);
        ACC_DOT(3);
        ACC_DOT(4);
        ACC_DOT(5);
        ACC_DOT(6);
        ACC_DOT(7);
        pa += 32;
        pb += 8 * nh;
    }
    for (size_t kr = k_blocks % 8; kr > 0; kr--) {
        ACC_DOT(0);
        pa += 4;
        pb += nh;
    }

    store_row(c, 0, svptrue_b32(), SUM8(s, 0), SUM8(s, 1), accumulate, ep);
}
