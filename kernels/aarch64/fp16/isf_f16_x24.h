/* What the binary16 FEAT_FP16 kernels of 24 and 16 columns share (gemm_f16_{8,4}x24_fp16, gemm_f16_{8,4,1}x16_fp16):
 * the k step's two spellings (A loaded as a vector and used by lane with clang, or element by element with GCC; the
 * 8x24 kernel's comment says why), the sums' start (the bias) and the tile's store with the clamp, in binary16. The
 * including kernel defines ISF_F16_VECS (the tile's vectors per row: 3 for 24 columns, 2 for 16; 3 when not defined)
 * and ISF_TILE_MR (its rows) before including it, names its accumulators c<s><0..V-1> (set s takes A's element s of the
 * 8 at pa - 8) and its B vectors b0..b<V-1>, its pointers pa, pb and `out` (C), and defines TILE_ROWS(steps, acc):
 * ACC_STORE(r, steps, acc) for each of its rows. ISF_F16_VECS is a constant: a 2-vector tile's code has no trace of the
 * third vector (and never reads bias[16..23], past its 16 columns). */
#ifndef ISAFORGE_F16_X24_H
#define ISAFORGE_F16_X24_H

#include <arm_neon.h>
#include <string.h>

#include "isf_tile_steps.h"

#ifndef ISF_F16_VECS
#define ISF_F16_VECS 3
#endif

#if !defined(__clang__) && defined(__GNUC__)
#pragma GCC optimize("no-schedule-insns")
#define ISF_A_PER_ELEMENT 1
#else
#define ISF_A_PER_ELEMENT 0
#endif

static inline float16x8_t load_f16(const uint16_t *p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

/*
 * Where the tile's sums start: its bias (binary16, as C) when its steps add one, else zero. The bias is one more
 * term of each sum, added first rather than last (the same error bound, gemmjob.error_bound: any order), which
 * spares the store a vector addition per accumulator. The kernel declares `const acc_start start = start_of(ep);`;
 * ACC_DECL starts its rows r < ISF_TILE_MR at the bias (the sets of further k steps, folded into those rows after
 * the loop, at zero).
 */
typedef struct {
    float16x8_t v0, v1, v2, zero;
} acc_start;

static inline __attribute__((always_inline)) acc_start start_of(const isf_epilogue *ep) {
    acc_start s = {vdupq_n_f16(0.0f), vdupq_n_f16(0.0f), vdupq_n_f16(0.0f), vdupq_n_f16(0.0f)};
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const uint16_t *bias = ep->bias;
        s.v0 = load_f16(bias);
        s.v1 = load_f16(bias + 8);
        if (ISF_F16_VECS > 2) {
            s.v2 = load_f16(bias + 16);
        }
    }
    return s;
}
#define ACC_START(r, j) ((r) < ISF_TILE_MR ? start.v##j : start.zero)

/* The clamp's bounds for the tile (binary16, as C): loaded once, not per row, and only when it clamps. */
typedef struct {
    float16x8_t lo, hi;
} epilogue_regs;

static inline __attribute__((always_inline)) epilogue_regs load_epilogue(const isf_epilogue *ep, uint32_t steps) {
    epilogue_regs e = {vdupq_n_f16(0.0f), vdupq_n_f16(0.0f)};
    if (steps & ISF_EPILOGUE_CLAMP) {
        e.lo = vreinterpretq_f16_u16(vdupq_n_u16(ep->min_f16));
        e.hi = vreinterpretq_f16_u16(vdupq_n_u16(ep->max_f16));
    }
    return e;
}

/* FMAX then FMIN (not FMAXNM/FMINNM): a NaN stays NaN, as the epilogue contract says. */
static inline float16x8_t clamp(float16x8_t x, const epilogue_regs *e) { return vminq_f16(vmaxq_f16(x, e->lo), e->hi); }

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the clamp (the
 * bias is in the sums already: start_of), in binary16 like the accumulation. `steps` is a constant at every call: each
 * combination is straight-line code. x2 is unused (and dead) in a 2-vector tile.
 */
static inline __attribute__((always_inline)) void store_row(uint16_t *c, float16x8_t x0, float16x8_t x1, float16x8_t x2,
                                                            int accumulate, uint32_t steps, const epilogue_regs *e) {
    if (accumulate) {
        x0 = vaddq_f16(x0, load_f16(c));
        x1 = vaddq_f16(x1, load_f16(c + 8));
        if (ISF_F16_VECS > 2) {
            x2 = vaddq_f16(x2, load_f16(c + 16));
        }
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = clamp(x0, e);
        x1 = clamp(x1, e);
        x2 = clamp(x2, e);
    }
    vst1q_u16(c, vreinterpretq_u16_f16(x0));
    vst1q_u16(c + 8, vreinterpretq_u16_f16(x1));
    if (ISF_F16_VECS > 2) {
        vst1q_u16(c + 16, vreinterpretq_u16_f16(x2));
    }
}

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#if ISF_F16_VECS > 2
#define ACC_DECL(r) float16x8_t c##r##0 = ACC_START(r, 0), c##r##1 = ACC_START(r, 1), c##r##2 = ACC_START(r, 2)
/* The third vector's multiply-add, when the tile has one (ISF_A_PER_ELEMENT: by the scalar `ar`, else by lane r). */
#define FMA_2_N(r) c##r##2 = vfmaq_n_f16(c##r##2, b2, ar)
#define FMA_2_LANE(r) c##r##2 = vfmaq_laneq_f16(c##r##2, b2, a0, r)
#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##2, acc, steps, &e)
#else
#define ACC_DECL(r) float16x8_t c##r##0 = ACC_START(r, 0), c##r##1 = ACC_START(r, 1)
#define FMA_2_N(r) (void)0
#define FMA_2_LANE(r) (void)0
#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##1, acc, steps, &e)
#endif

#if ISF_A_PER_ELEMENT
static inline float16_t load_scalar_f16(const uint16_t *p) {
    float16_t s;
    memcpy(&s, p, sizeof s);
    return s;
}
#define A_LOAD() (void)0
#define ACC_FMA(r)                                    \
    do {                                              \
        float16_t ar = load_scalar_f16(pa + (r) - 8); \
        c##r##0 = vfmaq_n_f16(c##r##0, b0, ar);       \
        c##r##1 = vfmaq_n_f16(c##r##1, b1, ar);       \
        FMA_2_N(r);                                   \
    } while (0)
#else
#define A_LOAD() float16x8_t a0 = load_f16(pa - 8)
#define ACC_FMA(r)                                 \
    c##r##0 = vfmaq_laneq_f16(c##r##0, b0, a0, r); \
    c##r##1 = vfmaq_laneq_f16(c##r##1, b1, a0, r); \
    FMA_2_LANE(r)
#endif
#define TILE_STORE(steps, acc)                              \
    do {                                                    \
        const epilogue_regs e = load_epilogue(ep, (steps)); \
        TILE_ROWS(steps, acc);                              \
    } while (0)

#endif
