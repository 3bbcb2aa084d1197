/* relu_f16 without half arithmetic: Armv8.0 can only convert halves (FCVTL/FCVTN), so 8 halves per step (tile 1x8)
 * are widened to float, FMAX'ed with +0 and narrowed back, which is exact since every half is a float. FMAX gives
 * +0 for -0, like the reference. The n % 8 tail goes through float one element at a time. */
#include <arm_neon.h>

#include "eng_dispatch.h"

void eng_relu_f16_1x8_neon(const __fp16 *x, __fp16 *y, size_t n) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float16x8_t h = vld1q_f16(x + i);
        float32x4_t lo = vmaxq_f32(vcvt_f32_f16(vget_low_f16(h)), zero);
        float32x4_t hi = vmaxq_f32(vcvt_high_f32_f16(h), zero);
        vst1q_f16(y + i, vcvt_high_f16_f32(vcvt_f16_f32(lo), hi));
    }
    for (; i < n; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
