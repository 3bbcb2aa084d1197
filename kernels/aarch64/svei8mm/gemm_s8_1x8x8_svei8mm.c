/*
 * int8 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 4 vectors, 8 k steps per block, SVE sdot.
 * NR = 8 at a 128-bit vector length, VL/16 in general: the B panels of gemm_s8_8x8x8_svei8mm, for rows that kernel
 * would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks x 8 contiguous bytes, not padded further,
 * maybe unaligned. The sdot scheme and the store: isf_s8_1x4x8.h, with gemm_s8_1x4x8_svei8mm.
 *
 * Per 4 blocks: 4 ld1rd + 16 B loads + 16 sdot + pointer and loop steps: one B load per sdot is inherent to one row
 * (each B value is used once), so the load pipes bound it as the 1x4x8's; one ld1rd serves 4 sdot (1x4x8: 2), and
 * a tile's set-up and sums serve twice the columns.
 */
#include "isf_s8_1x4x8.h"

/*
 * Block j of 4: B vectors 0, 1 into accumulator pair klo = 2j (ISF_ROW_DOT's s<klo>0, s<klo>1), vectors 2, 3 into
 * pair khi = 2j + 1; 16 independent chains cover SDOT's latency x issue rate (3 x 4 on Neoverse V2). 16
 * accumulators + 4 B + the A block fit the 32 Z registers.
 */
#define LD_B(v) svld1_vnum_s8(pg, pb, (v))
#define ACC_DOT(j, klo, khi)                                                  \
    do {                                                                      \
        ISF_ROW_DOT(klo, pa + 8 * (j), LD_B(4 * (j)), LD_B(4 * (j) + 1));     \
        ISF_ROW_DOT(khi, pa + 8 * (j), LD_B(4 * (j) + 2), LD_B(4 * (j) + 3)); \
    } while (0)

ISF_UKERNEL(gemm_s8_1x8x8_svei8mm) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 4 * svcntb();   /* B bytes per block */
    ISF_ROW_ACC_DECL;

    for (size_t kt = k_blocks / 4; kt > 0; kt--) {
        ACC_DOT(0, 0, 1);
        ACC_DOT(1, 2, 3);
        ACC_DOT(2, 4, 5);
        ACC_DOT(3, 6, 7);
        pa += 32;
        pb += 4 * nb;
    }
    for (size_t kr = k_blocks % 4; kr > 0; kr--) {
        ACC_DOT(0, 0, 1);
        pa += 8;
        pb += nb;
    }

    ISF_ROW_FINISH2(ISF_ROW_SUMS_LO, ISF_ROW_SUMS_HI);
}
