/* Plan files (isaforge.h): isf_gemm_export writes a plan as versioned little-endian bytes with no pointers (the
 * packed-B format inside), isf_gemm_import reads them back, checking each size as create computes it. */
#include <stdlib.h>
#include <string.h>

#include "isf_plan.h"

enum {
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
static size_t quant_section_bytes(const isf_gemm *g) {
    return isf_op_quantized(g->op) ? QS_ARRAYS + g->sizes.quant_cols : 0;
}

static size_t exported_bias_bytes(const isf_gemm *g) { return isf_op_quantized(g->op) ? 0 : g->bias_bytes; }

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
    if (isf_op_quantized(plan->op)) {
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
        (quant_bytes != 0) != isf_op_quantized((isf_op)g->h.op) || (quant_bytes != 0 && bias_bytes != 0) ||
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
    return isf_plan_check_clamp(&d);
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
    int quant = isf_op_quantized(g->op);
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
    isf_plan_set_tiles(g);
    if (tile_rows != g->tile_rows || tile_cols != g->tile_cols) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_blocking bl = isf_region_blocking(g->kern, &g->h);
    return isf_region_fits(g->kern, &bl, NULL, &g->h, SIZE_MAX, g->tile_cols) ? ISF_OK : ISF_ERR_UNSUPPORTED;
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
    uint32_t optional = isf_op_dynamic(g->op) ? (uint32_t)ISF_EPILOGUE_OUT_BIAS : 0u;
    return isf_get_le(q.at + QS_PADDED, 8) == g->sizes.padded && blocks_ok &&
           (steps & ~optional) == isf_quant_steps(g->op, g->flags) && int8_zero_point(zp) && int8_zero_point(lo) &&
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
    isf_quant_point_columns(g);
    return isf_quant_check_columns(g);
}

isf_status isf_gemm_import(const void *src, size_t size, isf_gemm **plan) {
    isf_gemm g = {0};
    isf_status st = src == NULL || plan == NULL ? ISF_ERR_INVALID_ARG : read_plan_header(src, size, &g);
    if (st != ISF_OK) {
        return st;
    }
    quant_view q = quant_section(src);
    const isf_selection *sel = isf_selection_enter();
    g.kern = isf_packed_reader(&g.h, sel, isf_kernel_for_columns(sel, g.op, (size_t)g.h.n));
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
        isf_plan_free(out);
        return ISF_ERR_NO_MEMORY;
    }
    memcpy(out->packed, data, g.packed_bytes);
    if (g.bias_bytes) {
        memcpy(out->bias, data + g.packed_bytes, g.bias_bytes);
    }
    st = isf_op_quantized(g.op) ? read_quant_section(q, out) : isf_plan_set_epilogue(out);
    if (st != ISF_OK) {
        isf_plan_free(out);
        return st;
    }
    *plan = out;
    return ISF_OK;
}
