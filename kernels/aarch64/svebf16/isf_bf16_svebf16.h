/*
 * The store and epilogue shared by gemm_bf16_8x4x4_svebf16 and gemm_bf16_4x4x4_svebf16 (BFMMLA tiles of 2 vectors:
 * row pair i's sums in c<i>0, c<i>1). Each kernel owns its k loop and defines ISF_TILE_ROWS(steps, acc) as
 * ACC_STORE of each of its row pairs; TILE_FINISH() stores them. Include only from files compiled with SVE and
 * BF16 flags.
 */
#ifndef ISAFORGE_BF16_SVEBF16_H
#define ISAFORGE_BF16_SVEBF16_H

#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

/*
 * Segment s (128 bits) of an accumulator m<v> is the 2x2 block (rows 2i, 2i+1; columns 2s, 2s+1 of B vector v)
 * laid out [r0c0 r0c1 r1c0 r1c1]: even 64-bit lanes belong to the even row, odd ones to the odd row. uzp1/uzp2 on
 * 64-bit lanes of (m0, m1) put B vector 0's columns, then B vector 1's, in order: one full row each. The old C is
 * added after that, then the epilogue with the tile's bias (one vector: its NR columns) and bounds, loaded once per
 * tile. `steps` is a constant at every call, so each combination of steps is straight-line code. FMAX then FMIN,
 * not FMAXNM/FMINNM: a NaN stays NaN, as the epilogue contract says.
 */
static inline __attribute__((always_inline)) void store_row_pair(float *c, size_t ldc, svbool_t pg, svfloat32_t m0,
                                                                 svfloat32_t m1, int accumulate, uint32_t steps,
                                                                 svfloat32_t bias, svfloat32_t lo, svfloat32_t hi) {
    svuint64_t q0 = svreinterpret_u64_f32(m0), q1 = svreinterpret_u64_f32(m1);
    svfloat32_t even = svreinterpret_f32_u64(svuzp1_u64(q0, q1));
    svfloat32_t odd = svreinterpret_f32_u64(svuzp2_u64(q0, q1));
    if (accumulate) {
        even = svadd_f32_x(pg, even, svld1_f32(pg, c));
        odd = svadd_f32_x(pg, odd, svld1_f32(pg, c + ldc));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        even = svadd_f32_x(pg, even, bias);
        odd = svadd_f32_x(pg, odd, bias);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        even = svmin_f32_x(pg, svmax_f32_x(pg, even, lo), hi);
        odd = svmin_f32_x(pg, svmax_f32_x(pg, odd, lo), hi);
    }
    svst1_f32(pg, c, even);
    svst1_f32(pg, c + ldc, odd);
}

/* Set s's accumulators of row pair i; ld1rq of one row pair's block (8 bfloat16) into every segment. */
#define ACC_DECL(s, i) svfloat32_t s##i##0 = svdup_n_f32(0.0f), s##i##1 = s##i##0
#define ACC_MMLA(s, i)                         \
    s##i##0 = svbfmmla_f32(s##i##0, a##i, b0); \
    s##i##1 = svbfmmla_f32(s##i##1, a##i, b1)
#define LD1RQ(p) svreinterpret_bf16_u16(svld1rq_u16(pg, (p)))
#define ACC_STORE(i, steps, acc) \
    store_row_pair(out + 2 * (i) * ldc, ldc, pg, c##i##0, c##i##1, acc, steps, bias, lo, hi)
/* SVE vectors cannot live in a struct: the epilogue's operands are locals, loaded only for the steps that run. */
#define TILE_STORE(steps, acc)                                                                                    \
    do {                                                                                                          \
        const int has_bias = ((steps) & ISF_EPILOGUE_BIAS) != 0, has_clamp = ((steps) & ISF_EPILOGUE_CLAMP) != 0; \
        const svfloat32_t bias = has_bias ? svld1_f32(pg, ep->bias) : svdup_n_f32(0.0f);                          \
        const svfloat32_t lo = svdup_n_f32(has_clamp ? ep->min : 0.0f);                                           \
        const svfloat32_t hi = svdup_n_f32(has_clamp ? ep->max : 0.0f);                                           \
        ISF_TILE_ROWS(steps, acc);                                                                                \
    } while (0)

#endif
