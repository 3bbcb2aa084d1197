/*
 * int8 x int4 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, 8 k steps per block, SVE
 * sdot; gemm_s8_1x4x8_svei8mm's body (isf_s8_1x4x8.h) on int4 B panels, the row kernel of gemm_s4_8x4x8_svei8mm.
 * A is the row itself: k_blocks x 8 contiguous bytes, maybe unaligned; k_blocks is even.
 */
#include "isf_s8_1x4x8.h"

/*
 * Pair j of the 4 in 8 blocks (blocks klo = 2j, khi = 2j + 1): one load per B vector holds both blocks' nibbles.
 * LSL #4 gives block klo's values x 16, AND #0xF0 block khi's: one unpredicated ALU instruction per block and
 * vector, and sdot takes them as int8 B. The sums are 16 x the true ones until the shift after the loop.
 */
#define ACC_PAIR(j, klo, khi)                                                                                        \
    do {                                                                                                             \
        const svint8_t v0 = svld1_vnum_s8(pg, pb, 2 * (j)), v1 = svld1_vnum_s8(pg, pb, 2 * (j) + 1);                 \
        ISF_ROW_DOT(klo, pa + 16 * (j), svlsl_n_s8_x(pg, v0, 4), svlsl_n_s8_x(pg, v1, 4));                           \
        ISF_ROW_DOT(khi, pa + 16 * (j) + 8, svand_n_s8_x(pg, v0, (int8_t)0xF0), svand_n_s8_x(pg, v1, (int8_t)0xF0)); \
    } while (0)

ISF_UKERNEL(gemm_s4_1x4x8_svei8mm) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per pair of blocks */
    /*
     * Per 8 blocks: 8 ld1rd + 8 B loads + 8 unpacks + 16 sdot: half gemm_s8's B bytes and loads, which bound a
     * row (each B value is used once), for 8 single-cycle ALU instructions. 16 independent chains, as gemm_s8's.
     */
    ISF_ROW_ACC_DECL;

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        ACC_PAIR(0, 0, 1);
        ACC_PAIR(1, 2, 3);
        ACC_PAIR(2, 4, 5);
        ACC_PAIR(3, 6, 7);
        pa += 64;
        pb += 4 * nb;
    }
    for (size_t kr = (k_blocks % 8) / 2; kr > 0; kr--) {
        ACC_PAIR(0, 0, 1);
        pa += 16;
        pb += nb;
    }

    /* 16 x the true sums: the arithmetic shift is exact. */
    ISF_ROW_FINISH(svasr_n_s32_x(svptrue_b32(), ISF_ROW_SUMS, 4));
}
