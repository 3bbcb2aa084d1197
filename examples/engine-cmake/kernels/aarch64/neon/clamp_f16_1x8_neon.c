/* Clamp of binary16 values without half-precision arithmetic: widen 8 halves to single precision (exact), clamp
 * there and narrow back (exact again: the result is x, lo or hi). The last n % 8 go through a zero-padded copy,
 * so nothing outside x[0..n) is read or outside y[0..n) written. */
#include <arm_neon.h>
#include <string.h>

#include "ecm_dispatch.h"

static uint16x8_t clamp8(uint16x8_t v, float32x4_t lo, float32x4_t hi) {
    float32x4_t a = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(v)));
    float32x4_t b = vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(v)));
    a = vminq_f32(vmaxq_f32(a, lo), hi);
    b = vminq_f32(vmaxq_f32(b, lo), hi);
    return vcombine_u16(vreinterpret_u16_f16(vcvt_f16_f32(a)), vreinterpret_u16_f16(vcvt_f16_f32(b)));
}

void ecm_clamp_f16_1x8_neon(const uint16_t *x, uint16_t *y, size_t n, uint16_t lo, uint16_t hi) {
    float32x4_t vlo = vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(lo)));
    float32x4_t vhi = vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(hi)));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vst1q_u16(y + i, clamp8(vld1q_u16(x + i), vlo, vhi));
    }
    if (i < n) {
        uint16_t tail[8] = {0};
        memcpy(tail, x + i, (n - i) * sizeof *tail);
        vst1q_u16(tail, clamp8(vld1q_u16(tail), vlo, vhi));
        memcpy(y + i, tail, (n - i) * sizeof *tail);
    }
}
