/* Internal contract between the runtime, the generated catalogue tables and the micro-kernels. */
#ifndef ISAFORGE_INTERNAL_H
#define ISAFORGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "isaforge/isaforge.h"
#include "isf_epilogue_offsets.h"

/*
 * Micro-kernel ABI. Every kernel file kernels/<arch>/<variant>/<name>.c defines exactly one function
 *
 *     void isf_ukernel_<name>(size_t k_blocks, const void *a, const void *b, void *c, size_t ldc, int accumulate,
 *                             const isf_epilogue *ep);
 *
 * where <name> follows docs/kernel_names.md, so MR, NR and KR come from the name (KR = 1 when omitted).
 * It computes one full MR×NR tile of C from packed panels (packing is done by the runtime: see "Packing" below):
 *   a: k_blocks × MR × KR input elements: for each block of KR steps of k, row 0's KR values, then row 1's, …
 *   b: k_blocks × NR × KR input elements: for each block, column 0's KR values, then column 1's, …
 * Rows, columns and k beyond the problem are zero in the panels. Every panel starts 64-byte aligned.
 * c: row-major output tile with row stride ldc (in output elements). accumulate = 0: C = A·B; else C += A·B.
 * Edge tiles are handled by the driver through a scratch tile, so kernels always write the full MR×NR.
 * ep: per-call parameters of what a kernel applies to the tile as it stores it (below); never NULL.
 *
 * Element types: gemm_f32 float → float; gemm_f16 IEEE binary16 bits (uint16_t) → binary16; gemm_bf16 bfloat16
 * bits (uint16_t) → float; gemm_s8 int8_t → int32_t; gemm_s4 int8_t A and int4 B → int32_t (below). The driver splits k into Kc blocks for every op: a gemm_f16
 * kernel that accumulates in binary16 (the op's narrow_accumulation variants) adds each block to C in binary16;
 * the fp32-accumulating ones are widened kernels (fp32 out), accumulated across blocks in an fp32 buffer and
 * rounded to binary16 once.
 *
 * int4 B panels (gemm_s4's kernels, layouts "s8s4.*"): the int8 B panel of the same MR, NR, KR (and vector
 * length) with its k blocks taken in pairs, each pair stored in the bytes of one block: byte p of pair t is
 * (byte p of block 2t) & 0xF | (byte p of block 2t + 1) << 4, each nibble a two's-complement value in −8…7.
 * k_blocks is therefore always even (the driver pads k to 2·KR with zero nibbles) and B holds k_blocks / 2 × NR × KR
 * bytes. Unpacked on registers: (v << 4) and (v & 0xF0) are the two blocks' values times 16, ready for
 * sdot/smmla, whose sums are then 16 times the true ones, shifted back (exactly: an arithmetic shift right by 4)
 * before anything else. A gemm_s4 kernel's sums, and everything it stores, are the true ones: the epilogue, the
 * accumulate and the partial sums are gemm_s8's, unchanged.
 *
 * Scalable variants (catalogue `scalable = true`, the SVE ones): NR in the name is the tile width at a 128-bit
 * vector length and scales with it: NR = name's NR × VL / 128. The kernel reads VL itself (svcntb()); the driver
 * reads the calling thread's VL (isf_sve_vector_bytes, compiled with SVE flags and called only to run a scalable
 * kernel, so only when SVE is active) once per call, and plans, packs and sizes its scratch for that width.
 * Streaming variants (`scalable = "streaming"`, SME) scale with the streaming vector length SVL
 * (isf_streaming_vector_length), which is the thread's own and apart from VL, and scale both ways: an outer product
 * fills a tile SVL tall as well as SVL wide, so a full kernel's MR as well as its NR is named for a 128-bit SVL
 * (MR = name's MR × SVL / 128: gemm_f32_8x8_sme2 is 32×32 at Apple M4's 512 bits); its row kernels keep MR = 1.
 * Packed weights and plans record the length they were packed at, so a thread at another SVL is refused them as one
 * at another VL is.
 */
enum { ISF_SCALES_NOT = 0, ISF_SCALES_WITH_SVE = 1, ISF_SCALES_WITH_SVL = 2 }; /* isf_kernel.scalable */

