/* Plans (isaforge.h isf_gemm_*): every runnable full kernel of every op selected by name (row kernels run inside
 * its plans), weights in both layouts, m = 1..17 and larger, checked exactly against a naive loop (operands are small
 * integers, exact in every precision), with and without ISF_ACCUMULATE; the fused epilogue (bias, clamp, both; NaN
 * and ±Inf in the bias; k = 0); tiles run one at a time in a shuffled order and by a small pthread pool (1, 2, 3 and
 * 8 threads) bit-identical to isf_gemm_run; export → import from a copy at another alignment → the same C; and every
 * bad input returning its status with the bytes around C (or the export buffer) untouched; crafted exports of the
 * quantized plans (scales, k, a short section) refused. Exit status: the number of failed checks. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { GUARD = 64, FILL = 0xC3, MAX_ELEM = 4 };

/* C between guard bytes, with row padding: `c` is the matrix, `block` the whole allocation. */
typedef struct {
    unsigned char *block, *c;
    size_t bytes, ldc, out;
} c_buf;

static c_buf c_new(isf_op op, size_t m, size_t n) {
    c_buf b = {NULL, NULL, 0, n + 3, isf_ops[op].out_bytes};
    b.bytes = (m ? m : 1) * b.ldc * b.out;
    b.block = malloc(b.bytes + 2 * GUARD);
    b.c = b.block + GUARD;
    memset(b.block, FILL, b.bytes + 2 * GUARD);
    return b;
}

/* Guards and row padding untouched. */
static int c_guarded(const c_buf *b, size_t m, size_t n) {
    int ok = all_bytes(b->block, GUARD, FILL) && all_bytes(b->c + b->bytes, GUARD, FILL);
    for (size_t i = 0; i < m; i++) {
        ok = ok && all_bytes(b->c + (i * b->ldc + n) * b->out, (b->ldc - n) * b->out, FILL);
    }
    return ok;
}

/* A[m][k] (salt 1), W as B[k][n] (salt 2) in either layout, C's starting values (salt 3) for accumulation. */
static double a_at(size_t i, size_t p) { return small_value(i, p, 1); }
static double w_at(size_t p, size_t j) { return small_value(p, j, 2); }

static void fill_weights(isf_op op, void *w, size_t n, size_t k, size_t ldw, isf_weights_layout layout) {
    for (size_t p = 0; p < k; p++) {
        for (size_t j = 0; j < n; j++) {
            size_t at = layout == ISF_WEIGHTS_KN ? p * ldw + j : j * ldw + p;
            isf_put_input(op, w, at, (int)w_at(p, j));
        }
    }
}

/* C's starting value for accumulation (salt 3). */
static double c_at(size_t i, size_t j) { return small_value(i, j, 3); }

static void fill_c(isf_op op, c_buf *b, size_t m, size_t n) {
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            isf_put_output(op, b->c, i * b->ldc + j, c_at(i, j));
        }
    }
}

/* The epilogue of a problem: bias (n values, C's type) and clamp bounds; bias_at gives the oracle's values. */
typedef struct {
    int bias, clamp;
    float lo, hi;
    const double *special; /* NULL, or n bias values overriding the small integers (NaN, ±Inf) */
} epilogue;

static const epilogue no_epilogue = {0, 0, 0, 0, NULL};

static double bias_at(const epilogue *e, size_t j) {
    return !e->bias ? 0 : e->special != NULL ? e->special[j] : 3 * small_value(j, 0, 4);
}

/* What C must hold: (C + ) A·W + bias, clamped as FMAX then FMIN (a NaN stays NaN, ±Inf become the bounds). */
static double expected(const epilogue *e, double sum, size_t j) {
    double v = sum + bias_at(e, j);
    if (e->clamp && v == v) {
        v = v < e->lo ? e->lo : v > e->hi ? e->hi : v;
    }
    return v;
}

/* Rows 0..m-1 of A·W (n columns, depth k), the oracle's sums: every kernel of every op checks the same few shapes,
 * so each is summed once (under QEMU the scalar sums of 66×132×1030 cost more than all the kernels' runs of it).
 * Row i depends on i alone, so a shape keeps the most rows asked for so far. */
