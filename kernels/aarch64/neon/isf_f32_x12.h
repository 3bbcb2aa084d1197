/* What the fp32 NEON kernels of 12 and 8 columns share (gemm_f32_{8,4}x12_neon, gemm_f32_{8,4,1}x8_neon): the sums'
 * start (the bias) and the tile's store with the clamp on registers. The including kernel defines ISF_F32_VECS (the
 * tile's vectors per row: 3 for 12 columns, 2 for 8; 3 when not defined) and ISF_TILE_MR (its rows) before including
 * it, names its accumulators c<r><0..V-1> (row r, columns 4j..4j+3), `out` (C) and defines TILE_ROWS(steps, acc):
 * ACC_STORE(r, steps, acc) for each of its rows. ISF_F32_VECS is a constant, so a 2-vector tile's code has no trace of
 * the third vector (and never reads bias[8..11], which is past its 8 columns). */
#ifndef ISAFORGE_F32_X12_H
#define ISAFORGE_F32_X12_H

#include <arm_neon.h>

#include "isf_tile_steps.h"

#ifndef ISF_F32_VECS
#define ISF_F32_VECS 3
#endif

/*
 * Where the tile's sums start: its bias when its steps add one, else zero. The bias is one more term of each sum,
 * added first rather than last (the same error bound, gemmjob.error_bound: any order), which spares the store a
 * vector addition per accumulator. The kernel declares `const acc_start start = start_of(ep);` and starts
 * accumulator c<r><j> at ACC_START(r, j): the bias for its rows r < ISF_TILE_MR (the sets of further k steps,
 * folded into those rows after the loop, start at zero).
 */
typedef struct {
    float32x4_t v0, v1, v2, zero;
} acc_start;

static inline __attribute__((always_inline)) acc_start start_of(const isf_epilogue *ep) {
    acc_start s = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const float *bias = ep->bias;
        s.v0 = vld1q_f32(bias);
        s.v1 = vld1q_f32(bias + 4);
        if (ISF_F32_VECS > 2) {
            s.v2 = vld1q_f32(bias + 8);
        }
    }
    return s;
}
#define ACC_START(r, j) ((r) < ISF_TILE_MR ? start.v##j : start.zero)

/* The clamp's bounds for the tile, loaded once (not per row) and only when it clamps. */
typedef struct {
    float32x4_t lo, hi;
} epilogue_regs;

static inline __attribute__((always_inline)) epilogue_regs load_epilogue(const isf_epilogue *ep, uint32_t steps) {
    epilogue_regs e = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    if (steps & ISF_EPILOGUE_CLAMP) {
        e.lo = vdupq_n_f32(ep->min);
        e.hi = vdupq_n_f32(ep->max);
    }
    return e;
}

/* FMAX then FMIN (not FMAXNM/FMINNM): a NaN stays NaN, as the epilogue contract says. */
static inline __attribute__((always_inline)) float32x4_t clamp(float32x4_t x, const epilogue_regs *e) {
    return vminq_f32(vmaxq_f32(x, e->lo), e->hi);
}

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the clamp (the
 * bias is in the sums already: start_of). `steps` is a constant at every call, so each combination of steps is
 * straight-line code. x2 is unused (and dead) in a 2-vector tile.
 */
static inline __attribute__((always_inline)) void store_row(float *c, float32x4_t x0, float32x4_t x1, float32x4_t x2,
                                                            int accumulate, uint32_t steps, const epilogue_regs *e) {
    if (accumulate) {
        x0 = vaddq_f32(x0, vld1q_f32(c));
        x1 = vaddq_f32(x1, vld1q_f32(c + 4));
        if (ISF_F32_VECS > 2) {
            x2 = vaddq_f32(x2, vld1q_f32(c + 8));
        }
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = clamp(x0, e);
        x1 = clamp(x1, e);
        x2 = clamp(x2, e);
    }
    vst1q_f32(c, x0);
    vst1q_f32(c + 4, x1);
    if (ISF_F32_VECS > 2) {
        vst1q_f32(c + 8, x2);
    }
}

#if ISF_F32_VECS > 2
#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##2, acc, steps, &e)
#else
#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##1, acc, steps, &e)
#endif
#define TILE_STORE(steps, acc)                              \
    do {                                                    \
        const epilogue_regs e = load_epilogue(ep, (steps)); \
        TILE_ROWS(steps, acc);                              \
    } while (0)

#endif
