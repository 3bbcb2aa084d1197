/* dot_s8 on Armv7 NEON. Tile 1x16: one result, 16 int8 pairs per step. VMULL.S8 widens the products to int16 (at
 * most 128 * 128, which fits) and VPADAL.S16 adds neighbouring pairs into four int32 lanes, which wrap modulo 2^32
 * like the reference. AArch32 has no across-vector add, so the lanes are folded with VPADD. The n % 16 tail is done
 * one product at a time. */
#include <arm_neon.h>

#include "eng_dispatch.h"

int32_t eng_dot_s8_1x16_neon(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int8x16_t va = vld1q_s8(a + i);
        int8x16_t vb = vld1q_s8(b + i);
        acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(va), vget_low_s8(vb)));
        acc = vpadalq_s16(acc, vmull_s8(vget_high_s8(va), vget_high_s8(vb)));
    }
    int32x2_t half = vadd_s32(vget_low_s32(acc), vget_high_s32(acc));
    uint32_t sum = (uint32_t)vget_lane_s32(vpadd_s32(half, half), 0);
    for (; i < n; i++) {
        sum += (uint32_t)((int32_t)a[i] * b[i]);
    }
    return (int32_t)sum;
}
