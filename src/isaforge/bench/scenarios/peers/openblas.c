/* OpenBLAS (Debian's serial build): cblas_sgemm, its per-call API; fp32 only, C = A·B (no bias nor clamp:
 * harness.h's ISF_BENCH_FP32_PER_CALL_ONLY). */
#include <cblas.h>
#include <stdio.h>

#include "harness.h"

ISF_BENCH_FP32_PER_CALL_ONLY("openblas")

int32_t isf_bench_call(void *state, const isf_bench_problem *p, size_t m, const void *a, void *c) {
    (void)state;
    /* cblas_sgemm reports nothing: bad arguments go to its xerbla, which prints and returns. */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)p->n, (blasint)p->k, 1.0f, a,
                (blasint)p->k, p->b, (blasint)p->n, 0.0f, c, (blasint)p->n);
    return 0;
}

void isf_bench_describe(void *state, const isf_bench_problem *p, char *buf, size_t size) {
    (void)state;
    (void)p;
    snprintf(buf, size, "core=%s", openblas_get_corename());
}
