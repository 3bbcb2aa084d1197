/* What the driver's files share: driver.c (the blocking and the blocked loop), tiles.c (the macro tile),
 * epilogue_alone.c (k = 0), packed_weights.c (the packed-B format), gemm.c (the one-call API) and plan.c (the
 * plans' runs, through regions). */
#ifndef ISAFORGE_DRIVER_H
#define ISAFORGE_DRIVER_H

#include "isf_internal.h"
#include "isf_size_arith.h"

enum {
    PACKED_HEADER_BYTES = 64, /* a packed B's header (isaforge.h): its fields, then zeros up to here */
    ISF_PLAN_TILE_COLS = 128, /* a plan tile's columns, rounded down to NR (at least NR): its regions' widest */
};

typedef struct {
    isf_pack_spec pack;
    size_t out;        /* bytes of one element the kernel writes */
    size_t c_out;      /* bytes of one element of C (binary16 C from a widened fp32 kernel: out 4, c_out 2) */
    size_t bias_bytes; /* of one bias value: the output's, int32 for the quantized ops (their sums' type) */
    size_t kc, nc, mc;
    size_t b_depth[2], b_stride[2]; /* one B panel's bytes at the depths k's blocks have: most (Kc), the last */
} isf_blocking;

/* One B panel's bytes at `depth` deep, without isf_b_panel_stride's divisions at the depths of k's blocks. */
static inline size_t isf_b_stride(const isf_blocking *bl, size_t depth) {
    return depth == bl->b_depth[0]   ? bl->b_stride[0]
           : depth == bl->b_depth[1] ? bl->b_stride[1]
                                     : isf_b_panel_stride(&bl->pack, depth);
}

/* The blocking of one call: Kc from L1 (or `fixed_kc`, a pre-packed B's, when not 0) and Nc from L2 for that Kc
 * (bounded whatever m, n and k are, so the work buffer is too), for the vector length the calling thread has now. */
isf_blocking isf_blocking_of(const isf_kernel *kern, size_t k, size_t vector_bytes, size_t fixed_kc);

/* Blockwise weight scales (gemm_qd8_f32_qc4w, isaforge.h): the plan packs with Kc = the scale block, and each Kc
 * block's sums become fp32 through its own column arrays (ROW_OFFSET, TO_F32, ROW_SCALE: t = ((float)acc · scale_i)
 * · w_scale[j][b]), added to C left to right; the last block then adds the bias and clamps (ep's). */
typedef struct {
    const int32_t *col_sum; /* block b's at col_sum + b · stride, from B's column 0 */
    const float *col_scale; /* likewise */
    size_t stride;          /* n rounded up to NR */
} isf_blockwise;

/* What the driver (driver.c) computes: rows × cols of C (c at its first element, ldc in C's elements) from the same
 * rows of A (a at their first element, lda in A's elements) and columns [col, col + cols) of B, all of k. B is given
 * (b, ldb in elements: packed block by block as the driver goes), or pre-packed (panels: the first panel of a packed
 * buffer; col then a multiple of NR). */
typedef struct {
    const unsigned char *a;
    size_t lda;
    const unsigned char *b; /* NULL when pre-packed */
    size_t ldb;
    const unsigned char *panels; /* NULL when B is given */
    unsigned char *c;
    size_t ldc;
    size_t rows, col, cols;
    int accumulate;                 /* C += A·B: C read once */
    const isf_epilogue *ep;         /* with the last k block; its bias and column arrays from B's column 0 */
    const isf_blockwise *blockwise; /* gemm_qd8_f32_qc4w with scales per block of k; NULL: per column */
} isf_region;

/* The operands of a call or a run of `op` with k, r->rows and r->cols (gemm.c): ISF_ERR_INVALID_ARG for a NULL
 * operand that would be read, a leading dimension shorter than its row whatever the sizes (isaforge.h), or a span
 * past size_t. B is checked only when given. */
isf_status isf_check_operands(isf_op op, size_t k, const isf_region *r);

/* The kernels that take the last rows a full kernel would pad (m below MR, m % MR), reading its B panels: of its
 * variant, fewer rows (a few-row kernel, a row kernel with MR = 1) and lower preference, the most preferred of each
 * MR; isa.toml's `tail_rows` says how many rows each takes (driver.c, next_chunk). */
enum { ISF_TAIL_KERNELS = 2 };
typedef struct {
    const isf_kernel *kern[ISF_TAIL_KERNELS];
    size_t count;
} isf_tails;

/* The blocking of `kern` on h's pre-packed B (its Kc and vector length): what the two below take, computed once by
 * a run for all its regions. */
static inline isf_blocking isf_region_blocking(const isf_kernel *kern, const isf_packed_header *h) {
    return isf_blocking_of(kern, (size_t)h->k, (size_t)h->vector_bytes, (size_t)h->kc);
}
/* 1 when isf_gemm_region's stack buffers hold what `kern` (blocked as `bl`, isf_region_blocking's) needs for regions
 * of up to `rows` rows × `cols` columns, with `tails` (isf_tail_kernels', or NULL) for the rows it would pad; rows =
 * MR holds for any number of rows. */
