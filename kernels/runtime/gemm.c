/* The GEMM driver, after MegEngine: block k (Kc) and n (Nc) so the packed panels stay in L1/L2, pack A and B so
 * the micro-kernel reads contiguously, and hand edge tiles to the same kernel through a scratch tile. Compiled at
 * the architecture baseline: no variant flags reach this file. */
#include <stdlib.h>
#include <string.h>

#include "isf_internal.h"

enum {
    PANEL_ALIGN = 64,
    L1_BUDGET = 16 * 1024,  /* half of a 32 KiB L1D for one A and one B micro-panel */
    L2_BUDGET = 256 * 1024, /* B block of Kc×Nc */
    MC_ROWS = 64,
};

typedef struct {
    size_t mr, nr, kr, in, out;
    size_t kc, nc, mc;
} blocking;

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }
static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

static blocking plan(const isf_kernel_info *kern) {
    blocking bl = {kern->mr, kern->nr, kern->kr, isf_ops[kern->op].in_bytes, isf_ops[kern->op].out_bytes, 0, 0, 0};
    size_t kc = L1_BUDGET / (bl.in * (bl.mr + bl.nr));
    bl.kc = kc < bl.kr ? bl.kr : kc / bl.kr * bl.kr;
    size_t nc = L2_BUDGET / (bl.kc * bl.in);
    bl.nc = nc < bl.nr ? bl.nr : nc / bl.nr * bl.nr;
    bl.mc = round_up(MC_ROWS, bl.mr);
    return bl;
}

/* A rows [0, rows) × k [0, depth) → [depth/KR][MR][KR] per MR-row panel, zero-padded. */
static void pack_a(const blocking *bl, const unsigned char *a, size_t lda, size_t rows, size_t depth,
                   unsigned char *dst) {
    size_t kblocks = (depth + bl->kr - 1) / bl->kr;
    size_t panel_bytes = kblocks * bl->mr * bl->kr * bl->in;
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
    size_t kblocks = (depth + bl->kr - 1) / bl->kr;
    size_t panel_bytes = kblocks * bl->nr * bl->kr * bl->in;
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

typedef struct {
    size_t m, n, k;
    const unsigned char *a;
    size_t lda;
    const unsigned char *b;
    size_t ldb;
    unsigned char *c;
    size_t ldc;
} gemm_args;

static void macro_tile(const isf_kernel_info *kern, const blocking *bl, const gemm_args *g, size_t ic, size_t jc,
                       size_t rows, size_t cols, size_t depth, int accumulate, const unsigned char *apack,
                       const unsigned char *bpack, unsigned char *scratch) {
    size_t kblocks = (depth + bl->kr - 1) / bl->kr;
    size_t a_panel = kblocks * bl->mr * bl->kr * bl->in;
    size_t b_panel = kblocks * bl->nr * bl->kr * bl->in;
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

static isf_status run_gemm(const isf_kernel_info *kern, const gemm_args *g) {
    blocking bl = plan(kern);
    size_t kc_pad = round_up(bl.kc, bl.kr);
    size_t a_bytes = round_up(round_up(bl.mc, bl.mr) * kc_pad * bl.in, PANEL_ALIGN);
    size_t b_bytes = round_up(round_up(bl.nc, bl.nr) * kc_pad * bl.in, PANEL_ALIGN);
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
            pack_b(&bl, g->b + (pc * g->ldb + jc) * bl.in, g->ldb, depth, cols, bpack);
            for (size_t ic = 0; ic < g->m; ic += bl.mc) {
                size_t rows = min_size(bl.mc, g->m - ic);
                pack_a(&bl, g->a + (ic * g->lda + pc) * bl.in, g->lda, rows, depth, apack);
                macro_tile(kern, &bl, g, ic, jc, rows, cols, depth, pc > 0, apack, bpack, scratch);
            }
        }
    }
    free(work);
    return ISF_OK;
}

/* Bytes spanned by a rows×cols matrix with leading dimension ld, or 0 with *ok cleared when it overflows. */
static size_t span_bytes(size_t rows, size_t cols, size_t ld, size_t elem, int *ok) {
    if (rows == 0 || cols == 0) {
        return 0;
    }
    size_t max_elems = SIZE_MAX / elem;
    if (ld != 0 && rows - 1 > (max_elems - cols) / ld) {
        *ok = 0;
        return 0;
    }
    return ((rows - 1) * ld + cols) * elem;
}

static isf_status check_args(isf_op op, const gemm_args *g) {
    size_t in = isf_ops[op].in_bytes, out = isf_ops[op].out_bytes;
    int needs_a = g->m && g->k, needs_b = g->k && g->n, needs_c = g->m && g->n;
    if ((needs_a && g->a == NULL) || (needs_b && g->b == NULL) || (needs_c && g->c == NULL)) {
        return ISF_ERR_INVALID_ARG;
    }
    if ((needs_a && g->lda < g->k) || (needs_b && g->ldb < g->n) || (needs_c && g->ldc < g->n)) {
        return ISF_ERR_INVALID_ARG;
    }
    int ok = 1;
    span_bytes(g->m, g->k, g->lda, in, &ok);
    span_bytes(g->k, g->n, g->ldb, in, &ok);
    span_bytes(g->m, g->n, g->ldc, out, &ok);
    return ok ? ISF_OK : ISF_ERR_INVALID_ARG;
}

static isf_status gemm(isf_op op, const gemm_args *g) {
    isf_status st = check_args(op, g);
    if (st != ISF_OK || g->m == 0 || g->n == 0) {
        return st;
    }
    if (g->k == 0) {
        for (size_t r = 0; r < g->m; r++) {
            memset(g->c + r * g->ldc * isf_ops[op].out_bytes, 0, g->n * isf_ops[op].out_bytes);
        }
        return ISF_OK;
    }
    const isf_kernel_info *kern = isf_selected_kernel(op);
    return kern == NULL ? ISF_ERR_UNSUPPORTED : run_gemm(kern, g);
}

isf_status isf_gemm_f32(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                        float *c, size_t ldc) {
    gemm_args g = {m, n, k, (const unsigned char *)a, lda, (const unsigned char *)b, ldb, (unsigned char *)c, ldc};
    return gemm(ISF_OP_GEMM_F32, &g);
}

isf_status isf_gemm_s8(size_t m, size_t n, size_t k, const int8_t *a, size_t lda, const int8_t *b, size_t ldb,
                       int32_t *c, size_t ldc) {
    gemm_args g = {m, n, k, (const unsigned char *)a, lda, (const unsigned char *)b, ldb, (unsigned char *)c, ldc};
    return gemm(ISF_OP_GEMM_S8, &g);
}
