/* Clamp of binary16 values in half-precision arithmetic (FMAX/FMIN on 8 halves), 16 a step. The last n % 16 go
 * 8 at a time, then through a zero-padded copy, so nothing outside x[0..n) is read or outside y[0..n) written. */
#include <arm_neon.h>
#include <string.h>

#include "ecm_dispatch.h"

static uint16x8_t clamp8(uint16x8_t v, float16x8_t lo, float16x8_t hi) {
    return vreinterpretq_u16_f16(vminq_f16(vmaxq_f16(vreinterpretq_f16_u16(v), lo), hi));
}

void ecm_clamp_f16_1x16_fp16(const uint16_t *x, uint16_t *y, size_t n, uint16_t lo, uint16_t hi) {
    float16x8_t vlo = vreinterpretq_f16_u16(vdupq_n_u16(lo));
    float16x8_t vhi = vreinterpretq_f16_u16(vdupq_n_u16(hi));
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint16x8_t a = vld1q_u16(x + i), b = vld1q_u16(x + i + 8);
        vst1q_u16(y + i, clamp8(a, vlo, vhi));
        vst1q_u16(y + i + 8, clamp8(b, vlo, vhi));
    }
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
