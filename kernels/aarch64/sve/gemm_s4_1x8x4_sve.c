/*
 * int8 x int4 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, SVE sdot by element,
 * 4 k steps per block; gemm_s8_1x8x4_sve's body (isf_s8_1x8x4.h) on int4 B panels, the row kernel of
 * gemm_s4_8x8x4_sve. A is the row itself: k_blocks x 4 contiguous bytes, maybe unaligned; k_blocks is even.
 */
#include "isf_s8_1x8x4.h"

/*
 * Blocks klo, khi (a pair, lanes llo, lhi of av): one load per B vector holds both blocks' nibbles. LSL #4 gives
 * block klo's values x 16, AND #0xF0 block khi's: one unpredicated ALU instruction per block and vector, and sdot
 * takes them as int8 B. The sums are 16 x the true ones until the shift after the loop.
 */
#define ACC_PAIR(j, klo, khi, av, llo, lhi)                                                                     \
    do {                                                                                                        \
        const svint8_t v0 = svld1_vnum_s8(pg, pb, 2 * (j)), v1 = svld1_vnum_s8(pg, pb, 2 * (j) + 1);            \
        ISF_ROW_DOT_LANE(klo, av, llo, svlsl_n_s8_x(pg, v0, 4), svlsl_n_s8_x(pg, v1, 4));                       \
        ISF_ROW_DOT_LANE(khi, av, lhi, svand_n_s8_x(pg, v0, (int8_t)0xF0), svand_n_s8_x(pg, v1, (int8_t)0xF0)); \
    } while (0)

ISF_UKERNEL(gemm_s4_1x8x4_sve) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per pair of blocks */
    /*
     * Per 8 blocks: 2 ld1rq + 8 B loads + 8 unpacks + 16 sdot: half gemm_s8's B bytes and loads, which bound a row
     * (each B value is used once), for 8 single-cycle ALU instructions. 16 independent chains, as gemm_s8's.
     */
    ISF_ROW_ACC_DECL;

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        ACC_PAIR(0, 0, 1, a0, 0, 1);
        ACC_PAIR(1, 2, 3, a0, 2, 3);
        ACC_PAIR(2, 4, 5, a1, 0, 1);
        ACC_PAIR(3, 6, 7, a1, 2, 3);
        pa += 32;
        pb += 4 * nb;
    }
    /*
     * The last (k_blocks % 8) / 2 pairs one at a time: 8 bytes of A (ld1rd) put the pair's blocks in lanes 0 and 1
     * of every segment; a wider load could cross the end of the caller's row.
     */
    for (size_t kr = (k_blocks % 8) / 2; kr > 0; kr--) {
        uint64_t pair;
        memcpy(&pair, pa, 8);
        const svint8_t av = svreinterpret_s8_u64(svdup_n_u64(pair));
        ACC_PAIR(0, 0, 1, av, 0, 1);
        pa += 8;
        pb += nb;
    }

    /* 16 x the true sums: the arithmetic shift is exact. */
    ISF_ROW_FINISH(svasr_n_s32_x(svptrue_b32(), SUM8(s, 0), 4), svasr_n_s32_x(svptrue_b32(), SUM8(s, 1), 4));
}
