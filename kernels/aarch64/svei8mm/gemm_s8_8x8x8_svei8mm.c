/*
 * int8 -> int32 GEMM micro-kernel, SVE SMMLA (vector-length agnostic): 8 rows x 4 vectors, 8 k steps per block.
 * NR = 8 at a 128-bit vector length, VL/16 in general: twice gemm_s8_8x4x8_svei8mm's, so each A panel is read half
 * as often and a tile's fixed work (set-up, unzip, the quantized epilogue's parameter loads) is spread over twice
 * the MACs. The body: isf_s8_8x4x8.h (its _WIDE macros).
 *
 * Per 2 blocks: 8 ld1rq of A + 8 B loads + 32 smmla + 2 pointer steps + subs + b.ne = 52 instructions for 1024
 * MACs at 128 bits (0.051 per MAC; the 8x4x8's loop: 0.0625), and 1 load per 2 smmla (8x4x8: 3 per 4).
 */
#include "isf_s8_8x4x8.h"

/*
 * 16 accumulators (4 row pairs x 4 B vectors) cover SMMLA's latency x issue rate (3 x 4 on Neoverse V2, 3 x 2 on
 * N2 and V1), so one set suffices and nothing is added after the loop; 16 + 4 A + 4 B = 24 of 32 Z registers.
 */
#define BLOCK(pa, pb, v)    \
    ISF_LOAD_B_WIDE(pb, v); \
    ISF_LOAD_A(pa);         \
    ISF_MMLA4_WIDE(c)

ISF_UKERNEL(gemm_s8_8x8x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    svint8_t a0, a1, a2, a3, b0, b1, b2, b3;
    /* BIAS seeds the sums (int32 addition wraps): two loads, four zips and a branch per tile, not 16 additions. */
    ISF_BIAS_SEEDS;
    ISF_BIAS_SEEDS_HI;
    ISF_ACC_DECL_WIDE(c, seed0, seed1, seed2, seed3);

    /* Two blocks a trip: the B loads of both stay within ld1b's [base, #imm, mul vl] reach (0..7). */
    for (size_t kt = k_blocks / 2; kt > 0; kt--) {
        BLOCK(pa, pb, 0);
        BLOCK(pa + 64, pb, 4);
        pa += 128;
        pb += 8 * svcntb();
    }
    if (k_blocks & 1) {
        BLOCK(pa, pb, 0);
    }

    ISF_TILE_FINISH_WIDE(8);
}
