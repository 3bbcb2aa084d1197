/* Portable bfloat16 reference: widened to fp32 (exact), accumulated in fp32 in k order. */
#include "isf_internal.h"
#include "isf_ref.h"

ISF_UKERNEL(gemm_bf16_4x4_ref) {
    float acc[ISF_REF_MR][ISF_REF_NR];
    isf_ref_tile(k_blocks, a, b, isf_ref_load_bf16, acc);
    isf_ref_store_f32(c, ldc, acc, accumulate, ep);
}
