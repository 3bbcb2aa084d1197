/*
 * The body shared by gemm_s8_1x4x8_svei8mm and gemm_s4_1x4x8_svei8mm (one row x 2 vectors) and the store of
 * gemm_s8_1x8x8_svei8mm (4 vectors): 8 k steps per block, SVE sdot. Each kernel owns its k loop (int8 or int4 B
 * loads) and feeds blocks through ISF_ROW_DOT; the rest (the accumulators, their sum, the epilogue) is here.
 * Include only from files compiled with SVE flags.
 *
 * A B vector is VL/128 segments of 2 columns x 8 k: as 32-bit lanes, [c0 k0-3, c0 k4-7, c1 k0-3, c1 k4-7]. With one
 * block of the row (8 bytes) broadcast to every 64-bit lane, sdot adds to each lane one half of one column's dot
 * product: no lane of it is wasted, where smmla with a zero second row would waste half, for the same instruction
 * count. After the loop the halves of each column are adjacent lanes; uzp1/uzp2 of (vector 0, vector 1) split them
 * into two vectors of the columns in order, whose sum is the row.
 */
#ifndef ISAFORGE_S8_1X4X8_H
#define ISAFORGE_S8_1X4X8_H

#include <arm_sve.h>
#include <string.h>

#include "isf_internal.h"
#include "isf_quant_sve.h"

static inline svint32_t row_sums(svbool_t pg, svint32_t h0, svint32_t h1) {
    return svadd_s32_x(pg, svuzp1_s32(h0, h1), svuzp2_s32(h0, h1));
}

/*
 * Vector v of the row: accumulate, then the bias (int32, wrapping), then one store: C is read and written once.
 * With no epilogue step the cost is the load of `steps` and a branch. int32 output is never clamped.
 */
static inline void store_row(int32_t *c, int64_t v, svbool_t pg, svint32_t x, int accumulate, const isf_epilogue *ep) {
    if (accumulate) {
        x = svadd_s32_x(pg, x, svld1_vnum_s32(pg, c, v));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        x = svadd_s32_x(pg, x, svld1_vnum_s32(pg, ep->bias, v));
    }
    svst1_vnum_s32(pg, c, v, x);
}

/* The quantized epilogue of vector v of the row: the bias (int32, wrapping), then the other steps. */
static inline void quant_row(void *c, int64_t v, svbool_t pg, svint32_t x, int accumulate, const isf_epilogue *e) {
    if (e->steps & ISF_EPILOGUE_BIAS) {
        x = svadd_s32_x(pg, x, svld1_vnum_s32(pg, e->bias, v));
    }
    isf_sve_quant_row(e, v, c, accumulate, x);
}

/* The row's true sums x (columns in order) through the epilogue into C; returns from the kernel. */
#define ISF_ROW_FINISH(x)                                                             \
    do {                                                                              \
        const svint32_t x_ = (x);                                                     \
        if (isf_sve_quantized(ep->steps)) {                                           \
            const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */ \
            quant_row(c, 0, svptrue_b32(), x_, accumulate, &e);                       \
            return;                                                                   \
        }                                                                             \
        store_row(c, 0, svptrue_b32(), x_, accumulate, ep);                           \
    } while (0)
/* The same for a row of two vectors, x0 and x1. */
#define ISF_ROW_FINISH2(x0, x1)                                                       \
    do {                                                                              \
        const svint32_t x0_ = (x0), x1_ = (x1);                                       \
        if (isf_sve_quantized(ep->steps)) {                                           \
            const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */ \
            quant_row(c, 0, svptrue_b32(), x0_, accumulate, &e);                      \
            quant_row(c, 1, svptrue_b32(), x1_, accumulate, &e);                      \
            return;                                                                   \
        }                                                                             \
        store_row(c, 0, svptrue_b32(), x0_, accumulate, ep);                          \
        store_row(c, 1, svptrue_b32(), x1_, accumulate, ep);                          \
    } while (0)

/* One block of the row in every 64-bit lane (ld1rd): the row need not be 8-byte aligned. */
static inline svint8_t row_block(const int8_t *p) {
    uint64_t block;
    memcpy(&block, p, 8);
    return svreinterpret_s8_u64(svdup_n_u64(block));
}

/*
 * The loops do 8 blocks into 8 independent accumulator pairs (s<k>0 for B vector 0, s<k>1 for vector 1), summed
 * after the loop. ISF_ROW_DOT(k, a, b0, b1): block k of 8 (row bytes at a) against B vectors b0, b1.
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
#define ISF_ROW_DOT(k, a, b0, b1)               \
    do {                                        \
        svint8_t ak = row_block(a);             \
        s##k##0 = svdot_s32(s##k##0, (b0), ak); \
        s##k##1 = svdot_s32(s##k##1, (b1), ak); \
    } while (0)
#define SUM8(p, i)                                                                                         \
    svadd_s32_x(pg, svadd_s32_x(pg, svadd_s32_x(pg, p##0##i, p##1##i), svadd_s32_x(pg, p##2##i, p##3##i)), \
                svadd_s32_x(pg, svadd_s32_x(pg, p##4##i, p##5##i), svadd_s32_x(pg, p##6##i, p##7##i)))
/* The sums of the 8 accumulator pairs, columns in order. */
#define ISF_ROW_SUMS row_sums(svptrue_b32(), SUM8(s, 0), SUM8(s, 1))
/*
 * The wide row kernels (4 B vectors a block) put B vectors 0, 1 into the even accumulator pairs and 2, 3 into the
 * odd ones: the row's first vector of sums, then its second, columns in order.
 */
#define SUM4(p, k0, k1, k2, k3, i) \
    svadd_s32_x(pg, svadd_s32_x(pg, p##k0##i, p##k1##i), svadd_s32_x(pg, p##k2##i, p##k3##i))
#define ISF_ROW_SUMS_LO row_sums(svptrue_b32(), SUM4(s, 0, 2, 4, 6, 0), SUM4(s, 0, 2, 4, 6, 1))
#define ISF_ROW_SUMS_HI row_sums(svptrue_b32(), SUM4(s, 1, 3, 5, 7, 0), SUM4(s, 1, 3, 5, 7, 1))

#endif
