/* binary16 GEMM row kernel (MR = 1, FEAT_FP16): 1x24 tile, fmla .8h by element, fp16 accumulation, KR = 1.
 *
 * The small-M path: the rows gemm_f16_8x24_fp16 would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (24 halves per k step), so each B element is loaded once and used once.
 * A is the row itself, k_blocks contiguous halves (the driver may pass the caller's row: never read past it).
 *
 * Hot loop: 8 k steps per iteration, 24 fmla, subs + b.ne, and two spellings of the same stream (see
 * gemm_f16_8x24_fp16.c): clang loads A's 8 values with one ldr q and uses `fmla vD.8h, vB.8h, vA.h[s]`, and B
 * with 6 ld1 of 4 vectors: 33 instructions for 192 MACs (0.17 per MAC; the 8x24 kernel's loop: 0.16). GCC 12 has
 * no by-element pattern for .8h fmla with a lane other than 0 (it would add a dup per step), so there each A
 * value is a scalar load (ldr h, no vector-pipe work) feeding `fmla ..., vS.h[0]`, and B comes in 8 ld1 of 3
 * (below): 42 instructions (0.22). With one row every fmla needs its own B vector, so B loads set the bound.
 * Accumulators: k step s (mod 4) goes to set c<s><0..2>, 12 independent chains, each hit twice per iteration
 * (fmla latency 4 × 3 pipes); the four partial sums of each column are added in binary16 after the loop.
 * Registers: 12 accumulators + A + 3 groups of 4 B = 25 of 32 (an indexed .h register must be one of v0-v15:
 * the compilers place it).
 */
#include <arm_neon.h>
#include <string.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

#if !defined(__clang__) && defined(__GNUC__)
#pragma GCC optimize("no-schedule-insns")
#define ISF_A_PER_ELEMENT 1
#else
#define ISF_A_PER_ELEMENT 0
#endif

