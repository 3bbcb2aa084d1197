/* bfloat16 -> fp32 GEMM micro-kernel for cores without FEAT_BF16: 8x12 tile, fmla by lane, one k step per block. */
#include <arm_neon.h>

#include "isf_internal.h"

/*
 * A bfloat16 value is the top half of the fp32 with the same value, so widening is exact: put it above 16 zero
 * bits. For a full vector zip1/zip2 with a zero vector does it (little-endian: the zero becomes the low half of
 * each 32-bit lane), the same bits as shll #16 but on any vector pipe, where shll/shll2 run on one (Neoverse N1/N2)
 * or two (V1/V2) of them and would compete with the fmla there; the 4-value tail of B uses shll. The result is
 * plain fp32 fmla arithmetic (IEEE: subnormals kept, NaN and Inf propagate); products of two bfloat16 values
 * are exact in fp32 unless they fall below its normal range.
 *
 * Tile: every k step widens MR + NR values (one instruction per 4) for MR·NR/4 fmla, so the tile that maximises
 * MR·NR/(MR + NR) within 32 registers wins: 8x12 keeps 24 accumulators + 2 A + 3 B + 1 zero = 30 registers and
 * widens 20 values per 96 MACs (5 vector ops per 24 fmla); 8x8 would widen 16 per 64.
 */
static inline float32x4_t widen_lo(uint16x8_t x, uint16x8_t zero)
{
    return vreinterpretq_f32_u16(vzip1q_u16(zero, x));
}

static inline float32x4_t widen_hi(uint16x8_t x, uint16x8_t zero)
{
    return vreinterpretq_f32_u16(vzip2q_u16(zero, x));
}

/* The old C is added only here, after the k loop, so the loop touches no memory but the panels. */
static inline void store_row(float *c, float32x4_t x0, float32x4_t x1, float32x4_t x2, int accumulate)
{
    if (accumulate) {
        x0 = vaddq_f32(x0, vld1q_f32(c));
        x1 = vaddq_f32(x1, vld1q_f32(c + 4));
        x2 = vaddq_f32(x2, vld1q_f32(c + 8));
    }
    vst1q_f32(c, x0);
    vst1q_f32(c + 4, x1);
    vst1q_f32(c + 8, x2);
}

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(r) float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0
#define ACC_FMA(r, av, lane)                              \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane);     \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane);     \
    c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, lane)
#define ACC_STORE(r) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##2, accumulate)

ISF_UKERNEL(gemm_bf16_8x12_neon)
{
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    const uint16x8_t zero = vdupq_n_u16(0);
    /* 24 accumulators (row r, columns 4j..4j+3 in c<r><j>). */
    ACC_DECL(0); ACC_DECL(1); ACC_DECL(2); ACC_DECL(3);
    ACC_DECL(4); ACC_DECL(5); ACC_DECL(6); ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        // isf-hot-loop-begin
        uint16x8_t ah = vld1q_u16(pa);
        uint16x8_t bh = vld1q_u16(pb);
        uint16x4_t bh2 = vld1_u16(pb + 8);
        pa += 8;
        pb += 12;
        float32x4_t a0 = widen_lo(ah, zero), a1 = widen_hi(ah, zero);
        float32x4_t b0 = widen_lo(bh, zero), b1 = widen_hi(bh, zero), b2 = vreinterpretq_f32_u32(vshll_n_u16(bh2, 16));
        ACC_FMA(0, a0, 0); ACC_FMA(1, a0, 1); ACC_FMA(2, a0, 2); ACC_FMA(3, a0, 3);
        ACC_FMA(4, a1, 0); ACC_FMA(5, a1, 1); ACC_FMA(6, a1, 2); ACC_FMA(7, a1, 3);
        // isf-hot-loop-end
    }

    ACC_STORE(0); ACC_STORE(1); ACC_STORE(2); ACC_STORE(3);
    ACC_STORE(4); ACC_STORE(5); ACC_STORE(6); ACC_STORE(7);
}
