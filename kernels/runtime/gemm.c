/* The GEMM driver, after MegEngine: block k (Kc) and n (Nc) so the packed panels stay in L1/L2, pack A and B so
 * the micro-kernel reads contiguously, and hand edge tiles to the same kernel through a scratch tile. B may come
 * pre-packed (weights packed once at model load). Compiled at the architecture baseline: no variant flags here. */
#include <stdlib.h>
#include <string.h>

#include "isf_internal.h"

enum {
    PANEL_ALIGN = 64,
    L1_BUDGET = 16 * 1024,  /* half of a 32 KiB L1D for one A and one B micro-panel */
    L2_BUDGET = 256 * 1024, /* B block of Kc×Nc */
    MC_ROWS = 64,
    PACKED_MAGIC = 0x42465349u, /* "ISFB" */
};

typedef struct {
    size_t mr, nr, kr, in, out;
    size_t kc, nc, mc;
} blocking;

/* What a packed B buffer was packed for; checked before it is used. */
typedef struct {
    uint32_t magic, op, kernel, vector_bytes;
    uint64_t n, k, kc, nr;
    uint64_t panels; /* offset of the panels from the buffer start: the first 64-byte boundary after the header */
} packed_header;

#define PACKED_HEADER_BYTES ((sizeof(packed_header) + PANEL_ALIGN - 1) / PANEL_ALIGN * PANEL_ALIGN)

typedef struct {
    size_t m, n, k;
    const unsigned char *a;
    size_t lda;
    const unsigned char *b;
    size_t ldb;
    unsigned char *c;
    size_t ldc;
    const unsigned char *packed_b; /* NULL: pack B here */
} gemm_args;

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }
static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t blocks_of(size_t depth, size_t kr) { return (depth + kr - 1) / kr; }

/* Bytes from one MR-row (or NR-column) panel to the next: padded so every panel starts 64-byte aligned. */
static size_t panel_stride(const blocking *bl, size_t depth, size_t width) {
    return round_up(blocks_of(depth, bl->kr) * width * bl->kr * bl->in, PANEL_ALIGN);
}

static blocking plan(const isf_kernel_info *kern, size_t k) {
    const isf_op_info *op = &isf_ops[kern->op];
    blocking bl = {kern->mr, isf_kernel_nr(kern), kern->kr, op->in_bytes, op->out_bytes, 0, 0, 0};
    size_t kc = L1_BUDGET / (bl.in * (bl.mr + bl.nr));
    bl.kc = op->whole_k ? round_up(k, bl.kr) : kc < bl.kr ? bl.kr : kc / bl.kr * bl.kr;
    size_t nc = L2_BUDGET / (min_size(bl.kc, round_up(k, bl.kr)) * bl.in);
    bl.nc = nc < bl.nr ? bl.nr : nc / bl.nr * bl.nr;
    bl.mc = round_up(MC_ROWS, bl.mr);
    return bl;
}

/* A rows [0, rows) × k [0, depth) → [depth/KR][MR][KR] per MR-row panel, zero-padded. */
static void pack_a(const blocking *bl, const unsigned char *a, size_t lda, size_t rows, size_t depth,
                   unsigned char *dst) {
    size_t kblocks = blocks_of(depth, bl->kr);
    size_t panel_bytes = panel_stride(bl, depth, bl->mr);
    for (size_t r0 = 0; r0 < rows; r0 += bl->mr, dst += panel_bytes) {
        memset(dst, 0, panel_bytes);
        for (size_t r = 0; r < bl->mr && r0 + r < rows; r++) {
            const unsigned char *row = a + (r0 + r) * lda * bl->in;
            for (size_t kb = 0; kb < kblocks; kb++) {
                size_t k0 = kb * bl->kr;
                size_t len = min_size(bl->kr, depth - k0);
                memcpy(dst + ((kb * bl->mr + r) * bl->kr) * bl->in, row + k0 * bl->in, len * bl->in);
            }
        }
    }
}

/* B k [0, depth) × columns [0, cols) → [depth/KR][NR][KR] per NR-column panel, zero-padded. */
static void pack_b(const blocking *bl, const unsigned char *b, size_t ldb, size_t depth, size_t cols,
                   unsigned char *dst) {
    size_t panel_bytes = panel_stride(bl, depth, bl->nr);
    for (size_t c0 = 0; c0 < cols; c0 += bl->nr, dst += panel_bytes) {
        memset(dst, 0, panel_bytes);
        size_t width = min_size(bl->nr, cols - c0);
        for (size_t kk = 0; kk < depth; kk++) {
            const unsigned char *src = b + (kk * ldb + c0) * bl->in;
            unsigned char *out = dst + ((kk / bl->kr) * bl->nr * bl->kr + kk % bl->kr) * bl->in;
            for (size_t j = 0; j < width; j++) {
                memcpy(out + j * bl->kr * bl->in, src + j * bl->in, bl->in);
            }
        }
    }
}

