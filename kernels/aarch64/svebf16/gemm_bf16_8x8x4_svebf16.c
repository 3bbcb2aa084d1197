/*
 * bfloat16 -> fp32 GEMM micro-kernel, SVE BFMMLA (vector-length agnostic): 8 rows x 4 vectors, 4 k steps per
 * block, fp32 accumulation. NR = 8 at a 128-bit vector length, VL/16 in general: twice gemm_bf16_8x4x4_svebf16's,
 * so each A panel is read half as often and a tile's fixed work (set-up, unzip, epilogue) is spread over twice the
 * MACs. Panels are bfloat16 bits (uint16_t), loaded as u16 and reinterpreted, which costs nothing.
 *
 * Per 2 blocks: 8 ld1rq of A + 8 B loads + 32 bfmmla + 2 pointer steps + subs + b.ne = 52 instructions for
 * 512 MACs at 128 bits (0.10 per MAC; the 8x4x4's loop: 46 for 384, 0.12), and 1 load per 2 bfmmla (8x4x4: 3 per 4).
 */
#include "isf_bf16_svebf16.h"

/*
 * ld1rq replicates rows 2i, 2i+1 x 4 k (a<i>) into every segment; B vector v is VL/128 segments of 2 columns x 4 k.
 * 16 accumulators (4 row pairs x 4 B vectors) are more than BFMMLA's latency x issue rate on Neoverse V1/N2 (5 x 2),
 * so one set suffices and nothing is added after the loop; 16 + 4 A + 4 B = 24 of 32 Z registers, room for the next
 * block's loads in flight.
 */
#define BLOCK(pa, pb, v)                                                                      \
    b0 = LD_B(pb, v), b1 = LD_B(pb, (v) + 1), b2 = LD_B(pb, (v) + 2), b3 = LD_B(pb, (v) + 3); \
    a0 = LD1RQ(pa), a1 = LD1RQ((pa) + 8), a2 = LD1RQ((pa) + 16), a3 = LD1RQ((pa) + 24);       \
    ROW_PAIR(0);                                                                              \
    ROW_PAIR(1);                                                                              \
    ROW_PAIR(2);                                                                              \
    ROW_PAIR(3)
#define ROW_PAIR(i) \
    ACC_MMLA(c, i); \
    ACC_MMLA_HI(c, i)
#define ROW_PAIR_START(i) \
    ACC_START(c, i);      \
    ACC_START_HI(c, i)
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE_HI(0, steps, acc);  \
    ACC_STORE(1, steps, acc);     \
    ACC_STORE_HI(1, steps, acc);  \
    ACC_STORE(2, steps, acc);     \
    ACC_STORE_HI(2, steps, acc);  \
    ACC_STORE(3, steps, acc);     \
    ACC_STORE_HI(3, steps, acc)

ISF_UKERNEL(gemm_bf16_8x8x4_svebf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    svbfloat16_t a0, a1, a2, a3, b0, b1, b2, b3;
    ACC_STARTS();
    ACC_STARTS_HI();
    (void)zero;
    ROW_PAIR_START(0);
    ROW_PAIR_START(1);
    ROW_PAIR_START(2);
    ROW_PAIR_START(3);

    /* Two blocks a trip: the B loads of both stay within ld1h's [base, #imm, mul vl] reach (0..7), A's ld1rq's. */
    for (size_t kt = k_blocks / 2; kt > 0; kt--) {
        BLOCK(pa, pb, 0);
        BLOCK(pa + 32, pb, 4);
        pa += 64;
        pb += 8 * svcnth();
    }
    if (k_blocks & 1) {
        BLOCK(pa, pb, 0);
    }

    TILE_FINISH();
}
