/* int8 -> int32 GEMM micro-kernel: 8x12 tile, sdot by element, 4 k steps per block. */
#include <arm_neon.h>

#include "isf_internal.h"

static inline void store_row(int32_t *c, int32x4_t x0, int32x4_t x1, int32x4_t x2, int accumulate)
{
    if (accumulate) {
        x0 = vaddq_s32(x0, vld1q_s32(c));
        x1 = vaddq_s32(x1, vld1q_s32(c + 4));
        x2 = vaddq_s32(x2, vld1q_s32(c + 8));
    }
    vst1q_s32(c, x0);
    vst1q_s32(c + 4, x1);
    vst1q_s32(c + 8, x2);
}

/* Each 32-bit lane of an A vector is one row's 4 k values, of a B vector one column's: sdot by element
 * broadcasts a row against 4 columns at once. */
#define ACC_DECL(r) int32x4_t c##r##0 = vdupq_n_s32(0), c##r##1 = c##r##0, c##r##2 = c##r##0
#define ACC_DOT(r, av, lane)                              \
    c##r##0 = vdotq_laneq_s32(c##r##0, b0, av, lane);     \
    c##r##1 = vdotq_laneq_s32(c##r##1, b1, av, lane);     \
    c##r##2 = vdotq_laneq_s32(c##r##2, b2, av, lane)
#define ACC_STORE(r) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##2, accumulate)

ISF_UKERNEL(gemm_s8_8x12x4_dotprod)
{
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    /* 24 accumulators (row r, columns 4j..4j+3 in c<r><j>) + 2 A + 3 B vectors = 29 of 32 registers. */
    ACC_DECL(0); ACC_DECL(1); ACC_DECL(2); ACC_DECL(3);
    ACC_DECL(4); ACC_DECL(5); ACC_DECL(6); ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        // isf-hot-loop-begin
        int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16);
        int8x16_t b0 = vld1q_s8(pb), b1 = vld1q_s8(pb + 16), b2 = vld1q_s8(pb + 32);
        pa += 32;
        pb += 48;
        ACC_DOT(0, a0, 0); ACC_DOT(1, a0, 1); ACC_DOT(2, a0, 2); ACC_DOT(3, a0, 3);
        ACC_DOT(4, a1, 0); ACC_DOT(5, a1, 1); ACC_DOT(6, a1, 2); ACC_DOT(7, a1, 3);
        // isf-hot-loop-end
    }

    ACC_STORE(0); ACC_STORE(1); ACC_STORE(2); ACC_STORE(3);
    ACC_STORE(4); ACC_STORE(5); ACC_STORE(6); ACC_STORE(7);
}
