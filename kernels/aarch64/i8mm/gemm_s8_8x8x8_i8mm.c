/* int8 -> int32 GEMM micro-kernel: 8x8 tile, smmla, 8 k steps per block. */
#include <arm_neon.h>

#include "isf_internal.h"

static inline int32x4_t add_if(int32x4_t x, const int32_t *c, int accumulate)
{
    return accumulate ? vaddq_s32(x, vld1q_s32(c)) : x;
}

/*
 * m<j> is the 2x2 block (rows 2i, 2i+1; columns 2j, 2j+1) laid out [r0c0 r0c1 r1c0 r1c1]: the low 64 bits
 * of each belong to the even row, the high 64 bits to the odd row, so uzp1/uzp2 on 64-bit lanes rebuild rows.
 */
static inline void store_row_pair(int32_t *c, size_t ldc, int32x4_t m0, int32x4_t m1, int32x4_t m2, int32x4_t m3,
                                  int accumulate)
{
    int64x2_t q0 = vreinterpretq_s64_s32(m0), q1 = vreinterpretq_s64_s32(m1);
    int64x2_t q2 = vreinterpretq_s64_s32(m2), q3 = vreinterpretq_s64_s32(m3);
    int32_t *even = c, *odd = c + ldc;
    vst1q_s32(even, add_if(vreinterpretq_s32_s64(vuzp1q_s64(q0, q1)), even, accumulate));
    vst1q_s32(even + 4, add_if(vreinterpretq_s32_s64(vuzp1q_s64(q2, q3)), even + 4, accumulate));
    vst1q_s32(odd, add_if(vreinterpretq_s32_s64(vuzp2q_s64(q0, q1)), odd, accumulate));
    vst1q_s32(odd + 4, add_if(vreinterpretq_s32_s64(vuzp2q_s64(q2, q3)), odd + 4, accumulate));
}

/* A vector a<i> is rows 2i, 2i+1 × 8 k, B vector b<j> columns 2j, 2j+1 × 8 k: exactly the packed layout. */
#define ACC_DECL(i) int32x4_t c##i##0 = vdupq_n_s32(0), c##i##1 = c##i##0, c##i##2 = c##i##0, c##i##3 = c##i##0
#define ACC_MMLA(i)                                \
    c##i##0 = vmmlaq_s32(c##i##0, a##i, b0);       \
    c##i##1 = vmmlaq_s32(c##i##1, a##i, b1);       \
    c##i##2 = vmmlaq_s32(c##i##2, a##i, b2);       \
    c##i##3 = vmmlaq_s32(c##i##3, a##i, b3)
#define ACC_STORE(i) store_row_pair(out + 2 * (i) * ldc, ldc, c##i##0, c##i##1, c##i##2, c##i##3, accumulate)

ISF_UKERNEL(gemm_s8_8x8x8_i8mm)
{
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t *out = c;
    /* 16 accumulators (2x2 blocks) + 4 A + 4 B vectors = 24 registers. */
    ACC_DECL(0); ACC_DECL(1); ACC_DECL(2); ACC_DECL(3);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        // isf-hot-loop-begin
        int8x16_t a0 = vld1q_s8(pa), a1 = vld1q_s8(pa + 16), a2 = vld1q_s8(pa + 32), a3 = vld1q_s8(pa + 48);
        int8x16_t b0 = vld1q_s8(pb), b1 = vld1q_s8(pb + 16), b2 = vld1q_s8(pb + 32), b3 = vld1q_s8(pb + 48);
        pa += 64;
        pb += 64;
        ACC_MMLA(0); ACC_MMLA(1); ACC_MMLA(2); ACC_MMLA(3);
        // isf-hot-loop-end
    }

    ACC_STORE(0); ACC_STORE(1); ACC_STORE(2); ACC_STORE(3);
}
