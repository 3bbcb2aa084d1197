/*
 * int8 x int4 -> int32 GEMM 4-row kernel, SVE SMMLA (vector-length agnostic): 4 rows x 4 vectors, 8 k steps per
 * block; gemm_s4_8x8x8_svei8mm's loop with half its A, the 4-row kernel of that tile (isf_s8_8x4x8.h holds the
 * body). NR = 8 at a 128-bit vector length, VL/16 in general. k_blocks is even.
 */
#include "isf_s8_8x4x8.h"

/*
 * The sums of sets c and d are 16 x the true ones: the arithmetic shift is exact, then BIAS (wrapping). Seeding
 * with the bias as gemm_s8 does would wrap at 2^28, not 2^32, once shifted.
 */
#define ACC_FIX(i, v) c##i##v = svadd_s32_x(pg, svasr_n_s32_x(pg, svadd_s32_x(pg, c##i##v, d##i##v), 4), seed##v)
#define ACC_MERGE(i) \
    ACC_FIX(i, 0);   \
    ACC_FIX(i, 1);   \
    ACC_FIX(i, 2);   \
    ACC_FIX(i, 3)

ISF_UKERNEL(gemm_s4_4x8x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    svint8_t a0, a1, b0, b1, b2, b3;
    ISF_BIAS_SEEDS;
    ISF_BIAS_SEEDS_HI;
    /*
     * A set is 8 accumulators (2 row pairs x 4 B vectors), fewer than SMMLA's latency x issue rate on the widest
     * cores (3 x 4 on Neoverse V2): a pair's even block goes to set c, its odd one to d. 16 accumulators + 4 packed
     * B + 4 B + 2 A = 26 Z registers.
     */
    ISF_ACC_DECL2_WIDE(c, zero, zero, zero, zero);
    ISF_ACC_DECL2_WIDE(d, zero, zero, zero, zero);

    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        ISF_S4_PAIR_WIDE(ISF_LOAD_A2, ISF_MMLA2_WIDE, c, d, pa, 32);
        pa += 64;
        pb += 4 * svcntb();
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ISF_TILE_FINISH_WIDE(4);
}
