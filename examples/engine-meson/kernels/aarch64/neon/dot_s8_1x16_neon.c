/* dot_s8 on plain Advanced SIMD. Tile 1x16: one result, 16 int8 pairs per step. SMULL/SMULL2 widen the products
 * to int16 (at most 128 * 128, which fits) and SADALP adds neighbouring pairs into four int32 lanes, which wrap
 * modulo 2^32 like the reference. The n % 16 tail is done one product at a time. */
#include <arm_neon.h>

#include "eng_dispatch.h"

int32_t eng_dot_s8_1x16_neon(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int8x16_t va = vld1q_s8(a + i);
        int8x16_t vb = vld1q_s8(b + i);
        acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(va), vget_low_s8(vb)));
        acc = vpadalq_s16(acc, vmull_high_s8(va, vb));
    }
    uint32_t sum = (uint32_t)vaddvq_s32(acc);
    for (; i < n; i++) {
        sum += (uint32_t)((int32_t)a[i] * b[i]);
    }
    return (int32_t)sum;
}
