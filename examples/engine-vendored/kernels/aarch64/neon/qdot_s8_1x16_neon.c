/* The engine's own NEON qdot (SMULL + SADALP), for cores without dotprod. */
#include <arm_neon.h>
#include <string.h>

#include "veng_dispatch.h"

uint16_t veng_qdot_s8_1x16_neon(const int8_t *a, const int8_t *b, size_t n, uint16_t scale) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int8x16_t x = vld1q_s8(a + i), y = vld1q_s8(b + i);
        acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(y)));
        acc = vpadalq_s16(acc, vmull_s8(vget_high_s8(x), vget_high_s8(y)));
    }
    int32_t lanes[4];
    vst1q_s32(lanes, acc);
    int32_t dot = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; i++) {
        dot += a[i] * b[i];
    }
    __fp16 s, h;
    memcpy(&s, &scale, sizeof s);
    h = (__fp16)((float)(__fp16)(float)dot * (float)s);
    uint16_t bits;
    memcpy(&bits, &h, sizeof bits);
    return bits;
}
