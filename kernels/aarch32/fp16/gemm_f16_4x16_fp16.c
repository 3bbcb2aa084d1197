/* binary16 4×16 tile, KR = 1, FEAT_FP16: VFMA.F16 on 8 lanes, accumulating in binary16. The fp16 image of
 * gemm_f32_4x8_neon: per k step 4 broadcast A values × 2 B vectors of 8 columns. */
#include <arm_neon.h>

#include "isf_tile_steps.h"

static inline float16x8_t load_f16(const uint16_t *p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

/* The epilogue's operands for the tile (binary16, as C): loaded once, not per row, and only for the steps it runs. */
typedef struct {
    float16x8_t bias_lo, bias_hi, min, max;
} epilogue_regs;

static inline __attribute__((always_inline)) epilogue_regs load_epilogue(const isf_epilogue *ep, uint32_t steps) {
    epilogue_regs e = {0};
    if (steps & ISF_EPILOGUE_BIAS) {
        const uint16_t *bias = ep->bias;
        e.bias_lo = load_f16(bias);
        e.bias_hi = load_f16(bias + 8);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        e.min = vreinterpretq_f16_u16(vdupq_n_u16(ep->min_f16));
        e.max = vreinterpretq_f16_u16(vdupq_n_u16(ep->max_f16));
    }
    return e;
}

/* VMAX then VMIN: a NaN stays NaN (the default NaN: A32 Advanced SIMD always runs with FPSCR.DN set). */
static inline float16x8_t clamp(float16x8_t x, const epilogue_regs *e) {
    return vminq_f16(vmaxq_f16(x, e->min), e->max);
}

/* The old C, then the epilogue, in binary16 like the accumulation. `steps` is a constant at every call, so each
 * combination of steps is straight-line code. */
static inline __attribute__((always_inline)) void store_row(uint16_t *c, float16x8_t lo, float16x8_t hi, int accumulate,
                                                            uint32_t steps, const epilogue_regs *e) {
    if (accumulate) {
        lo = vaddq_f16(lo, load_f16(c));
        hi = vaddq_f16(hi, load_f16(c + 8));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        lo = vaddq_f16(lo, e->bias_lo);
        hi = vaddq_f16(hi, e->bias_hi);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        lo = clamp(lo, e);
        hi = clamp(hi, e);
    }
    vst1q_u16(c, vreinterpretq_u16_f16(lo));
    vst1q_u16(c + 8, vreinterpretq_u16_f16(hi));
}

#define TILE_STORE(steps, acc)                              \
    do {                                                    \
        const epilogue_regs e = load_epilogue(ep, (steps)); \
        store_row(pc, c00, c01, acc, steps, &e);            \
        store_row(pc + ldc, c10, c11, acc, steps, &e);      \
        store_row(pc + 2 * ldc, c20, c21, acc, steps, &e);  \
        store_row(pc + 3 * ldc, c30, c31, acc, steps, &e);  \
    } while (0)

/* The panels are binary16 bits (uint16_t); load them as such and reinterpret, which costs nothing. */
static inline float16x8_t load_dup(const uint16_t *p) { return vreinterpretq_f16_u16(vld1q_dup_u16(p)); }

ISF_UKERNEL(gemm_f16_4x16_fp16) {
    const uint16_t *pa = __builtin_assume_aligned(a, 64);
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    uint16_t *pc = c;
    /* 8 accumulators + 2 B + 4 broadcast A = 14 of the 16 q registers. A32 has no VFMA by scalar (vfmaq_lane_f16
     * is AArch64 only), so A is broadcast while loading (VLD1.16 {d[],d[]}); a 6×16 tile would need 12 + 2 + 6. */
    float16x8_t c00 = vreinterpretq_f16_u16(vdupq_n_u16(0)), c01 = c00, c10 = c00, c11 = c00;
    float16x8_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    for (; k_blocks != 0; k_blocks--) {
        const float16x8_t b0 = vreinterpretq_f16_u16(vld1q_u16(pb));
        const float16x8_t b1 = vreinterpretq_f16_u16(vld1q_u16(pb + 8));
        const float16x8_t a0 = load_dup(pa);
        const float16x8_t a1 = load_dup(pa + 1);
        const float16x8_t a2 = load_dup(pa + 2);
        const float16x8_t a3 = load_dup(pa + 3);
        c00 = vfmaq_f16(c00, a0, b0);
        c01 = vfmaq_f16(c01, a0, b1);
        c10 = vfmaq_f16(c10, a1, b0);
        c11 = vfmaq_f16(c11, a1, b1);
        c20 = vfmaq_f16(c20, a2, b0);
        c21 = vfmaq_f16(c21, a2, b1);
        c30 = vfmaq_f16(c30, a3, b0);
        c31 = vfmaq_f16(c31, a3, b1);
        pa += 4;
        pb += 16;
    }

    TILE_FINISH();
}