/* Edge tiles: the kernel writes a full MR×NR scratch tile; only the valid part reaches C. */
static void edge_tile(const isf_kernel_info *kern, const blocking *bl, size_t kblocks, const unsigned char *ap,
                      const unsigned char *bp, unsigned char *c, size_t ldc, size_t rows, size_t cols,
                      int accumulate, unsigned char *scratch) {
    size_t row_bytes = cols * bl->out;
    memset(scratch, 0, bl->mr * bl->nr * bl->out);
    for (size_t r = 0; accumulate && r < rows; r++) {
        memcpy(scratch + r * bl->nr * bl->out, c + r * ldc * bl->out, row_bytes);
    }
    kern->fn(kblocks, ap, bp, scratch, bl->nr, accumulate);
    for (size_t r = 0; r < rows; r++) {
        memcpy(c + r * ldc * bl->out, scratch + r * bl->nr * bl->out, row_bytes);
    }
}

static void macro_tile(const isf_kernel_info *kern, const blocking *bl, const gemm_args *g, size_t ic, size_t jc,
                       size_t rows, size_t cols, size_t depth, int accumulate, const unsigned char *apack,
                       const unsigned char *bpack, unsigned char *scratch) {
    size_t kblocks = blocks_of(depth, bl->kr);
    size_t a_panel = panel_stride(bl, depth, bl->mr);
    size_t b_panel = panel_stride(bl, depth, bl->nr);
    for (size_t jr = 0; jr < cols; jr += bl->nr) {
        for (size_t ir = 0; ir < rows; ir += bl->mr) {
            const unsigned char *ap = apack + ir / bl->mr * a_panel;
            const unsigned char *bp = bpack + jr / bl->nr * b_panel;
            unsigned char *ct = g->c + ((ic + ir) * g->ldc + jc + jr) * bl->out;
            size_t tr = min_size(bl->mr, rows - ir), tc = min_size(bl->nr, cols - jr);
            if (tr == bl->mr && tc == bl->nr) {
                kern->fn(kblocks, ap, bp, ct, g->ldc, accumulate);
            } else {
                edge_tile(kern, bl, kblocks, ap, bp, ct, g->ldc, tr, tc, accumulate, scratch);
            }
        }
    }
}

/* Where the packed panels of k block [pc, pc + depth) and columns from jc start: blocks are stored one after the
 * other, each holding every NR panel of n; every block but the last is Kc deep. */
static const unsigned char *packed_block(const blocking *bl, const unsigned char *panels, size_t n, size_t pc,
                                         size_t depth, size_t jc) {
    size_t n_panels = blocks_of(n, bl->nr);
    size_t before = pc / bl->kc * n_panels * panel_stride(bl, bl->kc, bl->nr);
    return panels + before + jc / bl->nr * panel_stride(bl, depth, bl->nr);
}

