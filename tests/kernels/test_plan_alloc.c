/* Plan runs allocate nothing: malloc, calloc, realloc, posix_memalign and aligned_alloc are interposed (this
 * program's definitions take the place of the C library's for libisaforge too) and counted while isf_gemm_run,
 * isf_gemm_run_tiles and isf_gemm_run_parallel run, after a warm-up run, for every runnable kernel of every op by
 * name, with and without ISF_ACCUMULATE, for m = 1, 17 and 66. Exit status: the number of failed checks. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

/* glibc's allocator under its own names. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_int counting;
static atomic_size_t calls;

static void count_call(void) {
    if (atomic_load(&counting)) {
        atomic_fetch_add(&calls, 1);
    }
}

void *malloc(size_t size) {
    count_call();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_call();
    return __libc_calloc(count, size);
}

void *realloc(void *p, size_t size) {
    count_call();
    return __libc_realloc(p, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_call();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    count_call();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) {
        return ENOMEM;
    }
    *out = p;
    return 0;
}

static void serial_for(void *pool, isf_task_fn fn, void *task, size_t range) {
    (void)pool;
    for (size_t i = range; i > 0; i--) { /* last tile first */
        fn(task, i - 1, 1);
    }
}

/* Allocations counted during the runs of one plan. */
static size_t runs_allocate(isf_gemm *g, isf_op op, size_t m, size_t n, size_t k, uint32_t flags) {
    size_t lda = k, ldc = n;
    unsigned char *a = calloc(m * lda, 4), *c = calloc(m * ldc, 4);
    fill_matrix(op, a, m, k, lda, 1);
    CHECK(isf_gemm_run(g, m, a, lda, c, ldc, flags) == ISF_OK); /* warm-up */
    size_t count = isf_gemm_tile_count(g, m);
    atomic_store(&calls, 0);
    atomic_store(&counting, 1);
    CHECK(isf_gemm_run(g, m, a, lda, c, ldc, flags) == ISF_OK);
    for (size_t t = 0; t < count; t++) {
        CHECK(isf_gemm_run_tiles(g, m, a, lda, c, ldc, flags, count - 1 - t, 1) == ISF_OK);
    }
    CHECK(isf_gemm_run_parallel(g, m, a, lda, c, ldc, flags, serial_for, NULL) == ISF_OK);
    atomic_store(&counting, 0);
    free(a), free(c);
    return atomic_load(&calls);
}

int main(void) {
    /* The interposition works: a counted malloc is seen. */
    atomic_store(&counting, 1);
    void *probe = malloc(16);
    atomic_store(&counting, 0);
    CHECK(atomic_load(&calls) == 1);
    free(probe);
    static const size_t ms[] = {1, 17, 66};
    size_t n = 132, k = 24;
    unsigned char *w = calloc(n * k, 4), *bias = calloc(n, 4); /* zero bias: the same bits in every type */
    for (int o = 0; o < ISF_OP_COUNT; o++) {
        isf_op op = (isf_op)o;
        if (!isf_ops[op].plain) {
            continue; /* the quantized ops: test_quantized.c */
        }
        fill_matrix(op, w, n, k, k, 2);
        isf_kernel_desc d;
        for (size_t i = 0; isf_kernel_info(op, i, &d) == ISF_OK; i++) {
            if (!d.runnable) {
                continue;
            }
            CHECK(isf_select_kernel(op, d.name) == ISF_OK);
            /* With the whole epilogue the op has: bias, and clamp for float C. */
            isf_gemm_desc desc = {
                .op = op, .n = n, .k = k, .weights = w, .ldw = k, .layout = ISF_WEIGHTS_NK, .bias = bias};
            desc.flags = isf_ops[op].out_kind == ISF_ELEM_INT ? 0 : ISF_GEMM_CLAMP, desc.out_min = -3, desc.out_max = 3;
            isf_gemm *g = NULL;
            CHECK(isf_gemm_create(&desc, &g) == ISF_OK);
            for (size_t j = 0; g != NULL && j < sizeof ms / sizeof ms[0]; j++) {
                for (uint32_t flags = 0; flags <= ISF_ACCUMULATE; flags++) {
                    size_t allocated = runs_allocate(g, op, ms[j], n, k, flags);
                    if (allocated != 0) {
                        fprintf(stderr, "%s m=%zu flags %u: %zu allocations\n", d.name, ms[j], flags, allocated);
                    }
                    CHECK(allocated == 0);
                }
            }
            isf_gemm_destroy(g);
            printf("%s: %s runs allocate nothing\n", isf_op_name(op), d.name);
        }
        CHECK(isf_select_kernel(op, NULL) == ISF_OK);
    }
    free(w), free(bias);
    return finish();
}