/*
 * The epilogue: what a kernel does to its tile on the last k block before storing it, on registers, so C is
 * written once (fused bias and clamp, requantization). One struct for every op and kernel, so a new step is a field
 * and a flag, not a new ABI. `steps` says which fields apply; the driver sets them only on the last k block of a
 * tile (every other block gets ISF_EPILOGUE_NONE). In order, on r = the sums (+ C's old value when accumulate):
 *   ISF_EPILOGUE_BIAS   r[i][j] += bias[j], in the kernel's output type: one fp32 (or binary16) addition, int32
 *                       wrapping modulo 2^32 (the int32 sums of gemm_s8's kernels, whatever they store).
 *                       `bias` holds NR values (NR at this vector length) for the tile's columns, zeros past the
 *                       problem's n; edge tiles get the same NR values.
 *   ISF_EPILOGUE_CLAMP  r = min(max(r, lo), hi), as Arm's FMAX then FMIN (IEEE 754-2019 maximum / minimum): a NaN
 *                       stays NaN, ±Inf become the bounds, −0 < +0. lo ≤ hi, never NaN. Float output only: the
 *                       driver never asks an int32 kernel to clamp. fp32 kernels use `min`/`max`, binary16-output
 *                       kernels `min_f16`/`max_f16` (the same bounds: the plan rounds them to binary16 for every
 *                       binary16 C, so fp32-accumulating kernels of gemm_f16 get binary16 values too).
 *
 * The quantized outputs (gemm_qs8, gemm_qs8_f32, gemm_qd8_f32 run gemm_s8's kernels; isaforge.h gives the
 * formulas). Only the int32-summing kernels (gemm_s8's) see these steps; accumulate is then always 0. In order,
 * after BIAS (i: the tile's row, j: its column; MR values per row array, NR per column array):
 *   ISF_EPILOGUE_PARTIAL     before anything else, r[i][j] += partial[i * partial_ld + j]: the int32 sums of the
 *                            earlier Kc blocks (the driver keeps them when k is split, since C is not int32).
 *   ISF_EPILOGUE_ROW_OFFSET  r[i][j] += row_offset[i] · col_sum[j], int32 wrapping (dynamic quantization: the
 *                            row's zero point, negated, times the column's weight sum).
 *   ISF_EPILOGUE_TO_F32      C is fp32: f = (float)r (round to nearest even); with ISF_EPILOGUE_ROW_SCALE
 *                            f = f · row_scale[i]; then f = f · col_scale[j]; with ISF_EPILOGUE_OUT_BIAS
 *                            f = f + out_bias[j]; then CLAMP if set (fp32 `min`/`max`). Separate roundings: no
 *                            fused multiply-add.
 *   ISF_EPILOGUE_TO_S8       C is int8: f = (float)r · col_scale[j] (one fp32 rounding each); the stored byte is
 *                            clamp(round_to_nearest_even(f) + out_zp, qmin, qmax) evaluated exactly, as if in
 *                            unbounded integers (fcvtns saturating to int32, then sqadd and sqxtn, give it; so
 *                            does clamping f to ±2^22 first, then the 1.5·2^23 rounding trick, where no fcvtns is).
 *                            −128 ≤ qmin ≤ qmax ≤ 127, −128 ≤ out_zp ≤ 127.
 * Without TO_F32 or TO_S8 the kernel stores int32, as gemm_s8 always did.
 *   ISF_EPILOGUE_SMALL_SUMS  a hint, not a step: every r that TO_F32 or TO_S8 converts (after PARTIAL and
 *                            ROW_OFFSET) lies in [−2^22, 2^22), so (float)r is also bits(1.5·2^23) + r read as fp32,
 *                            minus 1.5·2^23: an integer add and an FSUB, exact there, where SCVTF is two µops on one
 *                            pipe of Neoverse N1, N2 and V1. The bytes are the same either way: only the SVE
 *                            kernels take it (isf_quant_sve.h); the others convert with SCVTF, the AArch64 .S ones
 *                            because they also run on Cortex-A55, whose SCVTF costs less than the pair. The driver
 *                            sets it where the op's bounds prove it (isf_small_sums: dynamic quantization, k ≤ 128
 *                            for int8 weights, 2056 for int4).
 *
 * The assembly kernels read the fields at the offsets ISF_EP_* below (two sets: 8-byte pointers on AArch64,
 * 4-byte on AArch32), checked by a static assertion.
 */
