/* The quantized ops' arithmetic outside the kernels: gemm_qd8_f32's row quantization (isaforge.h gives it exactly;
 * the scalar and the AArch64 vector paths give the same bytes) and the panels it packs. Compiled at the baseline. */
#include <string.h>

#include "isf_internal.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

/* round_half_even(x) + zp, clamped to int8; NaN counts as 0 (so gives zp), as fcvtns does. */
static int8_t quantize_one(float x, int32_t zp) { return isf_requantize(x != x ? 0.0f : x, zp, -128, 127); }

static void row_range(const float *a, size_t k, float *lo, float *hi) {
    float l = 0.0f, h = 0.0f;
    size_t p = 0;
#if defined(__aarch64__)
    if (k >= 4) {
        float32x4_t vl = vdupq_n_f32(0.0f), vh = vl;
        for (; p + 4 <= k; p += 4) { /* fminnm/fmaxnm: a NaN element is ignored, as the scalar comparisons do */
            float32x4_t x = vld1q_f32(a + p);
            vl = vminnmq_f32(vl, x), vh = vmaxnmq_f32(vh, x);
        }
        l = vminnmvq_f32(vl), h = vmaxnmvq_f32(vh);
    }
#endif
    for (; p < k; p++) {
        l = a[p] < l ? a[p] : l;
        h = a[p] > h ? a[p] : h;
    }
    *lo = l, *hi = h;
}

/* The row's scale, 255/span and zero point (isaforge.h). */
void isf_quantize_params(const float *a, size_t k, float *scale, float *inv, int32_t *zp) {
    float lo, hi;
    row_range(a, k, &lo, &hi);
    float span = hi - lo;
    /* Below 255·FLT_MIN the scale would be subnormal (0 to AArch32's NEON), and below 255/FLT_MAX, 255/span would
     * overflow: such a row, all but zero, is quantized as a zero row (isaforge.h). */
    span = span < 0x1.fep-119f ? 255.0f : span;
    *scale = span / 255.0f;
    *inv = 255.0f / span;
    float t = lo * *inv; /* in [−255, 0]; NaN only for an infinite lo (inv 0), which gives zp −128 */
    t = t != t ? 0.0f : t;
    int32_t z = -128 - (int32_t)((t + 12582912.0f) - 12582912.0f); /* 1.5·2^23: to nearest, ties to even */
    *zp = z < -128 ? -128 : z > 127 ? 127 : z;
}

/* q[p] for p in [0, count) of a row, with its inv and zp. */
static void quantize_run(const float *a, size_t count, float inv, int32_t zp, int8_t *q) {
    size_t p = 0;
#if defined(__aarch64__)
    float32x4_t vi = vdupq_n_f32(inv);
    int32x4_t vz = vdupq_n_s32(zp);
    for (; p + 8 <= count; p += 8) {
        int32x4_t x0 = vqaddq_s32(vcvtnq_s32_f32(vmulq_f32(vld1q_f32(a + p), vi)), vz);
        int32x4_t x1 = vqaddq_s32(vcvtnq_s32_f32(vmulq_f32(vld1q_f32(a + p + 4), vi)), vz);
        int8x8_t b = vqmovn_s16(vcombine_s16(vqmovn_s32(x0), vqmovn_s32(x1)));
        vst1_s8(q + p, b);
    }
#endif
    for (; p < count; p++) {
        q[p] = quantize_one(a[p] * inv, zp);
    }
}

void isf_quantize_row(const float *a, size_t k, float *scale, int32_t *zero_point, int8_t *q) {
    float s = 1.0f, inv = 1.0f;
    int32_t zp = 0;
    if (a == NULL && k != 0) {
        return;
    }
    isf_quantize_params(a, k, &s, &inv, &zp);
    if (scale != NULL) {
        *scale = s;
    }
    if (zero_point != NULL) {
        *zero_point = zp;
    }
    if (q != NULL) {
        quantize_run(a, k, inv, zp, q);
    }
}

/* The A panel of `rows` fp32 rows (lda floats apart) for one k block of `depth`, quantized with each row's inv and
 * zp straight into the int8 panel layout (per KR block: row 0's KR values, row 1's, …; rows up to MR and the last
 * block's tail zero). A row is quantized KR values at a time through a small buffer. */
void isf_pack_a_quantized(const isf_pack_spec *s, const float *a, size_t lda, size_t rows, size_t depth,
                          const float *inv, const int32_t *zp, unsigned char *dst) {
    size_t mr = s->mr, kr = s->kr, blocks = isf_kernel_blocks(s, depth);
    int8_t run[256];
    for (size_t i = 0; i < mr; i++) {
        for (size_t p0 = 0; p0 < blocks * kr; p0 += sizeof run) {
            size_t len = blocks * kr - p0 < sizeof run ? blocks * kr - p0 : sizeof run;
            size_t valid = i < rows && p0 < depth ? (depth - p0 < len ? depth - p0 : len) : 0;
            if (valid) {
                quantize_run(a + i * lda + p0, valid, inv[i], zp[i], run);
            }
            memset(run + valid, 0, len - valid);
            for (size_t x = 0; x < len; x += kr) { /* sizeof run is a multiple of every KR */
                memcpy(dst + (((p0 + x) / kr) * mr + i) * kr, run + x, kr);
            }
        }
    }
}
