/* Plans (isaforge.h): weights packed once by the kernel selected at create, in isf_pack_b's storable format, run
 * as fixed tiles of C through the driver's region entry point (gemm.c). Runs allocate nothing. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "isf_half.h"
#include "isf_internal.h"

enum {
    PANEL_ALIGN = 64,
    TILE_ROWS = 64,  /* rows of a tile, rounded up to MR */
    TILE_COLS = 128, /* columns of a tile, rounded down to NR (at least NR) */
    /* The export: a header of little-endian fields, then the packed-B buffer (its own header, then the panels). */
    PLAN_MAGIC = 0x47465349u, /* "ISFG" */
    PLAN_VERSION = 4, /* 2: bias and clamp; 3: the quantized ops' section; 4: packed-B format 2 (its checksum) */
    PLAN_HEADER_BYTES = ISF_PLAN_HEADER_BYTES,
    PH_MAGIC = 0,
    PH_VERSION = 4,
    PH_OP = 8,
    PH_FLAGS = 12,
    PH_TILE_ROWS = 16,
    PH_TILE_COLS = 20,
    PH_PACKED_BYTES = 24,
    PH_CHECKSUM = 32,
    PH_BIAS_BYTES = 40, /* 0, or n values of C's type after the packed buffer */
    PH_OUT_MIN = 48,    /* fp32 bits, with ISF_GEMM_CLAMP in the flags */
    PH_OUT_MAX = 52,
    PH_QUANT_BYTES = 56, /* 0, or the quantized section's bytes after the bias (version 3) */
    PH_END = 64,
    /* The quantized section: the epilogue's scalars, then quant_cols as the plan holds it (NR-padded arrays). */
    QS_STEPS = 0,
    QS_OUT_ZP = 4,
    QS_QMIN = 8,
    QS_QMAX = 12,
    QS_PADDED = 16, /* n rounded up to NR */
    QS_BLOCKS = 24, /* blockwise scales' blocks, 0 for none */
    QS_ARRAYS = ISF_QUANT_SCALAR_BYTES,
};

struct isf_gemm {
    isf_op op;
    const isf_kernel *kern; /* packed with it (created) or the reader found at import: preferred at run */
    isf_packed_header h;
    unsigned char *packed; /* isf_pack_b's buffer, 64-byte aligned, so the panels are at packed + 64 */
    size_t packed_bytes;   /* header and panels */
    isf_sizes sizes;       /* of everything the plan allocates or exports (isf_sizes_of) */
    size_t tile_rows, tile_cols;
    uint32_t flags;         /* the descriptor's */
    float out_min, out_max; /* as given, for the export */
    unsigned char *bias;    /* as given (n values of C's type), for the export; NULL: none */
    size_t bias_bytes;
    /* What the kernels apply: bias in their output type, zero-padded to whole NR tiles, and the bounds. Every kernel
     * reading the plan's layout has the same output type and NR. */
    unsigned char *kernel_bias;
    isf_epilogue ep;
    unsigned char *quant_cols; /* the quantized ops' column arrays of ep (NR-padded), one allocation */
    size_t quant_padded;       /* n rounded up to NR: the length of each array of quant_cols */
    size_t quant_blocks;       /* blockwise scales' blocks of k (0: per column) */
    isf_blockwise blockwise;   /* its column arrays in quant_cols too; col_sum NULL: scales per column */
};

/* The quantized ops take isf_quant_params: their bias is int32 (the sums' type) or fp32 (gemm_qd8_f32's C). */
static int quantized(isf_op op) { return isf_ops[op].quantized; }

/* Its activations are fp32, quantized per row at run time (gemm_qd8_f32, gemm_qd8_f32_qc4w). */
static int dynamic(isf_op op) { return quantized(op) && isf_ops[op].in_kind == ISF_ELEM_FLOAT; }

static size_t bias_bytes_of(isf_op op) { return quantized(op) ? sizeof(int32_t) : isf_ops[op].out_bytes; }

/* ---- descriptor checks ---------------------------------------------------------------------------------------- */

/* int8 C clamps in int8 units: whole numbers in −128…127. */
static int int8_bound(float x) { return x >= -128.0f && x <= 127.0f && x == (float)(int32_t)x; }

/* The quantized ops' fp32 operands (bias, clamp bounds) are normal or zero: AArch32's NEON reads a subnormal one
 * as 0, and the other kernels would not. */
static int subnormal(float x) { return x != 0.0f && fabsf(x) < FLT_MIN; }

static isf_status check_clamp(const isf_gemm_desc *d) {
    if (!(d->flags & ISF_GEMM_CLAMP)) {
        return ISF_OK;
    }
    if (d->op == ISF_OP_GEMM_QS8) {
        int ok = int8_bound(d->out_min) && int8_bound(d->out_max) && d->out_min <= d->out_max;
        return ok ? ISF_OK : ISF_ERR_INVALID_ARG;
    }
    int int_out = isf_ops[d->op].out_kind == ISF_ELEM_INT;
    int bad = isnan(d->out_min) || isnan(d->out_max) || d->out_min > d->out_max;
    bad |= quantized(d->op) && (subnormal(d->out_min) || subnormal(d->out_max));
    return int_out || bad ? ISF_ERR_INVALID_ARG : ISF_OK;
}