enum {
    ISF_EPILOGUE_NONE = 0u,
    ISF_EPILOGUE_BIAS = 1u << ISF_EP_BIT_BIAS,
    ISF_EPILOGUE_CLAMP = 1u << ISF_EP_BIT_CLAMP,
    ISF_EPILOGUE_PARTIAL = 1u << ISF_EP_BIT_PARTIAL,
    ISF_EPILOGUE_ROW_OFFSET = 1u << ISF_EP_BIT_ROW_OFFSET,
    ISF_EPILOGUE_TO_F32 = 1u << ISF_EP_BIT_TO_F32,
    ISF_EPILOGUE_ROW_SCALE = 1u << ISF_EP_BIT_ROW_SCALE,
    ISF_EPILOGUE_OUT_BIAS = 1u << ISF_EP_BIT_OUT_BIAS,
    ISF_EPILOGUE_TO_S8 = 1u << ISF_EP_BIT_TO_S8,
    ISF_EPILOGUE_SMALL_SUMS = 1u << ISF_EP_BIT_SMALL_SUMS,
};

typedef struct {
    uint32_t steps;            /* ISF_EPILOGUE_* bits */
    float min, max;            /* CLAMP, fp32 output */
    uint16_t min_f16, max_f16; /* CLAMP, binary16 output (bits) */
    const void *bias;          /* BIAS: NR values of the output type (int32 for the int32-summing kernels) */
    const int32_t *partial;    /* PARTIAL: MR rows of NR int32 sums, partial_ld apart */
    const int32_t *row_offset; /* ROW_OFFSET: MR values */
    const int32_t *col_sum;    /* ROW_OFFSET: NR values */
    const float *row_scale;    /* ROW_SCALE: MR values */
    const float *col_scale;    /* TO_F32, TO_S8: NR values */
    const float *out_bias;     /* OUT_BIAS: NR values */
    uint32_t partial_ld;       /* PARTIAL: int32 elements between rows */
    int32_t out_zp;            /* TO_S8 */
    int32_t qmin, qmax;        /* TO_S8: the clamp, in int8 units */
} isf_epilogue;

/* The clamp step on one fp32 value, as FMAX then FMIN do it (the portable kernels and the tests' oracle). */
static inline float isf_clamp_f32(float x, float lo, float hi) {
    if (x != x) {
        return x;
    }
    if (x < lo || (x == lo && __builtin_signbit(x))) {
        x = lo;
    }
    if (x > hi || (x == hi && !__builtin_signbit(x))) {
        x = hi;
    }
    return x;
}

_Static_assert(
    offsetof(isf_epilogue, min) == ISF_EP_MIN && offsetof(isf_epilogue, max) == ISF_EP_MAX &&
        offsetof(isf_epilogue, min_f16) == ISF_EP_MIN_F16 && offsetof(isf_epilogue, max_f16) == ISF_EP_MAX_F16 &&
        offsetof(isf_epilogue, bias) == ISF_EP_BIAS && offsetof(isf_epilogue, partial) == ISF_EP_PARTIAL &&
        offsetof(isf_epilogue, row_offset) == ISF_EP_ROW_OFFSET && offsetof(isf_epilogue, col_sum) == ISF_EP_COL_SUM &&
        offsetof(isf_epilogue, row_scale) == ISF_EP_ROW_SCALE &&
        offsetof(isf_epilogue, col_scale) == ISF_EP_COL_SCALE && offsetof(isf_epilogue, out_bias) == ISF_EP_OUT_BIAS &&
        offsetof(isf_epilogue, partial_ld) == ISF_EP_PARTIAL_LD && offsetof(isf_epilogue, out_zp) == ISF_EP_OUT_ZP &&
        offsetof(isf_epilogue, qmin) == ISF_EP_QMIN && offsetof(isf_epilogue, qmax) == ISF_EP_QMAX,
    "the assembly kernels read the epilogue at these offsets");

/* The most rows a kernel's tile may have when it serves a quantized op (the driver keeps per-row parameters): a
 * streaming kernel's 2 × SVL/4 at the longest SVL, 256 bytes. */
enum { ISF_MAX_MR = 128 };

/* An int32-summing kernel's store is quantized (fp32 or int8 C) rather than int32. */
#define ISF_EPILOGUE_QUANTIZED (ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_TO_S8)

