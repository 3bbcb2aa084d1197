/* One GEMM of a peer library, run once under QEMU so that its executed instructions can be counted between two
 * markers. harness.c owns the protocol (argv, files, guard bytes, markers); each library's file (openblas.c,
 * blis.c, xnnpack.c, isaforge.c) only says what it offers and makes its calls. isaforge.bench.peers writes the
 * input, builds and runs the harness, and checks the output.
 *
 * Usage: <harness> PRECISION MODE INPUT OUTPUT, PRECISION one of fp32 fp16 bf16 int8 qs8 qd8 qc4w, MODE plain or
 *   prepacked. int8 and qs8 both take int8 A and B; int8 leaves C's element to the library (libisaforge: the exact
 *   int32 sums), qs8 always asks for requantized int8 C (the element ISF_BENCH_ELEMENT_I8), so that libraries meet
 *   on one output. qd8 and qc4w are the dynamically quantized GEMMs: fp32 A, int8 B (qc4w: values -8..7, one per
 *   byte, for the library to pack as it stores int4), fp32 C = clamp(A·B dequantized + bias).
 *   A pair the library does not offer: exit 2 and one line on stderr. Bad use or a bad input file: exit 2 too.
 *   Otherwise exit 0 with the library's status in OUTPUT, and one line on stdout: "<library> <configuration>".
 *
 * Input (little-endian): "ISFP", u32 version (1), u32 m, u32 n, u32 k, f32 scale, i32 zero point, then A [m][k] and
 *   B [k][n], row-major, in the input type: f32 (fp32), binary16 bits (fp16), bfloat16 bits (bf16), int8 (int8,
 *   qs8). Scale and zero point only matter to a requantized int8 output: out = clamp(round(acc·scale) + zero point)
 *   to [-128, 127]. A library is given them as an output scale of 1.0f / scale (fp32 division) and that zero point,
 *   with A's and B's scales 1 and zero points 0, so every library rounds the same real multiplier its own way.
 *   qd8 and qc4w (scale and zero point unused) add after B: f32 w_scales [n] (B's per-column scales), f32 bias [n],
 *   f32 out_min, f32 out_max (the clamp). fp32, fp16 and bf16 add after B the epilogue an engine's fully-connected
 *   layer asks for: bias [n] in C's type (f32; binary16 bits for fp16), f32 out_min, f32 out_max. A library's file
 *   decides whether its call applies them (a BLAS's sgemm cannot: the oracle then expects C = A·B).
 * Output: i32 status (0 ok, else the library's own error code), u32 element code of C (ISF_BENCH_ELEMENT_*), C
 *   [m][n] in that type, u32 1 when the 64 guard bytes (0xA5) before and after C's buffer are intact, else 0.
 *
 * Order of a run: prepare (a prepacked mode packs the weights here) → one warm-up call with m = 1 (the first row of
 * A, into a buffer of its own) so that lazy first-call set-up stays out of the window → C's buffer refilled with
 * 0xA5 → isf_bench_begin() → the measured call → isf_bench_end(). The window a QEMU log is cut at is
 * [entry of isf_bench_begin, entry of isf_bench_end). ISF_BENCH_SELFTEST=guard in the environment damages the byte
 * right after C once the call is done: the test that the guard check sees it; ISF_BENCH_SELFTEST=c flips the lowest
 * bit of C's first byte (one step of a requantized int8 output): the test that an exact oracle sees it. */
#ifndef ISAFORGE_BENCH_PEERS_HARNESS_H
#define ISAFORGE_BENCH_PEERS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/* The values index harness.c's name tables. */
typedef enum {
    ISF_BENCH_FP32 = 0,
    ISF_BENCH_FP16 = 1,
    ISF_BENCH_BF16 = 2,
    ISF_BENCH_INT8 = 3,
    ISF_BENCH_QS8 = 4,  /* int8 A and B, requantized int8 C */
    ISF_BENCH_QD8 = 5,  /* fp32 A quantized per row at run time, int8 B with per-column scales, fp32 C */
    ISF_BENCH_QC4W = 6, /* qd8 with int4 B */
    ISF_BENCH_PRECISIONS = 7
} isf_bench_precision;
typedef enum { ISF_BENCH_PLAIN = 0, ISF_BENCH_PREPACKED = 1 } isf_bench_mode;
/* The element codes of the output file; the values are part of the file format. */
typedef enum {
    ISF_BENCH_ELEMENT_F32 = 1,
    ISF_BENCH_ELEMENT_F16 = 2, /* binary16 bits */
    ISF_BENCH_ELEMENT_I32 = 3,
    ISF_BENCH_ELEMENT_I8 = 4, /* requantized: clamp(round(acc·scale) + zero point) */
} isf_bench_element;

typedef struct {
    isf_bench_precision precision;
    isf_bench_mode mode;
    size_t m, n, k;
    float scale;
    int32_t zero_point;
    const void *a, *b; /* A [m][k], B [k][n] */
    /* qd8 and qc4w only (else NULL): B's per-column scales */
    const float *w_scales;
    /* fp32, fp16, bf16, qd8 and qc4w (else NULL and 0): the bias [n] in C's type, the clamp */
    const void *bias;
    float out_min, out_max;
} isf_bench_problem;

/* The window markers: empty, never inlined or folded, so that their entries are addresses QEMU executes. */
void isf_bench_begin(void);
void isf_bench_end(void);

/* ---- what each library's file defines ---- */
extern const char isf_bench_library[]; /* "openblas", … */
int isf_bench_offers(isf_bench_precision precision, isf_bench_mode mode);
isf_bench_element isf_bench_output(isf_bench_precision precision); /* C's element type for an offered pair */
/* Everything before the calls (packing, operator creation); *state is handed to the calls. 0 or the library's
 * error. */
int32_t isf_bench_prepare(const isf_bench_problem *p, void **state);
/* C [m][n] = A [m][k] · B, A's first m rows: the call measured (and, with m = 1, the warm-up). */
int32_t isf_bench_call(void *state, const isf_bench_problem *p, size_t m, const void *a, void *c);
void isf_bench_release(void *state);
/* One short line naming what the library chose here (its core, kernel), for the report; may be "". */
void isf_bench_describe(void *state, const isf_bench_problem *p, char *buf, size_t size);

/* The four of a BLAS: fp32 only, through its per-call API, with nothing prepared beforehand. sgemm has no bias nor
 * clamp: its call computes C = A·B and leaves the input's epilogue unused (less work than the plan's call). */
#define ISF_BENCH_FP32_PER_CALL_ONLY(library)                                  \
    const char isf_bench_library[] = library;                                  \
    int isf_bench_offers(isf_bench_precision precision, isf_bench_mode mode) { \
        return precision == ISF_BENCH_FP32 && mode == ISF_BENCH_PLAIN;         \
    }                                                                          \
    isf_bench_element isf_bench_output(isf_bench_precision precision) {        \
        (void)precision;                                                       \
        return ISF_BENCH_ELEMENT_F32;                                          \
    }                                                                          \
    int32_t isf_bench_prepare(const isf_bench_problem *p, void **state) {      \
        (void)p;                                                               \
        *state = NULL;                                                         \
        return 0;                                                              \
    }                                                                          \
    void isf_bench_release(void *state) { (void)state; }

#endif
