/* Portable bfloat16 reference: widened to fp32 (exact), accumulated in fp32 in k order. */
#include "isf_half.h"
#include "isf_internal.h"

enum { MR = 4, NR = 4 };

ISF_UKERNEL(gemm_bf16_4x4_ref) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float acc[MR][NR] = {{0}};
    for (size_t kb = 0; kb < k_blocks; kb++, pa += MR, pb += NR) {
        for (int i = 0; i < MR; i++) {
            for (int j = 0; j < NR; j++) {
                acc[i][j] += isf_bf16_to_f32(pa[i]) * isf_bf16_to_f32(pb[j]);
            }
        }
    }
    float *pc = c;
    for (int i = 0; i < MR; i++) {
        for (int j = 0; j < NR; j++) {
            pc[i * ldc + j] = accumulate ? pc[i * ldc + j] + acc[i][j] : acc[i][j];
        }
    }
}
