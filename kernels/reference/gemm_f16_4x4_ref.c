/* Portable binary16 reference: widened to fp32, accumulated in fp32 in k order, rounded to binary16 once. */
#include "isf_half.h"
#include "isf_internal.h"

enum { MR = 4, NR = 4 };

ISF_UKERNEL(gemm_f16_4x4_ref) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float acc[MR][NR] = {{0}};
    for (size_t kb = 0; kb < k_blocks; kb++, pa += MR, pb += NR) {
        for (int i = 0; i < MR; i++) {
            for (int j = 0; j < NR; j++) {
                acc[i][j] += isf_f16_to_f32(pa[i]) * isf_f16_to_f32(pb[j]);
            }
        }
    }
    uint16_t *pc = c;
    for (int i = 0; i < MR; i++) {
        for (int j = 0; j < NR; j++) {
            float sum = accumulate ? isf_f16_to_f32(pc[i * ldc + j]) + acc[i][j] : acc[i][j];
            pc[i * ldc + j] = isf_f32_to_f16(sum);
        }
    }
}
