/* The packed-B format (isaforge.h): its header, the sizes of a packed buffer and of a plan around it, isf_pack_b
 * and the choice of a kernel that reads a buffer. */
#include <stdint.h>

#include "isf_driver.h"

/* What a packed B buffer was packed for (isaforge.h promises its format): checked before it is used. Stored as
 * fixed-width little-endian fields at fixed offsets, whatever the struct's padding or the host's byte order. */
typedef isf_packed_header isf_packed_header; /* isf_internal.h */

enum {
    PACKED_MAGIC = 0x42465349u, /* "ISFB" */
    PACKED_KC_MAX = 1 << 16,    /* above any Kc the L1 budget plans (≤ L1_BUDGET / 2): larger is damage */
    HDR_MAGIC = 0,
    HDR_VERSION = 4,
    HDR_OP = 8,
    HDR_LAYOUT = 12,
    HDR_VECTOR_BYTES = 16,
    HDR_RESERVED = 20,
    HDR_N = 24,
    HDR_K = 32,
    HDR_KC = 40,
    HDR_PANELS = 48,
    HDR_CHECKSUM = 56, /* FNV-1a of the bytes before it: damage to a field that other checks let pass is refused */
};

/* ---- pre-packed B ------------------------------------------------------------------------------------------ */

static uint64_t header_checksum(const unsigned char *p) { return isf_fnv1a64(ISF_FNV1A64_START, p, HDR_CHECKSUM); }

static void write_header(void *packed, const isf_packed_header *h) {
    unsigned char *p = packed;
    for (size_t i = 0; i < PACKED_HEADER_BYTES; i++) {
        p[i] = 0;
    }
    isf_put_le(p + HDR_MAGIC, h->magic, 4), isf_put_le(p + HDR_VERSION, h->version, 4),
        isf_put_le(p + HDR_OP, h->op, 4);
    isf_put_le(p + HDR_LAYOUT, h->layout, 4), isf_put_le(p + HDR_VECTOR_BYTES, h->vector_bytes, 4);
    isf_put_le(p + HDR_N, h->n, 8), isf_put_le(p + HDR_K, h->k, 8), isf_put_le(p + HDR_KC, h->kc, 8);
    isf_put_le(p + HDR_PANELS, h->panels, 8);
    isf_put_le(p + HDR_CHECKSUM, header_checksum(p), 8);
}

/* 0 for a header no isf_pack_b of this format wrote: magic, version, checksum, the zero padding, the panels' offset. */
int isf_packed_header_read(const void *packed, isf_packed_header *h) {
    const unsigned char *p = packed;
    *h = (isf_packed_header){(uint32_t)isf_get_le(p + HDR_MAGIC, 4),
                             (uint32_t)isf_get_le(p + HDR_VERSION, 4),
                             (uint32_t)isf_get_le(p + HDR_OP, 4),
                             (uint32_t)isf_get_le(p + HDR_LAYOUT, 4),
                             (uint32_t)isf_get_le(p + HDR_VECTOR_BYTES, 4),
                             isf_get_le(p + HDR_N, 8),
                             isf_get_le(p + HDR_K, 8),
                             isf_get_le(p + HDR_KC, 8),
                             isf_get_le(p + HDR_PANELS, 8)};
    int sealed = isf_get_le(p + HDR_CHECKSUM, 8) == header_checksum(p);
    return h->magic == PACKED_MAGIC && h->version == ISF_PACKED_B_VERSION && sealed &&
           isf_get_le(p + HDR_RESERVED, 4) == 0 && h->panels >= PACKED_HEADER_BYTES &&
           h->panels < PACKED_HEADER_BYTES + PANEL_ALIGN;
}

/* Bytes of the packed panels for n×k: every Kc block holds every NR panel of n. 0 with *ok cleared on overflow.
 * No loop over k: n = 0 with k near SIZE_MAX must answer at once. */