static const double *products(size_t m, size_t n, size_t k) {
    enum { SHAPES = 8 };
    static struct {
        size_t rows, n, k;
        double *sum;
    } cache[SHAPES];
    static size_t next;
    size_t s = 0;
    while (s < SHAPES && !(cache[s].sum != NULL && cache[s].n == n && cache[s].k == k)) {
        s++;
    }
    if (s < SHAPES && cache[s].rows >= m) {
        return cache[s].sum;
    }
    s = s < SHAPES ? s : next++ % SHAPES;
    free(cache[s].sum);
    double *sum = calloc(m * n, sizeof(double));
    if (sum == NULL) {
        fprintf(stderr, "out of memory for the oracle's %zux%zu sums\n", m, n);
        exit(1);
    }
    for (size_t i = 0; i < m; i++) {
        for (size_t p = 0; p < k; p++) {
            double a = a_at(i, p);
            for (size_t j = 0; j < n; j++) {
                sum[i * n + j] += a * w_at(p, j);
            }
        }
    }
    cache[s].rows = m, cache[s].n = n, cache[s].k = k, cache[s].sum = sum;
    return sum;
}

static int c_exact_with(isf_op op, const c_buf *b, size_t m, size_t n, size_t k, int accumulated, const epilogue *e) {
    const double *ab = products(m, n, k);
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            double sum = (accumulated ? c_at(i, j) : 0) + ab[i * n + j];
            double want = expected(e, sum, j), got = isf_get_output(op, b->c, i * b->ldc + j);
            if (want == want ? got != want : got == got) {
                return 0;
            }
        }
    }
    return 1;
}

typedef struct {
    isf_op op;
    size_t n, k;
    isf_weights_layout layout;
    unsigned char *w, *a;
    size_t ldw, lda, m_max;
    epilogue e;
} problem;

static problem problem_with(isf_op op, size_t m_max, size_t n, size_t k, isf_weights_layout layout, epilogue e) {
    problem p = {op, n, k, layout, NULL, NULL, (layout == ISF_WEIGHTS_KN ? n : k) + 5, k + 2, m_max, e};
    p.w = calloc((layout == ISF_WEIGHTS_KN ? k : n) * p.ldw, MAX_ELEM);
    p.a = calloc(m_max * p.lda, MAX_ELEM);
    fill_weights(op, p.w, n, k, p.ldw, layout);
    fill_matrix(op, p.a, m_max, k, p.lda, 1);
    return p;
}

static problem problem_new(isf_op op, size_t m_max, size_t n, size_t k, isf_weights_layout layout) {
    return problem_with(op, m_max, n, k, layout, no_epilogue);
}

static isf_gemm *plan_of(const problem *p) {
    isf_gemm_desc d = {.op = p->op, .n = p->n, .k = p->k, .weights = p->w, .ldw = p->ldw, .layout = p->layout};
    unsigned char *bias = p->e.bias ? malloc(p->n * MAX_ELEM) : NULL;
    for (size_t j = 0; bias != NULL && j < p->n; j++) {
        isf_put_output(p->op, bias, j, bias_at(&p->e, j));
    }
    d.bias = bias;
    d.flags = p->e.clamp ? ISF_GEMM_CLAMP : 0;
    d.out_min = p->e.lo, d.out_max = p->e.hi;
    isf_gemm *g = NULL;
    CHECK(isf_gemm_create(&d, &g) == ISF_OK && g != NULL);
    if (bias != NULL) { /* read only during create */
        memset(bias, 0x7F, p->n * MAX_ELEM);
        free(bias);
    }
    return g;
}

/* One run of m rows, exact and guarded, with and without ISF_ACCUMULATE. */
static void check_run(const char *name, const problem *p, isf_gemm *g, size_t m, int accumulate) {
    c_buf b = c_new(p->op, m, p->n);
    if (accumulate) {
        fill_c(p->op, &b, m, p->n);
    }
    isf_status st = isf_gemm_run(g, m, p->a, p->lda, b.c, b.ldc, accumulate ? ISF_ACCUMULATE : 0);
    int exact = st == ISF_OK && c_exact_with(p->op, &b, m, p->n, p->k, accumulate, &p->e);
    int guarded = c_guarded(&b, m, p->n);
    if (!exact || !guarded) {
        fprintf(stderr, "%s %s m=%zu n=%zu k=%zu%s%s%s%s: status %d, %s, %s\n", name,
                p->layout == ISF_WEIGHTS_KN ? "KN" : "NK", m, p->n, p->k, accumulate ? " accumulate" : "",
                p->e.bias ? " bias" : "", p->e.clamp ? " clamp" : "", p->e.special ? " (NaN/Inf)" : "", (int)st,
                exact ? "exact" : "WRONG", guarded ? "guarded" : "wrote outside C");
    }
    CHECK(exact);
    CHECK(guarded);
    free(b.block);
}

