/* Armv8.2 dot product (SDOT), 16 int8 pairs per instruction. Compiled with isaforge's flags for its `dotprod`
 * variant (isaforge_variant_c_args['dotprod']) and called only when the CPU has the feature. */
#include <arm_neon.h>

#include "engine.h"

int32_t engine_dot_s8_dotprod(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc = vdotq_s32(acc, vld1q_s8(a + i), vld1q_s8(b + i));
    }
    int32_t sum = vgetq_lane_s32(acc, 0) + vgetq_lane_s32(acc, 1) + vgetq_lane_s32(acc, 2) + vgetq_lane_s32(acc, 3);
    for (; i < n; i++) {
        sum += (int32_t)a[i] * b[i];
    }
    return sum;
}
