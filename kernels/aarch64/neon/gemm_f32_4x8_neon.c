/* fp32 GEMM micro-kernel for a few rows: 4x8 tile, fmla by lane, one k step per block (KR = 1).
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call on gemm_f32_8x8_neon's B panels (8 floats per k step), so B
 * is streamed once for those rows instead of once per row by gemm_f32_1x8_neon. A is a 4-row panel (per k step the 4
 * rows' values: one vector, fmla by lane). Also runs gemm_f16 / gemm_bf16 on panels the driver widened to fp32 (the
 * neon variant's `widened` rule). AArch32's kernel of this name is a full kernel of its own (kernels/aarch32).
 *
 * Hot loop with clang: 4 k steps per iteration: 2 ldp of A (the 4 steps' 4 rows), 4 ldp of B (8 vectors), 32 fmla, subs
 * + b.ne and the pointer adds: 42 instructions for 128 MACs (0.33 per MAC); GCC 12: 2 k steps, 23 for 64 (0.36; PAIRS
 * says why). Four rows give 8 accumulators a k step, fewer than fmla latency × pipes on the widest cores (4 × 4 on
 * Neoverse V1), so even k steps go to set c0-c3 and odd ones to c4-c7: 16 independent chains, folded once after the
 * loop. Registers: 16 accumulators + 4 A + 4 B = 24 of 32.
 */
#include <arm_neon.h>

#define ISF_F32_VECS 2
#define ISF_TILE_MR 4
#include "isf_f32_x12.h"

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. Row r's even
 * k steps go to c<r><0..1>, its odd ones to c<r + 4><0..1>. */
#define ACC_DECL(r) float32x4_t c##r##0 = ACC_START(r, 0), c##r##1 = ACC_START(r, 1)
#define ACC_FMA(r, av, lane)                          \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane); \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane)
#define ACC_FOLD(r, t)                     \
    c##r##0 = vaddq_f32(c##r##0, c##t##0); \
    c##r##1 = vaddq_f32(c##r##1, c##t##1)
/* One k step: the 4 rows (lanes of `av`) against B's 2 vectors at p, into the set of rows s..s+3. */
#define STEP(s0, s1, s2, s3, av, p)                                   \
    do {                                                              \
        const float32x4_t b0 = vld1q_f32(p), b1 = vld1q_f32((p) + 4); \
        ACC_FMA(s0, av, 0);                                           \
        ACC_FMA(s1, av, 1);                                           \
        ACC_FMA(s2, av, 2);                                           \
        ACC_FMA(s3, av, 3);                                           \
    } while (0)
/* Two k steps: one ldp of A (both steps' 4 rows), 2 ldp of B, even step into set c0-c3, odd into c4-c7. */
#define PAIR()                                                        \
    do {                                                              \
        const float32x4_t a0 = vld1q_f32(pa), a1 = vld1q_f32(pa + 4); \
        STEP(0, 1, 2, 3, a0, pb);                                     \
        STEP(4, 5, 6, 7, a1, pb + 8);                                 \
        pa += 8;                                                      \
        pb += 16;                                                     \
    } while (0)
/* Pairs per iteration: 2 with clang; GCC 12's allocator moves accumulators (6 mov an iteration) with 2, none with 1. */
#if defined(__GNUC__) && !defined(__clang__)
#define PAIRS 1
#else
#define PAIRS 2
#endif
#define TILE_ROWS(steps, acc) ISF_ROW_STORES_4(ACC_STORE, steps, acc)

ISF_UKERNEL(gemm_f32_4x8_neon) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

    for (size_t n = k_blocks / (2 * PAIRS); n > 0; n--) {
        PAIR();
#if PAIRS == 2
        PAIR();
#endif
    }
    /* The steps left, in the loop's sets; only the panel's own steps are read. */
    if (PAIRS == 2 && (k_blocks & 2)) {
        PAIR();
    }
    if (k_blocks & 1) {
        const float32x4_t a0 = vld1q_f32(pa);
        STEP(0, 1, 2, 3, a0, pb);
    }
    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);

    TILE_FINISH();
}
