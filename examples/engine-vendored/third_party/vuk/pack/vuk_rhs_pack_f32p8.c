#include <string.h>

#include "vuk.h"

size_t vuk_rhs_packed_size_f32p8(size_t n, size_t k) { return (n + 7) / 8 * (k + 1) * 8 * sizeof(float); }

void vuk_rhs_pack_f32p8(size_t n, size_t k, const float *rhs, size_t rhs_stride, const float *bias, void *rhs_packed) {
    float *out = rhs_packed;
    for (size_t j0 = 0; j0 < n; j0 += 8) {
        for (size_t j = j0; j < j0 + 8; j++) {
            *out++ = j < n && bias != NULL ? bias[j] : 0.0f;
        }
        for (size_t p = 0; p < k; p++) {
            for (size_t j = j0; j < j0 + 8; j++) {
                *out++ = j < n ? rhs[p * rhs_stride + j] : 0.0f;
            }
        }
    }
}
