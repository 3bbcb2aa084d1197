/* Portable binary16 reference: widened to fp32, accumulated in fp32 in k order, rounded to binary16 once. */
#include "isf_internal.h"
#include "isf_ref.h"

ISF_UKERNEL(gemm_f16_4x4_ref) {
    float acc[ISF_REF_MR][ISF_REF_NR];
    isf_ref_tile(k_blocks, a, b, isf_ref_load_f16, acc);
    uint16_t *pc = c;
    for (int i = 0; i < ISF_REF_MR; i++) {
        for (int j = 0; j < ISF_REF_NR; j++) {
            float sum = accumulate ? isf_f16_to_f32(pc[i * ldc + j]) + acc[i][j] : acc[i][j];
            pc[i * ldc + j] = isf_f32_to_f16(sum);
        }
    }
}
