/* The 4×8 tile scheduled for Cortex-A55's in-order pipeline: loads issued a step ahead of the multiplies that use
 * them, in C (the same packed panels and results as vuk_matmul_clamp_f32_f32p8_4x8_neon_asm). */
#include <arm_neon.h>

#include "vuk.h"

size_t vuk_matmul_clamp_f32_f32p8_4x8_neon_a55_get_mr(void) { return 4; }
size_t vuk_matmul_clamp_f32_f32p8_4x8_neon_a55_get_nr(void) { return 8; }
size_t vuk_matmul_clamp_f32_f32p8_4x8_neon_a55_get_kr(void) { return 1; }

static float32x4_t clamp4(float32x4_t v, float lo, float hi) {
    return vminq_f32(vmaxq_f32(v, vdupq_n_f32(lo)), vdupq_n_f32(hi));
}

void vuk_matmul_clamp_f32_f32p8_4x8_neon_a55_run_matmul(size_t m, size_t n, size_t k, const float *lhs,
                                                        size_t lhs_stride, const void *rhs_packed, float *dst,
                                                        size_t dst_stride, float clamp_min, float clamp_max) {
    const float *panel = rhs_packed;
    for (size_t j0 = 0; j0 < n; j0 += 8, panel += (k + 1) * 8) {
        size_t cols = n - j0 < 8 ? n - j0 : 8;
        for (size_t i0 = 0; i0 < m; i0 += 4) {
            size_t rows = m - i0 < 4 ? m - i0 : 4;
            float32x4_t acc[4][2];
            for (size_t r = 0; r < 4; r++) {
                acc[r][0] = vld1q_f32(panel), acc[r][1] = vld1q_f32(panel + 4);
            }
            const float *b = panel + 8;
            float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
            for (size_t p = 0; p < k; p++) {
                float32x4_t next0 = b0, next1 = b1;
                if (p + 1 < k) {
                    next0 = vld1q_f32(b + 8 * (p + 1)), next1 = vld1q_f32(b + 8 * (p + 1) + 4);
                }
                for (size_t r = 0; r < rows; r++) {
                    float a = lhs[(i0 + r) * lhs_stride + p];
                    acc[r][0] = vfmaq_n_f32(acc[r][0], b0, a);
                    acc[r][1] = vfmaq_n_f32(acc[r][1], b1, a);
                }
                b0 = next0, b1 = next1;
            }
            for (size_t r = 0; r < rows; r++) {
                float out[8];
                vst1q_f32(out, clamp4(acc[r][0], clamp_min, clamp_max));
                vst1q_f32(out + 4, clamp4(acc[r][1], clamp_min, clamp_max));
                for (size_t j = 0; j < cols; j++) {
                    dst[(i0 + r) * dst_stride + j0 + j] = out[j];
                }
            }
        }
    }
}
