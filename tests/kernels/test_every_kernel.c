/* Every kernel this CPU (and cap) can run, by name: each op's runnable kernels are selected in turn with
 * isf_select_kernel and run on shapes with partial tiles in every dimension, checked exactly against a naive loop,
 * with C's padding and the bytes around it untouched. Dispatch alone runs only the kernel it prefers; this is how
 * `isaforge test-qemu` sees every runnable kernel run on each model and cap (ISAFORGE_TRACE). Exit status: the number
 * of failed checks. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <stdlib.h>

enum { GUARD = 64, FILL = 0xC3, MAX_ELEM = 4 };

typedef struct {
    size_t m, n, k;
} shape;

/* Odd sizes: below one tile, over one tile with a remainder, and a k that is no multiple of any KR; k stays ≤ 64 so
 * every product is exact in binary16 (test_util.h). */
static const shape shapes[] = {{1, 1, 1}, {7, 19, 13}, {17, 37, 29}};

static void run_one(isf_op op, const char *name, shape s) {
    size_t lda = s.k + 3, ldb = s.n + 5, ldc = s.n + 2; /* leading dimensions above the minimum */
    unsigned char *a = calloc(s.m * lda, MAX_ELEM), *b = calloc(s.k * ldb, MAX_ELEM);
    size_t c_bytes = s.m * ldc * isf_ops[op].out_bytes;
    unsigned char *c_block = malloc(c_bytes + 2 * GUARD);
    CHECK(a != NULL && b != NULL && c_block != NULL);
    if (a == NULL || b == NULL || c_block == NULL) {
        free(a), free(b), free(c_block);
        return;
    }
    unsigned char *c = c_block + GUARD;
    fill_matrix(op, a, s.m, s.k, lda, 1);
    fill_matrix(op, b, s.k, s.n, ldb, 2);
    memset(c_block, FILL, c_bytes + 2 * GUARD);
    isf_status st = isf_gemm_op(op, s.m, s.n, s.k, a, lda, b, ldb, c, ldc);
    int exact = st == ISF_OK && product_is_exact(op, s.m, s.n, s.k, c, ldc);
    int guarded = all_bytes(c_block, GUARD, FILL) && all_bytes(c + c_bytes, GUARD, FILL);
    for (size_t i = 0; i < s.m; i++) { /* the padding between rows of C */
        size_t out = isf_ops[op].out_bytes;
        guarded = guarded && all_bytes(c + (i * ldc + s.n) * out, (ldc - s.n) * out, FILL);
    }
    if (!exact || !guarded) {
        fprintf(stderr, "%s %zux%zux%zu: status %d, %s, %s\n", name, s.m, s.n, s.k, (int)st, exact ? "exact" : "WRONG",
                guarded ? "C's surroundings untouched" : "wrote outside C");
    }
    CHECK(exact);
    CHECK(guarded);
    free(a), free(b), free(c_block);
}

int main(void) {
    size_t ran = 0;
    for (int o = 0; o < ISF_OP_COUNT; o++) {
        isf_op op = (isf_op)o;
        if (!isf_ops[op].plain) {
            continue; /* the quantized ops run through plans: test_quantized.c */
        }
        isf_kernel_desc d;
        for (size_t i = 0; isf_kernel_info(op, i, &d) == ISF_OK; i++) {
            if (!d.runnable) {
                printf("%s: %s not runnable here\n", isf_op_name(op), d.name);
                continue;
            }
            CHECK(isf_select_kernel(op, d.name) == ISF_OK);
            CHECK(strcmp(isf_kernel_name(op), d.name) == 0);
            for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++) {
                run_one(op, d.name, shapes[j]);
            }
            printf("%s: %s checked\n", isf_op_name(op), d.name);
            ran++;
        }
        CHECK(isf_select_kernel(op, NULL) == ISF_OK);
    }
    CHECK(ran >= 4); /* at least every plain op's reference */
    return finish();
}
