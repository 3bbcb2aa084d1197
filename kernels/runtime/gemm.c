/* The one-call public API: isf_gemm_op (the typed functions' entry point) and isf_gemm_packed check their
 * operands, then run the driver (driver.c) with the selected kernel. */
#include <string.h>

#include "isf_driver.h"

/* *ok cleared when rows×cols with leading dimension ld, in elem-byte elements, overflows size_t. */
static void check_span(size_t rows, size_t cols, size_t ld, size_t elem, int *ok) {
    if (!isf_span_fits(rows, cols, ld, elem)) {
        *ok = 0;
    }
}

static isf_status check_args(isf_op op, const isf_gemm_args *g) {
    size_t in = isf_ops[op].in_bytes, out = isf_ops[op].out_bytes;
    int needs_a = g->m && g->k, needs_b = g->k && g->n && g->packed_b == NULL, needs_c = g->m && g->n;
    if ((needs_a && g->a == NULL) || (needs_b && g->b == NULL) || (needs_c && g->c == NULL)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (g->lda < g->k || (g->packed_b == NULL && g->ldb < g->n) || g->ldc < g->n) {
        return ISF_ERR_INVALID_ARG; /* the leading dimensions whatever the sizes are (isaforge.h) */
    }
    int ok = 1;
    check_span(g->m, g->k, g->lda, in, &ok);
    check_span(g->k, g->n, needs_b ? g->ldb : g->n, in, &ok);
    check_span(g->m, g->n, g->ldc, out, &ok);
    return ok ? ISF_OK : ISF_ERR_INVALID_ARG;
}

static void zero_c(isf_op op, const isf_gemm_args *g) {
    for (size_t r = 0; r < g->m; r++) {
        memset(g->c + r * g->ldc * isf_ops[op].out_bytes, 0, g->n * isf_ops[op].out_bytes);
    }
}

/* `kern` is the kernel to run (its selection pinned by the caller); NULL: the current selection's, pinned here. */
static isf_status gemm_with(isf_op op, const isf_gemm_args *g, const isf_kernel *kern) {
    isf_status st = check_args(op, g);
    if (st != ISF_OK || g->m == 0 || g->n == 0) {
        return st;
    }
    if (g->k == 0) {
        zero_c(op, g);
        return ISF_OK;
    }
    if (kern != NULL) {
        return isf_run_gemm(kern, g);
    }
    const isf_selection *sel = isf_selection_enter();
    kern = sel->kernel[op];
    st = kern == NULL ? ISF_ERR_UNSUPPORTED : isf_run_gemm(kern, g);
    isf_selection_leave(sel);
    return st;
}

isf_status isf_gemm_op(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda, const void *b, size_t ldb,
                       void *c, size_t ldc) {
    if (!isf_plain_op(op)) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_gemm_args g = {m, n, k, a, lda, b, ldb, c, ldc, NULL, &isf_no_epilogue, 0};
    return gemm_with(op, &g, NULL);
}

isf_status isf_gemm_packed(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda, const void *packed_b,
                           size_t packed_bytes, void *c, size_t ldc) {
    if (!isf_plain_op(op) || packed_b == NULL || packed_bytes < PACKED_HEADER_BYTES) {
        return ISF_ERR_INVALID_ARG; /* the header is not read */
    }
    isf_packed_header h;
    if (!isf_packed_header_read(packed_b, &h) || h.op != (uint32_t)op || h.n != n || h.k != k) {
        return ISF_ERR_INVALID_ARG;
    }
    const unsigned char *panels = (const unsigned char *)packed_b + h.panels;
    isf_gemm_args g = {m, n, k, a, lda, NULL, n, c, ldc, panels, &isf_no_epilogue, 0};
    const isf_selection *sel = isf_selection_enter();
    const isf_kernel *kern = isf_packed_reader(&h, sel, sel->kernel[op]);
    isf_sizes s;
    isf_status st = kern == NULL ? ISF_ERR_UNSUPPORTED : ISF_OK;
    if (st == ISF_OK && (!isf_sizes_of(kern, &h, NULL, &s) || s.extent > packed_bytes)) {
        st = ISF_ERR_INVALID_ARG;
    }
    if (st == ISF_OK) {
        g.packed_kc = s.kc;
        st = gemm_with(op, &g, kern);
    }
    isf_selection_leave(sel);
    return st;
}