/* ---- tiles and a thread pool ---------------------------------------------------------------------------------- */

static uint32_t rng = 12345;
static size_t next_random(size_t below) {
    rng = rng * 1103515245u + 12345u;
    return (size_t)(rng >> 8) % below;
}

static void shuffle(size_t *order, size_t count) {
    for (size_t i = 0; i < count; i++) {
        order[i] = i;
    }
    for (size_t i = count; i > 1; i--) {
        size_t j = next_random(i), t = order[i - 1];
        order[i - 1] = order[j], order[j] = t;
    }
}

/* The pool: `threads` workers taking tiles one at a time in a shuffled order. */
typedef struct {
    unsigned threads;
    isf_task_fn fn;
    void *task;
    size_t *order, range;
    atomic_size_t next;
} pool;

static void *worker(void *arg) {
    pool *p = arg;
    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->range;) {
        p->fn(p->task, p->order[i], 1);
    }
    return NULL;
}

static void parallel_for(void *pool_arg, isf_task_fn fn, void *task, size_t range) {
    pool *p = pool_arg;
    pthread_t t[8];
    p->fn = fn, p->task = task, p->range = range, p->order = malloc(range * sizeof(size_t));
    shuffle(p->order, range);
    atomic_store(&p->next, 0);
    for (unsigned i = 0; i < p->threads; i++) {
        CHECK(pthread_create(&t[i], NULL, worker, p) == 0);
    }
    for (unsigned i = 0; i < p->threads; i++) {
        pthread_join(t[i], NULL);
    }
    free(p->order);
}

/* C of isf_gemm_run against tiles in a shuffled order, uneven partitions, the pool, and an imported copy. */
static void check_tiles(const problem *p, isf_gemm *g, size_t m, int accumulate) {
    uint32_t flags = accumulate ? ISF_ACCUMULATE : 0;
    c_buf ref = c_new(p->op, m, p->n), got = c_new(p->op, m, p->n);
    if (accumulate) {
        fill_c(p->op, &ref, m, p->n);
    }
    CHECK(isf_gemm_run(g, m, p->a, p->lda, ref.c, ref.ldc, flags) == ISF_OK);
    CHECK(c_exact_with(p->op, &ref, m, p->n, p->k, accumulate, &p->e));
    size_t count = isf_gemm_tile_count(g, m), *order = malloc((count ? count : 1) * sizeof(size_t));
    CHECK(count >= 1);
    shuffle(order, count);
    memcpy(got.block, ref.block, ref.bytes + 2 * GUARD);
    if (accumulate) {
        fill_c(p->op, &got, m, p->n);
    } else {
        memset(got.c, FILL, got.bytes);
    }
    for (size_t i = 0; i < count; i++) {
        CHECK(isf_gemm_run_tiles(g, m, p->a, p->lda, got.c, got.ldc, flags, order[i], 1) == ISF_OK);
    }
    CHECK(memcmp(got.block, ref.block, ref.bytes + 2 * GUARD) == 0);
    memset(got.c, FILL, got.bytes);
    if (accumulate) {
        fill_c(p->op, &got, m, p->n);
    }
    for (size_t first = 0, step = 1; first < count; first += step, step = step % 3 + 1) { /* 1, 2, 3, 1, … tiles */
        step = step < count - first ? step : count - first;
        CHECK(isf_gemm_run_tiles(g, m, p->a, p->lda, got.c, got.ldc, flags, first, step) == ISF_OK);
    }
    CHECK(memcmp(got.block, ref.block, ref.bytes + 2 * GUARD) == 0);
    static const unsigned threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        pool pl = {.threads = threads[t]};
        memset(got.c, FILL, got.bytes);
        if (accumulate) {
            fill_c(p->op, &got, m, p->n);
        }
        CHECK(isf_gemm_run_parallel(g, m, p->a, p->lda, got.c, got.ldc, flags, parallel_for, &pl) == ISF_OK);
        CHECK(memcmp(got.block, ref.block, ref.bytes + 2 * GUARD) == 0);
    }
    free(order), free(ref.block), free(got.block);
}

