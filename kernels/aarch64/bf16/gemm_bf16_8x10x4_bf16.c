/* bfloat16 -> fp32 GEMM micro-kernel (FEAT_BF16): 8x10 tile, bfmmla, 4 k steps per block. */
#include <arm_neon.h>

#include "isf_internal.h"

/*
 * bfmmla multiplies a 2x4 A block (2 rows × 4 k) by a 2x4 B block (2 columns × 4 k) into a 2x2 fp32 block.
 * Tile: bfmmla has a 5-6 cycle latency and issues 4 per cycle on Neoverse V1/V2, so full rate needs about
 * 20 independent accumulators; 8x8x4 has 16 (llvm-mca: 3.2 of 4 per cycle on V1). 24 (8x12x4 or MNN's 12x8x4)
 * need 24 + 4 + 6 = 34 registers once the compiler hoists the panel loads, which GCC 12's pre-RA scheduler does
 * (spills in the loop). 8x10x4 has 20 2x2 blocks + 4 A + 5 B = 29 registers: c<i><j> = rows 2i, 2i+1 ×
 * columns 2j, 2j+1.
 * Note bfmmla (without FEAT_EBF16 / FPCR.EBF) flushes subnormal inputs and results to zero and rounds its
 * intermediate sums to odd: this variant is not bit-identical to fp32 fmla arithmetic.
 */
static inline bfloat16x8_t load_bf16(const uint16_t *p)
{
    return vreinterpretq_bf16_u16(vld1q_u16(p));
}

static inline float32x4_t add_if(float32x4_t x, const float *c, int accumulate)
{
    return accumulate ? vaddq_f32(x, vld1q_f32(c)) : x;
}

static inline float32x2_t add_if_2(float32x2_t x, const float *c, int accumulate)
{
    return accumulate ? vadd_f32(x, vld1_f32(c)) : x;
}

/*
 * m<j> is the 2x2 block (rows 2i, 2i+1; columns 2j, 2j+1) laid out [r0c0 r0c1 r1c0 r1c1]: the low 64 bits
 * of each belong to the even row, the high 64 bits to the odd row, so uzp1/uzp2 on 64-bit lanes rebuild rows.
 */
static inline float32x4_t even_row(float32x4_t x, float32x4_t y)
{
    return vreinterpretq_f32_f64(vuzp1q_f64(vreinterpretq_f64_f32(x), vreinterpretq_f64_f32(y)));
}

static inline float32x4_t odd_row(float32x4_t x, float32x4_t y)
{
    return vreinterpretq_f32_f64(vuzp2q_f64(vreinterpretq_f64_f32(x), vreinterpretq_f64_f32(y)));
}

static inline void store_row_pair(float *c, size_t ldc, float32x4_t m0, float32x4_t m1, float32x4_t m2,
                                  float32x4_t m3, float32x4_t m4, int accumulate)
{
    float *even = c, *odd = c + ldc;
    vst1q_f32(even, add_if(even_row(m0, m1), even, accumulate));
    vst1q_f32(even + 4, add_if(even_row(m2, m3), even + 4, accumulate));
    vst1_f32(even + 8, add_if_2(vget_low_f32(m4), even + 8, accumulate));
    vst1q_f32(odd, add_if(odd_row(m0, m1), odd, accumulate));
    vst1q_f32(odd + 4, add_if(odd_row(m2, m3), odd + 4, accumulate));
    vst1_f32(odd + 8, add_if_2(vget_high_f32(m4), odd + 8, accumulate));
}

/* A vector a<i> is rows 2i, 2i+1 × 4 k, B vector b<j> columns 2j, 2j+1 × 4 k: exactly the packed layout. */
#define ACC_DECL(i)                                                                                  \
    float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0, c##i##2 = c##i##0, c##i##3 = c##i##0, \
                c##i##4 = c##i##0
#define ACC_MMLA(i)                                 \
    c##i##0 = vbfmmlaq_f32(c##i##0, a##i, b0);      \
    c##i##1 = vbfmmlaq_f32(c##i##1, a##i, b1);      \
    c##i##2 = vbfmmlaq_f32(c##i##2, a##i, b2);      \
    c##i##3 = vbfmmlaq_f32(c##i##3, a##i, b3);      \
    c##i##4 = vbfmmlaq_f32(c##i##4, a##i, b4)
#define ACC_STORE(i) \
    store_row_pair(out + 2 * (i) * ldc, ldc, c##i##0, c##i##1, c##i##2, c##i##3, c##i##4, accumulate)

ISF_UKERNEL(gemm_bf16_8x10x4_bf16)
{
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    /* 20 accumulators (2x2 blocks) + 4 A + 5 B vectors = 29 registers. */
    ACC_DECL(0); ACC_DECL(1); ACC_DECL(2); ACC_DECL(3);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        // isf-hot-loop-begin
        bfloat16x8_t a0 = load_bf16(pa), a1 = load_bf16(pa + 8), a2 = load_bf16(pa + 16), a3 = load_bf16(pa + 24);
        bfloat16x8_t b0 = load_bf16(pb), b1 = load_bf16(pb + 8), b2 = load_bf16(pb + 16), b3 = load_bf16(pb + 24);
        bfloat16x8_t b4 = load_bf16(pb + 32);
        pa += 32;
        pb += 40;
        ACC_MMLA(0); ACC_MMLA(1); ACC_MMLA(2); ACC_MMLA(3);
        // isf-hot-loop-end
    }

    ACC_STORE(0); ACC_STORE(1); ACC_STORE(2); ACC_STORE(3);
}
