/*
 * The body shared by the SVE SMMLA tiles: gemm_s8_8x4x8_svei8mm, gemm_s4_8x4x8_svei8mm and their 4-row kernels
 * (gemm_s8_4x4x8_svei8mm, gemm_s4_4x4x8_svei8mm): 8 or 4 rows x 2 vectors; the wide ones (gemm_s8_8x8x8_svei8mm,
 * gemm_s8_4x8x8_svei8mm): 4 vectors, the _WIDE macros. 8 k steps per block. Each kernel owns its k loop (int8 or
 * int4 B loads) and feeds blocks through ISF_MMLA4 (8 rows) or ISF_MMLA2 (4 rows), and their _WIDE forms; the
 * accumulators, the bias seeds, the unzip to rows and the epilogue are here. Include only from files compiled with
 * SVE flags.
 *
 * Segment s (128 bits) of an accumulator m<v> is the 2x2 block (rows 2i, 2i+1; columns 2s, 2s+1 of B vector v)
 * laid out [r0c0 r0c1 r1c0 r1c1]: even 64-bit lanes belong to the even row, odd ones to the odd row. uzp1/uzp2 on
 * 64-bit lanes of (m0, m1) put B vector 0's columns, then B vector 1's, in order: one full row each.
 */
#ifndef ISAFORGE_S8_8X4X8_H
#define ISAFORGE_S8_8X4X8_H

#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_quant_sve.h"

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
 * The epilogue's BIAS (the only step of int32 output) as two vectors seed0, seed1 laid out like an accumulator
 * pair: zip1/zip2 on 64-bit lanes give each segment (columns 2s, 2s+1 of B vector 0 or 1) its bias pair for both
 * rows, the inverse of store_row_pair's uzp. Zero without BIAS. CLAMP is never asked of int32 output.
 */
#define ISF_BIAS_SEEDS                                                   \
    const svint32_t zero = svdup_n_s32(0);                               \
    svint32_t seed0 = zero, seed1 = zero;                                \
    if (ep->steps & ISF_EPILOGUE_BIAS) {                                 \
        svint64_t bias = svreinterpret_s64_s32(svld1_s32(pg, ep->bias)); \
        seed0 = svreinterpret_s32_s64(svzip1_s64(bias, bias));           \
        seed1 = svreinterpret_s32_s64(svzip2_s64(bias, bias));           \
    }
/* The wide tiles' seeds of B vectors 2, 3: the bias's second vector, as ISF_BIAS_SEEDS does its first. */
#define ISF_BIAS_SEEDS_HI                                                        \
    svint32_t seed2 = zero, seed3 = zero;                                        \
    if (ep->steps & ISF_EPILOGUE_BIAS) {                                         \
        svint64_t bias = svreinterpret_s64_s32(svld1_vnum_s32(pg, ep->bias, 1)); \
        seed2 = svreinterpret_s32_s64(svzip1_s64(bias, bias));                   \
        seed3 = svreinterpret_s32_s64(svzip2_s64(bias, bias));                   \
    }

/*
 * ld1rq replicates rows 2i, 2i+1 x 8 k (16 bytes, a<i>) into every segment; a B vector is VL/16 segments of
 * 2 columns x 8 k, exactly the packed [NR][8] layout. The tile has only 8 accumulators, fewer than SMMLA's
 * latency x issue rate (3 x 4 = 12 on Neoverse V2 without accumulator forwarding), so the loops do two k blocks
 * into two independent sets (c: even blocks, d: odd blocks), added together after the loop. The kernel declares
 * a0..a3, b0, b1; ISF_LOAD_A loads a block's rows, ISF_MMLA4 multiplies them by b0, b1 into set s.
 */
#define ACC_DECL(s, i, v0, v1) svint32_t s##i##0 = (v0), s##i##1 = (v1)
#define ISF_ACC_DECL(s, v0, v1) \
    ACC_DECL(s, 0, v0, v1);     \
    ACC_DECL(s, 1, v0, v1);     \
    ACC_DECL(s, 2, v0, v1);     \
    ACC_DECL(s, 3, v0, v1)
