/* 4×8 tiles from the assembly micro-kernel (vuk_kernel_f32p8_4x8.S), rows past the last whole 4 one at a time. */
#include <arm_neon.h>

#include "vuk.h"

void vuk_kernel_f32p8_4x8(const float *lhs, size_t lhs_stride_bytes, const float *panel, size_t k, float *tile);

size_t vuk_matmul_clamp_f32_f32p8_4x8_neon_asm_get_mr(void) { return 4; }
size_t vuk_matmul_clamp_f32_f32p8_4x8_neon_asm_get_nr(void) { return 8; }
size_t vuk_matmul_clamp_f32_f32p8_4x8_neon_asm_get_kr(void) { return 1; }

static void store_row(const float *tile_row, float *dst, size_t cols, float lo, float hi) {
    for (size_t j = 0; j < cols; j++) {
        float v = tile_row[j] < lo ? lo : tile_row[j];
        dst[j] = v > hi ? hi : v;
    }
}

void vuk_matmul_clamp_f32_f32p8_4x8_neon_asm_run_matmul(size_t m, size_t n, size_t k, const float *lhs,
                                                        size_t lhs_stride, const void *rhs_packed, float *dst,
                                                        size_t dst_stride, float clamp_min, float clamp_max) {
    const float *panel = rhs_packed;
    for (size_t j0 = 0; j0 < n; j0 += 8, panel += (k + 1) * 8) {
        size_t cols = n - j0 < 8 ? n - j0 : 8;
        float tile[4 * 8];
        size_t i = 0;
        for (; i + 4 <= m; i += 4) {
            vuk_kernel_f32p8_4x8(lhs + i * lhs_stride, lhs_stride * sizeof(float), panel, k, tile);
            for (size_t r = 0; r < 4; r++) {
                store_row(tile + r * 8, dst + (i + r) * dst_stride + j0, cols, clamp_min, clamp_max);
            }
        }
        for (; i < m; i++) {
            const float *a = lhs + i * lhs_stride, *b = panel + 8;
            float32x4_t lo = vld1q_f32(panel), hi = vld1q_f32(panel + 4);
            for (size_t p = 0; p < k; p++, b += 8) {
                lo = vfmaq_n_f32(lo, vld1q_f32(b), a[p]);
                hi = vfmaq_n_f32(hi, vld1q_f32(b + 4), a[p]);
            }
            vst1q_f32(tile, lo);
            vst1q_f32(tile + 4, hi);
            store_row(tile, dst + i * dst_stride + j0, cols, clamp_min, clamp_max);
        }
    }
}
