/* The reference for relu_f16: one element per step (tile 1x1), portable C at the baseline. Computed in float,
 * which holds every half exactly, so the result is the same whether or not the CPU has half arithmetic. -0 and
 * -inf give +0, like the FMAX of the SIMD kernels. */
#include "eng_dispatch.h"

void eng_relu_f16_1x1_ref(const __fp16 *x, __fp16 *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
