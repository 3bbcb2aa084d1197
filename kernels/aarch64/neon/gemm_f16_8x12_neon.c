/* binary16 GEMM micro-kernel for cores without FEAT_FP16: 8x12 tile, fp32 accumulation, one k step per block. */
#include <arm_neon.h>

#include "isf_internal.h"

/*
 * Only Armv8.0 conversions are used: binary16 is widened with fcvtl/fcvtl2 (float16x4/8_t are storage types at
 * the baseline; only fp16 arithmetic needs +fp16) and narrowed once, at the store, with fcvtn/fcvtn2, which round
 * to nearest even under the default FPCR. The products of two binary16 values are exact in fp32.
 *
 * Tile: every k step converts MR + NR values (one fcvtl per 4) for MR·NR/4 fmla, so the tile that maximises
 * MR·NR/(MR + NR) within 32 registers wins: 8x12 keeps 24 accumulators + 2 A + 3 B = 29 registers (the raw
 * binary16 vectors die into the converted ones) and converts 20 values per 96 MACs; 8x8 would convert 16 per 64.
 * The conversions bound the rate: fcvtl is 2 uops on the vector pipes (V0 on Neoverse N1/N2, V0/V2 on V1/V2 in
 * the llvm-mca models), so a step is 24 fmla + 10 conversion uops on the same pipes, at most 24/34 of peak.
 */
static inline float32x4_t widen_lo(uint16x8_t x)
{
    return vcvt_f32_f16(vget_low_f16(vreinterpretq_f16_u16(x)));
}

static inline float32x4_t widen_hi(uint16x8_t x)
{
    return vcvt_high_f32_f16(vreinterpretq_f16_u16(x));
}

/* The old C is widened and added only here, after the k loop: C + A·B is rounded to binary16 once. */
static inline void store_row(uint16_t *c, float32x4_t x0, float32x4_t x1, float32x4_t x2, int accumulate)
{
    if (accumulate) {
        uint16x8_t old01 = vld1q_u16(c);
        x0 = vaddq_f32(x0, widen_lo(old01));
        x1 = vaddq_f32(x1, widen_hi(old01));
        x2 = vaddq_f32(x2, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(c + 8))));
    }
    vst1q_u16(c, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(x0), x1)));
    vst1_u16(c + 8, vreinterpret_u16_f16(vcvt_f16_f32(x2)));
}

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(r) float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0
#define ACC_FMA(r, av, lane)                              \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane);     \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane);     \
    c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, lane)
#define ACC_STORE(r) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##2, accumulate)

ISF_UKERNEL(gemm_f16_8x12_neon)
{
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    /* 24 fp32 accumulators (row r, columns 4j..4j+3 in c<r><j>). */
    ACC_DECL(0); ACC_DECL(1); ACC_DECL(2); ACC_DECL(3);
    ACC_DECL(4); ACC_DECL(5); ACC_DECL(6); ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        // isf-hot-loop-begin
        uint16x8_t ah = vld1q_u16(pa);
        uint16x8_t bh = vld1q_u16(pb);
        uint16x4_t bh2 = vld1_u16(pb + 8);
        pa += 8;
        pb += 12;
        float32x4_t a0 = widen_lo(ah), a1 = widen_hi(ah);
        float32x4_t b0 = widen_lo(bh), b1 = widen_hi(bh), b2 = vcvt_f32_f16(vreinterpret_f16_u16(bh2));
        ACC_FMA(0, a0, 0); ACC_FMA(1, a0, 1); ACC_FMA(2, a0, 2); ACC_FMA(3, a0, 3);
        ACC_FMA(4, a1, 0); ACC_FMA(5, a1, 1); ACC_FMA(6, a1, 2); ACC_FMA(7, a1, 3);
        // isf-hot-loop-end
    }

    ACC_STORE(0); ACC_STORE(1); ACC_STORE(2); ACC_STORE(3);
    ACC_STORE(4); ACC_STORE(5); ACC_STORE(6); ACC_STORE(7);
}
