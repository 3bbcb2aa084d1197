/* Portable fp32 reference: one 4×4 tile, accumulated in fp32 in k order (the bound the tests use). */
#include "isf_internal.h"

enum { MR = 4, NR = 4 };

ISF_UKERNEL(gemm_f32_4x4_ref) {
    const float *pa = a;
    const float *pb = b;
    float acc[MR][NR] = {{0}};
    for (size_t kb = 0; kb < k_blocks; kb++, pa += MR, pb += NR) {
        for (int i = 0; i < MR; i++) {
            for (int j = 0; j < NR; j++) {
                acc[i][j] += pa[i] * pb[j];
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
