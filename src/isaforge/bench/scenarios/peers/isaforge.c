/* libisaforge: the one-call API (isf_gemm_f32 & co., plain) or a plan (isf_gemm_create packs B once; the measured
 * call is isf_gemm_run, prepacked); every precision, qs8 as a gemm_qs8 plan only (it has no one-call function). */
#include <isaforge/isaforge.h>
#include <stdio.h>

#include "harness.h"

const char isf_bench_library[] = "isaforge";

static const isf_op ops[ISF_BENCH_PRECISIONS] = {ISF_OP_GEMM_F32, ISF_OP_GEMM_F16, ISF_OP_GEMM_BF16, ISF_OP_GEMM_S8,
                                                 ISF_OP_GEMM_QS8};

int isf_bench_offers(isf_bench_precision precision, isf_bench_mode mode) {
    return precision != ISF_BENCH_QS8 || mode == ISF_BENCH_PREPACKED;
}

isf_bench_element isf_bench_output(isf_bench_precision precision) {
    return precision == ISF_BENCH_FP16   ? ISF_BENCH_ELEMENT_F16
           : precision == ISF_BENCH_INT8 ? ISF_BENCH_ELEMENT_I32
           : precision == ISF_BENCH_QS8  ? ISF_BENCH_ELEMENT_I8
                                         : ISF_BENCH_ELEMENT_F32;
}

int32_t isf_bench_prepare(const isf_bench_problem *p, void **state) {
    *state = NULL;
    if (p->mode == ISF_BENCH_PLAIN) {
        return 0;
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
    isf_gemm_desc desc = {.op = ops[p->precision],
                          .n = p->n,
                          .k = p->k,
                          .weights = p->b,
                          .ldw = p->n,
                          .layout = ISF_WEIGHTS_KN,
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
