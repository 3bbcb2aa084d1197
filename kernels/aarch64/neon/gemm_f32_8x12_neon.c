/* fp32 GEMM micro-kernel: 8x12 tile, fmla by lane, one k step per block (KR = 1). */
#include <arm_neon.h>

#define ISF_TILE_MR 8
#include "isf_f32_x12.h"

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(r) float32x4_t c##r##0 = ACC_START(r, 0), c##r##1 = ACC_START(r, 1), c##r##2 = ACC_START(r, 2)
#define ACC_FMA(r, av, lane)                          \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane); \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane); \
    c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, lane)
#define TILE_ROWS(steps, acc) ISF_ROW_STORES_8(ACC_STORE, steps, acc)

ISF_UKERNEL(gemm_f32_8x12_neon) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    /* 24 accumulators (row r, columns 4j..4j+3 in c<r><j>) + 2 A + 3 B vectors = 29 of 32 registers. */
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        float32x4_t a0 = vld1q_f32(pa), a1 = vld1q_f32(pa + 4);
        float32x4_t b0 = vld1q_f32(pb), b1 = vld1q_f32(pb + 4), b2 = vld1q_f32(pb + 8);
        pa += 8;
        pb += 12;
        ACC_FMA(0, a0, 0);
        ACC_FMA(1, a0, 1);
        ACC_FMA(2, a0, 2);
        ACC_FMA(3, a0, 3);
        ACC_FMA(4, a1, 0);
        ACC_FMA(5, a1, 1);
        ACC_FMA(6, a1, 2);
        ACC_FMA(7, a1, 3);
    }

    TILE_FINISH();
}