/* Export into a buffer between guards (too small first), import from a copy one byte off alignment: same C. */
static void check_export(const problem *p, isf_gemm *g, size_t m) {
    size_t size = isf_gemm_export_size(g);
    unsigned char *buf = malloc(size + 2 * GUARD), *copy = malloc(size + 1);
    memset(buf, FILL, size + 2 * GUARD);
    CHECK(isf_gemm_export(g, buf + GUARD, size - 1) == ISF_ERR_INVALID_ARG);
    CHECK(all_bytes(buf, size + 2 * GUARD, FILL));
    CHECK(isf_gemm_export(g, buf + GUARD, size) == ISF_OK);
    CHECK(all_bytes(buf, GUARD, FILL) && all_bytes(buf + GUARD + size, GUARD, FILL));
    memcpy(copy + 1, buf + GUARD, size);
    isf_gemm *h = NULL;
    CHECK(isf_gemm_import(copy + 1, size - 1, &h) == ISF_ERR_INVALID_ARG && h == NULL);
    CHECK(isf_gemm_import(copy + 1, size, &h) == ISF_OK && h != NULL);
    c_buf ref = c_new(p->op, m, p->n), got = c_new(p->op, m, p->n);
    CHECK(isf_gemm_run(g, m, p->a, p->lda, ref.c, ref.ldc, 0) == ISF_OK);
    CHECK(isf_gemm_run(h, m, p->a, p->lda, got.c, got.ldc, 0) == ISF_OK);
    CHECK(memcmp(got.block, ref.block, ref.bytes + 2 * GUARD) == 0);
    CHECK(isf_gemm_tile_count(h, m) == isf_gemm_tile_count(g, m));
    isf_gemm_destroy(h);
    /* Damage anywhere (plan header, packed header, panels) is refused. */
    size_t spots[] = {0, 4, 12, 16, 24, 40, 64, 64 + 12, 64 + 40, size - 1};
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        copy[1 + spots[i]] ^= 0x10;
        h = NULL;
        CHECK(isf_gemm_import(copy + 1, size, &h) == ISF_ERR_INVALID_ARG && h == NULL);
        copy[1 + spots[i]] ^= 0x10;
    }
    free(ref.block), free(got.block), free(buf), free(copy);
}

/* Bias, clamp and both, alone and with ISF_ACCUMULATE, on rows that take every path (row kernel, full tiles,
 * padded edge rows); then NaN and ±Inf in the bias, through the clamp and without it. */
static void check_epilogues(isf_op op, const char *name) {
    int is_int = isf_ops[op].out_kind == ISF_ELEM_INT;
    static const size_t rows[] = {1, 2, 3, 5, 7, 9, 17, 70};
    const epilogue kinds[] = {{1, 0, 0, 0, NULL}, {0, 1, -4, 5, NULL}, {1, 1, -3, 6, NULL}};
    for (size_t e = 0; e < sizeof kinds / sizeof kinds[0]; e++) {
        if (is_int && kinds[e].clamp) {
            continue; /* int32 output: no clamp (check_bad_create) */
        }
        problem p = problem_with(op, 70, 37, 29, e % 2 ? ISF_WEIGHTS_NK : ISF_WEIGHTS_KN, kinds[e]);
        isf_gemm *g = plan_of(&p);
        for (size_t r = 0; g != NULL && r < sizeof rows / sizeof rows[0]; r++) {
            check_run(name, &p, g, rows[r], 0);
            check_run(name, &p, g, rows[r], 1);
        }
        isf_gemm_destroy(g);
        free(p.w), free(p.a);
    }
    problem z = problem_with(op, 3, 37, 0, ISF_WEIGHTS_KN, (epilogue){1, !is_int, -1, 2, NULL}); /* bias alone */
    isf_gemm *gz = plan_of(&z);
    if (gz != NULL) {
        check_run(name, &z, gz, 3, 0);
        check_run(name, &z, gz, 3, 1);
    }
    isf_gemm_destroy(gz);
    free(z.w), free(z.a);
    if (is_int) {
        return;
    }
    double special[37];
    for (size_t j = 0; j < 37; j++) {
        special[j] = j == 3 ? NAN : j == 20 ? INFINITY : j == 36 ? -INFINITY : j == 13 ? -7 : 3;
    }
    for (int clamp = 0; clamp < 2; clamp++) {
        problem p = problem_with(op, 9, 37, 29, ISF_WEIGHTS_KN, (epilogue){1, clamp, -4, 5, special});
        isf_gemm *g = plan_of(&p);
        for (size_t m = 1; g != NULL && m <= 9; m += 8) {
            check_run(name, &p, g, m, 0);
            check_run(name, &p, g, m, 1);
        }
        isf_gemm_destroy(g);
        free(p.w), free(p.a);
    }
}