/* The rounding of TO_S8, exactly (round half to even, then the zero point and the clamp in unbounded integers). */
static inline int8_t isf_requantize(float f, int32_t zp, int32_t qmin, int32_t qmax) {
    if (f != f) {
        f = 0.0f; /* never: the scales are finite and nonzero (the plan checks them) */
    }
    f = f < -4194304.0f ? -4194304.0f : f > 4194304.0f ? 4194304.0f : f; /* 2^22: beyond, the clamp decides */
    float r = (f + 12582912.0f) - 12582912.0f;                           /* 1.5·2^23: to nearest, ties to even */
    int32_t q = (int32_t)r + zp;
    return (int8_t)(q < qmin ? qmin : q > qmax ? qmax : q);
}

/* Every step of the epilogue on one int32 sum r of tile element (i, j) (C's old value or the partial sums already
 * in it), stored into the tile at c (row stride ldc in output elements) in the output type: the reference kernel's
 * store and the tests' oracle for the vector kernels. */
static inline void isf_epilogue_store_s32(const isf_epilogue *ep, int32_t r, size_t i, size_t j, void *c, size_t ldc) {
    uint32_t u = (uint32_t)r;
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        u += (uint32_t)((const int32_t *)ep->bias)[j];
    }
    if (ep->steps & ISF_EPILOGUE_ROW_OFFSET) {
        u += (uint32_t)ep->row_offset[i] * (uint32_t)ep->col_sum[j];
    }
    int32_t s = (int32_t)u;
    if (ep->steps & ISF_EPILOGUE_TO_F32) {
        volatile float f = (float)s; /* volatile: one rounding per step, never contracted into an fma */
        if (ep->steps & ISF_EPILOGUE_ROW_SCALE) {
            f = f * ep->row_scale[i];
        }
        f = f * ep->col_scale[j];
        if (ep->steps & ISF_EPILOGUE_OUT_BIAS) {
            f = f + ep->out_bias[j];
        }
        float v = f;
        ((float *)c)[i * ldc + j] = ep->steps & ISF_EPILOGUE_CLAMP ? isf_clamp_f32(v, ep->min, ep->max) : v;
    } else if (ep->steps & ISF_EPILOGUE_TO_S8) {
        volatile float f = (float)s;
        f = f * ep->col_scale[j];
        ((int8_t *)c)[i * ldc + j] = isf_requantize(f, ep->out_zp, ep->qmin, ep->qmax);
    } else {
        ((int32_t *)c)[i * ldc + j] = s;
    }
}

typedef void (*isf_ukernel_fn)(size_t k_blocks, const void *a, const void *b, void *c, size_t ldc, int accumulate,
                               const isf_epilogue *ep);

#define ISF_UKERNEL(name)                                                                                       \
    void isf_ukernel_##name(size_t k_blocks, const void *a, const void *b, void *c, size_t ldc, int accumulate, \
                            const isf_epilogue *ep __attribute__((unused)))

/*
 * For a kernel whose k loop loads each step's operands during the step before (by hand: compilers do not pipeline
 * across iterations): its code is scheduled for Cortex-A55's in-order pipeline, which keeps those loads early. With
 * the generic schedule clang sinks every load back to just before its first FMA, where an in-order core waits for it
 * (gemm_f32_8x8_neon's loop on A55: 37 modeled cycles for 2 k steps, 25 with this). Scheduling only: the instructions
 * allowed are the variant's flags', and out-of-order cores run the same loop as fast (llvm-mca-19, N1 and V1).
 */
#if defined(__aarch64__)
#define ISF_SCHEDULE_IN_ORDER __attribute__((target("tune=cortex-a55")))
#else
#define ISF_SCHEDULE_IN_ORDER
#endif

typedef struct {
    const char *name;
    uint32_t bit;
    uint32_t implied;           /* this feature and everything it implies, as a mask */
    uint64_t hwcap[2];          /* AT_HWCAP, AT_HWCAP2 bits; all must be set */
    const char *cpuinfo_tokens; /* space-separated, all must appear on the Features line */
    /* The same feature in the other kernel's words, "" if none: a 32-bit process on an arm64 kernel reads AArch64
     * names ("asimd", "bf16") unless its personality is PER_LINUX32. Either vocabulary, complete, counts. */
    const char *cpuinfo_compat_tokens;
} isf_feature_info;

