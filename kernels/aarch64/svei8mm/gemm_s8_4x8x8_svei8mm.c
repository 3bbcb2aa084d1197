/*
 * int8 -> int32 GEMM 4-row kernel, SVE SMMLA (vector-length agnostic): 4 rows x 4 vectors, 8 k steps per block.
 * NR = 8 at a 128-bit vector length, VL/16 in general: the B panels of gemm_s8_8x8x8_svei8mm, for the last 2 to 4
 * rows of a GEMM in one pass over B where the row kernel would stream B once per row. The body: isf_s8_8x4x8.h.
 *
 * Per 2 blocks: 4 ld1rq of A + 8 B loads + 16 smmla + 2 pointer steps + subs + b.ne = 32 instructions for 512 MACs
 * at 128 bits (0.0625 per MAC; gemm_s8_4x4x8_svei8mm's: 0.070). With 4 rows a B vector serves 2 smmla: 3 loads per
 * 4 smmla.
 */
#include "isf_s8_8x4x8.h"

#define BLOCK(s, pa, pb, v) \
    ISF_LOAD_B_WIDE(pb, v); \
    ISF_LOAD_A2(pa);        \
    ISF_MMLA2_WIDE(s)
#define ACC_ADD(i, v) c##i##v = svadd_s32_x(pg, c##i##v, d##i##v)
#define ACC_MERGE(i) \
    ACC_ADD(i, 0);   \
    ACC_ADD(i, 1);   \
    ACC_ADD(i, 2);   \
    ACC_ADD(i, 3)

ISF_UKERNEL(gemm_s8_4x8x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    svint8_t a0, a1, b0, b1, b2, b3;
    ISF_BIAS_SEEDS;
    ISF_BIAS_SEEDS_HI;
    /*
     * A set is 8 accumulators (2 row pairs x 4 B vectors), fewer than SMMLA's latency x issue rate on the widest
     * cores (3 x 4 on Neoverse V2), so even blocks go to set c, odd ones to d (16 accumulators), added after the
     * loop; 16 + 2 A + 4 B = 22 Z registers.
     */
    ISF_ACC_DECL2_WIDE(c, seed0, seed1, seed2, seed3);
    ISF_ACC_DECL2_WIDE(d, zero, zero, zero, zero);

    for (size_t kt = k_blocks / 2; kt > 0; kt--) {
        BLOCK(c, pa, pb, 0);
        BLOCK(d, pa + 32, pb, 4);
        pa += 64;
        pb += 8 * svcntb();
    }
    if (k_blocks & 1) {
        BLOCK(c, pa, pb, 0);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ISF_TILE_FINISH_WIDE(4);
}
