/* OpenBLAS (Debian's serial build): cblas_sgemm, its per-call API; fp32 only. */
#include <cblas.h>
#include <stdio.h>

#include "harness.h"

const char isf_bench_library[] = "openblas";

int isf_bench_offers(isf_bench_precision precision, isf_bench_mode mode) {
    return precision == ISF_BENCH_FP32 && mode == ISF_BENCH_PLAIN;
}

isf_bench_element isf_bench_output(isf_bench_precision precision) {
    (void)precision;
    return ISF_BENCH_ELEMENT_F32;
}

int32_t isf_bench_prepare(const isf_bench_problem *p, void **state) {
    (void)p;
    *state = NULL;
    return 0;
}

int32_t isf_bench_call(void *state, const isf_bench_problem *p, size_t m, const void *a, void *c) {
    (void)state;
    /* cblas_sgemm reports nothing: bad arguments go to its xerbla, which prints and returns. */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)p->n, (blasint)p->k, 1.0f, a,
                (blasint)p->k, p->b, (blasint)p->n, 0.0f, c, (blasint)p->n);
    return 0;
}

void isf_bench_release(void *state) { (void)state; }

void isf_bench_describe(void *state, const isf_bench_problem *p, char *buf, size_t size) {
    (void)state;
    (void)p;
    snprintf(buf, size, "core=%s", openblas_get_corename());
}
