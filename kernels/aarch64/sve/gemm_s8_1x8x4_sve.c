/*
 * int8 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, SVE sdot by element, 4 k steps
 * per block. NR = 8 at a 128-bit vector length, 2 x VL/32 in general: the B panels of gemm_s8_8x8x4_sve, for rows
 * that kernel would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks x 4 contiguous bytes, not
 * padded further, maybe unaligned. Only SVE instructions (the SVE SDOT is base SVE), as the full kernel.
 */
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

/*
 * Each 32-bit lane of a B vector is one column's 4 k values (the packed [NR][4] layout). ld1rq replicates 4 blocks
 * of the row into every 128-bit segment and sdot by element (lane = block) multiplies one block against all the
 * columns of a B vector. The loop does 8 blocks into 8 independent accumulator pairs (s<k>0, s<k>1: columns
 * [0, VL/32) and [VL/32, 2 VL/32)), summed after the loop.
 */
#define ACC_DECL(k) svint32_t s##k##0 = svdup_n_s32(0), s##k##1 = s##k##0
#define ACC_DOT(k, av, lane)                                                   \
    s##k##0 = svdot_lane_s32(s##k##0, svld1_vnum_s8(pg, pb, 2 * k), av, lane); \
    s##k##1 = svdot_lane_s32(s##k##1, svld1_vnum_s8(pg, pb, 2 * k + 1), av, lane)
#define SUM8(p, i)                                                                                         \
    svadd_s32_x(pg, svadd_s32_x(pg, svadd_s32_x(pg, p##0##i, p##1##i), svadd_s32_x(pg, p##2##i, p##3##i)), \
                svadd_s32_x(pg, svadd_s32_x(pg, p##4##i, p##5##i), svadd_s32_x(pg, p##6##i, p##7##i)))

ISF_UKERNEL(gemm_s8_1x8x4_sve) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    /*
     * Per 8 blocks: 2 ld1rq + 16 B loads + 16 sdot + pointer and loop steps. One B load per sdot is inherent to one
     * row (each B value is used once); 16 independent chains cover SDOT's latency x issue rate (3 x 4 on Neoverse
     * V2). 16 accumulators + 2 A + the B vectors in flight fit the 32 Z registers.
     */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t kt = k_blocks / 8; kt > 0; kt--) {
        // isf-hot-loop-begin
        svint8_t a0 = svld1rq_s8(pg, pa), a1 = svld1rq_s8(pg, pa + 16);
        ACC_DOT(0, a0, 0);
        ACC_DOT(1, a0, 1);
        ACC_DOT(2, a0, 2);
        ACC_DOT(3, a0, 3);
        ACC_DOT(4, a1, 0);
        ACC_DOT(5, a1, 1);
        ACC_DOT(6, a1, 2);
        ACC_DOT(7, a1, 3);
        pa += 32;
        pb += 8 * nb;
        // isf-hot-loop-end
    }
    /* The last k_blocks % 8 blocks one at a time: a wider load of A could cross the end of the caller's row. */
    for (size_t kr = k_blocks % 8; kr > 0; kr--) {
        int32_t block;
        memcpy(&block, pa, 4);
        svint8_t av = svreinterpret_s8_s32(svdup_n_s32(block));
        s00 = svdot_s32(s00, svld1_s8(pg, pb), av);
        s01 = svdot_s32(s01, svld1_vnum_s8(pg, pb, 1), av);
        pa += 4;
        pb += nb;
    }

    svint32_t x0 = SUM8(s, 0), x1 = SUM8(s, 1);
    if (isf_sve_quantized(ep->steps)) {
        quant_row(c, svptrue_b32(), x0, x1, accumulate, ep);
        return;
    }
    store_row(c, svptrue_b32(), x0, x1, accumulate, ep);
}
