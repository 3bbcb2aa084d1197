/*
 * The body shared by gemm_s8_8x8x4_sve and gemm_s4_8x8x4_sve: 8 rows x 2 vectors, SVE sdot by element, 4 k steps
 * per block. Each kernel owns its k loop (int8 or int4 B loads) and feeds blocks through ISF_DOT8; the
 * accumulators, the bias seeds and the epilogue are here. Include only from files compiled with SVE flags.
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
#define ACC_DECL(r, v0, v1) svint32_t c##r##0 = (v0), c##r##1 = (v1)
#define ISF_ACC_DECL(v0, v1) \
    ACC_DECL(0, v0, v1);     \
    ACC_DECL(1, v0, v1);     \
    ACC_DECL(2, v0, v1);     \
    ACC_DECL(3, v0, v1);     \
    ACC_DECL(4, v0, v1);     \
    ACC_DECL(5, v0, v1);     \
    ACC_DECL(6, v0, v1);     \
    ACC_DECL(7, v0, v1)
#define ACC_DOT(r, av, lane)                         \
    c##r##0 = svdot_lane_s32(c##r##0, b0, av, lane); \
    c##r##1 = svdot_lane_s32(c##r##1, b1, av, lane)
#define ISF_DOT8       \
    ACC_DOT(0, a0, 0); \
    ACC_DOT(1, a0, 1); \
    ACC_DOT(2, a0, 2); \
    ACC_DOT(3, a0, 3); \
    ACC_DOT(4, a1, 0); \
    ACC_DOT(5, a1, 1); \
    ACC_DOT(6, a1, 2); \
    ACC_DOT(7, a1, 3)
#define ACC_STORE(r) store_row(out + (r) * ldc, pg, c##r##0, c##r##1, accumulate)

/* The tile's final sums (BIAS in them) through the epilogue into C; returns from the kernel. */
#define ISF_TILE_FINISH                                                                                            \
    do {                                                                                                           \
        if (isf_sve_quantized(ep->steps)) {                                                                        \
            if (isf_sve_s8_only(ep->steps)) { /* every field read before the first store */                        \
                isf_sve_s8_slices2(ep, 8, c, ldc, c00, c10, c20, c30, c40, c50, c60, c70, c01, c11, c21, c31, c41, \
                                   c51, c61, c71);                                                                 \
                return;                                                                                            \
            }                                                                                                      \
            const isf_epilogue e = *ep; /* read once: C's int8 stores may alias it */                              \
            isf_sve_quant_slice(&e, 8, 0, c, ldc, accumulate, c00, c10, c20, c30, c40, c50, c60, c70);             \
            isf_sve_quant_slice(&e, 8, 1, c, ldc, accumulate, c01, c11, c21, c31, c41, c51, c61, c71);             \
            return;                                                                                                \
        }                                                                                                          \
        ACC_STORE(0);                                                                                              \
        ACC_STORE(1);                                                                                              \
        ACC_STORE(2);                                                                                              \
        ACC_STORE(3);                                                                                              \
        ACC_STORE(4);                                                                                              \
        ACC_STORE(5);                                                                                              \
        ACC_STORE(6);                                                                                              \
        ACC_STORE(7);                                                                                              \
    } while (0)

#endif
