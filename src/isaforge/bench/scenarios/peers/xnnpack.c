/* XNNPACK (Debian's 2022-02 snapshot): its fully-connected operators, weights packed at creation; fp32 (f32) and
 * fp16 (f16: binary16 in, out, bias and accumulation) with the input's bias and clamp, and int8 and qs8 alike (its qs8 operator: int8 in, requantized int8
 * out; it has no int32 output, so its int8 row is the same call as its qs8 row). Single-threaded: no pthreadpool. */
#include <stdio.h>
#include <xnnpack.h>

#include "harness.h"

const char isf_bench_library[] = "xnnpack";

int isf_bench_offers(isf_bench_precision precision, isf_bench_mode mode) {
    return precision != ISF_BENCH_BF16 && mode == ISF_BENCH_PREPACKED;
}

isf_bench_element isf_bench_output(isf_bench_precision precision) {
    return precision == ISF_BENCH_FP16                                 ? ISF_BENCH_ELEMENT_F16
           : precision == ISF_BENCH_INT8 || precision == ISF_BENCH_QS8 ? ISF_BENCH_ELEMENT_I8
                                                                       : ISF_BENCH_ELEMENT_F32;
}

int32_t isf_bench_prepare(const isf_bench_problem *p, void **state) {
    *state = NULL;
    enum xnn_status status = xnn_initialize(NULL);
    if (status != xnn_status_success) {
        return (int32_t)status;
    }
    xnn_operator_t op = NULL;
    /* XNN_FLAG_TRANSPOSE_WEIGHTS: the weights are B as it is, [k][n]. The float operators take the bias and clamp
     * libisaforge's plan takes (its f16 operator rounds the bounds to binary16, as gemm_f16's plan does). */
    switch (p->precision) {
    case ISF_BENCH_FP32:
        status = xnn_create_fully_connected_nc_f32(p->k, p->n, p->k, p->n, p->b, p->bias, p->out_min, p->out_max,
                                                   XNN_FLAG_TRANSPOSE_WEIGHTS, &op);
        break;
    case ISF_BENCH_FP16:
        status = xnn_create_fully_connected_nc_f16(p->k, p->n, p->k, p->n, p->b, p->bias, p->out_min, p->out_max,
                                                   XNN_FLAG_TRANSPOSE_WEIGHTS, &op);
        break;
    case ISF_BENCH_INT8:
    case ISF_BENCH_QS8:
        /* Input and kernel scales 1 and zero points 0, so the accumulator is the exact A·B; an output scale of
         * 1/scale then makes out = clamp(round(acc·scale) + zero point) to [-128, 127]. */
        status =
            xnn_create_fully_connected_nc_qs8(p->k, p->n, p->k, p->n, 0, 1.0f, 1.0f, p->b, NULL, (int8_t)p->zero_point,
                                              1.0f / p->scale, -128, 127, XNN_FLAG_TRANSPOSE_WEIGHTS, &op);
        break;
    default:
        status = xnn_status_unsupported_parameter;
    }
    *state = op;
    return (int32_t)status;
}

int32_t isf_bench_call(void *state, const isf_bench_problem *p, size_t m, const void *a, void *c) {
    xnn_operator_t op = state;
    enum xnn_status status;
    switch (p->precision) {
    case ISF_BENCH_FP32:
        status = xnn_setup_fully_connected_nc_f32(op, m, a, c, NULL);
        break;
    case ISF_BENCH_FP16:
        status = xnn_setup_fully_connected_nc_f16(op, m, a, c, NULL);
        break;
    default:
        status = xnn_setup_fully_connected_nc_qs8(op, m, a, c, NULL);
    }
    return (int32_t)(status == xnn_status_success ? xnn_run_operator(op, NULL) : status);
}

void isf_bench_release(void *state) {
    if (state != NULL) {
        xnn_delete_operator(state);
    }
}

void isf_bench_describe(void *state, const isf_bench_problem *p, char *buf, size_t size) {
    (void)state;
    (void)p;
    snprintf(buf, size, "threads=1");
}
