/* The reference every dot_s8 kernel is checked against: one product per step (tile 1x1), portable C at the
 * baseline, always built. Accumulated in uint32_t so a sum past INT32_MAX wraps modulo 2^32 exactly as the SIMD
 * kernels' int32 lanes do, instead of being undefined. */
#include "eng_dispatch.h"

int32_t eng_dot_s8_1x1_ref(const int8_t *a, const int8_t *b, size_t n) {
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc += (uint32_t)((int32_t)a[i] * b[i]);
    }
    return (int32_t)acc;
}
