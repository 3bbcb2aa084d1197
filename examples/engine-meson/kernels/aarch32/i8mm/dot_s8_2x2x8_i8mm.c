/* dot_s8 with the Armv8.6 int8 matrix multiply. Tile 2x2x8: VSMMLA.S8 multiplies a 2x8 matrix (16 bytes of a, as
 * two rows of 8) by an 8x2 one (16 bytes of b, as two columns of 8) into a 2x2 int32 tile [r00 r01 r10 r11], 8
 * products per element (KR = 8). The diagonal r00 + r11 is the dot product of the 16 pairs; r01 and r10 mix a row
 * with the other column and are thrown away, so one instruction does the useful work of one VSDOT.S8: a single dot
 * product has no second row to fill the tile with (a GEMM would use all four). The lanes wrap modulo 2^32 like the
 * reference. The n % 16 tail is done one product at a time. */
#include <arm_neon.h>

#include "eng_dispatch.h"

int32_t eng_dot_s8_2x2x8_i8mm(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc = vmmlaq_s32(acc, vld1q_s8(a + i), vld1q_s8(b + i));
    }
    uint32_t sum = (uint32_t)vgetq_lane_s32(acc, 0) + (uint32_t)vgetq_lane_s32(acc, 3);
    for (; i < n; i++) {
        sum += (uint32_t)((int32_t)a[i] * b[i]);
    }
    return (int32_t)sum;
}
