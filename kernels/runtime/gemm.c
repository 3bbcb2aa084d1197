/* The one-call public API: isf_gemm_op (the typed functions' entry point) and isf_gemm_packed check their
 * operands, then run the driver (driver.c) with the selected kernel. The operand check serves the plans' runs too. */
#include "isf_driver.h"

isf_status isf_check_operands(isf_op op, size_t k, const isf_region *r) {
    size_t in = isf_ops[op].in_bytes, out = isf_ops[op].out_bytes, m = r->rows, n = r->cols;
    int given = r->panels == NULL, needs_b = given && k && n;
    if ((m && k && r->a == NULL) || (needs_b && r->b == NULL) || (m && n && r->c == NULL)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (r->lda < k || (given && r->ldb < n) || r->ldc < n) {
        return ISF_ERR_INVALID_ARG; /* the leading dimensions whatever the sizes are (isaforge.h) */
    }
    int ok = isf_span_fits(m, k, r->lda, in) && isf_span_fits(m, n, r->ldc, out);
    return ok && (!given || isf_span_fits(k, n, needs_b ? r->ldb : n, in)) ? ISF_OK : ISF_ERR_INVALID_ARG;
}

/* `kern` is the kernel to run, read with the selection `sel` that the caller holds; NULL: the current selection's,
 * held here. kc: the pre-packed B's Kc, 0 when B is given. Few rows run the tail kernels, as a plan's run does. */
static isf_status gemm_with(isf_op op, size_t k, size_t kc, const isf_region *r, const isf_kernel *kern,
                            const isf_selection *sel) {
    isf_status st = isf_check_operands(op, k, r);
    if (st != ISF_OK || r->rows == 0 || r->cols == 0) {
        return st;
    }
    if (k == 0) {
        isf_epilogue_alone(op, 0, r);
        return ISF_OK;
    }
    int held = kern == NULL;
    if (held) {
        sel = isf_selection_enter();
        kern = isf_kernel_for_columns(sel, op, r->cols);
    }
    if (kern == NULL) {
        st = ISF_ERR_UNSUPPORTED;
    } else {
        isf_tails tails = isf_tail_kernels(kern, sel);
        st = isf_run_gemm(kern, &tails, k, kc, r);
    }
    if (held) {
        isf_selection_leave(sel);
    }
    return st;
}

isf_status isf_gemm_op(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda, const void *b, size_t ldb,
                       void *c, size_t ldc) {
    if (!isf_plain_op(op)) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_region r = {a, lda, b, ldb, NULL, c, ldc, m, 0, n, 0, &isf_no_epilogue, NULL};
    return gemm_with(op, k, 0, &r, NULL, NULL);
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
    isf_region r = {a, lda, NULL, 0, panels, c, ldc, m, 0, n, 0, &isf_no_epilogue, NULL};
    const isf_selection *sel = isf_selection_enter();
    const isf_kernel *kern = isf_packed_reader(&h, sel, isf_kernel_for_columns(sel, op, n));
    isf_sizes s;
    isf_status st = kern == NULL ? ISF_ERR_UNSUPPORTED : ISF_OK;
    if (st == ISF_OK && (!isf_sizes_of(kern, &h, NULL, &s) || s.extent > packed_bytes)) {
        st = ISF_ERR_INVALID_ARG;
    }
    if (st == ISF_OK) {
        st = gemm_with(op, k, s.kc, &r, kern, sel);
    }
    isf_selection_leave(sel);
    return st;
}
