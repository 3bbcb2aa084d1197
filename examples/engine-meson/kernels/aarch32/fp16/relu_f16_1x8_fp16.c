/* relu_f16 in native half arithmetic (Armv8.2 FEAT_FP16): VMAX.F16 on a q register, 8 halves per step (tile 1x8), no
 * conversions. FMAX gives +0 for -0, like the reference; subnormal halves are kept (Linux leaves FZ16 clear). The
 * n % 8 tail goes through float one element at a time. */
#include <arm_neon.h>

#include "eng_dispatch.h"

void eng_relu_f16_1x8_fp16(const __fp16 *x, __fp16 *y, size_t n) {
    const float16x8_t zero = vdupq_n_f16(0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vst1q_f16(y + i, vmaxq_f16(vld1q_f16(x + i), zero));
    }
    for (; i < n; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
