/*
 * fp32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, one k step per block (KR = 1). NR = 8 at
 * a 128-bit vector length, 2 x VL/32 in general: the B panels of gemm_f32_8x8_sve, for rows that kernel would pad
 * (m < 8, the last m % 8 rows). A is the row itself: k_blocks contiguous floats, not padded, maybe unaligned.
 */
#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

/*
 * accumulate, then the epilogue, then one store: C is read and written once. With no epilogue step the cost is
 * the load of `steps` and a branch.
 */
static inline void store_row(float *c, svbool_t pg, svfloat32_t x0, svfloat32_t x1, int accumulate,
                             const isf_epilogue *ep) {
    if (accumulate) {
        x0 = svadd_f32_x(pg, x0, svld1_f32(pg, c));
        x1 = svadd_f32_x(pg, x1, svld1_vnum_f32(pg, c, 1));
    }
    uint32_t steps = ep->steps;
    if (steps) {
        if (steps & ISF_EPILOGUE_BIAS) {
            const float *bias = ep->bias;
            x0 = svadd_f32_x(pg, x0, svld1_f32(pg, bias));
            x1 = svadd_f32_x(pg, x1, svld1_vnum_f32(pg, bias, 1));
        }
        if (steps & ISF_EPILOGUE_CLAMP) { /* fmax then fmin: NaN stays NaN, -0 < +0 */
            svfloat32_t lo = svdup_n_f32(ep->min), hi = svdup_n_f32(ep->max);
            x0 = svmin_f32_x(pg, svmax_f32_x(pg, x0, lo), hi);
            x1 = svmin_f32_x(pg, svmax_f32_x(pg, x1, lo), hi);
        }
    }
    svst1_f32(pg, c, x0);
    svst1_vnum_f32(pg, c, 1, x1);
}

/*
 * The loop does 8 k steps into 8 independent accumulator pairs (s<k>0, s<k>1: columns [0, VL/32) and
 * [VL/32, 2 VL/32)), summed after the loop. ld1rq replicates 4 k steps of the row into every 128-bit segment, so
 * fmla by lane multiplies a whole B vector by one A value whatever the vector length.
 */
#define ACC_DECL(k) svfloat32_t s##k##0 = svdup_n_f32(0.0f), s##k##1 = s##k##0
#define ACC_FMA(k, av, lane)                                                    \
    s##k##0 = svmla_lane_f32(s##k##0, svld1_vnum_f32(pg, pb, 2 * k), av, lane); \
    s##k##1 = svmla_lane_f32(s##k##1, svld1_vnum_f32(pg, pb, 2 * k + 1), av, lane)

ISF_UKERNEL(gemm_f32_1x8_sve) {
    (void)ldc; /* one row: C's stride is never needed */
    const float *pa = a;
    const float *pb = b;
    const svbool_t pg = svptrue_b32(); /* the tile is always full */
    const size_t nr = 2 * svcntw();    /* B floats per block */
    /*
     * Per 8 k steps: 2 ld1rq + 16 B loads + 16 fmla + pointer and loop steps. One B load per fmla is inherent to one
     * row (each B value is used once); 16 independent chains cover FMLA's latency x issue rate (4 x 4 on Neoverse
     * V2). 16 accumulators + 2 A + B = at most 32 Z registers, B vectors are loaded next to their fmla.
     */
    ISF_REPEAT_8(ACC_DECL);

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        svfloat32_t a0 = svld1rq_f32(pg, pa), a1 = svld1rq_f32(pg, pa + 4);
        ACC_FMA(0, a0, 0);
        ACC_FMA(1, a0, 1);
        ACC_FMA(2, a0, 2);
        ACC_FMA(3, a0, 3);
        ACC_FMA(4, a1, 0);
        ACC_FMA(5, a1, 1);
        ACC_FMA(6, a1, 2);
        ACC_FMA(7, a1, 3);
        pa += 8;
        pb += 8 * nr;
    }
    /* The last k_blocks % 8 steps one at a time: a wider load of A could cross the end of the caller's row. */
    for (size_t kr = k_blocks % 8; kr > 0; kr--) {
        svfloat32_t av = svdup_n_f32(*pa++);
        s00 = svmla_f32_x(pg, s00, svld1_f32(pg, pb), av);
        s01 = svmla_f32_x(pg, s01, svld1_vnum_f32(pg, pb, 1), av);
        pb += nr;
    }

    svfloat32_t x0 = svadd_f32_x(pg, svadd_f32_x(pg, svadd_f32_x(pg, s00, s10), svadd_f32_x(pg, s20, s30)),
                                 svadd_f32_x(pg, svadd_f32_x(pg, s40, s50), svadd_f32_x(pg, s60, s70)));
    svfloat32_t x1 = svadd_f32_x(pg, svadd_f32_x(pg, svadd_f32_x(pg, s01, s11), svadd_f32_x(pg, s21, s31)),
                                 svadd_f32_x(pg, svadd_f32_x(pg, s41, s51), svadd_f32_x(pg, s61, s71)));
    store_row(c, pg, x0, x1, accumulate, ep);
}
