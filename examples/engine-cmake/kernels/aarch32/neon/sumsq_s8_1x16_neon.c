/* Sum of squares with Advanced SIMD (AArch32): VMULL.S8 squares 16 bytes into 16-bit products (at most 16384),
 * VPADAL.S16 folds them into four 32-bit lanes. A lane gains at most 65536 per 16 bytes, so the 32-bit accumulator
 * is widened into 64 bits (VPADAL.S32) every BLOCK vectors, before it could overflow. */
#include <arm_neon.h>

#include "ecm_dispatch.h"

enum { BLOCK = 16384 };

int64_t ecm_sumsq_s8_1x16_neon(const int8_t *x, size_t n) {
    int64x2_t total = vdupq_n_s64(0);
    size_t i = 0;
    while (n - i >= 16) {
        size_t vectors = (n - i) / 16 < BLOCK ? (n - i) / 16 : BLOCK;
        int32x4_t acc = vdupq_n_s32(0);
        for (size_t v = 0; v < vectors; v++, i += 16) {
            int8x16_t a = vld1q_s8(x + i);
            acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(a)));
            acc = vpadalq_s16(acc, vmull_s8(vget_high_s8(a), vget_high_s8(a)));
        }
        total = vpadalq_s32(total, acc);
    }
    int64_t sum = vgetq_lane_s64(total, 0) + vgetq_lane_s64(total, 1);
    for (; i < n; i++) {
        sum += (int32_t)x[i] * x[i];
    }
    return sum;
}
