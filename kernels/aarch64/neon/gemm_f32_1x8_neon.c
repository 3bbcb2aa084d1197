/* fp32 GEMM row kernel (MR = 1): 1x8 tile, fmla by lane, one k step per block (KR = 1).
 *
 * The small-M path of gemm_f32_8x8_neon: the rows it would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (8 floats per k step), so each B element is loaded once and used once. A is
 * the row itself, k_blocks contiguous floats (the driver may pass the caller's row: never read past it). Also runs
 * gemm_f16 / gemm_bf16 on panels the driver widened to fp32 (the neon variant's `widened` rule). AArch32's kernel of
 * this name is a separate file (kernels/aarch32/neon).
 *
 * Hot loop: 8 k steps per iteration: one ldp of A (8 k values, fmla by lane), 4 ld1 of 4 B vectors (2 k steps each), 16
 * fmla, subs + b.ne: 23 instructions for 64 MACs with clang (0.36 per MAC; gemm_f32_1x12_neon: 0.34), 24 with GCC 12
 * (0.38, an add). With one row every fmla needs its own B vector, so B loads set the bound; ld1 {4 registers} keeps
 * them at a quarter of the fmla. Accumulators: k step s of the 8 goes to set c<s><0..1>, 16 independent chains, each
 * hit once per iteration (fmla latency 4 × 4 pipes on Neoverse V1); the eight partial sums of each column are added
 * once, after the loop. Registers: 16 accumulators + 2 A + 2 groups of 4 B = 26 of 32. The store and its epilogue are
 * the 8-row kernel's (isf_f32_x12.h, one row).
 */
#include <arm_neon.h>

#define ISF_F32_VECS 2
#define ISF_TILE_MR 1
#include "isf_f32_x12.h"

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(s) float32x4_t c##s##0 = ACC_START(s, 0), c##s##1 = ACC_START(s, 1)
#define ACC_FMA(s, x0, x1, av, lane)                  \
    c##s##0 = vfmaq_laneq_f32(c##s##0, x0, av, lane); \
    c##s##1 = vfmaq_laneq_f32(c##s##1, x1, av, lane)
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_f32(c##s##0, c##t##0); \
    c##s##1 = vaddq_f32(c##s##1, c##t##1)

/* Steps p past `n` elements. The empty asm hides the pointer's history, so the compilers keep one pointer and
 * post-increment it (ld1 {4 registers}, [x], #64) rather than address each group from a base, which ld1's
 * addressing modes cannot do without an add per group. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* Four k steps (8 B vectors, two ld1 of 4) against the four A values of `av`: step s into set s<s>. */
#define FOUR_STEPS(av, s0, s1, s2, s3)            \
    do {                                          \
        float32x4x4_t g0 = vld1q_f32_x4(pb);      \
        NEXT(pb, 16);                             \
        ACC_FMA(s0, g0.val[0], g0.val[1], av, 0); \
        ACC_FMA(s1, g0.val[2], g0.val[3], av, 1); \
        float32x4x4_t g1 = vld1q_f32_x4(pb);      \
        NEXT(pb, 16);                             \
        ACC_FMA(s2, g1.val[0], g1.val[1], av, 2); \
        ACC_FMA(s3, g1.val[2], g1.val[3], av, 3); \
    } while (0)
#define TILE_ROWS(steps, acc) ACC_STORE(0, steps, acc)

ISF_UKERNEL(gemm_f32_1x8_neon) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        const float32x4_t a0 = vld1q_f32(pa), a1 = vld1q_f32(pa + 4);
        NEXT(pa, 8);
        FOUR_STEPS(a0, 0, 1, 2, 3);
        FOUR_STEPS(a1, 4, 5, 6, 7);
    }
    /* Up to 7 steps left (a Kc block of 204 leaves 4): 4 as in the loop, the rest one at a time, A broadcast. */
    if (k_blocks & 4) {
        const float32x4_t a0 = vld1q_f32(pa);
        pa += 4;
        FOUR_STEPS(a0, 0, 1, 2, 3);
    }
    for (size_t kb = k_blocks % 4; kb > 0; kb--) {
        const float32x4_t av = vld1q_dup_f32(pa);
        pa++;
        ACC_FMA(4, vld1q_f32(pb), vld1q_f32(pb + 4), av, 0);
        pb += 8;
    }

    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);
    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);

    TILE_FINISH();
}
