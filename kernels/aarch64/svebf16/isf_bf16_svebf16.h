/*
 * The sums' start (the bias), the store and the clamp shared by the svebf16 kernels. BFMMLA tiles (8x4x4, 4x4x4: 2 B
 * vectors, row pair i's sums in c<i>0, c<i>1; 8x8x4, 4x8x4: 4 B vectors, c<i>0 .. c<i>3): each kernel owns its k
 * loop, starts its sums with ACC_STARTS (and ACC_STARTS_HI for 4 B vectors) and defines ISF_TILE_ROWS(steps, acc) as
 * ACC_STORE (and ACC_STORE_HI) of each of its row pairs; TILE_FINISH() stores them. The row kernels (1x4x4, 1x8x4:
 * BFDOT) share row_block and store_row. Include only from files compiled with SVE and BF16 flags.
 */
#ifndef ISAFORGE_BF16_SVEBF16_H
#define ISAFORGE_BF16_SVEBF16_H

#include <arm_sve.h>
#include <string.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

/*
 * Segment s (128 bits) of an accumulator m<v> is the 2x2 block (rows 2i, 2i+1; columns 2s, 2s+1 of B vector v)
 * laid out [r0c0 r0c1 r1c0 r1c1]: even 64-bit lanes belong to the even row, odd ones to the odd row. uzp1/uzp2 on
 * 64-bit lanes of (m0, m1) put B vector 0's columns, then B vector 1's, in order: one full row each. The old C is
 * added after that, then the clamp with the tile's bounds, loaded once per tile (the bias is in the sums already:
 * ACC_STARTS). With no old C the clamp goes first, on the accumulators, which die there: compilers then clamp them
 * in place (after the unzip, clang copied 15 of 16 results with movprfx, half a cycle each on N2's vector pipes).
 * `steps` is a constant at every call, so each combination of steps is straight-line code. FMAX then FMIN, not
 * FMAXNM/FMINNM: a NaN stays NaN, as the epilogue contract says.
 */
static inline __attribute__((always_inline)) void store_row_pair(float *c, size_t ldc, svbool_t pg, svfloat32_t m0,
                                                                 svfloat32_t m1, int accumulate, uint32_t steps,
                                                                 svfloat32_t lo, svfloat32_t hi) {
    int clamp_first = !accumulate && (steps & ISF_EPILOGUE_CLAMP);
    if (clamp_first) {
        m0 = svmin_f32_x(pg, svmax_f32_x(pg, m0, lo), hi);
        m1 = svmin_f32_x(pg, svmax_f32_x(pg, m1, lo), hi);
    }
    svuint64_t q0 = svreinterpret_u64_f32(m0), q1 = svreinterpret_u64_f32(m1);
    svfloat32_t even = svreinterpret_f32_u64(svuzp1_u64(q0, q1));
    svfloat32_t odd = svreinterpret_f32_u64(svuzp2_u64(q0, q1));
    if (accumulate) {
        even = svadd_f32_x(pg, even, svld1_f32(pg, c));
        odd = svadd_f32_x(pg, odd, svld1_f32(pg, c + ldc));
    }
    if ((steps & ISF_EPILOGUE_CLAMP) && !clamp_first) {
        even = svmin_f32_x(pg, svmax_f32_x(pg, even, lo), hi);
        odd = svmin_f32_x(pg, svmax_f32_x(pg, odd, lo), hi);
    }
    svst1_f32(pg, c, even);
    svst1_f32(pg, c + ldc, odd);
}

/*
 * Where the tile's sums start: its bias when its steps add one, else zero (locals zero, start0 .. start3: SVE vectors
 * cannot live in a struct). The bias is one more term of each sum, added first rather than last (the same error
 * bound, gemmjob.error_bound: any order), which spares the store a vector addition per row. In the 2x2 layout,
 * segment s of m<v> holds columns 2s, 2s+1 of B vector v in both rows: one 64-bit lane of the bias, twice. zip1 of
 * an fp32 bias vector's 64-bit lanes with themselves gives B vector 0's start (the vector's first half of columns),
 * zip2 B vector 1's. The kernel writes ACC_STARTS(); (and ACC_STARTS_HI(); with 4 B vectors) after its `pg`.
 */
static inline svfloat32_t bias_lanes_lo(svfloat32_t bias) {
    svuint64_t q = svreinterpret_u64_f32(bias);
    return svreinterpret_f32_u64(svzip1_u64(q, q));
}

static inline svfloat32_t bias_lanes_hi(svfloat32_t bias) {
    svuint64_t q = svreinterpret_u64_f32(bias);
    return svreinterpret_f32_u64(svzip2_u64(q, q));
}

