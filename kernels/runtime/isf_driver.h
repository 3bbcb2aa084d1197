/* What the driver's files share: driver.c (the blocking and the blocked loop), packed_weights.c (the packed-B
 * format) and gemm.c (the one-call API). */
#ifndef ISAFORGE_DRIVER_H
#define ISAFORGE_DRIVER_H

#include "isf_internal.h"
#include "isf_size_arith.h"

enum { PACKED_HEADER_BYTES = 64 }; /* a packed B's header (isaforge.h): its fields, then zeros up to here */

typedef struct {
    isf_pack_spec pack;
    size_t out;        /* bytes of one element the kernel writes */
    size_t c_out;      /* bytes of one element of C (binary16 C from a widened fp32 kernel: out 4, c_out 2) */
    size_t bias_bytes; /* of one bias value: the output's, int32 for the quantized ops (their sums' type) */
    size_t kc, nc, mc;
} isf_blocking;

/* The blocking of one call: Kc from L1 (or `fixed_kc`, a pre-packed B's, when not 0) and Nc from L2 for that Kc
 * (bounded whatever m, n and k are, so the work buffer is too), for the vector length the calling thread has now. */
isf_blocking isf_blocking_of(const isf_kernel *kern, size_t k, size_t vector_bytes, size_t fixed_kc);

typedef struct {
    size_t m, n, k;
    const unsigned char *a;
    size_t lda;
    const unsigned char *b;
    size_t ldb;
    unsigned char *c;
    size_t ldc;
    const unsigned char *packed_b; /* NULL: pack B here */
    const isf_epilogue *ep;        /* applied with the last k block */
    size_t packed_kc;              /* the Kc packed_b was packed with (its header's, never re-planned) */
} isf_gemm_args;

/* What the kernels get for every k block but the last: store the sums as they are. */
extern const isf_epilogue isf_no_epilogue;

/* One call of `kern` over all of m, n and k > 0 (B packed here, or pre-packed), with a work buffer of its own. */
isf_status isf_run_gemm(const isf_kernel *kern, const isf_gemm_args *g);

/* An op of the one-call entry points: the quantized ones need their parameters, so plans only. */
static inline int isf_plain_op(isf_op op) { return (unsigned)op < isf_op_count && isf_ops[op].plain; }

#endif
