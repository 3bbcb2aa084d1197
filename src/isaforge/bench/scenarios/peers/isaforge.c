/* libisaforge: the one-call API (isf_gemm_f32 & co., plain: C = A·B, the API has no epilogue) or a plan
 * (isf_gemm_create packs B once; the measured call is isf_gemm_run, prepacked); every precision, the quantized ones
 * as plans only (they have no one-call function): qs8 a gemm_qs8 plan, qd8 a gemm_qd8_f32 plan and qc4w a
 * gemm_qd8_f32_qc4w plan, both with per-column scales, fp32 bias and the clamp (A quantized inside isf_gemm_run, so
 * inside the window). The float plans (fp32, fp16, bf16) carry the input's bias and clamp, as an engine's
 * fully-connected layer does: they are fused into the kernels' stores, so the window holds their cost. */
#include <isaforge/isaforge.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

const char isf_bench_library[] = "isaforge";

static const isf_op ops[ISF_BENCH_PRECISIONS] = {ISF_OP_GEMM_F32,         ISF_OP_GEMM_F16, ISF_OP_GEMM_BF16,
                                                 ISF_OP_GEMM_S8,          ISF_OP_GEMM_QS8, ISF_OP_GEMM_QD8_F32,
                                                 ISF_OP_GEMM_QD8_F32_QC4W};

static int dynamic(isf_bench_precision precision) { return precision == ISF_BENCH_QD8 || precision == ISF_BENCH_QC4W; }

int isf_bench_offers(isf_bench_precision precision, isf_bench_mode mode) {
    return (precision != ISF_BENCH_QS8 && !dynamic(precision)) || mode == ISF_BENCH_PREPACKED;
}

isf_bench_element isf_bench_output(isf_bench_precision precision) {
    return precision == ISF_BENCH_FP16   ? ISF_BENCH_ELEMENT_F16
           : precision == ISF_BENCH_INT8 ? ISF_BENCH_ELEMENT_I32
           : precision == ISF_BENCH_QS8  ? ISF_BENCH_ELEMENT_I8
                                         : ISF_BENCH_ELEMENT_F32;
}

/* B's int4 values (one per byte) as isaforge.h stores them for ISF_WEIGHTS_KN with ldw = n: element e = row · n + col
 * in the low nibble of byte e / 2 when e is even, the high nibble when odd. The caller frees it. */
static uint8_t *pack_int4(const int8_t *b, size_t count) {
    uint8_t *out = calloc((count + 1) / 2, 1);
    for (size_t e = 0; out != NULL && e < count; e++) {
        out[e / 2] |= (uint8_t)(((uint8_t)b[e] & 0xFu) << (e % 2 ? 4 : 0));
    }
    return out;
}

static int32_t create_dynamic(const isf_bench_problem *p, isf_gemm **plan) {
    uint8_t *packed = p->precision == ISF_BENCH_QC4W ? pack_int4(p->b, p->k * p->n) : NULL;
    if (p->precision == ISF_BENCH_QC4W && packed == NULL) {
        return (int32_t)ISF_ERR_NO_MEMORY;
    }
    const isf_quant_params quant = {.w_scales = p->w_scales, .w_scale_count = p->n};
    isf_gemm_desc desc = {.op = ops[p->precision],
                          .n = p->n,
                          .k = p->k,
                          .weights = packed != NULL ? (const void *)packed : p->b,
                          .ldw = p->n,
                          .layout = ISF_WEIGHTS_KN,
                          .bias = p->bias,
                          .flags = ISF_GEMM_CLAMP,
                          .out_min = p->out_min,
                          .out_max = p->out_max,
                          .quant = &quant};
    isf_status status = isf_gemm_create(&desc, plan);
    free(packed); /* the weights are read only during create */
    return (int32_t)status;
}

int32_t isf_bench_prepare(const isf_bench_problem *p, void **state) {
    *state = NULL;
    if (p->mode == ISF_BENCH_PLAIN) {
        return 0;
    }
    if (dynamic(p->precision)) {
        isf_gemm *plan = NULL;
        int32_t status = create_dynamic(p, &plan);
        *state = plan;
        return status;
    }
    /* qs8: with A's and W's scales 1 and zero points 0, the plan's multiplier (a_scale · w_scale) / c_scale is
     * 1 / c_scale, and c_scale is the output scale XNNPACK is given (1.0f / scale): the same requantization. */
    const float w_scale = 1.0f;
    const isf_quant_params quant = {.a_scale = 1.0f,
                                    .a_zero_point = 0,
                                    .w_scales = &w_scale,
                                    .w_scale_count = 1,
                                    .c_scale = 1.0f / p->scale,
                                    .c_zero_point = p->zero_point};
    /* The float precisions' input has a bias and a clamp (p->bias set); int8 and qs8 have none. */
    isf_gemm_desc desc = {.op = ops[p->precision],
                          .n = p->n,
                          .k = p->k,
                          .weights = p->b,
                          .ldw = p->n,
                          .layout = ISF_WEIGHTS_KN,
                          .bias = p->bias,
                          .flags = p->bias != NULL ? ISF_GEMM_CLAMP : 0,
                          .out_min = p->out_min,
                          .out_max = p->out_max,
                          .quant = p->precision == ISF_BENCH_QS8 ? &quant : NULL};
    isf_gemm *plan = NULL;
    isf_status status = isf_gemm_create(&desc, &plan);
    *state = plan;
    return (int32_t)status;
}

int32_t isf_bench_call(void *state, const isf_bench_problem *p, size_t m, const void *a, void *c) {
    size_t n = p->n, k = p->k;
    if (p->mode == ISF_BENCH_PREPACKED) {
        return (int32_t)isf_gemm_run(state, m, a, k, c, n, 0);
    }
    switch (p->precision) {
    case ISF_BENCH_FP32:
        return (int32_t)isf_gemm_f32(m, n, k, a, k, p->b, n, c, n);
    case ISF_BENCH_FP16:
        return (int32_t)isf_gemm_f16(m, n, k, a, k, p->b, n, c, n);
    case ISF_BENCH_BF16:
        return (int32_t)isf_gemm_bf16(m, n, k, a, k, p->b, n, c, n);
    default:
        return (int32_t)isf_gemm_s8(m, n, k, a, k, p->b, n, c, n);
    }
}

void isf_bench_release(void *state) { isf_gemm_destroy(state); }

void isf_bench_describe(void *state, const isf_bench_problem *p, char *buf, size_t size) {
    (void)state;
    const char *kernel = isf_kernel_name(ops[p->precision]);
    snprintf(buf, size, "kernel=%s", kernel != NULL ? kernel : "none");
}
