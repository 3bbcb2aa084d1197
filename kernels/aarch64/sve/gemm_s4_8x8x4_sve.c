/*
 * int8 x int4 -> int32 GEMM micro-kernel, SVE (vector-length agnostic): 8 rows x 2 vectors, SVE sdot by element,
 * 4 k steps per block; gemm_s8_8x8x4_sve's body (isf_s8_8x8x4.h) on int4 B panels. NR = 8 at a 128-bit vector
 * length, 2 x VL/32 in general. k_blocks is even.
 */
#include "isf_s8_8x8x4.h"

/*
 * The sums are 16 x the true ones: the arithmetic shift is exact, then BIAS (wrapping). Seeding with the bias as
 * gemm_s8 does would wrap at 2^28, not 2^32, once shifted.
 */
#define ACC_FIX(r)                                                   \
    c##r##0 = svadd_s32_x(pg, svasr_n_s32_x(pg, c##r##0, 4), seed0); \
    c##r##1 = svadd_s32_x(pg, svasr_n_s32_x(pg, c##r##1, 4), seed1)

ISF_UKERNEL(gemm_s4_8x8x4_sve) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per pair of blocks */
    ISF_BIAS_SEEDS;
    ISF_ACC_DECL(svdup_n_s32(0), svdup_n_s32(0));

    /*
     * One pair of blocks per step: one load per B vector holds both blocks' nibbles; LSL #4 gives the even block's
     * values x 16, AND #0xF0 the odd one's. Per pair: 4 A + 2 B loads + 4 unpacks per 32 sdot; 16 accumulators +
     * 2 packed B + 2 A + 2 B = 22 of 32 Z registers.
     */
    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        const svint8_t v0 = svld1_s8(pg, pb), v1 = svld1_vnum_s8(pg, pb, 1);
        svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        svint8_t b0 = svlsl_n_s8_x(pg, v0, 4), b1 = svlsl_n_s8_x(pg, v1, 4);
        ISF_DOT8;
        a0 = svld1rq_s8(pg, pa + 32), a1 = svld1rq_s8(pg, pa + 48);
        b0 = svand_n_s8_x(pg, v0, (int8_t)0xF0), b1 = svand_n_s8_x(pg, v1, (int8_t)0xF0);
        ISF_DOT8;
        pa += 64;
        pb += nb;
    }

    ACC_FIX(0);
    ACC_FIX(1);
    ACC_FIX(2);
    ACC_FIX(3);
    ACC_FIX(4);
    ACC_FIX(5);
    ACC_FIX(6);
    ACC_FIX(7);
    ISF_TILE_FINISH;
}
