/* fp32 GEMM micro-kernel: 8x8 tile, fmla by lane, one k step per block (KR = 1).
 *
 * gemm_f32_8x12_neon's column sibling for n that 12 columns pad: n = 64 is 72 columns of 12 (12.5 % of the MACs on
 * padding), 128 and 256 are 132 and 264 (3 %); 8 columns pad none of the powers of two. Same A panels (8 rows per k
 * step, fmla by lane), B panels of 8 floats per k step; the store and its epilogue are the 12-column kernels'
 * (isf_f32_x12.h with 2 vectors a row).
 *
 * Hot loop with clang: 2 k steps per iteration, each step's operands loaded during the step before: 2 ldp of A, 2 ldp
 * of B, 32 fmla, subs + b.ne and the pointer adds: 39 instructions for 128 MACs (0.30 per MAC); GCC 12: one k step,
 * 23 for 64 (0.36; the loop says why). Registers: 16 accumulators (16 independent chains: fmla latency 4 × 4 pipes
 * on Neoverse V1) + 2 A and 2 B vectors for each of 2 steps.
 */
#include <arm_neon.h>

#define ISF_F32_VECS 2
#define ISF_TILE_MR 8
#include "isf_f32_x12.h"

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(r) float32x4_t c##r##0 = ACC_START(r, 0), c##r##1 = ACC_START(r, 1)
#define ACC_FMA(r, av, lane)                          \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane); \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane)
/* One k step's operands: A's 8 rows and B's 2 vectors, loaded a step before their FMAs (STEP_FMA). */
#define LOAD(x, pa, pb) \
    x##a0 = vld1q_f32(pa), x##a1 = vld1q_f32((pa) + 4), x##b0 = vld1q_f32(pb), x##b1 = vld1q_f32((pb) + 4)
#define STEP_FMA(x)                                                       \
    do {                                                                  \
        const float32x4_t a0 = x##a0, a1 = x##a1, b0 = x##b0, b1 = x##b1; \
        ACC_FMA(0, a0, 0);                                                \
        ACC_FMA(1, a0, 1);                                                \
        ACC_FMA(2, a0, 2);                                                \
        ACC_FMA(3, a0, 3);                                                \
        ACC_FMA(4, a1, 0);                                                \
        ACC_FMA(5, a1, 1);                                                \
        ACC_FMA(6, a1, 2);                                                \
        ACC_FMA(7, a1, 3);                                                \
    } while (0)
#define TILE_ROWS(steps, acc) ISF_ROW_STORES_8(ACC_STORE, steps, acc)

ISF_SCHEDULE_IN_ORDER ISF_UKERNEL(gemm_f32_8x8_neon) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

#if defined(__clang__)
    /* Software-pipelined: each step's operands are loaded during the step before, in two register sets (x, y), so
     * an in-order core (Cortex-A55) does not stall on a load right before its FMA (ISF_SCHEDULE_IN_ORDER). */
    float32x4_t xa0, xa1, xb0, xb1, ya0, ya1, yb0, yb1;
    LOAD(x, pa, pb);
    for (size_t n = (k_blocks - 1) / 2; n > 0; n--) {
        LOAD(y, pa + 8, pb + 8);
        STEP_FMA(x);
        LOAD(x, pa + 16, pb + 16);
        STEP_FMA(y);
        pa += 16;
        pb += 16;
    }
    if ((k_blocks - 1) & 1) {
        LOAD(y, pa + 8, pb + 8);
        STEP_FMA(x);
        STEP_FMA(y);
    } else {
        STEP_FMA(x);
    }
#else
    /* GCC 12: one step an iteration. With two, its allocator moves an accumulator through a spare register (2 mov an
     * iteration, a dependency chain that makes the loop latency bound on Neoverse V1). */
    for (size_t kb = 0; kb < k_blocks; kb++) {
        float32x4_t xa0, xa1, xb0, xb1;
        LOAD(x, pa, pb);
        STEP_FMA(x);
        pa += 8;
        pb += 8;
    }
#endif

    TILE_FINISH();
}
