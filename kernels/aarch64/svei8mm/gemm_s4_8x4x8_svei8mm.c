/*
 * int8 x int4 -> int32 GEMM micro-kernel, SVE SMMLA (vector-length agnostic): 8 rows x 2 vectors, 8 k steps per
 * block; gemm_s8_8x4x8_svei8mm's body (isf_s8_8x4x8.h) on int4 B panels. NR = 4 at a 128-bit vector length, VL/32
 * in general. k_blocks is even.
 */
#include "isf_s8_8x4x8.h"

/*
 * The sums of sets c and d are 16 x the true ones: the arithmetic shift is exact, then BIAS (wrapping). Seeding
 * with the bias as gemm_s8 does would wrap at 2^28, not 2^32, once shifted.
 */
#define ACC_MERGE(i)                                                                           \
    c##i##0 = svadd_s32_x(pg, svasr_n_s32_x(pg, svadd_s32_x(pg, c##i##0, d##i##0), 4), seed0); \
    c##i##1 = svadd_s32_x(pg, svasr_n_s32_x(pg, svadd_s32_x(pg, c##i##1, d##i##1), 4), seed1)

ISF_UKERNEL(gemm_s4_8x4x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per pair of blocks */
    svint8_t a0, a1, a2, a3, b0, b1;
    ISF_BIAS_SEEDS;
    ISF_ACC_DECL(c, zero, zero);
    ISF_ACC_DECL(d, zero, zero);

    /*
     * One pair of blocks per step, as gemm_s8's loop: the even block into set c, the odd one into d. One load per
     * B vector holds both blocks' nibbles; LSL #4 gives the even block's values x 16, AND #0xF0 the odd one's, one
     * ALU instruction per block and vector for half the B loads: 4 B unpacks + 10 loads per 16 smmla.
     */
    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        const svint8_t v0 = svld1_s8(pg, pb), v1 = svld1_vnum_s8(pg, pb, 1);
        ISF_LOAD_A(pa);
        b0 = svlsl_n_s8_x(pg, v0, 4), b1 = svlsl_n_s8_x(pg, v1, 4);
        ISF_MMLA4(c);
        ISF_LOAD_A(pa + 64);
        b0 = svand_n_s8_x(pg, v0, (int8_t)0xF0), b1 = svand_n_s8_x(pg, v1, (int8_t)0xF0);
        ISF_MMLA4(d);
        pa += 128;
        pb += nb;
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    ISF_TILE_FINISH;
}
