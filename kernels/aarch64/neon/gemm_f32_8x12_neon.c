/* fp32 GEMM micro-kernel: 8x12 tile, fmla by lane, one k step per block (KR = 1). */
#include <arm_neon.h>

#define ISF_TILE_MR 8
#include "isf_f32_x12.h"

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(r) float32x4_t c##r##0 = ACC_START(r, 0), c##r##1 = ACC_START(r, 1), c##r##2 = ACC_START(r, 2)
/* One B vector's FMAs: column block j of the 8 rows, by lane of A's 2 vectors. */
#define COLUMN_FMA(j, a0, a1, b)              \
    c0##j = vfmaq_laneq_f32(c0##j, b, a0, 0); \
    c1##j = vfmaq_laneq_f32(c1##j, b, a0, 1); \
    c2##j = vfmaq_laneq_f32(c2##j, b, a0, 2); \
    c3##j = vfmaq_laneq_f32(c3##j, b, a0, 3); \
    c4##j = vfmaq_laneq_f32(c4##j, b, a1, 0); \
    c5##j = vfmaq_laneq_f32(c5##j, b, a1, 1); \
    c6##j = vfmaq_laneq_f32(c6##j, b, a1, 2); \
    c7##j = vfmaq_laneq_f32(c7##j, b, a1, 3)
/*
 * Step x's FMAs with the next step's operands (set y, at pa, pb) loaded on the way, each into a register the step
 * has finished with (B vector j after its FMAs; A, which every B vector's FMAs read, before the last B vector's), so
 * an in-order core (Cortex-A55) does not stall on a load right before its FMA: 24 accumulators + at most 7 operand
 * vectors.
 */
#define STEP_LOADING(x, y, pa, pb)      \
    COLUMN_FMA(0, x##a0, x##a1, x##b0); \
    y##b0 = vld1q_f32(pb);              \
    COLUMN_FMA(1, x##a0, x##a1, x##b1); \
    y##b1 = vld1q_f32((pb) + 4);        \
    y##a0 = vld1q_f32(pa);              \
    y##a1 = vld1q_f32((pa) + 4);        \
    COLUMN_FMA(2, x##a0, x##a1, x##b2); \
    y##b2 = vld1q_f32((pb) + 8)
#define STEP(x)                         \
    COLUMN_FMA(0, x##a0, x##a1, x##b0); \
    COLUMN_FMA(1, x##a0, x##a1, x##b1); \
    COLUMN_FMA(2, x##a0, x##a1, x##b2)
#define TILE_ROWS(steps, acc) ISF_ROW_STORES_8(ACC_STORE, steps, acc)

ISF_SCHEDULE_IN_ORDER ISF_UKERNEL(gemm_f32_8x12_neon) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    /* 24 accumulators: row r, columns 4j..4j+3 in c<r><j>. */
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

#if defined(__clang__)
    /* Two register sets (x, y) alternate, so no operand is copied from one to the other (ISF_SCHEDULE_IN_ORDER). */
    float32x4_t xa0 = vld1q_f32(pa), xa1 = vld1q_f32(pa + 4);
    float32x4_t xb0 = vld1q_f32(pb), xb1 = vld1q_f32(pb + 4), xb2 = vld1q_f32(pb + 8);
    float32x4_t ya0, ya1, yb0, yb1, yb2;
    for (size_t n = (k_blocks - 1) / 2; n > 0; n--) {
        STEP_LOADING(x, y, pa + 8, pb + 12);
        STEP_LOADING(y, x, pa + 16, pb + 24);
        pa += 16;
        pb += 24;
    }
    if ((k_blocks - 1) & 1) {
        STEP_LOADING(x, y, pa + 8, pb + 12);
        STEP(y);
    } else {
        STEP(x);
    }
#else
    /* GCC 12: one step an iteration, loads first; its pipelined loop ran 12 % slower on Neoverse N1 (llvm-mca-19). */
    for (size_t kb = 0; kb < k_blocks; kb++) {
        float32x4_t xa0 = vld1q_f32(pa), xa1 = vld1q_f32(pa + 4);
        float32x4_t xb0 = vld1q_f32(pb), xb1 = vld1q_f32(pb + 4), xb2 = vld1q_f32(pb + 8);
        pa += 8;
        pb += 12;
        STEP(x);
    }
#endif

    TILE_FINISH();
}
