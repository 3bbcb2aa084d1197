/*
 * int8 -> int32 GEMM micro-kernel, SVE SMMLA (vector-length agnostic): 8 rows x 2 vectors, 8 k steps per block.
 * NR = 4 at a 128-bit vector length, VL/32 in general. The quantized epilogue (fp32 or int8 C) runs on the rows
 * the accumulators' 2x2 blocks unzip to: isf_quant_sve.h.
 */
#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_quant_sve.h"

/*
 * Segment s (128 bits) of an accumulator m<v> is the 2x2 block (rows 2i, 2i+1; columns 2s, 2s+1 of B vector v)
 * laid out [r0c0 r0c1 r1c0 r1c1]: even 64-bit lanes belong to the even row, odd ones to the odd row. uzp1/uzp2 on
 * 64-bit lanes of (m0, m1) put B vector 0's columns, then B vector 1's, in order: one full row each.
 */
static inline svint32_t even_row(svint32_t m0, svint32_t m1) {
    return svreinterpret_s32_s64(svuzp1_s64(svreinterpret_s64_s32(m0), svreinterpret_s64_s32(m1)));
}

static inline svint32_t odd_row(svint32_t m0, svint32_t m1) {
    return svreinterpret_s32_s64(svuzp2_s64(svreinterpret_s64_s32(m0), svreinterpret_s64_s32(m1)));
}

static inline void store_row_pair(int32_t *c, size_t ldc, svbool_t pg, svint32_t m0, svint32_t m1, int accumulate) {
    svint32_t even = even_row(m0, m1);
    svint32_t odd = odd_row(m0, m1);
    if (accumulate) {
        even = svadd_s32_x(pg, even, svld1_s32(pg, c));
        odd = svadd_s32_x(pg, odd, svld1_s32(pg, c + ldc));
    }
    svst1_s32(pg, c, even);
    svst1_s32(pg, c + ldc, odd);
}

/*
 * ld1rq replicates rows 2i, 2i+1 x 8 k (16 bytes, a<i>) into every segment; a B vector is VL/16 segments of
 * 2 columns x 8 k, exactly the packed [NR][8] layout. The tile has only 8 accumulators, fewer than SMMLA's
 * latency x issue rate (3 x 4 = 12 on Neoverse V2 without accumulator forwarding), so the loop does two k blocks
 * into two independent sets (c: even blocks, d: odd blocks), added together after the loop.
 */
#define ACC_DECL(s, i, v0, v1) svint32_t s##i##0 = (v0), s##i##1 = (v1)
#define ACC_MMLA(s, i)                       \
    s##i##0 = svmmla_s32(s##i##0, a##i, b0); \
    s##i##1 = svmmla_s32(s##i##1, a##i, b1)
#define LOAD_BLOCK(pa, pb)                                          \
    a0 = svld1rq_s8(pg, (pa)), a1 = svld1rq_s8(pg, (pa) + 16);      \
    a2 = svld1rq_s8(pg, (pa) + 32), a3 = svld1rq_s8(pg, (pa) + 48); \
    b0 = svld1_s8(pg, (pb)), b1 = svld1_vnum_s8(pg, (pb), 1)
#define BLOCK(s, pa, pb) \
    LOAD_BLOCK(pa, pb);  \
    ACC_MMLA(s, 0);      \
    ACC_MMLA(s, 1);      \
    ACC_MMLA(s, 2);      \
    ACC_MMLA(s, 3)
#define ACC_MERGE(i)                             \
    c##i##0 = svadd_s32_x(pg, c##i##0, d##i##0); \
    c##i##1 = svadd_s32_x(pg, c##i##1, d##i##1)
#define ACC_STORE(i) store_row_pair(out + 2 * (i) * ldc, ldc, pg, c##i##0, c##i##1, accumulate)
#define ROWS(i) even_row(c##i##0, c##i##1), odd_row(c##i##0, c##i##1)

ISF_UKERNEL(gemm_s8_8x4x8_svei8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    const svbool_t pg = svptrue_b8(); /* the tile is always full */
    const size_t nb = 2 * svcntb();   /* B bytes per block */
    svint8_t a0, a1, a2, a3, b0, b1;
    /*
     * The epilogue's BIAS (the only step of int32 output) seeds set c instead of zero: int32 addition wraps, so
     * bias + sums (+ old C) is bit for bit the contract's sums (+ old C) + bias, and the step costs a load, two zips
     * and a branch per tile, not 8 additions. zip1/zip2 on 64-bit lanes give each segment (columns 2s, 2s+1 of B
     * vector 0 or 1) its bias pair for both rows, the inverse of store_row_pair's uzp. CLAMP is never asked of int32
     * output.
     */
    const svint32_t zero = svdup_n_s32(0);
    svint32_t seed0 = zero, seed1 = zero;
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        svint64_t bias = svreinterpret_s64_s32(svld1_s32(pg, ep->bias));
        seed0 = svreinterpret_s32_s64(svzip1_s64(bias, bias));
        seed1 = svreinterpret_s32_s64(svzip2_s64(bias, bias));
    }
    /* 2 sets x 8 accumulators + 4 A + 2 B = 22 of 32 Z registers; 6 loads per 8 smmla. */
    ACC_DECL(c, 0, seed0, seed1);
    ACC_DECL(c, 1, seed0, seed1);
    ACC_DECL(c, 2, seed0, seed1);
    ACC_DECL(c, 3, seed0, seed1);
    ACC_DECL(d, 0, zero, zero);
    ACC_DECL(d, 1, zero, zero);
    ACC_DECL(d, 2, zero, zero);
    ACC_DECL(d, 3, zero, zero);

    for (size_t kp = k_blocks / 2; kp > 0; kp--) {
        // isf-hot-loop-begin
        BLOCK(c, pa, pb);
        BLOCK(d, pa + 64, pb + nb);
        pa += 128;
        pb += 2 * nb;
        // isf-hot-loop-end
    }
    if (k_blocks & 1) {
        BLOCK(c, pa, pb);
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    if (isf_sve_quantized(ep->steps)) {
        const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */
        isf_sve_quant_slice(&e, 8, 0, c, ldc, accumulate, ROWS(0), ROWS(1), ROWS(2), ROWS(3));
        return;
    }
    ACC_STORE(0);
    ACC_STORE(1);
    ACC_STORE(2);
    ACC_STORE(3);
}
