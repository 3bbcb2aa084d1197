/* dot_s8 with the Armv8.2 dot product. Tile 1x16x4: one result, 16 int8 pairs per step, and each of the four int32
 * lanes of VSDOT.S8 adds 4 of the products (KR = 4). The lanes wrap modulo 2^32 like the reference. The n % 16 tail
 * is done one product at a time. */
#include <arm_neon.h>

#include "eng_dispatch.h"

int32_t eng_dot_s8_1x16x4_dotprod(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc = vdotq_s32(acc, vld1q_s8(a + i), vld1q_s8(b + i));
    }
    int32x2_t half = vadd_s32(vget_low_s32(acc), vget_high_s32(acc));
    uint32_t sum = (uint32_t)vget_lane_s32(vpadd_s32(half, half), 0);
    for (; i < n; i++) {
        sum += (uint32_t)((int32_t)a[i] * b[i]);
    }
    return (int32_t)sum;
}