int isf_region_fits(const isf_kernel *kern, const isf_blocking *bl, const isf_tails *tails, const isf_packed_header *h,
                    size_t rows, size_t cols);
/* Runs a region of pre-packed B with `kern` (runnable, reading h's layout at this thread's vector length; blocked as
 * `bl`, isf_region_blocking's) and, for the rows it would pad, `tails` (isf_tail_kernels', or NULL). Allocates
 * nothing. */
void isf_gemm_region(const isf_kernel *kern, const isf_blocking *bl, const isf_tails *tails, const isf_packed_header *h,
                     const isf_region *r);
/* The kernel for a GEMM of op with n columns: the selection's, or one of its column siblings (same variant, op, MR,
 * KR, scalability and widening; other NR) that pads n to fewer columns by at least the selection's kernel's
 * column_margin (the fewest; the most preferred of equals). A kernel chosen by name stays. */
const isf_kernel *isf_kernel_for_columns(const isf_selection *sel, isf_op op, size_t n);
/* The tail kernels of `full` that `sel` can run. */
isf_tails isf_tail_kernels(const isf_kernel *full, const isf_selection *sel);

/* Where one macro tile writes: a row-major block of elements of the kernel's output type. */
typedef struct {
    unsigned char *c;
    size_t ldc;
} isf_c_block;

/* Moves `e` to the tiles `cols` columns to its right: the column arrays (and the partial sums) move with them. */
static inline void isf_epilogue_step(isf_epilogue *e, size_t cols, size_t bias_bytes) {
    if (e->bias != NULL) {
        e->bias = (const unsigned char *)e->bias + cols * bias_bytes;
    }
    if (e->steps & ~(uint32_t)(ISF_EPILOGUE_BIAS | ISF_EPILOGUE_CLAMP)) {
        e->partial = e->partial != NULL ? e->partial + cols : NULL;
        e->col_sum = e->col_sum != NULL ? e->col_sum + cols : NULL;
        e->col_scale = e->col_scale != NULL ? e->col_scale + cols : NULL;
        e->out_bias = e->out_bias != NULL ? e->out_bias + cols : NULL;
    }
}

/* The epilogue of the tiles `cols` columns to the right of ep's. */
static inline isf_epilogue isf_epilogue_across(const isf_epilogue *ep, size_t cols, size_t bias_bytes) {
    isf_epilogue e = *ep;
    isf_epilogue_step(&e, cols, bias_bytes);
    return e;
}

/* rows × cols of `dst` from packed A (rows) and packed B (cols), all of their depth k: the full tiles straight into
 * it, then the edge row and column of tiles through the scratch tile (MR × NR of the kernel's output type). */
void isf_macro_tile(const isf_kernel *kern, const isf_blocking *bl, isf_c_block dst, size_t rows, size_t cols,
                    size_t depth, int accumulate, const isf_epilogue *ep, const unsigned char *apack,
                    const unsigned char *bpack, unsigned char *scratch);

/* What the kernels get for every k block but the last: store the sums as they are. */
extern const isf_epilogue isf_no_epilogue;

/* A whole call of `kern` over all of r's rows and columns and k > 0, B given (r->b) or pre-packed with Kc `kc`
 * (r->panels), and `tails` (isf_tail_kernels', or NULL) for the rows it would pad, as a plan's run has them, in a
 * work buffer of its own: ISF_ERR_NO_MEMORY when there is none. */
isf_status isf_run_gemm(const isf_kernel *kern, const isf_tails *tails, size_t k, size_t kc, const isf_region *r);
/* k = 0 has no panels: A·B is zero, only the region's epilogue is left (its bias values of bias_bytes each). */
void isf_epilogue_alone(isf_op op, size_t bias_bytes, const isf_region *r);

/* The quantized ops take isf_quant_params: their bias is int32 (the sums' type) or fp32 (gemm_qd8_f32's C). */
static inline int isf_op_quantized(isf_op op) { return isf_ops[op].quantized; }

/* Its activations are fp32, quantized per row at run time (gemm_qd8_f32, gemm_qd8_f32_qc4w). */
static inline int isf_op_dynamic(isf_op op) { return isf_op_quantized(op) && isf_ops[op].in_kind == ISF_ELEM_FLOAT; }

/* ISF_EPILOGUE_SMALL_SUMS for a dynamically quantized op's sums over `depth` k steps (ROW_OFFSET in): each term
 * (a − zp) · w has |a − zp| ≤ 255 (an int8 value and zero point) and |w| ≤ 128 (8 for int4 weights), so the sums
 * stay inside ±2^22 while depth · 255 · 128 (or · 8) does: k ≤ 128 for int8 weights, 2056 for int4. */
static inline uint32_t isf_small_sums(isf_op op, size_t depth) {
    size_t per_step = 255u * (isf_ops[op].w_bits == 4 ? 8u : 128u);
    return isf_op_dynamic(op) && depth <= (((size_t)1 << 22) - 1) / per_step ? (uint32_t)ISF_EPILOGUE_SMALL_SUMS : 0u;
}

/* An op of the one-call entry points: the quantized ones need their parameters, so plans only. */
static inline int isf_plain_op(isf_op op) { return (unsigned)op < isf_op_count && isf_ops[op].plain; }

#endif
