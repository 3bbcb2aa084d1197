/* (a · b) × scale rounded to binary16: SDOT for the sum, FP16 arithmetic for the scaling (Armv8.2 dotprod and fp16
 * together, on both arches). n ≤ 1024 keeps the sum exact in fp32 on the way. */
#include <arm_neon.h>
#include <string.h>

#include "vuk.h"

static int32_t add_lanes(int32x4_t v) {
#if defined(__aarch64__)
    return vaddvq_s32(v);
#else
    int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
    return vget_lane_s32(vpadd_s32(s, s), 0);
#endif
}

uint16_t vuk_dot_s8_f16_16x4_dotprod_fp16(const int8_t *a, const int8_t *b, size_t n, uint16_t scale) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc = vdotq_s32(acc, vld1q_s8(a + i), vld1q_s8(b + i));
    }
    int32_t dot = add_lanes(acc);
    for (; i < n; i++) {
        dot += a[i] * b[i];
    }
    float16_t s;
    memcpy(&s, &scale, sizeof s);
    float16x4_t r = vmul_f16(vdup_n_f16((float16_t)(float)dot), vdup_n_f16(s));
    float16_t h = vget_lane_f16(r, 0);
    uint16_t bits;
    memcpy(&bits, &h, sizeof bits);
    return bits;
}