/* A core as its MIDR names it, for the MIDR fallback of detection (catalogue [cpu_part.*]). */
typedef struct {
    uint32_t implementer; /* MIDR bits [31:24]: /proc/cpuinfo "CPU implementer" */
    uint32_t part;        /* MIDR bits [15:4]: /proc/cpuinfo "CPU part" */
    const char *name;
    uint32_t features;  /* what every core of the part has, on this arch; implications not applied */
    uint32_t l1d_bytes; /* its L1 data cache where one size is fixed, else 0 */
} isf_cpu_part_info;

typedef struct {
    const char *name;
    uint32_t required; /* closed under implication */
} isf_variant_info;

/*
 * Packing layouts. A kernel reads panels of one layout: element types, MR, NR, KR, NR's scaling with the vector
 * length, 64-byte alignment ([layout] in src/isaforge/isa.toml, where each layout also names its packers). Codegen
 * instantiates the layout's vectorised packers (kernels/pack/<variant>/, compiled with that variant's flags):
 *   A: the full k blocks (`blocks` of KR steps) of one full MR-row panel from rows lda_b bytes apart (mr: MR at
 *      this vector length, which only the streaming layouts' packers need);
 *   B: the full k blocks of columns [0, w) of one panel NR wide at this vector length (nr, w ≤ nr), the rest of
 *      the panel zeroed by the caller when w < nr.
 * NULL packers ("generic"): kernels/runtime/pack.c's portable loop packs it all, as it always does the rest.
 */
typedef void (*isf_pack_a_fn)(const unsigned char *a, size_t lda_b, size_t blocks, size_t mr, unsigned char *out);
typedef void (*isf_pack_b_fn)(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr,
                              unsigned char *out);

#define ISF_PACK_A(layout)                                                                                           \
    void isf_pack_a_##layout(const unsigned char *a, size_t lda_b, size_t blocks, size_t mr __attribute__((unused)), \
                             unsigned char *out)
#define ISF_PACK_B(layout)                                                                  \
    void isf_pack_b_##layout(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, \
                             size_t nr __attribute__((unused)), unsigned char *out)

typedef struct {
    uint32_t id;      /* FNV-1a of the canonical layout string: the same in every build and version */
    const char *name; /* e.g. "s8.8x8x4.vl" */
    isf_pack_a_fn pack_a;
    isf_pack_b_fn pack_b;
} isf_layout_info;

typedef struct {
    const char *name;
    isf_op op;
    unsigned mr, nr, kr; /* nr at 128-bit vectors when scalable */
    int scalable;        /* ISF_SCALES_*: with nothing, the SVE vector length or the streaming one */
    int widened; /* runs a gemm_f32 kernel on panels the driver widened to fp32 (fp16/bf16 without the extension) */
    /* Bytes of one element it writes: the op's accumulator where its variant does not narrow sums to C's type
     * (widened kernels, gemm_f16's fp32-summing ones: the driver rounds to binary16 once), else C's. */
    unsigned out_bytes;
    /* A kernel of fewer rows than its op's full kernel: the most rows left at a region's end it takes, MR at a time
     * (isa.toml's `tail_rows`); 0: MR / 2 of the full kernel for a row kernel (MR = 1), else its own MR. */
    unsigned tail_rows;
    /* The percentage of the preferred kernel's padded columns a column sibling (same variant, op, MR, KR; other NR)
     * must save to be chosen for a GEMM's n (isa.toml's `column_margin`, isf_kernel_for_columns). */
    unsigned column_margin;
    uint32_t required;
    unsigned rank; /* higher is preferred: by variant, then the variant's `prefer` list */
    isf_ukernel_fn fn;
    const char *variant;
    isf_layout_info layout; /* the panels it reads */
} isf_kernel;

/* How the tools and tests make an element from a small integer and read one back (catalogue dtype `kind`). */
typedef enum { ISF_ELEM_FLOAT, ISF_ELEM_BINARY16, ISF_ELEM_BFLOAT16, ISF_ELEM_INT } isf_elem_kind;

