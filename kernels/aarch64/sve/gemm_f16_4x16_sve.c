/*
 * fp16 GEMM 4-row kernel, SVE (vector-length agnostic): 4 rows x 2 vectors, fmla .h by lane, one k step per block
 * (KR = 1), accumulation in binary16. NR = 16 at a 128-bit vector length, 2 x VL/16 in general: the B panels of
 * gemm_f16_8x16_sve, for the last 2 to 4 rows of a GEMM in one pass over B where the row kernel would stream B once
 * per row. Panels and C are binary16 bits (uint16_t), loaded as u16 and reinterpreted, which costs nothing. The
 * store and epilogue: isf_f16_sve.h, the 8-row kernel's.
 *
 * Per 2 k steps: 1 ld1rq of A + 4 B loads + 16 fmla + pointer steps + subs + b.ne = 25 instructions with clang 19
 * for 16 fmla, 128 MACs at 128 bits (0.20 per MAC; the 8-row kernel's loop: 23, 0.18). With 4 rows a B vector
 * serves 4 fmla, not 8: 5 loads per 16 fmla where the 8-row kernel has 3. llvm-mca: 99.8 % of peak on Neoverse N2
 * and V1, 99.6 % on V2, as the 8-row kernel.
 */
#include "isf_f16_sve.h"

/*
 * One ld1rq replicates the 4 rows of two k steps (8 halves) into every 128-bit segment: lane r is row r of the
 * even step, lane 4 + r of the odd one. Even steps go to set c, odd ones to set d (8 accumulators each, half of
 * FMLA's latency x issue rate, 4 x 4 on Neoverse V2), added after the loop. Row r, columns [0, VL/16) in s<r>0,
 * [VL/16, 2 VL/16) in s<r>1.
 */
/* Set c starts at the bias (ACC_STARTS), set d at zero. */
#define ACC_DECL(s, r) svfloat16_t s##r##0 = s##_START(0), s##r##1 = s##_START(1)
#define c_START(j) start##j
#define d_START(j) zero
#define ACC_FMA(s, r, lane, b0, b1)                  \
    s##r##0 = svmla_lane_f16(s##r##0, b0, a0, lane); \
    s##r##1 = svmla_lane_f16(s##r##1, b1, a0, lane)
#define STEP(s, l, b0, b1)          \
    ACC_FMA(s, 0, (l) + 0, b0, b1); \
    ACC_FMA(s, 1, (l) + 1, b0, b1); \
    ACC_FMA(s, 2, (l) + 2, b0, b1); \
    ACC_FMA(s, 3, (l) + 3, b0, b1)
#define LOAD_B(v) svreinterpret_f16_u16(svld1_vnum_u16(pg, pb, v))
#define ACC_MERGE(r)                             \
    c##r##0 = svadd_f16_x(pg, c##r##0, d##r##0); \
    c##r##1 = svadd_f16_x(pg, c##r##1, d##r##1)
#define ISF_TILE_ROWS(steps, acc) \
    ACC_STORE(0, steps, acc);     \
    ACC_STORE(1, steps, acc);     \
    ACC_STORE(2, steps, acc);     \
    ACC_STORE(3, steps, acc)

ISF_UKERNEL(gemm_f16_4x16_sve) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    ACC_STARTS();
    const size_t nr = 2 * svcnth(); /* B halves per block */
    /* 16 accumulators + 1 A + 4 B = 21 of 32 Z registers. */
    ACC_DECL(c, 0);
    ACC_DECL(c, 1);
    ACC_DECL(c, 2);
    ACC_DECL(c, 3);
    ACC_DECL(d, 0);
    ACC_DECL(d, 1);
    ACC_DECL(d, 2);
    ACC_DECL(d, 3);

    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        const svfloat16_t a0 = svreinterpret_f16_u16(svld1rq_u16(pg, pa));
        const svfloat16_t b0 = LOAD_B(0), b1 = LOAD_B(1), b2 = LOAD_B(2), b3 = LOAD_B(3);
        pa += 8;
        pb += 2 * nr;
        __asm__("" : "+r"(pb)); /* one pointer, B loaded at VL multiples of it (not a VL register per load) */
        STEP(c, 0, b0, b1);
        STEP(d, 4, b2, b3);
    }
    if (k_blocks & 1) {
        /* The last step's 4 halves alone: the 4 after them are past the panel's k. */
        const svfloat16_t a0 = svreinterpret_f16_u16(svld1rq_u16(svwhilelt_b16_u64(0, 4), pa));
        const svfloat16_t b0 = LOAD_B(0), b1 = LOAD_B(1);
        STEP(c, 0, b0, b1);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    TILE_FINISH();
}