#define ACC_MMLA(s, i)                       \
    s##i##0 = svmmla_s32(s##i##0, a##i, b0); \
    s##i##1 = svmmla_s32(s##i##1, a##i, b1)
#define ISF_LOAD_A(pa)                                         \
    a0 = svld1rq_s8(pg, (pa)), a1 = svld1rq_s8(pg, (pa) + 16); \
    a2 = svld1rq_s8(pg, (pa) + 32), a3 = svld1rq_s8(pg, (pa) + 48)
#define ISF_MMLA4(s) \
    ACC_MMLA(s, 0);  \
    ACC_MMLA(s, 1);  \
    ACC_MMLA(s, 2);  \
    ACC_MMLA(s, 3)
/* The 4-row kernels: row pairs 0 and 1 only (a0, a1). */
#define ISF_ACC_DECL2(s, v0, v1) \
    ACC_DECL(s, 0, v0, v1);      \
    ACC_DECL(s, 1, v0, v1)
#define ISF_LOAD_A2(pa) a0 = svld1rq_s8(pg, (pa)), a1 = svld1rq_s8(pg, (pa) + 16)
#define ISF_MMLA2(s) \
    ACC_MMLA(s, 0);  \
    ACC_MMLA(s, 1)
/*
 * The wide tiles: row pair i's sums in s<i>0 .. s<i>3 (B vectors 0-3; 2 and 3 hold the second fp32 vector of each
 * row). The kernel declares b2, b3 too.
 */
#define ACC_DECL_HI(s, i, v2, v3) svint32_t s##i##2 = (v2), s##i##3 = (v3)
#define ACC_DECL_WIDE(s, i, v0, v1, v2, v3) \
    ACC_DECL(s, i, v0, v1);                 \
    ACC_DECL_HI(s, i, v2, v3)
#define ISF_ACC_DECL_WIDE(s, v0, v1, v2, v3) \
    ACC_DECL_WIDE(s, 0, v0, v1, v2, v3);     \
    ACC_DECL_WIDE(s, 1, v0, v1, v2, v3);     \
    ACC_DECL_WIDE(s, 2, v0, v1, v2, v3);     \
    ACC_DECL_WIDE(s, 3, v0, v1, v2, v3)
#define ISF_ACC_DECL2_WIDE(s, v0, v1, v2, v3) \
    ACC_DECL_WIDE(s, 0, v0, v1, v2, v3);      \
    ACC_DECL_WIDE(s, 1, v0, v1, v2, v3)
#define ACC_MMLA_WIDE(s, i)                  \
    ACC_MMLA(s, i);                          \
    s##i##2 = svmmla_s32(s##i##2, a##i, b2); \
    s##i##3 = svmmla_s32(s##i##3, a##i, b3)
#define ISF_LOAD_B_WIDE(pb, v)                                                \
    b0 = svld1_vnum_s8(pg, (pb), (v)), b1 = svld1_vnum_s8(pg, (pb), (v) + 1); \
    b2 = svld1_vnum_s8(pg, (pb), (v) + 2), b3 = svld1_vnum_s8(pg, (pb), (v) + 3)
#define ISF_MMLA4_WIDE(s) \
    ACC_MMLA_WIDE(s, 0);  \
    ACC_MMLA_WIDE(s, 1);  \
    ACC_MMLA_WIDE(s, 2);  \
    ACC_MMLA_WIDE(s, 3)
#define ISF_MMLA2_WIDE(s) \
    ACC_MMLA_WIDE(s, 0);  \
    ACC_MMLA_WIDE(s, 1)
/*
 * The int4 wide tiles' pair of blocks: one load per B vector holds both blocks' nibbles; LSL #4 gives the even
 * block's values x 16 (into set s, its A through load_a at pa), AND #0xF0 the odd one's (into set t, its A at
 * pa + a_step): one ALU instruction per block and vector for half the B loads.
 */