/* Every scale the kernels multiply by is a finite normal float: a subnormal one is 0 to AArch32's NEON, and an
 * infinite s makes acc + bias = 0 a NaN, which the kernels round to different bytes. NaN fails both tests. */
static int good_scale(float s) { return s >= FLT_MIN && s <= FLT_MAX; }
static int int8_zero_point(int32_t zp) { return zp >= -128 && zp <= 127; }

/* The dynamic ops' fp32 bias has no subnormal value. */
static int f32_bias_fits(const isf_gemm_desc *d) {
    for (size_t j = 0; j < d->n; j++) {
        float b;
        memcpy(&b, (const unsigned char *)d->bias + j * sizeof b, sizeof b);
        if (subnormal(b)) {
            return 0;
        }
    }
    return 1;
}

/* The static ops' bias keeps |acc + bias| within int32 for any A and W: |acc| ≤ 32640·k. */
static int bias_fits(const isf_gemm_desc *d) {
    if (d->bias == NULL) {
        return 1;
    }
    if (dynamic(d->op)) {
        return f32_bias_fits(d);
    }
    int64_t room = INT32_MAX - (int64_t)32640 * (int64_t)d->k;
    for (size_t j = 0; j < d->n; j++) {
        int32_t b;
        memcpy(&b, (const unsigned char *)d->bias + j * sizeof b, sizeof b);
        if ((b < 0 ? -(int64_t)b : (int64_t)b) > room) {
            return 0;
        }
    }
    return 1;
}

/* w_scale_count for these parameters: n × the blocks of k for blockwise scales (0 on overflow), else 1 or n. */
static int scale_count_fits(const isf_gemm_desc *d) {
    const isf_quant_params *q = d->quant;
    if (q->w_block == 0) {
        return q->w_scale_count == 1 || q->w_scale_count == d->n;
    }
    size_t blocks = d->k / q->w_block + (d->k % q->w_block != 0), count;
    return !__builtin_mul_overflow(blocks ? blocks : 1, d->n, &count) && q->w_scale_count == count;
}

/* The scale column j's epilogue multiplies by, from its weight scale (isaforge.h): s[j], d[j] or w_scales[j]. */
static float column_scale(isf_op op, const isf_quant_params *q, float w_scale) {
    return dynamic(op) ? w_scale : op == ISF_OP_GEMM_QS8 ? (q->a_scale * w_scale) / q->c_scale : q->a_scale * w_scale;
}

