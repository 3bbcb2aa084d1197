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
    /* Sums, C and bias add modulo 2^32 (as the vector kernels' add does): unsigned, so wrapping is defined. */
    const int32_t *bias = ep->steps & ISF_EPILOGUE_BIAS ? ep->bias : NULL;
    int32_t *pc = c;
    for (int i = 0; i < MR; i++) {
        for (int j = 0; j < NR; j++) {
            uint32_t v = (uint32_t)acc[i][j] + (accumulate ? (uint32_t)pc[i * ldc + j] : 0u);
            pc[i * ldc + j] = (int32_t)(v + (bias != NULL ? (uint32_t)bias[j] : 0u));
        }
    }
}