static size_t panels_bytes(const isf_blocking *bl, size_t n, size_t k, int *ok) {
    const isf_pack_spec *ps = &bl->pack;
    size_t full = k / bl->kc, rest = k % bl->kc, per_panel = 0, bytes = 0;
    if (n == 0) {
        return 0;
    }
    if (__builtin_mul_overflow(full, isf_b_panel_stride(ps, bl->kc), &per_panel) ||
        __builtin_add_overflow(per_panel, rest ? isf_b_panel_stride(ps, rest) : 0, &per_panel) ||
        __builtin_mul_overflow(blocks_of(n, ps->nr), per_panel, &bytes)) {
        *ok = 0;
        return 0;
    }
    return bytes;
}

/* A plan's sizes once its packed buffer's are known: n padded, the bias, the kernels' column arrays, the export. */
static int plan_sizes(const isf_blocking *bl, const isf_plan_shape *shape, isf_sizes *s) {
    const isf_op_info *op = &isf_ops[shape->op];
    size_t arrays = 0, data = 0, nr = bl->pack.nr;
    if (!sum_fits(s->n ? s->n : 1, nr - 1, &s->padded)) {
        return 0;
    }
    s->padded = s->padded / nr * nr;
    int ok = product_fits(s->n, op->quantized ? sizeof(int32_t) : op->out_bytes, &s->bias) &&
             product_fits(s->padded, bl->out, &s->kernel_bias) && shape->blocks <= (SIZE_MAX - 4) / 2 &&
             product_fits(4 + 2 * (size_t)shape->blocks, s->padded, &arrays) &&
             product_fits(arrays, sizeof(int32_t), &s->quant_cols);
    if (op->quantized) {
        ok = ok && sum_fits(ISF_QUANT_SCALAR_BYTES, s->quant_cols, &data);
    } else {
        data = shape->bias ? s->bias : 0;
    }
    return ok && sum_fits(ISF_PLAN_HEADER_BYTES, s->extent, &s->export_bytes) &&
           sum_fits(s->export_bytes, data, &s->export_bytes);
}

int isf_sizes_of(const isf_kernel *kern, const isf_packed_header *h, const isf_plan_shape *shape, isf_sizes *s) {
    if (h->n > SIZE_MAX || h->k > SIZE_MAX || h->panels > SIZE_MAX || h->kc == 0 || h->kc > PACKED_KC_MAX ||
        h->kc % kern->kr != 0) {
        return 0; /* Kc checked before planning with it, so that panel strides cannot wrap */
    }
    *s = (isf_sizes){.n = (size_t)h->n, .k = (size_t)h->k, .kc = (size_t)h->kc};
    isf_blocking bl = isf_blocking_of(kern, s->k, (size_t)h->vector_bytes, s->kc);
    int ok = 1;
    size_t panels = panels_bytes(&bl, s->n, s->k, &ok);
    ok = ok && sum_fits((size_t)h->panels, panels, &s->extent);
    return ok && (shape == NULL || plan_sizes(&bl, shape, s));
}

/* Header, then up to PANEL_ALIGN - 1 bytes to align the panels, then the panels; 0 on overflow. */
size_t isf_packed_bytes_for(const isf_kernel *kern, size_t n, size_t k, size_t vector_bytes, size_t kc,
                            const isf_plan_shape *shape) {
    isf_packed_header h = {.vector_bytes = (uint32_t)vector_bytes,
                           .n = n,
                           .k = k,
                           .kc = kc ? kc : isf_blocking_of(kern, k, vector_bytes, 0).kc,
                           .panels = PACKED_HEADER_BYTES + PANEL_ALIGN - 1};
    isf_sizes s;
    return isf_sizes_of(kern, &h, shape, &s) ? s.extent : 0;
}

