/* Plans (isaforge.h): weights packed once by the kernel selected at create, in isf_pack_b's storable format, run
 * as fixed tiles of C through the driver's region entry point (gemm.c). Runs allocate nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "isf_internal.h"

enum {
    PANEL_ALIGN = 64,
    TILE_ROWS = 64,  /* rows of a tile, rounded up to MR */
    TILE_COLS = 128, /* columns of a tile, rounded down to NR (at least NR) */
    /* The export: a header of little-endian fields, then the packed-B buffer (its own header, then the panels). */
    PLAN_MAGIC = 0x47465349u, /* "ISFG" */
    PLAN_VERSION = 1,
    PLAN_HEADER_BYTES = 64,
    PH_MAGIC = 0,
    PH_VERSION = 4,
    PH_OP = 8,
    PH_FLAGS = 12,
    PH_TILE_ROWS = 16,
    PH_TILE_COLS = 20,
    PH_PACKED_BYTES = 24,
    PH_CHECKSUM = 32,
    PH_END = 40,
};

struct isf_gemm {
    isf_op op;
    const isf_kernel *kern; /* packed with it (created) or the reader found at import: preferred at run */
    isf_packed_header h;
    unsigned char *packed; /* isf_pack_b's buffer, 64-byte aligned, so the panels are at packed + 64 */
    size_t packed_bytes;   /* header and panels */
    size_t tile_rows, tile_cols;
};

/* ---- descriptor checks ---------------------------------------------------------------------------------------- */

/* 0 when rows × cols elements of `elem` bytes at row stride ld overflow size_t. */
static int span_fits(size_t rows, size_t cols, size_t ld, size_t elem) {
    if (rows == 0 || cols == 0) {
        return 1;
    }
    size_t max_elems = SIZE_MAX / elem;
    return cols <= max_elems && (ld == 0 || rows - 1 <= (max_elems - cols) / ld);
}

static isf_status check_clamp(const isf_gemm_desc *d) {
    if (!(d->flags & ISF_GEMM_CLAMP)) {
        return ISF_OK;
    }
    int int_out = isf_ops[d->op].out_kind == ISF_ELEM_INT;
    int bad = isnan(d->out_min) || isnan(d->out_max) || d->out_min > d->out_max;
    return int_out || bad ? ISF_ERR_INVALID_ARG : ISF_OK;
}