static void check_kernel(isf_op op, const char *name) {
    int is_int = isf_ops[op].out_kind == ISF_ELEM_INT;
    check_epilogues(op, name);
    for (int l = 0; l < 2; l++) {
        isf_weights_layout layout = l ? ISF_WEIGHTS_NK : ISF_WEIGHTS_KN;
        problem p = problem_new(op, 70, 37, 29, layout);
        isf_gemm *g = plan_of(&p);
        for (size_t m = 1; g != NULL && m <= 17; m++) {
            check_run(name, &p, g, m, 0);
        }
        if (g != NULL) {
            check_run(name, &p, g, 70, 0);
            check_run(name, &p, g, 5, 1);
            check_run(name, &p, g, 70, 1);
            check_export(&p, g, 9);
        }
        isf_gemm_destroy(g);
        free(p.w), free(p.a);
    }
    /* Across tiles both ways and across Kc (k ≤ 511 keeps every float sum exact; int8 is exact for any k), with
     * bias (and clamp for float C): the epilogue only on the last k block, each tile's own bias columns. */
    epilogue e = {1, !is_int, -40, 50, NULL};
    problem p = problem_with(op, 66, 132, is_int ? 1030 : 210, ISF_WEIGHTS_NK, e);
    isf_gemm *g = plan_of(&p);
    if (g != NULL) {
        check_tiles(&p, g, 66, 0);
        check_tiles(&p, g, 3, 1);
        check_export(&p, g, 5);
    }
    isf_gemm_destroy(g);
    free(p.w), free(p.a);
}

/* ---- bad input ------------------------------------------------------------------------------------------------ */

static void dummy_for(void *pool_arg, isf_task_fn fn, void *task, size_t range) { (void)pool_arg, fn(task, 0, range); }

static void check_bad_create(isf_op op) {
    static const unsigned char w[64];
    isf_gemm *sentinel = (isf_gemm *)(uintptr_t)0x40, *g = sentinel;
    isf_gemm_desc ok = {.op = op, .n = 4, .k = 4, .weights = w, .ldw = 4};
    isf_gemm_desc d;
#define BAD(field_changes, status)                                   \
    do {                                                             \
        d = ok;                                                      \
        field_changes;                                               \
        g = sentinel;                                                \
        CHECK(isf_gemm_create(&d, &g) == (status) && g == sentinel); \
    } while (0)
    CHECK(isf_gemm_create(NULL, &g) == ISF_ERR_INVALID_ARG && g == sentinel);
    CHECK(isf_gemm_create(&ok, NULL) == ISF_ERR_INVALID_ARG);
    BAD(d.weights = NULL, ISF_ERR_INVALID_ARG);
    BAD((d.n = 5, d.ldw = 4), ISF_ERR_INVALID_ARG);                            /* KN: a row is n */
    BAD((d.layout = ISF_WEIGHTS_NK, d.k = 5, d.ldw = 4), ISF_ERR_INVALID_ARG); /* NK: a row is k */
    BAD(d.layout = (isf_weights_layout)7, ISF_ERR_INVALID_ARG);
    BAD(d.op = (isf_op)99, ISF_ERR_INVALID_ARG);
    BAD((d.n = SIZE_MAX / 2, d.ldw = SIZE_MAX / 2), ISF_ERR_INVALID_ARG); /* n·k overflows */
    BAD((d.layout = ISF_WEIGHTS_NK, d.k = SIZE_MAX / 2, d.ldw = SIZE_MAX / 2), ISF_ERR_INVALID_ARG);
    BAD(d.flags = 1u << 5, ISF_ERR_INVALID_ARG);
    int int_out = isf_ops[op].out_kind == ISF_ELEM_INT;
    BAD((d.flags = ISF_GEMM_CLAMP, d.out_min = 1, d.out_max = 0), ISF_ERR_INVALID_ARG);
    BAD((d.flags = ISF_GEMM_CLAMP, d.out_min = NAN, d.out_max = 0), ISF_ERR_INVALID_ARG);
    BAD((d.flags = ISF_GEMM_CLAMP, d.out_min = 0, d.out_max = NAN), ISF_ERR_INVALID_ARG);
    if (int_out) { /* clamping int32 C is not an operation of this op */
        BAD((d.flags = ISF_GEMM_CLAMP, d.out_min = 0, d.out_max = 6), ISF_ERR_INVALID_ARG);
        BAD((d.flags = ISF_GEMM_CLAMP, d.out_min = -INFINITY, d.out_max = INFINITY), ISF_ERR_INVALID_ARG);
    }
    BAD((d.bias = w, d.flags = ISF_GEMM_CLAMP, d.out_min = 2, d.out_max = 1), ISF_ERR_INVALID_ARG);
    BAD((d.bias = w, d.weights = NULL), ISF_ERR_INVALID_ARG);
#undef BAD
    isf_gemm_desc zero = {0};
    g = NULL;
    CHECK(isf_gemm_create(&zero, &g) == ISF_OK && g != NULL && isf_gemm_tile_count(g, 5) == 0);
    isf_gemm_destroy(g);
    isf_gemm_destroy(NULL);
}

