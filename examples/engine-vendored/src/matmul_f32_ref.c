/* The engine's portable matmul: the fallback for both roles and the tests' oracle. It reads vuk's packed panels
 * (vuk_rhs_pack_f32p8: per 8 columns, their bias, then k rows of 8), so every kernel of the op shares them. */
#include "veng_dispatch.h"

size_t veng_matmul_f32_ref_mr(void) { return 1; }
size_t veng_matmul_f32_ref_nr(void) { return 8; }
size_t veng_matmul_f32_ref_kr(void) { return 1; }

void veng_matmul_f32_ref(size_t m, size_t n, size_t k, const float *lhs, size_t lhs_stride, const void *rhs_packed,
                         float *dst, size_t dst_stride, float clamp_min, float clamp_max) {
    const float *packed = rhs_packed;
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            const float *panel = packed + j / 8 * (k + 1) * 8;
            float sum = panel[j % 8];
            for (size_t p = 0; p < k; p++) {
                sum += lhs[i * lhs_stride + p] * panel[8 + p * 8 + j % 8];
            }
            sum = sum < clamp_min ? clamp_min : sum;
            dst[i * dst_stride + j] = sum > clamp_max ? clamp_max : sum;
        }
    }
}