#define ISF_S4_PAIR_WIDE(load_a, mmla, s, t, pa, a_step)                                  \
    do {                                                                                  \
        const svint8_t v0 = svld1_s8(pg, pb), v1 = svld1_vnum_s8(pg, pb, 1);              \
        const svint8_t v2 = svld1_vnum_s8(pg, pb, 2), v3 = svld1_vnum_s8(pg, pb, 3);      \
        load_a(pa);                                                                       \
        b0 = svlsl_n_s8_x(pg, v0, 4), b1 = svlsl_n_s8_x(pg, v1, 4);                       \
        b2 = svlsl_n_s8_x(pg, v2, 4), b3 = svlsl_n_s8_x(pg, v3, 4);                       \
        mmla(s);                                                                          \
        load_a((pa) + (a_step));                                                          \
        b0 = svand_n_s8_x(pg, v0, (int8_t)0xF0), b1 = svand_n_s8_x(pg, v1, (int8_t)0xF0); \
        b2 = svand_n_s8_x(pg, v2, (int8_t)0xF0), b3 = svand_n_s8_x(pg, v3, (int8_t)0xF0); \
        mmla(t);                                                                          \
    } while (0)
#define ACC_STORE(i) store_row_pair(out + 2 * (i) * ldc, ldc, pg, c##i##0, c##i##1, accumulate)
#define ROWS(i) even_row(c##i##0, c##i##1), odd_row(c##i##0, c##i##1)
#define ACC_STORE_HI(i) store_row_pair(out + 2 * (i) * ldc + svcntw(), ldc, pg, c##i##2, c##i##3, accumulate)
#define ROWS_HI(i) even_row(c##i##2, c##i##3), odd_row(c##i##2, c##i##3)

/*
 * Set c (the tile's final sums, BIAS in them) of `rows` rows (8 or 4, a literal) through the epilogue into C;
 * returns from the kernel. A 4-row tile hands isf_sve_quant_slice its rows twice: with n = 4 the second copy is
 * never read.
 */
#define ISF_QUANT_ROWS_8 ROWS(0), ROWS(1), ROWS(2), ROWS(3)
#define ISF_QUANT_ROWS_4 ROWS(0), ROWS(1), ROWS(0), ROWS(1)
#define ISF_STORE_ROWS_8 \
    ACC_STORE(0);        \
    ACC_STORE(1);        \
    ACC_STORE(2);        \
    ACC_STORE(3)
#define ISF_STORE_ROWS_4 \
    ACC_STORE(0);        \
    ACC_STORE(1)
#define ISF_TILE_FINISH_ROWS(rows)                                                       \
    do {                                                                                 \
        if (isf_sve_quantized(ep->steps)) {                                              \
            const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */    \
            isf_sve_quant_slice(&e, rows, 0, c, ldc, accumulate, ISF_QUANT_ROWS_##rows); \
            return;                                                                      \
        }                                                                                \
        ISF_STORE_ROWS_##rows;                                                           \
    } while (0)
#define ISF_TILE_FINISH ISF_TILE_FINISH_ROWS(8)

/* The wide tiles: each row's second vector (B vectors 2, 3) is slice 1. */
#define ISF_QUANT_ROWS_HI_8 ROWS_HI(0), ROWS_HI(1), ROWS_HI(2), ROWS_HI(3)
#define ISF_QUANT_ROWS_HI_4 ROWS_HI(0), ROWS_HI(1), ROWS_HI(0), ROWS_HI(1)
#define ISF_STORE_ROWS_HI_8 \
    ACC_STORE_HI(0);        \
    ACC_STORE_HI(1);        \
    ACC_STORE_HI(2);        \
    ACC_STORE_HI(3)
#define ISF_STORE_ROWS_HI_4 \
    ACC_STORE_HI(0);        \
    ACC_STORE_HI(1)
#define ISF_TILE_FINISH_WIDE(rows)                                                                              \
    do {                                                                                                        \
        if (isf_sve_quantized(ep->steps)) {                                                                     \
            isf_sve_quant_tile2(ep, rows, c, ldc, accumulate, ISF_QUANT_ROWS_##rows, ISF_QUANT_ROWS_HI_##rows); \
            return;                                                                                             \
        }                                                                                                       \
        ISF_STORE_ROWS_##rows;                                                                                  \
        ISF_STORE_ROWS_HI_##rows;                                                                               \
    } while (0)

#endif