static void check_bad_run(isf_op op) {
    problem p = problem_new(op, 8, 9, 7, ISF_WEIGHTS_KN);
    isf_gemm *g = plan_of(&p);
    if (g == NULL) {
        free(p.w), free(p.a);
        return;
    }
    size_t m = 8, count = isf_gemm_tile_count(g, m);
    c_buf b = c_new(op, m, p.n);
    void *a = p.a;
    void *c = b.c;
    size_t lda = p.lda, ldc = b.ldc;
    pool pl = {.threads = 2};
    CHECK(count >= 1);
    CHECK(isf_gemm_run(NULL, m, a, lda, c, ldc, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run(g, m, a, lda, c, ldc, 1u << 1) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run(g, m, NULL, lda, c, ldc, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run(g, m, a, lda, NULL, ldc, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run(g, m, a, p.k - 1, c, ldc, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run(g, m, a, lda, c, p.n - 1, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run(g, SIZE_MAX / 2, a, lda, c, ldc, 0) == ISF_ERR_INVALID_ARG); /* m overflows */
    CHECK(isf_gemm_run_tiles(g, m, a, lda, c, ldc, 0, count, 1) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run_tiles(g, m, a, lda, c, ldc, 0, 0, count + 1) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run_tiles(g, m, a, lda, c, ldc, 0, SIZE_MAX, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run_tiles(g, m, a, lda, c, ldc, 0, 1, SIZE_MAX) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run_parallel(g, m, a, lda, c, ldc, 0, NULL, &pl) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run_parallel(g, m, a, lda, c, ldc, 1u << 3, dummy_for, NULL) == ISF_ERR_INVALID_ARG);
    /* m = 0 is no exception to the leading dimensions (NULL A and C are: they hold no element). */
    CHECK(isf_gemm_run(g, 0, a, p.k - 1, c, ldc, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run(g, 0, a, lda, c, p.n - 1, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run_tiles(g, 0, NULL, p.k - 1, NULL, ldc, 0, 0, 0) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_run_parallel(g, 0, NULL, lda, NULL, p.n - 1, 0, dummy_for, NULL) == ISF_ERR_INVALID_ARG);
    CHECK(all_bytes(b.block, b.bytes + 2 * GUARD, FILL)); /* nothing written anywhere */
    CHECK(isf_gemm_run(g, 0, NULL, p.k, NULL, p.n, 0) == ISF_OK && isf_gemm_tile_count(g, 0) == 0);
    CHECK(isf_gemm_run_tiles(g, m, a, lda, c, ldc, 0, count, 0) == ISF_OK); /* empty range at the end */
    CHECK(all_bytes(b.block, b.bytes + 2 * GUARD, FILL));
    /* Export and import of nothing. */
    unsigned char small[8];
    isf_gemm *h = NULL;
    memset(small, FILL, sizeof small);
    CHECK(isf_gemm_export(NULL, small, sizeof small) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_export(g, NULL, 1u << 20) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_export(g, small, sizeof small) == ISF_ERR_INVALID_ARG && all_bytes(small, sizeof small, FILL));
    CHECK(isf_gemm_export_size(NULL) == 0);
    CHECK(isf_gemm_import(NULL, 100, &h) == ISF_ERR_INVALID_ARG && h == NULL);
    CHECK(isf_gemm_import(small, sizeof small, &h) == ISF_ERR_INVALID_ARG && h == NULL);
    CHECK(isf_gemm_import(small, sizeof small, NULL) == ISF_ERR_INVALID_ARG);
    /* A kernel the cap excludes: runs refuse with C untouched, import refuses the layout. */
    isf_kernel_desc kd;
    int vector_kernel = isf_kernel_info(op, 0, &kd) == ISF_OK && kd.runnable && kd.required != 0;
    if (vector_kernel && strcmp(isf_kernel_name(op), kd.name) == 0) {
        size_t size = isf_gemm_export_size(g);
        unsigned char *bytes = malloc(size);
        CHECK(isf_gemm_export(g, bytes, size) == ISF_OK);
        CHECK(isf_set_feature_mask(0) == ISF_OK);
        CHECK(isf_gemm_run(g, m, a, lda, c, ldc, 0) == ISF_ERR_UNSUPPORTED);
        CHECK(all_bytes(b.block, b.bytes + 2 * GUARD, FILL));
        CHECK(isf_gemm_import(bytes, size, &h) == ISF_ERR_UNSUPPORTED && h == NULL);
        CHECK(isf_set_feature_mask(UINT32_MAX) == ISF_OK);
        CHECK(isf_gemm_import(bytes, size, &h) == ISF_OK && h != NULL);
        isf_gemm_destroy(h);
        free(bytes);
    }
    isf_gemm_destroy(g);
    free(b.block), free(p.w), free(p.a);
}

/* ---- crafted exports of quantized plans ----------------------------------------------------------------------- */

/* A quantized plan of n × k zero weights (W[k][n]), per-column scales (per block of w_block k when given). */
static isf_gemm *quantized_plan(isf_op op, size_t n, size_t k, size_t w_block) {
    size_t blocks = w_block ? (k + w_block - 1) / w_block : 1, count = n ? n * blocks : 1;
    float *scales = malloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++) {
        scales[i] = 0.5f + (float)i;
    }
    isf_quant_params q = {
        .a_scale = 0.5f, .w_scales = scales, .w_scale_count = count, .c_scale = 0.25f, .w_block = w_block};
    unsigned char *w = calloc(n * k + 1, 1);
    isf_gemm_desc d = {.op = op, .n = n, .k = k, .weights = w, .ldw = n, .quant = &q};
    isf_gemm *g = NULL;
    CHECK(isf_gemm_create(&d, &g) == ISF_OK);
    free(scales), free(w);
    return g;
}

/* The export of a plan as quantized_plan makes it, checked to import as it is; NULL on failure. */
static unsigned char *quantized_export(isf_op op, size_t n, size_t k, size_t w_block, size_t *size) {
    isf_gemm *g = quantized_plan(op, n, k, w_block);
    unsigned char *p = g != NULL ? export_of(g, size) : NULL;
    isf_gemm_destroy(g);
    CHECK(p != NULL && import_guarded(p, *size) == ISF_OK);
    return p;
}

/* A copy of p[0, size) with the u32 at `at` set to `bits`, resealed: refused. */
static void crafted_refused(const unsigned char *p, size_t size, size_t at, uint32_t bits, const char *what) {
    unsigned char *copy = malloc(size);
    memcpy(copy, p, size);
    le_put(copy + at, bits, 4);
    reseal_plan(copy);
    isf_status st = import_guarded(copy, size);
    if (st != ISF_ERR_INVALID_ARG) {
        fprintf(stderr, "%s (bits %08x at %zu): import gave %d\n", what, (unsigned)bits, at, (int)st);
        failures++;
    }
    free(copy);
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Scales the file gives that create would never have made. Per column j of the quantized section's arrays: the
 * folded bias, the weight sums, the scales, the fp32 bias (then the blockwise sums and scales, block-major). */
static void imported_scales_are_checked(void) {
    static const float never[] = {NAN, 0.0f, -0.0f, -1.0f, INFINITY}; /* for a scale the caller gave */
    static const float never_derived[] = {NAN, -0.0f, -1.0f};         /* a_scale · w / c_scale ≥ 0 */
    static const isf_op ops[] = {ISF_OP_GEMM_QD8_F32, ISF_OP_GEMM_QS8, ISF_OP_GEMM_QS8_F32};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        size_t size;
        unsigned char *p = quantized_export(ops[o], 5, 8, 0, &size);
        if (p == NULL) {
            continue;
        }
        size_t padded = (size_t)le_get(p + quant_section_at(p) + QUANT_PADDED, 8);
        size_t scale_at = quant_section_at(p) + QUANT_ARRAYS + (2 * padded + 3) * 4; /* column 3's */
        int given = ops[o] == ISF_OP_GEMM_QD8_F32;
        for (size_t i = 0; i < (given ? 5 : 3); i++) {
            crafted_refused(p, size, scale_at, f32_bits(given ? never[i] : never_derived[i]), isf_op_name(ops[o]));
        }
        free(p);
    }
    size_t size;
    unsigned char *p = quantized_export(ISF_OP_GEMM_QD8_F32_QC4W, 5, 64, 32, &size); /* two blocks of k */
    if (p != NULL) {
        size_t at = quant_section_at(p), padded = (size_t)le_get(p + at + QUANT_PADDED, 8);
        size_t block_scale_at = at + QUANT_ARRAYS + (4 * padded + 2 * padded + padded + 3) * 4; /* block 1, col 3 */
        for (size_t i = 0; i < 5; i++) {
            crafted_refused(p, size, block_scale_at, f32_bits(never[i]), "gemm_qd8_f32_qc4w blockwise");
        }
    }
    free(p);
}

/* k above ISF_QUANT_MAX_K (n = 0: no panels, so the packed extent stays the same), and a quantized section cut
 * short of its 32 bytes of scalars at the very end of the buffer. */
static void imported_sections_are_checked(void) {
    size_t size;
    unsigned char *p = quantized_export(ISF_OP_GEMM_QS8, 0, ISF_QUANT_MAX_K, 0, &size);
    if (p != NULL) {
        crafted_refused(p, size, PLAN_HEADER + PACKED_K, ISF_QUANT_MAX_K + 1, "gemm_qs8, k above ISF_QUANT_MAX_K");
    }
    free(p);
    p = quantized_export(ISF_OP_GEMM_QS8, 5, 8, 0, &size);
    for (uint32_t cut = 1; p != NULL && cut < QUANT_ARRAYS; cut++) {
        crafted_refused(p, quant_section_at(p) + cut, PLAN_QUANT_BYTES, cut, "gemm_qs8, section cut short");
    }
    free(p);
}

/* test_plan [PART]: with PART, only the kernels whose name holds it (the SME kernels at each streaming length). */
/* Whether the op's i-th kernel `d` is a tail of a more preferred runnable kernel of its variant (more rows, the same
 * panels): the driver runs it on the rows that kernel's tiles would pad, so every plan of that kernel runs it. */
static int is_tail(isf_op op, size_t i, const isf_kernel_desc *d) {
    isf_kernel_desc e;
    for (size_t j = 0; j < i && isf_kernel_info(op, j, &e) == ISF_OK; j++) {
        if (e.runnable && e.mr > d->mr && e.nr == d->nr && e.kr == d->kr && strcmp(e.variant, d->variant) == 0) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *part = argc > 1 ? argv[1] : NULL;
    size_t ran = 0;
    for (int o = 0; o < ISF_OP_COUNT; o++) {
        isf_op op = (isf_op)o;
        if (!isf_ops[op].plain) {
            continue; /* the quantized ops: test_quantized.c */
        }
        check_bad_create(op);
        check_bad_run(op);
        isf_kernel_desc d;
        for (size_t i = 0; isf_kernel_info(op, i, &d) == ISF_OK; i++) {
            /* Tail kernels (a row kernel, a few-row one) run inside every plan of their full kernel (m < MR, the
             * last m % MR rows: check_kernel's m = 1…17 and 70), so they are not made the plan's kernel themselves. */
            if (!d.runnable || is_tail(op, i, &d) || (part != NULL && strstr(d.name, part) == NULL)) {
                continue;
            }
            CHECK(isf_select_kernel(op, d.name) == ISF_OK);
            check_kernel(op, d.name);
            printf("%s: %s checked\n", isf_op_name(op), d.name);
            ran++;
        }
        CHECK(isf_select_kernel(op, NULL) == ISF_OK);
    }
    CHECK(part != NULL ? ran >= 1 : ran >= 4); /* at least every plain op's reference */
    imported_scales_are_checked();
    imported_sections_are_checked();
    return finish();
}
