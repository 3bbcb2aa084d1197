/* fp32 4×8 tile, KR = 1: per k step, 4 broadcast A values × 2 B vectors of 4 columns, fused (VFMA, VFPv4). */
#include <arm_neon.h>

#include "isf_tile_steps.h"

/* The epilogue's operands for the tile, loaded once (not per row) and only for the steps it runs. */
typedef struct {
    float32x4_t bias_lo, bias_hi, min, max;
} epilogue_regs;

static inline __attribute__((always_inline)) epilogue_regs load_epilogue(const isf_epilogue *ep, uint32_t steps) {
    epilogue_regs e = {0};
    if (steps & ISF_EPILOGUE_BIAS) {
        const float *bias = ep->bias;
        e.bias_lo = vld1q_f32(bias);
        e.bias_hi = vld1q_f32(bias + 4);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        e.min = vdupq_n_f32(ep->min);
        e.max = vdupq_n_f32(ep->max);
    }
    return e;
}

/* VMAX then VMIN: a NaN stays NaN (the default NaN: A32 Advanced SIMD always runs with FPSCR.DN set). */
static inline float32x4_t clamp(float32x4_t x, const epilogue_regs *e) {
    return vminq_f32(vmaxq_f32(x, e->min), e->max);
}

/*
 * Adding C after the loop (not seeding the accumulators with it) keeps one code path for the k loop; the epilogue
 * follows. `steps` is a constant at every call, so each combination of steps is straight-line code.
 */
static inline __attribute__((always_inline)) void store_row(float *c, float32x4_t lo, float32x4_t hi, int accumulate,
                                                            uint32_t steps, const epilogue_regs *e) {
    if (accumulate) {
        lo = vaddq_f32(lo, vld1q_f32(c));
        hi = vaddq_f32(hi, vld1q_f32(c + 4));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        lo = vaddq_f32(lo, e->bias_lo);
        hi = vaddq_f32(hi, e->bias_hi);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        lo = clamp(lo, e);
        hi = clamp(hi, e);
    }
    vst1q_f32(c, lo);
    vst1q_f32(c + 4, hi);
}

#define TILE_STORE(steps, acc)                              \
    do {                                                    \
        const epilogue_regs e = load_epilogue(ep, (steps)); \
        store_row(pc, c00, c01, acc, steps, &e);            \
        store_row(pc + ldc, c10, c11, acc, steps, &e);      \
        store_row(pc + 2 * ldc, c20, c21, acc, steps, &e);  \
        store_row(pc + 3 * ldc, c30, c31, acc, steps, &e);  \
    } while (0)

ISF_UKERNEL(gemm_f32_4x8_neon) {
    const float *pa = __builtin_assume_aligned(a, 64);
    const float *pb = __builtin_assume_aligned(b, 64);
    float *pc = c;
    /* 8 accumulators + 2 B + 4 broadcast A = 14 of the 16 q registers. */
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00;
    float32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    for (; k_blocks != 0; k_blocks--) {
        const float32x4_t b0 = vld1q_f32(pb);
        const float32x4_t b1 = vld1q_f32(pb + 4);
        /* A32 VFMA has no by-scalar form, so broadcast A while loading instead of a VDUP per row. */
        const float32x4_t a0 = vld1q_dup_f32(pa);
        const float32x4_t a1 = vld1q_dup_f32(pa + 1);
        const float32x4_t a2 = vld1q_dup_f32(pa + 2);
        const float32x4_t a3 = vld1q_dup_f32(pa + 3);
        c00 = vfmaq_f32(c00, a0, b0);
        c01 = vfmaq_f32(c01, a0, b1);
        c10 = vfmaq_f32(c10, a1, b0);
        c11 = vfmaq_f32(c11, a1, b1);
        c20 = vfmaq_f32(c20, a2, b0);
        c21 = vfmaq_f32(c21, a2, b1);
        c30 = vfmaq_f32(c30, a3, b0);
        c31 = vfmaq_f32(c31, a3, b1);
        pa += 4;
        pb += 8;
    }

    TILE_FINISH();
}