size_t isf_packed_b_size(isf_op op, size_t n, size_t k) {
    if (!isf_plain_op(op)) {
        return 0;
    }
    /* The largest over every kernel of the op this CPU can run: a cap set or lifted before isf_pack_b (from any
     * thread) changes the selection, never beyond these. Scalable ones at this thread's vector length (the CPU has
     * SVE when they are counted, so reading it is safe). */
    uint32_t cpu = isf_cpu_features();
    size_t most = 0;
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        const isf_kernel *kern = &isf_kernel_table[i];
        if (kern->op != op || (kern->required & ~cpu) != 0) {
            continue;
        }
        size_t bytes = isf_packed_bytes_for(kern, n, k, isf_kernel_vector_bytes(kern), 0, NULL);
        if (bytes == 0) {
            return 0;
        }
        most = bytes > most ? bytes : most;
    }
    return most;
}

isf_status isf_pack_b_with(const isf_kernel *kern, isf_op op, size_t n, size_t k, const void *b, size_t ldb, size_t kc,
                           void *packed, size_t packed_bytes) {
    size_t vector_bytes = isf_kernel_vector_bytes(kern);
    isf_blocking bl = isf_blocking_of(kern, k, vector_bytes, kc);
    int ok = isf_span_fits(k, n, ldb, bl.pack.src_bytes);
    size_t misalign = (uintptr_t)((unsigned char *)packed + PACKED_HEADER_BYTES) % PANEL_ALIGN;
    size_t offset = PACKED_HEADER_BYTES + (misalign ? PANEL_ALIGN - misalign : 0);
    isf_packed_header h = {
        PACKED_MAGIC, ISF_PACKED_B_VERSION, (uint32_t)op, kern->layout.id, (uint32_t)vector_bytes, n, k, bl.kc, offset};
    isf_sizes s;
    if (!ok || !isf_sizes_of(kern, &h, NULL, &s) || s.extent > packed_bytes) {
        return ISF_ERR_INVALID_ARG; /* nothing written */
    }
    unsigned char *dst = (unsigned char *)packed + offset;
    for (size_t pc = 0, depth; n > 0 && pc < k; pc += depth) {
        depth = min_size(bl.kc, k - pc);
        isf_pack_b_panels(&bl.pack, (const unsigned char *)b + pc * ldb * bl.pack.src_bytes, ldb, depth, n, dst);
        dst += blocks_of(n, bl.pack.nr) * isf_b_panel_stride(&bl.pack, depth);
    }
    write_header(packed, &h);
    return ISF_OK;
}

isf_status isf_pack_b(isf_op op, size_t n, size_t k, const void *b, size_t ldb, void *packed, size_t packed_bytes) {
    if (!isf_plain_op(op) || packed == NULL || (n && k && (b == NULL || ldb < n))) {
        return ISF_ERR_INVALID_ARG;
    }
    const isf_selection *sel = isf_selection_enter();
    const isf_kernel *kern = isf_kernel_for_columns(sel, op, n);
    isf_status st =
        kern == NULL ? ISF_ERR_UNSUPPORTED : isf_pack_b_with(kern, op, n, k, b, ldb, 0, packed, packed_bytes);
    isf_selection_leave(sel);
    return st;
}

/* The kernel that reads the buffer's layout at this thread's vector length: `prefer` if it does, else the most
 * preferred of the op that the selection's features can run. NULL: none does. */
const isf_kernel *isf_packed_reader(const isf_packed_header *h, const isf_selection *sel, const isf_kernel *prefer) {
    isf_op op = (isf_op)h->op;
    const isf_kernel *best = NULL;
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        const isf_kernel *kern = &isf_kernel_table[i];
        /* Runnable first: reading a scalable kernel's vector length executes an SVE instruction. */
        if (kern->op != op || (kern->required & ~sel->active) != 0 || kern->layout.id != h->layout ||
            isf_kernel_vector_bytes(kern) != h->vector_bytes) {
            continue;
        }
        if (kern == prefer) {
            return kern;
        }
        best = best != NULL ? best : kern; /* the table lists the most preferred first */
    }
    return best;
}
