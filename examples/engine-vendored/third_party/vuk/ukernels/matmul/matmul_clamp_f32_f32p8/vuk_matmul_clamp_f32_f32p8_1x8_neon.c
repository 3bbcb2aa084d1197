/* One row at a time against 8-column panels: the kernel for m = 1 (GEMV), NEON on both arches. */
#include <arm_neon.h>

#include "vuk.h"

size_t vuk_matmul_clamp_f32_f32p8_1x8_neon_get_mr(void) { return 1; }
size_t vuk_matmul_clamp_f32_f32p8_1x8_neon_get_nr(void) { return 8; }
size_t vuk_matmul_clamp_f32_f32p8_1x8_neon_get_kr(void) { return 1; }

void vuk_matmul_clamp_f32_f32p8_1x8_neon_run_matmul(size_t m, size_t n, size_t k, const float *lhs, size_t lhs_stride,
                                                    const void *rhs_packed, float *dst, size_t dst_stride,
                                                    float clamp_min, float clamp_max) {
    const float *panel = rhs_packed;
    for (size_t j0 = 0; j0 < n; j0 += 8, panel += (k + 1) * 8) {
        for (size_t i = 0; i < m; i++) {
            const float *a = lhs + i * lhs_stride, *b = panel + 8;
            float32x4_t lo = vld1q_f32(panel), hi = vld1q_f32(panel + 4);
            for (size_t p = 0; p < k; p++, b += 8) {
                lo = vmlaq_n_f32(lo, vld1q_f32(b), a[p]);
                hi = vmlaq_n_f32(hi, vld1q_f32(b + 4), a[p]);
            }
            float out[8];
            vst1q_f32(out, vminq_f32(vmaxq_f32(lo, vdupq_n_f32(clamp_min)), vdupq_n_f32(clamp_max)));
            vst1q_f32(out + 4, vminq_f32(vmaxq_f32(hi, vdupq_n_f32(clamp_min)), vdupq_n_f32(clamp_max)));
            for (size_t j = 0; j < 8 && j0 + j < n; j++) {
                dst[i * dst_stride + j0 + j] = out[j];
            }
        }
    }
}