static isf_status check_desc(const isf_gemm_desc *d) {
    if (d == NULL || (unsigned)d->op >= isf_op_count || (d->flags & ~(uint32_t)ISF_GEMM_CLAMP) != 0 ||
        (d->layout != ISF_WEIGHTS_KN && d->layout != ISF_WEIGHTS_NK)) {
        return ISF_ERR_INVALID_ARG;
    }
    int nk = d->layout == ISF_WEIGHTS_NK;
    size_t rows = nk ? d->n : d->k, cols = nk ? d->k : d->n;
    if (d->n && d->k && (d->weights == NULL || d->ldw < cols)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (!span_fits(rows, cols, d->ldw, isf_ops[d->op].in_bytes) || !span_fits(d->k, d->n, d->n, sizeof(float))) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_status st = check_clamp(d);
    if (st == ISF_OK && (d->bias != NULL || (d->flags & ISF_GEMM_CLAMP))) {
        st = ISF_ERR_UNSUPPORTED; /* needs the micro-kernels' fused epilogue: not in this version */
    }
    return st;
}

/* ---- create ---------------------------------------------------------------------------------------------------- */

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

/* W[n][k] → W[k][n] (ldb = n) in a temporary, freed by the caller. NULL: no memory. */
static void *transposed(const isf_gemm_desc *d) {
    size_t e = isf_ops[d->op].in_bytes;
    unsigned char *t = malloc(d->n * d->k * e);
    const unsigned char *w = d->weights;
    for (size_t j = 0; t != NULL && j < d->n; j++) {
        for (size_t p = 0; p < d->k; p++) {
            memcpy(t + (p * d->n + j) * e, w + (j * d->ldw + p) * e, e);
        }
    }
    return t;
}

static void set_tiles(isf_gemm *g) {
    size_t mr = g->kern->mr, nr = isf_kernel_nr(g->kern, (size_t)g->h.vector_bytes);
    g->tile_rows = round_up(TILE_ROWS, mr);
    g->tile_cols = nr < TILE_COLS ? TILE_COLS / nr * nr : nr;
}

/* Packs W with `kern` into a new plan. */
static isf_status build(const isf_kernel *kern, const isf_gemm_desc *d, isf_gemm **plan) {
    size_t bytes = isf_packed_bytes_for(kern, d->n, d->k, isf_kernel_vector_bytes(kern));
    if (bytes == 0 || bytes > SIZE_MAX - PANEL_ALIGN) {
        return ISF_ERR_INVALID_ARG;
    }
    int nk = d->layout == ISF_WEIGHTS_NK && d->n && d->k;
    void *t = nk ? transposed(d) : NULL;
    isf_gemm *g = calloc(1, sizeof *g);
    unsigned char *packed = aligned_alloc(PANEL_ALIGN, round_up(bytes, PANEL_ALIGN));
    isf_status st = g == NULL || packed == NULL || (nk && t == NULL) ? ISF_ERR_NO_MEMORY : ISF_OK;
    if (st == ISF_OK) {
        st = isf_pack_b_with(kern, d->op, d->n, d->k, nk ? t : d->weights, nk ? d->n : d->ldw, packed, bytes);
    }
    free(t);
    if (st == ISF_OK && !isf_packed_header_read(packed, &g->h)) {
        st = ISF_ERR_INVALID_ARG;
    }
    if (st == ISF_OK) {
        *g = (isf_gemm){d->op, kern, g->h, packed, isf_packed_extent(&g->h, kern), 0, 0};
        set_tiles(g);
        st = isf_region_fits(kern, &g->h, g->tile_cols) ? ISF_OK : ISF_ERR_UNSUPPORTED;
    }
    if (st != ISF_OK) {
        free(packed), free(g);
        return st;
    }
    *plan = g;
    return ISF_OK;
}

isf_status isf_gemm_create(const isf_gemm_desc *desc, isf_gemm **plan) {
    isf_status st = plan == NULL ? ISF_ERR_INVALID_ARG : check_desc(desc);
    if (st != ISF_OK) {
        return st;
    }
    const isf_selection *sel = isf_selection_enter();
    const isf_kernel *kern = sel->kernel[desc->op];
    st = kern == NULL ? ISF_ERR_UNSUPPORTED : build(kern, desc, plan);
    isf_selection_leave(sel);
    return st;
}

void isf_gemm_destroy(isf_gemm *plan) {
    if (plan != NULL) {
        free(plan->packed);
        free(plan);
    }
}

/* ---- runs ------------------------------------------------------------------------------------------------------ */

static size_t blocks(size_t x, size_t of) { return x / of + (x % of != 0); }

size_t isf_gemm_tile_count(const isf_gemm *plan, size_t m) {
    size_t count = 0;
    if (plan == NULL ||
        __builtin_mul_overflow(blocks(m, plan->tile_rows), blocks((size_t)plan->h.n, plan->tile_cols), &count)) {
        return 0;
    }
    return count;
}

/* One run's operands, checked. */
typedef struct {
    const isf_gemm *plan;
    const isf_kernel *kern;
    size_t m;
    const unsigned char *a;
    size_t lda;
    unsigned char *c;
    size_t ldc;
    int accumulate;
} run_args;

static isf_status check_run(const isf_gemm *plan, size_t m, const void *a, size_t lda, const void *c, size_t ldc,
                            uint32_t flags) {
    if (plan == NULL || (flags & ~(uint32_t)ISF_ACCUMULATE) != 0) {
        return ISF_ERR_INVALID_ARG;
    }
    size_t n = (size_t)plan->h.n, k = (size_t)plan->h.k;
    const isf_op_info *op = &isf_ops[plan->op];
    int needs_a = m && k, needs_c = m && n;
    if ((needs_a && (a == NULL || lda < k)) || (needs_c && (c == NULL || ldc < n))) {
        return ISF_ERR_INVALID_ARG;
    }
    return span_fits(m, k, lda, op->in_bytes) && span_fits(m, n, ldc, op->out_bytes) ? ISF_OK : ISF_ERR_INVALID_ARG;
}

/* Tile t: row block t / column blocks, column block t % column blocks. */
static void run_tile(const run_args *r, size_t t) {
    const isf_gemm *g = r->plan;
    size_t n = (size_t)g->h.n, across = blocks(n, g->tile_cols);
    size_t row = t / across * g->tile_rows, col = t % across * g->tile_cols;
    size_t rows = r->m - row < g->tile_rows ? r->m - row : g->tile_rows;
    size_t cols = n - col < g->tile_cols ? n - col : g->tile_cols;
    size_t in = isf_ops[g->op].in_bytes, out = isf_ops[g->op].out_bytes;
    unsigned char *c = r->c + (row * r->ldc + col) * out;
    if (g->h.k == 0) { /* no panels: A·W is zero */
        for (size_t i = 0; !r->accumulate && i < rows; i++) {
            memset(c + i * r->ldc * out, 0, cols * out);
        }
        return;
    }
    isf_region reg = {r->a + row * r->lda * in, r->lda, c, r->ldc, rows, col, cols, r->accumulate};
    isf_gemm_region(r->kern, &g->h, g->packed + g->h.panels, &reg);
}

static void run_range(void *task, size_t first, size_t count) {
    for (size_t t = first; t < first + count; t++) {
        run_tile(task, t);
    }
}

/* Checks, pins the selection and finds the kernel; then `fn` runs with it. C untouched on any error. */
static isf_status with_kernel(const isf_gemm *plan, size_t m, const void *a, size_t lda, void *c, size_t ldc,
                              uint32_t flags, void (*fn)(run_args *, void *), void *ctx) {
    isf_status st = check_run(plan, m, a, lda, c, ldc, flags);
    if (st != ISF_OK) {
        return st;
    }
    const isf_selection *sel = isf_selection_enter();
    run_args r = {plan, NULL, m, a, lda, c, ldc, (flags & ISF_ACCUMULATE) != 0};
    r.kern = plan->h.k ? isf_packed_reader(&plan->h, sel, plan->kern) : plan->kern;
    if (r.kern == NULL) {
        st = ISF_ERR_UNSUPPORTED;
    } else {
        fn(&r, ctx);
    }
    isf_selection_leave(sel);
    return st;
}

typedef struct {
    size_t first, count;
} tile_range;

static void run_given(run_args *r, void *ctx) {
    const tile_range *range = ctx;
    run_range(r, range->first, range->count);
}

isf_status isf_gemm_run_tiles(const isf_gemm *plan, size_t m, const void *a, size_t lda, void *c, size_t ldc,
                              uint32_t flags, size_t first_tile, size_t tile_count) {
    size_t total = isf_gemm_tile_count(plan, m);
    if (first_tile > total || tile_count > total - first_tile) {
        return ISF_ERR_INVALID_ARG;
    }
    tile_range range = {first_tile, tile_count};
    return with_kernel(plan, m, a, lda, c, ldc, flags, run_given, &range);
}

isf_status isf_gemm_run(const isf_gemm *plan, size_t m, const void *a, size_t lda, void *c, size_t ldc,
                        uint32_t flags) {
    return isf_gemm_run_tiles(plan, m, a, lda, c, ldc, flags, 0, isf_gemm_tile_count(plan, m));
}

typedef struct {
    isf_parallel_for_fn parallel_for;
    void *pool;
} pool_args;

static void run_pooled(run_args *r, void *ctx) {
    const pool_args *p = ctx;
    size_t total = isf_gemm_tile_count(r->plan, r->m);
    if (total > 0) {
        p->parallel_for(p->pool, run_range, r, total);
    }
}

isf_status isf_gemm_run_parallel(const isf_gemm *plan, size_t m, const void *a, size_t lda, void *c, size_t ldc,
                                 uint32_t flags, isf_parallel_for_fn parallel_for, void *pool) {
    if (parallel_for == NULL) {
        return ISF_ERR_INVALID_ARG;
    }
    pool_args p = {parallel_for, pool};
    return with_kernel(plan, m, a, lda, c, ldc, flags, run_pooled, &p);
}

/* ---- export / import ------------------------------------------------------------------------------------------- */

static uint64_t fnv1a64(uint64_t h, const unsigned char *p, size_t bytes) {
    for (size_t i = 0; i < bytes; i++) {
        h = (h ^ p[i]) * 0x100000001b3u;
    }
    return h;
}

/* FNV-1a over the plan header's fields before the checksum, then the packed buffer. */
static uint64_t checksum(const unsigned char *p) {
    uint64_t h = fnv1a64(0xcbf29ce484222325u, p, PH_CHECKSUM);
    return fnv1a64(h, p + PLAN_HEADER_BYTES, (size_t)isf_get_le(p + PH_PACKED_BYTES, 8));
}

size_t isf_gemm_export_size(const isf_gemm *plan) { return plan != NULL ? PLAN_HEADER_BYTES + plan->packed_bytes : 0; }

isf_status isf_gemm_export(const isf_gemm *plan, void *dst, size_t size) {
    if (plan == NULL || dst == NULL || size < isf_gemm_export_size(plan)) {
        return ISF_ERR_INVALID_ARG; /* nothing written */
    }
    unsigned char *p = dst;
    memset(p, 0, PLAN_HEADER_BYTES);
    isf_put_le(p + PH_MAGIC, PLAN_MAGIC, 4), isf_put_le(p + PH_VERSION, PLAN_VERSION, 4),
        isf_put_le(p + PH_OP, plan->op, 4);
    isf_put_le(p + PH_FLAGS, 0, 4), isf_put_le(p + PH_TILE_ROWS, plan->tile_rows, 4);
    isf_put_le(p + PH_TILE_COLS, plan->tile_cols, 4), isf_put_le(p + PH_PACKED_BYTES, plan->packed_bytes, 8);
    memcpy(p + PLAN_HEADER_BYTES, plan->packed, plan->packed_bytes);
    isf_put_le(p + PH_CHECKSUM, checksum(p), 8);
    return ISF_OK;
}

/* The plan header's fields and the packed-B header inside, checked as far as no kernel is needed. */
static isf_status read_plan_header(const unsigned char *p, size_t size, isf_gemm *g) {
    if (size < 2 * PLAN_HEADER_BYTES || isf_get_le(p + PH_MAGIC, 4) != PLAN_MAGIC ||
        isf_get_le(p + PH_VERSION, 4) != PLAN_VERSION || isf_get_le(p + PH_FLAGS, 4) != 0) {
        return ISF_ERR_INVALID_ARG;
    }
    for (size_t i = PH_END; i < PLAN_HEADER_BYTES; i++) {
        if (p[i] != 0) {
            return ISF_ERR_INVALID_ARG;
        }
    }
    uint64_t packed_bytes = isf_get_le(p + PH_PACKED_BYTES, 8);
    if (packed_bytes < PLAN_HEADER_BYTES || packed_bytes > size - PLAN_HEADER_BYTES ||
        checksum(p) != isf_get_le(p + PH_CHECKSUM, 8) || !isf_packed_header_read(p + PLAN_HEADER_BYTES, &g->h) ||
        g->h.op != isf_get_le(p + PH_OP, 4) || g->h.op >= isf_op_count || g->h.panels != PANEL_ALIGN) {
        return ISF_ERR_INVALID_ARG;
    }
    g->op = (isf_op)g->h.op;
    g->packed_bytes = (size_t)packed_bytes;
    g->tile_rows = (size_t)isf_get_le(p + PH_TILE_ROWS, 4);
    g->tile_cols = (size_t)isf_get_le(p + PH_TILE_COLS, 4);
    return ISF_OK;
}

/* What needs the reading kernel: Kc, the panels' extent, the tile shape and the region buffers. */
static isf_status fits_kernel(const isf_gemm *g) {
    if (isf_packed_kc_fits(&g->h, g->kern) != ISF_OK || isf_packed_extent(&g->h, g->kern) != g->packed_bytes) {
        return ISF_ERR_INVALID_ARG;
    }
    size_t nr = isf_kernel_nr(g->kern, (size_t)g->h.vector_bytes);
    if (g->tile_rows == 0 || g->tile_rows % g->kern->mr != 0 || g->tile_cols == 0 || g->tile_cols % nr != 0) {
        return ISF_ERR_INVALID_ARG;
    }
    return isf_region_fits(g->kern, &g->h, g->tile_cols) ? ISF_OK : ISF_ERR_UNSUPPORTED;
}

isf_status isf_gemm_import(const void *src, size_t size, isf_gemm **plan) {
    isf_gemm g = {0};
    isf_status st = src == NULL || plan == NULL ? ISF_ERR_INVALID_ARG : read_plan_header(src, size, &g);
    if (st != ISF_OK) {
        return st;
    }
    const isf_selection *sel = isf_selection_enter();
    g.kern = isf_packed_reader(&g.h, sel, sel->kernel[g.op]);
    st = g.kern == NULL ? ISF_ERR_UNSUPPORTED : fits_kernel(&g);
    isf_selection_leave(sel);
    isf_gemm *out = st == ISF_OK ? malloc(sizeof *out) : NULL;
    g.packed = out != NULL ? aligned_alloc(PANEL_ALIGN, round_up(g.packed_bytes, PANEL_ALIGN)) : NULL;
    if (st == ISF_OK && g.packed == NULL) {
        free(out);
        return ISF_ERR_NO_MEMORY;
    }
    if (st == ISF_OK) {
        memcpy(g.packed, (const unsigned char *)src + PLAN_HEADER_BYTES, g.packed_bytes);
        *out = g;
        *plan = out;
    }
    return st;
}
