/* Sum of squares with the int8 matrix multiply: SMMLA takes 16 bytes as a 2x8 matrix A and adds A times A
 * transposed, a 2x2 matrix, to the accumulator. Its diagonal (lanes 0 and 3) is the sum of squares of each row,
 * at most 8 * 16384 = 131072 a step; the other two lanes are cross products, never read (they may wrap). The
 * diagonal is widened into 64 bits every BLOCK steps, before it could overflow. */
#include <arm_neon.h>

#include "ecm_dispatch.h"

enum { BLOCK = 8192 };

int64_t ecm_sumsq_s8_2x8_i8mm(const int8_t *x, size_t n) {
    int64_t sum = 0;
    size_t i = 0;
    while (n - i >= 16) {
        size_t steps = (n - i) / 16 < BLOCK ? (n - i) / 16 : BLOCK;
        int32x4_t acc = vdupq_n_s32(0);
        for (size_t s = 0; s < steps; s++, i += 16) {
            int8x16_t a = vld1q_s8(x + i);
            acc = vmmlaq_s32(acc, a, a);
        }
        sum += (int64_t)vgetq_lane_s32(acc, 0) + vgetq_lane_s32(acc, 3);
    }
    for (; i < n; i++) {
        sum += (int32_t)x[i] * x[i];
    }
    return sum;
}