typedef struct {
    const char *name;
    size_t in_bytes, out_bytes; /* A elements; C elements */
    isf_elem_kind in_kind, out_kind;
    size_t w_bytes; /* B (weights) elements: in_bytes but for gemm_qd8_f32 (fp32 A, int8 W); 1 for int4 */
    size_t w_bits;  /* 4: int4 weights, two per byte (nibble panels); else 8 · w_bytes */
    int plain;      /* has a typed one-call function; 0: plans only (the quantized ops, gemm_s4) */
    int quantized;  /* takes isf_quant_params: runs another op's kernels with its own epilogue */
} isf_op_info;

/* Packing (pack.c): how A and B become panels for one kernel. */
typedef enum { ISF_PACK_COPY, ISF_PACK_F16_TO_F32, ISF_PACK_BF16_TO_F32 } isf_pack_kind;

typedef struct {
    size_t mr, nr, kr; /* at the current vector length */
    size_t src_bytes;  /* element size of A and B as given */
    size_t in;         /* element size in the panels */
    isf_pack_kind kind;
    isf_pack_a_fn fast_a; /* the layout's vectorised packers, NULL for none */
    isf_pack_b_fn fast_b;
    int nibbles; /* B panels of int4 values, two k blocks per byte (gemm_s4's); B given as int8 values */
} isf_pack_spec;

/* One KR group of panel elements (pack.c, quant.c): 2, 4, 8 or 16 bytes when whole, in every layout. Kept for
 * speed: each case is a fixed-size copy the compilers inline, where one of run-time size would be a libc call per
 * group (issue 33 measured 12–16 % of a quantized run's cycles in such calls). */
static inline void isf_copy_group(unsigned char *d, const void *s, size_t bytes) {
    switch (bytes) {
    case 2:
        memcpy(d, s, 2);
        return;
    case 4:
        memcpy(d, s, 4);
        return;
    case 8:
        memcpy(d, s, 8);
        return;
    case 16:
        memcpy(d, s, 16);
        return;
    default:
        memcpy(d, s, bytes);
    }
}

/* Bytes of one A panel (MR wide) or B panel (NR wide) of `depth` k, a 64-byte multiple. */
size_t isf_panel_stride(const isf_pack_spec *s, size_t depth, size_t width);
size_t isf_b_panel_stride(const isf_pack_spec *s, size_t depth);
/* The k blocks a kernel is called with for `depth` k: whole KR steps, whole pairs of them for nibble panels. */
size_t isf_kernel_blocks(const isf_pack_spec *s, size_t depth);
/* gemm_qd8_f32's rows (quant.c): one row's scale, 255/span and zero point (isf_quantize_row's), returning 1 when
 * the row holds a NaN; the same for `rows` rows lda floats apart (nan[y]: row y's return); and the int8 A panel of
 * `rows` fp32 rows quantized with them. */
int isf_quantize_params(const float *a, size_t k, float *scale, float *inv, int32_t *zp);
void isf_quantize_rows_params(const float *a, size_t lda, size_t rows, size_t k, float *scale, float *inv, int32_t *zp,
                              unsigned char *nan);
void isf_pack_a_quantized(const isf_pack_spec *s, const float *a, size_t lda, size_t rows, size_t depth,
                          const float *inv, const int32_t *zp, const unsigned char *nan, unsigned char *dst);
void isf_pack_a_panels(const isf_pack_spec *s, const void *a, size_t lda, size_t rows, size_t depth, void *dst);
void isf_pack_b_panels(const isf_pack_spec *s, const void *b, size_t ldb, size_t depth, size_t cols, void *dst);

/* Generated from src/isaforge/isa.toml by codegen.py for the arch being built. */
extern const char isf_arch_name[];
extern const isf_feature_info isf_features[];
extern const size_t isf_feature_count;
extern const isf_cpu_part_info isf_cpu_parts[];
extern const size_t isf_cpu_part_count;
extern const isf_variant_info isf_variants[]; /* built variants, least preferred first */
extern const size_t isf_variant_count;
extern const isf_kernel isf_kernel_table[];     /* op by op, most preferred (highest rank) first */
extern _Atomic(unsigned char) isf_kernel_ran[]; /* per table entry: traced as run (ISAFORGE_TRACE) */
extern const size_t isf_kernel_table_count;
extern const isf_op_info isf_ops[];
extern const size_t isf_op_count;

