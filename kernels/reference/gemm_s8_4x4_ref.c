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
    /* Sums, C, the partial sums and the bias add modulo 2^32 (as the vector kernels' add does): unsigned, so
     * wrapping is defined. */
    const int32_t *old = accumulate ? c : ep->steps & ISF_EPILOGUE_PARTIAL ? ep->partial : NULL;
    size_t ld_old = accumulate ? ldc : ep->partial_ld;
    for (size_t i = 0; i < MR; i++) {
        for (size_t j = 0; j < NR; j++) {
            uint32_t v = (uint32_t)acc[i][j] + (old != NULL ? (uint32_t)old[i * ld_old + j] : 0u);
            isf_epilogue_store_s32(ep, (int32_t)v, i, j, c, ldc);
        }
    }
}
