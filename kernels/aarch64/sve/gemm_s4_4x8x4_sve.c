/*
 * int8 x int4 -> int32 GEMM 4-row kernel, SVE (vector-length agnostic): 4 rows x 2 vectors, SVE sdot by element,
 * 4 k steps per block; gemm_s8_4x8x4_sve's loop on int4 B panels, the 4-row kernel of gemm_s4_8x8x4_sve
 * (isf_s8_8x8x4.h holds the body). NR = 8 at a 128-bit vector length, 2 x VL/32 in general. k_blocks is even.
 *
 * Per pair of blocks: 2 ld1rq of A + 2 B loads + 4 unpacks + 16 sdot + 2 pointer steps + subs + b.ne = 28
 * instructions for 16 sdot, 256 MACs at 128 bits (0.11 per MAC; gemm_s8_4x8x4_sve: 0.10): half the int8 kernel's
 * B loads for one ALU instruction per block and vector. The unpacks share the vector pipes with sdot, and with 4
 * rows an unpacked B vector serves 4 sdot, not 8: 20 vector-pipe instructions per 16 sdot bound the loop at 80 %
 * of SDOT's peak (llvm-mca, clang 19: 79.9 % on Neoverse N2, V1 and V2; the 8-row kernel: 88.8 %).
 */
#include "isf_s8_8x8x4.h"

/*
 * The sums of sets c (even blocks) and d (odd ones) are 16 x the true ones: the arithmetic shift is exact, then
 * BIAS (wrapping). Seeding with the bias as gemm_s8 does would wrap at 2^28, not 2^32, once shifted.
 */
#define ACC_MERGE(r)                                                                           \
    c##r##0 = svadd_s32_x(pg, svasr_n_s32_x(pg, svadd_s32_x(pg, c##r##0, d##r##0), 4), seed0); \
    c##r##1 = svadd_s32_x(pg, svasr_n_s32_x(pg, svadd_s32_x(pg, c##r##1, d##r##1), 4), seed1)

ISF_UKERNEL(gemm_s4_4x8x4_sve) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per pair of blocks */
    ISF_BIAS_SEEDS;
    const svint32_t zero = svdup_n_s32(0);
    ISF_ACC_DECL4(c, zero, zero);
    ISF_ACC_DECL4(d, zero, zero);

    /*
     * One pair of blocks per step: one load per B vector holds both blocks' nibbles; LSL #4 gives the even block's
     * values x 16, AND #0xF0 the odd one's. 16 accumulators + 2 packed B + 2 A + 4 B = 24 of 32 Z registers.
     */
    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        const svint8_t v0 = svld1_s8(pg, pb), v1 = svld1_vnum_s8(pg, pb, 1);
        const svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        pa += 32;
        pb += nb;
        ISF_DOT4(c, a0, svlsl_n_s8_x(pg, v0, 4), svlsl_n_s8_x(pg, v1, 4));
        ISF_DOT4(d, a1, svand_n_s8_x(pg, v0, (int8_t)0xF0), svand_n_s8_x(pg, v1, (int8_t)0xF0));
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    ISF_TILE_FINISH_ROWS(4);
}
