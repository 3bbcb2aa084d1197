/* A plan (isaforge.h) as its files share it: plan.c creates and runs it, plan_file.c exports and imports it,
 * quant.c sets up the quantized ops' columns. */
#ifndef ISAFORGE_PLAN_H
#define ISAFORGE_PLAN_H

#include <float.h>
#include <math.h>

#include "isf_driver.h"

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

/* The quantized ops' fp32 operands (bias, clamp bounds) are normal or zero: AArch32's NEON reads a subnormal one
 * as 0, and the other kernels would not. */
static inline int subnormal(float x) { return x != 0.0f && fabsf(x) < FLT_MIN; }

/* Every scale the kernels multiply by is a finite normal float: a subnormal one is 0 to AArch32's NEON, and an
 * infinite s makes acc + bias = 0 a NaN, which the kernels round to different bytes. NaN fails both tests. */
static inline int good_scale(float s) { return s >= FLT_MIN && s <= FLT_MAX; }
static inline int int8_zero_point(int32_t zp) { return zp >= -128 && zp <= 127; }

/* The weights of a quantized plan as int8 W[k][n] (weights_kn's, or the descriptor's own), for the column sums. */
typedef struct {
    const int8_t *w;
    size_t ld;
} weights_view;

/* plan.c: what create and import share. */
isf_status isf_plan_check_clamp(const isf_gemm_desc *d);
void isf_plan_set_tiles(isf_gemm *g);
/* The kernels' epilogue from the plan's bias and bounds. NO_MEMORY leaves the plan as it was. */
isf_status isf_plan_set_epilogue(isf_gemm *g);
void isf_plan_free(isf_gemm *g);

/* quant.c: the quantized ops' parameters. */
isf_status isf_quant_check(const isf_gemm_desc *d);
/* Blocks of k with a scale each (gemm_qd8_f32_qc4w with w_block < k), 0 for scales per column or tensor. */
size_t isf_quant_scale_blocks(const isf_gemm_desc *d);
/* The steps a quantized plan of this op and flags has (isf_epilogue's; OUT_BIAS optional for the dynamic ops). */
uint32_t isf_quant_steps(isf_op op, uint32_t flags);
isf_status isf_quant_set_epilogue(const isf_gemm_desc *d, weights_view v, isf_gemm *g);
void isf_quant_point_columns(isf_gemm *g);
isf_status isf_quant_check_columns(const isf_gemm *g);

#endif