static isf_status run_gemm(const isf_kernel_info *kern, const gemm_args *g) {
    blocking bl = plan(kern, g->k);
    size_t kc_max = min_size(bl.kc, g->k);
    size_t a_bytes = blocks_of(min_size(bl.mc, g->m), bl.mr) * panel_stride(&bl, kc_max, bl.mr);
    /* A pre-packed buffer moved to an address with another alignment is read through aligned scratch. */
    int copy_packed = g->packed_b != NULL && (uintptr_t)g->packed_b % PANEL_ALIGN != 0;
    size_t b_need = g->packed_b == NULL || copy_packed;
    size_t b_bytes = b_need ? blocks_of(min_size(bl.nc, g->n), bl.nr) * panel_stride(&bl, kc_max, bl.nr) : 0;
    size_t s_bytes = round_up(bl.mr * bl.nr * bl.out, PANEL_ALIGN);
    unsigned char *work = aligned_alloc(PANEL_ALIGN, a_bytes + b_bytes + s_bytes);
    if (work == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    unsigned char *apack = work, *bpack = work + a_bytes, *scratch = bpack + b_bytes;
    for (size_t jc = 0; jc < g->n; jc += bl.nc) {
        size_t cols = min_size(bl.nc, g->n - jc);
        for (size_t pc = 0; pc < g->k; pc += bl.kc) {
            size_t depth = min_size(bl.kc, g->k - pc);
            const unsigned char *bp = bpack;
            if (g->packed_b != NULL) {
                bp = packed_block(&bl, g->packed_b, g->n, pc, depth, jc);
                if (copy_packed) {
                    memcpy(bpack, bp, blocks_of(cols, bl.nr) * panel_stride(&bl, depth, bl.nr));
                    bp = bpack;
                }
            } else {
                pack_b(&bl, g->b + (pc * g->ldb + jc) * bl.in, g->ldb, depth, cols, bpack);
            }
            for (size_t ic = 0; ic < g->m; ic += bl.mc) {
                size_t rows = min_size(bl.mc, g->m - ic);
                pack_a(&bl, g->a + (ic * g->lda + pc) * bl.in, g->lda, rows, depth, apack);
                macro_tile(kern, &bl, g, ic, jc, rows, cols, depth, pc > 0, apack, bp, scratch);
            }
        }
    }
    free(work);
    return ISF_OK;
}

/* 0 with *ok cleared when rows×cols with leading dimension ld, in elem-byte elements, overflows size_t. */
static void check_span(size_t rows, size_t cols, size_t ld, size_t elem, int *ok) {
    if (rows == 0 || cols == 0) {
        return;
    }
    size_t max_elems = SIZE_MAX / elem;
    if (cols > max_elems || (ld != 0 && rows - 1 > (max_elems - cols) / ld)) {
        *ok = 0;
    }
}

static isf_status check_args(isf_op op, const gemm_args *g) {
    size_t in = isf_ops[op].in_bytes, out = isf_ops[op].out_bytes;
    int needs_a = g->m && g->k, needs_b = g->k && g->n && g->packed_b == NULL, needs_c = g->m && g->n;
    if ((needs_a && g->a == NULL) || (needs_b && g->b == NULL) || (needs_c && g->c == NULL)) {
        return ISF_ERR_INVALID_ARG;
    }
    if ((needs_a && g->lda < g->k) || (needs_b && g->ldb < g->n) || (needs_c && g->ldc < g->n)) {
        return ISF_ERR_INVALID_ARG;
    }
    int ok = 1;
    check_span(g->m, g->k, g->lda, in, &ok);
    check_span(g->k, g->n, needs_b ? g->ldb : g->n, in, &ok);
    check_span(g->m, g->n, g->ldc, out, &ok);
    return ok ? ISF_OK : ISF_ERR_INVALID_ARG;
}

static void zero_c(isf_op op, const gemm_args *g) {
    for (size_t r = 0; r < g->m; r++) {
        memset(g->c + r * g->ldc * isf_ops[op].out_bytes, 0, g->n * isf_ops[op].out_bytes);
    }
}

/* `kern` is the kernel to run; NULL: the one selected now. */
static isf_status gemm_with(isf_op op, const gemm_args *g, const isf_kernel_info *kern) {
    isf_status st = check_args(op, g);
    if (st != ISF_OK || g->m == 0 || g->n == 0) {
        return st;
    }
    if (g->k == 0) {
        zero_c(op, g);
        return ISF_OK;
    }
    kern = kern != NULL ? kern : isf_selected_kernel(op);
    return kern == NULL ? ISF_ERR_UNSUPPORTED : run_gemm(kern, g);
}

static isf_status gemm(isf_op op, const gemm_args *g) { return gemm_with(op, g, NULL); }

isf_status isf_gemm_f32(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                        float *c, size_t ldc) {
    gemm_args g = {m, n, k, (const void *)a, lda, (const void *)b, ldb, (void *)c, ldc, NULL};
    return gemm(ISF_OP_GEMM_F32, &g);
}

isf_status isf_gemm_f16(size_t m, size_t n, size_t k, const uint16_t *a, size_t lda, const uint16_t *b, size_t ldb,
                        uint16_t *c, size_t ldc) {
    gemm_args g = {m, n, k, (const void *)a, lda, (const void *)b, ldb, (void *)c, ldc, NULL};
    return gemm(ISF_OP_GEMM_F16, &g);
}

isf_status isf_gemm_bf16(size_t m, size_t n, size_t k, const uint16_t *a, size_t lda, const uint16_t *b,
                         size_t ldb, float *c, size_t ldc) {
    gemm_args g = {m, n, k, (const void *)a, lda, (const void *)b, ldb, (void *)c, ldc, NULL};
    return gemm(ISF_OP_GEMM_BF16, &g);
}

isf_status isf_gemm_s8(size_t m, size_t n, size_t k, const int8_t *a, size_t lda, const int8_t *b, size_t ldb,
                       int32_t *c, size_t ldc) {
    gemm_args g = {m, n, k, (const void *)a, lda, (const void *)b, ldb, (void *)c, ldc, NULL};
    return gemm(ISF_OP_GEMM_S8, &g);
}

/* ---- pre-packed B ------------------------------------------------------------------------------------------ */

/* Bytes of the packed panels for n×k, or 0 with *ok cleared on overflow. */
static size_t panels_bytes(const blocking *bl, size_t n, size_t k, int *ok) {
    /* Bound first, generously (each panel pads at most 64 bytes), so the exact sum below cannot overflow. */
    size_t width = round_up(n, bl->nr), depth = round_up(k, bl->kr), slack = PANEL_ALIGN * (bl->kr + 1);
    if (width < n || depth < k || (depth != 0 && width > (SIZE_MAX / 2) / depth / bl->in / slack)) {
        *ok = 0;
        return 0;
    }
    size_t bytes = 0;
    for (size_t pc = 0; pc < k; pc += bl->kc) {
        bytes += blocks_of(n, bl->nr) * panel_stride(bl, min_size(bl->kc, k - pc), bl->nr);
    }
    return bytes;
}

size_t isf_packed_b_size(isf_op op, size_t n, size_t k) {
    const isf_kernel_info *kern = (unsigned)op < isf_op_count ? isf_selected_kernel(op) : NULL;
    if (kern == NULL) {
        return 0;
    }
    blocking bl = plan(kern, k);
    int ok = 1;
    size_t bytes = panels_bytes(&bl, n, k, &ok);
    size_t overhead = PACKED_HEADER_BYTES + PANEL_ALIGN - 1; /* header, then slack to align the panels */
    return ok && bytes <= SIZE_MAX - overhead ? bytes + overhead : 0;
}

isf_status isf_pack_b(isf_op op, size_t n, size_t k, const void *b, size_t ldb, void *packed) {
    if ((unsigned)op >= isf_op_count || packed == NULL || (n && k && (b == NULL || ldb < n))) {
        return ISF_ERR_INVALID_ARG;
    }
    const isf_kernel_info *kern = isf_selected_kernel(op);
    if (kern == NULL) {
        return ISF_ERR_UNSUPPORTED;
    }
    blocking bl = plan(kern, k);
    int ok = 1;
    panels_bytes(&bl, n, k, &ok);
    check_span(k, n, ldb, bl.in, &ok);
    if (!ok) {
        return ISF_ERR_INVALID_ARG;
    }
    size_t misalign = (uintptr_t)((unsigned char *)packed + PACKED_HEADER_BYTES) % PANEL_ALIGN;
    size_t offset = PACKED_HEADER_BYTES + (misalign ? PANEL_ALIGN - misalign : 0);
    packed_header h = {PACKED_MAGIC, (uint32_t)op, (uint32_t)(kern - isf_kernels), (uint32_t)isf_vector_bytes(), n,
                       k, bl.kc, bl.nr, offset};
    unsigned char *dst = (unsigned char *)packed + offset;
    for (size_t pc = 0; pc < k; pc += bl.kc) {
        size_t depth = min_size(bl.kc, k - pc);
        pack_b(&bl, (const unsigned char *)b + pc * ldb * bl.in, ldb, depth, n, dst);
        dst += blocks_of(n, bl.nr) * panel_stride(&bl, depth, bl.nr);
    }
    memcpy(packed, &h, sizeof h);
    return ISF_OK;
}

isf_status isf_gemm_packed(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda,
                           const void *packed_b, void *c, size_t ldc) {
    if ((unsigned)op >= isf_op_count || packed_b == NULL) {
        return ISF_ERR_INVALID_ARG;
    }
    packed_header h;
    memcpy(&h, packed_b, sizeof h);
    if (h.magic != PACKED_MAGIC || h.op != (uint32_t)op || h.n != n || h.k != k ||
        h.panels < PACKED_HEADER_BYTES || h.panels >= PACKED_HEADER_BYTES + PANEL_ALIGN) {
        return ISF_ERR_INVALID_ARG;
    }
    const isf_kernel_info *kern = isf_selected_kernel(op);
    if (kern == NULL || h.kernel != (uint32_t)(kern - isf_kernels) || h.vector_bytes != isf_vector_bytes()) {
        return ISF_ERR_UNSUPPORTED; /* packed for another kernel or vector length: repack */
    }
    gemm_args g = {m, n, k, a, lda, NULL, n, c, ldc, (const unsigned char *)packed_b + h.panels};
    return gemm_with(op, &g, kern);
}
