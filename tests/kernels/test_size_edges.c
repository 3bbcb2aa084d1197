/* Sizes at the edge of size_t, for every op: on a 32-bit target 2^28…2^32 elements or bytes. Spans that overflow are
 * refused with C untouched; large spans that fit are computed exactly, with operands in MAP_NORESERVE mappings that
 * end at an inaccessible page (only the touched pages cost memory); packed-B sizes never wrap and never loop over
 * k; plans whose sizes would wrap are refused at create, and crafted exports (n, k or tiles past what create makes)
 * at import, reading nothing past the buffer. Exit status: the number of failed checks. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <stdlib.h>

/* SHORT_LONG_K: the long k of a run without `long`, in bytes of A's row. A work buffer that grew with k would pass
 * half of it (the bound that shape is held to), so 2^19 proves what a larger k would, at a quarter of the emulated
 * work of 2^21 (the binary16 SVE kernels dominate the whole program under QEMU). */
enum { SENTINEL = 0xA5, BYTES_512M = 1 << 29, WORK_BOUND = 1 << 20, SHORT_LONG_K = 1 << 19 };

/* The library's work buffers come from aligned_alloc: this definition takes the place of libc's for it, so the test
 * sees the largest one a call asked for. It must not grow with m, n or k. */
static size_t largest_work;