/* The SVE vector length of the calling thread in bytes (kernels/runtime/sve_vl.c, built with the flags of a
 * scalable variant). Executes an SVE instruction: call only when SVE is active. The generated pointer is NULL when
 * no scalable variant is built. */
size_t isf_sve_read_vector_bytes(void);
extern size_t (*const isf_sve_vector_bytes)(void);

/* One consistent selection: the active features and the kernel each op runs with them (dispatch.c). */
typedef struct {
    uint32_t active;
    const isf_kernel *kernel[ISF_OP_COUNT];
    unsigned char named[ISF_OP_COUNT]; /* kernel[op] was chosen by name: no other tile shape replaces it */
} isf_selection;

/* Pin the current selection for the duration of a call; isf_set_feature_mask waits for pinned calls to leave. */
const isf_selection *isf_selection_enter(void);
void isf_selection_leave(const isf_selection *sel);

/* A pre-packed B's header (isaforge.h gives its byte format), as packed_weights.c reads it. */
typedef struct {
    uint32_t magic, version, op, layout, vector_bytes;
    uint64_t n, k, kc;
    uint64_t panels; /* offset of the panels from the buffer start: the first 64-byte boundary after the header */
} isf_packed_header;

/* The plan export's parts that its size needs (plan_file.c writes the format): a header before the packed buffer, and
 * the quantized ops' section starts with these bytes of scalars before its column arrays. */
enum { ISF_PLAN_HEADER_BYTES = 64, ISF_QUANT_SCALAR_BYTES = 32 };

/* What a plan holds besides its packed buffer, for isf_sizes_of. */
typedef struct {
    isf_op op;       /* the plan's (the quantized ops run another op's kernels) */
    int bias;        /* it has one (the quantized ops fold theirs into their column arrays) */
    uint64_t blocks; /* blockwise scales' blocks of k, 0 for none */
} isf_plan_shape;

/* Every size of a packed buffer and of a plan around it. */
typedef struct {
    size_t n, k, kc;     /* the header's */
    size_t extent;       /* from the buffer's start to its panels' end */
    size_t padded;       /* n (at least 1) rounded up to NR: the length of the kernels' column arrays */
    size_t bias;         /* n values as given: C's type, int32 (or gemm_qd8_f32's fp32) for the quantized ops */
    size_t kernel_bias;  /* padded values of the kernel's output type */
    size_t quant_cols;   /* the quantized ops' column arrays: (4 + 2 · blocks) · padded 4-byte values */
    size_t export_bytes; /* isf_gemm_export_size */
} isf_sizes;

/* The one computation of those sizes, for a header written here or read from a file, that isf_pack_b,
 * isf_gemm_packed, isf_gemm_create and isf_gemm_import share: 0 when n, k, Kc or the panels' offset (64-bit fields)
 * exceed SIZE_MAX, Kc is 0, above the ceiling or no whole number of `kern`'s k blocks, or any size wraps. Each size
 * leaves room below SIZE_MAX to round it up to 64. shape NULL: the packed buffer's sizes only (n, k, kc, extent). */
int isf_sizes_of(const isf_kernel *kern, const isf_packed_header *h, const isf_plan_shape *shape, isf_sizes *s);

/* What isf_pack_b and isf_gemm_packed are made of (packed_weights.c), for the plan API (plan.c) too. */
/* kc: the Kc to pack with (a whole number of the kernel's k blocks, pairs for nibble panels), 0 for the planned
 * one (blockwise int4 plans pack one scale block per Kc block). The bytes a buffer needs at any alignment, 0 when
 * a size of it (or of the plan `shape`, if not NULL) wraps. */
size_t isf_packed_bytes_for(const isf_kernel *kern, size_t n, size_t k, size_t vector_bytes, size_t kc,
                            const isf_plan_shape *shape);
isf_status isf_pack_b_with(const isf_kernel *kern, isf_op op, size_t n, size_t k, const void *b, size_t ldb, size_t kc,
                           void *packed, size_t packed_bytes);
int isf_packed_header_read(const void *packed, isf_packed_header *h); /* 0: not a header this version writes */
/* The runnable kernel (in `sel`, at this thread's vector length) reading h's layout: `prefer` if it does. */
const isf_kernel *isf_packed_reader(const isf_packed_header *h, const isf_selection *sel, const isf_kernel *prefer);

