/*
 * The body shared by gemm_s8_8x8x4_sve, gemm_s4_8x8x4_sve and their 4-row kernels (gemm_s8_4x8x4_sve,
 * gemm_s4_4x8x4_sve): 8 or 4 rows x 2 vectors, SVE sdot by element, 4 k steps per block. Each kernel owns its k
 * loop (int8 or int4 B loads) and feeds blocks through ISF_DOT8 (8 rows) or ISF_DOT4 (4 rows); the accumulators,
 * the bias seeds and the epilogue are here. Include only from files compiled with SVE flags.
 */
#ifndef ISAFORGE_S8_8X8X4_H
#define ISAFORGE_S8_8X8X4_H

#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_quant_sve.h"

/* The old C is added only here, after the k loop, so the loop touches no memory but the panels. */
static inline void store_row(int32_t *c, svbool_t pg, svint32_t x0, svint32_t x1, int accumulate) {
    if (accumulate) {
        x0 = svadd_s32_x(pg, x0, svld1_s32(pg, c));
        x1 = svadd_s32_x(pg, x1, svld1_vnum_s32(pg, c, 1));
    }
    svst1_s32(pg, c, x0);
    svst1_vnum_s32(pg, c, 1, x1);
}

/* The epilogue's BIAS (the only step of int32 output) as seed0, seed1 (columns of B vector 0, 1); zero without. */
#define ISF_BIAS_SEEDS                               \
    svint32_t seed0 = svdup_n_s32(0), seed1 = seed0; \
    if (ep->steps & ISF_EPILOGUE_BIAS) {             \
        seed0 = svld1_s32(pg, ep->bias);             \
        seed1 = svld1_vnum_s32(pg, ep->bias, 1);     \
    }

/*
 * Each 32-bit lane of a B vector is one column's 4 k values (the packed [NR][4] layout), of an A vector one row's:
 * ld1rq replicates rows 0..3 (a0) or 4..7 (a1) into every 128-bit segment and sdot by element broadcasts one row
 * against all the columns of a B vector. Row r, columns [0, VL/32) in c<r>0, [VL/32, 2 VL/32) in c<r>1. The kernel
 * declares a0, a1, b0, b1; ISF_DOT8 adds one block of them to the 16 accumulators.
 */
#define ACC_DECL(s, r, v0, v1) svint32_t s##r##0 = (v0), s##r##1 = (v1)
#define ISF_ACC_DECL(v0, v1) \
    ACC_DECL(c, 0, v0, v1);  \
    ACC_DECL(c, 1, v0, v1);  \
    ACC_DECL(c, 2, v0, v1);  \
    ACC_DECL(c, 3, v0, v1);  \
    ACC_DECL(c, 4, v0, v1);  \
    ACC_DECL(c, 5, v0, v1);  \
    ACC_DECL(c, 6, v0, v1);  \
    ACC_DECL(c, 7, v0, v1)
#define ACC_DOT_B(s, r, av, lane, x0, x1)              \
    s##r##0 = svdot_lane_s32(s##r##0, (x0), av, lane); \
    s##r##1 = svdot_lane_s32(s##r##1, (x1), av, lane)
#define ACC_DOT(r, av, lane) ACC_DOT_B(c, r, av, lane, b0, b1)
#define ISF_DOT8       \
    ACC_DOT(0, a0, 0); \
    ACC_DOT(1, a0, 1); \
    ACC_DOT(2, a0, 2); \
    ACC_DOT(3, a0, 3); \
    ACC_DOT(4, a1, 0); \
    ACC_DOT(5, a1, 1); \
    ACC_DOT(6, a1, 2); \
    ACC_DOT(7, a1, 3)
/* The 4-row kernels: rows 0..3 of set s (s<r>0, s<r>1), one block (av: its 4 rows) against B vectors x0, x1. */
#define ISF_ACC_DECL4(s, v0, v1) \
    ACC_DECL(s, 0, v0, v1);      \
    ACC_DECL(s, 1, v0, v1);      \
    ACC_DECL(s, 2, v0, v1);      \
    ACC_DECL(s, 3, v0, v1)
#define ISF_DOT4(s, av, x0, x1)     \
    ACC_DOT_B(s, 0, av, 0, x0, x1); \
    ACC_DOT_B(s, 1, av, 1, x0, x1); \
    ACC_DOT_B(s, 2, av, 2, x0, x1); \
    ACC_DOT_B(s, 3, av, 3, x0, x1)
#define ACC_STORE(r) store_row(out + (r) * ldc, pg, c##r##0, c##r##1, accumulate)

/*
 * Set c (the tile's final sums, BIAS in them) of `rows` rows (8 or 4, a literal) through the epilogue into C;
 * returns from the kernel. A 4-row tile hands the slices its rows twice: with n = 4 the second copy is never read.
 */
#define ISF_ROWS_V0_8 c00, c10, c20, c30, c40, c50, c60, c70
#define ISF_ROWS_V1_8 c01, c11, c21, c31, c41, c51, c61, c71
#define ISF_ROWS_V0_4 c00, c10, c20, c30, c00, c10, c20, c30
#define ISF_ROWS_V1_4 c01, c11, c21, c31, c01, c11, c21, c31
#define ISF_STORE_ROWS_8 \
    ACC_STORE(0);        \
    ACC_STORE(1);        \
    ACC_STORE(2);        \
    ACC_STORE(3);        \
    ACC_STORE(4);        \
    ACC_STORE(5);        \
    ACC_STORE(6);        \
    ACC_STORE(7)
#define ISF_STORE_ROWS_4 \
    ACC_STORE(0);        \
    ACC_STORE(1);        \
    ACC_STORE(2);        \
    ACC_STORE(3)
#define ISF_TILE_FINISH_ROWS(rows)                                                                     \
    do {                                                                                               \
        if (isf_sve_quantized(ep->steps)) {                                                            \
            isf_sve_quant_tile2(ep, rows, c, ldc, accumulate, ISF_ROWS_V0_##rows, ISF_ROWS_V1_##rows); \
            return;                                                                                    \
        }                                                                                              \
        ISF_STORE_ROWS_##rows;                                                                         \
    } while (0)
#define ISF_TILE_FINISH ISF_TILE_FINISH_ROWS(8)

#endif