static inline float16x8_t load_f16(const uint16_t *p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

/* Steps p past `n` elements of B. The empty asm hides the pointer's history, so the compilers keep one pointer
 * and post-increment it (ld1 {registers}, [x], #bytes) rather than address each group from a base, which ld1's
 * addressing modes cannot do without an add per group. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(s) float16x8_t c##s##0 = vdupq_n_f16(0.0f), c##s##1 = c##s##0, c##s##2 = c##s##0
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_f16(c##s##0, c##t##0); \
    c##s##1 = vaddq_f16(c##s##1, c##t##1); \
    c##s##2 = vaddq_f16(c##s##2, c##t##2)

#if ISF_A_PER_ELEMENT
static inline float16_t load_scalar_f16(const uint16_t *p) {
    float16_t s;
    memcpy(&s, p, sizeof s);
    return s;
}
/* A of this iteration is pa[-8..-1]: addressed below the advanced pointer, as GCC picks ld1r (a vector-pipe slot)
 * for a broadcast load at offset 0. */
#define A_LOAD() (void)0
#define ACC_FMA(s, x0, x1, x2, step)                     \
    do {                                                 \
        float16_t as = load_scalar_f16(pa + (step) - 8); \
        c##s##0 = vfmaq_n_f16(c##s##0, x0, as);          \
        c##s##1 = vfmaq_n_f16(c##s##1, x1, as);          \
        c##s##2 = vfmaq_n_f16(c##s##2, x2, as);          \
    } while (0)
#else
#define A_LOAD() float16x8_t a0 = load_f16(pa - 8)
#define ACC_FMA(s, x0, x1, x2, step)                  \
    c##s##0 = vfmaq_laneq_f16(c##s##0, x0, a0, step); \
    c##s##1 = vfmaq_laneq_f16(c##s##1, x1, a0, step); \
    c##s##2 = vfmaq_laneq_f16(c##s##2, x2, a0, step)
#endif

/* Four k steps from `first` (0 or 4): 12 B vectors, step first + s into set s. clang: three ld1 of 4 vectors.
 * GCC: one ld1 of 3 per step; with 4-register tuples its allocator moves accumulators out of their way (6 mov
 * per iteration), with 3 none (and no pre-RA scheduling: it would hoist the 8 A loads). */
#define G(g, i) vreinterpretq_f16_u16((g).val[i])
#if ISF_A_PER_ELEMENT
#define STEP(s, first)                                        \
    do {                                                      \
        uint16x8x3_t g = vld1q_u16_x3(pb);                    \
        NEXT(pb, 24);                                         \
        ACC_FMA(s, G(g, 0), G(g, 1), G(g, 2), (first) + (s)); \
    } while (0)
#define FOUR_STEPS(first) \
    do {                  \
        STEP(0, first);   \
        STEP(1, first);   \
        STEP(2, first);   \
        STEP(3, first);   \
    } while (0)
#else
#define FOUR_STEPS(first)                                      \
    do {                                                       \
        uint16x8x4_t g0 = vld1q_u16_x4(pb);                    \
        NEXT(pb, 32);                                          \
        ACC_FMA(0, G(g0, 0), G(g0, 1), G(g0, 2), (first) + 0); \
        uint16x8x4_t g1 = vld1q_u16_x4(pb);                    \
        NEXT(pb, 32);                                          \
        ACC_FMA(1, G(g0, 3), G(g1, 0), G(g1, 1), (first) + 1); \
        uint16x8x4_t g2 = vld1q_u16_x4(pb);                    \
        NEXT(pb, 32);                                          \
        ACC_FMA(2, G(g1, 2), G(g1, 3), G(g2, 0), (first) + 2); \
        ACC_FMA(3, G(g2, 1), G(g2, 2), G(g2, 3), (first) + 3); \
    } while (0)
#endif

/* Bias then clamp, in binary16 (FMAX then FMIN: NaN stays NaN, ±Inf go to the bounds), on the finished row. */
static inline void epilogue(const isf_epilogue *ep, float16x8_t *x0, float16x8_t *x1, float16x8_t *x2) {
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        const uint16_t *bias = ep->bias;
        *x0 = vaddq_f16(*x0, load_f16(bias));
        *x1 = vaddq_f16(*x1, load_f16(bias + 8));
        *x2 = vaddq_f16(*x2, load_f16(bias + 16));
    }
    if (ep->steps & ISF_EPILOGUE_CLAMP) {
        float16x8_t lo = vreinterpretq_f16_u16(vdupq_n_u16(ep->min_f16));
        float16x8_t hi = vreinterpretq_f16_u16(vdupq_n_u16(ep->max_f16));
        *x0 = vminq_f16(vmaxq_f16(*x0, lo), hi);
        *x1 = vminq_f16(vmaxq_f16(*x1, lo), hi);
        *x2 = vminq_f16(vmaxq_f16(*x2, lo), hi);
    }
}

ISF_UKERNEL(gemm_f16_1x24_fp16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    (void)ldc; /* one row */
    ISF_REPEAT_4(ACC_DECL);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        pa += 8;
        A_LOAD();
        FOUR_STEPS(0);
        FOUR_STEPS(4);
    }
    /* Up to 7 steps left: one at a time, A broadcast, into set 0. */
    for (size_t kb = k_blocks % 8; kb > 0; kb--) {
        float16x8_t as = vreinterpretq_f16_u16(vld1q_dup_u16(pa));
        pa++;
        c00 = vfmaq_f16(c00, load_f16(pb), as);
        c01 = vfmaq_f16(c01, load_f16(pb + 8), as);
        c02 = vfmaq_f16(c02, load_f16(pb + 16), as);
        pb += 24;
    }

    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);
    if (accumulate) {
        c00 = vaddq_f16(c00, load_f16(out));
        c01 = vaddq_f16(c01, load_f16(out + 8));
        c02 = vaddq_f16(c02, load_f16(out + 16));
    }
    if (ep->steps != ISF_EPILOGUE_NONE) {
        epilogue(ep, &c00, &c01, &c02);
    }
    vst1q_u16(out, vreinterpretq_u16_f16(c00));
    vst1q_u16(out + 8, vreinterpretq_u16_f16(c01));
    vst1q_u16(out + 16, vreinterpretq_u16_f16(c02));
}
