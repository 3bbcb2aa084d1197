/* Sum of squares with the dot-product instructions: VSDOT.S8 of a vector with itself adds four squares to each
 * 32-bit lane (at most 4 * 16384 = 65536), two vectors (32 bytes) a step into two accumulators. They are widened
 * into 64 bits every BLOCK steps, before a lane could overflow; fewer than 32 bytes left go one by one. */
#include <arm_neon.h>

#include "ecm_dispatch.h"

enum { BLOCK = 16384 };

int64_t ecm_sumsq_s8_1x32_dotprod(const int8_t *x, size_t n) {
    int64x2_t total = vdupq_n_s64(0);
    size_t i = 0;
    while (n - i >= 32) {
        size_t steps = (n - i) / 32 < BLOCK ? (n - i) / 32 : BLOCK;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        for (size_t s = 0; s < steps; s++, i += 32) {
            int8x16_t a = vld1q_s8(x + i), b = vld1q_s8(x + i + 16);
            acc0 = vdotq_s32(acc0, a, a);
            acc1 = vdotq_s32(acc1, b, b);
        }
        total = vpadalq_s32(vpadalq_s32(total, acc0), acc1);
    }
    int64_t sum = vgetq_lane_s64(total, 0) + vgetq_lane_s64(total, 1);
    for (; i < n; i++) {
        sum += (int32_t)x[i] * x[i];
    }
    return sum;
}
