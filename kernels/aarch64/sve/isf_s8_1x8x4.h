/*
 * The body shared by gemm_s8_1x8x4_sve and gemm_s4_1x8x4_sve: one row x 2 vectors, SVE sdot by element, 4 k steps
 * per block. Each kernel owns its k loop (int8 or int4 B loads) and feeds blocks through ISF_ROW_DOT_LANE; the
 * accumulators, their sum and the epilogue are here. Include only from files compiled with SVE flags.
 */
#ifndef ISAFORGE_S8_1X8X4_H
#define ISAFORGE_S8_1X8X4_H

#include <arm_sve.h>
#include <string.h>

#include "isf_internal.h"
#include "isf_quant_sve.h"

/*
 * accumulate, then the bias (int32, wrapping), then one store: C is read and written once. With no epilogue step
 * the cost is the load of `steps` and a branch. int32 output is never clamped.
 */
static inline void store_row(int32_t *c, svbool_t pg, svint32_t x0, svint32_t x1, int accumulate,
                             const isf_epilogue *ep) {
    if (accumulate) {
        x0 = svadd_s32_x(pg, x0, svld1_s32(pg, c));
        x1 = svadd_s32_x(pg, x1, svld1_vnum_s32(pg, c, 1));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const int32_t *bias = ep->bias;
        x0 = svadd_s32_x(pg, x0, svld1_s32(pg, bias));
        x1 = svadd_s32_x(pg, x1, svld1_vnum_s32(pg, bias, 1));
    }
    svst1_s32(pg, c, x0);
    svst1_vnum_s32(pg, c, 1, x1);
}

/* The quantized epilogue: the bias (int32, wrapping), then the other steps, vector by vector. */
static inline void quant_row(void *c, svbool_t pg, svint32_t x0, svint32_t x1, int accumulate, const isf_epilogue *ep) {
    const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */
    if (e.steps & ISF_EPILOGUE_BIAS) {
        x0 = svadd_s32_x(pg, x0, svld1_s32(pg, e.bias));
        x1 = svadd_s32_x(pg, x1, svld1_vnum_s32(pg, e.bias, 1));
    }
    isf_sve_quant_row(&e, 0, c, accumulate, x0);
    isf_sve_quant_row(&e, 1, c, accumulate, x1);
}

/* The row's true sums (x0: columns [0, VL/32), x1: the next VL/32) through the epilogue into C; returns. */
#define ISF_ROW_FINISH(x0, x1)                                     \
    do {                                                           \
        const svint32_t x0_ = (x0), x1_ = (x1);                    \
        if (isf_sve_quantized(ep->steps)) {                        \
            quant_row(c, svptrue_b32(), x0_, x1_, accumulate, ep); \
            return;                                                \
        }                                                          \
        store_row(c, svptrue_b32(), x0_, x1_, accumulate, ep);     \
    } while (0)

/*
 * Each 32-bit lane of a B vector is one column's 4 k values (the packed [NR][4] layout). ld1rq replicates 4 blocks
 * of the row into every 128-bit segment and sdot by element (lane = block) multiplies one block against all the
 * columns of a B vector. The loops do 8 blocks into 8 independent accumulator pairs (s<k>0, s<k>1: columns
 * [0, VL/32) and [VL/32, 2 VL/32)), summed after the loop. ISF_ROW_DOT_LANE(k, av, lane, b0, b1): block k of 8
 * (lane `lane` of av) against B vectors b0, b1.
 */
#define ACC_DECL(k) svint32_t s##k##0 = svdup_n_s32(0), s##k##1 = s##k##0
#define ISF_ROW_ACC_DECL \
    ACC_DECL(0);         \
    ACC_DECL(1);         \
    ACC_DECL(2);         \
    ACC_DECL(3);         \
    ACC_DECL(4);         \
    ACC_DECL(5);         \
    ACC_DECL(6);         \
    ACC_DECL(7)
#define ISF_ROW_DOT_LANE(k, av, lane, b0, b1)          \
    s##k##0 = svdot_lane_s32(s##k##0, (b0), av, lane); \
    s##k##1 = svdot_lane_s32(s##k##1, (b1), av, lane)
#define SUM8(p, i)                                                                                         \
    svadd_s32_x(pg, svadd_s32_x(pg, svadd_s32_x(pg, p##0##i, p##1##i), svadd_s32_x(pg, p##2##i, p##3##i)), \
                svadd_s32_x(pg, svadd_s32_x(pg, p##4##i, p##5##i), svadd_s32_x(pg, p##6##i, p##7##i)))

#endif
