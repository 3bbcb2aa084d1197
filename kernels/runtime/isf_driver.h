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

/* What the kernels get for every k block but the last: store the sums as they are. */
extern const isf_epilogue isf_no_epilogue;

/* A whole call of `kern` over all of r's rows and columns and k > 0, B given (r->b) or pre-packed with Kc `kc`
 * (r->panels), in a work buffer of its own: ISF_ERR_NO_MEMORY when there is none. */
isf_status isf_run_gemm(const isf_kernel *kern, size_t k, size_t kc, const isf_region *r);
/* k = 0 has no panels: A·B is zero, only the region's epilogue is left (its bias values of bias_bytes each). */
void isf_epilogue_alone(isf_op op, size_t bias_bytes, const isf_region *r);

/* An op of the one-call entry points: the quantized ones need their parameters, so plans only. */
static inline int isf_plain_op(isf_op op) { return (unsigned)op < isf_op_count && isf_ops[op].plain; }

#endif
