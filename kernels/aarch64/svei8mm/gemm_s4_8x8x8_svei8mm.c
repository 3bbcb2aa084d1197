/*
 * int8 x int4 -> int32 GEMM micro-kernel, SVE SMMLA (vector-length agnostic): 8 rows x 4 vectors, 8 k steps per
 * block; gemm_s8_8x8x8_svei8mm's tile (isf_s8_8x4x8.h, the _WIDE macros) on int4 B panels. NR = 8 at a 128-bit
 * vector length, VL/16 in general. k_blocks is even.
 */
#include "isf_s8_8x4x8.h"

/*
 * The sums are 16 x the true ones: the arithmetic shift is exact, then BIAS (wrapping). Seeding with the bias as
 * gemm_s8 does would wrap at 2^28, not 2^32, once shifted.
 */
#define ACC_FIX(i, v) c##i##v = svadd_s32_x(pg, svasr_n_s32_x(pg, c##i##v, 4), seed##v)
#define ACC_MERGE(i) \
    ACC_FIX(i, 0);   \
    ACC_FIX(i, 1);   \
    ACC_FIX(i, 2);   \
    ACC_FIX(i, 3)

ISF_UKERNEL(gemm_s4_8x8x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    svint8_t a0, a1, a2, a3, b0, b1, b2, b3;
    ISF_BIAS_SEEDS;
    ISF_BIAS_SEEDS_HI;
    /* One set of 16 accumulators (as gemm_s8_8x8x8_svei8mm's): both blocks of a pair go into it. */
    ISF_ACC_DECL_WIDE(c, zero, zero, zero, zero);

    /*
     * One pair of blocks per step (ISF_S4_PAIR_WIDE): 8 B unpacks + 12 loads per 32 smmla. 16 accumulators + 4
     * packed B + 4 B + 4 A = 28 of 32 Z registers.
     */
    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        ISF_S4_PAIR_WIDE(ISF_LOAD_A, ISF_MMLA4_WIDE, c, c, pa, 64);
        pa += 128;
        pb += 4 * svcntb();
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    ISF_TILE_FINISH_WIDE(8);
}
