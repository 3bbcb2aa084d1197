/* Plans (isaforge.h): weights packed once by the kernel selected at create, in isf_pack_b's storable format, run
 * as fixed tiles of C through the driver's region entry point (driver.c). Runs allocate nothing. */
#include <stdlib.h>
#include <string.h>

#include "isf_half.h"
#include "isf_plan.h"

enum {
    TILE_ROWS = 64, /* rows of a tile, rounded up to MR */
};

static size_t bias_bytes_of(isf_op op) { return isf_op_quantized(op) ? sizeof(int32_t) : isf_ops[op].out_bytes; }

/* ---- descriptor checks ---------------------------------------------------------------------------------------- */

/* int8 C clamps in int8 units: whole numbers in −128…127. */
static int int8_bound(float x) { return x >= -128.0f && x <= 127.0f && x == (float)(int32_t)x; }

isf_status isf_plan_check_clamp(const isf_gemm_desc *d) {
    if (!(d->flags & ISF_GEMM_CLAMP)) {
        return ISF_OK;
    }
    if (d->op == ISF_OP_GEMM_QS8) {
        int ok = int8_bound(d->out_min) && int8_bound(d->out_max) && d->out_min <= d->out_max;
        return ok ? ISF_OK : ISF_ERR_INVALID_ARG;
    }
    int int_out = isf_ops[d->op].out_kind == ISF_ELEM_INT;
    int bad = isnan(d->out_min) || isnan(d->out_max) || d->out_min > d->out_max;
    bad |= isf_op_quantized(d->op) && (subnormal(d->out_min) || subnormal(d->out_max));
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
    if (d->bias != NULL && !isf_span_fits(1, d->n, d->n, bias_bytes_of(d->op))) {
        return ISF_ERR_INVALID_ARG; /* n values of bias cannot exist: none is read */
    }
    if ((d->quant != NULL) != isf_op_quantized(d->op) || (d->quant != NULL && isf_quant_check(d) != ISF_OK)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (!isf_span_fits(rows, cols, d->ldw, isf_ops[d->op].w_bytes) || !isf_span_fits(d->k, d->n, d->n, sizeof(float))) {
        return ISF_ERR_INVALID_ARG;
    }
    return isf_plan_check_clamp(d);
}

/* ---- create ---------------------------------------------------------------------------------------------------- */

/* Element (row, col) of int4 weights: element e = row · ldw + col is the low nibble of byte e / 2 when e is even,
 * the high one when odd (isaforge.h), as an int8 in −8…7. */
static int8_t int4_at(const unsigned char *w, size_t ldw, size_t row, size_t col) {
    size_t e = row * ldw + col;
    unsigned v = (w[e / 2] >> (e % 2 ? 4 : 0)) & 0xFu;
    return (int8_t)((int)v - (int)((v & 0x8u) << 1));
}

/* W as W[k][n] elements (ldb = n), int4 weights one per byte, in a temporary freed by the caller; NULL when W can
 * be packed as it is (W[k][n] of whole bytes) or there is no memory (*no_memory set). */
static void *weights_kn(const isf_gemm_desc *d, int *no_memory) {
    int nk = d->layout == ISF_WEIGHTS_NK, int4 = isf_ops[d->op].w_bits == 4;
    if ((!nk && !int4) || d->n == 0 || d->k == 0) {
        return NULL;
    }
    size_t e = isf_ops[d->op].w_bytes;
    unsigned char *t = malloc(d->n * d->k * e);
    const unsigned char *w = d->weights;
    for (size_t p = 0; t != NULL && p < d->k; p++) {
        for (size_t j = 0; j < d->n; j++) {
            size_t row = nk ? j : p, col = nk ? p : j;
            if (int4) {
                t[p * d->n + j] = (unsigned char)int4_at(w, d->ldw, row, col);
            } else {
                memcpy(t + (p * d->n + j) * e, w + (row * d->ldw + col) * e, e);
            }
        }
    }
    *no_memory = t == NULL;
    return t;
}

void isf_plan_set_tiles(isf_gemm *g) {
    size_t mr = isf_kernel_mr(g->kern, (size_t)g->h.vector_bytes),
           nr = isf_kernel_nr(g->kern, (size_t)g->h.vector_bytes);
    g->tile_rows = round_up(TILE_ROWS, mr);
    g->tile_cols = nr < ISF_PLAN_TILE_COLS ? ISF_PLAN_TILE_COLS / nr * nr : nr;
}

/* The kernels' epilogue from the plan's bias and bounds: the bias converted to the kernel's output type (fp32 for a
 * widened gemm_f16 kernel), the bounds rounded to binary16 for binary16 C. NO_MEMORY leaves the plan as it was. */
isf_status isf_plan_set_epilogue(isf_gemm *g) {
    const isf_op_info *op = &isf_ops[g->op];
    size_t out = g->kern->out_bytes;
    g->ep = (isf_epilogue){.steps = ISF_EPILOGUE_NONE, .min = g->out_min, .max = g->out_max};
    if (g->bias != NULL) {
        g->kernel_bias = aligned_alloc(PANEL_ALIGN, round_up(g->sizes.kernel_bias, PANEL_ALIGN));
        if (g->kernel_bias == NULL) {
            return ISF_ERR_NO_MEMORY;
        }
        memset(g->kernel_bias, 0, g->sizes.kernel_bias);
        for (size_t j = 0; j < g->sizes.n; j++) {
            if (out == op->out_bytes) {
                memcpy(g->kernel_bias + j * out, g->bias + j * out, out);
            } else { /* binary16 bias for an fp32 kernel: exact */
                uint16_t h16;
                memcpy(&h16, g->bias + j * op->out_bytes, sizeof h16);
                float f = isf_f16_to_f32(h16);
                memcpy(g->kernel_bias + j * out, &f, sizeof f);
            }
        }
        g->ep.steps |= ISF_EPILOGUE_BIAS;
        g->ep.bias = g->kernel_bias;
    }
    if (g->flags & ISF_GEMM_CLAMP) {
        g->ep.steps |= ISF_EPILOGUE_CLAMP;
        if (op->out_kind == ISF_ELEM_BINARY16) {
            g->ep.min_f16 = isf_f32_to_f16(g->out_min), g->ep.max_f16 = isf_f32_to_f16(g->out_max);
            g->ep.min = isf_f16_to_f32(g->ep.min_f16), g->ep.max = isf_f16_to_f32(g->ep.max_f16);
        }
    }
    return ISF_OK;
}

void isf_plan_free(isf_gemm *g) {
    if (g != NULL) {
        free(g->packed), free(g->bias), free(g->kernel_bias), free(g->quant_cols);
        free(g);
    }
}

/* The descriptor's bias and bounds into the plan (bias copied: it is read only during create). */
static isf_status keep_epilogue(const isf_gemm_desc *d, isf_gemm *g) {
    g->flags = d->flags, g->out_min = d->out_min, g->out_max = d->out_max;
    if (d->bias != NULL && d->n > 0) {
        g->bias_bytes = g->sizes.bias;
        g->bias = malloc(g->bias_bytes);
        if (g->bias == NULL) {
            return ISF_ERR_NO_MEMORY;
        }
        memcpy(g->bias, d->bias, g->bias_bytes);
    }
    return isf_op_quantized(d->op) ? ISF_OK
                                   : isf_plan_set_epilogue(g); /* quantized: set_quant_epilogue, which needs W */
}

/* What the desc's plan holds besides its packed W: its bias, its blocks of scales. */
static isf_plan_shape shape_of(const isf_gemm_desc *d) {
    return (isf_plan_shape){d->op, d->bias != NULL && d->n > 0, isf_quant_scale_blocks(d)};
}

/* Packs W with `kern` into a new plan. */
static isf_status build(const isf_kernel *kern, const isf_gemm_desc *d, isf_gemm **plan) {
    isf_plan_shape shape = shape_of(d);
    size_t kc = shape.blocks ? d->quant->w_block : 0; /* a Kc block per scale block */
    size_t bytes = isf_packed_bytes_for(kern, d->n, d->k, isf_kernel_vector_bytes(kern), kc, &shape);
    if (bytes == 0) {
        return ISF_ERR_INVALID_ARG; /* a size of the plan wraps: nothing allocated, nothing read */
    }
    int no_memory = 0;
    void *t = weights_kn(d, &no_memory);
    weights_view v = {t != NULL ? t : d->weights, t != NULL ? d->n : d->ldw};
    isf_gemm *g = calloc(1, sizeof *g);
    unsigned char *packed = aligned_alloc(PANEL_ALIGN, round_up(bytes, PANEL_ALIGN));
    isf_status st = g == NULL || packed == NULL || no_memory ? ISF_ERR_NO_MEMORY : ISF_OK;
    if (st == ISF_OK) {
        st = isf_pack_b_with(kern, d->op, d->n, d->k, v.w, v.ld, kc, packed, bytes);
    }
    if (st == ISF_OK && (!isf_packed_header_read(packed, &g->h) || !isf_sizes_of(kern, &g->h, &shape, &g->sizes))) {
        st = ISF_ERR_INVALID_ARG;
    }
    if (st == ISF_OK) {
        *g = (isf_gemm){.op = d->op, .kern = kern, .h = g->h, .packed = packed, .sizes = g->sizes};
        g->packed_bytes = g->sizes.extent;
        isf_plan_set_tiles(g);
        isf_blocking bl = isf_region_blocking(kern, &g->h);
        st =
            isf_region_fits(kern, &bl, NULL, &g->h, SIZE_MAX, g->tile_cols) ? keep_epilogue(d, g) : ISF_ERR_UNSUPPORTED;
        st = st == ISF_OK && isf_op_quantized(d->op) ? isf_quant_set_epilogue(d, v, g) : st;
    } else if (g != NULL) {
        g->packed = packed;
    }
    free(t);
    if (st != ISF_OK) {
        isf_plan_free(g);
        if (g == NULL) {
            free(packed);
        }
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
    const isf_kernel *kern = isf_kernel_for_columns(sel, desc->op, desc->n);
    st = kern == NULL ? ISF_ERR_UNSUPPORTED : build(kern, desc, plan);
    isf_selection_leave(sel);
    return st;
}

void isf_gemm_destroy(isf_gemm *plan) { isf_plan_free(plan); }

/* ---- runs ------------------------------------------------------------------------------------------------------ */

size_t isf_gemm_tile_count(const isf_gemm *plan, size_t m) {
    size_t count = 0;
    if (plan == NULL ||
        __builtin_mul_overflow(blocks_of(m, plan->tile_rows), blocks_of((size_t)plan->h.n, plan->tile_cols), &count)) {
        return 0;
    }
    return count;
}

/* One run's operands, checked. */
typedef struct {
    const isf_gemm *plan;
    const isf_kernel *kern;
    isf_blocking bl; /* kern's: once a run */
    isf_tails tails; /* for the rows kern would pad */
    size_t m;
    const unsigned char *a;
    size_t lda;
    unsigned char *c;
    size_t ldc;
    int accumulate;
} run_args;

/* The plan's whole C (rows, cols, col and the accumulation to set per block): what every region shares. */
static isf_region region_of(const isf_gemm *plan, const void *a, size_t lda, void *c, size_t ldc, uint32_t flags) {
    const isf_blockwise *bw = plan->blockwise.col_sum != NULL ? &plan->blockwise : NULL;
    isf_region r = {a, lda, NULL, 0, plan->packed + plan->h.panels, c, ldc, 0, 0, 0, 0, &plan->ep, bw};
    r.accumulate = (flags & ISF_ACCUMULATE) != 0;
    return r;
}

static isf_status check_run(const isf_gemm *plan, size_t m, const void *a, size_t lda, void *c, size_t ldc,
                            uint32_t flags) {
    if (plan == NULL || (flags & ~(uint32_t)ISF_ACCUMULATE) != 0 || (isf_op_quantized(plan->op) && flags != 0)) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_region whole = region_of(plan, a, lda, c, ldc, flags);
    whole.rows = m, whole.cols = (size_t)plan->h.n;
    return isf_check_operands(plan->op, (size_t)plan->h.k, &whole);
}

/* C's block of `rows` rows from `row` and `cols` columns from `col`. */
static void run_block(const run_args *r, size_t row, size_t rows, size_t col, size_t cols) {
    const isf_gemm *g = r->plan;
    size_t in = isf_ops[g->op].in_bytes, out = isf_ops[g->op].out_bytes;
    const unsigned char *a = g->h.k ? r->a + row * r->lda * in : r->a; /* k = 0: A may be NULL, never read */
    isf_region reg =
        region_of(g, a, r->lda, r->c + (row * r->ldc + col) * out, r->ldc, r->accumulate ? ISF_ACCUMULATE : 0u);
    reg.rows = rows, reg.col = col, reg.cols = cols;
    isf_gemm_region(r->kern, &r->bl, &r->tails, &g->h, &reg);
}

/* Tile t: row block t / column blocks, column block t % column blocks. */
static void run_tile(const run_args *r, size_t t) {
    const isf_gemm *g = r->plan;
    size_t n = (size_t)g->h.n, across = blocks_of(n, g->tile_cols);
    size_t row = t / across * g->tile_rows, col = t % across * g->tile_cols;
    size_t rows = r->m - row < g->tile_rows ? r->m - row : g->tile_rows;
    run_block(r, row, rows, col, n - col < g->tile_cols ? n - col : g->tile_cols);
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
    run_args r = {
        .plan = plan, .m = m, .a = a, .lda = lda, .c = c, .ldc = ldc, .accumulate = (flags & ISF_ACCUMULATE) != 0};
    r.kern = plan->h.k ? isf_packed_reader(&plan->h, sel, plan->kern) : plan->kern;
    if (r.kern != NULL && plan->h.k) {
        r.tails = isf_tail_kernels(r.kern, sel);
    }
    if (r.kern == NULL) {
        st = ISF_ERR_UNSUPPORTED;
    } else {
        r.bl = isf_region_blocking(r.kern, &plan->h);
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

/* The widest region of `rows` rows: all of n when it fits, else the most whole tile columns that do (one does: the
 * plan was checked for it). A region of a few rows, which tail kernels take, needs their rows' sums, not MR's. */
static size_t region_width(const run_args *r, size_t rows) {
    const isf_gemm *g = r->plan;
    size_t n = (size_t)g->h.n;
    if (g->h.k == 0 || isf_region_fits(r->kern, &r->bl, &r->tails, &g->h, rows, n)) {
        return n;
    }
    size_t width = n / g->tile_cols * g->tile_cols;
    while (width > g->tile_cols && !isf_region_fits(r->kern, &r->bl, &r->tails, &g->h, rows, width)) {
        width -= g->tile_cols;
    }
    return width;
}

/* The whole of C on the caller's thread, with no tiles to match: each tile's rows across every column one region
 * can take (all of n, unless the fp32 sums of binary16 C or of the quantized ops' Kc blocks would outgrow the
 * region's buffer), so A is packed (gemm_qd8_f32: quantized) once per row block and region instead of once per
 * tile column. The same bits as the tiles: each element sums the same products in the same order, and the rows
 * tail kernels take are the same. */
static void run_whole(run_args *r, void *ctx) {
    (void)ctx;
    size_t n = (size_t)r->plan->h.n, tile_rows = r->plan->tile_rows;
    size_t width = region_width(r, r->m < tile_rows ? r->m : tile_rows);
    for (size_t row = 0, rows; row < r->m; row += rows) {
        rows = r->m - row < tile_rows ? r->m - row : tile_rows;
        if (rows < tile_rows && row > 0) { /* the last row block, shorter: maybe tail kernels' alone */
            width = region_width(r, rows);
        }
        for (size_t col = 0; col < n; col += width) {
            run_block(r, row, rows, col, n - col < width ? n - col : width);
        }
    }
}

isf_status isf_gemm_run(const isf_gemm *plan, size_t m, const void *a, size_t lda, void *c, size_t ldc,
                        uint32_t flags) {
    return with_kernel(plan, m, a, lda, c, ldc, flags, run_whole, NULL);
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
