/* Portable int8 reference: one 4×4 tile, exact in int32 (|a·b| ≤ 2^14, so k < 2^17 cannot overflow). */
#include "isf_internal.h"

enum { MR = 4, NR = 4 };

ISF_UKERNEL(gemm_s8_4x4_ref) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    int32_t acc[MR][NR] = {{0}};
    for (size_t kb = 0; kb < k_blocks; kb++, pa += MR, pb += NR) {
        for (int i = 0; i < MR; i++) {
            for (int j = 0; j < NR; j++) {
                acc[i][j] += (int32_t)pa[i] * (int32_t)pb[j];
            }
        }
    }
    int32_t *pc = c;
    for (int i = 0; i < MR; i++) {
        for (int j = 0; j < NR; j++) {
            pc[i * ldc + j] = accumulate ? pc[i * ldc + j] + acc[i][j] : acc[i][j];
        }
    }
}
