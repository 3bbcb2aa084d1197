/*
 * int8 -> int32 GEMM row kernel, SVE (vector-length agnostic): 1 row x 2 vectors, 8 k steps per block, SVE sdot.
 * NR = 4 at a 128-bit vector length, VL/32 in general: the B panels of gemm_s8_8x4x8_svei8mm, for rows that kernel
 * would pad (m < 8, the last m % 8 rows). A is the row itself: k_blocks x 8 contiguous bytes, not padded further,
 * maybe unaligned. SDOT is base SVE, so the variant's +sve+i8mm flags allow it.
 */
#include <arm_sve.h>
#include <string.h>

#include "isf_internal.h"
#include "isf_quant_sve.h"

/*
 * A B vector is VL/128 segments of 2 columns x 8 k: as 32-bit lanes, [c0 k0-3, c0 k4-7, c1 k0-3, c1 k4-7]. With one
 * block of the row (8 bytes) broadcast to every 64-bit lane, sdot adds to each lane one half of one column's dot
 * product: no lane of it is wasted, where smmla with a zero second row would waste half, for the same instruction
 * count. After the loop the halves of each column are adjacent lanes; uzp1/uzp2 of (vector 0, vector 1) split them
 * into two vectors of the columns in order, whose sum is the row.
 *
 * accumulate, then the bias (int32, wrapping), then one store: C is read and written once. With no epilogue step
 * the cost is the load of `steps` and a branch. int32 output is never clamped.
 */
static inline svint32_t row_sums(svbool_t pg, svint32_t h0, svint32_t h1) {
    return svadd_s32_x(pg, svuzp1_s32(h0, h1), svuzp2_s32(h0, h1));
}

static inline void store_row(int32_t *c, svbool_t pg, svint32_t x, int accumulate, const isf_epilogue *ep) {
    if (accumulate) {
        x = svadd_s32_x(pg, x, svld1_s32(pg, c));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        x = svadd_s32_x(pg, x, svld1_s32(pg, ep->bias));
    }
    svst1_s32(pg, c, x);
}

/* The quantized epilogue: the bias (int32, wrapping), then the other steps. */
static inline void quant_row(void *c, svbool_t pg, svint32_t x, int accumulate, const isf_epilogue *ep) {
    const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */
    if (e.steps & ISF_EPILOGUE_BIAS) {
        x = svadd_s32_x(pg, x, svld1_s32(pg, e.bias));
    }
    isf_sve_quant_row(&e, 0, c, accumulate, x);
}

/* One block of the row in every 64-bit lane (ld1rd): the row need not be 8-byte aligned. */
static inline svint8_t row_block(const int8_t *p) {
    uint64_t block;
    memcpy(&block, p, 8);
    return svreinterpret_s8_u64(svdup_n_u64(block));
}

/*
 * The loop does 8 blocks into 8 independent accumulator pairs (s<k>0 for B vector 0, s<k>1 for vector 1), summed
 * after the loop.
 */
#define ACC_DECL(k) svint32_t s##k##0 = svdup_n_s32(0), s##k##1 = s##k##0
#define ACC_DOT(k)                                                            \
    do {                                                                      \
        svint8_t ak = row_block(pa + 8 * (k));                                \
        s##k##0 = svdot_s32(s##k##0, svld1_vnum_s8(pg, pb, 2 * (k)), ak);     \
        s##k##1 = svdot_s32(s##k##1, svld1_vnum_s8(pg, pb, 2 * (k) + 1), ak); \
    } while (0)
#define SUM8(p, i)                                                                                         \
    svadd_s32_x(pg, svadd_s32_x(pg, svadd_s32_x(pg, p##0##i, p##1##i), svadd_s32_x(pg, p##2##i, p##3##i)), \
                svadd_s32_x(pg, svadd_s32_x(pg, p##4##i, p##5##i), svadd_s32_x(pg, p##6##i, p##7##i)))

ISF_UKERNEL(gemm_s8_1x4x8_svei8mm) {
    (void)ldc; /* one row: C's stride is never needed */
    const int8_t *pa = a;
    const int8_t *pb = b;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    /*
     * Per 8 blocks: 8 ld1rd + 16 B loads + 16 sdot + pointer and loop steps: 4 useful MACs per 32-bit lane of an
     * sdot, as many as one smmla with a zero row has. One B load per sdot is inherent to one row (each B value is
     * used once); 16 independent chains cover SDOT's latency x issue rate (3 x 4 on Neoverse V2). 16 accumulators
     * + the A and B vectors in flight fit the 32 Z registers.
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
        ACC_DOT(0);
        ACC_DOT(1);
        ACC_DOT(2);
        ACC_DOT(3);
        ACC_DOT(4);
        ACC_DOT(5);
        ACC_DOT(6);
        ACC_DOT(7);
        pa += 64;
        pb += 8 * nb;
        // isf-hot-loop-end
    }
    for (size_t kr = k_blocks % 8; kr > 0; kr--) {
        ACC_DOT(0);
        pa += 8;
        pb += nb;
    }

    svint32_t x = row_sums(svptrue_b32(), SUM8(s, 0), SUM8(s, 1));
    if (isf_sve_quantized(ep->steps)) {
        quant_row(c, svptrue_b32(), x, accumulate, ep);
        return;
    }
    store_row(c, svptrue_b32(), x, accumulate, ep);
}
