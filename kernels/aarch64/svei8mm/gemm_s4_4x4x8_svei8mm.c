/*
 * int8 x int4 -> int32 GEMM 4-row kernel, SVE SMMLA (vector-length agnostic): 4 rows x 2 vectors, 8 k steps per
 * block; gemm_s8_4x4x8_svei8mm's loop on int4 B panels, the 4-row kernel of gemm_s4_8x4x8_svei8mm (isf_s8_8x4x8.h
 * holds the body). NR = 4 at a 128-bit vector length, VL/32 in general. k_blocks is even.
 *
 * Per 2 pairs of blocks: 8 ld1rq of A + 4 B loads + 8 unpacks + 16 smmla + 2 pointer steps + subs + b.ne = 40
 * instructions for 16 smmla, 512 MACs at 128 bits (0.078 per MAC; gemm_s8_4x4x8_svei8mm: 0.070): half the int8
 * kernel's B loads for one ALU instruction per block and vector. The unpacks share the vector pipes with smmla,
 * and with 4 rows an unpacked B vector serves 2 smmla, not 4: 24 vector-pipe instructions per 16 smmla bound the
 * loop at 67 % of SMMLA's peak (llvm-mca, clang 19: 66.6 % on Neoverse N2, V1 and V2; the 8-row kernel: 79.9 %).
 */
#include "isf_s8_8x4x8.h"

/*
 * Pair (2 blocks, one byte of B each per column and k): one load per B vector holds both blocks' nibbles; LSL #4
 * gives the even block's values x 16 (into set s), AND #0xF0 the odd one's (into set t).
 */
#define PAIR(s, t, pa, pb)                                                                \
    do {                                                                                  \
        const svint8_t v0 = svld1_s8(pg, (pb)), v1 = svld1_vnum_s8(pg, (pb), 1);          \
        ISF_LOAD_A2(pa);                                                                  \
        b0 = svlsl_n_s8_x(pg, v0, 4), b1 = svlsl_n_s8_x(pg, v1, 4);                       \
        ISF_MMLA2(s);                                                                     \
        ISF_LOAD_A2((pa) + 32);                                                           \
        b0 = svand_n_s8_x(pg, v0, (int8_t)0xF0), b1 = svand_n_s8_x(pg, v1, (int8_t)0xF0); \
        ISF_MMLA2(t);                                                                     \
    } while (0)
/*
 * The sums of the 4 sets are 16 x the true ones: the arithmetic shift is exact, then BIAS (wrapping). Seeding with
 * the bias as gemm_s8 does would wrap at 2^28, not 2^32, once shifted.
 */
#define ACC_SUM(i, v) svadd_s32_x(pg, svadd_s32_x(pg, c##i##v, d##i##v), svadd_s32_x(pg, e##i##v, f##i##v))
#define ACC_MERGE(i)                                                       \
    c##i##0 = svadd_s32_x(pg, svasr_n_s32_x(pg, ACC_SUM(i, 0), 4), seed0); \
    c##i##1 = svadd_s32_x(pg, svasr_n_s32_x(pg, ACC_SUM(i, 1), 4), seed1)

ISF_UKERNEL(gemm_s4_4x4x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per pair of blocks */
    svint8_t a0, a1, b0, b1;
    ISF_BIAS_SEEDS;
    /* 4 independent sets, as gemm_s8_4x4x8_svei8mm's: blocks 4j (c), 4j + 1 (d), 4j + 2 (e), 4j + 3 (f). */
    ISF_ACC_DECL2(c, zero, zero);
    ISF_ACC_DECL2(d, zero, zero);
    ISF_ACC_DECL2(e, zero, zero);
    ISF_ACC_DECL2(f, zero, zero);

    for (size_t kq = k_blocks / 4; kq > 0; kq--) {
        PAIR(c, d, pa, pb);
        PAIR(e, f, pa + 64, pb + nb);
        pa += 128;
        pb += 2 * nb;
    }
    if (k_blocks & 2) {
        PAIR(c, d, pa, pb);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ISF_TILE_FINISH_ROWS(4);
}
