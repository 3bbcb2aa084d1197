/*
 * fp32 GEMM 4-row kernel, SVE (vector-length agnostic): 4 rows x 2 vectors, fmla by lane, one k step per block
 * (KR = 1). NR = 8 at a 128-bit vector length, 2 x VL/32 in general: the B panels of gemm_f32_8x8_sve, for the
 * last 2 to 4 rows of a GEMM in one pass over B where the row kernel would stream B once per row.
 *
 * Per 2 k steps: 2 ld1rq of A + 4 B loads + 16 fmla + 2 pointer steps + subs + b.ne = 26 instructions for 16 fmla,
 * 64 MACs at 128 bits (0.41 per MAC; the 8-row kernel's loop: 24, 0.375). With 4 rows a B vector serves 4 fmla,
 * not 8, so 6 loads per 16 fmla where the 8-row kernel has 4: still below the load pipes' rate. llvm-mca (clang
 * 19): 99.8 % of FMLA's peak on Neoverse N2 and V1, 99.6 % on V2, as the 8-row kernel. The epilogue and the store:
 * isf_f32_sve.h, the 8-row kernel's.
 */
#include "isf_f32_sve.h"

/*
 * Row r's sums of even k steps in c<r>0, c<r>1 (columns [0, VL/32), the next VL/32), of odd ones in d<r>0, d<r>1:
 * 8 accumulators are half of FMLA's latency x issue rate (4 x 4 on Neoverse V2), so two k steps go to two
 * independent sets, added after the loop. ld1rq replicates the 4 rows of one k step into every 128-bit segment,
 * so fmla by lane multiplies a whole B vector by one row's A value whatever the vector length.
 */
/* Set c starts at the bias (ACC_STARTS), set d at zero. */
#define ACC_DECL(s, r) svfloat32_t s##r##0 = s##_START(0), s##r##1 = s##_START(1)
#define c_START(j) start##j
#define d_START(j) zero
#define ACC_FMA(s, r, av, b0, b1)                 \
    s##r##0 = svmla_lane_f32(s##r##0, b0, av, r); \
    s##r##1 = svmla_lane_f32(s##r##1, b1, av, r)
#define STEP(s, av, b0, b1)    \
    ACC_FMA(s, 0, av, b0, b1); \
    ACC_FMA(s, 1, av, b0, b1); \
    ACC_FMA(s, 2, av, b0, b1); \
    ACC_FMA(s, 3, av, b0, b1)
#define ACC_MERGE(r)                             \
    c##r##0 = svadd_f32_x(pg, c##r##0, d##r##0); \
    c##r##1 = svadd_f32_x(pg, c##r##1, d##r##1)
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE(1, steps, acc);     \
    ACC_STORE(2, steps, acc);     \
    ACC_STORE(3, steps, acc)

ISF_UKERNEL(gemm_f32_4x8_sve) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b32(); /* the tile is always full */
    ACC_STARTS();
    const size_t nr = 2 * svcntw(); /* B floats per block */
    /* 16 accumulators + 2 A + 4 B = 22 of 32 Z registers. */
    ACC_DECL(c, 0);
    ACC_DECL(c, 1);
    ACC_DECL(c, 2);
    ACC_DECL(c, 3);
    ACC_DECL(d, 0);
    ACC_DECL(d, 1);
    ACC_DECL(d, 2);
    ACC_DECL(d, 3);

    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        const svfloat32_t a0 = svld1rq_f32(pg, pa), a1 = svld1rq_f32(pg, pa + 4);
        const svfloat32_t b0 = svld1_f32(pg, pb), b1 = svld1_vnum_f32(pg, pb, 1);
        const svfloat32_t b2 = svld1_vnum_f32(pg, pb, 2), b3 = svld1_vnum_f32(pg, pb, 3);
        pa += 8;
        pb += 2 * nr;
        __asm__("" : "+r"(pb)); /* one pointer, B loaded at VL multiples of it (not a VL register per load) */
        STEP(c, a0, b0, b1);
        STEP(d, a1, b2, b3);
    }
    if (k_blocks & 1) {
        const svfloat32_t a0 = svld1rq_f32(pg, pa);
        const svfloat32_t b0 = svld1_f32(pg, pb), b1 = svld1_vnum_f32(pg, pb, 1);
        STEP(c, a0, b0, b1);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    TILE_FINISH();
}