void *aligned_alloc(size_t alignment, size_t size) {
    void *p = NULL;
    largest_work = size > largest_work ? size : largest_work;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

/* Elements of an op's input or output buffer that fit in `bytes`. */
static size_t in_elems(isf_op op, size_t bytes) { return bytes / isf_ops[op].in_bytes; }

/* ---- spans that do not fit in size_t ---------------------------------------------------------------------------- */

static void overflowing_spans_are_refused(isf_op op) {
    size_t in = isf_ops[op].in_bytes, out = isf_ops[op].out_bytes;
    size_t max_in = SIZE_MAX / in, max_out = SIZE_MAX / out;
    unsigned char a[64] = {0}, b[64] = {0}, c[64];
    memset(c, SENTINEL, sizeof c);
    /* (rows - 1)·ld + cols elements, one past what size_t holds in bytes. */
    CHECK(isf_gemm_op(op, 2, 2, 2, a, max_in - 1, b, 2, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_op(op, 2, 2, 2, a, 2, b, max_in - 1, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_op(op, 2, 2, 2, a, 2, b, 2, c, max_out - 1) == ISF_ERR_INVALID_ARG);
    if (in > 1) { /* k = SIZE_MAX / in + 1 elements of A */
        CHECK(isf_gemm_op(op, 1, 1, max_in + 1, a, max_in + 1, b, 1, c, 1) == ISF_ERR_INVALID_ARG);
    }
    CHECK(isf_gemm_op(op, 1, max_out + 1, 1, a, 1, b, max_out + 1, c, max_out + 1) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_op(op, SIZE_MAX, 1, 1, a, 1, b, 1, c, 1) == ISF_ERR_INVALID_ARG);
    if (sizeof(size_t) == 4) { /* 2^30 rows of a 4-element leading dimension: 2^32 elements */
        CHECK(isf_gemm_op(op, (size_t)1 << 30, 4, 4, a, 4, b, 4, c, 4) == ISF_ERR_INVALID_ARG);
        CHECK(isf_gemm_op(op, 4, (size_t)1 << 30, 4, a, 4, b, (size_t)1 << 30, c, (size_t)1 << 30) ==
              ISF_ERR_INVALID_ARG);
    }
    CHECK(all_bytes(c, sizeof c, SENTINEL));
}

/* ---- large spans that fit: exact results ---------------------------------------------------------------------- */

typedef struct {
    size_t m, n, k, lda, ldb, ldc;
} shape;

/* Element (i, j) of an operand: a few small non-zero values, so the product is exact in every precision. */
static int a_value(size_t i, size_t p, size_t k) { return p == 0 ? 1 + (int)(i % 4) : p == k - 1 ? 2 : 0; }
static int b_value(size_t p, size_t j, size_t k) { return p == 0 ? 1 + (int)(j % 4) : p == k - 1 ? -3 : 0; }

static double expected(size_t i, size_t j, size_t k) {
    double sum = 0;
    for (size_t p = 0; p < k; p += (k > 1 ? k - 1 : 1)) {
        sum += (double)a_value(i, p, k) * b_value(p, j, k);
    }
    return sum;
}

/* Writes the non-zero elements only: the rest of a fresh mapping reads as zero (and stays unbacked). */
static void plant_operands(isf_op op, const shape *s, unsigned char *a, unsigned char *b) {
    for (size_t i = 0; i < s->m; i++) {
        isf_put_input(op, a, i * s->lda, a_value(i, 0, s->k));
        isf_put_input(op, a, i * s->lda + s->k - 1, a_value(i, s->k - 1, s->k));
    }
    for (size_t j = 0; j < s->n; j++) {
        isf_put_input(op, b, j, b_value(0, j, s->k));
        isf_put_input(op, b, (s->k - 1) * s->ldb + j, b_value(s->k - 1, j, s->k));
    }
}

static void large_shape_is_exact(isf_op op, shape s, size_t work_bound, const char *what) {
    size_t in = isf_ops[op].in_bytes, out = isf_ops[op].out_bytes;
    size_t a_bytes = ((s.m - 1) * s.lda + s.k) * in, b_bytes = ((s.k - 1) * s.ldb + s.n) * in;
    size_t c_bytes = ((s.m - 1) * s.ldc + s.n) * out;
    guarded ga, gb, gc;
    unsigned char *a = guarded_alloc(&ga, a_bytes, 1), *b = guarded_alloc(&gb, b_bytes, 1);
    unsigned char *c = guarded_alloc(&gc, c_bytes, 1);
    if (a == NULL || b == NULL || c == NULL) {
        fprintf(stderr, "%s: no %zu + %zu + %zu bytes of address space\n", what, a_bytes, b_bytes, c_bytes);
        failures++;
    } else {
        plant_operands(op, &s, a, b);
        size_t pad = s.ldc - s.n < 16 ? s.ldc - s.n : 16; /* the start of each row's padding, not all 2^28 of it */
        for (size_t i = 0; i < s.m; i++) {
            memset(c + i * s.ldc * out, SENTINEL, (i + 1 < s.m ? s.n + pad : s.n) * out);
        }
        largest_work = 0;
        isf_status st = isf_gemm_op(op, s.m, s.n, s.k, a, s.lda, b, s.ldb, c, s.ldc);
        int exact = st == ISF_OK && largest_work > 0 && largest_work <= work_bound;
        for (size_t i = 0; i < s.m; i++) {
            for (size_t j = 0; j < s.n; j++) {
                exact &= isf_get_output(op, c, i * s.ldc + j) == expected(i, j, s.k);
            }
            exact &= i + 1 == s.m || all_bytes(c + (i * s.ldc + s.n) * out, pad * out, SENTINEL);
        }
        if (!exact) {
            fprintf(stderr, "%s (op %d, %s): status %d, work buffer %zu bytes, wrong result or padding written\n", what,
                    (int)op, isf_kernel_name(op), (int)st, largest_work);
            failures++;
        }
    }
    guarded_free(&ga), guarded_free(&gb), guarded_free(&gc);
}

/* `long_k_bytes`: A's one row and B's one column of a 1×1 result (2^29: 2^28 binary16 values, the size that once
 * asked for a 128-byte work buffer and packed 8 GiB into it; 0: none). Its work buffer is held to WORK_BOUND and
 * to half of that row, so that one growing with k fails at any k. */
static void large_spans_are_exact(isf_op op, size_t long_k_bytes) {
    size_t ld = in_elems(op, BYTES_512M); /* 2^27…2^29 elements */
    large_shape_is_exact(op, (shape){2, 3, 5, ld, 3, 3}, WORK_BOUND, "lda near 2^29 bytes");
    large_shape_is_exact(op, (shape){2, 3, 2, 2, ld, 3}, WORK_BOUND, "ldb near 2^29 bytes");
    large_shape_is_exact(op, (shape){3, 3, 2, 2, 3, ld / 2 * isf_ops[op].in_bytes / isf_ops[op].out_bytes}, WORK_BOUND,
                         "ldc near 2^28 bytes");
    size_t n = in_elems(op, 1 << 20);
    large_shape_is_exact(op, (shape){1, n, 2, 2, n, n}, WORK_BOUND, "n near 2^20 bytes");
    if (long_k_bytes) {
        size_t k = in_elems(op, long_k_bytes);
        size_t bound = long_k_bytes / 2 < WORK_BOUND ? long_k_bytes / 2 : WORK_BOUND;
        large_shape_is_exact(op, (shape){1, 1, k, k, 1, 1}, bound, "long k, 1x1 result");
    }
}

/* ---- packed B sizes ------------------------------------------------------------------------------------------- */

static void packed_sizes_never_wrap(isf_op op) {
    size_t in = isf_ops[op].in_bytes;
    size_t empty = isf_packed_b_size(op, 0, SIZE_MAX); /* used to loop for ever: pc += Kc wrapped past SIZE_MAX */
    CHECK(empty > 0);
    unsigned char buf[256];
    CHECK(empty <= sizeof buf && isf_pack_b(op, 0, SIZE_MAX, buf, 1, buf, empty) == ISF_OK);
    CHECK(isf_packed_b_size(op, SIZE_MAX, 2) == 0);
    CHECK(isf_packed_b_size(op, 2, SIZE_MAX) == 0);
    CHECK(isf_packed_b_size(op, SIZE_MAX / 2, SIZE_MAX / 2) == 0);
    /* 2^28 columns × 16 deep: past 2^32 bytes on 32-bit (0), a true bound on 64-bit. */
    size_t big = isf_packed_b_size(op, (size_t)1 << 28, 16);
    CHECK(sizeof(size_t) == 4 ? big == 0 : big >= ((size_t)1 << 28) * 16 * in);
    /* A size that fits on every target is at least the data it holds. */
    size_t fits = isf_packed_b_size(op, 1000, 1000);
    CHECK(fits >= 1000 * 1000 * in);
}

/* ---- plans whose sizes do not fit in size_t ------------------------------------------------------------------- */

/* n whose per-column arrays (16 bytes a column, NR-padded) pass 2^32 or 2^64 bytes: 2^28 on 32-bit, 2^60 on 64-bit. */
static const size_t huge_n = (size_t)1 << (sizeof(size_t) == 4 ? 28 : 60);

static const float unit_scale = 1.0f;
static const isf_quant_params one_scale = {
    .a_scale = 1.0f, .w_scales = &unit_scale, .w_scale_count = 1, .c_scale = 1.0f};

/* isf_gemm_create with k = 0 (no weights read): ISF_ERR_INVALID_ARG, the plan pointer untouched. */
static void k0_create_is_refused(isf_op op, size_t n, const void *bias, const char *what) {
    isf_gemm_desc d = {.op = op, .n = n, .k = 0, .bias = bias, .quant = isf_ops[op].quantized ? &one_scale : NULL};
    isf_gemm *sentinel = (isf_gemm *)(uintptr_t)0x40, *g = sentinel;
    isf_status st = isf_gemm_create(&d, &g);
    if (st != ISF_ERR_INVALID_ARG || g != sentinel) {
        fprintf(stderr, "%s: create gave %d\n", what, (int)st);
        failures++;
    }
}

/* A plan of n columns and k = 0 (bias of small integers when asked): its export, or NULL. */
static unsigned char *k0_export(isf_op op, size_t n, int with_bias, size_t *size) {
    int32_t bias[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* read as C's type: any bits do */
    isf_gemm_desc d = {
        .op = op, .n = n, .bias = with_bias ? bias : NULL, .quant = isf_ops[op].quantized ? &one_scale : NULL};
    isf_gemm *g = NULL;
    CHECK(n <= 8 && isf_gemm_create(&d, &g) == ISF_OK);
    unsigned char *p = g != NULL ? export_of(g, size) : NULL;
    isf_gemm_destroy(g);
    CHECK(p != NULL && import_guarded(p, *size) == ISF_OK); /* as exported: good */
    return p;
}

/* The export with its packed header's n or k replaced (resealed): refused, nothing read past the buffer. */
static void crafted_is_refused(unsigned char *p, size_t size, const char *what) {
    reseal_plan(p);
    isf_status st = import_guarded(p, size);
    if (st != ISF_ERR_INVALID_ARG) {
        fprintf(stderr, "%s: import gave %d\n", what, (int)st);
        failures++;
    }
}

static void plan_sizes_never_wrap(void) {
    /* Create: the quantized ops' per-column arrays, or the bias at round_up(n, NR), past size_t. */
    k0_create_is_refused(ISF_OP_GEMM_QS8, huge_n, NULL, "gemm_qs8, k = 0, huge n");
    k0_create_is_refused(ISF_OP_GEMM_QD8_F32, huge_n, NULL, "gemm_qd8_f32, k = 0, huge n");
    guarded gb;
    unsigned char *bias = guarded_alloc(&gb, 64, 0); /* far shorter than n values: reading it faults */
    k0_create_is_refused(ISF_OP_GEMM_F32, SIZE_MAX / 4 + 2, bias, "gemm_f32 bias, n · 4 past size_t");
    k0_create_is_refused(ISF_OP_GEMM_F32, SIZE_MAX / 4 - 1, bias, "gemm_f32 bias, round_up(n, NR) · 4 past size_t");
    k0_create_is_refused(ISF_OP_GEMM_QS8, SIZE_MAX / 4 + 2, bias, "gemm_qs8 bias, n · 4 past size_t");
    guarded_free(&gb);
    /* Import: n with n · 4 = the 20 bytes of bias it carries, modulo 2^64 (and above SIZE_MAX on 32-bit). */
    size_t size;
    unsigned char *p = k0_export(ISF_OP_GEMM_F32, 5, 1, &size);
    if (p != NULL) {
        le_put(p + PLAN_HEADER + PACKED_N, ((uint64_t)1 << 62) + 5, 8);
        crafted_is_refused(p, size, "gemm_f32 import, n = 2^62 + 5 with 20 bytes of bias");
        le_put(p + PLAN_HEADER + PACKED_N, 5, 8);
        le_put(p + PLAN_HEADER + PACKED_K, (uint64_t)1 << 32, 8); /* 0 as a 32-bit size_t */
        crafted_is_refused(p, size, "gemm_f32 import, k = 2^32");
        le_put(p + PLAN_HEADER + PACKED_K, 0, 8);
        uint32_t cols = (uint32_t)le_get(p + PLAN_TILE_COLS, 4), rows = (uint32_t)le_get(p + PLAN_TILE_ROWS, 4);
        le_put(p + PLAN_TILE_COLS, (uint32_t)1 << 30, 4); /* whole tiles of any NR; MR · 2^30 · 4 wraps on armv7 */
        crafted_is_refused(p, size, "gemm_f32 import, tiles 2^30 columns wide");
        le_put(p + PLAN_TILE_COLS, cols, 4), le_put(p + PLAN_TILE_ROWS, (uint32_t)1 << 30, 4);
        crafted_is_refused(p, size, "gemm_f32 import, tiles 2^30 rows high");
        le_put(p + PLAN_TILE_ROWS, 2 * rows, 4);
        crafted_is_refused(p, size, "gemm_f32 import, tiles twice as high as create makes them");
    }
    free(p);
    /* Import: a quantized section of no column arrays for huge n, which 16 · n wraps to. */
    p = k0_export(ISF_OP_GEMM_QS8, 8, 0, &size);
    if (p != NULL) {
        le_put(p + PLAN_HEADER + PACKED_K, (uint64_t)1 << 32, 8); /* once a division by zero in runs */
        crafted_is_refused(p, size, "gemm_qs8 import, k = 2^32");
        le_put(p + PLAN_HEADER + PACKED_K, 0, 8);
        size_t at = quant_section_at(p);
        le_put(p + PLAN_HEADER + PACKED_N, huge_n, 8);
        le_put(p + at + QUANT_PADDED, huge_n, 8);
        le_put(p + PLAN_QUANT_BYTES, QUANT_ARRAYS, 8);
        crafted_is_refused(p, at + QUANT_ARRAYS, "gemm_qs8 import, huge n, no column arrays");
    }
    free(p);
}

/* Usage: test_size_edges [long]. `long` makes the binary16 1×1 result one over k = 2^28 (the reproduction: a
 * minute or more under QEMU, as every element is read); otherwise every op stops at k of SHORT_LONG_K bytes. */
int main(int argc, char **argv) {
    int long_k = argc > 1 && strcmp(argv[1], "long") == 0;
    plan_sizes_never_wrap(); /* first: the cheapest, and ahead of any abort of the spans' checks under UBSan */
    for (int op = 0; op < (int)isf_op_count; op++) {
        if (!isf_ops[op].plain) {
            continue; /* the quantized ops run through plans only */
        }
        overflowing_spans_are_refused((isf_op)op);
        packed_sizes_never_wrap((isf_op)op);
        large_spans_are_exact((isf_op)op, long_k && op == ISF_OP_GEMM_F16 ? BYTES_512M : SHORT_LONG_K);
    }
    return finish();
}
