/* Portable fp32 reference: one 4×4 tile, accumulated in fp32 in k order (the bound the tests use). */
#include "isf_internal.h"
#include "isf_ref.h"

ISF_UKERNEL(gemm_f32_4x4_ref) {
    float acc[ISF_REF_MR][ISF_REF_NR];
    isf_ref_tile(k_blocks, a, b, isf_ref_load_f32, acc);
    isf_ref_store_f32(c, ldc, acc, accumulate, ep);
}