/* Runtime internals shared by the runtime files, isaforge-info and the tests. */
const isf_kernel *isf_selected_kernel(isf_op op);                /* the kernel of `op` in the current selection */
const isf_kernel *isf_best_kernel(isf_op op, uint32_t features); /* what dispatch picks for them */
const isf_kernel *isf_named_kernel(isf_op op); /* chosen by name (ISAFORGE_KERNELS, isf_select_kernel), or NULL */
/* The one-call GEMM of any op on untyped buffers (the typed public functions call it). */
isf_status isf_gemm_op(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda, const void *b, size_t ldb,
                       void *c, size_t ldc);
const char *isf_detect_source(void);
size_t isf_kernel_vector_bytes(const isf_kernel *k);              /* this thread's VL if scalable, else 0 */
unsigned isf_kernel_nr(const isf_kernel *k, size_t vector_bytes); /* NR at that vector length */
unsigned isf_kernel_mr(const isf_kernel *k, size_t vector_bytes); /* MR at that vector length */
uint32_t isf_detect_features(const char **source);
uint32_t isf_close_features(uint32_t mask); /* drops features whose implied ones are missing */
/* The features a comma- or space-separated list names; each unknown name is reported on stderr with `var` (the
 * variable it came from), unless `var` is NULL. */
uint32_t isf_parse_feature_list(const char *list, const char *var);
/* Once per process and kernel, when ISAFORGE_TRACE is set: the first run of the kernel at table index `i`. */
void isf_trace_ran(size_t i);
/* Features named by one /proc/cpuinfo Features line ("Features\t: fp asimd …" or just the tokens), as whole words;
 * implications are not applied (isf_close_features does that). */
uint32_t isf_features_from_cpuinfo_line(const char *line);
/* Features that every core listed in a /proc/cpuinfo text has by its MIDR ("CPU implementer" / "CPU part" lines),
 * from the catalogue's part table. 0 when no core is listed, or when any listed core's part is unknown or its lines
 * are incomplete or malformed. Implications are not applied (isf_close_features does that). */
uint32_t isf_features_from_midr_text(const char *cpuinfo_text);
/* The least L1D bytes of the cores such a text lists, from the part table; 0 when some core's is unknown or not
 * fixed (and whenever isf_features_from_midr_text is 0). */
uint32_t isf_l1d_from_midr_text(const char *cpuinfo_text);
/* The L1D bytes the driver blocks k for: the least of the system's cores (or ISAFORGE_CORE's), else
 * ISF_L1D_ASSUMED; read from /proc/cpuinfo by isf_detect_l1d_bytes once, with the features (isf_l1d_bytes). */
enum { ISF_L1D_ASSUMED = 32 * 1024 };
uint32_t isf_detect_l1d_bytes(void);
size_t isf_l1d_bytes(void);
/* The source detection reads ("hwcap", "cpuinfo" or "midr"), given ISAFORGE_DETECT (NULL if unset), AT_HWCAP and
 * whether /proc/cpuinfo has a Features line with any word on it. */
const char *isf_detect_order(const char *mode, uint64_t hwcap1, int features_line);

/* 0 when rows × cols elements of `elem` bytes at row stride ld (the last row stops at cols) overflow size_t. */
static inline int isf_span_fits(size_t rows, size_t cols, size_t ld, size_t elem) {
    if (rows == 0 || cols == 0) {
        return 1;
    }
    size_t before_last, span, bytes; /* (rows - 1) · ld + cols elements; by products, not two divisions a call */
    return !__builtin_mul_overflow(rows - 1, ld, &before_last) && !__builtin_add_overflow(before_last, cols, &span) &&
           !__builtin_mul_overflow(span, elem, &bytes);
}

/* FNV-1a (64-bit) over `bytes` from `h` on (ISF_FNV1A64_START to start): the storable formats' checksums. */
#define ISF_FNV1A64_START 0xcbf29ce484222325u
static inline uint64_t isf_fnv1a64(uint64_t h, const unsigned char *p, size_t bytes) {
    for (size_t i = 0; i < bytes; i++) {
        h = (h ^ p[i]) * 0x100000001b3u;
    }
    return h;
}

/* Little-endian fields of the storable formats (packed B, exported plans): the same bytes on every host. */
static inline void isf_put_le(unsigned char *p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static inline uint64_t isf_get_le(const unsigned char *p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

#endif