static isf_status check_quant(const isf_gemm_desc *d) {
    const isf_quant_params *q = d->quant;
    size_t w_bits = isf_ops[d->op].w_bits;
    int blockwise_op = w_bits == 4; /* only the int4 op takes blocks */
    if (d->k > ISF_QUANT_MAX_K || q->w_scales == NULL || (q->w_bits != 0 && q->w_bits != w_bits)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (q->w_block != 0 &&
        (!blockwise_op || q->w_block % ISF_QUANT_BLOCK_STEP != 0 || q->w_block > ISF_QUANT_MAX_BLOCK)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (!scale_count_fits(d)) {
        return ISF_ERR_INVALID_ARG;
    }
    for (size_t j = 0; j < q->w_scale_count; j++) {
        if (!good_scale(q->w_scales[j]) || !good_scale(column_scale(d->op, q, q->w_scales[j]))) {
            return ISF_ERR_INVALID_ARG;
        }
    }
    if (!dynamic(d->op) && (!good_scale(q->a_scale) || !int8_zero_point(q->a_zero_point))) {
        return ISF_ERR_INVALID_ARG;
    }
    if (d->op == ISF_OP_GEMM_QS8 && (!good_scale(q->c_scale) || !int8_zero_point(q->c_zero_point))) {
        return ISF_ERR_INVALID_ARG;
    }
    return bias_fits(d) ? ISF_OK : ISF_ERR_INVALID_ARG;
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
    if ((d->quant != NULL) != quantized(d->op) || (d->quant != NULL && check_quant(d) != ISF_OK)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (!isf_span_fits(rows, cols, d->ldw, isf_ops[d->op].w_bytes) || !isf_span_fits(d->k, d->n, d->n, sizeof(float))) {
        return ISF_ERR_INVALID_ARG;
    }
    return check_clamp(d);
}

/* ---- create ---------------------------------------------------------------------------------------------------- */

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

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

static void set_tiles(isf_gemm *g) {
    size_t mr = g->kern->mr, nr = isf_kernel_nr(g->kern, (size_t)g->h.vector_bytes);
    g->tile_rows = round_up(TILE_ROWS, mr);
    g->tile_cols = nr < TILE_COLS ? TILE_COLS / nr * nr : nr;
}

/* The kernels' epilogue from the plan's bias and bounds: the bias converted to the kernel's output type (fp32 for a
 * widened gemm_f16 kernel), the bounds rounded to binary16 for binary16 C. NO_MEMORY leaves the plan as it was. */
static isf_status set_epilogue(isf_gemm *g) {
    const isf_op_info *op = &isf_ops[g->op];
    size_t out = g->kern->widened ? sizeof(float) : op->out_bytes;
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

static void free_plan(isf_gemm *g) {
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
    return quantized(d->op) ? ISF_OK : set_epilogue(g); /* quantized: set_quant_epilogue, which needs W */
}

/* The weights of a quantized plan as int8 W[k][n] (weights_kn's, or the descriptor's own), for the column sums. */
typedef struct {
    const int8_t *w;
    size_t ld;
} weights_view;

/* Σ_k W[k][j] over k [k0, k1), wrapping (exact where isaforge.h says it is used). */
static int32_t column_sum(weights_view v, size_t j, size_t k0, size_t k1) {
    uint32_t sum = 0;
    for (size_t p = k0; p < k1; p++) {
        sum += (uint32_t)v.w[p * v.ld + j];
    }
    return (int32_t)sum;
}

/* The epilogue's pointers into quant_cols (isf_epilogue's column arrays, then the blockwise ones), its bounds from
 * the plan's: what create and import share once quant_cols, its sizes and ep's scalars are set. */
static void point_quant_columns(isf_gemm *g) {
    size_t padded = g->quant_padded;
    int32_t *bias = (int32_t *)(void *)g->quant_cols, *col_sum = bias + padded;
    float *col_scale = (float *)(void *)(col_sum + padded), *out_bias = col_scale + padded;
    g->ep.bias = g->ep.steps & ISF_EPILOGUE_BIAS ? bias : NULL;
    g->ep.col_sum = col_sum, g->ep.col_scale = col_scale, g->ep.out_bias = out_bias;
    g->ep.min = g->out_min, g->ep.max = g->out_max;
    if (g->quant_blocks) {
        int32_t *sums = (int32_t *)(void *)(out_bias + padded);
        g->blockwise = (isf_blockwise){sums, (const float *)(void *)(sums + g->quant_blocks * padded), padded};
    }
}

/* Blockwise scales (gemm_qd8_f32_qc4w with w_block < k): per block, the column sums and the scales, block-major
 * and NR-padded (isf_blockwise), at `cols`. */
static void set_blockwise(const isf_gemm_desc *d, weights_view v, size_t padded, unsigned char *cols) {
    const isf_quant_params *q = d->quant;
    size_t blocks = (d->k + q->w_block - 1) / q->w_block;
    int32_t *sums = (int32_t *)(void *)cols;
    float *scales = (float *)(void *)(sums + blocks * padded);
    for (size_t b = 0; b < blocks; b++) {
        size_t k0 = b * q->w_block, k1 = k0 + q->w_block < d->k ? k0 + q->w_block : d->k;
        for (size_t j = 0; j < d->n; j++) {
            sums[b * padded + j] = column_sum(v, j, k0, k1);
            scales[b * padded + j] = q->w_scales[j * blocks + b];
        }
    }
}

/* Blockwise scales that need the block-by-block path: more than one block of k. */
static int blockwise(const isf_gemm_desc *d) { return d->quant->w_block != 0 && d->k > d->quant->w_block; }

/* What the desc's plan holds besides its packed W: its bias, its blocks of scales. */
static isf_plan_shape shape_of(const isf_gemm_desc *d) {
    int blocks = quantized(d->op) && blockwise(d);
    size_t w_block = blocks ? d->quant->w_block : 1; /* k ≤ ISF_QUANT_MAX_K (check_quant): no wrap */
    return (isf_plan_shape){d->op, d->bias != NULL && d->n > 0, blocks ? (d->k + w_block - 1) / w_block : 0};
}

/* A quantized plan's column arrays and k held to create's rules, whether create made them or a file gave them: k at
 * most ISF_QUANT_MAX_K; scale blocks of create's sizes; every column's scale (and each block's) a finite normal
 * float, as check_quant requires of the scales given and derived; the dynamic ops' fp32 bias without subnormals. */
static isf_status check_quant_columns(const isf_gemm *g) {
    size_t n = g->sizes.n, padded = g->quant_padded, kc = g->sizes.kc;
    int step = kc % ISF_QUANT_BLOCK_STEP == 0 && kc <= ISF_QUANT_MAX_BLOCK;
    if (g->sizes.k > ISF_QUANT_MAX_K || (g->quant_blocks != 0 && !step)) {
        return ISF_ERR_INVALID_ARG;
    }
    for (size_t j = 0; j < n; j++) {
        if (!good_scale(g->ep.col_scale[j]) || (dynamic(g->op) && subnormal(g->ep.out_bias[j]))) {
            return ISF_ERR_INVALID_ARG;
        }
    }
    for (size_t b = 0; b < g->quant_blocks; b++) {
        for (size_t j = 0; j < n; j++) {
            if (!good_scale(g->blockwise.col_scale[b * padded + j])) {
                return ISF_ERR_INVALID_ARG;
            }
        }
    }
    return ISF_OK;
}

/* The quantized ops' epilogue (isaforge.h's formulas): per column, the int32 bias with the activation zero point
 * folded in (static ops; wrapping, since acc + bias is known to fit), or the weight sums for the per-row zero points
 * (the dynamic ops), and the fp32 scale; the dynamic ops' fp32 bias. Arrays NR-padded with zeros. Blockwise scales
 * add their per-block arrays after these. */
static isf_status set_quant_epilogue(const isf_gemm_desc *d, weights_view v, isf_gemm *g) {
    const isf_quant_params *q = d->quant;
    size_t padded = g->sizes.padded, blocks = (size_t)shape_of(d).blocks;
    size_t bytes = round_up(g->sizes.quant_cols, PANEL_ALIGN);
    g->quant_cols = aligned_alloc(PANEL_ALIGN, bytes);
    if (g->quant_cols == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    memset(g->quant_cols, 0, bytes);
    g->quant_padded = padded, g->quant_blocks = blocks;
    int32_t *bias = (int32_t *)(void *)g->quant_cols, *col_sum = bias + padded;
    float *col_scale = (float *)(void *)(col_sum + padded), *out_bias = col_scale + padded;
    int dyn = dynamic(d->op);
    for (size_t j = 0; j < d->n; j++) {
        int32_t sum = column_sum(v, j, 0, d->k);
        col_sum[j] = sum;
        float ws = q->w_scales[q->w_scale_count == 1 ? 0 : j]; /* one block (k ≤ w_block): one scale per column */
        col_scale[j] = column_scale(d->op, q, ws);
        int32_t given = 0;
        if (g->bias != NULL) {
            memcpy(dyn ? (void *)&out_bias[j] : (void *)&given, g->bias + j * 4, 4);
        }
        bias[j] = (int32_t)((uint32_t)given - (uint32_t)q->a_zero_point * (uint32_t)sum);
    }
    if (blocks) {
        set_blockwise(d, v, padded, (unsigned char *)(out_bias + padded));
    }
    isf_epilogue ep = {.steps = ISF_EPILOGUE_TO_F32 | (g->flags & ISF_GEMM_CLAMP ? ISF_EPILOGUE_CLAMP : 0u)};
    if (dyn) {
        ep.steps |= ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_ROW_SCALE | (g->bias != NULL ? ISF_EPILOGUE_OUT_BIAS : 0u);
    } else {
        ep.steps |= ISF_EPILOGUE_BIAS;
    }
    if (d->op == ISF_OP_GEMM_QS8) {
        int clamp = (g->flags & ISF_GEMM_CLAMP) != 0;
        ep.steps = ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_S8;
        ep.out_zp = q->c_zero_point;
        ep.qmin = clamp ? (int32_t)g->out_min : -128, ep.qmax = clamp ? (int32_t)g->out_max : 127;
    }
    g->ep = ep;
    point_quant_columns(g);
    return check_quant_columns(g);
}

/* Packs W with `kern` into a new plan. */
static isf_status build(const isf_kernel *kern, const isf_gemm_desc *d, isf_gemm **plan) {
    size_t kc = quantized(d->op) && blockwise(d) ? d->quant->w_block : 0; /* a Kc block per scale block */
    isf_plan_shape shape = shape_of(d);
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
        set_tiles(g);
        st = isf_region_fits(kern, NULL, &g->h, kern->mr, g->tile_cols) ? keep_epilogue(d, g) : ISF_ERR_UNSUPPORTED;
        st = st == ISF_OK && quantized(d->op) ? set_quant_epilogue(d, v, g) : st;
    } else if (g != NULL) {
        g->packed = packed;
    }
    free(t);
    if (st != ISF_OK) {
        free_plan(g);
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
    const isf_kernel *kern = sel->kernel[desc->op];
    st = kern == NULL ? ISF_ERR_UNSUPPORTED : build(kern, desc, plan);
    isf_selection_leave(sel);
    return st;
}

void isf_gemm_destroy(isf_gemm *plan) { free_plan(plan); }

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
    const isf_kernel *kern, *row; /* row: for the rows kern would pad, or NULL */
    size_t m;
    const unsigned char *a;
    size_t lda;
    unsigned char *c;
    size_t ldc;
    int accumulate;
} run_args;

static isf_status check_run(const isf_gemm *plan, size_t m, const void *a, size_t lda, const void *c, size_t ldc,
                            uint32_t flags) {
    if (plan == NULL || (flags & ~(uint32_t)ISF_ACCUMULATE) != 0 || (quantized(plan->op) && flags != 0)) {
        return ISF_ERR_INVALID_ARG;
    }
    size_t n = (size_t)plan->h.n, k = (size_t)plan->h.k;
    const isf_op_info *op = &isf_ops[plan->op];
    if ((m && k && a == NULL) || (m && n && c == NULL) || lda < k || ldc < n) {
        return ISF_ERR_INVALID_ARG; /* the leading dimensions whatever m is (isaforge.h) */
    }
    return isf_span_fits(m, k, lda, op->in_bytes) && isf_span_fits(m, n, ldc, op->out_bytes) ? ISF_OK
                                                                                             : ISF_ERR_INVALID_ARG;
}

/* A quantized plan's epilogue from column `col` on (its column arrays are never NULL). */
static isf_epilogue quantized_columns_from(const isf_gemm *g, size_t col) {
    isf_epilogue ep = g->ep;
    ep.bias = ep.bias != NULL ? (const int32_t *)ep.bias + col : NULL;
    ep.col_sum += col, ep.col_scale += col, ep.out_bias += col;
    return ep;
}

/* One element of a quantized op's C when k = 0: the epilogue on a zero sum (an empty row quantizes with scale 1). */
static void quantized_alone(const isf_gemm *g, unsigned char *e, size_t j) {
    static const int32_t no_offset = 0;
    static const float unit = 1.0f;
    isf_epilogue ep = quantized_columns_from(g, j);
    ep.row_offset = &no_offset, ep.row_scale = &unit;
    isf_epilogue_store_s32(&ep, 0, 0, 0, e, 0);
}

/* One element of C when k = 0: (C's value when accumulating, else 0) + bias, clamped, in C's type. */
static void element_alone(const isf_gemm *g, unsigned char *e, size_t j, int accumulate) {
    const isf_op_info *op = &isf_ops[g->op];
    if (quantized(g->op)) {
        quantized_alone(g, e, j);
        return;
    }
    if (op->out_kind == ISF_ELEM_INT) {
        int32_t v = 0, b = 0;
        memcpy(&v, accumulate ? e : (const unsigned char *)&b, sizeof v);
        memcpy(&b, g->bias != NULL ? g->bias + j * sizeof b : (const unsigned char *)&b, sizeof b);
        v = (int32_t)((uint32_t)v + (uint32_t)b);
        memcpy(e, &v, sizeof v);
        return;
    }
    int half = op->out_kind == ISF_ELEM_BINARY16;
    float v = 0.0f;
    uint16_t h16 = 0;
    if (accumulate) {
        memcpy(half ? (void *)&h16 : (void *)&v, e, op->out_bytes);
        v = half ? isf_f16_to_f32(h16) : v;
    }
    if (g->bias != NULL) {
        float b = 0.0f;
        memcpy(half ? (void *)&h16 : (void *)&b, g->bias + j * op->out_bytes, op->out_bytes);
        v += half ? isf_f16_to_f32(h16) : b;
    }
    v = g->ep.steps & ISF_EPILOGUE_CLAMP ? isf_clamp_f32(v, g->ep.min, g->ep.max) : v;
    h16 = isf_f32_to_f16(v);
    memcpy(e, half ? (void *)&h16 : (void *)&v, op->out_bytes);
}

/* k = 0 has no panels: A·W is zero, only the epilogue is left. */
static void epilogue_alone(const isf_gemm *g, unsigned char *c, size_t ldc, size_t rows, size_t col, size_t cols,
                           int accumulate) {
    size_t out = isf_ops[g->op].out_bytes;
    for (size_t i = 0; i < rows; i++) {
        for (size_t j = 0; j < cols; j++) {
            element_alone(g, c + (i * ldc + j) * out, col + j, accumulate);
        }
    }
}

/* C's block of `rows` rows from `row` and `cols` columns from `col`. */
static void run_block(const run_args *r, size_t row, size_t rows, size_t col, size_t cols) {
    const isf_gemm *g = r->plan;
    size_t in = isf_ops[g->op].in_bytes, out = isf_ops[g->op].out_bytes;
    unsigned char *c = r->c + (row * r->ldc + col) * out;
    if (g->h.k == 0) { /* no panels: A·W is zero */
        epilogue_alone(g, c, r->ldc, rows, col, cols, r->accumulate);
        return;
    }
    isf_epilogue ep = g->ep;
    if (ep.bias != NULL && !quantized(g->op)) {
        ep.bias = g->kernel_bias + col * (r->kern->widened ? sizeof(float) : out);
    } else if (quantized(g->op)) {
        ep = quantized_columns_from(g, col);
    }
    isf_blockwise bw = g->blockwise;
    if (bw.col_sum != NULL) { /* none without blockwise scales: no offset on a null pointer */
        bw.col_sum += col, bw.col_scale += col;
    }
    isf_region reg = {r->a + row * r->lda * in,
                      r->lda,
                      c,
                      r->ldc,
                      rows,
                      col,
                      cols,
                      r->accumulate,
                      &ep,
                      g->blockwise.col_sum != NULL ? &bw : NULL};
    isf_gemm_region(r->kern, r->row, &g->h, g->packed + g->h.panels, &reg);
}

/* Tile t: row block t / column blocks, column block t % column blocks. */
static void run_tile(const run_args *r, size_t t) {
    const isf_gemm *g = r->plan;
    size_t n = (size_t)g->h.n, across = blocks(n, g->tile_cols);
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
    run_args r = {plan, NULL, NULL, m, a, lda, c, ldc, (flags & ISF_ACCUMULATE) != 0};
    r.kern = plan->h.k ? isf_packed_reader(&plan->h, sel, plan->kern) : plan->kern;
    r.row = r.kern != NULL && plan->h.k ? isf_row_kernel(r.kern, sel) : NULL;
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

/* The widest region of `rows` rows: all of n when it fits, else the most whole tile columns that do (one does: the
 * plan was checked for it). A region of a few rows, which the row kernel takes, needs one row's sums, not MR. */
static size_t region_width(const run_args *r, size_t rows) {
    const isf_gemm *g = r->plan;
    size_t n = (size_t)g->h.n;
    if (g->h.k == 0 || isf_region_fits(r->kern, r->row, &g->h, rows, n)) {
        return n;
    }
    size_t width = n / g->tile_cols * g->tile_cols;
    while (width > g->tile_cols && !isf_region_fits(r->kern, r->row, &g->h, rows, width)) {
        width -= g->tile_cols;
    }
    return width;
}

/* The whole of C on the caller's thread, with no tiles to match: each tile's rows across every column one region
 * can take (all of n, unless the fp32 sums of binary16 C or of the quantized ops' Kc blocks would outgrow the
 * region's buffer), so A is packed (gemm_qd8_f32: quantized) once per row block and region instead of once per
 * tile column. The same bits as the tiles: each element sums the same products in the same order, and the rows a
 * row kernel takes are the same. */
static void run_whole(run_args *r, void *ctx) {
    (void)ctx;
    size_t n = (size_t)r->plan->h.n, tile_rows = r->plan->tile_rows;
    size_t width = region_width(r, r->m < tile_rows ? r->m : tile_rows);
    for (size_t row = 0, rows; row < r->m; row += rows) {
        rows = r->m - row < tile_rows ? r->m - row : tile_rows;
        if (rows < tile_rows && row > 0) { /* the last row block, shorter: maybe the row kernel's alone */
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

/* ---- export / import ------------------------------------------------------------------------------------------- */

/* FNV-1a over the plan header's fields but the checksum, then the packed buffer, the bias and the quantized section;
 * called once the sizes in the header are known to lie within the buffer. */
static uint64_t checksum(const unsigned char *p) {
    uint64_t h = isf_fnv1a64(ISF_FNV1A64_START, p, PH_CHECKSUM);
    h = isf_fnv1a64(h, p + PH_BIAS_BYTES, PH_END - PH_BIAS_BYTES);
    size_t data = (size_t)isf_get_le(p + PH_PACKED_BYTES, 8) + (size_t)isf_get_le(p + PH_BIAS_BYTES, 8) +
                  (size_t)isf_get_le(p + PH_QUANT_BYTES, 8);
    return isf_fnv1a64(h, p + PLAN_HEADER_BYTES, data);
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint64_t u) {
    uint32_t v = (uint32_t)u;
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

/* The quantized section's bytes (0 for the other ops). Their bias lives in it, folded: the given one is not kept. */
static size_t quant_section_bytes(const isf_gemm *g) { return quantized(g->op) ? QS_ARRAYS + g->sizes.quant_cols : 0; }

static size_t exported_bias_bytes(const isf_gemm *g) { return quantized(g->op) ? 0 : g->bias_bytes; }

size_t isf_gemm_export_size(const isf_gemm *plan) { return plan != NULL ? plan->sizes.export_bytes : 0; }

static void write_quant_section(const isf_gemm *g, unsigned char *p) {
    isf_put_le(p + QS_STEPS, g->ep.steps, 4), isf_put_le(p + QS_OUT_ZP, (uint32_t)g->ep.out_zp, 4);
    isf_put_le(p + QS_QMIN, (uint32_t)g->ep.qmin, 4), isf_put_le(p + QS_QMAX, (uint32_t)g->ep.qmax, 4);
    isf_put_le(p + QS_PADDED, g->quant_padded, 8), isf_put_le(p + QS_BLOCKS, g->quant_blocks, 8);
    memcpy(p + QS_ARRAYS, g->quant_cols, g->sizes.quant_cols);
}

isf_status isf_gemm_export(const isf_gemm *plan, void *dst, size_t size) {
    if (plan == NULL || dst == NULL || size < isf_gemm_export_size(plan)) {
        return ISF_ERR_INVALID_ARG; /* nothing written */
    }
    unsigned char *p = dst;
    memset(p, 0, PLAN_HEADER_BYTES);
    isf_put_le(p + PH_MAGIC, PLAN_MAGIC, 4), isf_put_le(p + PH_VERSION, PLAN_VERSION, 4),
        isf_put_le(p + PH_OP, plan->op, 4);
    isf_put_le(p + PH_FLAGS, plan->flags, 4), isf_put_le(p + PH_TILE_ROWS, plan->tile_rows, 4);
    isf_put_le(p + PH_TILE_COLS, plan->tile_cols, 4), isf_put_le(p + PH_PACKED_BYTES, plan->packed_bytes, 8);
    size_t bias_bytes = exported_bias_bytes(plan);
    isf_put_le(p + PH_BIAS_BYTES, bias_bytes, 8), isf_put_le(p + PH_QUANT_BYTES, quant_section_bytes(plan), 8);
    isf_put_le(p + PH_OUT_MIN, float_bits(plan->out_min), 4), isf_put_le(p + PH_OUT_MAX, float_bits(plan->out_max), 4);
    memcpy(p + PLAN_HEADER_BYTES, plan->packed, plan->packed_bytes);
    if (bias_bytes) {
        memcpy(p + PLAN_HEADER_BYTES + plan->packed_bytes, plan->bias, bias_bytes);
    }
    if (quantized(plan->op)) {
        write_quant_section(plan, p + PLAN_HEADER_BYTES + plan->packed_bytes);
    }
    isf_put_le(p + PH_CHECKSUM, checksum(p), 8);
    return ISF_OK;
}

/* The plan header's fields and the packed-B header inside, checked as far as no kernel is needed: every part within
 * the buffer, the checksum. */
static isf_status read_plan_header(const unsigned char *p, size_t size, isf_gemm *g) {
    if (size < 2 * PLAN_HEADER_BYTES || isf_get_le(p + PH_VERSION, 4) != PLAN_VERSION ||
        isf_get_le(p + PH_MAGIC, 4) != PLAN_MAGIC || (isf_get_le(p + PH_FLAGS, 4) & ~(uint64_t)ISF_GEMM_CLAMP)) {
        return ISF_ERR_INVALID_ARG;
    }
    uint64_t packed_bytes = isf_get_le(p + PH_PACKED_BYTES, 8), bias_bytes = isf_get_le(p + PH_BIAS_BYTES, 8);
    uint64_t quant_bytes = isf_get_le(p + PH_QUANT_BYTES, 8);
    if (packed_bytes < PLAN_HEADER_BYTES || packed_bytes > size - PLAN_HEADER_BYTES ||
        bias_bytes > size - PLAN_HEADER_BYTES - packed_bytes ||
        quant_bytes > size - PLAN_HEADER_BYTES - packed_bytes - bias_bytes ||
        checksum(p) != isf_get_le(p + PH_CHECKSUM, 8) || !isf_packed_header_read(p + PLAN_HEADER_BYTES, &g->h) ||
        g->h.op != isf_get_le(p + PH_OP, 4) || g->h.op >= isf_op_count ||
        (quant_bytes != 0) != quantized((isf_op)g->h.op) || (quant_bytes != 0 && bias_bytes != 0) ||
        g->h.panels != PANEL_ALIGN) {
        return ISF_ERR_INVALID_ARG;
    }
    g->op = (isf_op)g->h.op;
    g->packed_bytes = (size_t)packed_bytes;
    g->tile_rows = (size_t)isf_get_le(p + PH_TILE_ROWS, 4);
    g->tile_cols = (size_t)isf_get_le(p + PH_TILE_COLS, 4);
    g->flags = (uint32_t)isf_get_le(p + PH_FLAGS, 4);
    g->out_min = bits_float(isf_get_le(p + PH_OUT_MIN, 4)), g->out_max = bits_float(isf_get_le(p + PH_OUT_MAX, 4));
    g->bias_bytes = (size_t)bias_bytes;
    isf_gemm_desc d = {.op = g->op, .flags = g->flags, .out_min = g->out_min, .out_max = g->out_max};
    return check_clamp(&d);
}

/* An export's quantized section, for a header read_plan_header accepted: where it starts, and its bytes (0 for the
 * other ops). */
typedef struct {
    const unsigned char *at;
    size_t bytes;
} quant_view;

static quant_view quant_section(const unsigned char *p) {
    size_t before = (size_t)isf_get_le(p + PH_PACKED_BYTES, 8) + (size_t)isf_get_le(p + PH_BIAS_BYTES, 8);
    return (quant_view){p + PLAN_HEADER_BYTES + before, (size_t)isf_get_le(p + PH_QUANT_BYTES, 8)};
}

/* What needs the reading kernel: every size and the tile shape as create computes them (isf_sizes_of, set_tiles:
 * a file's tiles wider than the region buffers once passed by wrapping) against the file's, and the region buffers.
 * The quantized section's scalars are read only once it is known to hold them. */
static isf_status fits_kernel(isf_gemm *g, quant_view q) {
    int quant = quantized(g->op);
    if (quant && q.bytes < QS_ARRAYS) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_plan_shape shape = {g->op, g->bias_bytes != 0, quant ? isf_get_le(q.at + QS_BLOCKS, 8) : 0};
    if (!isf_sizes_of(g->kern, &g->h, &shape, &g->sizes) || g->sizes.extent != g->packed_bytes ||
        (g->bias_bytes != 0 && g->bias_bytes != g->sizes.bias) ||
        (quant && q.bytes != QS_ARRAYS + g->sizes.quant_cols)) {
        return ISF_ERR_INVALID_ARG;
    }
    size_t tile_rows = g->tile_rows, tile_cols = g->tile_cols;
    set_tiles(g);
    if (tile_rows != g->tile_rows || tile_cols != g->tile_cols) {
        return ISF_ERR_INVALID_ARG;
    }
    return isf_region_fits(g->kern, NULL, &g->h, g->kern->mr, g->tile_cols) ? ISF_OK : ISF_ERR_UNSUPPORTED;
}

/* The steps a quantized plan of this op and flags has (isf_epilogue's; OUT_BIAS optional for the dynamic ops). */
static uint32_t quant_steps(isf_op op, uint32_t flags) {
    uint32_t clamp = flags & ISF_GEMM_CLAMP ? ISF_EPILOGUE_CLAMP : 0u;
    if (op == ISF_OP_GEMM_QS8) {
        return ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_S8;
    }
    return ISF_EPILOGUE_TO_F32 | clamp |
           (dynamic(op) ? ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_ROW_SCALE : (uint32_t)ISF_EPILOGUE_BIAS);
}

/* The quantized section's scalars against the plan (its sizes already checked by fits_kernel): the padding, the
 * blocks, the steps and the int8 parameters in range. */
static int quant_section_fits(quant_view q, const isf_gemm *g) {
    size_t k = g->sizes.k, kc = g->sizes.kc;
    uint64_t blocks = isf_get_le(q.at + QS_BLOCKS, 8);
    uint32_t steps = (uint32_t)isf_get_le(q.at + QS_STEPS, 4);
    int32_t zp = (int32_t)isf_get_le(q.at + QS_OUT_ZP, 4), lo = (int32_t)isf_get_le(q.at + QS_QMIN, 4),
            hi = (int32_t)isf_get_le(q.at + QS_QMAX, 4);
    int blocks_ok = blocks == 0 || (isf_ops[g->op].w_bits == 4 && k > kc && blocks == k / kc + (k % kc != 0));
    uint32_t optional = dynamic(g->op) ? (uint32_t)ISF_EPILOGUE_OUT_BIAS : 0u;
    return isf_get_le(q.at + QS_PADDED, 8) == g->sizes.padded && blocks_ok &&
           (steps & ~optional) == quant_steps(g->op, g->flags) && int8_zero_point(zp) && int8_zero_point(lo) &&
           int8_zero_point(hi) && lo <= hi;
}

static isf_status read_quant_section(quant_view q, isf_gemm *g) {
    if (!quant_section_fits(q, g)) {
        return ISF_ERR_INVALID_ARG;
    }
    g->quant_padded = g->sizes.padded, g->quant_blocks = (size_t)isf_get_le(q.at + QS_BLOCKS, 8);
    g->quant_cols = aligned_alloc(PANEL_ALIGN, round_up(g->sizes.quant_cols, PANEL_ALIGN));
    if (g->quant_cols == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    memcpy(g->quant_cols, q.at + QS_ARRAYS, g->sizes.quant_cols);
    g->ep = (isf_epilogue){.steps = (uint32_t)isf_get_le(q.at + QS_STEPS, 4),
                           .out_zp = (int32_t)isf_get_le(q.at + QS_OUT_ZP, 4),
                           .qmin = (int32_t)isf_get_le(q.at + QS_QMIN, 4),
                           .qmax = (int32_t)isf_get_le(q.at + QS_QMAX, 4)};
    point_quant_columns(g);
    return check_quant_columns(g);
}

isf_status isf_gemm_import(const void *src, size_t size, isf_gemm **plan) {
    isf_gemm g = {0};
    isf_status st = src == NULL || plan == NULL ? ISF_ERR_INVALID_ARG : read_plan_header(src, size, &g);
    if (st != ISF_OK) {
        return st;
    }
    quant_view q = quant_section(src);
    const isf_selection *sel = isf_selection_enter();
    g.kern = isf_packed_reader(&g.h, sel, sel->kernel[g.op]);
    st = g.kern == NULL ? ISF_ERR_UNSUPPORTED : fits_kernel(&g, q);
    isf_selection_leave(sel);
    if (st != ISF_OK) {
        return st;
    }
    isf_gemm *out = calloc(1, sizeof *out);
    if (out == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    *out = g;
    const unsigned char *data = (const unsigned char *)src + PLAN_HEADER_BYTES;
    out->packed = aligned_alloc(PANEL_ALIGN, round_up(g.packed_bytes, PANEL_ALIGN));
    out->bias = g.bias_bytes ? malloc(g.bias_bytes) : NULL;
    if (out->packed == NULL || (g.bias_bytes && out->bias == NULL)) {
        free_plan(out);
        return ISF_ERR_NO_MEMORY;
    }
    memcpy(out->packed, data, g.packed_bytes);
    if (g.bias_bytes) {
        memcpy(out->bias, data + g.packed_bytes, g.bias_bytes);
    }
    st = quantized(g.op) ? read_quant_section(q, out) : set_epilogue(out);
    if (st != ISF_OK) {
        free_plan(out);
        return st;
    }
    *plan = out;
    return ISF_OK;
}
