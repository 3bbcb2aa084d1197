/*
 * int8 x int4 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 4 vectors, 8 k steps per block, SVE
 * sdot; gemm_s8_1x8x8_svei8mm's accumulators and store (isf_s8_1x4x8.h) on int4 B panels, the row kernel of
 * gemm_s4_8x8x8_svei8mm. A is the row itself: k_blocks x 8 contiguous bytes, maybe unaligned; k_blocks is even.
 */
#include "isf_s8_1x4x8.h"

/*
 * Pair j of 2 (blocks 2j, 2j + 1): one load per B vector holds both blocks' nibbles; LSL #4 gives the even block's
 * values x 16, AND #0xF0 the odd one's. B vectors 0, 1 of the even block go to accumulator pair p, vectors 2, 3 to
 * p + 1; the odd block's to p + 2, p + 3 (p = 4j): 16 independent chains, as gemm_s8_1x8x8_svei8mm's. Even
 * pairs hold the row's first vector of sums, odd ones its second (ISF_ROW_SUMS_LO, _HI).
 */
#define HI(v) svlsl_n_s8_x(pg, v, 4)
#define LO(v) svand_n_s8_x(pg, v, (int8_t)0xF0)
#define ACC_PAIR(j, p0, p1, p2, p3)                                                                      \
    do {                                                                                                 \
        const svint8_t v0 = svld1_vnum_s8(pg, pb, 4 * (j)), v1 = svld1_vnum_s8(pg, pb, 4 * (j) + 1);     \
        const svint8_t v2 = svld1_vnum_s8(pg, pb, 4 * (j) + 2), v3 = svld1_vnum_s8(pg, pb, 4 * (j) + 3); \
        ISF_ROW_DOT(p0, pa + 16 * (j), HI(v0), HI(v1));                                                  \
        ISF_ROW_DOT(p1, pa + 16 * (j), HI(v2), HI(v3));                                                  \
        ISF_ROW_DOT(p2, pa + 16 * (j) + 8, LO(v0), LO(v1));                                              \
        ISF_ROW_DOT(p3, pa + 16 * (j) + 8, LO(v2), LO(v3));                                              \
    } while (0)

ISF_UKERNEL(gemm_s4_1x8x8_svei8mm) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 4 * svcntb();   /* B bytes per pair of blocks */
    ISF_ROW_ACC_DECL;

    for (size_t kt = k_blocks / 4; kt > 0; kt--) {
        ACC_PAIR(0, 0, 1, 2, 3);
        ACC_PAIR(1, 4, 5, 6, 7);
        pa += 32;
        pb += 2 * nb;
    }
    if (k_blocks & 2) {
        ACC_PAIR(0, 0, 1, 2, 3);
    }

    /* 16 x the true sums: the arithmetic shift is exact. */
    const svbool_t pw = svptrue_b32();
    ISF_ROW_FINISH2(svasr_n_s32_x(pw, ISF_ROW_SUMS_LO, 4), svasr_n_s32_x(pw, ISF_ROW_SUMS_HI, 4));
}
