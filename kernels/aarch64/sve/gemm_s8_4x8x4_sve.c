/*
 * int8 -> int32 GEMM 4-row kernel, SVE (vector-length agnostic): 4 rows x 2 vectors, SVE sdot by element, 4 k
 * steps per block. NR = 8 at a 128-bit vector length, 2 x VL/32 in general: the B panels of gemm_s8_8x8x4_sve, for
 * the last 2 to 4 rows of a GEMM in one pass over B where the row kernel would stream B once per row. Only SVE
 * instructions, as the 8-row kernel, whose body (bias seeds, epilogue) is isf_s8_8x8x4.h.
 *
 * Per 2 blocks: 2 ld1rq of A + 4 B loads + 16 sdot + 2 pointer steps + subs + b.ne = 26 instructions for 16 sdot,
 * 256 MACs at 128 bits (0.10 per MAC; the 8-row kernel's loop: 24, 0.094). With 4 rows a B vector serves 4 sdot,
 * not 8: 6 loads per 16 sdot. llvm-mca (clang 19): 99.8 % of SDOT's peak on Neoverse N2 and V1, 99.6 % on V2.
 */
#include "isf_s8_8x8x4.h"

#define ACC_MERGE(r)                             \
    c##r##0 = svadd_s32_x(pg, c##r##0, d##r##0); \
    c##r##1 = svadd_s32_x(pg, c##r##1, d##r##1)

ISF_UKERNEL(gemm_s8_4x8x4_sve) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    /* BIAS seeds set c instead of zero (int32 addition wraps): a load and a branch per tile. */
    ISF_BIAS_SEEDS;
    /*
     * 8 accumulators are fewer than SDOT's latency x issue rate (3 x 4 on Neoverse V2), so even blocks go to set c,
     * odd ones to set d, added after the loop: 16 accumulators + 2 A + 4 B = 22 of 32 Z registers.
     */
    const svint32_t zero = svdup_n_s32(0);
    ISF_ACC_DECL4(c, seed0, seed1);
    ISF_ACC_DECL4(d, zero, zero);

    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        const svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        const svint8_t b0 = svld1_s8(pg, pb), b1 = svld1_vnum_s8(pg, pb, 1);
        const svint8_t b2 = svld1_vnum_s8(pg, pb, 2), b3 = svld1_vnum_s8(pg, pb, 3);
        pa += 32;
        pb += 2 * nb;
        ISF_DOT4(c, a0, b0, b1);
        ISF_DOT4(d, a1, b2, b3);
    }
    if (k_blocks & 1) {
        const svint8_t a0 = svld1rq_s8(pg, pa);
        const svint8_t b0 = svld1_s8(pg, pb), b1 = svld1_vnum_s8(pg, pb, 1);
        ISF_DOT4(c, a0, b0, b1);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    ISF_TILE_FINISH_ROWS(4);
}
