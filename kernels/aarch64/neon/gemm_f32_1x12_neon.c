/* fp32 GEMM row kernel (MR = 1): 1x12 tile, fmla by lane, one k step per block (KR = 1).
 *
 * The small-M path: the rows gemm_f32_8x12_neon would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (12 floats per k step), so each B element is loaded once and used once.
 * A is the row itself, k_blocks contiguous floats (the driver may pass the caller's row: never read past it).
 * Also runs gemm_f16 / gemm_bf16 on panels the driver widened to fp32 (the neon variant's `widened` rule).
 *
 * Hot loop: 8 k steps per iteration: one ldp of A (8 k values, fmla by lane), 6 ld1 of 4 B vectors, 24 fmla,
 * subs + b.ne: 33 instructions for 96 MACs with clang (0.34 per MAC; GCC 12: 36, 0.375, below; the 8x12
 * kernel's loop: 0.31 / 0.33). With one row every fmla needs its own B vector, so B loads set the bound;
 * ld1 {4 registers} keeps them at a quarter of the fmla.
 * Accumulators: k step s (mod 4) of the 8 goes to set c<s><0..2>, 12 independent chains, each hit twice per
 * iteration: fmla latency 4 × 3 pipes in flight (2 pipes on Neoverse N1 / Cortex-A76: no stall); the four
 * partial sums of each column are added once, after the loop. Registers: 12 accumulators + 2 A + 3 groups of
 * 4 B = 26 of 32, so neither compiler spills in the loop.
 */
#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(s) float32x4_t c##s##0 = vdupq_n_f32(0.0f), c##s##1 = c##s##0, c##s##2 = c##s##0
#define ACC_FMA(s, x0, x1, x2, av, lane)              \
    c##s##0 = vfmaq_laneq_f32(c##s##0, x0, av, lane); \
    c##s##1 = vfmaq_laneq_f32(c##s##1, x1, av, lane); \
    c##s##2 = vfmaq_laneq_f32(c##s##2, x2, av, lane)
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_f32(c##s##0, c##t##0); \
    c##s##1 = vaddq_f32(c##s##1, c##t##1); \
    c##s##2 = vaddq_f32(c##s##2, c##t##2)

/* Steps p past `n` elements. The empty asm hides the pointer's history, so the compilers keep one pointer and
 * post-increment it (ld1 {4 registers}, [x], #64) rather than address each group from a base, which ld1's
 * addressing modes cannot do without an add per group. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* Four k steps (12 B vectors) against the four A values of `av`: step s into set s. clang: three ld1 of 4
 * vectors. GCC: one ld1 of 3 per step (two more loads); with 4-register tuples its allocator moves accumulators
 * out of their way (2-6 mov per iteration, depending on the code around the loop), with 3 none. */
#if defined(__GNUC__) && !defined(__clang__)
#define STEP(s, av)                                      \
    do {                                                 \
        float32x4x3_t g = vld1q_f32_x3(pb);              \
        NEXT(pb, 12);                                    \
        ACC_FMA(s, g.val[0], g.val[1], g.val[2], av, s); \
    } while (0)
#define FOUR_STEPS(av) \
    do {               \
        STEP(0, av);   \
        STEP(1, av);   \
        STEP(2, av);   \
        STEP(3, av);   \
    } while (0)
#else
#define FOUR_STEPS(av)                                      \
    do {                                                    \
        float32x4x4_t g0 = vld1q_f32_x4(pb);                \
        NEXT(pb, 16);                                       \
        ACC_FMA(0, g0.val[0], g0.val[1], g0.val[2], av, 0); \
        float32x4x4_t g1 = vld1q_f32_x4(pb);                \
        NEXT(pb, 16);                                       \
        ACC_FMA(1, g0.val[3], g1.val[0], g1.val[1], av, 1); \
        float32x4x4_t g2 = vld1q_f32_x4(pb);                \
        NEXT(pb, 16);                                       \
        ACC_FMA(2, g1.val[2], g1.val[3], g2.val[0], av, 2); \
        ACC_FMA(3, g2.val[1], g2.val[2], g2.val[3], av, 3); \
    } while (0)
#endif

/* Bias then clamp (FMAX then FMIN: NaN stays NaN, ±Inf go to the bounds), on the finished row. */
static inline void epilogue(const isf_epilogue *ep, float32x4_t *x0, float32x4_t *x1, float32x4_t *x2) {
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const float *bias = ep->bias;
        *x0 = vaddq_f32(*x0, vld1q_f32(bias));
        *x1 = vaddq_f32(*x1, vld1q_f32(bias + 4));
        *x2 = vaddq_f32(*x2, vld1q_f32(bias + 8));
    }
    if (ep->steps & ISF_EPILOGUE_CLAMP) {
        float32x4_t lo = vdupq_n_f32(ep->min), hi = vdupq_n_f32(ep->max);
        *x0 = vminq_f32(vmaxq_f32(*x0, lo), hi);
        *x1 = vminq_f32(vmaxq_f32(*x1, lo), hi);
        *x2 = vminq_f32(vmaxq_f32(*x2, lo), hi);
    }
}

ISF_UKERNEL(gemm_f32_1x12_neon) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    (void)ldc; /* one row */
    ISF_REPEAT_4(ACC_DECL);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        float32x4_t a0 = vld1q_f32(pa), a1 = vld1q_f32(pa + 4);
        NEXT(pa, 8);
        FOUR_STEPS(a0);
        FOUR_STEPS(a1);
    }
    /* Up to 7 steps left (a Kc block of 204 leaves 4): 4 as in the loop, the rest one at a time, A broadcast. */
    if (k_blocks & 4) {
        float32x4_t a0 = vld1q_f32(pa);
        pa += 4;
        FOUR_STEPS(a0);
    }
    for (size_t kb = k_blocks % 4; kb > 0; kb--) {
        float32x4_t av = vld1q_dup_f32(pa);
        pa++;
        ACC_FMA(0, vld1q_f32(pb), vld1q_f32(pb + 4), vld1q_f32(pb + 8), av, 0);
        pb += 12;
    }

    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);
    if (accumulate) {
        c00 = vaddq_f32(c00, vld1q_f32(out));
        c01 = vaddq_f32(c01, vld1q_f32(out + 4));
        c02 = vaddq_f32(c02, vld1q_f32(out + 8));
    }
    if (ep->steps != ISF_EPILOGUE_NONE) {
        epilogue(ep, &c00, &c01, &c02);
    }
    vst1q_f32(out, c00);
    vst1q_f32(out + 4, c01);
    vst1q_f32(out + 8, c02);
}