#define ACC_STARTS()                                                  \
    const svfloat32_t zero = svdup_n_f32(0.0f);                       \
    svfloat32_t start0 = zero, start1 = zero;                         \
    if (ep->steps & ISF_EPILOGUE_BIAS) {                              \
        const svfloat32_t bias0 = svld1_f32(pg, ep->bias);            \
        start0 = bias_lanes_lo(bias0), start1 = bias_lanes_hi(bias0); \
    }
#define ACC_STARTS_HI()                                               \
    svfloat32_t start2 = zero, start3 = zero;                         \
    if (ep->steps & ISF_EPILOGUE_BIAS) {                              \
        const svfloat32_t bias1 = svld1_vnum_f32(pg, ep->bias, 1);    \
        start2 = bias_lanes_lo(bias1), start3 = bias_lanes_hi(bias1); \
    }

/*
 * Row pair i's accumulators of set s (B vectors 0, 1; _HI: 2, 3): the first set at the starts, any further one (the
 * sums of other k blocks, added into the first after the loop) at zero. ld1rq of one row pair's block (8 bfloat16)
 * into every segment.
 */
#define ACC_START(s, i) svfloat32_t s##i##0 = start0, s##i##1 = start1
#define ACC_START_HI(s, i) svfloat32_t s##i##2 = start2, s##i##3 = start3
#define ACC_DECL(s, i) svfloat32_t s##i##0 = zero, s##i##1 = zero
#define ACC_DECL_HI(s, i) svfloat32_t s##i##2 = zero, s##i##3 = zero
#define ACC_MMLA(s, i)                         \
    s##i##0 = svbfmmla_f32(s##i##0, a##i, b0); \
    s##i##1 = svbfmmla_f32(s##i##1, a##i, b1)
#define ACC_MMLA_HI(s, i)                      \
    s##i##2 = svbfmmla_f32(s##i##2, a##i, b2); \
    s##i##3 = svbfmmla_f32(s##i##3, a##i, b3)
#define LD1RQ(p) svreinterpret_bf16_u16(svld1rq_u16(pg, (p)))
#define LD_B(p, v) svreinterpret_bf16_u16(svld1_vnum_u16(pg, (p), v))
/* Row pair i's columns from B vectors 0, 1 (the first fp32 vector of each row); _HI: 2, 3 (the second). */
#define ACC_STORE(i, steps, acc) store_row_pair(out + 2 * (i) * ldc, ldc, pg, c##i##0, c##i##1, acc, steps, lo, hi)
#define ACC_STORE_HI(i, steps, acc) \
    store_row_pair(out + 2 * (i) * ldc + svcntw(), ldc, pg, c##i##2, c##i##3, acc, steps, lo, hi)
#define TILE_STORE(steps, acc) ISF_SVE_TILE_STORE_F32(steps, acc)

/*
 * Row kernels. A B vector is VL/128 segments of 2 columns x 4 k: as 32-bit lanes, [c0 k0k1, c0 k2k3, c1 k0k1,
 * c1 k2k3]. With one block of the row (4 bfloat16, 64 bits) broadcast to every 64-bit lane, bfdot adds to each lane
 * one half of one column's dot product: no lane of it is wasted, where bfmmla with a zero second row would waste
 * half, for the same instruction count. After the loop the halves of each column are adjacent lanes; uzp1/uzp2 of
 * (vector 2j, vector 2j+1) split them into two vectors of the columns in order, whose sum is the row's fp32 vector j
 * (columns from `col`).
 *
 * accumulate, then the epilogue, then one store: C is read and written once. With no epilogue step the cost is
 * the load of `steps` and a branch.
 */
static inline void store_row(float *c, size_t col, svbool_t pg, svfloat32_t h0, svfloat32_t h1, int accumulate,
                             const isf_epilogue *ep) {
    svfloat32_t x = svadd_f32_x(pg, svuzp1_f32(h0, h1), svuzp2_f32(h0, h1));
    if (accumulate) {
        x = svadd_f32_x(pg, x, svld1_f32(pg, c + col));
    }
    uint32_t steps = ep->steps;
    if (steps) {
        if (steps & ISF_EPILOGUE_BIAS) {
            x = svadd_f32_x(pg, x, svld1_f32(pg, (const float *)ep->bias + col));
        }
        if (steps & ISF_EPILOGUE_CLAMP) { /* fmax then fmin: NaN stays NaN, -0 < +0 */
            x = svmin_f32_x(pg, svmax_f32_x(pg, x, svdup_n_f32(ep->min)), svdup_n_f32(ep->max));
        }
    }
    svst1_f32(pg, c + col, x);
}

/* One block of the row in every 64-bit lane (ld1rd): the row need not be 8-byte aligned. */
static inline svbfloat16_t row_block(const uint16_t *p) {
    uint64_t block;
    memcpy(&block, p, 8);
    return svreinterpret_bf16_u64(svdup_n_u64(block));
}

#endif
