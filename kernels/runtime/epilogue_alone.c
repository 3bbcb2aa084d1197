/* k = 0: no panels, so A·B is zero and C is the epilogue alone, element by element, for a call (zeros) or a plan's
 * region (bias and clamp, or the quantized ops' steps). No kernel runs. */
#include <string.h>

#include "isf_driver.h"
#include "isf_half.h"

/* One int32 sum's element (gemm_s8's C, the quantized ops'): C's value when accumulating, else 0, through the
 * epilogue (an empty row quantizes with scale 1). */
static void sum_alone(const isf_epilogue *ep, unsigned char *e, int accumulate) {
    static const int32_t no_offset = 0;
    static const float unit = 1.0f;
    isf_epilogue one = *ep;
    one.row_offset = &no_offset, one.row_scale = &unit;
    int32_t r = 0;
    if (accumulate) {
        memcpy(&r, e, sizeof r);
    }
    isf_epilogue_store_s32(&one, r, 0, 0, e, 0);
}

/* One float element: (C's value when accumulating, else 0) + the bias (of bias_bytes: binary16 or fp32), clamped,
 * in C's type. */
static void float_alone(const isf_op_info *op, const isf_epilogue *ep, size_t bias_bytes, unsigned char *e,
                        int accumulate) {
    int half = op->out_kind == ISF_ELEM_BINARY16;
    float v = 0.0f;
    uint16_t h16 = 0;
    if (accumulate) {
        memcpy(half ? (void *)&h16 : (void *)&v, e, op->out_bytes);
        v = half ? isf_f16_to_f32(h16) : v;
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        float b = 0.0f;
        memcpy(bias_bytes == sizeof h16 ? (void *)&h16 : (void *)&b, ep->bias, bias_bytes);
        v += bias_bytes == sizeof h16 ? isf_f16_to_f32(h16) : b;
    }
    v = ep->steps & ISF_EPILOGUE_CLAMP ? isf_clamp_f32(v, ep->min, ep->max) : v;
    h16 = isf_f32_to_f16(v);
    memcpy(e, half ? (void *)&h16 : (void *)&v, op->out_bytes);
}

void isf_epilogue_alone(isf_op op, size_t bias_bytes, const isf_region *r) {
    const isf_op_info *info = &isf_ops[op];
    int sums = info->quantized || info->out_kind == ISF_ELEM_INT;
    for (size_t i = 0; i < r->rows; i++) {
        for (size_t j = 0; j < r->cols; j++) {
            unsigned char *e = r->c + (i * r->ldc + j) * info->out_bytes;
            isf_epilogue ep = isf_epilogue_across(r->ep, r->col + j, bias_bytes);
            if (sums) {
                sum_alone(&ep, e, r->accumulate);
            } else {
                float_alone(info, &ep, bias_bytes, e, r->accumulate);
            }
        }
    }
}
