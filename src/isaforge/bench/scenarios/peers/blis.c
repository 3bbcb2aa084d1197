/* BLIS (Debian's serial build): bli_sgemm, its typed per-call API with row and column strides; fp32 only,
 * C = A·B (no bias nor clamp: harness.h's ISF_BENCH_FP32_PER_CALL_ONLY). */
#include <blis.h>
#include <stdio.h>

#include "harness.h"

ISF_BENCH_FP32_PER_CALL_ONLY("blis")

int32_t isf_bench_call(void *state, const isf_bench_problem *p, size_t m, const void *a, void *c) {
    (void)state;
    float alpha = 1.0f, beta = 0.0f;
    /* Row-major: row stride = the leading dimension, column stride 1. BLIS's typed API returns nothing. */
    bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)m, (dim_t)p->n, (dim_t)p->k, &alpha, (float *)a, (inc_t)p->k,
              1, (float *)p->b, (inc_t)p->n, 1, &beta, c, (inc_t)p->n, 1);
    return 0;
}

void isf_bench_describe(void *state, const isf_bench_problem *p, char *buf, size_t size) {
    (void)state;
    (void)p;
    snprintf(buf, size, "version=%s arch=%s", bli_info_get_version_str(), bli_arch_string(bli_arch_query_id()));
}
