/* relu_f16 without half arithmetic: the baseline's neon-vfpv4 can only convert halves (VCVT.F32.F16), so 8 halves
 * per step (tile 1x8) are widened to float, VMAX'ed with +0 and narrowed back, which is exact since every half is a
 * float (and a normal one, so NEON's flush-to-zero never touches it). VMAX gives +0 for -0, like the reference. The
 * n % 8 tail goes through float one element at a time. */
#include <arm_neon.h>

#include "eng_dispatch.h"

void eng_relu_f16_1x8_neon(const __fp16 *x, __fp16 *y, size_t n) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float32x4_t lo = vmaxq_f32(vcvt_f32_f16(vld1_f16(x + i)), zero);
        float32x4_t hi = vmaxq_f32(vcvt_f32_f16(vld1_f16(x + i + 4)), zero);
        vst1_f16(y + i, vcvt_f16_f32(lo));
        vst1_f16(y + i + 4, vcvt_f16_f32(hi));
    }
    for (; i < n; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
