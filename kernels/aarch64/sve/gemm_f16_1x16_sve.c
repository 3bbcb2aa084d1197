/*
 * fp16 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, fmla .h by lane, one k step per block
 * (KR = 1), accumulation in binary16. NR = 16 at a 128-bit vector length, 2 x VL/16 in general: the B panels of
 * gemm_f16_8x16_sve, for rows that kernel would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks
 * contiguous binary16 values, not padded, maybe unaligned. Panels and C are binary16 bits (uint16_t), loaded as
 * u16 and reinterpreted, which costs nothing.
 */
#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

/*
 * accumulate, then the epilogue, then one store: C is read and written once. With no epilogue step the cost is
 * the load of `steps` and a branch. Bias and bounds are binary16 here, as C is.
 */
static inline void store_row(uint16_t *c, svbool_t pg, svfloat16_t x0, svfloat16_t x1, int accumulate,
                             const isf_epilogue *ep) {
    if (accumulate) {
        x0 = svadd_f16_x(pg, x0, svreinterpret_f16_u16(svld1_u16(pg, c)));
        x1 = svadd_f16_x(pg, x1, svreinterpret_f16_u16(svld1_vnum_u16(pg, c, 1)));
    }
    uint32_t steps = ep->steps;
    if (steps) {
        if (steps & ISF_EPILOGUE_BIAS) {
            const uint16_t *bias = ep->bias;
            x0 = svadd_f16_x(pg, x0, svreinterpret_f16_u16(svld1_u16(pg, bias)));
            x1 = svadd_f16_x(pg, x1, svreinterpret_f16_u16(svld1_vnum_u16(pg, bias, 1)));
        }
        if (steps & ISF_EPILOGUE_CLAMP) { /* fmax then fmin: NaN stays NaN, -0 < +0 */
            svfloat16_t lo = svreinterpret_f16_u16(svdup_n_u16(ep->min_f16));
            svfloat16_t hi = svreinterpret_f16_u16(svdup_n_u16(ep->max_f16));
            x0 = svmin_f16_x(pg, svmax_f16_x(pg, x0, lo), hi);
            x1 = svmin_f16_x(pg, svmax_f16_x(pg, x1, lo), hi);
        }
    }
    svst1_u16(pg, c, svreinterpret_u16_f16(x0));
    svst1_vnum_u16(pg, c, 1, svreinterpret_u16_f16(x1));
}

/*
 * The loop does 8 k steps into 8 independent accumulator pairs (s<k>0, s<k>1: columns [0, VL/16) and
 * [VL/16, 2 VL/16)), summed after the loop. One ld1rq replicates 8 k steps of the row into every 128-bit segment;
 * lane k selects step k, so fmla by lane multiplies a whole B vector by one A value whatever the vector length.
 */
#define ACC_DECL(k) svfloat16_t s##k##0 = svdup_n_f16(0.0), s##k##1 = s##k##0
#define LD_B(v) svreinterpret_f16_u16(svld1_vnum_u16(pg, pb, v))
#define ACC_FMA(k)                                         \
    s##k##0 = svmla_lane_f16(s##k##0, LD_B(2 * k), a0, k); \
    s##k##1 = svmla_lane_f16(s##k##1, LD_B(2 * k + 1), a0, k)
#define SUM8(p, i)                                                                                         \
    svadd_f16_x(pg, svadd_f16_x(pg, svadd_f16_x(pg, p##0##i, p##1##i), svadd_f16_x(pg, p##2##i, p##3##i)), \
                svadd_f16_x(pg, svadd_f16_x(pg, p##4##i, p##5##i), svadd_f16_x(pg, p##6##i, p##7##i)))

ISF_UKERNEL(gemm_f16_1x16_sve) {
    (void)ldc; /* one row: C's stride is never needed */
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    const size_t nr = 2 * svcnth();    /* B halves per block */
    /*
     * Per 8 k steps: 1 ld1rq + 16 B loads + 16 fmla + pointer and loop steps. One B load per fmla is inherent to one
     * row (each B value is used once); 16 independent chains cover FMLA's latency x issue rate (4 x 4 on Neoverse
     * V2). 16 accumulators + 1 A + the B vectors in flight fit the 32 Z registers.
     */
    ISF_REPEAT_8(ACC_DECL);

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        svfloat16_t a0 = svreinterpret_f16_u16(svld1rq_u16(pg, pa));
        ACC_FMA(0);
        ACC_FMA(1);
        ACC_FMA(2);
        ACC_FMA(3);
        ACC_FMA(4);
        ACC_FMA(5);
        ACC_FMA(6);
        ACC_FMA(7);
        pa += 8;
        pb += 8 * nr;
    }
    /* The last k_blocks % 8 steps one at a time: a wider load of A could cross the end of the caller's row. */
    for (size_t kr = k_blocks % 8; kr > 0; kr--) {
        svfloat16_t av = svreinterpret_f16_u16(svdup_n_u16(*pa++));
        s00 = svmla_f16_x(pg, s00, LD_B(0), av);
        s01 = svmla_f16_x(pg, s01, LD_B(1), av);
        pb += nr;
    }

    store_row(c, pg, SUM8(s, 0), SUM8(s, 1), accumulate, ep);
}
