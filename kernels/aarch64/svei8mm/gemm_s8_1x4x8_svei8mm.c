/*
 * int8 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, 8 k steps per block, SVE sdot.
 * NR = 4 at a 128-bit vector length, VL/32 in general: the B panels of gemm_s8_8x4x8_svei8mm, for rows that kernel
 * would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks x 8 contiguous bytes, not padded further,
 * maybe unaligned. SDOT is base SVE, so the variant's +sve+i8mm flags allow it. The body: isf_s8_1x4x8.h.
 */
#include "isf_s8_1x4x8.h"

/* Block k of 8: its row bytes and its two B vectors. */
#define ACC_DOT(k) ISF_ROW_DOT(k, pa + 8 * (k), svld1_vnum_s8(pg, pb, 2 * (k)), svld1_vnum_s8(pg, pb, 2 * (k) + 1))

ISF_UKERNEL(gemm_s8_1x4x8_svei8mm) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    /*
     * Per 8 blocks: 8 ld1rd + 16 B loads + 16 sdot + pointer and loop steps: 4 useful MACs per 32-bit lane of an
     * sdot, as many as one smmla with a zero row has. One B load per sdot is inherent to one row (each B value is
     * used once); 16 independent chains cover SDOT's latency x issue rate (3 x 4 on Neoverse V2). 16 accumulators
     * + the A and B vectors in flight fit the 32 Z registers.
     */
    ISF_ROW_ACC_DECL;

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        ACC_DOT(0);
        ACC_DOT(1);
        ACC_DOT(2);
        ACC_DOT(3);
        ACC_DOT(4);
        ACC_DOT(5);
        ACC_DOT(6);
        ACC_DOT(7);
        pa += 64;
        pb += 8 * nb;
    }
    for (size_t kr = k_blocks % 8; kr > 0; kr--) {
        ACC_DOT(0);
        pa += 8;
        pb += nb;
    }

    ISF_ROW_FINISH(ISF_ROW_SUMS);
}
