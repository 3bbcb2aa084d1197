/*
 * int8 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, SVE sdot by element, 4 k steps
 * per block. NR = 8 at a 128-bit vector length, 2 x VL/32 in general: the B panels of gemm_s8_8x8x4_sve, for rows
 * that kernel would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks x 4 contiguous bytes, not
 * padded further, maybe unaligned. Only SVE instructions (the SVE SDOT is base SVE), as the full kernel. The body:
 * isf_s8_1x8x4.h.
 */
#include "isf_s8_1x8x4.h"

/* Block k of 8 (lane `lane` of av) and its two B vectors. */
#define ACC_DOT(k, av, lane) \
    ISF_ROW_DOT_LANE(k, av, lane, svld1_vnum_s8(pg, pb, 2 * k), svld1_vnum_s8(pg, pb, 2 * k + 1))

ISF_UKERNEL(gemm_s8_1x8x4_sve) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    /*
     * Per 8 blocks: 2 ld1rq + 16 B loads + 16 sdot + pointer and loop steps. One B load per sdot is inherent to one
     * row (each B value is used once); 16 independent chains cover SDOT's latency x issue rate (3 x 4 on Neoverse
     * V2). 16 accumulators + 2 A + the B vectors in flight fit the 32 Z registers.
     */
    ISF_ROW_ACC_DECL;

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        ACC_DOT(0, a0, 0);
        ACC_DOT(1, a0, 1);
        ACC_DOT(2, a0, 2);
        ACC_DOT(3, a0, 3);
        ACC_DOT(4, a1, 0);
        ACC_DOT(5, a1, 1);
        ACC_DOT(6, a1, 2);
        ACC_DOT(7, a1, 3);
        pa += 32;
        pb += 8 * nb;
    }
    /* The last k_blocks % 8 blocks one at a time: a wider load of A could cross the end of the caller's row. */
    for (size_t kr = k_blocks % 8; kr > 0; kr--) {
        int32_t block;
        memcpy(&block, pa, 4);
        svint8_t av = svreinterpret_s8_s32(svdup_n_s32(block));
        s00 = svdot_s32(s00, svld1_s8(pg, pb), av);
        s01 = svdot_s32(s01, svld1_vnum_s8(pg, pb, 1), av);
        pa += 4;
        pb += nb;
    }

    ISF_ROW_FINISH(SUM8(s, 0), SUM8(s, 1));
}
